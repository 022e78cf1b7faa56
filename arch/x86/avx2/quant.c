/* AVX2 Q8_0 activation quantizer and Q8_0 / Q4_0 matrix products. */
#include <float.h>

#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/util.h"

/* Bit-exact with gl_quantize_q8_0_generic: amax by max (exact), d and id
 * by the same scalar expressions, d to half with F16C's round-to-nearest-
 * even (as gl_f32_to_f16), q = cvtps2dq(x * id), which rounds half to even
 * under the default MXCSR mode exactly as nearbyintf does. The int -> int8
 * step keeps the low byte (and + unsigned packs) like the scalar cast does;
 * values are in [-127, 127] (id is set to 0 when 127/amax overflows). */
GL_DECL_QUANTIZE_FN(gl_quantize_q8_0_avx2)
{
    block_q8_0 *out = y;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256i lo8 = _mm256_set1_epi32(0xff);
    const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int b = 0; b < n / QK8_0; b++) {
        const float *xb = x + b * QK8_0;
        __m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8);
        __m256 v2 = _mm256_loadu_ps(xb + 16), v3 = _mm256_loadu_ps(xb + 24);
        __m256 m =
            _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                          _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        const float amax = _mm_cvtss_f32(h);
        const float d = amax / 127.0f;
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        if (id > FLT_MAX) /* amax < ~3.7e-37: 127 / amax overflowed; all q = 0 */
            id = 0.0f;
        out[b].d = (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(d), 0), 0);
        const __m256 vid = _mm256_set1_ps(id);
        __m256i q0 = _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(v0, vid)), lo8);
        __m256i q1 = _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(v1, vid)), lo8);
        __m256i q2 = _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(v2, vid)), lo8);
        __m256i q3 = _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(v3, vid)), lo8);
        __m256i q = _mm256_packus_epi16(_mm256_packus_epi32(q0, q1), _mm256_packus_epi32(q2, q3));
        _mm256_storeu_si256((__m256i *)out[b].qs, _mm256_permutevar8x32_epi32(q, perm));
    }
}

/* ---- Q4_0: nibbles u in [0,15] as unsigned bytes, w = u - 8.
 * dot = sum(u * x) - 8 * sum(x): maddubs(u, x) pairs are at most
 * 2 * 15 * 128, so nothing saturates for any int8 x, -128 included. */
typedef struct {
    __m256i x, corr;
} q4_xprep;

GL_ALWAYS_INLINE void q4_wprep(__m256i *p, const block_q4_0 *blk)
{
    const __m128i q = _mm_loadu_si128((const __m128i *)blk->qs);
    *p = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0f));
}

GL_ALWAYS_INLINE void q4_xprep_avx2(q4_xprep *p, const block_q8_0 *xb)
{
    p->x = _mm256_loadu_si256((const __m256i *)xb->qs);
    const __m256i s =
        _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), p->x), _mm256_set1_epi16(1));
    p->corr = _mm256_slli_epi32(gl_bcast_sum_epi32(s), 3);
}

GL_ALWAYS_INLINE __m256i q4_dot_avx2(const __m256i *w, const q4_xprep *x)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(*w, x->x), _mm256_set1_epi16(1));
}

#define QT_NAME    gl_matmul_q4_0_avx2
#define QT_WBLK    block_q4_0
#define QT_WPREP_T __m256i
#define QT_WPREP   q4_wprep
#define QT_XPREP_T q4_xprep
#define QT_XPREP   q4_xprep_avx2
#define QT_DOT     q4_dot_avx2
#define QT_XCORR   1
#define QT_WCORR   0
#include "arch/x86/avx2/qmatmul_tmpl.h"

/* ---- Q8_0: both sides sign-extended to int16 and multiplied with madd;
 * exact for every int8 pair, -128 x -128 included (the maddubs sign trick
 * is not). */
typedef struct {
    __m256i lo, hi;
} q8_pair;

GL_ALWAYS_INLINE void q8_prep(q8_pair *p, const int8_t *qs)
{
    p->lo = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)qs));
    p->hi = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(qs + 16)));
}

GL_ALWAYS_INLINE void q8_wprep_avx2(q8_pair *p, const block_q8_0 *blk)
{
    q8_prep(p, blk->qs);
}
GL_ALWAYS_INLINE void q8_xprep_avx2(q8_pair *p, const block_q8_0 *xb)
{
    q8_prep(p, xb->qs);
}

GL_ALWAYS_INLINE __m256i q8_dot_avx2(const q8_pair *w, const q8_pair *x)
{
    return _mm256_add_epi32(_mm256_madd_epi16(w->lo, x->lo), _mm256_madd_epi16(w->hi, x->hi));
}

#define QT_NAME    gl_matmul_q8_0_avx2
#define QT_WBLK    block_q8_0
#define QT_WPREP_T q8_pair
#define QT_WPREP   q8_wprep_avx2
#define QT_XPREP_T q8_pair
#define QT_XPREP   q8_xprep_avx2
#define QT_DOT     q8_dot_avx2
#define QT_XCORR   0
#define QT_WCORR   0
#include "arch/x86/avx2/qmatmul_tmpl.h"
