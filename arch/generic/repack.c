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
#define DEF_REPACK(NAME, BLK, XBLK, QS)                                                        \
    GL_DECL_REPACK_FN(NAME)                                                                    \
    {                                                                                          \
        const int nblk = n / 32;                                                               \
        XBLK *out = dst;                                                                       \
        for (int g = g0; g < g1; g++) {                                                        \
            const BLK *src[GL_X8_ROWS];                                                        \
            for (int r = 0; r < GL_X8_ROWS; r++) {                                             \
                const int row = g * GL_X8_ROWS + r;                                            \
                src[r] = row < n_rows                                                          \
                             ? (const BLK *)((const char *)w + (size_t)row * w_row_bytes)      \
                             : NULL; /* padding: d = 0, quants 0 */                            \
            }                                                                                  \
            XBLK *o = out + (size_t)g * nblk;                                                  \
            for (int b = 0; b < nblk; b++, o++)                                                \
                for (int r = 0; r < GL_X8_ROWS; r++) {                                         \
                    if (!src[r]) {                                                             \
                        o->d[r] = 0;                                                           \
                        for (int k = 0; k < (QS) / 4; k++)                                     \
                            memset(&o->qs[x8_index(r, 4 * k)], 0, 4);                          \
                        continue;                                                              \
                    }                                                                          \
                    const BLK *sb = src[r] + b;                                                \
                    o->d[r] = sb->d;                                                           \
                    for (int k = 0; k < (QS) / 4; k++)                                         \
                        memcpy(&o->qs[x8_index(r, 4 * k)], &sb->qs[4 * k], 4);                 \
                }                                                                              \
        }                                                                                      \
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

GL_DECL_MATMUL_FN(gl_matmul_q4_0_x8_generic)
{
    const int nblk = n / QK4_0;
    for (int bcol = 0; bcol < nb; bcol++) {
        const block_q8_0 *xb = (const block_q8_0 *)((const char *)x + bcol * x_stride);
        for (int r = r0; r < r1; r++) {
            const int k = r % GL_X8_ROWS;
            const block_q4_0x8 *wg =
                (const block_q4_0x8 *)((const char *)w + (size_t)(r / GL_X8_ROWS) * w_row_bytes);
            float sum = 0.0f;
            for (int b = 0; b < nblk; b++) {
                int isum = 0;
                for (int j = 0; j < QK4_0 / 2; j++) {
                    const uint8_t q = wg[b].qs[x8_index(k, j)];
                    isum += ((q & 0x0f) - 8) * xb[b].qs[j];
                    isum += ((q >> 4) - 8) * xb[b].qs[j + QK4_0 / 2];
                }
                sum += (float)isum * (gl_f16_to_f32(wg[b].d[k]) * gl_f16_to_f32(xb[b].d));
            }
            y[bcol * y_stride + r] = sum;
        }
    }
}

GL_DECL_MATMUL_FN(gl_matmul_q8_0_x8_generic)
{
    const int nblk = n / QK8_0;
    for (int bcol = 0; bcol < nb; bcol++) {
        const block_q8_0 *xb = (const block_q8_0 *)((const char *)x + bcol * x_stride);
        for (int r = r0; r < r1; r++) {
            const int k = r % GL_X8_ROWS;
            const block_q8_0x8 *wg =
                (const block_q8_0x8 *)((const char *)w + (size_t)(r / GL_X8_ROWS) * w_row_bytes);
            float sum = 0.0f;
            for (int b = 0; b < nblk; b++) {
                int isum = 0;
                for (int j = 0; j < QK8_0; j++)
                    isum += wg[b].qs[x8_index(k, j)] * xb[b].qs[j];
                sum += (float)isum * (gl_f16_to_f32(wg[b].d[k]) * gl_f16_to_f32(xb[b].d));
            }
            y[bcol * y_stride + r] = sum;
        }
    }
}
