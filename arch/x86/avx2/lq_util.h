/* Unpacking helpers of the 32-element block types, shared by the AVX2
 * kernels (legacy_quants.c) and the AVX-512 ones (avx512/legacy_vnni.h).
 * Include after util.h (or avx512/simd.h). */
#ifndef GENLOOP_ARCH_X86_AVX2_LQ_UTIL_H
#define GENLOOP_ARCH_X86_AVX2_LQ_UTIL_H

#include "arch/x86/avx2/util.h"

/* The 32 nibbles of a Q4-style block in element order (low nibbles are
 * elements 0..15, high nibbles 16..31). */
GL_ALWAYS_INLINE __m256i lq_nibbles(const uint8_t *qs)
{
    const __m128i q = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0f));
}

/* Bit j of the little-endian 32-bit qh as 0x10 in byte j (else 0). */
GL_ALWAYS_INLINE __m256i lq_high_bits(const uint8_t *qh)
{
    const __m256i v = _mm256_set1_epi32((int)x8_load32(qh));
    const __m256i bytes = _mm256_shuffle_epi8(
        v, _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
                            3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit),
                            _mm256_set1_epi8(0x10));
}

#endif
