/* Template: products over the K-quant row groups (src/quant.h: Q4_Kx8,
 * Q6_Kx8) x Q8_K activations, one row per 32-bit lane of a ymm register,
 * included once per (layout, ISA) with these macros:
 *   KX_NAME        name of the generated GL_DECL_MATMUL_FN
 *   KX_WBLK        block_q4_Kx8 or block_q6_Kx8
 *   KX_ISUMS(blk, xq, xp, isum, imin, nc)
 *                  adds to the int32 lanes of isum[c] (lane r = row r) the
 *                  super-block's integer isum of src/kernels.h (scales
 *                  applied) against activation quants xq[c] (256 int8) with
 *                  prepared sums xp[c] (kx_xprep), c < nc; with KX_HAS_MIN,
 *                  imin[c] likewise
 *   KX_HAS_MIN     1: Q4_K / Q5_K form (dmin, imin), 0: Q6_K form
 *   KX_C           most activation columns per tile
 *
 * Exactness and determinism: isum / imin are exact integers; each lane then
 * runs generic's float step (arch/generic/kquants.c kblock_dot; see
 * kquant_tmpl.h for why the long form equals generic's short form when
 * dmin == 0 and imin == 0) over super-blocks in order, no FMA, so every
 * output is bit-identical to generic's for any r0 / r1 and nb. Loop order
 * as in x8_tmpl.h: chunk of KX_KB super-blocks (between chunks a row's sum
 * waits in y as a float: exact), panel of groups (~512 KB), column tile,
 * group; one column (decode): KX_NG groups in lockstep, each a prefetched
 * stream. */

#ifndef KX_KB
#define KX_KB 64
#endif
#ifndef KX_NG
#define KX_NG 4
#endif

#define KX_CAT2(a, b) a##b
#define KX_CAT(a, b)  KX_CAT2(a, b)
#define KX_TILE       KX_CAT(KX_NAME, _tile)
#define KX_MULTI      KX_CAT(KX_NAME, _multi)

/* the float step of one super-block for 8 rows (lane r = row r) */
GL_ALWAYS_INLINE __m256 KX_CAT(KX_NAME, _step)(__m256 acc, __m256i isum, __m256i imin,
                                               const KX_WBLK *blk, float dx)
{
    const __m256 sx = _mm256_set1_ps(dx);
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk->d));
#if KX_HAS_MIN
    const __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk->dmin));
    return _mm256_add_ps(acc,
                         _mm256_sub_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(sx, dw)),
                                       _mm256_mul_ps(_mm256_cvtepi32_ps(imin), _mm256_mul_ps(sx, dm))));
#else
    (void)imin;
    return _mm256_add_ps(acc, _mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(sx, dw)));
#endif
}

GL_ALWAYS_INLINE void KX_TILE(const KX_WBLK *wb, const block_q8_K *const *xs,
                              const kx_xprep (*xp)[KX_KB], int kn, float *const *ys, int lo, int hi,
                              int first, int stream, const int nc)
{
    const int full = lo == 0 && hi == 8;
    __m256 acc[KX_C];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        acc[c] = first  ? _mm256_setzero_ps()
                 : full ? _mm256_loadu_ps(ys[c])
                        : _mm256_maskload_ps(ys[c], x8_lane_mask(lo, hi));
    for (int b = 0; b < kn; b++) {
        const KX_WBLK *blk = wb + b;
        if (stream)
            gl_prefetch_streams((const char *)blk, 0, 1, 0, sizeof(KX_WBLK), SIZE_MAX, 0);
        const int8_t *xq[KX_C];
        const kx_xprep *xpp[KX_C];
        __m256i isum[KX_C], imin[KX_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            xq[c] = xs[c][b].qs;
            xpp[c] = &xp[c][b];
            isum[c] = _mm256_setzero_si256();
            imin[c] = _mm256_setzero_si256();
        }
        KX_ISUMS(blk, xq, xpp, isum, imin, nc);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            acc[c] = KX_CAT(KX_NAME, _step)(acc[c], isum[c], imin[c], blk, xp[c][b].dx);
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        if (full)
            _mm256_storeu_ps(ys[c], acc[c]);
        else
            _mm256_maskstore_ps(ys[c], x8_lane_mask(lo, hi), acc[c]);
    }
}

GL_ALWAYS_INLINE void KX_MULTI(const char *w, size_t gb, const block_q8_K *xs, const kx_xprep *xp,
                               int kn, float *y, const int ng)
{
    const size_t gbytes = (size_t)kn * sizeof(KX_WBLK);
    const size_t skip = (size_t)(ng - 1) * gb;
    __m256 acc[KX_NG];
    for (int g = 0; g < ng; g++)
        acc[g] = _mm256_setzero_ps();
    for (int b = 0; b < kn; b++) {
        const int8_t *xq[1] = { xs[b].qs };
        const kx_xprep *xpp[1] = { &xp[b] };
        for (int g = 0; g < ng; g++) {
            /* prefetch a block's worth per stream, spread over the groups */
            gl_prefetch_streams(w + (size_t)g * gb, 0, 1, (size_t)b * sizeof(KX_WBLK),
                                sizeof(KX_WBLK), gbytes, skip);
            const KX_WBLK *blk = (const KX_WBLK *)(w + (size_t)g * gb) + b;
            __m256i isum = _mm256_setzero_si256(), imin = _mm256_setzero_si256();
            KX_ISUMS(blk, xq, xpp, &isum, &imin, 1);
            acc[g] = KX_CAT(KX_NAME, _step)(acc[g], isum, imin, blk, xp[b].dx);
        }
    }
    for (int g = 0; g < ng; g++)
        _mm256_storeu_ps(y + (size_t)g * 8, acc[g]);
}

GL_DECL_MATMUL_FN(KX_NAME)
{
    const int nsb = n / QK_K;
    const int f0 = (r0 + 7) / 8, f1 = r1 / 8;
    if (nb == 1 && nsb <= KX_KB && f0 < f1) {
        const block_q8_K *xs = x;
        kx_xprep xp1[KX_KB];
        kx_col_prep(xs, nsb, xp1);
        if (r0 < f0 * 8)
            KX_NAME(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, f0 * 8, 1);
        int g = f0;
        for (; g + KX_NG <= f1; g += KX_NG)
            KX_MULTI((const char *)w + (size_t)g * w_row_bytes, w_row_bytes, xs, xp1, nsb,
                     y + (size_t)g * 8, KX_NG);
        for (; g < f1; g++)
            KX_MULTI((const char *)w + (size_t)g * w_row_bytes, w_row_bytes, xs, xp1, nsb,
                     y + (size_t)g * 8, 1);
        if (f1 * 8 < r1)
            KX_NAME(w, w_row_bytes, x, x_stride, y, y_stride, n, f1 * 8, r1, 1);
        return;
    }
    const int g_lo = r0 / 8, g_hi = (r1 + 7) / 8;
    const int kmax = nsb < KX_KB ? nsb : KX_KB;
    int pg = (int)(((size_t)512 << 10) / ((size_t)kmax * sizeof(KX_WBLK)));
    if (pg < 1)
        pg = 1;
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
                    const int lo = r0 > g * 8 ? r0 - g * 8 : 0;
                    const int hi = r1 - g * 8 < 8 ? r1 - g * 8 : 8;
                    float *ys[KX_C];
                    for (int c = 0; c < nc; c++)
                        ys[c] = yc[c] + (size_t)g * 8;
                    const int first = k0 == 0, stream = c0 == 0;
                    switch (nc) {
                    case 1: KX_TILE(wb, xs, (const kx_xprep(*)[KX_KB])xp, kn, ys, lo, hi, first, stream, 1); break;
                    case 2: KX_TILE(wb, xs, (const kx_xprep(*)[KX_KB])xp, kn, ys, lo, hi, first, stream, 2); break;
                    case 3: KX_TILE(wb, xs, (const kx_xprep(*)[KX_KB])xp, kn, ys, lo, hi, first, stream, 3); break;
                    default: KX_TILE(wb, xs, (const kx_xprep(*)[KX_KB])xp, kn, ys, lo, hi, first, stream, KX_C); break;
                    }
                }
            }
        }
    }
}

#undef KX_TILE
#undef KX_MULTI
#undef KX_NAME
#undef KX_WBLK
#undef KX_ISUMS
#undef KX_HAS_MIN
