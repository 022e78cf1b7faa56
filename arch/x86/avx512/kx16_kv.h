/* The zmm forms of kx8_tmpl.h's KV_* macros (16 rows, one lane each),
 * included before each x16 instance of the template, which undefines them
 * at its end. No include guard: meant to be included once per instance. */
#define KX_ROWS GL_X16_ROWS
/* The tile path's weight stream at the K-quant distances: a 16-row block is
 * 1.3-3.3 KiB, so the 32-element layouts' 2 KiB is about one block ahead.
 * TinyLlama batch-8 decode Q4_K_M 1 thread +10 %, Q6_K +4 %, prefill
 * unchanged; the AVX2 8-row layouts, compute-bound, lost up to 9 % at
 * batch 4 that way (bench/RESULTS.md 2026-12-03). */
#define KX_TILE_PF_KQ 1
#define KX_TILE_TPF   1
/* decode may leave the stream to the hardware prefetcher (the tune's
 * hw_decode): on a Zen 4, 1 thread, Q4_Kx16 74-87 % and Q6_Kx16 77-89 % of
 * the probe against 65-72 % with 4 prefetched streams */
#define KX_HW_PF                        1
#define KV_PS                           __m512
#define KV_EPI32                        __m512i
#define KV_ZERO_PS()                    _mm512_setzero_ps()
#define KV_ZERO_EPI32()                 _mm512_setzero_si512()
#define KV_LOADU_PS(p)                  _mm512_loadu_ps(p)
#define KV_STOREU_PS(p, v)              _mm512_storeu_ps(p, v)
#define KV_LOAD_LANES_PS(p, lo, hi)     gl512_load_lanes_ps(p, lo, hi)
#define KV_STORE_LANES_PS(p, lo, hi, v) gl512_store_lanes_ps(p, lo, hi, v)
#define KV_SET1_PS(v)                   _mm512_set1_ps(v)
#define KV_ADD_PS(a, b)                 _mm512_add_ps(a, b)
#define KV_SUB_PS(a, b)                 _mm512_sub_ps(a, b)
#define KV_MUL_PS(a, b)                 _mm512_mul_ps(a, b)
#define KV_CVTEPI32_PS(v)               gl512_cvtepi32_ps(v)
#define KV_LOAD_D(d)                    gl512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(d)))
