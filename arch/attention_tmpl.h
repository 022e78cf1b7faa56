/* Template: the grouped-query attention kernels (scores and accumulation
 * over F32 / F16 / Q8_0 caches) and the single-head Q8_0 ones, for a SIMD
 * backend whose vector holds AT_W floats. Define before including:
 *   AT_T                   the vector type (a register, or a struct of them)
 *   AT_W                   floats per vector
 *   AT_NT                  accumulators per scores tile (R keys x C queries)
 *   AT_ZERO()              all lanes zero
 *   AT_FMA(acc, k, q)      acc + k * q, one fused multiply-add per lane
 *   AT_MUL_ADD(o, p, v)    o + p * v as a multiply, then an add (p a float)
 *   AT_LD_F32(p) / AT_LDP_F32(p, m)
 *                          AT_W floats at p; the first m < AT_W and zeros
 *                          after, reading only those m
 *   AT_ST_F32(p, v) / AT_STP_F32(p, m, v)
 *                          store all lanes; the first m lanes only
 *   AT_LD(kt, row, e) / AT_LDP(kt, row, e, m)
 *                          AT_W elements of a cache row from element e
 *                          (kt: KT_F32, KT_F16, KT_Q8; F32 / F16 rows are
 *                          at the head, Q8_0 rows at the row start with e
 *                          including the head's offset), as floats
 *   AT_TILE_OUT(acc, res, scale)
 *                          res[t] = scale * (the lane sum of acc[t]) for
 *                          t < AT_NT, each sum in the order of the
 *                          backend's single-head float kernels
 *   AT_JB                  V rows per accumulation block
 *   AT_TT                  accumulators per key-transposed scores tile
 *   AT_SET1(x)             every lane x
 *   AT_MUL(v, s)           v * s per lane (s a float)
 *   AT_FN(name)            a kernel's name, AT_LINKAGE its storage class
 *
 * Scores: every dot product takes exactly the operations of the backend's
 * single-head score kernel (arch/float_tmpl.h: lane l the elements
 * i = l (mod AT_W) in order with one FMA each, the tail one zero-padded
 * chunk, the backend's lane sum, then * scale), so a group score is
 * bit-identical to the single-head slot's. A tile is R keys x C queries
 * (R C = AT_NT): a key chunk is loaded (and converted) once for C queries.
 *
 * Accumulation: out[i] += p[j] * v_j[i], rows strictly in order, multiply
 * then add (no contraction): the same operations per element as generic,
 * so bit-identical to it for any split of rows or heads. A V chunk is
 * loaded once for up to 8 heads; rows go in blocks of AT_JB so a block's V
 * rows stay in L1 while every chunk of the head passes over them. */

/* ---- prefetching the cache rows ------------------------------------------
 * Decode reads every cached K and V row of a layer once, and the whole cache
 * does not stay in the caches from one token to the next. The hardware
 * prefetchers alone kept the loads in step with the arithmetic instead of
 * ahead of it, so the kernels ask for the rows they will need next: the
 * scores and the accumulation AT_PF_BYTES ahead.
 * A prefetch changes no result. */
#ifndef AT_PREFETCH
#define AT_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#endif
#ifndef AT_PF_BYTES
#define AT_PF_BYTES 4096
#endif

/* The bytes an item reads of a row: [*lo, *hi) from the row pointer, for
 * elements [e0, e0 + len) (F32 / F16 rows at the head; Q8_0 rows at the
 * row start, whole blocks). */
GL_ALWAYS_INLINE void row_span(const int kt, int e0, int len, size_t *lo, size_t *hi)
{
    if (kt == KT_F32) {
        *lo = (size_t)e0 * 4;
        *hi = (size_t)(e0 + len) * 4;
    } else if (kt == KT_F16) {
        *lo = (size_t)e0 * 2;
        *hi = (size_t)(e0 + len) * 2;
    } else {
        *lo = (size_t)(e0 / QK8_0) * sizeof(block_q8_0);
        *hi = (size_t)((e0 + len + QK8_0 - 1) / QK8_0) * sizeof(block_q8_0);
    }
}

/* Prefetches what an item reads of rows [r0, r1), rs apart. Rows that
 * follow each other in memory (a head-major cache, whose rows are exactly
 * the bytes read) are one run of lines: rows shorter than a line cost a
 * prefetch per line, not per row. */
GL_ALWAYS_INLINE void prefetch_rows(const int kt, const char *base, size_t rs, int r0, int r1,
                                    int e0, int len)
{
    size_t lo, hi;
    row_span(kt, e0, len, &lo, &hi);
    const bool run = hi - lo == rs;
    for (int r = r0; r < r1; r = run ? r1 : r + 1) {
        const uintptr_t from = (uintptr_t)base + (size_t)r * rs + lo;
        const uintptr_t to = (uintptr_t)base + (size_t)(run ? r1 - 1 : r) * rs + hi;
        for (uintptr_t a = from & ~(uintptr_t)63; a < to; a += 64)
            AT_PREFETCH((const char *)a);
    }
}

/* Whether an item's rows are worth prefetching: a stream shorter than
 * AT_PF_MIN bytes costs more in prefetch instructions than it waits for
 * (stories260K's 16-byte heads: attention 20 -> 25 us per token in cache
 * when every row was prefetched). */
#ifndef AT_PF_MIN
#define AT_PF_MIN 8192
#endif
GL_ALWAYS_INLINE bool prefetch_pays(const int kt, int n_rows, int e0, int len)
{
    size_t lo, hi;
    row_span(kt, e0, len, &lo, &hi);
    return (size_t)n_rows * (hi - lo) >= AT_PF_MIN;
}

/* rows far enough ahead to cover AT_PF_BYTES (2 to 64) */
GL_ALWAYS_INLINE int prefetch_rows_ahead(size_t rs)
{
    const size_t n = rs ? AT_PF_BYTES / rs : 2;
    return n < 2 ? 2 : n > 64 ? 64 : (int)n;
}

/* res[r * C + c] = scale * (q_c . key r); keys past m repeat key m - 1
 * (their results are not used). */
GL_ALWAYS_INLINE void scores_tile(const int kt, const int R, const int C, const char *k, size_t rs,
                                  int m, int e0, const float *const *qs, int len, float scale,
                                  float *res)
{
    const char *kr[AT_NT];
    for (int r = 0; r < R; r++)
        kr[r] = k + (size_t)(r < m ? r : m - 1) * rs;
    AT_T acc[AT_NT];
    for (int t = 0; t < AT_NT; t++)
        acc[t] = AT_ZERO();
    int i = 0;
    for (; i + AT_W <= len; i += AT_W)
        for (int r = 0; r < R; r++) {
            const AT_T kv = AT_LD(kt, kr[r], e0 + i);
            for (int c = 0; c < C; c++)
                acc[r * C + c] = AT_FMA(acc[r * C + c], kv, AT_LD_F32(qs[c] + i));
        }
    if (i < len)
        for (int r = 0; r < R; r++) {
            const AT_T kv = AT_LDP(kt, kr[r], e0 + i, len - i);
            for (int c = 0; c < C; c++)
                acc[r * C + c] = AT_FMA(acc[r * C + c], kv, AT_LDP_F32(qs[c] + i, len - i));
        }
    AT_TILE_OUT(acc, res, scale);
}

GL_ALWAYS_INLINE void scores_rc(const int kt, const int C, float *scores, size_t ss, const float *q,
                                size_t qstr, int nq, const void *k, size_t rs, int nk, int e0,
                                int len, float scale)
{
    const int R = AT_NT / C;
    const int ahead = prefetch_pays(kt, nk, e0, len) ? prefetch_rows_ahead(rs) : nk;
    for (int j = 0; j < nk; j += R) {
        const int m = nk - j < R ? nk - j : R;
        if (j + ahead < nk)
            prefetch_rows(kt, (const char *)k, rs, j + ahead,
                          j + ahead + R < nk ? j + ahead + R : nk, e0, len);
        for (int h = 0; h < nq; h += C) {
            const int nc = nq - h < C ? nq - h : C;
            const float *qs[8];
            for (int c = 0; c < C; c++)
                qs[c] = q + (size_t)(h + (c < nc ? c : nc - 1)) * qstr;
            float res[AT_NT];
            scores_tile(kt, R, C, (const char *)k + (size_t)j * rs, rs, m, e0, qs, len, scale, res);
            for (int c = 0; c < nc; c++)
                for (int r = 0; r < m; r++)
                    scores[(size_t)(h + c) * ss + j + r] = res[r * C + c];
        }
    }
}

GL_ALWAYS_INLINE void scores_g(const int kt, float *scores, size_t ss, const float *q, size_t qstr,
                               int nq, const void *k, size_t rs, int nk, int e0, int len,
                               float scale)
{
    const int C = nq >= 8 ? 8 : nq >= 4 ? 4 : nq >= 2 ? 2 : 1;
    switch (C) { /* constant tile shapes, so each unrolls */
    case 8: scores_rc(kt, 8, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale); break;
    case 4: scores_rc(kt, 4, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale); break;
    case 2: scores_rc(kt, 2, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale); break;
    default: scores_rc(kt, 1, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale); break;
    }
}

/* ---- scores over key-transposed blocks ----------------------------------
 * A vector holds AT_W keys of a block row (one dimension), so a key's dot
 * product stays in its lane: one FMA per dimension in order from zero, then
 * * scale, the exact definition of kernels.h (no lane sums, and bit-identical
 * to generic). A tile is NB blocks x C queries (NB AT_KV C <= AT_TT
 * accumulators): each block row is loaded (and converted) once for C
 * queries, and NB blocks give the FMA chains of few queries company. */
#define AT_KV (GL_KT_BLOCK / AT_W) /* vectors per block row */

/* res[c * rs + b * GL_KT_BLOCK + l] = scale * (q_c . key l of block b) */
GL_ALWAYS_INLINE void kt_tile(const int kt, const int NB, const int C, const char *blk, size_t bb,
                              const float *const *qs, int len, float scale, float *res, int rs,
                              const char *pf)
{
    const size_t row = (size_t)GL_KT_BLOCK * (kt == KT_F16 ? 2 : 4);
    const int per_line = row < 64 ? (int)(64 / row) : 1; /* block rows per cache line */
    AT_T acc[AT_TT];
    for (int t = 0; t < NB * AT_KV * C; t++)
        acc[t] = AT_ZERO();
    for (int d = 0; d < len; d++) {
        /* the same rows of a tile further on: a line per block every
         * per_line rows, spread over the tile's arithmetic */
        if (pf && d % per_line == 0)
            for (int b = 0; b < NB; b++)
                for (size_t o = 0; o < row; o += 64)
                    AT_PREFETCH(pf + (size_t)b * bb + (size_t)d * row + o);
        AT_T kv[AT_TT];
        for (int b = 0; b < NB; b++)
            for (int v = 0; v < AT_KV; v++)
                kv[b * AT_KV + v] = AT_LD(kt, blk + (size_t)b * bb + (size_t)d * row, v * AT_W);
        for (int c = 0; c < C; c++) {
            const AT_T qv = AT_SET1(qs[c][d]);
            for (int t = 0; t < NB * AT_KV; t++)
                acc[c * NB * AT_KV + t] = AT_FMA(acc[c * NB * AT_KV + t], kv[t], qv);
        }
    }
    for (int c = 0; c < C; c++)
        for (int t = 0; t < NB * AT_KV; t++)
            AT_ST_F32(res + c * rs + t * AT_W, AT_MUL(acc[c * NB * AT_KV + t], scale));
}

GL_ALWAYS_INLINE void kt_scores_c(const int kt, const int C, float *scores, size_t ss,
                                  const float *q, size_t qstr, int nq, const char *k, int lane0,
                                  int nk, int len, float scale)
{
    const int NB = AT_TT / (AT_KV * C) > 0 ? AT_TT / (AT_KV * C) : 1;
    const size_t bb = (size_t)len * GL_KT_BLOCK * (kt == KT_F16 ? 2 : 4); /* block bytes */
    const int nblk = (lane0 + nk + GL_KT_BLOCK - 1) / GL_KT_BLOCK;
    const bool pf = (size_t)nblk * bb >= AT_PF_MIN;
    const int ahead = (int)(AT_PF_BYTES / (NB * bb)) + 1; /* tiles */
    float res[AT_TT * GL_KT_BLOCK];                       /* C NB <= AT_TT */
    for (int b0 = 0; b0 < nblk; b0 += NB) {
        const int nbk = nblk - b0 < NB ? nblk - b0 : NB;
        const char *blk = k + (size_t)b0 * bb;
        const char *pfb = pf && b0 + ahead * NB + NB <= nblk ? blk + (size_t)ahead * NB * bb : NULL;
        /* keys [j0, j1) of this tile, at res offset j0 - first */
        const int first = b0 * GL_KT_BLOCK - lane0;
        const int j0 = first > 0 ? first : 0;
        const int j1 = first + nbk * GL_KT_BLOCK < nk ? first + nbk * GL_KT_BLOCK : nk;
        for (int h = 0; h < nq; h += C) {
            const int nc = nq - h < C ? nq - h : C;
            const float *qs[8];
            for (int c = 0; c < C; c++)
                qs[c] = q + (size_t)(h + (c < nc ? c : nc - 1)) * qstr;
            if (nbk == NB)
                kt_tile(kt, NB, C, blk, bb, qs, len, scale, res, NB * GL_KT_BLOCK,
                        h == 0 ? pfb : NULL);
            else
                for (int b = 0; b < nbk; b++)
                    kt_tile(kt, 1, C, blk + (size_t)b * bb, bb, qs, len, scale,
                            res + b * GL_KT_BLOCK, NB * GL_KT_BLOCK, NULL);
            for (int c = 0; c < nc; c++)
                memcpy(scores + (size_t)(h + c) * ss + j0,
                       res + c * NB * GL_KT_BLOCK + (j0 - first),
                       (size_t)(j1 - j0) * sizeof(float));
        }
    }
}

GL_ALWAYS_INLINE void kt_scores(const int kt, float *scores, size_t ss, const float *q, size_t qstr,
                                int nq, const void *k, int lane0, int nk, int len, float scale)
{
    const char *kb = (const char *)k;
    if (nq >= 8 && AT_KV * 8 <= AT_TT)
        kt_scores_c(kt, AT_KV * 8 <= AT_TT ? 8 : 1, scores, ss, q, qstr, nq, kb, lane0, nk, len,
                    scale);
    else if (nq >= 4 && AT_KV * 4 <= AT_TT)
        kt_scores_c(kt, AT_KV * 4 <= AT_TT ? 4 : 1, scores, ss, q, qstr, nq, kb, lane0, nk, len,
                    scale);
    else if (nq >= 2)
        kt_scores_c(kt, 2, scores, ss, q, qstr, nq, kb, lane0, nk, len, scale);
    else
        kt_scores_c(kt, 1, scores, ss, q, qstr, nq, kb, lane0, nk, len, scale);
}

/* Elements [i, i + S AT_W) (FULL; else S = 1 and [i, i + m), m < AT_W) of
 * HB heads over nr rows. Each output vector is one chain of dependent adds
 * over the rows, so a block of few heads keeps S slices' chains in flight
 * (HB S <= 8). Each element still sees its rows in order. With pf, the
 * pass also asks for the lines [lo, hi) of row j at pf (rows j < npf) as it
 * reads row j: one row of prefetches per row of loads. */
GL_ALWAYS_INLINE void accum_blk(const int kt, const int HB, const int S, const int FULL, float *out,
                                size_t os, const float *p, size_t ps, const char *v, size_t rs,
                                int nr, int e0, int i, int m, const char *pf, int npf, size_t lo,
                                size_t hi)
{
    AT_T o[8];
    for (int h = 0; h < HB; h++)
        for (int s = 0; s < S; s++)
            o[h * S + s] =
                FULL ? AT_LD_F32(out + h * os + i + s * AT_W) : AT_LDP_F32(out + h * os + i, m);
    uintptr_t pf_end = 0; /* end of the lines asked for: rows under a line share one */
    for (int j = 0; j < nr; j++) {
        const char *vr = v + (size_t)j * rs;
        if (pf && j < npf) {
            const uintptr_t a0 = (uintptr_t)(pf + (size_t)j * rs);
            uintptr_t a = (a0 + lo) & ~(uintptr_t)63;
            for (a = a > pf_end ? a : pf_end; a < a0 + hi; a += 64)
                AT_PREFETCH((const char *)a);
            pf_end = a;
        }
        AT_T vv[4];
        for (int s = 0; s < S; s++)
            vv[s] = FULL ? AT_LD(kt, vr, e0 + i + s * AT_W) : AT_LDP(kt, vr, e0 + i, m);
        for (int h = 0; h < HB; h++)
            for (int s = 0; s < S; s++)
                o[h * S + s] = AT_MUL_ADD(o[h * S + s], p[h * ps + j], vv[s]);
    }
    for (int h = 0; h < HB; h++)
        for (int s = 0; s < S; s++) {
            if (FULL)
                AT_ST_F32(out + h * os + i + s * AT_W, o[h * S + s]);
            else
                AT_STP_F32(out + h * os + i, m, o[h * S + s]);
        }
}

/* What a pass prefetches: lines [lo, hi) of rows [0, n) from p, one row a
 * row of the pass (p NULL: none) */
typedef struct at_pf {
    const char *p;
    int n;
    size_t lo, hi;
} at_pf;

/* HB heads (a block of 8, 4, 2 or 1), n slices from element i (FULL; else
 * one partial slice of m), up to S at a time; the first call takes pf */
GL_ALWAYS_INLINE void accum_slices(const int kt, const int HB, const int S, const int FULL,
                                   const int n, float *out, size_t os, const float *p, size_t ps,
                                   const char *v, size_t rs, int nr, int e0, int i, int m,
                                   at_pf *pf)
{
    int s = 0;
    for (; S > 1 && n - s >= S; s += S) {
        accum_blk(kt, HB, S, FULL, out, os, p, ps, v, rs, nr, e0, i + s * AT_W, m, pf->p, pf->n,
                  pf->lo, pf->hi);
        pf->p = NULL;
    }
    for (; s < n; s++) {
        accum_blk(kt, HB, 1, FULL, out, os, p, ps, v, rs, nr, e0, i + s * AT_W, m, pf->p, pf->n,
                  pf->lo, pf->hi);
        pf->p = NULL;
    }
}

GL_ALWAYS_INLINE void accum_heads(const int kt, const int FULL, const int n, float *out, size_t os,
                                  const float *p, size_t ps, int nq, const char *v, size_t rs,
                                  int nr, int e0, int i, int m, at_pf pf)
{
    int h = 0;
    for (; h + 8 <= nq; h += 8)
        accum_slices(kt, 8, 1, FULL, n, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m, &pf);
    if (nq - h >= 4) {
        accum_slices(kt, 4, 2, FULL, n, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m, &pf);
        h += 4;
    }
    if (nq - h >= 2) {
        accum_slices(kt, 2, 4, FULL, n, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m, &pf);
        h += 2;
    }
    if (nq - h >= 1)
        accum_slices(kt, 1, 4, FULL, n, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m, &pf);
}

/* Full slices a pass takes at once, for the blocks of fewer than 8 heads
 * (accum_blk): Qwen3-0.6B (2 query heads per KV head, head_dim 128),
 * prefill of 1024 tokens, 1 thread, Zen 5, three paired rounds: 217-253 ->
 * 245-275 tok/s with four (one before). */
#ifndef AT_SLICES
#define AT_SLICES 4
#endif

/* A block's first pass asks for the whole of the row prefetch_rows_ahead
 * rows further on as it reads each row (the item's first rows are asked for
 * by its caller), so the later passes find their lines in L1 and the
 * prefetches go out in the order of the loads, a few at a time. Asking for
 * the next block in a share before each pass instead put bursts of up to
 * 128 prefetches in front of the loads, and the core waited on them: Qwen3
 * shape (2 x 128), 160 positions, accumulation alone from DRAM 12-18 GB/s
 * (bench/attn_stream). */
GL_ALWAYS_INLINE void accum_g(const int kt, float *out, size_t os, const float *p, size_t ps,
                              int nq, const void *v, size_t rs, int nr, int e0, int len)
{
    const int ahead = prefetch_pays(kt, nr, e0, len) ? prefetch_rows_ahead(rs) : nr;
    const int passes = (len + AT_W - 1) / AT_W, full = len / AT_W;
    size_t lo, hi;
    row_span(kt, e0, len, &lo, &hi);
    for (int j0 = 0; j0 < nr; j0 += AT_JB) {
        const int jn = nr - j0 < AT_JB ? nr - j0 : AT_JB;
        const char *vb = (const char *)v + (size_t)j0 * rs;
        const int left = nr - j0 - ahead; /* rows to ask for from vb + ahead rows on */
        at_pf pf = { left > 0 ? vb + (size_t)ahead * rs : NULL, left < jn ? left : jn, lo, hi };
        /* full slices AT_SLICES at a time, then any partial one */
        for (int c = 0; c < passes;) {
            const int i = c * AT_W;
            const int n = full - c >= AT_SLICES ? AT_SLICES : full - c > 0 ? full - c : 1;
            if (i + AT_W <= len)
                accum_heads(kt, 1, n, out, os, p + j0, ps, nq, vb, rs, jn, e0, i, AT_W, pf);
            else
                accum_heads(kt, 0, 1, out, os, p + j0, ps, nq, vb, rs, jn, e0, i, len - i, pf);
            pf.p = NULL;
            c += n;
        }
    }
}

AT_LINKAGE GL_DECL_ATTN_SCORES_G_FN(AT_FN(attn_scores_g_f32))
{
    scores_g(KT_F32, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, 0, len, scale);
}
AT_LINKAGE GL_DECL_ATTN_SCORES_G_FN(AT_FN(attn_scores_g_f16))
{
    scores_g(KT_F16, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, 0, len, scale);
}
AT_LINKAGE GL_DECL_ATTN_SCORES_Q8_G_FN(AT_FN(attn_scores_q8_g))
{
    scores_g(KT_Q8, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, off, len,
             scale);
}
AT_LINKAGE GL_DECL_ATTN_ACCUM_G_FN(AT_FN(attn_accum_g_f32))
{
    accum_g(KT_F32, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, 0, len);
}
AT_LINKAGE GL_DECL_ATTN_ACCUM_G_FN(AT_FN(attn_accum_g_f16))
{
    accum_g(KT_F16, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, 0, len);
}
AT_LINKAGE GL_DECL_ATTN_ACCUM_Q8_G_FN(AT_FN(attn_accum_q8_g))
{
    accum_g(KT_Q8, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, off, len);
}

AT_LINKAGE GL_DECL_ATTN_SCORES_T_FN(AT_FN(attn_scores_t_f32))
{
    kt_scores(KT_F32, scores, scores_stride, q, q_stride, n_q, k, lane0, n_keys, len, scale);
}
AT_LINKAGE GL_DECL_ATTN_SCORES_T_FN(AT_FN(attn_scores_t_f16))
{
    kt_scores(KT_F16, scores, scores_stride, q, q_stride, n_q, k, lane0, n_keys, len, scale);
}

/* single-head Q8_0: one query of the group forms */
AT_LINKAGE GL_DECL_ATTN_SCORES_Q8_FN(AT_FN(attn_scores_q8))
{
    scores_g(KT_Q8, scores, 0, q, 0, 1, k, row_stride, n_keys, off, len, scale);
}
AT_LINKAGE GL_DECL_ATTN_ACCUM_Q8_FN(AT_FN(attn_accum_q8))
{
    accum_g(KT_Q8, out, 0, p, 0, 1, v, row_stride, n_rows, off, len);
}
