/* Template: decode (nb == 1) over an x8 layout with zmm, two neighbouring
 * 8-row groups side by side in one register (lanes 0-7: group g, lanes
 * 8-15: group g + 1), so each vector op covers 16 rows, and the tune's
 * q8_pairs registers per call: twice as many groups, each its own
 * prefetched stream.
 * At decode the weights stream from DRAM; fewer uops per byte and several
 * streams per core both let a core keep more of it in flight (bench/matvec,
 * 2 threads, Q4_0x8 2048x5632: one group per ymm ~25 GB/s, one pair ~27,
 * four pairs ~29; on a Zen 5, 1 thread, two pairs 35-37 GB/s against 33-34
 * with four, with prefetcht0). Used for Q8_0x8; Q4_0 went further with a 16-row layout
 * (Q4_0x16, no inserts: ~33 GB/s on the same shape).
 *
 * Included once per layout with:
 *   PAIR_NAME       name of the generated kernels: PAIR_NAME_<tune> (static),
 *                   one per decode tune (src/tune.h: its prefetches and
 *                   q8_pairs register pairs per call), and
 *                   PAIR_NAME_tuned[GL_TUNE_COUNT] pointing at them
 *   PAIR_FALLBACK   the layout's x8 kernels (an x8_tmpl.h _tuned table), for
 *                   rows outside whole 16-row pairs and decode reductions
 *                   over PAIR_MAXB blocks
 *   PAIR_WBLK       an x8 block type (block_q8_0x8)
 *   PAIR_SHIFT      as X8_SHIFT (arch/x86/avx2/x8_tmpl.h): isum starts at
 *                   -2^PAIR_SHIFT sum(x)
 *   PAIR_ISUMS(b0, b1, xq, isum)
 *                   isum + the integer dots of blocks *b0 (lanes 0-7) and
 *                   *b1 (lanes 8-15) with the 32 activation quants xq
 *
 * Exactness: isum is an exact integer; each lane then runs the x8
 * template's (so generic's) float sequence acc = acc + (float)isum *
 * (dw * dx) block by block, with -ffp-contract=off: bit-identical to
 * generic for any r0 / r1. */

#ifndef GENLOOP_PAIR_TMPL_ONCE
#define GENLOOP_PAIR_TMPL_ONCE
enum { PAIR_MAXB = 1024, PAIR_NZ_MAX = 4, PAIR_KB = 256, PAIR_C = 8 };
#endif

#define PAIR_CAT2(a, b) a##b
#define PAIR_CAT(a, b)  PAIR_CAT2(a, b)
#define PAIR_LOOP       PAIR_CAT(PAIR_NAME, _pairs)
#define PAIR_IMPL       PAIR_CAT(PAIR_NAME, _impl)
#define PAIR_TILE       PAIR_CAT(PAIR_NAME, _tile)
#define PAIR_ROWS_G     PAIR_CAT(PAIR_NAME, _rows)

/* nz registers of two groups each: groups w .. w + 2 nz - 1, gb bytes apart */
GL_ALWAYS_INLINE void PAIR_LOOP(const char *w, size_t gb, const block_q8_0 *x, const int32_t *corr,
                                const float *dx, int nblk, float *y, const int tune, const int nz)
{
    const size_t gbytes = (size_t)nblk * sizeof(PAIR_WBLK);
    const size_t skip = (size_t)(2 * nz - 1) * gb;
    __m512 acc[PAIR_NZ_MAX];
    for (int z = 0; z < nz; z++)
        acc[z] = _mm512_setzero_ps();
    for (int b = 0; b < nblk; b++) {
        /* each stream prefetches its own group; past the group's end, the
         * same offset in the group it reads next (2 nz groups on), so the
         * next call's streams are already in flight when it starts */
        gl_prefetch_streams(tune, w, gb, 2 * nz, (size_t)b * sizeof(PAIR_WBLK), sizeof(PAIR_WBLK),
                            gbytes, skip);
        const __m512 sx = _mm512_set1_ps(dx[b]);
        for (int z = 0; z < nz; z++) {
            const PAIR_WBLK *b0 = (const PAIR_WBLK *)(w + (size_t)(2 * z) * gb) + b;
            const PAIR_WBLK *b1 = (const PAIR_WBLK *)(w + (size_t)(2 * z + 1) * gb) + b;
            const __m512i isum = PAIR_ISUMS(b0, b1, x[b].qs, _mm512_set1_epi32(corr[b]));
            const __m512 dw = gl512_cvtph_ps(_mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)b0->d)),
                _mm_loadu_si128((const __m128i *)b1->d), 1));
            acc[z] = _mm512_add_ps(acc[z],
                                   _mm512_mul_ps(gl512_cvtepi32_ps(isum), _mm512_mul_ps(dw, sx)));
        }
    }
    for (int z = 0; z < nz; z++)
        _mm512_storeu_ps(y + 16 * z, acc[z]);
}

/* Several columns (prefill, batched decode): the 16 rows of a pair of
 * groups against nc activation columns, blocks [0, kn) of a chunk. Each
 * weight load (and its xor) serves every column, so the insert of the
 * second group's half costs little; per lane the float sequence is the x8
 * template's tile (acc + (float)isum * (dw * dx), block by block, the sum
 * waiting in y between chunks), so results are bit-identical to it and to
 * generic. The first column tile over a panel prefetches the pair's two
 * streams (the rest find the panel in L2). */
GL_ALWAYS_INLINE void PAIR_TILE(const PAIR_WBLK *w0, const PAIR_WBLK *w1,
                                const block_q8_0 *const *xs, const int32_t (*corr)[PAIR_KB],
                                const float (*dx)[PAIR_KB], int kn, float *const *ys, int first,
                                int stream, const int tune, const int nc)
{
    const __m512i bias = _mm512_set1_epi8(-128);
    __m512 acc[PAIR_C];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        acc[c] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(ys[c]);
    for (int b = 0; b < kn; b++) {
        const PAIR_WBLK *b0 = w0 + b, *b1 = w1 + b;
        if (stream) {
            gl_prefetch_streams(tune, (const char *)b0, 0, 1, 0, sizeof(PAIR_WBLK), SIZE_MAX, 0);
            gl_prefetch_streams(tune, (const char *)b1, 0, 1, 0, sizeof(PAIR_WBLK), SIZE_MAX, 0);
        }
        __m512i isum[PAIR_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] = _mm512_set1_epi32(corr[c][b]);
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m512i a = _mm512_xor_si512(pair_load(b0->qs + 32 * k, b1->qs + 32 * k), bias);
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++)
                isum[c] = _mm512_dpbusd_epi32(isum[c], a,
                                              _mm512_set1_epi32(x8_load32(xs[c][b].qs + 4 * k)));
        }
        const __m512 dw = gl512_cvtph_ps(
            _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)b0->d)),
                                    _mm_loadu_si128((const __m128i *)b1->d), 1));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            acc[c] =
                _mm512_add_ps(acc[c], _mm512_mul_ps(gl512_cvtepi32_ps(isum[c]),
                                                    _mm512_mul_ps(dw, _mm512_set1_ps(dx[c][b]))));
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        _mm512_storeu_ps(ys[c], acc[c]);
}

/* Whole pairs [p0, p1) against nb columns: chunks of PAIR_KB blocks,
 * panels of pairs (~512 KiB of weights, so a panel stays in L2 while every
 * column tile streams over it), tiles of PAIR_C columns; as x8_tmpl.h's
 * general path. */
GL_ALWAYS_INLINE void PAIR_ROWS_G(const char *w, size_t gb, const void *x, size_t x_stride,
                                  float *y, size_t y_stride, int nblk, int p0, int p1, int nb,
                                  const int tune)
{
    const int kmax = nblk < PAIR_KB ? nblk : PAIR_KB;
    const int pp = gl_panel_groups(kmax, 2 * sizeof(PAIR_WBLK));
    int32_t corr[PAIR_C][PAIR_KB];
    float dx[PAIR_C][PAIR_KB];
    for (int k0 = 0; k0 < nblk; k0 += PAIR_KB) {
        const int kn = nblk - k0 < PAIR_KB ? nblk - k0 : PAIR_KB;
        for (int q0 = p0; q0 < p1; q0 += pp) {
            const int q1 = p1 - q0 < pp ? p1 : q0 + pp;
            for (int c0 = 0; c0 < nb; c0 += PAIR_C) {
                const int nc = nb - c0 < PAIR_C ? nb - c0 : PAIR_C;
                const block_q8_0 *xs[PAIR_C];
                for (int c = 0; c < nc; c++) {
                    xs[c] =
                        (const block_q8_0 *)((const char *)x + (size_t)(c0 + c) * x_stride) + k0;
                    gl_x8_col_prep(xs[c], kn, PAIR_SHIFT, corr[c], dx[c]);
                }
                for (int q = q0; q < q1; q++) {
                    const PAIR_WBLK *w0 = (const PAIR_WBLK *)(w + (size_t)(2 * q) * gb) + k0;
                    const PAIR_WBLK *w1 = (const PAIR_WBLK *)(w + (size_t)(2 * q + 1) * gb) + k0;
                    float *ys[PAIR_C];
                    for (int c = 0; c < nc; c++)
                        ys[c] = y + (size_t)(c0 + c) * y_stride + (size_t)q * 16;
                    const int first = k0 == 0, stream = c0 == 0;
                    switch (nc) {
#define PAIR_CASE(N)                                                                               \
    case N:                                                                                        \
        PAIR_TILE(w0, w1, xs, (const int32_t(*)[PAIR_KB])corr, (const float(*)[PAIR_KB])dx, kn,    \
                  ys, first, stream, tune, N);                                                     \
        break;
                        PAIR_CASE(1)
                        PAIR_CASE(2)
                        PAIR_CASE(3)
                        PAIR_CASE(4)
                        PAIR_CASE(5)
                        PAIR_CASE(6)
                        PAIR_CASE(7)
#undef PAIR_CASE
                    default:
                        PAIR_TILE(w0, w1, xs, (const int32_t(*)[PAIR_KB])corr,
                                  (const float(*)[PAIR_KB])dx, kn, ys, first, stream, tune, PAIR_C);
                        break;
                    }
                }
            }
        }
    }
}

GL_ALWAYS_INLINE void PAIR_IMPL(const void *w, size_t w_row_bytes, const void *x, size_t x_stride,
                                float *y, size_t y_stride, int n, int r0, int r1, int nb,
                                const int tune)
{
    const int nblk = n / QK8_0;
    const int p0 = (r0 + 15) / 16, p1 = r1 / 16; /* whole 16-row pairs */
    if (p0 >= p1 || (nb == 1 && nblk > PAIR_MAXB)) {
        PAIR_FALLBACK[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb);
        return;
    }
    if (nb > 1) { /* the x8 kernel takes the rows outside whole pairs */
        if (r0 < p0 * 16)
            PAIR_FALLBACK[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, r0, p0 * 16, nb);
        PAIR_ROWS_G((const char *)w, w_row_bytes, x, x_stride, y, y_stride, nblk, p0, p1, nb, tune);
        if (p1 * 16 < r1)
            PAIR_FALLBACK[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, p1 * 16, r1, nb);
        return;
    }
    const block_q8_0 *xb = x;
    int32_t corr[PAIR_MAXB];
    float dx[PAIR_MAXB];
    gl_x8_col_prep(xb, nblk, PAIR_SHIFT, corr, dx);
    if (r0 < p0 * 16)
        PAIR_FALLBACK[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, r0, p0 * 16, 1);
    const int nz = gl_tunes[tune].q8_pairs < PAIR_NZ_MAX ? gl_tunes[tune].q8_pairs : PAIR_NZ_MAX;
    int p = p0;
    for (; p + nz <= p1; p += nz)
        PAIR_LOOP((const char *)w + (size_t)(2 * p) * w_row_bytes, w_row_bytes, xb, corr, dx, nblk,
                  y + (size_t)p * 16, tune, nz);
    for (; nz > 2 && p + 2 <= p1; p += 2)
        PAIR_LOOP((const char *)w + (size_t)(2 * p) * w_row_bytes, w_row_bytes, xb, corr, dx, nblk,
                  y + (size_t)p * 16, tune, 2);
    for (; p < p1; p++)
        PAIR_LOOP((const char *)w + (size_t)(2 * p) * w_row_bytes, w_row_bytes, xb, corr, dx, nblk,
                  y + (size_t)p * 16, tune, 1);
    if (p1 * 16 < r1)
        PAIR_FALLBACK[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, p1 * 16, r1, 1);
}

GL_TUNED_MATMULS(static, PAIR_NAME, PAIR_IMPL)

#undef PAIR_IMPL
#undef PAIR_TILE
#undef PAIR_ROWS_G
#undef PAIR_LOOP
#undef PAIR_NAME
#undef PAIR_FALLBACK
#undef PAIR_WBLK
#undef PAIR_SHIFT
#undef PAIR_ISUMS
