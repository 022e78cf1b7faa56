/* Unpacking helpers of the block types beyond Q4_0 / Q8_0 (and Q4_K..Q6_K),
 * shared by the AVX2 kernels (legacy_quants.c, kquants_low.c) and the
 * AVX-512 ones (avx512/legacy_vnni.h, avx512/kquants_low.h).
 * Include after util.h (or avx512/simd.h). */
#ifndef GENLOOP_ARCH_X86_AVX2_LQ_UTIL_H
#define GENLOOP_ARCH_X86_AVX2_LQ_UTIL_H

#include "arch/x86/avx2/util.h"

/* The 32 nibbles of a Q4-style block in element order (low nibbles are
 * elements 0..15, high nibbles 16..31). */
GL_ALWAYS_INLINE __m256i lq_nibbles(const uint8_t *qs)
{
    /* the 16 bytes in both halves (a broadcast load), the high half
     * shifted by 4: no lane insert */
    const __m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs));
    return _mm256_and_si256(_mm256_srlv_epi64(q, _mm256_setr_epi64x(0, 0, 4, 4)),
                            _mm256_set1_epi8(0x0f));
}

/* Bit j of the little-endian 32-bit qh as 0x10 in byte j (else 0). */
GL_ALWAYS_INLINE __m256i lq_high_bits(const uint8_t *qh)
{
    const __m256i v = _mm256_set1_epi32((int)x8_load32(qh));
    const __m256i bytes =
        _mm256_shuffle_epi8(v, _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2,
                                                2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit),
                            _mm256_set1_epi8(0x10));
}

/* The 16 scales (stored - 32) as int16: low 4 bits from bytes 0..7 (low
 * nibbles: scales 0..7, high: 8..15), high 2 bits of scale j at bits
 * 2 (j / 4) of byte 8 + j % 4. */
GL_ALWAYS_INLINE __m256i q3_K_scales(const uint8_t *sc)
{
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m128i lo8 = _mm_loadl_epi64((const __m128i *)sc);
    const __m128i lo =
        _mm_unpacklo_epi64(_mm_and_si128(lo8, m4), _mm_and_si128(_mm_srli_epi16(lo8, 4), m4));
    /* dword k = bytes 8..11 >> 2 k: byte 4 k + i has scale (4 k + i)'s bits at 0..1 */
    const __m128i hi =
        _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(x8_load32(sc + 8)), _mm_setr_epi32(0, 2, 4, 6)),
                      _mm_set1_epi8(3));
    const __m128i s8 = _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32));
    return _mm256_cvtepi8_epi16(s8);
}

/* The 8 scales as int16: low 4 bits nibble j of scales_l, high 2 bits
 * bits 2 j of scales_h (moved to bits 14..15 by a multiply, then down). */
GL_ALWAYS_INLINE __m128i iq4_xs_scales(const block_iq4_xs *b)
{
    const __m128i l = _mm_cvtsi32_si128(x8_load32(b->scales_l));
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m128i lo =
        _mm_unpacklo_epi8(_mm_and_si128(l, m4), _mm_and_si128(_mm_srli_epi16(l, 4), m4));
    uint16_t h;
    memcpy(&h, &b->scales_h, 2);
    const __m128i hi = _mm_srli_epi16(
        _mm_mullo_epi16(_mm_set1_epi16((short)h), _mm_setr_epi16(1 << 14, 1 << 12, 1 << 10, 1 << 8,
                                                                 1 << 6, 1 << 4, 1 << 2, 1)),
        14);
    return _mm_sub_epi16(_mm_or_si128(_mm_cvtepu8_epi16(lo), _mm_slli_epi16(hi, 4)),
                         _mm_set1_epi16(32));
}

#endif
