/* The 16-lane (zmm) operations arch/x86/avx2/x8_tmpl.h takes for a
 * 16-row layout (Q4_0x16, Q8_0x16): include right before the template,
 * which undefines them. No include guard: one use per instance. */
#define X8_ROWS                         GL_X16_ROWS
#define XV_PS                           __m512
#define XV_EPI32                        __m512i
#define XV_ZERO_PS()                    _mm512_setzero_ps()
#define XV_LOADU_PS(p)                  _mm512_loadu_ps(p)
#define XV_STOREU_PS(p, v)              _mm512_storeu_ps(p, v)
#define XV_LOAD_LANES_PS(p, lo, hi)     gl512_load_lanes_ps(p, lo, hi)
#define XV_STORE_LANES_PS(p, lo, hi, v) gl512_store_lanes_ps(p, lo, hi, v)
#define XV_SET1_EPI32(v)                _mm512_set1_epi32(v)
#define XV_SET1_PS(v)                   _mm512_set1_ps(v)
#define XV_ADD_PS(a, b)                 _mm512_add_ps(a, b)
#define XV_MUL_PS(a, b)                 _mm512_mul_ps(a, b)
#define XV_CVTEPI32_PS(v)               gl512_cvtepi32_ps(v)
#define XV_LOAD_D(d)                    gl512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(d)))
