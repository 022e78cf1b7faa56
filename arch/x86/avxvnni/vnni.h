/* What this backend adds to AVX2: vpdpbusd on ymm registers in its VEX form
 * (AVX-VNNI: Intel Alder Lake and later cores without AVX-512, AMD Zen 5).
 * acc + the four u8 x s8 products of each 32-bit lane, in int32 without
 * saturation: one instruction where AVX2 spends maddubs + madd + add, and
 * exact where maddubs would saturate.
 *
 * GL_AVXVNNI_EMU builds the same kernels with an exact AVX2 emulation (the
 * even and odd bytes widened to int16, two madds) as the test-only backend
 * "avxvnni-emu", so the conformance test runs them on CPUs without the
 * instruction (meson -Davxvnni_emu=true, tools/test-cross.sh). */
#ifndef GENLOOP_ARCH_X86_AVXVNNI_VNNI_H
#define GENLOOP_ARCH_X86_AVXVNNI_VNNI_H

#include "arch/x86/avx2/util.h"

#ifdef GL_AVXVNNI_EMU
#define GL_VNNI_SUFFIX _avxvnni_emu
GL_ALWAYS_INLINE __m256i gl_dpbusd256(__m256i acc, __m256i u, __m256i x)
{
    const __m256i ue = _mm256_and_si256(u, _mm256_set1_epi16(0x00ff));
    const __m256i uo = _mm256_srli_epi16(u, 8);
    const __m256i xe = _mm256_srai_epi16(_mm256_slli_epi16(x, 8), 8);
    const __m256i xo = _mm256_srai_epi16(x, 8);
    return _mm256_add_epi32(acc,
                            _mm256_add_epi32(_mm256_madd_epi16(ue, xe), _mm256_madd_epi16(uo, xo)));
}
#else
#define GL_VNNI_SUFFIX _avxvnni
GL_ALWAYS_INLINE __m256i gl_dpbusd256(__m256i acc, __m256i u, __m256i x)
{
    return _mm256_dpbusd_avx_epi32(acc, u, x);
}
#endif
/* Two int32 lanes' values, each inside int16, as the low (a) and high (b)
 * int16 of every lane: one madd then multiplies both by an int16 pair */
GL_ALWAYS_INLINE __m256i vn_pack16(__m256i a, __m256i b)
{
    return _mm256_blend_epi16(a, _mm256_slli_epi32(b, 16), 0xaa);
}

/* IQ4_NL's / IQ4_XS's table values + 128 in [1, 241] (the table's sign
 * bits flipped) in each 128-bit lane: vpdpbusd's unsigned operand, by
 * vpshufb of a nibble */
GL_ALWAYS_INLINE __m256i vn_iq4_utable(void)
{
    return _mm256_xor_si256(
        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)gl_iq4nl_values)),
        _mm256_set1_epi8(-128));
}

/* Symbol names carry the build's suffix, so both builds link side by side:
 * GL_VNNI_NAME(gl_matmul_q4_0_x8) is gl_matmul_q4_0_x8_avxvnni, and the
 * templates' table of its decode tunes GL_VNNI_TUNED(gl_matmul_q4_0_x8). */
#define GL_VNNI_CAT2(a, b) a##b
#define GL_VNNI_CAT(a, b)  GL_VNNI_CAT2(a, b)
#define GL_VNNI_NAME(n)    GL_VNNI_CAT(n, GL_VNNI_SUFFIX)
#define GL_VNNI_TUNED(n)   GL_VNNI_CAT(GL_VNNI_NAME(n), _tuned)

#endif
