/* Reference implementation of the row-interleaved x8 layouts (src/quant.h):
 * repack, unpack and the matrix products over them. The products compute,
 * per output element, exactly the sequence of arch/generic/matmul.c
 *     sum = 0; for b: sum = sum + (float)isum_b * (dw_b * dx_b)
 * so they are bit-equal to generic's plain-row kernels; every backend's
 * packed kernel is checked bit for bit against these. */
#include <string.h>

#include "arch/generic/generic.h"
#include "half.h"

/* ---- repack / unpack ----------------------------------------------------- */

/* byte j of row r's block -> index in the interleaved qs */
static inline int x8_index(int r, int j)
{
    return (j / 4) * (GL_X8_ROWS * 4) + r * 4 + (j % 4);
}

/* One generic body for both layouts: BLK source blocks of QS quant bytes
 * go, 4 bytes at a time, to the interleaved positions (x8_index). Written
 * with 4-byte copies so that loading a model stays fast (the loader runs
 * this on every thread over disjoint groups). */
#define DEF_REPACK(NAME, BLK, XBLK, QS)                                                            \
    GL_DECL_REPACK_FN(NAME)                                                                        \
    {                                                                                              \
        const int nblk = n / 32;                                                                   \
        XBLK *out = dst;                                                                           \
        for (int g = g0; g < g1; g++) {                                                            \
            const BLK *src[GL_X8_ROWS];                                                            \
            for (int r = 0; r < GL_X8_ROWS; r++) {                                                 \
                const int row = g * GL_X8_ROWS + r;                                                \
                src[r] = row < n_rows ? (const BLK *)((const char *)w + (size_t)row * w_row_bytes) \
                                      : NULL; /* padding: d = 0, quants 0 */                       \
            }                                                                                      \
            XBLK *o = out + (size_t)g * nblk;                                                      \
            for (int b = 0; b < nblk; b++, o++)                                                    \
                for (int r = 0; r < GL_X8_ROWS; r++) {                                             \
                    if (!src[r]) {                                                                 \
                        o->d[r] = 0;                                                               \
                        for (int k = 0; k < (QS) / 4; k++)                                         \
                            memset(&o->qs[x8_index(r, 4 * k)], 0, 4);                              \
                        continue;                                                                  \
                    }                                                                              \
                    const BLK *sb = src[r] + b;                                                    \
                    o->d[r] = sb->d;                                                               \
                    for (int k = 0; k < (QS) / 4; k++)                                             \
                        memcpy(&o->qs[x8_index(r, 4 * k)], &sb->qs[4 * k], 4);                     \
                }                                                                                  \
        }                                                                                          \
    }

DEF_REPACK(gl_repack_q4_0_x8_generic, block_q4_0, block_q4_0x8, QK4_0 / 2)
DEF_REPACK(gl_repack_q8_0_x8_generic, block_q8_0, block_q8_0x8, QK8_0)

GL_DECL_UNPACK_FN(gl_unpack_q4_0_x8_generic)
{
    const int nblk = n / QK4_0, g = r / GL_X8_ROWS, k = r % GL_X8_ROWS;
    const block_q4_0x8 *in = (const block_q4_0x8 *)((const char *)packed + (size_t)g * group_bytes);
    block_q4_0 *o = dst;
    for (int b = 0; b < nblk; b++) {
        o[b].d = in[b].d[k];
        for (int j = 0; j < QK4_0 / 2; j++)
            o[b].qs[j] = in[b].qs[x8_index(k, j)];
    }
}

GL_DECL_UNPACK_FN(gl_unpack_q8_0_x8_generic)
{
    const int nblk = n / QK8_0, g = r / GL_X8_ROWS, k = r % GL_X8_ROWS;
    const block_q8_0x8 *in = (const block_q8_0x8 *)((const char *)packed + (size_t)g * group_bytes);
    block_q8_0 *o = dst;
    for (int b = 0; b < nblk; b++) {
        o[b].d = in[b].d[k];
        for (int j = 0; j < QK8_0; j++)
            o[b].qs[j] = in[b].qs[x8_index(k, j)];
    }
}

/* ---- products -------------------------------------------------------------- */

/* Whole groups at a time, the 8 rows' integer sums side by side (the loop
 * nest follows the layout, so compilers vectorize it); rows [r0, r1) of
 * each group are stored. */
#define DEF_X8_MATMUL(NAME, XBLK, QS, DOT)                                                         \
    GL_DECL_MATMUL_FN(NAME)                                                                        \
    {                                                                                              \
        const int nblk = n / 32;                                                                   \
        for (int bcol = 0; bcol < nb; bcol++) {                                                    \
            const block_q8_0 *xb = (const block_q8_0 *)((const char *)x + bcol * x_stride);        \
            for (int g = r0 / GL_X8_ROWS; g * GL_X8_ROWS < r1; g++) {                              \
                const XBLK *wg = (const XBLK *)((const char *)w + (size_t)g * w_row_bytes);        \
                float sum[GL_X8_ROWS] = { 0 };                                                     \
                for (int b = 0; b < nblk; b++) {                                                   \
                    int isum[GL_X8_ROWS] = { 0 };                                                  \
                    for (int k = 0; k < (QS) / 4; k++)                                             \
                        for (int r = 0; r < GL_X8_ROWS; r++)                                       \
                            for (int j = 0; j < 4; j++)                                            \
                                isum[r] +=                                                         \
                                    DOT(wg[b].qs[x8_index(r, 4 * k + j)], xb[b].qs, 4 * k + j);    \
                    const float dx = gl_f16_to_f32(xb[b].d);                                       \
                    for (int r = 0; r < GL_X8_ROWS; r++)                                           \
                        sum[r] += (float)isum[r] * (gl_f16_to_f32(wg[b].d[r]) * dx);               \
                }                                                                                  \
                for (int r = 0; r < GL_X8_ROWS; r++) {                                             \
                    const int row = g * GL_X8_ROWS + r;                                            \
                    if (row >= r0 && row < r1)                                                     \
                        y[bcol * y_stride + row] = sum[r];                                         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* Q4_0: byte i holds element i (low nibble) and i + 16 (high), w = u - 8 */
#define DOT_Q4(q, xq, i) (((q)&0x0f) - 8) * (xq)[i] + (((q) >> 4) - 8) * (xq)[(i) + 16]
#define DOT_Q8(q, xq, i) (q) * (xq)[i]

DEF_X8_MATMUL(gl_matmul_q4_0_x8_generic, block_q4_0x8, QK4_0 / 2, DOT_Q4)
DEF_X8_MATMUL(gl_matmul_q8_0_x8_generic, block_q8_0x8, QK8_0, DOT_Q8)
