/* AVX-512 attention kernels, included by kernels.c (static functions, so
 * the native and the SIMDe builds each get their own): the grouped-query
 * forms over F32 / F16 / Q8_0 caches and the single-head Q8_0 ones.
 *
 * Scores: each dot product takes exactly the operations of kernels.c's
 * DEF_F5SCORES (16 lanes, lane l the elements i = l (mod 16) in order with
 * one FMA each, the len % 16 tail one zero-padded chunk, gl512_hsum_ps's
 * order, then * scale), so a group score is bit-identical to the
 * single-head slot's. A tile is R keys x C queries, R C = 16 accumulators;
 * their lane sums are reduced 8 at a time by gl_hsum8x8_ps after
 * gl512_hsum_ps's first step (lo256 + hi256).
 *
 * Accumulation: out[i] += p[j] * v_j[i], rows in order, multiply then add,
 * 16 elements x up to 8 heads per pass over a block of JB5 rows:
 * bit-identical to generic, as in arch/x86/avx2/attention.c. Q8_0 elements
 * are d * q, exact in float. */

enum { KT5_F32, KT5_F16, KT5_Q8 };
#define JB5 64 /* V rows per block */

GL_ALWAYS_INLINE float q8_d5(const block_q8_0 *b)
{
    uint16_t d;
    memcpy(&d, &b->d, 2);
    return gl_h2f(d);
}

/* Elements [e, e + m) of a Q8_0 row (m <= 16), zeros after. */
GL_ALWAYS_INLINE __m512 ldp16_q8(const void *row, int e, int m)
{
    float t[16] = { 0 };
    for (int k = 0; k < m; k++) {
        const block_q8_0 *b = (const block_q8_0 *)row + (e + k) / QK8_0;
        t[k] = q8_d5(b) * b->qs[(e + k) % QK8_0];
    }
    return _mm512_loadu_ps(t);
}

GL_ALWAYS_INLINE __m512 ld16_q8(const void *row, int e)
{
    const block_q8_0 *b = (const block_q8_0 *)row + e / QK8_0;
    const int o = e % QK8_0;
    if (__builtin_expect(o <= QK8_0 - 16, 1)) {
        const __m128i raw = _mm_loadu_si128((const __m128i *)(b->qs + o));
#ifdef GL_USE_SIMDE /* this SIMDe release lacks the two conversions: by halves */
        const __m512 qf =
            gl512_from_halves(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(raw)),
                              _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(raw, 8))));
#else
        const __m512 qf = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(raw));
#endif
        return _mm512_mul_ps(qf, _mm512_set1_ps(q8_d5(b)));
    }
    return ldp16_q8(row, e, 16);
}

/* 16 elements of a row from element e (F32 / F16: row at the head; Q8_0:
 * row start, e includes the head's offset); the _p form reads only m < 16
 * and gives zeros after. */
GL_ALWAYS_INLINE __m512 ld16(const int kt, const void *row, int e)
{
    if (kt == KT5_F32)
        return _mm512_loadu_ps((const float *)row + e);
    if (kt == KT5_F16)
        return gl512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)row + e)));
    return ld16_q8(row, e);
}

GL_ALWAYS_INLINE __m512 ldp16(const int kt, const void *row, int e, int m)
{
    if (kt == KT5_F32)
        return gl512_load_part_ps((const float *)row + e, m);
    if (kt == KT5_F16)
        return gl512_cvtph_ps(gl512_load_part_u16((const uint16_t *)row + e, m));
    return ldp16_q8(row, e, m);
}

/* lane k = gl512_hsum_ps(a[k]) for 8 vectors */
GL_ALWAYS_INLINE __m256 hsum16x8(const __m512 *a)
{
    __m256 h[8];
    for (int k = 0; k < 8; k++)
        h[k] = _mm256_add_ps(_mm512_castps512_ps256(a[k]),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a[k]), 1)));
    return gl_hsum8x8_ps(h);
}

/* res[r * C + c] = scale * (q_c . key r), R C == 16; keys past m repeat
 * key m - 1 (results unused). */
GL_ALWAYS_INLINE void scores5_tile(const int kt, const int R, const int C, const char *k, size_t rs,
                                   int m, int e0, const float *const *qs, int len, float scale,
                                   float *res)
{
    const char *kr[16];
    for (int r = 0; r < R; r++)
        kr[r] = k + (size_t)(r < m ? r : m - 1) * rs;
    __m512 acc[16];
    for (int t = 0; t < 16; t++)
        acc[t] = _mm512_setzero_ps();
    int i = 0;
    for (; i + 16 <= len; i += 16)
        for (int r = 0; r < R; r++) {
            const __m512 kv = ld16(kt, kr[r], e0 + i);
            for (int c = 0; c < C; c++)
                acc[r * C + c] = _mm512_fmadd_ps(kv, _mm512_loadu_ps(qs[c] + i), acc[r * C + c]);
        }
    if (i < len)
        for (int r = 0; r < R; r++) {
            const __m512 kv = ldp16(kt, kr[r], e0 + i, len - i);
            for (int c = 0; c < C; c++)
                acc[r * C + c] =
                    _mm512_fmadd_ps(kv, gl512_load_part_ps(qs[c] + i, len - i), acc[r * C + c]);
        }
    const __m256 vs = _mm256_set1_ps(scale);
    _mm256_storeu_ps(res, _mm256_mul_ps(hsum16x8(acc), vs));
    _mm256_storeu_ps(res + 8, _mm256_mul_ps(hsum16x8(acc + 8), vs));
}

GL_ALWAYS_INLINE void scores5_rc(const int kt, const int R, const int C, float *scores, size_t ss,
                                 const float *q, size_t qstr, int nq, const void *k, size_t rs,
                                 int nk, int e0, int len, float scale)
{
    for (int j = 0; j < nk; j += R) {
        const int m = nk - j < R ? nk - j : R;
        for (int h = 0; h < nq; h += C) {
            const int nc = nq - h < C ? nq - h : C;
            const float *qs[16];
            for (int c = 0; c < C; c++)
                qs[c] = q + (size_t)(h + (c < nc ? c : nc - 1)) * qstr;
            float res[16];
            scores5_tile(kt, R, C, (const char *)k + (size_t)j * rs, rs, m, e0, qs, len, scale,
                         res);
            for (int c = 0; c < nc; c++)
                for (int r = 0; r < m; r++)
                    scores[(size_t)(h + c) * ss + j + r] = res[r * C + c];
        }
    }
}

GL_ALWAYS_INLINE void scores5_g(const int kt, float *scores, size_t ss, const float *q, size_t qstr,
                                int nq, const void *k, size_t rs, int nk, int e0, int len,
                                float scale)
{
    if (nq >= 8)
        scores5_rc(kt, 2, 8, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else if (nq >= 4)
        scores5_rc(kt, 4, 4, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else if (nq >= 2)
        scores5_rc(kt, 8, 2, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else
        scores5_rc(kt, 16, 1, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
}

/* Elements [i, i + m) (m <= 16, FULL: m == 16) of HB heads over nr rows. */
GL_ALWAYS_INLINE void accum5_blk(const int kt, const int HB, const int FULL, float *out, size_t os,
                                 const float *p, size_t ps, const char *v, size_t rs, int nr,
                                 int e0, int i, int m)
{
    __m512 o[8];
    for (int h = 0; h < HB; h++)
        o[h] = FULL ? _mm512_loadu_ps(out + h * os + i) : gl512_load_part_ps(out + h * os + i, m);
    for (int j = 0; j < nr; j++) {
        const char *vr = v + (size_t)j * rs;
        const __m512 vv = FULL ? ld16(kt, vr, e0 + i) : ldp16(kt, vr, e0 + i, m);
        for (int h = 0; h < HB; h++)
            o[h] = _mm512_add_ps(o[h], _mm512_mul_ps(_mm512_set1_ps(p[h * ps + j]), vv));
    }
    for (int h = 0; h < HB; h++) {
        if (FULL) {
            _mm512_storeu_ps(out + h * os + i, o[h]);
        } else {
            float t[16];
            _mm512_storeu_ps(t, o[h]);
            memcpy(out + h * os + i, t, (size_t)m * sizeof(float));
        }
    }
}

GL_ALWAYS_INLINE void accum5_heads(const int kt, const int FULL, float *out, size_t os,
                                   const float *p, size_t ps, int nq, const char *v, size_t rs,
                                   int nr, int e0, int i, int m)
{
    int h = 0;
    for (; h + 8 <= nq; h += 8)
        accum5_blk(kt, 8, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
    if (nq - h >= 4) {
        accum5_blk(kt, 4, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
        h += 4;
    }
    if (nq - h >= 2) {
        accum5_blk(kt, 2, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
        h += 2;
    }
    if (nq - h >= 1)
        accum5_blk(kt, 1, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
}

GL_ALWAYS_INLINE void accum5_g(const int kt, float *out, size_t os, const float *p, size_t ps,
                               int nq, const void *v, size_t rs, int nr, int e0, int len)
{
    for (int j0 = 0; j0 < nr; j0 += JB5) {
        const int jn = nr - j0 < JB5 ? nr - j0 : JB5;
        const char *vb = (const char *)v + (size_t)j0 * rs;
        int i = 0;
        for (; i + 16 <= len; i += 16)
            accum5_heads(kt, 1, out, os, p + j0, ps, nq, vb, rs, jn, e0, i, 16);
        if (i < len)
            accum5_heads(kt, 0, out, os, p + j0, ps, nq, vb, rs, jn, e0, i, len - i);
    }
}

static GL_DECL_ATTN_SCORES_G_FN(attn_scores_g_f32_512)
{
    scores5_g(KT5_F32, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, 0, len,
              scale);
}
static GL_DECL_ATTN_SCORES_G_FN(attn_scores_g_f16_512)
{
    scores5_g(KT5_F16, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, 0, len,
              scale);
}
static GL_DECL_ATTN_SCORES_Q8_G_FN(attn_scores_q8_g_512)
{
    scores5_g(KT5_Q8, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, off, len,
              scale);
}
static GL_DECL_ATTN_ACCUM_G_FN(attn_accum_g_f32_512)
{
    accum5_g(KT5_F32, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, 0, len);
}
static GL_DECL_ATTN_ACCUM_G_FN(attn_accum_g_f16_512)
{
    accum5_g(KT5_F16, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, 0, len);
}
static GL_DECL_ATTN_ACCUM_Q8_G_FN(attn_accum_q8_g_512)
{
    accum5_g(KT5_Q8, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, off, len);
}

/* single-head Q8_0: one query of the group forms */
static GL_DECL_ATTN_SCORES_Q8_FN(attn_scores_q8_512)
{
    scores5_g(KT5_Q8, scores, 0, q, 0, 1, k, row_stride, n_keys, off, len, scale);
}
static GL_DECL_ATTN_ACCUM_Q8_FN(attn_accum_q8_512)
{
    accum5_g(KT5_Q8, out, 0, p, 0, 1, v, row_stride, n_rows, off, len);
}

/* the slots above, over the table kernels.c has filled */
static void attn_init_512(gl_kernels *k)
{
    k->attn_scores_g[GL_KV_F32] = attn_scores_g_f32_512;
    k->attn_scores_g[GL_KV_F16] = attn_scores_g_f16_512;
    k->attn_accum_g[GL_KV_F32] = attn_accum_g_f32_512;
    k->attn_accum_g[GL_KV_F16] = attn_accum_g_f16_512;
    k->attn_scores_q8 = attn_scores_q8_512;
    k->attn_accum_q8 = attn_accum_q8_512;
    k->attn_scores_q8_g = attn_scores_q8_g_512;
    k->attn_accum_q8_g = attn_accum_q8_g_512;
}
