/* AVX2 attention kernels: the grouped-query forms over F32 / F16 / Q8_0
 * caches, and the single-head Q8_0 ones (the single-head F32 / F16 ones are
 * in float.c).
 *
 * Scores: a dot product is accumulated exactly as float.c's DEF_SCORES does
 * it (8 lanes, lane l takes the elements i = l (mod 8) in order with one
 * FMA each, the len % 8 tail one zero-padded chunk, the lanes summed in
 * gl_hsum8_ps's order, then one multiply by scale), so every score is
 * bit-identical to gl_attn_scores_*_avx2's for the same head. A tile is R
 * keys x C queries (R C = 8 accumulators): a key chunk is loaded (and
 * converted) once for C queries, and the 8 lane sums are reduced together
 * by gl_hsum8x8_ps (util.h), which performs gl_hsum8_ps's additions
 * lane-parallel.
 *
 * Accumulation: out[i] += p[j] * v_j[i], rows strictly in order, multiply
 * then add: the same operations per element as generic, so bit-identical
 * to it (and to the single-head kernels) for any split of rows or heads.
 * A V chunk is loaded once for up to 8 heads; rows go in blocks of JB so a
 * block's V rows stay in L1 while every chunk of the head passes over them.
 *
 * Q8_0 elements are d * q, exact in float (11 x 8 significant bits), so a
 * Q8_0 cache behaves exactly like the F32 cache of its dequantized values. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/util.h"

#include "half.h"
#include "quant.h"

enum { KT_F32, KT_F16, KT_Q8 };
#define JB 64 /* V rows per block */

GL_ALWAYS_INLINE float q8_d(const block_q8_0 *b)
{
    uint16_t d;
    memcpy(&d, &b->d, 2);
    return gl_h2f(d);
}

/* Elements [e, e + m) of a Q8_0 row (m <= 8), zeros after. */
GL_ALWAYS_INLINE __m256 ldp8_q8(const void *row, int e, int m)
{
    float t[8] = { 0 };
    for (int k = 0; k < m; k++) {
        const block_q8_0 *b = (const block_q8_0 *)row + (e + k) / QK8_0;
        t[k] = q8_d(b) * b->qs[(e + k) % QK8_0];
    }
    return _mm256_loadu_ps(t);
}

GL_ALWAYS_INLINE __m256 ld8_q8(const void *row, int e)
{
    const block_q8_0 *b = (const block_q8_0 *)row + e / QK8_0;
    const int o = e % QK8_0;
    if (__builtin_expect(o <= QK8_0 - 8, 1)) {
        int64_t raw;
        memcpy(&raw, b->qs + o, 8);
        const __m256 qf = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(raw)));
        return _mm256_mul_ps(qf, _mm256_set1_ps(q8_d(b)));
    }
    return ldp8_q8(row, e, 8);
}

/* 8 elements of a row from element e; for F32 / F16 the row pointer is at
 * the head, for Q8_0 at the row start (e includes the head's offset). */
GL_ALWAYS_INLINE __m256 ld8(const int kt, const void *row, int e)
{
    if (kt == KT_F32)
        return _mm256_loadu_ps((const float *)row + e);
    if (kt == KT_F16)
        return gl_load8_f16((const uint16_t *)row + e);
    return ld8_q8(row, e);
}

/* the first m < 8 of them, zeros after; reads only those m */
GL_ALWAYS_INLINE __m256 ldp8(const int kt, const void *row, int e, int m)
{
    if (kt == KT_F32)
        return gl_load_part_f32((const float *)row + e, m);
    if (kt == KT_F16)
        return _mm256_cvtph_ps(gl_load_part_u16((const uint16_t *)row + e, m));
    return ldp8_q8(row, e, m);
}

/* res[r * C + c] = scale * (q_c . key r), R C == 8; keys past m repeat key
 * m - 1 (their results are not used). */
GL_ALWAYS_INLINE void scores_tile(const int kt, const int R, const int C, const char *k, size_t rs,
                                  int m, int e0, const float *const *qs, int len, float scale,
                                  float *res)
{
    const char *kr[8];
    for (int r = 0; r < R; r++)
        kr[r] = k + (size_t)(r < m ? r : m - 1) * rs;
    __m256 acc[8];
    for (int t = 0; t < 8; t++)
        acc[t] = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= len; i += 8)
        for (int r = 0; r < R; r++) {
            const __m256 kv = ld8(kt, kr[r], e0 + i);
            for (int c = 0; c < C; c++)
                acc[r * C + c] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(qs[c] + i), acc[r * C + c]);
        }
    if (i < len)
        for (int r = 0; r < R; r++) {
            const __m256 kv = ldp8(kt, kr[r], e0 + i, len - i);
            for (int c = 0; c < C; c++)
                acc[r * C + c] =
                    _mm256_fmadd_ps(kv, gl_load_part_f32(qs[c] + i, len - i), acc[r * C + c]);
        }
    _mm256_storeu_ps(res, _mm256_mul_ps(gl_hsum8x8_ps(acc), _mm256_set1_ps(scale)));
}

GL_ALWAYS_INLINE void scores_rc(const int kt, const int R, const int C, float *scores, size_t ss,
                                const float *q, size_t qstr, int nq, const void *k, size_t rs,
                                int nk, int e0, int len, float scale)
{
    for (int j = 0; j < nk; j += R) {
        const int m = nk - j < R ? nk - j : R;
        for (int h = 0; h < nq; h += C) {
            const int nc = nq - h < C ? nq - h : C;
            const float *qs[8];
            for (int c = 0; c < C; c++)
                qs[c] = q + (size_t)(h + (c < nc ? c : nc - 1)) * qstr;
            float res[8];
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
    if (nq >= 8)
        scores_rc(kt, 1, 8, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else if (nq >= 4)
        scores_rc(kt, 2, 4, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else if (nq >= 2)
        scores_rc(kt, 4, 2, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else
        scores_rc(kt, 8, 1, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
}

/* Elements [i, i + m) (m <= 8, FULL: m == 8) of HB heads over nr rows. */
GL_ALWAYS_INLINE void accum_blk(const int kt, const int HB, const int FULL, float *out, size_t os,
                                const float *p, size_t ps, const char *v, size_t rs, int nr, int e0,
                                int i, int m)
{
    const __m256i mk = gl_tail_mask8(m);
    __m256 o[8];
    for (int h = 0; h < HB; h++)
        o[h] = FULL ? _mm256_loadu_ps(out + h * os + i) : _mm256_maskload_ps(out + h * os + i, mk);
    for (int j = 0; j < nr; j++) {
        const char *vr = v + (size_t)j * rs;
        const __m256 vv = FULL ? ld8(kt, vr, e0 + i) : ldp8(kt, vr, e0 + i, m);
        for (int h = 0; h < HB; h++)
            o[h] = _mm256_add_ps(o[h], _mm256_mul_ps(_mm256_set1_ps(p[h * ps + j]), vv));
    }
    for (int h = 0; h < HB; h++) {
        if (FULL)
            _mm256_storeu_ps(out + h * os + i, o[h]);
        else
            _mm256_maskstore_ps(out + h * os + i, mk, o[h]);
    }
}

GL_ALWAYS_INLINE void accum_heads(const int kt, const int FULL, float *out, size_t os,
                                  const float *p, size_t ps, int nq, const char *v, size_t rs,
                                  int nr, int e0, int i, int m)
{
    int h = 0;
    for (; h + 8 <= nq; h += 8)
        accum_blk(kt, 8, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
    if (nq - h >= 4) {
        accum_blk(kt, 4, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
        h += 4;
    }
    if (nq - h >= 2) {
        accum_blk(kt, 2, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
        h += 2;
    }
    if (nq - h >= 1)
        accum_blk(kt, 1, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
}

GL_ALWAYS_INLINE void accum_g(const int kt, float *out, size_t os, const float *p, size_t ps,
                              int nq, const void *v, size_t rs, int nr, int e0, int len)
{
    for (int j0 = 0; j0 < nr; j0 += JB) {
        const int jn = nr - j0 < JB ? nr - j0 : JB;
        const char *vb = (const char *)v + (size_t)j0 * rs;
        int i = 0;
        for (; i + 8 <= len; i += 8)
            accum_heads(kt, 1, out, os, p + j0, ps, nq, vb, rs, jn, e0, i, 8);
        if (i < len)
            accum_heads(kt, 0, out, os, p + j0, ps, nq, vb, rs, jn, e0, i, len - i);
    }
}

GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f32_avx2)
{
    scores_g(KT_F32, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, 0, len, scale);
}
GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f16_avx2)
{
    scores_g(KT_F16, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, 0, len, scale);
}
GL_DECL_ATTN_SCORES_Q8_G_FN(gl_attn_scores_q8_g_avx2)
{
    scores_g(KT_Q8, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, off, len,
             scale);
}
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f32_avx2)
{
    accum_g(KT_F32, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, 0, len);
}
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f16_avx2)
{
    accum_g(KT_F16, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, 0, len);
}
GL_DECL_ATTN_ACCUM_Q8_G_FN(gl_attn_accum_q8_g_avx2)
{
    accum_g(KT_Q8, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, off, len);
}

/* single-head Q8_0: one query of the group forms */
GL_DECL_ATTN_SCORES_Q8_FN(gl_attn_scores_q8_avx2)
{
    scores_g(KT_Q8, scores, 0, q, 0, 1, k, row_stride, n_keys, off, len, scale);
}
GL_DECL_ATTN_ACCUM_Q8_FN(gl_attn_accum_q8_avx2)
{
    accum_g(KT_Q8, out, 0, p, 0, 1, v, row_stride, n_rows, off, len);
}
