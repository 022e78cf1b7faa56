/* The per-row super-block hooks of kquant_tmpl.h for Q4_K, Q5_K and Q6_K,
 * and the three products built from them. Included by arch/x86/avx2/
 * kquant.c (AVX2) and by the AVX-512 folder (VNNI), with:
 *   KQ_SFX                  suffix of the helper names (one copy per ISA)
 *   KQ_NAME_Q4K / _Q5K / _Q6K   names of the generated matmuls
 *   KQ_MADD_ACC(acc, p, s)  acc + madd_epi16(p, s), 8 int32 lanes (AVX2:
 *                           madd then add; VNNI: one vpdpwssd; both exact)
 *
 * Integer ranges (all exact, no saturation): weights are unsigned bytes u
 * (Q4_K nibble <= 15, Q5_K <= 31, Q6_K stored q <= 63), activations int8 in
 * [-127, 127]; maddubs(u, x) pairs are at most 2 * 63 * 127 = 16002 in
 * magnitude, their madd with a scale (<= 63 unsigned, or int8 for Q6_K)
 * at most 2 * 16002 * 128 per lane. Q6_K's quants are q - 32:
 * isum = sum_j sc_j (sum u x)_j - 32 sum_j sc_j bsums_j. */

#define KQ_CAT2(a, b) a##b
#define KQ_CAT(a, b)  KQ_CAT2(a, b)
#define KQ_FN(name)   KQ_CAT(name, KQ_SFX)

/* byte 2 j, 2 j + 1 in every 16-bit position: selects int16 element j of a
 * 128-bit lane (vpshufb), for j = 0..7 */
#define KQ_SEL16(j) _mm256_set1_epi16((short)((2 * (j)) | (2 * (j) + 1) << 8))
/* int16 element j in the low lane, element j + 1 in the high lane */
#define KQ_SEL16_PAIR(j)                                                                           \
    _mm256_setr_m128i(_mm_set1_epi16((short)((2 * (j)) | (2 * (j) + 1) << 8)),                     \
                      _mm_set1_epi16((short)((2 * (j) + 2) | (2 * (j) + 3) << 8)))

/* Q4_K / Q5_K: the 8 6-bit scales and mins of a super-block as 16 bytes
 * (sc0..sc7, m0..m7), see gl_k4_scale_min */
GL_ALWAYS_INLINE __m128i KQ_FN(kq_scales_k4_)(const uint8_t *s)
{
    uint32_t a, b, c;
    memcpy(&a, s, 4);
    memcpy(&b, s + 4, 4);
    memcpy(&c, s + 8, 4);
    const uint32_t sc_lo = a & 0x3f3f3f3fu, m_lo = b & 0x3f3f3f3fu;
    const uint32_t sc_hi = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
    const uint32_t m_hi = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
    return _mm_setr_epi32((int)sc_lo, (int)sc_hi, (int)m_lo, (int)m_hi);
}

typedef struct {
    __m256i lo[4], hi[4]; /* sub-blocks 2 i and 2 i + 1 as bytes u */
    __m256i sc;           /* sc0..sc7 as int16, in both 128-bit lanes */
    __m256i mdup;         /* m0 m0 m1 m1 .. m7 m7 as int16 (pairs with bsums) */
} KQ_FN(kq_k4_wp_);

GL_ALWAYS_INLINE void KQ_FN(kq_k4_scales_prep_)(KQ_FN(kq_k4_wp_) * p, const uint8_t *scales)
{
    const __m128i v = KQ_FN(kq_scales_k4_)(scales);
    p->sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(v));
    const __m128i m16 = _mm_cvtepu8_epi16(_mm_srli_si128(v, 8));
    p->mdup = _mm256_setr_m128i(_mm_unpacklo_epi16(m16, m16), _mm_unpackhi_epi16(m16, m16));
}

GL_ALWAYS_INLINE void KQ_FN(kq_q4k_wprep_)(KQ_FN(kq_k4_wp_) * p, const block_q4_K *b)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    KQ_FN(kq_k4_scales_prep_)(p, b->scales);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * i));
        p->lo[i] = _mm256_and_si256(q, m4);
        p->hi[i] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    }
}

/* fifth bit of element 64 i + l: bit 2 i of qh[l], of 64 i + 32 + l: bit
 * 2 i + 1; moved to bit 4 of the same byte (16-bit shifts by at most 4
 * bring nothing from the neighbouring byte into bit 4) */
GL_ALWAYS_INLINE void KQ_FN(kq_q5k_wprep_)(KQ_FN(kq_k4_wp_) * p, const block_q5_K *b)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), b4 = _mm256_set1_epi8(0x10);
    KQ_FN(kq_k4_scales_prep_)(p, b->scales);
    const __m256i h = _mm256_loadu_si256((const __m256i *)b->qh);
    const __m256i hl[4] = { _mm256_slli_epi16(h, 4), _mm256_slli_epi16(h, 2), h,
                            _mm256_srli_epi16(h, 2) };
    const __m256i hh[4] = { _mm256_slli_epi16(h, 3), _mm256_slli_epi16(h, 1),
                            _mm256_srli_epi16(h, 1), _mm256_srli_epi16(h, 3) };
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * i));
        p->lo[i] = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_and_si256(hl[i], b4));
        p->hi[i] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                                   _mm256_and_si256(hh[i], b4));
    }
}

GL_ALWAYS_INLINE __m256i KQ_FN(kq_k4_dot_)(const KQ_FN(kq_k4_wp_) * p, const block_q8_K *xb)
{
    __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        const __m256i xl = _mm256_loadu_si256((const __m256i *)(xb->qs + 64 * i));
        const __m256i xh = _mm256_loadu_si256((const __m256i *)(xb->qs + 64 * i + 32));
        acc = KQ_MADD_ACC(acc, _mm256_maddubs_epi16(p->lo[i], xl),
                          _mm256_shuffle_epi8(p->sc, KQ_SEL16(2 * i)));
        acc = KQ_MADD_ACC(acc, _mm256_maddubs_epi16(p->hi[i], xh),
                          _mm256_shuffle_epi8(p->sc, KQ_SEL16(2 * i + 1)));
    }
    return acc;
}

GL_ALWAYS_INLINE __m256i KQ_FN(kq_k4_mins_)(const KQ_FN(kq_k4_wp_) * p, const block_q8_K *xb)
{
    return _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums), p->mdup);
}

#define KT_NAME    KQ_NAME_Q4K
#define KT_WBLK    block_q4_K
#define KT_WPREP_T KQ_FN(kq_k4_wp_)
#define KT_WPREP   KQ_FN(kq_q4k_wprep_)
#define KT_DOT     KQ_FN(kq_k4_dot_)
#define KT_MINS    KQ_FN(kq_k4_mins_)
#define KT_HAS_MIN 1
#define KT_DOFF    0
#include "arch/x86/avx2/kquant_tmpl.h"

#define KT_NAME    KQ_NAME_Q5K
#define KT_WBLK    block_q5_K
#define KT_WPREP_T KQ_FN(kq_k4_wp_)
#define KT_WPREP   KQ_FN(kq_q5k_wprep_)
#define KT_DOT     KQ_FN(kq_k4_dot_)
#define KT_MINS    KQ_FN(kq_k4_mins_)
#define KT_HAS_MIN 1
#define KT_DOFF    0
#include "arch/x86/avx2/kquant_tmpl.h"

/* ---- Q6_K: chunk t = 4 h + s (elements 128 h + 32 s + l, l < 32) holds
 * sub-blocks 2 t (l < 16, low 128-bit lane) and 2 t + 1 (high lane) */
typedef struct {
    __m256i u[8];  /* chunk t's stored quants q (0..63) */
    __m256i sc[8]; /* chunk t's scales as int16: sc_2t low lane, sc_2t+1 high */
    __m256i scw;   /* sc0..sc15 as int16 (pairs with bsums) */
} KQ_FN(kq_q6k_wp_);

GL_ALWAYS_INLINE void KQ_FN(kq_q6k_wprep_)(KQ_FN(kq_q6k_wp_) * p, const block_q6_K *b)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(0x30);
    p->scw = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b->scales));
    const __m256i half[2] = { _mm256_permute2x128_si256(p->scw, p->scw, 0x00),
                              _mm256_permute2x128_si256(p->scw, p->scw, 0x11) };
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        const __m256i q0 = _mm256_loadu_si256((const __m256i *)(b->ql + 64 * h));
        const __m256i q1 = _mm256_loadu_si256((const __m256i *)(b->ql + 64 * h + 32));
        const __m256i qh = _mm256_loadu_si256((const __m256i *)(b->qh + 32 * h));
        p->u[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(q0, m4),
                                          _mm256_and_si256(_mm256_slli_epi16(qh, 4), m2));
        p->u[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(q1, m4),
                                          _mm256_and_si256(_mm256_slli_epi16(qh, 2), m2));
        p->u[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q0, 4), m4),
                                          _mm256_and_si256(qh, m2));
        p->u[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q1, 4), m4),
                                          _mm256_and_si256(_mm256_srli_epi16(qh, 2), m2));
#pragma GCC unroll 4
        for (int s = 0; s < 4; s++)
            p->sc[4 * h + s] = _mm256_shuffle_epi8(half[h], KQ_SEL16_PAIR(2 * s));
    }
}

GL_ALWAYS_INLINE __m256i KQ_FN(kq_q6k_dot_)(const KQ_FN(kq_q6k_wp_) * p, const block_q8_K *xb)
{
    __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int t = 0; t < 8; t++) {
        const __m256i xv = _mm256_loadu_si256((const __m256i *)(xb->qs + 32 * t));
        acc = KQ_MADD_ACC(acc, _mm256_maddubs_epi16(p->u[t], xv), p->sc[t]);
    }
    const __m256i corr = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums), p->scw);
    return _mm256_sub_epi32(acc, _mm256_slli_epi32(corr, 5));
}

#define KT_NAME    KQ_NAME_Q6K
#define KT_WBLK    block_q6_K
#define KT_WPREP_T KQ_FN(kq_q6k_wp_)
#define KT_WPREP   KQ_FN(kq_q6k_wprep_)
#define KT_DOT     KQ_FN(kq_q6k_dot_)
#define KT_HAS_MIN 0
#define KT_DOFF    206 /* scales[14..15] and d: d in the high half */
#include "arch/x86/avx2/kquant_tmpl.h"

#undef KQ_FN
#undef KQ_CAT
#undef KQ_CAT2
#undef KQ_SEL16
#undef KQ_SEL16_PAIR
#undef KQ_SFX
#undef KQ_NAME_Q4K
#undef KQ_NAME_Q5K
#undef KQ_NAME_Q6K
#undef KQ_MADD_ACC
