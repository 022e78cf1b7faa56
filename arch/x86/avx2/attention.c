/* AVX2 attention kernels: the grouped-query forms over F32 / F16 / Q8_0
 * caches, and the single-head Q8_0 ones (the single-head F32 / F16 ones are
 * in float.c): arch/attention_tmpl.h with 8 lanes, tiles of 8 accumulators
 * reduced together by gl_hsum8x8_ps (util.h), which performs gl_hsum8_ps's
 * additions lane-parallel, so every score is bit-identical to
 * gl_attn_scores_*_avx2's for the same head.
 *
 * Q8_0 elements are d * q, exact in float (11 x 8 significant bits), so a
 * Q8_0 cache behaves exactly like the F32 cache of its dequantized values. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/util.h"

#include "half.h"
#include "quant.h"

enum { KT_F32, KT_F16, KT_Q8 };

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

/* 8 elements that straddle two blocks (a head not on a block boundary),
 * out of line: inlined into the score and accumulation tiles, its stack
 * array made the compiler keep the tiles' accumulators in memory on the
 * common path too (AVX-512, Qwen3-0.6B with a Q8_0 cache at 2048
 * positions, 1 thread: attention 18 -> 9 ms a decode step). */
static __attribute__((noinline, cold)) __m256 ld8_q8_straddle(const void *row, int e)
{
    return ldp8_q8(row, e, 8);
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
    return ld8_q8_straddle(row, e);
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

#define AT_T                  __m256
#define AT_W                  8
#define AT_NT                 8
#define AT_ZERO()             _mm256_setzero_ps()
#define AT_FMA(acc, k, q)     _mm256_fmadd_ps(k, q, acc)
#define AT_MUL_ADD(o, p, v)   _mm256_add_ps(o, _mm256_mul_ps(_mm256_set1_ps(p), v))
#define AT_LD_F32(p)          _mm256_loadu_ps(p)
#define AT_LDP_F32(p, m)      gl_load_part_f32(p, m)
#define AT_ST_F32(p, v)       _mm256_storeu_ps(p, v)
#define AT_STP_F32(p, m, v)   _mm256_maskstore_ps(p, gl_tail_mask8(m), v)
#define AT_LD(kt, row, e)     ld8(kt, row, e)
#define AT_LDP(kt, row, e, m) ldp8(kt, row, e, m)
#define AT_TILE_OUT(acc, res, scale)                                                               \
    _mm256_storeu_ps(res, _mm256_mul_ps(gl_hsum8x8_ps(acc), _mm256_set1_ps(scale)))
#define AT_JB        64
#define AT_TT        8
#define AT_SET1(x)   _mm256_set1_ps(x)
#define AT_MUL(v, s) _mm256_mul_ps(v, _mm256_set1_ps(s))
#define AT_FN(name)  gl_##name##_avx2
#define AT_LINKAGE
#include "arch/attention_tmpl.h"
