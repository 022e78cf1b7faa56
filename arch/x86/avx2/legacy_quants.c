/* AVX2 products of the 32-element block types beyond Q4_0 / Q8_0: Q4_1,
 * Q5_1 (Q8_1 activations), Q5_0 and IQ4_NL (Q8_0 activations), on the
 * row-tile template (rowtile_tmpl.h: lanes over rows, bit-identical to
 * arch/generic/legacy_quants.c). Integer dot products with maddubs
 * (u8 x s8 pairs into int16), which must not saturate:
 *   Q4_1 / Q5_1 / Q5_0: unsigned quants u <= 31, |x| <= 127: pairs <= 7874;
 *   IQ4_NL: |value| <= 127 times sign-moved x, |x| <= 127: pairs <= 32258. */
#include "arch/x86/avx2/legacy.h"
#include "arch/x86/avx2/lq_util.h"
#include "arch/x86/avx2/util.h"

GL_ALWAYS_INLINE __m256i lq_dot_u(__m256i u, const int8_t *xq)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, _mm256_loadu_si256((const __m256i *)xq)),
                             _mm256_set1_epi16(1));
}

#define LQ_NAME(t) gl_matmul_##t##_avx2
#define LQ_LINK
#define LQ_DOT(u, xq) lq_dot_u(u, xq)
#define LQ_HIGH(qh)   lq_high_bits(qh)
#include "arch/x86/avx2/legacy_tmpl.h"

/* ---- IQ4_NL x Q8_0: w = table[nibble] (vpshufb), signed x signed by
 * maddubs(|w|, sign(x, w)) -------------------------------------------- */
GL_ALWAYS_INLINE __m256i iq4nl_table(void)
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)gl_iq4nl_values));
}

GL_ALWAYS_INLINE void iq4_nl_row(const block_iq4_nl *wb, const block_q8_0 *const *xb, __m256i *p,
                                 __m256i *pm, const int nc)
{
    (void)pm;
    const __m256i wv = _mm256_shuffle_epi8(iq4nl_table(), lq_nibbles(wb->qs));
    const __m256i a = _mm256_sign_epi8(wv, wv);
    for (int c = 0; c < nc; c++) {
        const __m256i xs = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)xb[c]->qs), wv);
        p[c] = _mm256_madd_epi16(_mm256_maddubs_epi16(a, xs), _mm256_set1_epi16(1));
    }
}

#define RT_NAME gl_matmul_iq4_nl_avx2
#define RT_WBLK block_iq4_nl
#define RT_QK   QK4_0
#define RT_XBLK block_q8_0
#define RT_ACT  RT_Q8_0
#define RT_DOFF 0
#define RT_DHI  0
#define RT_MIN  0
#define RT_ROW  iq4_nl_row
#include "arch/x86/avx2/rowtile_tmpl.h"
