/* Template: the integer sums of the x16 layouts whose super-block is 8
 * sub-blocks of 32 (src/quant.h: Q4_K, Q5_K, IQ4_XS), one zmm lane per row,
 * in the two forms kx8_tmpl.h takes: KP_ISUMS (nc columns, the tile path,
 * with its stream's prefetches tpf: kx8_tmpl.h KX_TILE_TPF) and KP_ISUMS1
 * (one column, decode, with the stream's prefetches).
 * Included once per type, with:
 *   KP_ISUMS, KP_ISUMS1  names of the two generated functions
 *   KP_WBLK              the layout's block type
 *   KP_PREP(blk, xp, sc, imin, nc)
 *                        the block's scales into sc[2] (and its mins into
 *                        imin, for the nc columns' activation sums xp)
 *   KP_START(xp, j)      where sub-block j's chain starts (an offset
 *                        correction, or zero)
 *   KP_UNITS(blk, i, k, lo, hi, pin)
 *                        the unsigned quants of unit k (k < 8: elements
 *                        4 k .. 4 k + 3) of sub-blocks 2 i (lo) and 2 i + 1
 *                        (hi), one 4-byte group per lane; pin: the tile
 *                        path's loads (simd.h gl512_loadu_unit)
 *   KP_PAIR(sc, i, al, ah)
 *                        the pair's chains times their scales
 *   KP_PF_UNIT(i, k), KP_PF_HEAD, KP_PF_QH
 *                        (with kx8_tmpl.h's KX_PF_BLOCKS; KP_PF_QH
 *                        optional) the byte offset in the block of unit k
 *                        of pair i's line, the bytes before the first unit
 *                        (scales), and where 64-byte lines of which step k
 *                        reads line k start (Q5_K's qh): decode asks for
 *                        each line at the step that reads it
 * Each sub-block's sum is one vpdpbusd chain over its eight units, then
 * one multiply by its scale. All exact, the same integers as generic's. */

/* Tile path: one pair of sub-blocks for nc columns at a time. */
GL_ALWAYS_INLINE void KP_ISUMS(const KP_WBLK *blk, const int8_t *const *xq,
                               const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                               const int nc, const kx_tpf *tpf)
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
            kx_tpf_part(tpf, 8 * i + k, 32, sizeof(KP_WBLK));
            __m512i lo, hi;
            KP_UNITS(blk, i, k, lo, hi, 1);
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                al[c] = gl512_dpbusd_bcast(al[c], lo, xo[c] + 64 * i + 4 * k);
                ah[c] = gl512_dpbusd_bcast(ah[c], hi, xo[c] + 64 * i + 32 + 4 * k);
            }
        }
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] = gl512_settled(_mm512_add_epi32(isum[c], KP_PAIR(sc, i, al[c], ah[c])));
    }
}

/* Decode: the block's lines in address order (pair i's units k = 0..7,
 * then pair i + 1's), each step asking for the line it reads in the blocks
 * whole blocks ahead (the scales' lines and Q5_K's qh with pair 0). The
 * eight chains need no interleaving by hand: pair i + 1's are independent
 * of pair i's and the core runs them side by side. Reading the four pairs'
 * unit k together instead (four lines 512 bytes apart a step) streamed
 * slower: bench/ab_builds.sh, 2048 x 5632 from DRAM, Zen 5, 20 rounds,
 * address order over it, 1 / 2 threads: Q4_Kx16 1.06-1.07 / 1.05,
 * Q5_Kx16 1.06 / 1.11, IQ4_XSx16 1.11 / 1.10; in cache Q4_Kx16 1.03. */
GL_ALWAYS_INLINE void KP_ISUMS1(const KP_WBLK *blk, const int8_t *xq, const kx_xprep *xp,
                                __m512i *isum, __m512i *imin, const kx_pf *pf)
{
    static_assert(sizeof(KP_WBLK) % 64 == 0, "KP_PF_UNIT: blocks of whole lines (kx_pf_line)");
    __m512i sc[2];
    KP_PREP(blk, &xp, sc, imin, 1);
    __m512i al[4], ah[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        al[i] = KP_START(xp, 2 * i);
        ah[i] = KP_START(xp, 2 * i + 1);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            if (i == 0 && (size_t)(64 * k) < KP_PF_HEAD)
                kx_pf_line(pf, 64 * k);
#ifdef KP_PF_QH
            if (i == 0)
                kx_pf_line(pf, KP_PF_QH + 64 * k);
#endif
            kx_pf_line(pf, KP_PF_UNIT(i, k));
            __m512i lo, hi;
            KP_UNITS(blk, i, k, lo, hi, 0);
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
#undef KP_PF_UNIT
#undef KP_PF_HEAD
#undef KP_PF_QH
