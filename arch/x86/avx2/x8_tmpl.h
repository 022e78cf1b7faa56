/* Template: products over the row-interleaved layouts (src/quant.h),
 * Q4_0x8 / Q8_0x8 / Q4_0x16 weights x Q8_0 activations, one row per vector
 * lane, included once per (layout, ISA) with these macros defined:
 *   X8_NAME        name of the generated GL_DECL_MATMUL_FN
 *   X8_WBLK        block_q4_0x8, block_q8_0x8 or block_q4_0x16
 *   X8_ROWS        (optional) rows per group = lanes: 8 (default, ymm
 *                  with the AVX2 ops below) or 16, with XV_* defined for
 *                  zmm (the AVX-512 folder)
 *   X8_SHIFT       (optional) log2 of an activation-sum correction, for
 *                  kernels whose integer dot is sum(a x) with an unsigned
 *                  a = w + 2^X8_SHIFT (Q4_0: a = nibble u = w + 8, shift 3;
 *                  Q8_0: a = w ^ 0x80 = w + 128, shift 7): isum then starts
 *                  at -2^X8_SHIFT sum(x); undefined: isum starts at 0
 *   X8_MIN         (optional) defined: the weights carry a per-row offset
 *                  m (Q4_1 / Q5_1: X8_WBLK has m[] beside d[]) and the
 *                  activations are Q8_1; a is q itself (no X8_SHIFT) and
 *                  each lane runs generic's
 *                      acc = acc + ((float)isum_b * (dw_b * dx_b)
 *                                   + (float)s_b * (mw_b * dx_b))
 *                  with s_b the activation block's quant sum
 *   X8_ISUMS(blk, xq, isum, nc)
 *                  adds the integer dot of block *blk for the X8_ROWS rows
 *                  (lane r = row r) and activation blocks xq[c] (32 int8,
 *                  c < nc) to the int32 lanes of isum[c]
 *   X8_C           most activation columns per tile (registers)
 *   X8_SPREAD_PF   (optional) 1: decode spreads each stream's prefetches
 *                  between its groups' loads, stepping over whole lines of
 *                  blocks (the 16-row layouts, zmm: Zen 5 TinyLlama decode
 *                  per step, 1 thread Q4_0 +8-9 %, Q8_0 +9-11 %,
 *                  bench/RESULTS.md 2026-12-04); 0 (default): one burst
 *                  per block, as the 8-row ymm kernels keep (AVX2, 16
 *                  registers: it spilled, a Q4_0x8 product in L3 went from
 *                  40 to 33 GB/s)
 *   X8_LINK        (optional) linkage of the _tuned table, e.g. static
 *
 * It defines one kernel per decode tune (src/tune.h), X8_NAME_<tune>
 * (X8_NAME_default, X8_NAME_zen, ...), the tune's prefetch distances and
 * streams compiled in, and X8_NAME_tuned[GL_TUNE_COUNT] pointing at them;
 * all of them compute the same bits.
 *
 * Exactness and determinism. isum is an exact integer whatever the order;
 * each lane then runs generic's float sequence
 *     acc = acc + (float)isum_b * (dw_b * dx_b)     (no FMA: -ffp-contract=off)
 * over blocks b in order, so every output equals arch/generic's bit for
 * bit, for any r0 / r1 (whole groups are computed, rows [r0, r1) stored)
 * and any nb (columns never interact). Blocks are taken in chunks of X8_KB
 * (per-column sums and scales of a chunk are prepared once into a stack
 * array); between chunks the running sum waits in y as a float, which is
 * exact. Loop order: chunk, panel of groups (~512 KB of weights, so the
 * panel stays in L2 while every column tile streams over it), column tile,
 * group. */

#ifndef X8_KB
#define X8_KB 256
#endif
/* Decode prepares one column's whole row at once (8 bytes a block on the
 * stack): rows up to 32768 (Gemma 2's 9216-wide FFN down, Llama 3 8B's
 * 14336) stream in lockstep; longer ones take the general path. */
#define X8_KB_DECODE 1024
/* X8_TS: the row groups whose next blocks the first column tile over a
 * panel prefetches, its own and the X8_TS - 1 after it (their lines one
 * group ahead, so more of the stream in flight). 2 for the 16-row layouts:
 * AVX-512 Q8_0x16 batch-8 decode 191-199 -> 265-283 tok/s, Q4_0x16 batch 4
 * 209-218 -> 235-246 (bench/RESULTS.md, 2026-12-02 fifth sitting); with 8
 * rows (AVX2) no gain. */
#ifndef X8_TS
#define X8_TS 1
#endif
#ifndef X8_SPREAD_PF
#define X8_SPREAD_PF 0
#endif
#ifndef X8_ROWS /* 8 rows, ymm */
#define X8_ROWS                         GL_X8_ROWS
#define XV_PS                           __m256
#define XV_EPI32                        __m256i
#define XV_ZERO_PS()                    _mm256_setzero_ps()
#define XV_LOADU_PS(p)                  _mm256_loadu_ps(p)
#define XV_STOREU_PS(p, v)              _mm256_storeu_ps(p, v)
#define XV_LOAD_LANES_PS(p, lo, hi)     _mm256_maskload_ps(p, x8_lane_mask(lo, hi))
#define XV_STORE_LANES_PS(p, lo, hi, v) _mm256_maskstore_ps(p, x8_lane_mask(lo, hi), v)
#define XV_SET1_EPI32(v)                _mm256_set1_epi32(v)
#define XV_SET1_PS(v)                   _mm256_set1_ps(v)
#define XV_ADD_PS(a, b)                 _mm256_add_ps(a, b)
#define XV_MUL_PS(a, b)                 _mm256_mul_ps(a, b)
#define XV_CVTEPI32_PS(v)               _mm256_cvtepi32_ps(v)
#define XV_LOAD_D(d)                    _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(d)))
#endif
#ifdef X8_SHIFT
#define X8_CORR_SHIFT X8_SHIFT
#else
#define X8_CORR_SHIFT (-1)
#endif
/* X8_ABLK: the activation block. corr[b] holds the correction the integer
 * sum starts from, or with X8_MIN the block's quant sum s (the sum starts
 * at 0). X8_ACC(acc, isum, dw, mw, sx, sf): one block's term added to acc,
 * generic's float sequence (sx = dx, sf = (float)s broadcast). */
#ifdef X8_MIN
#define X8_ABLK                   block_q8_1
#define X8_ISUM0(cr)              XV_SET1_EPI32(0)
#define X8_LOAD_M(blk)            XV_LOAD_D((blk)->m)
#define X8_SF(cr)                 XV_SET1_PS((float)(cr))
#define X8_PREP(xs, kn, corr, dx) gl_x8_col_prep_q8_1(xs, kn, corr, dx)
#define X8_ACC(acc, isum, dw, mw, sx, sf)                                                          \
    XV_ADD_PS(acc, XV_ADD_PS(XV_MUL_PS(XV_CVTEPI32_PS(isum), XV_MUL_PS(dw, sx)),                   \
                             XV_MUL_PS(sf, XV_MUL_PS(mw, sx))))
#else
#define X8_ABLK                   block_q8_0
#define X8_ISUM0(cr)              XV_SET1_EPI32(cr)
#define X8_LOAD_M(blk)            XV_ZERO_PS()
#define X8_SF(cr)                 XV_ZERO_PS()
#define X8_PREP(xs, kn, corr, dx) gl_x8_col_prep(xs, kn, X8_CORR_SHIFT, corr, dx)
#define X8_ACC(acc, isum, dw, mw, sx, sf)                                                          \
    XV_ADD_PS(acc, XV_MUL_PS(XV_CVTEPI32_PS(isum), XV_MUL_PS(dw, sx)))
#endif

#define X8_CAT2(a, b) a##b
#define X8_CAT(a, b)  X8_CAT2(a, b)
#define X8_TILE       X8_CAT(X8_NAME, _tile)

GL_ALWAYS_INLINE void X8_TILE(const X8_WBLK *wb, const X8_ABLK *const *xs,
                              const int32_t (*corr)[X8_KB], const float (*dx)[X8_KB], int kn,
                              float *const *ys, int lo, int hi, int first, int stream, size_t gb,
                              const int tune, const int nc)
{
    const int full = lo == 0 && hi == X8_ROWS;
    XV_PS acc[X8_C];
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++)
        acc[c] = first ? XV_ZERO_PS() : full ? XV_LOADU_PS(ys[c]) : XV_LOAD_LANES_PS(ys[c], lo, hi);
    for (int b = 0; b < kn; b++) {
        const X8_WBLK *blk = wb + b;
        /* the first column tile over a panel reads it from DRAM: help the
         * stream along (batch 8 decode: 85 -> 173 tok/s); later tiles hit L2 */
        if (stream && gl_tunes[tune].tile_far) {
            /* the tune's tile_far: each line once, far ahead */
            for (int g = 0; g < X8_TS; g++)
                for (size_t o = 0; o < sizeof(X8_WBLK); o += 64)
                    gl_prefetch_far(tune,
                                    (const char *)blk + (size_t)g * gb + gl_tunes[tune].pf_far + o);
        } else if (stream) {
            gl_prefetch_streams(tune, (const char *)blk, gb, X8_TS, 0, sizeof(X8_WBLK), SIZE_MAX,
                                0);
        }
        const int8_t *xq[X8_C];
        XV_EPI32 isum[X8_C];
#pragma GCC unroll 16
        for (int c = 0; c < nc; c++) {
            xq[c] = xs[c][b].qs;
            isum[c] = X8_ISUM0(corr[c][b]);
        }
        X8_ISUMS(blk, xq, isum, nc);
        const XV_PS dw = XV_LOAD_D(blk->d), mw = X8_LOAD_M(blk);
        (void)mw;
#pragma GCC unroll 16
        for (int c = 0; c < nc; c++)
            acc[c] = X8_ACC(acc[c], isum[c], dw, mw, XV_SET1_PS(dx[c][b]), X8_SF(corr[c][b]));
    }
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++) {
        if (full)
            XV_STOREU_PS(ys[c], acc[c]);
        else
            XV_STORE_LANES_PS(ys[c], lo, hi, acc[c]);
    }
}

/* Decode (one activation column): the tune's x8_streams whole groups in
 * lockstep (at most X8_NG_MAX), each its own stream with its own
 * prefetches. A core reading one sequential stream leaves DRAM banks idle:
 * bench/matvec, 2 threads, AVX2 Q4_0x8 2048x5632 went from ~25 to ~29 GB/s
 * this way (four streams; on a Zen 5 two or eight were slower than four).
 * Per lane the float sequence is X8_TILE's, so results are unchanged. */
#define X8_NG_MAX 8
#define X8_MULTI  X8_CAT(X8_NAME, _multi)
#define X8_ROWS_G X8_CAT(X8_NAME, _rows)
#define X8_IMPL   X8_CAT(X8_NAME, _impl)
#define X8_TUNED  X8_CAT(X8_NAME, _tuned)

GL_ALWAYS_INLINE void X8_MULTI(const char *w, size_t gb, const X8_ABLK *xs, const int32_t *corr,
                               const float *dx, int kn, float *y, const int tune, const int ng)
{
    const size_t gbytes = (size_t)kn * sizeof(X8_WBLK);
    const size_t skip = (size_t)(ng - 1) * gb;
    XV_PS acc[X8_NG_MAX];
    for (int g = 0; g < ng; g++)
        acc[g] = XV_ZERO_PS();
/* block b of the ng groups, each group's prefetches PF issued right before
 * its loads */
#define X8_BLOCK(b, PF)                                                                            \
    do {                                                                                           \
        const int8_t *xq[1] = { xs[b].qs };                                                        \
        const XV_PS sx = XV_SET1_PS(dx[b]), sf = X8_SF(corr[b]);                                   \
        (void)sf;                                                                                  \
        for (int g = 0; g < ng; g++) {                                                             \
            PF;                                                                                    \
            const X8_WBLK *blk = (const X8_WBLK *)(w + (size_t)g * gb) + (b);                      \
            XV_EPI32 isum = X8_ISUM0(corr[b]);                                                     \
            X8_ISUMS(blk, xq, &isum, 1);                                                           \
            const XV_PS dw = XV_LOAD_D(blk->d), mw = X8_LOAD_M(blk);                               \
            (void)mw;                                                                              \
            acc[g] = X8_ACC(acc[g], isum, dw, mw, sx, sf);                                         \
        }                                                                                          \
    } while (0)
    /* Each stream prefetches its own group; past the group's end, the same
     * offset in the group it reads next (ng groups on). With X8_SPREAD_PF,
     * where the groups start on cache lines, the loop steps over X8_LB
     * blocks, a whole number of lines (X8_SPAN), and each group's block
     * prefetches its share of the span's lines right before its loads: no
     * per-block line arithmetic (a third of the loop's instructions), and
     * the prefetches spread between the loads instead of one burst per
     * block. */
    int b = 0;
    /* the tune's hw_decode (src/tune.h): the hardware prefetcher alone */
    if (gl_tunes[tune].hw_decode)
        for (; b < kn; b++)
            X8_BLOCK(b, (void)0);
#if X8_SPREAD_PF
    enum { X8_LB = GL_LINE_BLOCKS(sizeof(X8_WBLK)), X8_SPAN = X8_LB * sizeof(X8_WBLK) / 64 };
    if (gl_tunes[tune].pf_lines && (uintptr_t)w % 64 == 0 && gb % 64 == 0)
        for (; b + X8_LB <= kn; b += X8_LB) {
            const size_t at = (size_t)b * sizeof(X8_WBLK);
#pragma GCC unroll 4
            for (int i = 0; i < X8_LB; i++)
                X8_BLOCK(b + i,
                         gl_prefetch_line_span(tune, w + (size_t)g * gb, at, i * X8_SPAN / X8_LB,
                                               (i + 1) * X8_SPAN / X8_LB, gbytes, skip));
        }
#endif
    for (; b < kn; b++) {
        gl_prefetch_streams(tune, w, gb, ng, (size_t)b * sizeof(X8_WBLK), sizeof(X8_WBLK), gbytes,
                            skip);
        X8_BLOCK(b, (void)0);
    }
#undef X8_BLOCK
    for (int g = 0; g < ng; g++)
        XV_STOREU_PS(y + (size_t)g * X8_ROWS, acc[g]);
}

/* The general path: chunks of X8_KB blocks, panels of groups, tiles of up
 * to X8_C columns (prefill, batched decode, partial groups). */
GL_ALWAYS_INLINE void X8_ROWS_G(const void *w, size_t w_row_bytes, const void *x, size_t x_stride,
                                float *y, size_t y_stride, int n, int r0, int r1, int nb,
                                const int tune)
{
    const int nblk = n / QK8_0;
    const int g_lo = r0 / X8_ROWS, g_hi = (r1 + X8_ROWS - 1) / X8_ROWS;
    const int kmax = nblk < X8_KB ? nblk : X8_KB;
    const int pg = gl_panel_groups(kmax, sizeof(X8_WBLK));
    int32_t corr[X8_C][X8_KB];
    float dx[X8_C][X8_KB];
    for (int k0 = 0; k0 < nblk; k0 += X8_KB) {
        const int kn = nblk - k0 < X8_KB ? nblk - k0 : X8_KB;
        for (int p0 = g_lo; p0 < g_hi; p0 += pg) {
            const int p1 = g_hi - p0 < pg ? g_hi : p0 + pg;
            for (int c0 = 0; c0 < nb; c0 += X8_C) {
                const int nc = nb - c0 < X8_C ? nb - c0 : X8_C;
                const X8_ABLK *xs[X8_C];
                float *yc[X8_C];
                for (int c = 0; c < nc; c++) {
                    xs[c] = (const X8_ABLK *)((const char *)x + (size_t)(c0 + c) * x_stride) + k0;
                    yc[c] = y + (size_t)(c0 + c) * y_stride;
                    X8_PREP(xs[c], kn, corr[c], dx[c]);
                }
                for (int g = p0; g < p1; g++) {
                    const X8_WBLK *wb =
                        (const X8_WBLK *)((const char *)w + (size_t)g * w_row_bytes) + k0;
                    const int lo = r0 > g * X8_ROWS ? r0 - g * X8_ROWS : 0;
                    const int hi = r1 - g * X8_ROWS < X8_ROWS ? r1 - g * X8_ROWS : X8_ROWS;
                    float *ys[X8_C];
                    for (int c = 0; c < nc; c++)
                        ys[c] = yc[c] + (size_t)g * X8_ROWS;
                    const int first = k0 == 0, stream = c0 == 0;
                    switch (nc) {
#define X8_CASE(N)                                                                                 \
    case N:                                                                                        \
        X8_TILE(wb, xs, (const int32_t(*)[X8_KB])corr, (const float(*)[X8_KB])dx, kn, ys, lo, hi,  \
                first, stream, w_row_bytes, tune, N);                                              \
        break;
                        X8_CASE(1)
                        X8_CASE(2)
                        X8_CASE(3)
#if X8_C > 4
                        X8_CASE(4)
                        X8_CASE(5)
                        X8_CASE(6)
                        X8_CASE(7)
#endif
                    default:
                        X8_TILE(wb, xs, (const int32_t(*)[X8_KB])corr, (const float(*)[X8_KB])dx,
                                kn, ys, lo, hi, first, stream, w_row_bytes, tune, X8_C);
                        break;
#undef X8_CASE
                    }
                }
            }
        }
    }
}

#ifndef X8_LINK
#define X8_LINK
#endif
/* the instances, for the decode path's partial groups (general path) */
X8_LINK const gl_matmul_fn X8_TUNED[GL_TUNE_COUNT];

GL_ALWAYS_INLINE void X8_IMPL(const void *w, size_t w_row_bytes, const void *x, size_t x_stride,
                              float *y, size_t y_stride, int n, int r0, int r1, int nb,
                              const int tune)
{
    /* decode: whole groups in lockstep; partial groups at the ends of
     * [r0, r1) take the general path below (they hold no whole group) */
    const int f0 = (r0 + X8_ROWS - 1) / X8_ROWS, f1 = r1 / X8_ROWS;
    if (nb == 1 && n / QK8_0 <= X8_KB_DECODE && f0 < f1) {
        const int kn = n / QK8_0;
        const X8_ABLK *xs = x;
        int32_t corr1[X8_KB_DECODE];
        float dx1[X8_KB_DECODE];
        X8_PREP(xs, kn, corr1, dx1);
        if (r0 < f0 * X8_ROWS)
            X8_TUNED[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, r0, f0 * X8_ROWS, 1);
        const int ng =
            gl_tunes[tune].x8_streams < X8_NG_MAX ? gl_tunes[tune].x8_streams : X8_NG_MAX;
        int g = f0;
        for (; g + ng <= f1; g += ng)
            X8_MULTI((const char *)w + (size_t)g * w_row_bytes, w_row_bytes, xs, corr1, dx1, kn,
                     y + (size_t)g * X8_ROWS, tune, ng);
        for (; g < f1; g++)
            X8_MULTI((const char *)w + (size_t)g * w_row_bytes, w_row_bytes, xs, corr1, dx1, kn,
                     y + (size_t)g * X8_ROWS, tune, 1);
        if (f1 * X8_ROWS < r1)
            X8_TUNED[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, f1 * X8_ROWS, r1, 1);
        return;
    }
    X8_ROWS_G(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, tune);
}

GL_TUNED_MATMULS(X8_LINK, X8_NAME, X8_IMPL)

#undef X8_TILE
#undef X8_MULTI
#undef X8_ROWS_G
#undef X8_IMPL
#undef X8_KB_DECODE
#undef X8_TUNED
#undef X8_LINK
#undef X8_NG_MAX
#undef X8_NAME
#undef X8_WBLK
#undef X8_TS
#undef X8_SPREAD_PF
#undef X8_SHIFT
#undef X8_CORR_SHIFT
#undef X8_MIN
#undef X8_ABLK
#undef X8_ISUM0
#undef X8_LOAD_M
#undef X8_SF
#undef X8_PREP
#undef X8_ACC
#undef X8_ISUMS
#undef X8_ROWS
#undef XV_PS
#undef XV_EPI32
#undef XV_ZERO_PS
#undef XV_LOADU_PS
#undef XV_STOREU_PS
#undef XV_LOAD_LANES_PS
#undef XV_STORE_LANES_PS
#undef XV_SET1_EPI32
#undef XV_SET1_PS
#undef XV_ADD_PS
#undef XV_MUL_PS
#undef XV_CVTEPI32_PS
#undef XV_LOAD_D
