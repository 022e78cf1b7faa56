/* Reference kernels of the 32-element block types beyond Q4_0 / Q8_0:
 * Q4_1, Q5_0, Q5_1 and IQ4_NL. Products follow the float order of
 * src/kernels.h exactly (one update per block, integer inside). */
#include <string.h>

#include "arch/generic/generic.h"
#include "half.h"

/* Bit 4 of each element of a Q5 block: bit j of qh is element j's. */
static uint32_t q5_high_bits(const uint8_t qh[4])
{
    uint32_t h;
    memcpy(&h, qh, sizeof h);
    return h;
}

/* The 32 quants of a block as ints, in element order. */
static void unpack_q4(const uint8_t *qs, int *q)
{
    for (int j = 0; j < QK4_0 / 2; j++) {
        q[j] = qs[j] & 0x0f;
        q[j + QK4_0 / 2] = qs[j] >> 4;
    }
}

static void unpack_q5(const uint8_t *qs, const uint8_t qh[4], int *q)
{
    const uint32_t h = q5_high_bits(qh);
    unpack_q4(qs, q);
    for (int j = 0; j < QK4_0; j++)
        q[j] |= (int)((h >> j) & 1) << 4;
}

static int isum32(const int *q, const int8_t *x)
{
    int s = 0;
    for (int j = 0; j < QK4_0; j++)
        s += q[j] * x[j];
    return s;
}

/* ---- dequantize -------------------------------------------------------- */

GL_DECL_DEQUANT_FN(gl_dequant_q4_1_generic)
{
    const block_q4_1 *b = w;
    for (int i = 0; i < n / QK4_0; i++) {
        int q[QK4_0];
        unpack_q4(b[i].qs, q);
        const float d = gl_f16_to_f32(b[i].d), m = gl_f16_to_f32(b[i].m);
        for (int j = 0; j < QK4_0; j++)
            y[i * QK4_0 + j] = d * (float)q[j] + m;
    }
}

GL_DECL_DEQUANT_FN(gl_dequant_q5_0_generic)
{
    const block_q5_0 *b = w;
    for (int i = 0; i < n / QK4_0; i++) {
        int q[QK4_0];
        unpack_q5(b[i].qs, b[i].qh, q);
        const float d = gl_f16_to_f32(b[i].d);
        for (int j = 0; j < QK4_0; j++)
            y[i * QK4_0 + j] = d * (float)(q[j] - 16);
    }
}

GL_DECL_DEQUANT_FN(gl_dequant_q5_1_generic)
{
    const block_q5_1 *b = w;
    for (int i = 0; i < n / QK4_0; i++) {
        int q[QK4_0];
        unpack_q5(b[i].qs, b[i].qh, q);
        const float d = gl_f16_to_f32(b[i].d), m = gl_f16_to_f32(b[i].m);
        for (int j = 0; j < QK4_0; j++)
            y[i * QK4_0 + j] = d * (float)q[j] + m;
    }
}

GL_DECL_DEQUANT_FN(gl_dequant_iq4_nl_generic)
{
    const block_iq4_nl *b = w;
    for (int i = 0; i < n / QK4_0; i++) {
        int q[QK4_0];
        unpack_q4(b[i].qs, q);
        const float d = gl_f16_to_f32(b[i].d);
        for (int j = 0; j < QK4_0; j++)
            y[i * QK4_0 + j] = d * (float)gl_iq4nl_values[q[j]];
    }
}

/* ---- products ---------------------------------------------------------- */

static float dot_q4_1(const block_q4_1 *w, const block_q8_1 *x, int nblocks)
{
    float sum = 0.0f;
    for (int b = 0; b < nblocks; b++) {
        int q[QK4_0];
        unpack_q4(w[b].qs, q);
        const float dx = gl_f16_to_f32(x[b].d);
        sum += (float)isum32(q, x[b].qs) * (gl_f16_to_f32(w[b].d) * dx) +
               (float)x[b].s * (gl_f16_to_f32(w[b].m) * dx);
    }
    return sum;
}

static float dot_q5_1(const block_q5_1 *w, const block_q8_1 *x, int nblocks)
{
    float sum = 0.0f;
    for (int b = 0; b < nblocks; b++) {
        int q[QK4_0];
        unpack_q5(w[b].qs, w[b].qh, q);
        const float dx = gl_f16_to_f32(x[b].d);
        sum += (float)isum32(q, x[b].qs) * (gl_f16_to_f32(w[b].d) * dx) +
               (float)x[b].s * (gl_f16_to_f32(w[b].m) * dx);
    }
    return sum;
}

static float dot_q5_0(const block_q5_0 *w, const block_q8_0 *x, int nblocks)
{
    float sum = 0.0f;
    for (int b = 0; b < nblocks; b++) {
        int q[QK4_0];
        unpack_q5(w[b].qs, w[b].qh, q);
        for (int j = 0; j < QK4_0; j++)
            q[j] -= 16;
        sum += (float)isum32(q, x[b].qs) * (gl_f16_to_f32(w[b].d) * gl_f16_to_f32(x[b].d));
    }
    return sum;
}

static float dot_iq4_nl(const block_iq4_nl *w, const block_q8_0 *x, int nblocks)
{
    float sum = 0.0f;
    for (int b = 0; b < nblocks; b++) {
        int q[QK4_0];
        unpack_q4(w[b].qs, q);
        for (int j = 0; j < QK4_0; j++)
            q[j] = gl_iq4nl_values[q[j]];
        sum += (float)isum32(q, x[b].qs) * (gl_f16_to_f32(w[b].d) * gl_f16_to_f32(x[b].d));
    }
    return sum;
}

#define ROWS_OF(wtype, atype, dot)                                                                 \
    for (int b = 0; b < nb; b++) {                                                                 \
        const atype *xb = (const atype *)((const char *)x + b * x_stride);                         \
        for (int r = r0; r < r1; r++) {                                                            \
            const wtype *wr = (const wtype *)((const char *)w + r * w_row_bytes);                  \
            y[b * y_stride + r] = dot(wr, xb, n / QK4_0);                                          \
        }                                                                                          \
    }

GL_DECL_MATMUL_FN(gl_matmul_q4_1_generic){ ROWS_OF(block_q4_1, block_q8_1, dot_q4_1) }

GL_DECL_MATMUL_FN(gl_matmul_q5_0_generic){ ROWS_OF(block_q5_0, block_q8_0, dot_q5_0) }

GL_DECL_MATMUL_FN(gl_matmul_q5_1_generic){ ROWS_OF(block_q5_1, block_q8_1, dot_q5_1) }

GL_DECL_MATMUL_FN(gl_matmul_iq4_nl_generic)
{
    ROWS_OF(block_iq4_nl, block_q8_0, dot_iq4_nl)
}
