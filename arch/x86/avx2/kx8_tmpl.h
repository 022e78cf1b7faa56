/* Template: products over the K-quant row groups (src/quant.h: the x8
 * layouts of Q2_K .. Q6_K and IQ4_XS, and their x16 forms) x Q8_K
 * activations, one row per 32-bit lane of a ymm (x8) or zmm (x16)
 * register, included once per (layout, ISA) with these macros:
 *   KX_NAME        name of the generated GL_DECL_MATMUL_FN
 *   KX_WBLK        the layout's block type (block_q4_Kx8, block_q6_Kx16, ...)
 *   KX_ISUMS(blk, xq, xp, isum, imin, nc)
 *                  adds to the int32 lanes of isum[c] (lane r = row r) the
 *                  super-block's integer isum of src/kernels.h (scales
 *                  applied) against activation quants xq[c] (256 int8) with
 *                  prepared sums xp[c] (kx_xprep), c < nc; with KX_HAS_MIN,
 *                  imin[c] likewise
 *   KX_ISUMS_PF(blk, xq, xp, isum, imin, pf)
 *                  (optional) KX_ISUMS for one column (decode), which also
 *                  issues the stream's prefetches pf (kx8.h kx_pf_part)
 *                  spread between its loads
 *   KX_HAS_MIN     1: Q4_K / Q5_K form (dmin, imin), 0: Q6_K form
 *   KX_C           most activation columns per tile
 *   KX_ROWS        (optional) rows per group = lanes: 8 (default, ymm) or
 *                  16 with KV_* defined for zmm (the AVX-512 folder)
 *   KX_LINK        (optional) linkage of the _tuned table, e.g. static
 *   KX_UNPACK, KX_ISUMS_U, KX_UBYTES
 *                  (optional) a layout whose units cost much to unpack:
 *                  KX_UNPACK(blk, ub) writes a super-block's units to ub
 *                  (KX_UBYTES), KX_ISUMS_U(blk, ub, xq, xp, isum, imin, nc)
 *                  is KX_ISUMS reading them; wide batches then unpack each
 *                  super-block once for all their column tiles (_rows_u)
 *   KX_CU          (optional, default KX_C) most columns per tile of that
 *                  unpacked path, up to 8
 *   KX_PF_BLOCKS   (optional) 1: KX_ISUMS_PF asks for the lines it reads
 *                  itself, at the same offsets in a block whole blocks ahead
 *                  (the tune's distances rounded up to blocks), so pf points
 *                  at block starts (kx16_sub8_tmpl.h KP_PF_UNIT)
 *   KX_TILE_PF_KQ  (optional) 1: the tile path (prefill, batched decode)
 *                  prefetches its weight stream at the K-quant distances
 *                  (the tune's kx_far / kx_near) instead of the 32-element
 *                  layouts' (kx16_kv.h sets it for the 16-row layouts)
 *   KX_TILE_TPF    (optional, with KX_TILE_PF_KQ) KX_ISUMS takes a last
 *                  argument, a const kx_tpf * (kx8.h; NULL: none), and
 *                  issues the stream's prefetches between its steps; tiles
 *                  of three or more columns pass one (kx16_kv.h sets it)
 *
 * As x8_tmpl.h, it defines one kernel per decode tune, KX_NAME_<tune>, and
 * KX_NAME_tuned[GL_TUNE_COUNT]: the tune sets the prefetch distances and
 * hint (src/tune.h kx_far, kx_near), never a result.
 *
 * Exactness and determinism: isum / imin are exact integers; each lane then
 * runs generic's float step (arch/generic/kquants.c kblock_dot; see
 * kquant_tmpl.h for why the long form equals generic's short form when
 * dmin == 0 and imin == 0) over super-blocks in order, no FMA, so every
 * output is bit-identical to generic's for any r0 / r1 and nb. Loop order
 * as in x8_tmpl.h: chunk of KX_KB super-blocks (between chunks a row's sum
 * waits in y as a float: exact), panel of groups (~512 KB), column tile,
 * group; batches of at most KX_SB columns (_rows_s): chunk of KX_KB_S,
 * group, its column tiles; one column (decode): the tune's x8_streams
 * groups in lockstep (at most KX_NG), each a prefetched stream (or,
 * KX_HW_PF, left to the hardware prefetcher). */

#ifndef KX_KB
#define KX_KB 64
#endif
/* Decode prepares one column's whole row at once (212 bytes a super-block
 * on the stack): rows up to 32768 (Qwen2.5 7B's 18944-wide FFN down)
 * stream in lockstep; longer ones take the general path. */
#define KX_KB_DECODE 128
#ifndef KX_NG
#define KX_NG 4
#endif
/* KX_UNPACK's chunk (4 super-blocks: 16 KiB of units, in L1 with the
 * tiles' activations), column block, panel (8 groups: the y a panel's
 * chunks revisit stays in L2), and the batch it starts at: below 32
 * columns the stream is what counts, and the unpacking path streams worse
 * (TinyLlama Q6_K batch-8 decode, Zen 5, 1 thread: 97 against 123 tok/s);
 * at 32 they tie, and prefill gains (bench/RESULTS.md 2026-12-04, fifth
 * sitting) */
#ifndef KX_KU
#define KX_KU 4
#endif
#ifndef KX_CB
#define KX_CB 32
#endif
#ifndef KX_PG
#define KX_PG 8
#endif
#ifndef KX_UNPACK_MIN_NB
#define KX_UNPACK_MIN_NB 32
#endif
/* KX_ISUMS_PF's prefetch distances, the tune's kx_far / kx_near: the
 * default's 8 and 2 KiB are twice the x8 layouts' (util.h), a super-block
 * being 2-3.5 KiB; bench/matvec, 1 thread, AVX-512, cold 2048x5632 on
 * Sapphire Rapids: Q4_Kx16 17.2 -> 17.9, Q6_Kx16 15.9 -> 16.9 GB/s (mean
 * of two rows, three rounds interleaved); 12 and 16 KiB no better. */

#ifndef KX_CU
#define KX_CU KX_C
#endif
#if KX_CU > 8
#error "KX_CU: at most 8 columns a tile (the switch of _rows_u, kx16_sub16_tmpl.h KS_MAX_C)"
#endif
#define KX_CMAX (KX_CU > KX_C ? KX_CU : KX_C)
#ifndef KX_TILE_PF_KQ
#define KX_TILE_PF_KQ 0
#endif
#ifndef KX_PF_BLOCKS
#define KX_PF_BLOCKS 0
#endif
/* KX_HW_PF: 1 where decode may leave the stream to the hardware
 * prefetcher when the tune says so (src/tune.h hw_decode): the 16-row
 * AVX-512 kernels (kx16_kv.h). The 8-row ones, whose bodies run near
 * DRAM's pace, keep their prefetches: on a Zen 4 without them AVX2 Q6_Kx8
 * read 31-46 % of the probe against 77-81 % with them (one stream; Q4_Kx8
 * 76-84 % either way). */
#ifndef KX_HW_PF
#define KX_HW_PF 0
#endif
#ifndef KX_ROWS
#define KX_ROWS                         8
#define KV_PS                           __m256
#define KV_EPI32                        __m256i
#define KV_ZERO_PS()                    _mm256_setzero_ps()
#define KV_ZERO_EPI32()                 _mm256_setzero_si256()
#define KV_LOADU_PS(p)                  _mm256_loadu_ps(p)
#define KV_STOREU_PS(p, v)              _mm256_storeu_ps(p, v)
#define KV_LOAD_LANES_PS(p, lo, hi)     _mm256_maskload_ps(p, x8_lane_mask(lo, hi))
#define KV_STORE_LANES_PS(p, lo, hi, v) _mm256_maskstore_ps(p, x8_lane_mask(lo, hi), v)
#define KV_SET1_PS(v)                   _mm256_set1_ps(v)
#define KV_ADD_PS(a, b)                 _mm256_add_ps(a, b)
#define KV_SUB_PS(a, b)                 _mm256_sub_ps(a, b)
#define KV_MUL_PS(a, b)                 _mm256_mul_ps(a, b)
#define KV_CVTEPI32_PS(v)               _mm256_cvtepi32_ps(v)
#define KV_LOAD_D(d)                    _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(d)))
#endif

#define KX_CAT2(a, b) a##b
#define KX_CAT(a, b)  KX_CAT2(a, b)
#define KX_TILE       KX_CAT(KX_NAME, _tile)
#define KX_MULTI      KX_CAT(KX_NAME, _multi)
#define KX_IMPL       KX_CAT(KX_NAME, _impl)
#define KX_ROWS_G     KX_CAT(KX_NAME, _rows)
#define KX_ROWS_S     KX_CAT(KX_NAME, _rows_s)
#define KX_TUNED      KX_CAT(KX_NAME, _tuned)

/* the float step of one super-block for KX_ROWS rows (lane r = row r) */
GL_ALWAYS_INLINE KV_PS KX_CAT(KX_NAME, _step)(KV_PS acc, KV_EPI32 isum, KV_EPI32 imin,
                                              const KX_WBLK *blk, float dx)
{
    const KV_PS sx = KV_SET1_PS(dx);
    const KV_PS dw = KV_LOAD_D(blk->d);
#if KX_HAS_MIN
    const KV_PS dm = KV_LOAD_D(blk->dmin);
    return KV_ADD_PS(acc, KV_SUB_PS(KV_MUL_PS(KV_CVTEPI32_PS(isum), KV_MUL_PS(sx, dw)),
                                    KV_MUL_PS(KV_CVTEPI32_PS(imin), KV_MUL_PS(sx, dm))));
#else
    (void)imin;
    return KV_ADD_PS(acc, KV_MUL_PS(KV_CVTEPI32_PS(isum), KV_MUL_PS(sx, dw)));
#endif
}

/* kn super-blocks of one group for nc columns: activations xs[c], their
 * sums xp[c * xps + b]; the units unpacked in the body, or with KX_UNPACK
 * read from ub (KX_UBYTES a super-block) */
GL_ALWAYS_INLINE void KX_TILE(const KX_WBLK *wb, const uint8_t *ub, const block_q8_K *const *xs,
                              const kx_xprep *xp, const int xps, int kn, float *const *ys, int lo,
                              int hi, int first, int stream, const int tile_far, const int tune,
                              const int nc)
{
    (void)ub;
    const int full = lo == 0 && hi == KX_ROWS;
    KV_PS acc[KX_CMAX];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        acc[c] = first ? KV_ZERO_PS() : full ? KV_LOADU_PS(ys[c]) : KV_LOAD_LANES_PS(ys[c], lo, hi);
    for (int b = 0; b < kn; b++) {
        const KX_WBLK *blk = wb + b;
        /* the first column tile streams the weights (KX_TILE_PF_KQ: at
         * which distances; the tune's tile_far: far lines only) */
#ifdef KX_TILE_TPF
        /* KX_TILE_TPF: from three columns, whose bodies outlast the
         * stream, the block's lines are asked for in slices between the
         * body's steps (kx_tpf); a burst of them fills the miss buffers and
         * the body waits. Below, the stream is what counts, and one burst
         * a block keeps more lines in flight. */
        const int spread = nc >= 3;
        const kx_tpf tpf = { (const char *)blk + gl_tunes[tune].kx_far,
                             tile_far ? NULL : (const char *)blk + gl_tunes[tune].kx_near,
                             gl_tunes[tune].far_t0 };
#define KX_TPF_ARG , (spread && stream ? &tpf : NULL)
#else
        const int spread = 0;
#define KX_TPF_ARG
#endif
#if KX_TILE_PF_KQ
        if (stream && !spread && tile_far) {
            for (size_t l = 0; l < sizeof(KX_WBLK); l += 64)
                gl_prefetch_in_order((const char *)blk + gl_tunes[tune].kx_far + l,
                                     gl_tunes[tune].far_t0);
        } else if (stream && !spread) {
            const kx_pf pf = { (const char *)blk + gl_tunes[tune].kx_far,
                               (const char *)blk + gl_tunes[tune].kx_near, gl_tunes[tune].far_t0,
                               0 };
            kx_pf_part(&pf, 0, 1, sizeof(KX_WBLK));
        }
#else
        (void)spread;
        if (stream && tile_far) {
            for (size_t l = 0; l < sizeof(KX_WBLK); l += 64)
                gl_prefetch_far(tune, (const char *)blk + gl_tunes[tune].pf_far + l);
        } else if (stream) {
            gl_prefetch_streams(tune, (const char *)blk, 0, 1, 0, sizeof(KX_WBLK), SIZE_MAX, 0);
        }
#endif
        const int8_t *xq[KX_CMAX];
        const kx_xprep *xpp[KX_CMAX];
        KV_EPI32 isum[KX_CMAX], imin[KX_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            xq[c] = xs[c][b].qs;
            xpp[c] = &xp[c * xps + b];
            isum[c] = KV_ZERO_EPI32();
            imin[c] = KV_ZERO_EPI32();
        }
#ifdef KX_UNPACK
        if (ub)
            KX_ISUMS_U(blk, ub + (size_t)b * KX_UBYTES, xq, xpp, isum, imin, nc);
        else
#endif
            KX_ISUMS(blk, xq, xpp, isum, imin, nc KX_TPF_ARG);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            acc[c] = KX_CAT(KX_NAME, _step)(acc[c], isum[c], imin[c], blk, xpp[c]->dx);
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        if (full)
            KV_STOREU_PS(ys[c], acc[c]);
        else
            KV_STORE_LANES_PS(ys[c], lo, hi, acc[c]);
    }
}

GL_ALWAYS_INLINE void KX_MULTI(const char *w, size_t gb, const block_q8_K *xs, const kx_xprep *xp,
                               int kn, float *y, const int tune, const int ng)
{
    const size_t gbytes = (size_t)kn * sizeof(KX_WBLK);
    const size_t skip = (size_t)(ng - 1) * gb;
    KV_PS acc[KX_NG];
    for (int g = 0; g < ng; g++)
        acc[g] = KV_ZERO_PS();
    for (int b = 0; b < kn; b++) {
        const kx_xprep *xpp[1] = { &xp[b] };
        for (int g = 0; g < ng; g++) {
            /* opaque per group: else gcc hoists the body's activation
             * broadcasts out of the group loop and keeps them as full
             * vectors on the stack (simd.h gl512_dpbusd_bcast) */
            const int8_t *xq[1] = { gl_opaque_ptr(xs[b].qs) };
            const KX_WBLK *blk = (const KX_WBLK *)(w + (size_t)g * gb) + b;
            KV_EPI32 isum = KV_ZERO_EPI32(), imin = KV_ZERO_EPI32();
#ifdef KX_ISUMS_PF
            const size_t at = (size_t)b * sizeof(KX_WBLK);
#if KX_PF_BLOCKS
            /* whole blocks ahead: KX_ISUMS_PF asks for the lines it reads */
            const size_t bs = sizeof(KX_WBLK);
            const size_t far = (gl_tunes[tune].kx_far + bs - 1) / bs * bs;
            const size_t near = (gl_tunes[tune].kx_near + bs - 1) / bs * bs;
#else
            const size_t far = gl_tunes[tune].kx_far, near = gl_tunes[tune].kx_near;
#endif
            const kx_pf pf = { w + (size_t)g * gb + gl_pf_ahead(at, far, gbytes, skip),
                               w + (size_t)g * gb + gl_pf_ahead(at, near, gbytes, skip),
                               gl_tunes[tune].far_t0, KX_HW_PF && gl_tunes[tune].hw_decode };
            KX_ISUMS_PF(blk, xq[0], xpp[0], &isum, &imin, &pf);
#else
            /* prefetch a block's worth per stream, spread over the groups */
            if (!(KX_HW_PF && gl_tunes[tune].hw_decode))
                gl_prefetch_streams(tune, w + (size_t)g * gb, 0, 1, (size_t)b * sizeof(KX_WBLK),
                                    sizeof(KX_WBLK), gbytes, skip);
            KX_ISUMS(blk, xq, xpp, &isum, &imin, 1);
#endif
            acc[g] = KX_CAT(KX_NAME, _step)(acc[g], isum, imin, blk, xp[b].dx);
        }
    }
    for (int g = 0; g < ng; g++)
        KV_STOREU_PS(y + (size_t)g * KX_ROWS, acc[g]);
}

#ifndef KX_LINK
#define KX_LINK
#endif

/* The general path (prefill, batched decode, partial groups): one instance
 * for every tune, the tune an argument. It only sets the prefetches of a
 * path that computes more than it streams, and a copy per tune doubled the
 * compile time of the sanitizer builds (clang-14 ASan + UBSan spent ~20
 * minutes on the AVX-512 K-quants) for nothing measurable. */
static __attribute__((noinline)) void KX_ROWS_G(const void *w, size_t w_row_bytes, const void *x,
                                                size_t x_stride, float *y, size_t y_stride, int n,
                                                int r0, int r1, int nb, int tune)
{
    const int nsb = n / QK_K;
    const int g_lo = r0 / KX_ROWS, g_hi = (r1 + KX_ROWS - 1) / KX_ROWS;
    const int kmax = nsb < KX_KB ? nsb : KX_KB;
    const int pg = gl_panel_groups(kmax, sizeof(KX_WBLK));
    const int tile_far = gl_tunes[tune].tile_far;
    kx_xprep xp[KX_C][KX_KB];
    for (int k0 = 0; k0 < nsb; k0 += KX_KB) {
        const int kn = nsb - k0 < KX_KB ? nsb - k0 : KX_KB;
        for (int p0 = g_lo; p0 < g_hi; p0 += pg) {
            const int p1 = g_hi - p0 < pg ? g_hi : p0 + pg;
            for (int c0 = 0; c0 < nb; c0 += KX_C) {
                const int nc = nb - c0 < KX_C ? nb - c0 : KX_C;
                const block_q8_K *xs[KX_C];
                float *yc[KX_C];
                for (int c = 0; c < nc; c++) {
                    xs[c] =
                        (const block_q8_K *)((const char *)x + (size_t)(c0 + c) * x_stride) + k0;
                    yc[c] = y + (size_t)(c0 + c) * y_stride;
                    kx_col_prep(xs[c], kn, xp[c]);
                }
                for (int g = p0; g < p1; g++) {
                    const KX_WBLK *wb =
                        (const KX_WBLK *)((const char *)w + (size_t)g * w_row_bytes) + k0;
                    int lo, hi;
                    kx_group_lanes(r0, r1, g, KX_ROWS, &lo, &hi);
                    float *ys[KX_C];
                    for (int c = 0; c < nc; c++)
                        ys[c] = yc[c] + (size_t)g * KX_ROWS;
                    const int first = k0 == 0, stream = c0 == 0;
                    /* clang-format off */
                    switch (nc) {
                    case 1: KX_TILE(wb, NULL, xs, xp[0], KX_KB, kn, ys, lo, hi, first, stream, tile_far, tune, 1); break;
                    case 2: KX_TILE(wb, NULL, xs, xp[0], KX_KB, kn, ys, lo, hi, first, stream, tile_far, tune, 2); break;
                    case 3: KX_TILE(wb, NULL, xs, xp[0], KX_KB, kn, ys, lo, hi, first, stream, tile_far, tune, 3); break;
#if KX_C > 4
                    case 4: KX_TILE(wb, NULL, xs, xp[0], KX_KB, kn, ys, lo, hi, first, stream, tile_far, tune, 4); break;
                    case 5: KX_TILE(wb, NULL, xs, xp[0], KX_KB, kn, ys, lo, hi, first, stream, tile_far, tune, 5); break;
                    case 6: KX_TILE(wb, NULL, xs, xp[0], KX_KB, kn, ys, lo, hi, first, stream, tile_far, tune, 6); break;
                    case 7: KX_TILE(wb, NULL, xs, xp[0], KX_KB, kn, ys, lo, hi, first, stream, tile_far, tune, 7); break;
#endif
                    default: KX_TILE(wb, NULL, xs, xp[0], KX_KB, kn, ys, lo, hi, first, stream, tile_far, tune, KX_C); break;
                    }
                    /* clang-format on */
                }
            }
        }
    }
}

/* Small batches (batched decode, at most KX_SB columns): each group's
 * column tiles back to back, the first streaming the weights, the others
 * reading them from L1, so the stream runs while they compute. The panel
 * order of KX_ROWS_G runs its later column tiles over a panel already in
 * L2 and leaves DRAM idle meanwhile. Same float steps per output in the
 * same order: bit-identical to KX_ROWS_G. */
#define KX_SB   (2 * KX_C)
#define KX_KB_S 32
GL_ALWAYS_INLINE void KX_CAT(KX_ROWS_S, _impl)(const void *w, size_t w_row_bytes, const void *x,
                                               size_t x_stride, float *y, size_t y_stride, int n,
                                               int r0, int r1, int nb, int tune, const int tile_far)
{
    const int nsb = n / QK_K;
    const int g_lo = r0 / KX_ROWS, g_hi = (r1 + KX_ROWS - 1) / KX_ROWS;
    kx_xprep xp[KX_SB][KX_KB_S];
    for (int k0 = 0; k0 < nsb; k0 += KX_KB_S) {
        const int kn = nsb - k0 < KX_KB_S ? nsb - k0 : KX_KB_S;
        const block_q8_K *xs[KX_SB];
        for (int c = 0; c < nb; c++) {
            xs[c] = (const block_q8_K *)((const char *)x + (size_t)c * x_stride) + k0;
            kx_col_prep(xs[c], kn, xp[c]);
        }
        for (int g = g_lo; g < g_hi; g++) {
            const KX_WBLK *wb = (const KX_WBLK *)((const char *)w + (size_t)g * w_row_bytes) + k0;
            int lo, hi;
            kx_group_lanes(r0, r1, g, KX_ROWS, &lo, &hi);
            const int first = k0 == 0;
            for (int c0 = 0; c0 < nb; c0 += KX_C) {
                const int nc = nb - c0 < KX_C ? nb - c0 : KX_C;
                float *ys[KX_C];
                for (int c = 0; c < nc; c++)
                    ys[c] = y + (size_t)(c0 + c) * y_stride + (size_t)g * KX_ROWS;
                const int stream = c0 == 0;
                /* clang-format off */
                switch (nc) {
                case 1: KX_TILE(wb, NULL, xs + c0, xp[c0], KX_KB_S, kn, ys, lo, hi, first, stream, tile_far, tune, 1); break;
                case 2: KX_TILE(wb, NULL, xs + c0, xp[c0], KX_KB_S, kn, ys, lo, hi, first, stream, tile_far, tune, 2); break;
                case 3: KX_TILE(wb, NULL, xs + c0, xp[c0], KX_KB_S, kn, ys, lo, hi, first, stream, tile_far, tune, 3); break;
#if KX_C > 4
                case 4: KX_TILE(wb, NULL, xs + c0, xp[c0], KX_KB_S, kn, ys, lo, hi, first, stream, tile_far, tune, 4); break;
                case 5: KX_TILE(wb, NULL, xs + c0, xp[c0], KX_KB_S, kn, ys, lo, hi, first, stream, tile_far, tune, 5); break;
                case 6: KX_TILE(wb, NULL, xs + c0, xp[c0], KX_KB_S, kn, ys, lo, hi, first, stream, tile_far, tune, 6); break;
                case 7: KX_TILE(wb, NULL, xs + c0, xp[c0], KX_KB_S, kn, ys, lo, hi, first, stream, tile_far, tune, 7); break;
#endif
                default: KX_TILE(wb, NULL, xs + c0, xp[c0], KX_KB_S, kn, ys, lo, hi, first, stream, tile_far, tune, KX_C); break;
                }
                /* clang-format on */
            }
        }
    }
}

/* one instance per prefetch form, a constant in its tiles, and not cloned
 * per tune: with a branch on the tune's tile_far in them, or as the clone
 * gcc made, Q6_Kx16 batch-4 tiles from DRAM ran 8-15 % slower on a Zen 4 */
static GL_NOINLINE_NOIPA void KX_CAT(KX_ROWS_S, _far)(const void *w, size_t w_row_bytes,
                                                      const void *x, size_t x_stride, float *y,
                                                      size_t y_stride, int n, int r0, int r1,
                                                      int nb, int tune)
{
    KX_CAT(KX_ROWS_S, _impl)(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, tune, 1);
}
static GL_NOINLINE_NOIPA void KX_CAT(KX_ROWS_S, _both)(const void *w, size_t w_row_bytes,
                                                       const void *x, size_t x_stride, float *y,
                                                       size_t y_stride, int n, int r0, int r1,
                                                       int nb, int tune)
{
    KX_CAT(KX_ROWS_S, _impl)(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, tune, 0);
}

#ifdef KX_UNPACK
/* The general path of a layout with a costly unpack (KX_UNPACK): per chunk
 * of KX_KU super-blocks and block of KX_CB columns, each group's units are
 * unpacked once into an L1 buffer and every column tile of the block reads
 * them there, instead of each tile unpacking them again. Same integers, same
 * float steps in the same order: bit-identical to the path above. */
static __attribute__((noinline)) void KX_CAT(KX_NAME, _rows_u)(const void *w, size_t w_row_bytes,
                                                               const void *x, size_t x_stride,
                                                               float *y, size_t y_stride, int n,
                                                               int r0, int r1, int nb, int tune)
{
    const int nsb = n / QK_K;
    const int g_lo = r0 / KX_ROWS, g_hi = (r1 + KX_ROWS - 1) / KX_ROWS;
    kx_xprep xp[KX_CB][KX_KU];
    _Alignas(64) uint8_t ub[KX_KU * KX_UBYTES];
    for (int p0 = g_lo; p0 < g_hi; p0 += KX_PG) {
        const int p1 = g_hi - p0 < KX_PG ? g_hi : p0 + KX_PG;
        for (int k0 = 0; k0 < nsb; k0 += KX_KU) {
            const int kn = nsb - k0 < KX_KU ? nsb - k0 : KX_KU;
            for (int b0 = 0; b0 < nb; b0 += KX_CB) {
                const int ncb = nb - b0 < KX_CB ? nb - b0 : KX_CB;
                const block_q8_K *xs[KX_CB];
                for (int c = 0; c < ncb; c++) {
                    xs[c] =
                        (const block_q8_K *)((const char *)x + (size_t)(b0 + c) * x_stride) + k0;
                    kx_col_prep(xs[c], kn, xp[c]);
                }
                for (int g = p0; g < p1; g++) {
                    const KX_WBLK *wb =
                        (const KX_WBLK *)((const char *)w + (size_t)g * w_row_bytes) + k0;
                    for (int b = 0; b < kn; b++) {
                        /* the next group's chunk, unpacked after this
                         * group's tiles */
                        if (b0 == 0 && g + 1 < p1)
                            for (size_t l = 0; l < sizeof(KX_WBLK); l += 64)
                                gl_prefetch_in_order((const char *)(wb + b) + w_row_bytes + l, 1);
                        KX_UNPACK(wb + b, ub + (size_t)b * KX_UBYTES);
                    }
                    int lo, hi;
                    kx_group_lanes(r0, r1, g, KX_ROWS, &lo, &hi);
                    const int first = k0 == 0;
                    for (int c0 = 0; c0 < ncb; c0 += KX_CU) {
                        const int nc = ncb - c0 < KX_CU ? ncb - c0 : KX_CU;
                        float *ys[KX_CU];
                        for (int c = 0; c < nc; c++)
                            ys[c] = y + (size_t)(b0 + c0 + c) * y_stride + (size_t)g * KX_ROWS;
                        /* clang-format off */
                        switch (nc) {
                        case 1: KX_TILE(wb, ub, xs + c0, xp[c0], KX_KU, kn, ys, lo, hi, first, 0, 0, tune, 1); break;
                        case 2: KX_TILE(wb, ub, xs + c0, xp[c0], KX_KU, kn, ys, lo, hi, first, 0, 0, tune, 2); break;
                        case 3: KX_TILE(wb, ub, xs + c0, xp[c0], KX_KU, kn, ys, lo, hi, first, 0, 0, tune, 3); break;
#if KX_CU > 4
                        case 4: KX_TILE(wb, ub, xs + c0, xp[c0], KX_KU, kn, ys, lo, hi, first, 0, 0, tune, 4); break;
#endif
#if KX_CU > 5
                        case 5: KX_TILE(wb, ub, xs + c0, xp[c0], KX_KU, kn, ys, lo, hi, first, 0, 0, tune, 5); break;
#endif
#if KX_CU > 6
                        case 6: KX_TILE(wb, ub, xs + c0, xp[c0], KX_KU, kn, ys, lo, hi, first, 0, 0, tune, 6); break;
#endif
#if KX_CU > 7
                        case 7: KX_TILE(wb, ub, xs + c0, xp[c0], KX_KU, kn, ys, lo, hi, first, 0, 0, tune, 7); break;
#endif
                        default: KX_TILE(wb, ub, xs + c0, xp[c0], KX_KU, kn, ys, lo, hi, first, 0, 0, tune, KX_CU); break;
                        }
                        /* clang-format on */
                    }
                }
            }
        }
    }
}
#endif

GL_ALWAYS_INLINE void KX_IMPL(const void *w, size_t w_row_bytes, const void *x, size_t x_stride,
                              float *y, size_t y_stride, int n, int r0, int r1, int nb,
                              const int tune)
{
    const int nsb = n / QK_K;
    const int f0 = (r0 + KX_ROWS - 1) / KX_ROWS, f1 = r1 / KX_ROWS;
    if (nb == 1 && nsb <= KX_KB_DECODE && f0 < f1) {
        const block_q8_K *xs = x;
        kx_xprep xp1[KX_KB_DECODE];
        kx_col_prep(xs, nsb, xp1);
        if (r0 < f0 * KX_ROWS)
            KX_ROWS_G(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, f0 * KX_ROWS, 1, tune);
        /* the tune's streams per thread, at most KX_NG */
        const int ng = gl_tunes[tune].x8_streams < KX_NG ? gl_tunes[tune].x8_streams : KX_NG;
        int g = f0;
        for (; g + ng <= f1; g += ng)
            KX_MULTI((const char *)w + (size_t)g * w_row_bytes, w_row_bytes, xs, xp1, nsb,
                     y + (size_t)g * KX_ROWS, tune, ng);
        for (; g < f1; g++)
            KX_MULTI((const char *)w + (size_t)g * w_row_bytes, w_row_bytes, xs, xp1, nsb,
                     y + (size_t)g * KX_ROWS, tune, 1);
        if (f1 * KX_ROWS < r1)
            KX_ROWS_G(w, w_row_bytes, x, x_stride, y, y_stride, n, f1 * KX_ROWS, r1, 1, tune);
        return;
    }
    if (nb > 1 && nb <= KX_SB) {
        if (gl_tunes[tune].tile_far)
            KX_CAT(KX_ROWS_S, _far)(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, tune);
        else
            KX_CAT(KX_ROWS_S, _both)(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, tune);
        return;
    }
#ifdef KX_UNPACK
    if (nb >= KX_UNPACK_MIN_NB) {
        KX_CAT(KX_NAME, _rows_u)(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, tune);
        return;
    }
#endif
    KX_ROWS_G(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, tune);
}

GL_TUNED_MATMULS(KX_LINK, KX_NAME, KX_IMPL)

#undef KX_IMPL
#undef KX_CU
#undef KX_CMAX
#undef KX_UNPACK
#undef KX_ISUMS_U
#undef KX_UBYTES
#undef KX_KB_DECODE
#undef KX_ROWS_G
#undef KX_ROWS_S
#undef KX_SB
#undef KX_KB_S
#undef KX_TUNED
#undef KX_LINK
#undef KX_TILE
#undef KX_MULTI
#undef KX_NAME
#undef KX_WBLK
#undef KX_ISUMS
#undef KX_ISUMS_PF
#undef KX_HAS_MIN
#undef KX_ROWS
#undef KX_TILE_PF_KQ
#undef KX_TILE_TPF
#undef KX_TPF_ARG
#undef KX_PF_BLOCKS
#undef KX_HW_PF
#undef KV_PS
#undef KV_EPI32
#undef KV_ZERO_PS
#undef KV_ZERO_EPI32
#undef KV_LOADU_PS
#undef KV_STOREU_PS
#undef KV_LOAD_LANES_PS
#undef KV_STORE_LANES_PS
#undef KV_SET1_PS
#undef KV_ADD_PS
#undef KV_SUB_PS
#undef KV_MUL_PS
#undef KV_CVTEPI32_PS
#undef KV_LOAD_D
