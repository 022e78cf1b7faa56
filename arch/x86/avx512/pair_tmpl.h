/* Template: decode (nb == 1) over an x8 layout with zmm, two neighbouring
 * 8-row groups side by side in one register (lanes 0-7: group g, lanes
 * 8-15: group g + 1), so each vector op covers 16 rows, and PAIR_NZ
 * registers per call: 2 PAIR_NZ groups, each its own prefetched stream.
 * At decode the weights stream from DRAM; fewer uops per byte and several
 * streams per core both let a core keep more of it in flight (bench/matvec,
 * 2 threads, Q4_0x8 2048x5632: one group per ymm ~25 GB/s, one pair ~27,
 * four pairs ~29). Used for Q8_0x8; Q4_0 went further with a 16-row layout
 * (Q4_0x16, no inserts: ~33 GB/s on the same shape).
 *
 * Included once per layout with:
 *   PAIR_NAME       name of the generated GL_DECL_MATMUL_FN (static)
 *   PAIR_FALLBACK   the layout's x8 kernel, for nb > 1, rows outside whole
 *                   16-row pairs and reductions over PAIR_MAXB blocks
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
enum { PAIR_MAXB = 1024 };
#ifndef PAIR_NZ
#define PAIR_NZ 4
#endif
#endif

#define PAIR_CAT2(a, b) a##b
#define PAIR_CAT(a, b)  PAIR_CAT2(a, b)
#define PAIR_LOOP       PAIR_CAT(PAIR_NAME, _pairs)

/* nz registers of two groups each: groups w .. w + 2 nz - 1, gb bytes apart */
GL_ALWAYS_INLINE void PAIR_LOOP(const char *w, size_t gb, const block_q8_0 *x, const int32_t *corr,
                                const float *dx, int nblk, float *y, const int nz)
{
    const size_t gbytes = (size_t)nblk * sizeof(PAIR_WBLK);
    const size_t skip = (size_t)(2 * nz - 1) * gb;
    __m512 acc[4];
    for (int z = 0; z < nz; z++)
        acc[z] = _mm512_setzero_ps();
    for (int b = 0; b < nblk; b++) {
        /* each stream prefetches its own group; past the group's end, the
         * same offset in the group it reads next (2 nz groups on), so the
         * next call's streams are already in flight when it starts */
        gl_prefetch_streams(w, gb, 2 * nz, (size_t)b * sizeof(PAIR_WBLK), sizeof(PAIR_WBLK), gbytes,
                            skip);
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

static GL_DECL_MATMUL_FN(PAIR_NAME)
{
    const int nblk = n / QK8_0;
    const int p0 = (r0 + 15) / 16, p1 = r1 / 16; /* whole 16-row pairs */
    if (nb != 1 || nblk > PAIR_MAXB || p0 >= p1) {
        PAIR_FALLBACK(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb);
        return;
    }
    const block_q8_0 *xb = x;
    int32_t corr[PAIR_MAXB];
    float dx[PAIR_MAXB];
    gl_x8_col_prep(xb, nblk, PAIR_SHIFT, corr, dx);
    if (r0 < p0 * 16)
        PAIR_FALLBACK(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, p0 * 16, 1);
    int p = p0;
    for (; p + PAIR_NZ <= p1; p += PAIR_NZ)
        PAIR_LOOP((const char *)w + (size_t)(2 * p) * w_row_bytes, w_row_bytes, xb, corr, dx, nblk,
                  y + (size_t)p * 16, PAIR_NZ);
    for (; p + 2 <= p1; p += 2)
        PAIR_LOOP((const char *)w + (size_t)(2 * p) * w_row_bytes, w_row_bytes, xb, corr, dx, nblk,
                  y + (size_t)p * 16, 2);
    for (; p < p1; p++)
        PAIR_LOOP((const char *)w + (size_t)(2 * p) * w_row_bytes, w_row_bytes, xb, corr, dx, nblk,
                  y + (size_t)p * 16, 1);
    if (p1 * 16 < r1)
        PAIR_FALLBACK(w, w_row_bytes, x, x_stride, y, y_stride, n, p1 * 16, r1, 1);
}

#undef PAIR_LOOP
#undef PAIR_NAME
#undef PAIR_FALLBACK
#undef PAIR_WBLK
#undef PAIR_SHIFT
#undef PAIR_ISUMS
