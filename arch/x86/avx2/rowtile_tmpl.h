/* Template: plain-row products of the block types with their own
 * activation formats (Q4_1 / Q5_1 x Q8_1, Q5_0 / IQ4_NL x Q8_0, Q2_K /
 * Q3_K / IQ4_XS x Q8_K), included once per (weight type, ISA) with:
 *   RT_NAME          name of the generated GL_DECL_MATMUL_FN
 *   RT_WBLK          weight block type; RT_QK its element count (32 / 256)
 *   RT_XBLK          activation block type (block_q8_0 / _q8_1 / _q8_K)
 *   RT_ACT           RT_Q8_0, RT_Q8_1 or RT_Q8_K (the activation format)
 *   RT_DOFF          byte offset in the weight block of a 32-bit word
 *                    whose low half is d, or its high half with RT_DHI 1;
 *                    with RT_MIN 1 the high half is the min (m / dmin)
 *   RT_MIN           0, or 1 for weights with a min: Q8_1 activations
 *                    then add s * (m * dx); Q8_K ones subtract
 *                    imin * (dx * dmin) with imin from RT_ROW's pm lanes
 *   RT_ROW(wb, xb, p, pm, nc)  one row's weight block wb against the nc
 *                    columns' activation blocks xb[c]: p[c] = 8 int32
 *                    lanes whose sum is isum, pm[c] (RT_MIN with Q8_K)
 *                    lanes summing to imin (src/kernels.h)
 *   RT_XPREP_T, RT_XPREP(xp, xb)  optional: each column's activation
 *                    block prepared once per tile (xp = RT_XPREP_T *); then
 *                    RT_ROW receives the nc prepared blocks in place of xb
 *   RT_XCORR(xb)     optional: 8 equal lanes subtracted from every row's
 *                    isum of column block xb (offset corrections that
 *                    depend on the activations only)
 *
 * Exactness: as in qmatmul_tmpl.h. SIMD lanes run over 8 rows; each
 * row's block sums are exact integers in any lane grouping, and each
 * lane then takes exactly generic's float update (arch/generic/
 * legacy_quants.c, kquants.c: one update per block in block order,
 * separate multiplies and adds, -ffp-contract=off), so the results are
 * bit-identical to generic for every r0 / r1 and batch size. A row's
 * weight block is unpacked once and met by up to RT_MAXC columns. */

#ifndef RT_Q8_0
#define RT_Q8_0 0
#define RT_Q8_1 1
#define RT_Q8_K 2
#endif

#include "arch/row_tiles.h"
#define RT_MAXC GL_TILE_MAXC

#define RT_CAT2(a, b) a##b
#define RT_CAT(a, b)  RT_CAT2(a, b)
#define RT_TILE       RT_CAT(RT_NAME, _tile)

GL_ALWAYS_INLINE void RT_TILE(const char *w, size_t wrb, const RT_XBLK *const *xs, float *const *ys,
                              int nblk, int m, const int nc)
{
    const RT_WBLK *wr[8];
    int off[8];
    for (int k = 0; k < 8; k++) {
        const int kk = k < m ? k : m - 1; /* lanes past the range repeat the last row */
        wr[k] = (const RT_WBLK *)(w + (size_t)kk * wrb);
        off[k] = (int)((size_t)kk * wrb);
    }
    const __m256i vidx = _mm256_loadu_si256((const __m256i *)off);
    __m256 acc[RT_MAXC];
    for (int c = 0; c < nc; c++)
        acc[c] = _mm256_setzero_ps();

    for (int b = 0; b < nblk; b++) {
        const RT_XBLK *xb[RT_MAXC];
        for (int c = 0; c < nc; c++)
            xb[c] = xs[c] + b;
#ifdef RT_XPREP
        RT_XPREP_T xp[RT_MAXC];
        for (int c = 0; c < nc; c++)
            RT_XPREP(&xp[c], xb[c]);
#endif
        __m256i p[RT_MAXC][8];
#if RT_MIN && RT_ACT == RT_Q8_K
        __m256i pm[RT_MAXC][8];
#endif
        for (int k = 0; k < 8; k++) {
            __m256i pk[RT_MAXC], pmk[RT_MAXC];
            if (k < m) {
#ifdef RT_XPREP
                RT_ROW(wr[k] + b, xp, pk, pmk, nc);
#else
                RT_ROW(wr[k] + b, xb, pk, pmk, nc);
#endif
            } else {
                for (int c = 0; c < nc; c++)
                    pk[c] = pmk[c] = _mm256_setzero_si256();
            }
            for (int c = 0; c < nc; c++) {
                p[c][k] = pk[c];
#if RT_MIN && RT_ACT == RT_Q8_K
                pm[c][k] = pmk[c];
#endif
            }
            (void)pmk;
        }
        /* the 8 rows' d (and min): one 32-bit gather inside each block */
        const __m256i g = _mm256_i32gather_epi32(
            (const int *)(const void *)((const char *)(wr[0] + b) + RT_DOFF), vidx, 1);
        const __m256i perm = _mm256_setr_epi32(0, 1, 4, 5, 0, 1, 4, 5);
#if RT_DHI
        const __m256i gd = _mm256_srli_epi32(g, 16);
#else
        const __m256i gd = _mm256_and_si256(g, _mm256_set1_epi32(0xffff));
#endif
        const __m256 dw = _mm256_cvtph_ps(
            _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_packus_epi32(gd, gd), perm)));
#if RT_MIN
        const __m256i gm = _mm256_srli_epi32(g, 16);
        const __m256 mw = _mm256_cvtph_ps(
            _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_packus_epi32(gm, gm), perm)));
#endif
        for (int c = 0; c < nc; c++) {
            __m256i s = gl_reduce8_epi32(p[c][0], p[c][1], p[c][2], p[c][3], p[c][4], p[c][5],
                                         p[c][6], p[c][7]);
#ifdef RT_XCORR
            s = _mm256_sub_epi32(s, RT_XCORR(xb[c]));
#endif
            const __m256 fs = _mm256_cvtepi32_ps(s);
#if RT_ACT == RT_Q8_K
            const __m256 dx = _mm256_set1_ps(xb[c]->d);
#if RT_MIN
            const __m256i im = gl_reduce8_epi32(pm[c][0], pm[c][1], pm[c][2], pm[c][3], pm[c][4],
                                                pm[c][5], pm[c][6], pm[c][7]);
            /* generic: sum + isum * (dx * d) when dmin == 0 and imin == 0,
             * else sum + (isum * (dx * d) - imin * (dx * dmin)) */
            const __m256 a = _mm256_mul_ps(fs, _mm256_mul_ps(dx, dw));
            const __m256 r =
                _mm256_sub_ps(a, _mm256_mul_ps(_mm256_cvtepi32_ps(im), _mm256_mul_ps(dx, mw)));
            const __m256 plain =
                _mm256_and_ps(_mm256_cmp_ps(mw, _mm256_setzero_ps(), _CMP_EQ_OQ),
                              _mm256_castsi256_ps(_mm256_cmpeq_epi32(im, _mm256_setzero_si256())));
            acc[c] = _mm256_add_ps(acc[c], _mm256_blendv_ps(r, a, plain));
#else
            acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(fs, _mm256_mul_ps(dx, dw)));
#endif
#else /* Q8_0 / Q8_1: half dx */
            const __m256 dx = _mm256_set1_ps(gl_h2f(xb[c]->d));
#if RT_MIN
            const __m256 a = _mm256_mul_ps(fs, _mm256_mul_ps(dw, dx));
            const __m256 bm = _mm256_mul_ps(_mm256_set1_ps((float)xb[c]->s), _mm256_mul_ps(mw, dx));
            acc[c] = _mm256_add_ps(acc[c], _mm256_add_ps(a, bm));
#else
            acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(fs, _mm256_mul_ps(dw, dx)));
#endif
#endif
        }
    }
    for (int c = 0; c < nc; c++)
        x8_store_rows(ys[c], acc[c], m);
}

GL_DECL_MATMUL_FN(RT_NAME)
{
    const int nblk = n / RT_QK;
    GL_ROW_TILES(RT_TILE, RT_XBLK, 8, RT_MAXC, nblk)
}

#undef RT_TILE
#undef RT_NAME
#undef RT_WBLK
#undef RT_QK
#undef RT_XBLK
#undef RT_ACT
#undef RT_DOFF
#undef RT_DHI
#undef RT_MIN
#undef RT_ROW
#undef RT_XCORR
#undef RT_XPREP_T
#undef RT_XPREP
