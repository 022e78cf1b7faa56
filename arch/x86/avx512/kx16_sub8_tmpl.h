/* Template: the integer sums of the x16 layouts whose super-block is 8
 * sub-blocks of 32 (src/quant.h: Q4_K, Q5_K, IQ4_XS), one zmm lane per row,
 * in the two forms kx8_tmpl.h takes: KP_ISUMS (nc columns, the tile path)
 * and KP_ISUMS1 (one column, decode, with the stream's prefetches).
 * Included once per type, with:
 *   KP_ISUMS, KP_ISUMS1  names of the two generated functions
 *   KP_WBLK              the layout's block type
 *   KP_PREP(blk, xp, sc, imin, nc)
 *                        the block's scales into sc[2] (and its mins into
 *                        imin, for the nc columns' activation sums xp)
 *   KP_START(xp, j)      where sub-block j's chain starts (an offset
 *                        correction, or zero)
 *   KP_UNITS(blk, i, k, lo, hi)
 *                        the unsigned quants of unit k (k < 8: elements
 *                        4 k .. 4 k + 3) of sub-blocks 2 i (lo) and 2 i + 1
 *                        (hi), one 4-byte group per lane
 *   KP_PAIR(sc, i, al, ah)
 *                        the pair's chains times their scales
 * Each sub-block's sum is one vpdpbusd chain over its eight units, then
 * one multiply by its scale. All exact, the same integers as generic's. */

/* Tile path: one pair of sub-blocks for nc columns at a time. */
GL_ALWAYS_INLINE void KP_ISUMS(const KP_WBLK *blk, const int8_t *const *xq,
                               const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                               const int nc)
{
    const int8_t *xo[KX_C];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        xo[c] = gl_opaque_ptr(xq[c]);
    __m512i sc[2];
    KP_PREP(blk, xp, sc, imin, nc);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        __m512i al[KX_C], ah[KX_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            al[c] = KP_START(xp[c], 2 * i);
            ah[c] = KP_START(xp[c], 2 * i + 1);
        }
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            __m512i lo, hi;
            KP_UNITS(blk, i, k, lo, hi);
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                al[c] = gl512_dpbusd_bcast(al[c], lo, xo[c] + 64 * i + 4 * k);
                ah[c] = gl512_dpbusd_bcast(ah[c], hi, xo[c] + 64 * i + 32 + 4 * k);
            }
        }
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] = _mm512_add_epi32(isum[c], KP_PAIR(sc, i, al[c], ah[c]));
    }
}

/* Decode: the eight sub-block chains side by side, so each vpdpbusd's
 * latency hides behind seven independent ones, and the stream's prefetches
 * in eight slices between the loads (kx8.h kx_pf_part). */
GL_ALWAYS_INLINE void KP_ISUMS1(const KP_WBLK *blk, const int8_t *xq, const kx_xprep *xp,
                                __m512i *isum, __m512i *imin, const kx_pf *pf)
{
    __m512i sc[2];
    KP_PREP(blk, &xp, sc, imin, 1);
    __m512i al[4], ah[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        al[i] = KP_START(xp, 2 * i);
        ah[i] = KP_START(xp, 2 * i + 1);
    }
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        kx_pf_part(pf, k, 8, sizeof *blk);
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            __m512i lo, hi;
            KP_UNITS(blk, i, k, lo, hi);
            al[i] = gl512_dpbusd_bcast(al[i], lo, xq + 64 * i + 4 * k);
            ah[i] = gl512_dpbusd_bcast(ah[i], hi, xq + 64 * i + 32 + 4 * k);
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        *isum = _mm512_add_epi32(*isum, KP_PAIR(sc, i, al[i], ah[i]));
}

#undef KP_ISUMS
#undef KP_ISUMS1
#undef KP_WBLK
#undef KP_PREP
#undef KP_START
#undef KP_UNITS
#undef KP_PAIR
