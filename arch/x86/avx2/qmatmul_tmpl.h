/* Template: Q8_0 / Q4_0 weights x Q8_0 activations, included once per
 * (weight type, ISA) with these macros defined (see quant.c):
 *   QT_NAME          name of the generated GL_DECL_MATMUL_FN
 *   QT_WBLK          weight block type (block_q8_0 / block_q4_0)
 *   QT_WPREP_T       one row's block, unpacked for QT_DOT
 *   QT_WPREP(p, blk) unpack weight block *blk into *p
 *   QT_XPREP_T       one activation block, prepared for QT_DOT; has an
 *                    __m256i member `corr` when QT_XCORR is 1
 *   QT_XPREP(p, xb)  prepare activation block *xb into *p
 *   QT_DOT(wp, xp)   8 int32 lanes whose sum is the block's integer dot
 *                    (before corrections)
 *   QT_XCORR         1 if xp->corr (the same in all lanes) is subtracted
 *   QT_WCORR         0, or 1 with QT_WCORR_LANES(wp): 8 lanes summing to a
 *                    per-row value that is subtracted
 *
 * Determinism and exactness. The integer block sum isum_b is exact whatever
 * the lane grouping, so every path computes, per output element, exactly
 * the reference sequence of arch/generic/matmul.c:
 *     sum = 0; for b: sum = sum + (float)isum_b * (dw_b * dx_b)
 * (separate multiply and add, no FMA; this folder builds with
 * -ffp-contract=off). SIMD lanes run over 8 *rows*, never over the blocks
 * of one row, so no float reassociation happens. Results are bit-identical
 * to generic, hence independent of r0/r1, of the batch size nb and of the
 * tile a row or column lands in. Weight blocks are unpacked once per tile
 * of 8 rows and reused for up to QT_MAXC activation columns. */

#include "arch/row_tiles.h"
#define QT_MAXC GL_TILE_MAXC

#define QT_CAT2(a, b) a##b
#define QT_CAT(a, b)  QT_CAT2(a, b)
#define QT_TILE       QT_CAT(QT_NAME, _tile)

GL_ALWAYS_INLINE void QT_TILE(const char *w, size_t wrb, const block_q8_0 *const *xs,
                              float *const *ys, int nblk, int m, const int nc)
{
    const QT_WBLK *wr[8];
    int off[8];
    for (int k = 0; k < 8; k++) {
        const int kk = k < m ? k : m - 1; /* rows past the range repeat the last one */
        wr[k] = (const QT_WBLK *)(w + (size_t)kk * wrb);
        off[k] = (int)((size_t)kk * wrb);
    }
    const __m256i vidx = _mm256_loadu_si256((const __m256i *)off);
    const __m256i lo16 = _mm256_set1_epi32(0xffff);
    __m256 acc[QT_MAXC];
    for (int c = 0; c < nc; c++)
        acc[c] = _mm256_setzero_ps();

    for (int b = 0; b < nblk; b++) {
        QT_WPREP_T wp[8];
        for (int k = 0; k < 8; k++)
            QT_WPREP(&wp[k], wr[k] + b);
        /* the 8 rows' d: 32-bit gather at each block start (d + 2 quant
         * bytes, inside the block), low halves packed, F16C to float */
        __m256i g = _mm256_i32gather_epi32((const int *)(const void *)(wr[0] + b), vidx, 1);
        g = _mm256_and_si256(g, lo16);
        g = _mm256_permute4x64_epi64(_mm256_packus_epi32(g, g), 0x08);
        const __m256 dw = _mm256_cvtph_ps(_mm256_castsi256_si128(g));
#if QT_WCORR
        const __m256i wc =
            gl_reduce8_epi32(QT_WCORR_LANES(&wp[0]), QT_WCORR_LANES(&wp[1]), QT_WCORR_LANES(&wp[2]),
                             QT_WCORR_LANES(&wp[3]), QT_WCORR_LANES(&wp[4]), QT_WCORR_LANES(&wp[5]),
                             QT_WCORR_LANES(&wp[6]), QT_WCORR_LANES(&wp[7]));
#endif
        for (int c = 0; c < nc; c++) {
            const block_q8_0 *xb = xs[c] + b;
            QT_XPREP_T xp;
            QT_XPREP(&xp, xb);
            __m256i s = gl_reduce8_epi32(
                QT_DOT(&wp[0], &xp), QT_DOT(&wp[1], &xp), QT_DOT(&wp[2], &xp), QT_DOT(&wp[3], &xp),
                QT_DOT(&wp[4], &xp), QT_DOT(&wp[5], &xp), QT_DOT(&wp[6], &xp), QT_DOT(&wp[7], &xp));
#if QT_WCORR
            s = _mm256_sub_epi32(s, wc);
#endif
#if QT_XCORR
            s = _mm256_sub_epi32(s, xp.corr);
#endif
            const __m256 sc = _mm256_mul_ps(dw, _mm256_set1_ps(gl_h2f(xb->d)));
            acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(_mm256_cvtepi32_ps(s), sc));
        }
    }
    for (int c = 0; c < nc; c++)
        x8_store_rows(ys[c], acc[c], m);
}

GL_DECL_MATMUL_FN(QT_NAME)
{
    const int nblk = n / QK8_0;
    GL_ROW_TILES(QT_TILE, block_q8_0, 8, QT_MAXC, nblk)
}

#undef QT_TILE
#undef QT_NAME
#undef QT_WBLK
#undef QT_WPREP_T
#undef QT_WPREP
#undef QT_XPREP_T
#undef QT_XPREP
#undef QT_DOT
#undef QT_XCORR
#undef QT_WCORR
#undef QT_WCORR_LANES
