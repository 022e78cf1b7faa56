/* Template: the integer sums of the x16 layouts whose super-block is 16
 * sub-blocks of 16 (Q2_K, Q3_K, Q6_K; src/quant.h), one zmm lane per row,
 * in the two forms kx8_tmpl.h takes: KS_ISUMS (nc columns, the tile path,
 * with its stream's prefetches tpf: kx8_tmpl.h KX_TILE_TPF) and KS_ISUMS1
 * (one column, decode, with the stream's prefetches).
 * Included once per type, with:
 *   KS_ISUMS, KS_ISUMS1  names of the two generated functions
 *   KS_WBLK              the layout's block type
 *   KS_KSTEP             16-byte units per KS_UNITS call: 1 or 2
 *   KS_UNITS(blk, h, k, u, pin)
 *                        u[4 i + s], i < KS_KSTEP, s < 4: the unsigned
 *                        quants of unit k + i (k < 8) of half h of sub-block
 *                        8 h + 2 s + (k + i) / 4, one 4-byte group per lane;
 *                        pin: the tile paths' loads (simd.h
 *                        gl512_loadu_unit)
 *   KS_START(xp, j)      sub-block j's chain start (the quants' offset
 *                        times the activation's sum, exactly; or zero)
 *   KS_PREP(blk, xp, sc, imin, nc)
 *                        once per super-block: the scales' state in sc (a
 *                        kx16_sc4), and with mins their sums into imin[c]
 *   KS_SCALE2(blk, sc, ja, jb)
 *                        where every finished chain lies inside int16:
 *                        sub-blocks ja's and jb's scales as the low and
 *                        high int16 of each lane (ja / 4 == jb / 4); two
 *                        chains then meet their scales in one vpdpwssd
 *                        (kx16_pack16)
 *   KS_SCALE(blk, sc, j) otherwise: sub-block j's scales as int32 lanes,
 *                        one vpmulld and add a chain
 *   KS_PF_UNIT(h, k), KS_PF_UBYTES, KS_PF_HEAD
 *                        (optional; with kx8_tmpl.h's KX_PF_BLOCKS) the
 *                        byte offset in the block of what KS_UNITS(blk, h,
 *                        k) reads, its bytes (a multiple of 64), and the
 *                        bytes before the first unit (scales): decode then
 *                        asks for each line at the step that reads it
 *   KS_UNPACK, KS_ISUMS_U
 *                        (optional) names of the unpacked tile path's two
 *                        functions: KS_UNPACK(blk, ub) writes the units,
 *                        KS_ISUMS_U(blk, ub, ...) is KS_ISUMS reading them
 * Sub-block j's sum is one vpdpbusd chain from KS_START over its four
 * units, times its scale with one vpmulld: exact (each type's bounds are
 * at its hooks), the same integers as generic's. */

#define KS_CAT2(a, b) a##b
#define KS_CAT(a, b)  KS_CAT2(a, b)

/* Tile path: the chains of one half (four sub-blocks) for nc columns at a
 * time, so a tile's accumulators stay in registers; the units unpacked
 * here, or (ub) loaded from where KS_UNPACK wrote them. Up to KS_MAX_C
 * columns: past four (the unpacked path's tiles, kx8_tmpl.h KX_CU) a half
 * goes in two passes of two sub-blocks, 2 nc chains in registers, so each
 * unit loaded from ub serves twice the columns. */
#define KS_MAX_C 8
GL_ALWAYS_INLINE void KS_CAT(KS_ISUMS, _at)(const KS_WBLK *blk, const uint8_t *ub,
                                            const int8_t *const *xq, const kx_xprep *const *xp,
                                            __m512i *isum, __m512i *imin, const int nc,
                                            const kx_tpf *tpf)
{
    const int8_t *xo[KS_MAX_C];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        xo[c] = gl_opaque_ptr(xq[c]);
    kx16_sc4 sc;
    KS_PREP(blk, xp, &sc, imin, nc);
    const int sp = nc > 4 ? 2 : 4; /* sub-blocks a pass */
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 2
            for (int s0 = 0; s0 < 4; s0 += sp) {
                __m512i acc[KS_MAX_C][4];
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
                    for (int s = s0; s < s0 + sp; s++)
                        acc[c][s] = KS_START(xp[c], 8 * h + 2 * s + half);
#pragma GCC unroll 4
                for (int kk = 0; kk < 4; kk += KS_KSTEP) {
                    const int k = 4 * half + kk;
                    /* step of the block's 4 (h, half) x 4 / sp passes x
                     * 4 / KS_KSTEP unit steps */
                    const int step =
                        ((2 * h + half) * (4 / sp) + s0 / sp) * (4 / KS_KSTEP) + kk / KS_KSTEP;
                    kx_tpf_part(tpf, step, 16 / sp * (4 / KS_KSTEP), sizeof(KS_WBLK));
                    __m512i u[4 * KS_KSTEP];
                    if (ub) {
#pragma GCC unroll 2
                        for (int i = 0; i < KS_KSTEP; i++)
#pragma GCC unroll 4
                            for (int s = s0; s < s0 + sp; s++)
                                u[4 * i + s] =
                                    gl512_load_pinned(ub + 64 * (4 * (8 * h + k) + 4 * i + s));
                    } else {
                        KS_UNITS(blk, h, k, u, 1);
                    }
#pragma GCC unroll 8
                    for (int c = 0; c < nc; c++)
#pragma GCC unroll 2
                        for (int i = 0; i < KS_KSTEP; i++)
#pragma GCC unroll 4
                            for (int s = s0; s < s0 + sp; s++)
                                acc[c][s] =
                                    gl512_dpbusd_bcast(acc[c][s], u[4 * i + s],
                                                       xo[c] + 128 * h + 32 * s + 4 * (k + i));
                }
#ifdef KS_SCALE2
#pragma GCC unroll 2
                for (int s = s0; s < s0 + sp; s += 2) {
                    const int j = 8 * h + 2 * s + half;
                    const __m512i sc2 = KS_SCALE2(blk, &sc, j, j + 2);
#pragma GCC unroll 8
                    for (int c = 0; c < nc; c++)
                        isum[c] = _mm512_dpwssd_epi32(isum[c],
                                                      kx16_pack16(acc[c][s], acc[c][s + 1]), sc2);
                }
#else
#pragma GCC unroll 4
                for (int s = s0; s < s0 + sp; s++) {
                    const __m512i scj = KS_SCALE(blk, &sc, 8 * h + 2 * s + half);
#pragma GCC unroll 8
                    for (int c = 0; c < nc; c++)
                        isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c][s], scj));
                }
#endif
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
                    isum[c] = gl512_settled(isum[c]);
            }
}

GL_ALWAYS_INLINE void KS_ISUMS(const KS_WBLK *blk, const int8_t *const *xq,
                               const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                               const int nc, const kx_tpf *tpf)
{
    KS_CAT(KS_ISUMS, _at)(blk, NULL, xq, xp, isum, imin, nc, tpf);
}

#ifdef KS_UNPACK
/* The tile path over many columns (prefill): a super-block's units once
 * into ub (4 KiB: unit k of half h of sub-block 8 h + 2 s + k / 4 at
 * 64 (4 (8 h + k) + s)), which every column tile then reads with one load
 * a unit instead of unpacking it again (kx8_tmpl.h KX_UNPACK) */
GL_ALWAYS_INLINE void KS_UNPACK(const KS_WBLK *blk, uint8_t *ub)
{
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 8
        for (int k = 0; k < 8; k += KS_KSTEP) {
            __m512i u[4 * KS_KSTEP];
            KS_UNITS(blk, h, k, u, 1);
#pragma GCC unroll 8
            for (int i = 0; i < 4 * KS_KSTEP; i++)
                _mm512_store_si512((void *)(ub + 64 * (4 * (8 * h + k) + i)), u[i]);
        }
}

GL_ALWAYS_INLINE void KS_ISUMS_U(const KS_WBLK *blk, const uint8_t *ub, const int8_t *const *xq,
                                 const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                                 const int nc)
{
    KS_CAT(KS_ISUMS, _at)(blk, ub, xq, xp, isum, imin, nc, NULL);
}
#endif

/* Decode: the units in address order (k = 0..7 of each h), each step
 * asking for its own lines in the blocks whole blocks ahead with
 * KS_PF_UNIT, else for a slice of the block's lines (kx8.h kx_pf_part);
 * the core overlaps the two halves' chains by itself. Against reading
 * k = 0, 4, 1, 5, ... (both halves a step): bench/ab_builds.sh from DRAM,
 * Zen 5, 20 rounds, 1 / 2 threads: Q6_Kx16 1.03 / 1.04, Q3_Kx16 and
 * Q2_Kx16, bound by arithmetic, 0.93-1.01 / 1.00-1.01 (the same in cache).
 * Per-step lines beat slices for Q3_Kx16 (1.09-1.19x) and Q2_Kx16
 * (1.02-1.05x) when each step jumped, and for Q3_Kx16 still in address
 * order (slices 0.96 / 0.93); Q6_Kx16 keeps the slices (per-step lines
 * 0.94 / 1.02). */
GL_ALWAYS_INLINE void KS_ISUMS1(const KS_WBLK *blk, const int8_t *xq, const kx_xprep *xp,
                                __m512i *isum, __m512i *imin, const kx_pf *pf)
{
    kx16_sc4 sc;
    KS_PREP(blk, &xp, &sc, imin, 1);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m512i acc[2][4];
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++)
                acc[half][s] = KS_START(xp, 8 * h + 2 * s + half);
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int kk = 0; kk < 4; kk += KS_KSTEP) {
                const int k = 4 * half + kk;
#ifdef KS_PF_UNIT
                /* the lines this step reads, in a block whole blocks ahead;
                 * the scales' lines one a step from the first */
                kx_pf_nth(pf, 0, KS_PF_HEAD, (8 * h + k) / KS_KSTEP);
                kx_pf_starts(pf, KS_PF_UNIT(h, k), KS_PF_UBYTES / 64);
#else
                kx_pf_part(pf, (8 * h + k) / KS_KSTEP, 16 / KS_KSTEP, sizeof *blk);
#endif
                __m512i u[4 * KS_KSTEP];
                KS_UNITS(blk, h, k, u, 0);
#pragma GCC unroll 2
                for (int i = 0; i < KS_KSTEP; i++)
#pragma GCC unroll 4
                    for (int s = 0; s < 4; s++)
                        acc[half][s] = gl512_dpbusd_bcast(acc[half][s], u[4 * i + s],
                                                          xq + 128 * h + 32 * s + 4 * (k + i));
            }
#ifdef KS_SCALE2
#pragma GCC unroll 4
        for (int s = 0; s < 4; s++)
            *isum = _mm512_dpwssd_epi32(*isum, kx16_pack16(acc[0][s], acc[1][s]),
                                        KS_SCALE2(blk, &sc, 8 * h + 2 * s, 8 * h + 2 * s + 1));
#else
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++)
                *isum = _mm512_add_epi32(
                    *isum,
                    _mm512_mullo_epi32(acc[half][s], KS_SCALE(blk, &sc, 8 * h + 2 * s + half)));
#endif
    }
}

#undef KS_ISUMS
#undef KS_MAX_C
#undef KS_CAT
#undef KS_CAT2
#undef KS_ISUMS1
#undef KS_UNPACK
#undef KS_ISUMS_U
#undef KS_WBLK
#undef KS_SCALE2
#undef KS_KSTEP
#undef KS_UNITS
#undef KS_START
#undef KS_PREP
#undef KS_SCALE
#undef KS_PF_UNIT
#undef KS_PF_HEAD
#undef KS_PF_UBYTES
