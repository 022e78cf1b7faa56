/* Template: 32-element block weights (Q8_0, Q4_0, Q5_0, IQ4_NL x Q8_0
 * activations; Q4_1, Q5_1 x Q8_1), included once per (weight type, ISA
 * level) with these macros defined:
 *   QT_NAME           name of the generated GL_DECL_MATMUL_FN
 *   QT_WBLK           weight block type (block_q8_0 / block_q4_0 / ...)
 *   QT_XBLK           activation block type (default block_q8_0)
 *   QT_MIN            optional, defined for weights with a min m at byte
 *                     offset 2 (Q4_1, Q5_1; activations block_q8_1): the
 *                     update becomes generic's
 *                     sum = sum + ((float)isum * (dw * dx) + (float)s * (mw * dx))
 *   QT_ISUM(wr, b, xs, nc, s)
 *                     for rows wr[0..3] and block b: s[c] (int32x4_t), lane
 *                     k = the exact integer dot of row k's block b with the
 *                     block b of activation column xs[c], for c < nc
 *                     (an always-inline function; nc is a constant)
 *
 * Determinism and exactness. The integer block sum isum_b is exact however
 * the ISA groups its lanes (widening multiplies, sdot or smmla), so every
 * path computes, per output element, exactly the reference sequence of
 * arch/generic/matmul.c:
 *     sum = 0; for b: sum = sum + (float)isum_b * (dw_b * dx_b)
 * (separate multiply and add, no FMA; this folder builds with
 * -ffp-contract=off). The float lanes run over 4 *rows*, never over the
 * blocks of one row, so nothing is reassociated: results are bit-identical
 * to generic, hence independent of r0/r1, of nb and of the tile a row or
 * column lands in. Weight blocks are unpacked once per tile of 4 rows and
 * reused for up to QT_MAXC activation columns. */

#include "arch/row_tiles.h"
#define QT_MAXC GL_TILE_MAXC
#ifndef QT_XBLK
#define QT_XBLK block_q8_0
#endif

#define QT_CAT2(a, b) a##b
#define QT_CAT(a, b)  QT_CAT2(a, b)
#define QT_TILE       QT_CAT(QT_NAME, _tile)

GL_ALWAYS_INLINE void QT_TILE(const char *w, size_t wrb, const QT_XBLK *const *xs, float *const *ys,
                              int nblk, int m, const int nc)
{
    const QT_WBLK *wr[4];
    for (int k = 0; k < 4; k++) /* rows past the range repeat the last one */
        wr[k] = (const QT_WBLK *)(w + (size_t)(k < m ? k : m - 1) * wrb);
    float32x4_t acc[QT_MAXC];
    for (int c = 0; c < nc; c++)
        acc[c] = vdupq_n_f32(0.0f);

    for (int b = 0; b < nblk; b++) {
        int32x4_t s[QT_MAXC];
        QT_ISUM(wr, b, xs, nc, s);
        uint16_t dh[4];
        for (int k = 0; k < 4; k++)
            dh[k] = gl_blk_d(wr[k] + b);
        const float32x4_t dw = gl_h2f4(vld1_u16(dh));
#ifdef QT_MIN
        uint16_t mh[4];
        for (int k = 0; k < 4; k++)
            mh[k] = gl_blk_d((const char *)(wr[k] + b) + 2);
        const float32x4_t mw = gl_h2f4(vld1_u16(mh));
#endif
        for (int c = 0; c < nc; c++) {
            const float32x4_t dx = gl_h2f4(vdup_n_u16(gl_blk_d(xs[c] + b)));
            const float32x4_t sc = vmulq_f32(dw, dx);
#ifdef QT_MIN
            int16_t sx;
            memcpy(&sx, (const char *)(xs[c] + b) + 2, 2);
            const float32x4_t ms = vmulq_f32(vdupq_n_f32((float)sx), vmulq_f32(mw, dx));
            acc[c] = vaddq_f32(acc[c], vaddq_f32(vmulq_f32(vcvtq_f32_s32(s[c]), sc), ms));
#else
            acc[c] = vaddq_f32(acc[c], vmulq_f32(vcvtq_f32_s32(s[c]), sc));
#endif
        }
    }
    for (int c = 0; c < nc; c++)
        n4_store_rows(ys[c], acc[c], m);
}

GL_DECL_MATMUL_FN(QT_NAME)
{
    const int nblk = n / QK8_0;
    GL_ROW_TILES(QT_TILE, QT_XBLK, 4, QT_MAXC, nblk)
}

#undef QT_TILE
#undef QT_NAME
#undef QT_WBLK
#undef QT_ISUM
#undef QT_XBLK
#undef QT_MIN
