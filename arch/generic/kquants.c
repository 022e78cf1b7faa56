/* Reference kernels of the 256-element super-block types: Q2_K, Q3_K,
 * Q4_K, Q5_K, Q6_K and IQ4_XS. Each super-block is first unpacked to its
 * integer quants and per-sub-block scales (and mins), which is all the
 * dequantizer and the product need; the product's float order is the one
 * src/kernels.h specifies. */
#include <string.h>

#include "arch/generic/generic.h"
#include "half.h"

/* A super-block in integers: x_e = d * scale[e / sub] * q[e] - dmin * min[e / sub]. */
typedef struct kblock {
    int q[QK_K];
    int scale[16], min[16];
    int sub; /* elements per sub-block: 16 or 32 */
    float d, dmin;
} kblock;

static void unpack_q2_K(const block_q2_K *b, kblock *k)
{
    k->sub = 16;
    k->d = gl_f16_to_f32(b->d);
    k->dmin = gl_f16_to_f32(b->dmin);
    for (int j = 0; j < 16; j++) {
        k->scale[j] = b->scales[j] & 15;
        k->min[j] = b->scales[j] >> 4;
    }
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++)
            for (int l = 0; l < 32; l++)
                k->q[128 * h + 32 * s + l] = (b->qs[32 * h + l] >> (2 * s)) & 3;
}

/* The 16 six-bit scales of Q3_K, as stored (+32): low 4 bits in bytes
 * 0..7 (two per byte: scales 0..7 low nibbles, 8..15 high nibbles), high
 * 2 bits in bytes 8..11 (scale j's at bits 2 (j / 4) of byte 8 + j % 4). */
static int q3_K_scale(const uint8_t *sc, int j)
{
    const int lo = j < 8 ? sc[j] & 15 : sc[j - 8] >> 4;
    const int hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
    return lo | hi << 4;
}

static void unpack_q3_K(const block_q3_K *b, kblock *k)
{
    k->sub = 16;
    k->d = gl_f16_to_f32(b->d);
    k->dmin = 0.0f;
    for (int j = 0; j < 16; j++) {
        k->scale[j] = q3_K_scale(b->scales, j) - 32;
        k->min[j] = 0;
    }
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++)
            for (int l = 0; l < 32; l++) {
                const int lo = (b->qs[32 * h + l] >> (2 * s)) & 3;
                const int hbit = (b->hmask[l] >> (4 * h + s)) & 1;
                k->q[128 * h + 32 * s + l] = lo - (hbit ? 0 : 4);
            }
}

static void unpack_q4_K(const block_q4_K *b, kblock *k)
{
    k->sub = 32;
    k->d = gl_f16_to_f32(b->d);
    k->dmin = gl_f16_to_f32(b->dmin);
    for (int j = 0; j < 8; j++) {
        uint8_t sc, m;
        gl_k4_scale_min(j, b->scales, &sc, &m);
        k->scale[j] = sc;
        k->min[j] = m;
    }
    for (int i = 0; i < 4; i++)
        for (int l = 0; l < 32; l++) {
            k->q[64 * i + l] = b->qs[32 * i + l] & 15;
            k->q[64 * i + 32 + l] = b->qs[32 * i + l] >> 4;
        }
}

static void unpack_q5_K(const block_q5_K *b, kblock *k)
{
    k->sub = 32;
    k->d = gl_f16_to_f32(b->d);
    k->dmin = gl_f16_to_f32(b->dmin);
    for (int j = 0; j < 8; j++) {
        uint8_t sc, m;
        gl_k4_scale_min(j, b->scales, &sc, &m);
        k->scale[j] = sc;
        k->min[j] = m;
    }
    for (int i = 0; i < 4; i++)
        for (int l = 0; l < 32; l++) {
            k->q[64 * i + l] = (b->qs[32 * i + l] & 15) | ((b->qh[l] >> (2 * i)) & 1) << 4;
            k->q[64 * i + 32 + l] = (b->qs[32 * i + l] >> 4) | ((b->qh[l] >> (2 * i + 1)) & 1) << 4;
        }
}

static void unpack_q6_K(const block_q6_K *b, kblock *k)
{
    k->sub = 16;
    k->d = gl_f16_to_f32(b->d);
    k->dmin = 0.0f;
    for (int j = 0; j < 16; j++) {
        k->scale[j] = b->scales[j];
        k->min[j] = 0;
    }
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++)
            for (int l = 0; l < 32; l++) {
                const uint8_t ql = b->ql[64 * h + l + 32 * (s & 1)];
                const int lo = s < 2 ? ql & 15 : ql >> 4;
                const int hi = (b->qh[32 * h + l] >> (2 * s)) & 3;
                k->q[128 * h + 32 * s + l] = (lo | hi << 4) - 32;
            }
}

static void unpack_iq4_xs(const block_iq4_xs *b, kblock *k)
{
    k->sub = 32;
    k->d = gl_f16_to_f32(b->d);
    k->dmin = 0.0f;
    for (int j = 0; j < 8; j++) {
        const int lo = (b->scales_l[j / 2] >> (4 * (j % 2))) & 15;
        const int hi = (b->scales_h >> (2 * j)) & 3;
        k->scale[j] = (lo | hi << 4) - 32;
        k->min[j] = 0;
    }
    for (int j = 0; j < 8; j++)
        for (int l = 0; l < 16; l++) {
            k->q[32 * j + l] = gl_iq4nl_values[b->qs[16 * j + l] & 15];
            k->q[32 * j + 16 + l] = gl_iq4nl_values[b->qs[16 * j + l] >> 4];
        }
}

static void kblock_to_float(const kblock *k, float *y)
{
    for (int e = 0; e < QK_K; e++) {
        const int j = e / k->sub;
        y[e] = k->d * (float)k->scale[j] * (float)k->q[e] - k->dmin * (float)k->min[j];
    }
}

/* One super-block's update of a row sum (src/kernels.h). */
static float kblock_dot(float sum, const kblock *k, const block_q8_K *x)
{
    int isum = 0, imin = 0;
    for (int j = 0; j < QK_K / k->sub; j++) {
        int s = 0, bs = 0;
        for (int l = 0; l < k->sub; l++)
            s += k->q[j * k->sub + l] * x->qs[j * k->sub + l];
        for (int i = j * k->sub / 16; i < (j + 1) * k->sub / 16; i++)
            bs += x->bsums[i];
        isum += k->scale[j] * s;
        imin += k->min[j] * bs;
    }
    if (k->dmin == 0.0f && imin == 0) /* types without mins: sum += isum * (dx * dw) */
        return sum + (float)isum * (x->d * k->d);
    return sum + ((float)isum * (x->d * k->d) - (float)imin * (x->d * k->dmin));
}

/* columns that share one unpacked super-block */
enum { COLS = 16 };

#define KQUANT(name, btype, unpack)                                                                \
    GL_DECL_DEQUANT_FN(gl_dequant_##name##_generic)                                                \
    {                                                                                              \
        const btype *b = w;                                                                        \
        kblock k;                                                                                  \
        for (int i = 0; i < n / QK_K; i++) {                                                       \
            unpack(&b[i], &k);                                                                     \
            kblock_to_float(&k, y + i * QK_K);                                                     \
        }                                                                                          \
    }                                                                                              \
    GL_DECL_MATMUL_FN(gl_matmul_##name##_generic)                                                  \
    {                                                                                              \
        kblock k;                                                                                  \
        float sum[COLS];                                                                           \
        for (int r = r0; r < r1; r++) {                                                            \
            const btype *wr = (const btype *)((const char *)w + r * w_row_bytes);                  \
            for (int b0 = 0; b0 < nb; b0 += COLS) {                                                \
                const int nc = nb - b0 < COLS ? nb - b0 : COLS;                                    \
                for (int c = 0; c < nc; c++)                                                       \
                    sum[c] = 0.0f;                                                                 \
                for (int i = 0; i < n / QK_K; i++) {                                               \
                    unpack(&wr[i], &k);                                                            \
                    for (int c = 0; c < nc; c++)                                                   \
                        sum[c] = kblock_dot(                                                       \
                            sum[c], &k,                                                            \
                            (const block_q8_K *)((const char *)x + (b0 + c) * x_stride) + i);      \
                }                                                                                  \
                for (int c = 0; c < nc; c++)                                                       \
                    y[(b0 + c) * y_stride + r] = sum[c];                                           \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    /* one super-block's update of a row sum, for the repacked layouts'                            \
     * reference products (arch/generic/repack.c): the plain products' step */                     \
    float gl_kdot_##name##_generic(float sum, const btype *w, const block_q8_K *x)                 \
    {                                                                                              \
        kblock k;                                                                                  \
        unpack(w, &k);                                                                             \
        return kblock_dot(sum, &k, x);                                                             \
    }

KQUANT(q2_K, block_q2_K, unpack_q2_K)
KQUANT(q3_K, block_q3_K, unpack_q3_K)
KQUANT(q4_K, block_q4_K, unpack_q4_K)
KQUANT(q5_K, block_q5_K, unpack_q5_K)
KQUANT(q6_K, block_q6_K, unpack_q6_K)
KQUANT(iq4_xs, block_iq4_xs, unpack_iq4_xs)
