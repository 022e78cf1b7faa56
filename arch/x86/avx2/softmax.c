/* Attention softmax and F16 rounding, 8 lanes at a time. */
#include <math.h>
#include <string.h>

#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/util.h"

/* F16C's conversion rounds to nearest even, as gl_f32_to_f16 does: exact. */
GL_DECL_ROUND_F16_FN(gl_round_f16_avx2)
{
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; i++)
        x[i] = _cvtsh_ss(_cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT));
}

/* F16C as above; a NaN keeps only its sign (F16C would keep the top of
 * its payload), so every NaN comes out as gl_f32_to_f16's. */
GL_ALWAYS_INLINE __m128i to_f16_8(__m256 v)
{
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    const __m128i m = _mm_packs_epi32(_mm256_castsi256_si128(_mm256_castps_si256(nan)),
                                      _mm256_extractf128_si256(_mm256_castps_si256(nan), 1));
    const __m128i qnan =
        _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16((short)0x8000)), _mm_set1_epi16(0x7e00));
    return _mm_blendv_epi8(h, qnan, m);
}

GL_DECL_TO_F16_FN(gl_to_f16_avx2)
{
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i), to_f16_8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float t[8] = { 0 };
        uint16_t h[8];
        memcpy(t, x + i, (size_t)(n - i) * sizeof(float));
        _mm_storeu_si128((__m128i *)h, to_f16_8(_mm256_loadu_ps(t)));
        memcpy(y + i, h, (size_t)(n - i) * sizeof(uint16_t));
    }
}

#define SM_NAME gl_softmax_avx2
#define SM_LINKAGE
#define SM_W16 0
#include "arch/x86/avx2/softmax_tmpl.h"
