/* Template: the AVX-VNNI integer sums of the x8 layouts whose super-block
 * is 16 sub-blocks of 16 re-encoded per unit (Q2_K, Q3_K; src/quant.h):
 * arch/x86/avx2/kx8_sub16_tmpl.h's walk with each sub-block one vpdpbusd
 * chain in int32 lanes, then one multiply by its scale. Included once per
 * type, with:
 *   KS_ISUMS             name of the generated function
 *   KS_WBLK              the layout's block type
 *   KS_KSTEP             4-byte units per KS_UNITS call: 1 or 2
 *   KS_UNITS(blk, h, k, u)
 *                        u[4 i + s], i < KS_KSTEP, s < 4: the unsigned
 *                        quants (<= 7) of unit k + i (k < 8) of half h of
 *                        sub-block 8 h + 2 s + (k + i) / 4
 *   KS_PREP(blk, xp, sc, imin, nc)
 *                        once per super-block: the scale bytes into sc[4]
 *                        (byte b of sc[t]: sub-block 4 t + b), with mins
 *                        their sums into imin[c]
 *   KS_START(xp, j)      where sub-block j's chain starts (the quants'
 *                        offset times its activation sum, or zero)
 *   KS_SCALE2(sc, ja, jb)
 *                        sub-blocks ja's and jb's scales as the low and
 *                        high int16 of each row's lane (ja / 4 == jb / 4)
 * Chains sum at most 16 * 7 * 128 plus the start, and end inside int16
 * (each type's bounds at its hooks), so two of them share a lane's int16
 * halves (vn_pack16) and meet their scales in one madd: exact, the same
 * integers as generic's. */

GL_ALWAYS_INLINE void KS_ISUMS(const KS_WBLK *blk, const int8_t *const *xq,
                               const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                               const int nc, const kx_pf *pf)
{
    __m256i sc[4];
    KS_PREP(blk, xp, sc, imin, nc);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++) {
            __m256i acc[KX_C][4];
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
                for (int s = 0; s < 4; s++)
                    acc[c][s] = KS_START(xp[c], 8 * h + 2 * s + half);
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
                            acc[c][s] = gl_dpbusd256(acc[c][s], u[4 * i + s],
                                                     _mm256_set1_epi32(x8_load32(
                                                         xq[c] + 128 * h + 32 * s + 4 * (k + i))));
            }
#pragma GCC unroll 2
            for (int s = 0; s < 4; s += 2) {
                const int j = 8 * h + 2 * s + half;
                const __m256i sc2 = KS_SCALE2(sc, j, j + 2);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
                    isum[c] = gl256_settled(_mm256_add_epi32(
                        isum[c], _mm256_madd_epi16(vn_pack16(acc[c][s], acc[c][s + 1]), sc2)));
            }
        }
}

#undef KS_ISUMS
#undef KS_WBLK
#undef KS_KSTEP
#undef KS_UNITS
#undef KS_PREP
#undef KS_START
#undef KS_SCALE2
