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
 *                   nb > 1, rows outside whole 16-row pairs and reductions
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
enum { PAIR_MAXB = 1024, PAIR_NZ_MAX = 4 };
#endif

#define PAIR_CAT2(a, b) a##b
#define PAIR_CAT(a, b)  PAIR_CAT2(a, b)
#define PAIR_LOOP       PAIR_CAT(PAIR_NAME, _pairs)
#define PAIR_IMPL       PAIR_CAT(PAIR_NAME, _impl)

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

GL_ALWAYS_INLINE void PAIR_IMPL(const void *w, size_t w_row_bytes, const void *x, size_t x_stride,
                                float *y, size_t y_stride, int n, int r0, int r1, int nb,
                                const int tune)
{
    const int nblk = n / QK8_0;
    const int p0 = (r0 + 15) / 16, p1 = r1 / 16; /* whole 16-row pairs */
    if (nb != 1 || nblk > PAIR_MAXB || p0 >= p1) {
        PAIR_FALLBACK[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb);
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

#define PAIR_INSTANCE(sfx, id)                                                                     \
    static GL_DECL_MATMUL_FN(PAIR_CAT(PAIR_NAME, _##sfx))                                          \
    {                                                                                              \
        PAIR_IMPL(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, id);                    \
    }
#define PAIR_ENTRY(sfx, id) [id] = PAIR_CAT(PAIR_NAME, _##sfx),
GL_FOR_EACH_TUNE(PAIR_INSTANCE)
static const gl_matmul_fn PAIR_CAT(PAIR_NAME,
                                   _tuned)[GL_TUNE_COUNT] = { GL_FOR_EACH_TUNE(PAIR_ENTRY) };

#undef PAIR_INSTANCE
#undef PAIR_ENTRY
#undef PAIR_IMPL
#undef PAIR_LOOP
#undef PAIR_NAME
#undef PAIR_FALLBACK
#undef PAIR_WBLK
#undef PAIR_SHIFT
#undef PAIR_ISUMS
