/* AVX2 products of Q2_K, Q3_K and IQ4_XS with Q8_K activations, on the
 * row-tile template (rowtile_tmpl.h: lanes over rows, bit-identical to
 * arch/generic/kquants.c). Per 32 quants: maddubs (u8 x s8 pairs into
 * int16), then madd with the sub-blocks' scales as int16 (the 16 low
 * int16 lanes of a 32-element vector are its first 16 elements). No
 * saturation: Q2_K u <= 3 and Q3_K u = q + 4 <= 7 times |x| <= 127; IQ4_XS
 * |value| <= 127 times sign-moved |x| <= 127, pairs <= 32258. The int32
 * sums stay far below 2^31 (IQ4_XS: 256 * 127 * 127 * 32 < 2^29). */
#include "arch/x86/avx2/legacy.h"
#include "arch/x86/avx2/lq_util.h"
#include "arch/x86/avx2/util.h"

/* Scale vector of the 32 elements 32 t .. 32 t + 31 of a 16-sub-block
 * super-block (t = 4 h + s): int16 scale 2 t in the low 128 bits, 2 t + 1
 * in the high ones; sc8 = the 8 int16 scales 8 h .. 8 h + 7 in both
 * halves. */
static const int8_t k16_pair_idx[4][32] = {
#define K16_ROW(s)                                                                                 \
    {                                                                                              \
        4 * s, 4 * s + 1, 4 * s, 4 * s + 1, 4 * s, 4 * s + 1, 4 * s, 4 * s + 1, 4 * s, 4 * s + 1,  \
            4 * s, 4 * s + 1, 4 * s, 4 * s + 1, 4 * s, 4 * s + 1, 4 * s + 2, 4 * s + 3, 4 * s + 2, \
            4 * s + 3, 4 * s + 2, 4 * s + 3, 4 * s + 2, 4 * s + 3, 4 * s + 2, 4 * s + 3,           \
            4 * s + 2, 4 * s + 3, 4 * s + 2, 4 * s + 3, 4 * s + 2, 4 * s + 3                       \
    }
    K16_ROW(0), K16_ROW(1), K16_ROW(2), K16_ROW(3)
#undef K16_ROW
};

GL_ALWAYS_INLINE __m256i k16_scale_pair(__m256i sc8, int s)
{
    return _mm256_shuffle_epi8(sc8, _mm256_loadu_si256((const __m256i *)k16_pair_idx[s]));
}

GL_ALWAYS_INLINE __m256i kq_madd(__m256i u, const int8_t *xq, __m256i sc)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, _mm256_loadu_si256((const __m256i *)xq)), sc);
}

/* ---- Q2_K: u = (qs >> 2 s) & 3; isum = sum_j sc_j dot_j, imin = sum_j
 * m_j bsums_j ---------------------------------------------------------- */
GL_ALWAYS_INLINE void q2_K_row(const block_q2_K *wb, const block_q8_K *const *xb, __m256i *p,
                               __m256i *pm, const int nc)
{
    const __m128i sb = _mm_loadu_si128((const __m128i *)wb->scales);
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(sb, m4));
    const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sb, 4), m4));
    for (int c = 0; c < nc; c++) {
        pm[c] = _mm256_madd_epi16(mn16, _mm256_loadu_si256((const __m256i *)xb[c]->bsums));
        p[c] = _mm256_setzero_si256();
    }
    const __m256i m3 = _mm256_set1_epi8(3);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(wb->qs + 32 * h));
        const __m256i sc8 = h ? _mm256_permute2x128_si256(sc16, sc16, 0x11)
                              : _mm256_permute2x128_si256(sc16, sc16, 0x00);
#pragma GCC unroll 4
        for (int s = 0; s < 4; s++) {
            const __m256i u = _mm256_and_si256(_mm256_srli_epi16(q, 2 * s), m3);
            const __m256i sc = k16_scale_pair(sc8, s);
            for (int c = 0; c < nc; c++)
                p[c] = _mm256_add_epi32(p[c], kq_madd(u, xb[c]->qs + 128 * h + 32 * s, sc));
        }
    }
}

#define RT_NAME gl_matmul_q2_K_avx2
#define RT_WBLK block_q2_K
#define RT_QK   QK_K
#define RT_XBLK block_q8_K
#define RT_ACT  RT_Q8_K
#define RT_DOFF 80 /* d, dmin */
#define RT_DHI  0
#define RT_MIN  1
#define RT_ROW  q2_K_row
#include "arch/x86/avx2/rowtile_tmpl.h"

/* ---- Q3_K: u = q + 4 = low2 | hbit << 2 in [0, 7];
 * isum = sum_j sc_j (dot(u, x)_j - 4 bsums_j) ------------------------- */

/* bit k of each hmask byte moved to bit 2 */
GL_ALWAYS_INLINE __m256i q3_hbit(__m256i hm, int k)
{
    const __m256i t = k >= 2 ? _mm256_srli_epi16(hm, k - 2) : _mm256_slli_epi16(hm, 2 - k);
    return _mm256_and_si256(t, _mm256_set1_epi8(4));
}

GL_ALWAYS_INLINE void q3_K_row(const block_q3_K *wb, const block_q8_K *const *xb, __m256i *p,
                               __m256i *pm, const int nc)
{
    (void)pm;
    const __m256i sc16 = q3_K_scales(wb->scales);
    for (int c = 0; c < nc; c++) /* - 4 sum_j sc_j bsums_j */
        p[c] = _mm256_sub_epi32(
            _mm256_setzero_si256(),
            _mm256_slli_epi32(
                _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)xb[c]->bsums)), 2));
    const __m256i hm = _mm256_loadu_si256((const __m256i *)wb->hmask);
    const __m256i m3 = _mm256_set1_epi8(3);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(wb->qs + 32 * h));
        const __m256i sc8 = h ? _mm256_permute2x128_si256(sc16, sc16, 0x11)
                              : _mm256_permute2x128_si256(sc16, sc16, 0x00);
#pragma GCC unroll 4
        for (int s = 0; s < 4; s++) {
            const __m256i u = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * s), m3),
                                              q3_hbit(hm, 4 * h + s));
            const __m256i sc = k16_scale_pair(sc8, s);
            for (int c = 0; c < nc; c++)
                p[c] = _mm256_add_epi32(p[c], kq_madd(u, xb[c]->qs + 128 * h + 32 * s, sc));
        }
    }
}

#define RT_NAME gl_matmul_q3_K_avx2
#define RT_WBLK block_q3_K
#define RT_QK   QK_K
#define RT_XBLK block_q8_K
#define RT_ACT  RT_Q8_K
#define RT_DOFF 106 /* scales[10..11], d: the block's last 4 bytes */
#define RT_DHI  1
#define RT_MIN  0
#define RT_ROW  q3_K_row
#include "arch/x86/avx2/rowtile_tmpl.h"

/* ---- IQ4_XS: 8 sub-blocks of 32, w = table[nibble], scale ls - 32 ----- */

GL_ALWAYS_INLINE void iq4_xs_row(const block_iq4_xs *wb, const block_q8_K *const *xb, __m256i *p,
                                 __m256i *pm, const int nc)
{
    (void)pm;
    int16_t sc[8];
    _mm_storeu_si128((__m128i *)sc, iq4_xs_scales(wb));
    const __m256i tbl =
        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)gl_iq4nl_values));
    for (int c = 0; c < nc; c++)
        p[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
        const __m256i wv = _mm256_shuffle_epi8(tbl, lq_nibbles(wb->qs + 16 * j));
        const __m256i a = _mm256_sign_epi8(wv, wv);
        const __m256i scv = _mm256_set1_epi16(sc[j]);
        for (int c = 0; c < nc; c++) {
            const __m256i xs =
                _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(xb[c]->qs + 32 * j)), wv);
            p[c] = _mm256_add_epi32(p[c], _mm256_madd_epi16(_mm256_maddubs_epi16(a, xs), scv));
        }
    }
}

#define RT_NAME gl_matmul_iq4_xs_avx2
#define RT_WBLK block_iq4_xs
#define RT_QK   QK_K
#define RT_XBLK block_q8_K
#define RT_ACT  RT_Q8_K
#define RT_DOFF 0
#define RT_DHI  0
#define RT_MIN  0
#define RT_ROW  iq4_xs_row
#include "arch/x86/avx2/rowtile_tmpl.h"
