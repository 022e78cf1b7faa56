/* Reference implementation of the row-interleaved layouts (src/quant.h:
 * the 32-element types' x8 / x16 groups and the K-quants'; ROWS rows per
 * group): repack, unpack and the matrix products over them. The products
 * compute, per output element, exactly the sequence of the plain-row
 * kernels (arch/generic/matmul.c, legacy_quants.c, kquants.c), e.g.
 *     sum = 0; for b: sum = sum + (float)isum_b * (dw_b * dx_b)
 * (Q4_1 / Q5_1 add (float)s_b * (m_b * dx_b) inside the parentheses), so
 * they are bit-equal to generic's plain-row kernels; every backend's packed
 * kernel is checked bit for bit against these. */
#include <string.h>

#include "arch/generic/generic.h"
#include "half.h"

/* ---- repack / unpack ----------------------------------------------------- */

/* byte j of row r's block -> index in the interleaved qs of ROWS rows */
static inline int xn_index(int rows, int r, int j)
{
    return (j / 4) * (rows * 4) + r * 4 + (j % 4);
}

/* Hooks of the bodies below, each XN_KEEP (the statement) or XN_DROP
 * (nothing): M, the row offset m of Q4_1 / Q5_1; H, the fifth bits of
 * Q5_0 / Q5_1, re-encoded one 32-bit lane per row (q5x_put_lane). */
#define XN_DROP(...)
#define XN_KEEP(...) __VA_ARGS__

/* byte i of a row's re-encoded lane from its plain qh (little-endian) */
static uint8_t q5x_lane_byte(uint32_t h, int i)
{
    uint8_t v = 0;
    for (int k = 0; k < 4; k++)
        v |= (uint8_t)((h >> (4 * k + i) & 1) << k | (h >> (16 + 4 * k + i) & 1) << (4 + k));
    return v;
}

/* the fifth bit of element e (< 32) from a row's re-encoded lane */
static int q5x_hbit(const uint8_t *lane, int e)
{
    const int i = e % 4, k = e % 16 / 4;
    return lane[i] >> (e < 16 ? k : 4 + k) & 1;
}

/* a row's plain qh (4 bytes, little-endian) to its re-encoded lane and back */
static void q5x_put_lane(uint8_t *lane, const uint8_t *qh)
{
    uint32_t h;
    memcpy(&h, qh, 4);
    for (int i = 0; i < 4; i++)
        lane[i] = q5x_lane_byte(h, i);
}

static void q5x_get_lane(uint8_t *qh, const uint8_t *lane)
{
    uint32_t h = 0;
    for (int e = 0; e < 32; e++)
        h |= (uint32_t)q5x_hbit(lane, e) << e;
    memcpy(qh, &h, 4);
}

/* One generic body for every layout: BLK source blocks of QS quant bytes
 * go, 4 bytes at a time, to the interleaved positions (xn_index). Written
 * with 4-byte copies so that loading a model stays fast (the loader runs
 * this on every thread over disjoint groups). */
#define DEF_REPACK(NAME, BLK, XBLK, QS, ROWS, M, H)                                                \
    GL_DECL_REPACK_FN(NAME)                                                                        \
    {                                                                                              \
        const int nblk = n / 32;                                                                   \
        XBLK *out = dst;                                                                           \
        for (int g = g0; g < g1; g++) {                                                            \
            const BLK *src[(ROWS)];                                                                \
            for (int r = 0; r < (ROWS); r++) {                                                     \
                const int row = g * (ROWS) + r;                                                    \
                src[r] = row < n_rows ? (const BLK *)((const char *)w + (size_t)row * w_row_bytes) \
                                      : NULL; /* padding: d = 0, quants 0 */                       \
            }                                                                                      \
            XBLK *og = out + (size_t)g * nblk;                                                     \
            for (int r = 0; r < (ROWS); r++)                                                       \
                for (int b = 0; b < nblk; b++) {                                                   \
                    XBLK *o = og + b;                                                              \
                    if (!src[r]) {                                                                 \
                        o->d[r] = 0;                                                               \
                        M(o->m[r] = 0);                                                            \
                        H(memset(&o->qh[4 * r], 0, 4));                                            \
                        for (int k = 0; k < (QS) / 4; k++)                                         \
                            memset(&o->qs[xn_index(ROWS, r, 4 * k)], 0, 4);                        \
                        continue;                                                                  \
                    }                                                                              \
                    const BLK *sb = src[r] + b;                                                    \
                    o->d[r] = sb->d;                                                               \
                    M(o->m[r] = sb->m);                                                            \
                    H(q5x_put_lane(&o->qh[4 * r], sb->qh));                                        \
                    for (int k = 0; k < (QS) / 4; k++)                                             \
                        memcpy(&o->qs[xn_index(ROWS, r, 4 * k)], &sb->qs[4 * k], 4);               \
                }                                                                                  \
        }                                                                                          \
    }

#define DEF_UNPACK(NAME, BLK, XBLK, QS, ROWS, M, H)                                                \
    GL_DECL_UNPACK_FN(NAME)                                                                        \
    {                                                                                              \
        const int nblk = n / 32, g = r / (ROWS), k = r % (ROWS);                                   \
        const XBLK *in = (const XBLK *)((const char *)packed + (size_t)g * group_bytes);           \
        BLK *o = dst;                                                                              \
        for (int b = 0; b < nblk; b++) {                                                           \
            o[b].d = in[b].d[k];                                                                   \
            M(o[b].m = in[b].m[k]);                                                                \
            H(q5x_get_lane(o[b].qh, &in[b].qh[4 * k]));                                            \
            for (int j = 0; j < (QS); j++)                                                         \
                o[b].qs[j] = in[b].qs[xn_index(ROWS, k, j)];                                       \
        }                                                                                          \
    }

/* the repack and unpack pair of a layout */
#define DEF_XN_LAYOUT(T, BLK, XBLK, QS, ROWS, M, H)                                                \
    DEF_REPACK(gl_repack_##T##_generic, BLK, XBLK, QS, ROWS, M, H)                                 \
    DEF_UNPACK(gl_unpack_##T##_generic, BLK, XBLK, QS, ROWS, M, H)

DEF_XN_LAYOUT(q4_0_x8, block_q4_0, block_q4_0x8, QK4_0 / 2, GL_X8_ROWS, XN_DROP, XN_DROP)
DEF_XN_LAYOUT(q8_0_x8, block_q8_0, block_q8_0x8, QK8_0, GL_X8_ROWS, XN_DROP, XN_DROP)
DEF_XN_LAYOUT(q4_0_x16, block_q4_0, block_q4_0x16, QK4_0 / 2, GL_X16_ROWS, XN_DROP, XN_DROP)
DEF_XN_LAYOUT(q8_0_x16, block_q8_0, block_q8_0x16, QK8_0, GL_X16_ROWS, XN_DROP, XN_DROP)
DEF_XN_LAYOUT(iq4_nl_x16, block_iq4_nl, block_iq4_nlx16, QK4_0 / 2, GL_X16_ROWS, XN_DROP, XN_DROP)
DEF_XN_LAYOUT(iq4_nl_x8, block_iq4_nl, block_iq4_nlx8, QK4_0 / 2, GL_X8_ROWS, XN_DROP, XN_DROP)
DEF_XN_LAYOUT(q4_1_x8, block_q4_1, block_q4_1x8, QK4_0 / 2, GL_X8_ROWS, XN_KEEP, XN_DROP)
DEF_XN_LAYOUT(q4_1_x16, block_q4_1, block_q4_1x16, QK4_0 / 2, GL_X16_ROWS, XN_KEEP, XN_DROP)

/* ---- products -------------------------------------------------------------- */

/* Whole groups at a time, the 8 rows' integer sums side by side (the loop
 * nest follows the layout, so compilers vectorize it); rows [r0, r1) of
 * each group are stored. */
#define DEF_XN_MATMUL(NAME, XBLK, QS, DOT, ROWS, ABLK, M)                                          \
    GL_DECL_MATMUL_FN(NAME)                                                                        \
    {                                                                                              \
        const int nblk = n / 32;                                                                   \
        for (int bcol = 0; bcol < nb; bcol++) {                                                    \
            const ABLK *xb = (const ABLK *)((const char *)x + bcol * x_stride);                    \
            for (int g = r0 / (ROWS); g * (ROWS) < r1; g++) {                                      \
                const XBLK *wg = (const XBLK *)((const char *)w + (size_t)g * w_row_bytes);        \
                float sum[(ROWS)] = { 0 };                                                         \
                for (int b = 0; b < nblk; b++) {                                                   \
                    int isum[(ROWS)] = { 0 };                                                      \
                    for (int k = 0; k < (QS) / 4; k++)                                             \
                        for (int r = 0; r < (ROWS); r++)                                           \
                            for (int j = 0; j < 4; j++)                                            \
                                isum[r] += DOT(wg[b].qs[xn_index(ROWS, r, 4 * k + j)], xb[b].qs,   \
                                               4 * k + j);                                         \
                    const float dx = gl_f16_to_f32(xb[b].d);                                       \
                    for (int r = 0; r < (ROWS); r++)                                               \
                        sum[r] += (float)isum[r] *                                                 \
                                  (gl_f16_to_f32(wg[b].d[r]) * dx)                                 \
                                      M(+(float)xb[b].s * (gl_f16_to_f32(wg[b].m[r]) * dx));       \
                }                                                                                  \
                for (int r = 0; r < (ROWS); r++) {                                                 \
                    const int row = g * (ROWS) + r;                                                \
                    if (row >= r0 && row < r1)                                                     \
                        y[bcol * y_stride + row] = sum[r];                                         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* Q4_0: byte i holds element i (low nibble) and i + 16 (high), w = u - 8 */
#define DOT_Q4(q, xq, i) (((q)&0x0f) - 8) * (xq)[i] + (((q) >> 4) - 8) * (xq)[(i) + 16]
#define DOT_Q8(q, xq, i) (q) * (xq)[i]
/* Q4_1: Q4_0's nibbles, w = u */
#define DOT_Q41(q, xq, i) ((q)&0x0f) * (xq)[i] + ((q) >> 4) * (xq)[(i) + 16]
/* IQ4_NL: Q4_0's nibbles, each looked up */
#define DOT_IQ4NL(q, xq, i)                                                                        \
    gl_iq4nl_values[(q)&0x0f] * (xq)[i] + gl_iq4nl_values[(q) >> 4] * (xq)[(i) + 16]

DEF_XN_MATMUL(gl_matmul_q4_0_x8_generic, block_q4_0x8, QK4_0 / 2, DOT_Q4, GL_X8_ROWS, block_q8_0,
              XN_DROP)
DEF_XN_MATMUL(gl_matmul_q8_0_x8_generic, block_q8_0x8, QK8_0, DOT_Q8, GL_X8_ROWS, block_q8_0,
              XN_DROP)
DEF_XN_MATMUL(gl_matmul_q4_0_x16_generic, block_q4_0x16, QK4_0 / 2, DOT_Q4, GL_X16_ROWS, block_q8_0,
              XN_DROP)
DEF_XN_MATMUL(gl_matmul_q8_0_x16_generic, block_q8_0x16, QK8_0, DOT_Q8, GL_X16_ROWS, block_q8_0,
              XN_DROP)
DEF_XN_MATMUL(gl_matmul_iq4_nl_x16_generic, block_iq4_nlx16, QK4_0 / 2, DOT_IQ4NL, GL_X16_ROWS,
              block_q8_0, XN_DROP)
DEF_XN_MATMUL(gl_matmul_iq4_nl_x8_generic, block_iq4_nlx8, QK4_0 / 2, DOT_IQ4NL, GL_X8_ROWS,
              block_q8_0, XN_DROP)
/* Q4_1: sum = sum + ((float)isum * (dw * dx) + (float)s * (m * dx)), generic's */
DEF_XN_MATMUL(gl_matmul_q4_1_x8_generic, block_q4_1x8, QK4_0 / 2, DOT_Q41, GL_X8_ROWS, block_q8_1,
              XN_KEEP)
DEF_XN_MATMUL(gl_matmul_q4_1_x16_generic, block_q4_1x16, QK4_0 / 2, DOT_Q41, GL_X16_ROWS,
              block_q8_1, XN_KEEP)

/* ---- Q5_0x8 / Q5_0x16 (src/quant.h): Q4_0's interleave for the nibbles,
 * the fifth bits re-encoded, one 32-bit lane per row */

#define DEF_Q5X_MATMUL(T, SFX, XBLK, ROWS, ABLK, OFF, M)                                           \
    /* As DEF_XN_MATMUL: generic's Q5_0 / Q5_1 sequence, w = u - OFF */                            \
    GL_DECL_MATMUL_FN(gl_matmul_##T##_##SFX##_generic)                                             \
    {                                                                                              \
        const int nblk = n / 32;                                                                   \
        for (int bcol = 0; bcol < nb; bcol++) {                                                    \
            const ABLK *xb = (const ABLK *)((const char *)x + bcol * x_stride);                    \
            for (int g = r0 / (ROWS); g * (ROWS) < r1; g++) {                                      \
                const XBLK *wg = (const XBLK *)((const char *)w + (size_t)g * w_row_bytes);        \
                for (int r = 0; r < (ROWS); r++) {                                                 \
                    const int row = g * (ROWS) + r;                                                \
                    if (row < r0 || row >= r1)                                                     \
                        continue;                                                                  \
                    float sum = 0.0f;                                                              \
                    for (int b = 0; b < nblk; b++) {                                               \
                        const uint8_t *lane = &wg[b].qh[4 * r];                                    \
                        int isum = 0;                                                              \
                        for (int j = 0; j < QK4_0 / 2; j++) {                                      \
                            const int q = wg[b].qs[xn_index(ROWS, r, j)];                          \
                            isum += ((q & 0x0f) + 16 * q5x_hbit(lane, j) - (OFF)) * xb[b].qs[j];   \
                            isum += ((q >> 4) + 16 * q5x_hbit(lane, j + 16) - (OFF)) *             \
                                    xb[b].qs[j + 16];                                              \
                        }                                                                          \
                        const float dx = gl_f16_to_f32(xb[b].d);                                   \
                        sum += (float)isum *                                                       \
                               (gl_f16_to_f32(wg[b].d[r]) * dx)                                    \
                                   M(+(float)xb[b].s * (gl_f16_to_f32(wg[b].m[r]) * dx));          \
                    }                                                                              \
                    y[bcol * y_stride + row] = sum;                                                \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEF_XN_LAYOUT(q5_0_x8, block_q5_0, block_q5_0x8, QK4_0 / 2, GL_X8_ROWS, XN_DROP, XN_KEEP)
DEF_Q5X_MATMUL(q5_0, x8, block_q5_0x8, GL_X8_ROWS, block_q8_0, 16, XN_DROP)
DEF_XN_LAYOUT(q5_0_x16, block_q5_0, block_q5_0x16, QK4_0 / 2, GL_X16_ROWS, XN_DROP, XN_KEEP)
DEF_Q5X_MATMUL(q5_0, x16, block_q5_0x16, GL_X16_ROWS, block_q8_0, 16, XN_DROP)
DEF_XN_LAYOUT(q5_1_x8, block_q5_1, block_q5_1x8, QK4_0 / 2, GL_X8_ROWS, XN_KEEP, XN_KEEP)
DEF_Q5X_MATMUL(q5_1, x8, block_q5_1x8, GL_X8_ROWS, block_q8_1, 0, XN_KEEP)
DEF_XN_LAYOUT(q5_1_x16, block_q5_1, block_q5_1x16, QK4_0 / 2, GL_X16_ROWS, XN_KEEP, XN_KEEP)
DEF_Q5X_MATMUL(q5_1, x16, block_q5_1x16, GL_X16_ROWS, block_q8_1, 0, XN_KEEP)

/* ---- K-quant row groups (src/quant.h) ----------------------------------
 * Q4_Kx8, Q6_Kx8, Q4_Kx16, Q5_Kx8 / x16, IQ4_XSx8 / x16, Q2_Kx8 / x16: every byte array of ROWS
 * rows' super-blocks interleaved in 4-byte units (xn_index), the
 * half-float scales side by side; Q6_Kx16 and Q3_Kx8 / Q3_Kx16 re-encoded
 * for their kernels. The products run each row's super-blocks back
 * through generic's plain step (gl_kdot_*), so they are the plain products
 * by construction. */

#define KX_COPY(o, sb, f, bytes, r, rows)                                                          \
    for (int u = 0; u < (bytes) / 4; u++)                                                          \
    memcpy(&(o)->f[xn_index(rows, r, 4 * u)], &(sb)->f[4 * u], 4)
#define KX_ZERO(o, f, bytes, r, rows)                                                              \
    for (int u = 0; u < (bytes) / 4; u++)                                                          \
    memset(&(o)->f[xn_index(rows, r, 4 * u)], 0, 4)
#define KX_BACK(ob, in, f, bytes, k, rows)                                                         \
    for (int j = 0; j < (bytes); j++)                                                              \
    (ob)->f[j] = (in)->f[xn_index(rows, k, j)]

/* What each of these layouts keeps per row: half-float scalars side by
 * side, as X(field), and byte arrays interleaved, as X(field, bytes, rows) */
#define D_DMIN(X)                X(d) X(dmin)
#define D_SCALES_H(X)            X(d) X(scales_h)
#define D_ONLY(X)                X(d)
#define Q4K_ARRAYS(X, R)         X(scales, K_SCALE_SIZE, R) X(qs, QK_K / 2, R)
#define Q5K_ARRAYS(X, R)         X(scales, K_SCALE_SIZE, R) X(qh, QK_K / 8, R) X(qs, QK_K / 2, R)
#define Q6K_ARRAYS(X, R)         X(scales, QK_K / 16, R) X(ql, QK_K / 2, R) X(qh, QK_K / 4, R)
#define Q2K_ARRAYS(X, R)         X(scales, QK_K / 16, R) X(qs, QK_K / 4, R)
#define IQ4XS_ARRAYS(X, R)       X(scales_l, QK_K / 64, R) X(qs, QK_K / 2, R)
#define KX_SZERO_(f)             o->f[r] = 0;
#define KX_SCOPY_(f)             o->f[r] = sb->f;
#define KX_SBACK_(f)             ob->f = in->f[k];
#define KX_ZERO_(f, bytes, rows) KX_ZERO(o, f, bytes, r, rows);
#define KX_COPY_(f, bytes, rows) KX_COPY(o, sb, f, bytes, r, rows);
#define KX_BACK_(f, bytes, rows) KX_BACK(ob, in, f, bytes, k, rows);

/* row r of a group block *o from plain super-block *sb (NULL: padding),
 * and back */
#define DEF_KX_PUTGET(PUT, GET, BLK, XBLK, ROWS, SCALARS, ARRAYS)                                  \
    static void PUT(XBLK *o, const BLK *sb, int r)                                                 \
    {                                                                                              \
        if (!sb) {                                                                                 \
            SCALARS(KX_SZERO_)                                                                     \
            ARRAYS(KX_ZERO_, ROWS)                                                                 \
            return;                                                                                \
        }                                                                                          \
        SCALARS(KX_SCOPY_)                                                                         \
        ARRAYS(KX_COPY_, ROWS)                                                                     \
    }                                                                                              \
    static void GET(BLK *ob, const XBLK *in, int k)                                                \
    {                                                                                              \
        SCALARS(KX_SBACK_)                                                                         \
        ARRAYS(KX_BACK_, ROWS)                                                                     \
    }

/* clang-format off */
DEF_KX_PUTGET(q4_Kx8_put, q4_Kx8_get, block_q4_K, block_q4_Kx8, GL_X8_ROWS, D_DMIN, Q4K_ARRAYS)
DEF_KX_PUTGET(q4_Kx16_put, q4_Kx16_get, block_q4_K, block_q4_Kx16, GL_X16_ROWS, D_DMIN, Q4K_ARRAYS)
DEF_KX_PUTGET(q5_Kx8_put, q5_Kx8_get, block_q5_K, block_q5_Kx8, GL_X8_ROWS, D_DMIN, Q5K_ARRAYS)
DEF_KX_PUTGET(q5_Kx16_put, q5_Kx16_get, block_q5_K, block_q5_Kx16, GL_X16_ROWS, D_DMIN, Q5K_ARRAYS)
DEF_KX_PUTGET(q6_Kx8_put, q6_Kx8_get, block_q6_K, block_q6_Kx8, GL_X8_ROWS, D_ONLY, Q6K_ARRAYS)
DEF_KX_PUTGET(q2_Kx8_put, q2_Kx8_get, block_q2_K, block_q2_Kx8, GL_X8_ROWS, D_DMIN, Q2K_ARRAYS)
DEF_KX_PUTGET(q2_Kx16_put, q2_Kx16_get, block_q2_K, block_q2_Kx16, GL_X16_ROWS, D_DMIN, Q2K_ARRAYS)
DEF_KX_PUTGET(iq4_xsx8_put, iq4_xsx8_get, block_iq4_xs, block_iq4_xsx8, GL_X8_ROWS, D_SCALES_H, IQ4XS_ARRAYS)
DEF_KX_PUTGET(iq4_xsx16_put, iq4_xsx16_get, block_iq4_xs, block_iq4_xsx16, GL_X16_ROWS, D_SCALES_H, IQ4XS_ARRAYS)
/* clang-format on */

/* Q3_Kx8 / Q3_Kx16 (src/quant.h), U = 4 rows bytes per unit: element e's
 * group, byte and value index t */
static void q3_Kxn_at(int e, int *g, int *i, int *t)
{
    const int h = e / 128, s = e % 128 / 32, k = e % 32 / 4;
    *g = 4 * h + k / 2;
    *i = e % 4;
    *t = s + 4 * (k % 2);
}

/* the stored (+32) six-bit scale j of a plain Q3_K super-block */
static int q3_K_raw_scale(const uint8_t *sc, int j)
{
    const int lo = j < 8 ? sc[j] & 15 : sc[j - 8] >> 4;
    return lo | ((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4;
}

/* row r's super-block into the scales and q arrays of a group of `rows` */
static void q3_Kxn_put(uint8_t *scales, uint8_t *q, int rows, const block_q3_K *sb, int r)
{
    const int U = 4 * rows;
    int sv[16];
    for (int j = 0; j < 16; j++)
        sv[j] = sb ? q3_K_raw_scale(sb->scales, j) : 0;
    for (int t = 0; t < 3; t++)
        for (int b = 0; b < 4; b++)
            scales[U * t + 4 * r + b] =
                (uint8_t)(sv[4 * t + b] | ((sv[12 + b] >> (2 * t)) & 3) << 6);
    uint8_t u[8][8][4] = { 0 }; /* [group][t][i] */
    if (sb)
        for (int e = 0; e < QK_K; e++) {
            const int h = e / 128, s = e % 128 / 32, l = e % 32;
            const int lo = (sb->qs[32 * h + l] >> (2 * s)) & 3;
            const int hb = (sb->hmask[l] >> (4 * h + s)) & 1;
            int g, i, t;
            q3_Kxn_at(e, &g, &i, &t);
            u[g][t][i] = (uint8_t)(lo | hb << 2);
        }
    for (int g = 0; g < 8; g++)
        for (int i = 0; i < 4; i++) {
            const uint8_t *v = (const uint8_t *)&u[g][0][0];
#define U_(t) v[4 * (t) + i]
            uint8_t *o = q + 3 * U * g + 4 * r + i;
            o[0] = (uint8_t)(U_(0) | U_(1) << 3 | (U_(6) & 3) << 6);
            o[U] = (uint8_t)(U_(2) | U_(3) << 3 | (U_(7) & 3) << 6);
            o[2 * U] = (uint8_t)(U_(4) | U_(5) << 3 | (U_(6) >> 2) << 6 | (U_(7) >> 2) << 7);
#undef U_
        }
}

static void q3_Kxn_get(block_q3_K *ob, const uint8_t *scales, const uint8_t *q, int rows, int k)
{
    const int U = 4 * rows;
    for (int j = 0; j < 16; j++) {
        const int sv = j < 12 ? scales[U * (j / 4) + 4 * k + j % 4] & 63
                              : (scales[4 * k + j - 12] >> 6) |
                                    (scales[U + 4 * k + j - 12] >> 6) << 2 |
                                    (scales[2 * U + 4 * k + j - 12] >> 6) << 4;
        ob->scales[j % 8] |= (uint8_t)((sv & 15) << (4 * (j / 8)));
        ob->scales[8 + j % 4] |= (uint8_t)((sv >> 4) << (2 * (j / 4)));
    }
    for (int e = 0; e < QK_K; e++) {
        int g, i, t;
        q3_Kxn_at(e, &g, &i, &t);
        const uint8_t *b = q + 3 * U * g + 4 * k + i;
        int u;
        if (t < 6)
            u = (b[U * (t / 2)] >> (3 * (t % 2))) & 7;
        else if (t == 6)
            u = (b[0] >> 6) | ((b[2 * U] >> 6) & 1) << 2;
        else
            u = (b[U] >> 6) | (b[2 * U] >> 7) << 2;
        const int h = e / 128, s = e % 128 / 32, l = e % 32;
        ob->qs[32 * h + l] |= (uint8_t)((u & 3) << (2 * s));
        ob->hmask[l] |= (uint8_t)((u >> 2) << (4 * h + s));
    }
}

#define DEF_Q3K_PUTGET(PUT, GET, XBLK, ROWS)                                                       \
    static void PUT(XBLK *o, const block_q3_K *sb, int r)                                          \
    {                                                                                              \
        o->d[r] = sb ? sb->d : 0;                                                                  \
        q3_Kxn_put(o->scales, o->q, ROWS, sb, r);                                                  \
    }                                                                                              \
    static void GET(block_q3_K *ob, const XBLK *in, int k)                                         \
    {                                                                                              \
        memset(ob, 0, sizeof *ob);                                                                 \
        ob->d = in->d[k];                                                                          \
        q3_Kxn_get(ob, in->scales, in->q, ROWS, k);                                                \
    }

DEF_Q3K_PUTGET(q3_Kx8_put, q3_Kx8_get, block_q3_Kx8, GL_X8_ROWS)
DEF_Q3K_PUTGET(q3_Kx16_put, q3_Kx16_get, block_q3_Kx16, GL_X16_ROWS)

/* element e of a plain Q6_K super-block set from u = q + 32 in [0, 63] */
static void q6_K_put_u(block_q6_K *b, int e, int u)
{
    const int h = e / 128, s = e % 128 / 32, l = e % 32;
    b->ql[64 * h + 32 * (s & 1) + l] |= (uint8_t)((u & 15) << (4 * (s >> 1)));
    b->qh[32 * h + l] |= (uint8_t)((u >> 4) << (2 * s));
}

/* Q6_Kx16 (src/quant.h): where element e's byte is, for s < 3 and for each
 * of the three pieces of an s = 3 element */
static size_t q6_Kx16_at(int r, int e, int t)
{
    const int h = e / 128, s = e % 128 / 32, k = e % 32 / 4, i = e % 4;
    return (size_t)64 * (3 * (8 * h + k) + (s < 3 ? s : t)) + 4 * (size_t)r + (size_t)i;
}

/* Row r's super-block into a Q6_Kx16 block (src/quant.h): per half h, the
 * four 32-value runs u[s] of the plain block, then each byte of the row's
 * share written once and whole, 4 at a time; the loops over l are plain
 * byte arithmetic the compiler vectorizes, so a model's Q6_K matrices
 * repack at close to memory speed. sb NULL: a padding row of zeros. */
static void q6_Kx16_put(block_q6_Kx16 *o, const block_q6_K *sb, int r)
{
    o->d[r] = sb ? sb->d : 0;
    for (int j = 0; j < QK_K / 16; j++)
        o->scales[GL_X16_ROWS * j + r] = sb ? sb->scales[j] : 0;
    for (int h = 0; h < 2; h++) {
        uint8_t u[4][32];
        if (sb)
            for (int s4 = 0; s4 < 4; s4++) {
                const uint8_t *ql = sb->ql + 64 * h + 32 * (s4 & 1), *qh = sb->qh + 32 * h;
                const int lo_shift = 4 * (s4 >> 1), hi_shift = 2 * s4;
                for (int l = 0; l < 32; l++)
                    u[s4][l] =
                        (uint8_t)(((ql[l] >> lo_shift) & 15) | ((qh[l] >> hi_shift) & 3) << 4);
            }
        else
            memset(u, 0, sizeof u);
        for (int t = 0; t < 3; t++) {
            uint8_t b[32];
            for (int l = 0; l < 32; l++)
                b[l] = (uint8_t)(u[t][l] | ((u[3][l] >> (2 * t)) & 3) << 6);
            for (int k = 0; k < 8; k++)
                memcpy(o->q + 64 * (3 * (8 * h + k) + t) + 4 * r, b + 4 * k, 4);
        }
    }
}

static void q6_Kx16_get(block_q6_K *ob, const block_q6_Kx16 *in, int k)
{
    memset(ob, 0, sizeof *ob);
    ob->d = in->d[k];
    for (int j = 0; j < QK_K / 16; j++)
        ob->scales[j] = in->scales[GL_X16_ROWS * j + k];
    for (int e = 0; e < QK_K; e++) {
        int u = 0;
        if (e % 128 / 32 < 3)
            u = in->q[q6_Kx16_at(k, e, 0)] & 0x3f;
        else
            for (int t = 0; t < 3; t++)
                u |= (in->q[q6_Kx16_at(k, e, t)] >> 6) << (2 * t);
        q6_K_put_u(ob, e, u);
    }
}

#define DEF_KX_REPACK(NAME, BLK, XBLK, PUT, ROWS)                                                  \
    GL_DECL_REPACK_FN(NAME)                                                                        \
    {                                                                                              \
        const int nsb = n / QK_K;                                                                  \
        XBLK *out = dst;                                                                           \
        for (int g = g0; g < g1; g++) {                                                            \
            XBLK *o = out + (size_t)g * nsb;                                                       \
            for (int r = 0; r < (ROWS); r++) {                                                     \
                const int row = g * (ROWS) + r;                                                    \
                const BLK *src = row < n_rows                                                      \
                                     ? (const BLK *)((const char *)w + (size_t)row * w_row_bytes)  \
                                     : NULL;                                                       \
                for (int b = 0; b < nsb; b++)                                                      \
                    PUT(&o[b], src ? &src[b] : NULL, r);                                           \
            }                                                                                      \
        }                                                                                          \
    }

DEF_KX_REPACK(gl_repack_q4_K_x8_generic, block_q4_K, block_q4_Kx8, q4_Kx8_put, GL_X8_ROWS)
DEF_KX_REPACK(gl_repack_q6_K_x8_generic, block_q6_K, block_q6_Kx8, q6_Kx8_put, GL_X8_ROWS)
DEF_KX_REPACK(gl_repack_q4_K_x16_generic, block_q4_K, block_q4_Kx16, q4_Kx16_put, GL_X16_ROWS)
DEF_KX_REPACK(gl_repack_q6_K_x16_generic, block_q6_K, block_q6_Kx16, q6_Kx16_put, GL_X16_ROWS)
DEF_KX_REPACK(gl_repack_q5_K_x8_generic, block_q5_K, block_q5_Kx8, q5_Kx8_put, GL_X8_ROWS)
DEF_KX_REPACK(gl_repack_q5_K_x16_generic, block_q5_K, block_q5_Kx16, q5_Kx16_put, GL_X16_ROWS)
DEF_KX_REPACK(gl_repack_q2_K_x8_generic, block_q2_K, block_q2_Kx8, q2_Kx8_put, GL_X8_ROWS)
DEF_KX_REPACK(gl_repack_q2_K_x16_generic, block_q2_K, block_q2_Kx16, q2_Kx16_put, GL_X16_ROWS)
DEF_KX_REPACK(gl_repack_q3_K_x8_generic, block_q3_K, block_q3_Kx8, q3_Kx8_put, GL_X8_ROWS)
DEF_KX_REPACK(gl_repack_q3_K_x16_generic, block_q3_K, block_q3_Kx16, q3_Kx16_put, GL_X16_ROWS)
DEF_KX_REPACK(gl_repack_iq4_xs_x8_generic, block_iq4_xs, block_iq4_xsx8, iq4_xsx8_put, GL_X8_ROWS)
DEF_KX_REPACK(gl_repack_iq4_xs_x16_generic, block_iq4_xs, block_iq4_xsx16, iq4_xsx16_put,
              GL_X16_ROWS)

#define DEF_KX_UNPACK(NAME, BLK, XBLK, GET, ROWS)                                                  \
    GL_DECL_UNPACK_FN(NAME)                                                                        \
    {                                                                                              \
        const XBLK *in =                                                                           \
            (const XBLK *)((const char *)packed + (size_t)(r / (ROWS)) * group_bytes);             \
        BLK *o = dst;                                                                              \
        for (int b = 0; b < n / QK_K; b++)                                                         \
            GET(&o[b], &in[b], r % (ROWS));                                                        \
    }

DEF_KX_UNPACK(gl_unpack_q4_K_x8_generic, block_q4_K, block_q4_Kx8, q4_Kx8_get, GL_X8_ROWS)
DEF_KX_UNPACK(gl_unpack_q6_K_x8_generic, block_q6_K, block_q6_Kx8, q6_Kx8_get, GL_X8_ROWS)
DEF_KX_UNPACK(gl_unpack_q4_K_x16_generic, block_q4_K, block_q4_Kx16, q4_Kx16_get, GL_X16_ROWS)
DEF_KX_UNPACK(gl_unpack_q6_K_x16_generic, block_q6_K, block_q6_Kx16, q6_Kx16_get, GL_X16_ROWS)
DEF_KX_UNPACK(gl_unpack_q5_K_x8_generic, block_q5_K, block_q5_Kx8, q5_Kx8_get, GL_X8_ROWS)
DEF_KX_UNPACK(gl_unpack_q5_K_x16_generic, block_q5_K, block_q5_Kx16, q5_Kx16_get, GL_X16_ROWS)
DEF_KX_UNPACK(gl_unpack_q2_K_x8_generic, block_q2_K, block_q2_Kx8, q2_Kx8_get, GL_X8_ROWS)
DEF_KX_UNPACK(gl_unpack_q2_K_x16_generic, block_q2_K, block_q2_Kx16, q2_Kx16_get, GL_X16_ROWS)
DEF_KX_UNPACK(gl_unpack_q3_K_x8_generic, block_q3_K, block_q3_Kx8, q3_Kx8_get, GL_X8_ROWS)
DEF_KX_UNPACK(gl_unpack_q3_K_x16_generic, block_q3_K, block_q3_Kx16, q3_Kx16_get, GL_X16_ROWS)
DEF_KX_UNPACK(gl_unpack_iq4_xs_x8_generic, block_iq4_xs, block_iq4_xsx8, iq4_xsx8_get, GL_X8_ROWS)
DEF_KX_UNPACK(gl_unpack_iq4_xs_x16_generic, block_iq4_xs, block_iq4_xsx16, iq4_xsx16_get,
              GL_X16_ROWS)

#define DEF_KX_MATMUL(NAME, BLK, XBLK, GET, KDOT, ROWS)                                            \
    GL_DECL_MATMUL_FN(NAME)                                                                        \
    {                                                                                              \
        for (int row = r0; row < r1; row++) {                                                      \
            const XBLK *in =                                                                       \
                (const XBLK *)((const char *)w + (size_t)(row / (ROWS)) * w_row_bytes);            \
            for (int bcol = 0; bcol < nb; bcol++) {                                                \
                const block_q8_K *xb = (const block_q8_K *)((const char *)x + bcol * x_stride);    \
                float sum = 0.0f;                                                                  \
                for (int b = 0; b < n / QK_K; b++) {                                               \
                    BLK sb;                                                                        \
                    GET(&sb, &in[b], row % (ROWS));                                                \
                    sum = KDOT(sum, &sb, &xb[b]);                                                  \
                }                                                                                  \
                y[bcol * y_stride + row] = sum;                                                    \
            }                                                                                      \
        }                                                                                          \
    }

DEF_KX_MATMUL(gl_matmul_q4_K_x8_generic, block_q4_K, block_q4_Kx8, q4_Kx8_get, gl_kdot_q4_K_generic,
              GL_X8_ROWS)
DEF_KX_MATMUL(gl_matmul_q6_K_x8_generic, block_q6_K, block_q6_Kx8, q6_Kx8_get, gl_kdot_q6_K_generic,
              GL_X8_ROWS)
DEF_KX_MATMUL(gl_matmul_q4_K_x16_generic, block_q4_K, block_q4_Kx16, q4_Kx16_get,
              gl_kdot_q4_K_generic, GL_X16_ROWS)
DEF_KX_MATMUL(gl_matmul_q6_K_x16_generic, block_q6_K, block_q6_Kx16, q6_Kx16_get,
              gl_kdot_q6_K_generic, GL_X16_ROWS)
DEF_KX_MATMUL(gl_matmul_q5_K_x8_generic, block_q5_K, block_q5_Kx8, q5_Kx8_get, gl_kdot_q5_K_generic,
              GL_X8_ROWS)
DEF_KX_MATMUL(gl_matmul_q5_K_x16_generic, block_q5_K, block_q5_Kx16, q5_Kx16_get,
              gl_kdot_q5_K_generic, GL_X16_ROWS)
DEF_KX_MATMUL(gl_matmul_iq4_xs_x8_generic, block_iq4_xs, block_iq4_xsx8, iq4_xsx8_get,
              gl_kdot_iq4_xs_generic, GL_X8_ROWS)
DEF_KX_MATMUL(gl_matmul_iq4_xs_x16_generic, block_iq4_xs, block_iq4_xsx16, iq4_xsx16_get,
              gl_kdot_iq4_xs_generic, GL_X16_ROWS)
DEF_KX_MATMUL(gl_matmul_q2_K_x8_generic, block_q2_K, block_q2_Kx8, q2_Kx8_get, gl_kdot_q2_K_generic,
              GL_X8_ROWS)
DEF_KX_MATMUL(gl_matmul_q2_K_x16_generic, block_q2_K, block_q2_Kx16, q2_Kx16_get,
              gl_kdot_q2_K_generic, GL_X16_ROWS)
DEF_KX_MATMUL(gl_matmul_q3_K_x8_generic, block_q3_K, block_q3_Kx8, q3_Kx8_get, gl_kdot_q3_K_generic,
              GL_X8_ROWS)
DEF_KX_MATMUL(gl_matmul_q3_K_x16_generic, block_q3_K, block_q3_Kx16, q3_Kx16_get,
              gl_kdot_q3_K_generic, GL_X16_ROWS)
