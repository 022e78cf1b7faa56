/* AVX-512 attention kernels, included by kernels.c (static functions, so
 * the native and the SIMDe builds each get their own): arch/attention_tmpl.h
 * with 16 lanes and tiles of 16 accumulators, whose lane sums are reduced 8
 * at a time by gl_hsum8x8_ps after gl512_hsum_ps's first step (lo256 +
 * hi256), so a group score is bit-identical to the single-head slot's
 * (kernels.c's float template). Q8_0 elements are d * q, exact in float. */

enum { KT_F32, KT_F16, KT_Q8 };

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

/* 16 elements that straddle two blocks (a head not on a block boundary),
 * out of line: inlined into the score and accumulation tiles, its stack
 * array made the compiler keep the tiles' accumulators in memory on the
 * common path too (AVX-512, Qwen3-0.6B with a Q8_0 cache at 2048
 * positions, 1 thread: attention 18 -> 9 ms a decode step). */
static __attribute__((noinline, cold)) __m512 ld16_q8_straddle(const void *row, int e)
{
    return ldp16_q8(row, e, 16);
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
    return ld16_q8_straddle(row, e);
}

/* 16 elements of a row from element e (F32 / F16: row at the head; Q8_0:
 * row start, e includes the head's offset); the _p form reads only m < 16
 * and gives zeros after. */
GL_ALWAYS_INLINE __m512 ld16(const int kt, const void *row, int e)
{
    if (kt == KT_F32)
        return _mm512_loadu_ps((const float *)row + e);
    if (kt == KT_F16)
        return gl512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)row + e)));
    return ld16_q8(row, e);
}

GL_ALWAYS_INLINE __m512 ldp16(const int kt, const void *row, int e, int m)
{
    if (kt == KT_F32)
        return gl512_load_part_ps((const float *)row + e, m);
    if (kt == KT_F16)
        return gl512_cvtph_ps(gl512_load_part_u16((const uint16_t *)row + e, m));
    return ldp16_q8(row, e, m);
}

/* lane k = gl512_hsum_ps(a[k]) for 8 vectors */
GL_ALWAYS_INLINE __m256 hsum16x8(const __m512 *a)
{
    __m256 h[8];
    for (int k = 0; k < 8; k++)
        h[k] = _mm256_add_ps(gl512_lo_ps(a[k]), gl512_hi_ps(a[k]));
    return gl_hsum8x8_ps(h);
}

/* the store of lanes [0, m) only */
GL_ALWAYS_INLINE void st16p(float *p, int m, __m512 v)
{
    float t[16];
    _mm512_storeu_ps(t, v);
    memcpy(p, t, (size_t)m * sizeof(float));
}

/* res[t] = scale * gl512_hsum_ps(acc[t]), t < 16 */
GL_ALWAYS_INLINE void tile_out16(const __m512 *acc, float *res, float scale)
{
    const __m256 vs = _mm256_set1_ps(scale);
    _mm256_storeu_ps(res, _mm256_mul_ps(hsum16x8(acc), vs));
    _mm256_storeu_ps(res + 8, _mm256_mul_ps(hsum16x8(acc + 8), vs));
}

#define AT_T                     __m512
#define AT_W                     16
#define AT_NT                    16
#define AT_ZERO()                _mm512_setzero_ps()
#define AT_FMA(acc, k, q)        _mm512_fmadd_ps(k, q, acc)
#define AT_MUL_ADD(o, p, v)      _mm512_add_ps(o, _mm512_mul_ps(_mm512_set1_ps(p), v))
#define AT_LD_F32(p)             _mm512_loadu_ps(p)
#define AT_LDP_F32(p, m)         gl512_load_part_ps(p, m)
#define AT_ST_F32(p, v)          _mm512_storeu_ps(p, v)
#define AT_STP_F32(p, m, v)      st16p(p, m, v)
#define AT_LD(kt, row, e)        ld16(kt, row, e)
#define AT_LDP(kt, row, e, m)    ldp16(kt, row, e, m)
#define AT_TILE_OUT(acc, res, s) tile_out16(acc, res, s)
#define AT_JB                    64
#define AT_TT                    16
#define AT_SET1(x)               _mm512_set1_ps(x)
#define AT_MUL(v, s)             _mm512_mul_ps(v, _mm512_set1_ps(s))
#define AT_FN(name)              name##_512
#define AT_LINKAGE               static
#include "arch/attention_tmpl.h"

/* the slots above, over the table kernels.c has filled */
static void attn_init_512(gl_kernels *k)
{
    k->attn_scores_g[GL_KV_F32] = attn_scores_g_f32_512;
    k->attn_scores_g[GL_KV_F16] = attn_scores_g_f16_512;
    k->attn_accum_g[GL_KV_F32] = attn_accum_g_f32_512;
    k->attn_accum_g[GL_KV_F16] = attn_accum_g_f16_512;
    k->attn_scores_t[GL_KV_F32] = attn_scores_t_f32_512;
    k->attn_scores_t[GL_KV_F16] = attn_scores_t_f16_512;
    k->attn_scores_q8 = attn_scores_q8_512;
    k->attn_accum_q8 = attn_accum_q8_512;
    k->attn_scores_q8_g = attn_scores_q8_g_512;
    k->attn_accum_q8_g = attn_accum_q8_g_512;
}
