/* Template: plain-row K-quant products (Q4_K / Q5_K / Q6_K weights x Q8_K
 * activations), included once per (weight type, ISA) with these macros:
 *   KT_NAME            name of the generated GL_DECL_MATMUL_FN
 *   KT_WBLK            weight super-block type
 *   KT_WPREP_T         one row's super-block, unpacked for KT_DOT / KT_MINS
 *   KT_WPREP(p, blk)   unpack super-block *blk into *p
 *   KT_DOT(p, xb)      8 int32 lanes whose sum is the super-block's isum
 *                      (src/kernels.h: sum_j scale_j * isum_j, exact)
 *   KT_MINS(p, xb)     (with KT_HAS_MIN 1) 8 int32 lanes summing to imin
 *   KT_DOFF            byte offset of a 32-bit word of the block holding d
 *                      (and dmin): d in its low half when KT_HAS_MIN (the
 *                      word is d | dmin << 16), else in its high half
 *
 * Exactness: isum and imin are exact integers whatever the lane grouping;
 * lanes then run over 8 ROWS, and each lane performs generic's float
 * sequence (arch/generic/kquants.c, kblock_dot):
 *     sum = sum + ((float)isum * (dx * dw) - (float)imin * (dx * dmin))
 * or, without mins (Q6_K), sum = sum + (float)isum * (dx * dw). For Q4_K /
 * Q5_K generic takes the short form when dmin == 0 and imin == 0; the long
 * form gives the same value then (isum * (dx * dw) - (+-0)), and a row sum
 * is never -0 (it starts at +0), so the final floats are identical.
 * Separate multiplies and adds (-ffp-contract=off). Results are therefore
 * bit-identical to generic for every r0 / r1 and nb. A row's super-block
 * is unpacked once and used for up to KT_MAXC activation columns. */

#include "arch/row_tiles.h"
#define KT_MAXC GL_TILE_MAXC
#ifndef KT_HAS_MIN
#define KT_HAS_MIN 0
#endif

#define KT_CAT2(a, b) a##b
#define KT_CAT(a, b)  KT_CAT2(a, b)
#define KT_TILE       KT_CAT(KT_NAME, _tile)

GL_ALWAYS_INLINE void KT_TILE(const char *w, size_t wrb, const block_q8_K *const *xs,
                              float *const *ys, int nsb, int m, const int nc)
{
    const KT_WBLK *wr[8];
    int off[8];
    for (int k = 0; k < 8; k++) {
        const int kk = k < m ? k : m - 1; /* rows past the range repeat the last one */
        wr[k] = (const KT_WBLK *)(w + (size_t)kk * wrb);
        off[k] = (int)((size_t)kk * wrb);
    }
    const __m256i vidx = _mm256_loadu_si256((const __m256i *)off);
    __m256 acc[KT_MAXC];
    for (int c = 0; c < nc; c++)
        acc[c] = _mm256_setzero_ps();

    for (int i = 0; i < nsb; i++) {
        __m256i s[KT_MAXC][8];
#if KT_HAS_MIN
        __m256i mn[KT_MAXC][8];
#endif
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            KT_WPREP_T wp;
            KT_WPREP(&wp, wr[k] + i);
#pragma GCC unroll 4
            for (int c = 0; c < nc; c++) {
                s[c][k] = KT_DOT(&wp, xs[c] + i);
#if KT_HAS_MIN
                mn[c][k] = KT_MINS(&wp, xs[c] + i);
#endif
            }
        }
        /* the 8 rows' d (and dmin): one 32-bit word of each block */
        const __m256i g = _mm256_i32gather_epi32(
            (const int *)(const void *)((const char *)(wr[0] + i) + KT_DOFF), vidx, 1);
#if KT_HAS_MIN
        const __m256i lo16 = _mm256_set1_epi32(0xffff);
        const __m256i gd = _mm256_and_si256(g, lo16), gm = _mm256_srli_epi32(g, 16);
        const __m256 dw = _mm256_cvtph_ps(
            _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(gd, gd), 0x08)));
        const __m256 dmin = _mm256_cvtph_ps(
            _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(gm, gm), 0x08)));
#else
        const __m256i gd = _mm256_srli_epi32(g, 16);
        const __m256 dw = _mm256_cvtph_ps(
            _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(gd, gd), 0x08)));
#endif
#pragma GCC unroll 4
        for (int c = 0; c < nc; c++) {
            const __m256i isum = gl_reduce8_epi32(s[c][0], s[c][1], s[c][2], s[c][3], s[c][4],
                                                  s[c][5], s[c][6], s[c][7]);
            const __m256 dx = _mm256_set1_ps(xs[c][i].d);
#if KT_HAS_MIN
            const __m256i imin = gl_reduce8_epi32(mn[c][0], mn[c][1], mn[c][2], mn[c][3], mn[c][4],
                                                  mn[c][5], mn[c][6], mn[c][7]);
            acc[c] = _mm256_add_ps(
                acc[c],
                _mm256_sub_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dx, dw)),
                              _mm256_mul_ps(_mm256_cvtepi32_ps(imin), _mm256_mul_ps(dx, dmin))));
#else
            acc[c] = _mm256_add_ps(acc[c],
                                   _mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dx, dw)));
#endif
        }
    }
    for (int c = 0; c < nc; c++)
        x8_store_rows(ys[c], acc[c], m);
}

GL_DECL_MATMUL_FN(KT_NAME)
{
    const int nsb = n / QK_K;
    GL_ROW_TILES(KT_TILE, block_q8_K, 8, KT_MAXC, nsb)
}

#undef KT_TILE
#undef KT_NAME
#undef KT_WBLK
#undef KT_WPREP_T
#undef KT_WPREP
#undef KT_DOT
#undef KT_MINS
#undef KT_HAS_MIN
#undef KT_DOFF
