/* Template: the AVX2 integer sums of the x8 layouts whose super-block is
 * 16 sub-blocks of 16 and whose quants are re-encoded per unit (Q2_K,
 * Q3_K; src/quant.h), one ymm lane per row: the KX_ISUMS of kx8_tmpl.h,
 * decode's prefetches included when pf is given. Included once per type,
 * with:
 *   KS_ISUMS             name of the generated function
 *   KS_WBLK              the layout's block type
 *   KS_KSTEP             4-byte units per KS_UNITS call: 1 or 2
 *   KS_UNITS(blk, h, k, u)
 *                        u[4 i + s], i < KS_KSTEP, s < 4: the unsigned
 *                        quants (<= 7) of unit k + i (k < 8) of half h of
 *                        sub-block 8 h + 2 s + (k + i) / 4
 *   KS_PREP(blk, xp, st, imin, nc)
 *                        once per super-block: the scales into st->sc
 *                        (and anything KS_FINISH needs), with mins their
 *                        sums into imin[c]
 *   KS_SCALE(st, j)      sub-block j's scales as int16 pairs, for madd
 *   KS_FINISH(st, isum, nc)
 *                        the last step (the quants' offset), or nothing
 * A sub-block's four maddubs (pairs at most 2 * 7 * 128, four of them
 * 7168) add up in int16, then one madd with its scale widens to int32:
 * exact, the same integers as generic's. */

GL_ALWAYS_INLINE void KS_ISUMS(const KS_WBLK *blk, const int8_t *const *xq,
                               const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                               const int nc, const kx_pf *pf)
{
    kx8_s16 st;
    KS_PREP(blk, xp, &st, imin, nc);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++) {
            __m256i acc[KX_C][4];
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
                for (int s = 0; s < 4; s++)
                    acc[c][s] = _mm256_setzero_si256();
#pragma GCC unroll 4
            for (int kk = 0; kk < 4; kk += KS_KSTEP) {
                const int k = 4 * half + kk;
                if (pf)
                    kx_pf_part(pf, (8 * h + k) / KS_KSTEP, 16 / KS_KSTEP, sizeof *blk);
                __m256i u[4 * KS_KSTEP];
                KS_UNITS(blk, h, k, u);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
#pragma GCC unroll 2
                    for (int i = 0; i < KS_KSTEP; i++)
#pragma GCC unroll 4
                        for (int s = 0; s < 4; s++)
                            acc[c][s] = _mm256_add_epi16(
                                acc[c][s],
                                _mm256_maddubs_epi16(u[4 * i + s],
                                                     _mm256_set1_epi32(x8_load32(
                                                         xq[c] + 128 * h + 32 * s + 4 * (k + i)))));
            }
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++) {
                const __m256i scj = KS_SCALE(&st, 8 * h + 2 * s + half);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
                    isum[c] =
                        gl256_settled(_mm256_add_epi32(isum[c], _mm256_madd_epi16(acc[c][s], scj)));
            }
        }
    KS_FINISH(&st, isum, nc);
}

#undef KS_ISUMS
#undef KS_WBLK
#undef KS_KSTEP
#undef KS_UNITS
#undef KS_PREP
#undef KS_SCALE
#undef KS_FINISH
