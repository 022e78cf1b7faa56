/* Intrinsics for the AVX-512 kernels: the compiler's own <immintrin.h>, or,
 * with GL_USE_SIMDE (meson option simde_avx512), SIMDe's portable versions
 * under the native names, so the same source can be conformance-tested on
 * a CPU without AVX-512. A few 512-bit operations this SIMDe release lacks
 * go through the gl512_* helpers below, which have a native form and a
 * plain form with the same results. */
#ifndef GENLOOP_ARCH_X86_AVX512_SIMD_H
#define GENLOOP_ARCH_X86_AVX512_SIMD_H

#include <stdint.h>
#include <string.h>

#ifdef GL_USE_SIMDE
#include <immintrin.h> /* native AVX2 / FMA / F16C (built with -mavx2) */
#include <simde/x86/avx512.h>
#include <simde/x86/f16c.h>
#include <simde/x86/fma.h>
#else
#include <immintrin.h>
#endif
#define GL_X86_INTRINSICS 1

#include "arch/x86/avx2/util.h"

/* acc + dpbusd(u, the int32 at p in every lane), with the broadcast folded
 * into the instruction ({1to16}). Written with the intrinsics, gcc hoists
 * the broadcasts a decode body shares between its row groups out of the
 * group loop, materialises them as 64-byte vectors on the stack and reloads
 * those: 4 KiB of stores per super-block step and a full-width load per
 * product, which the streaming kernels paid for in bandwidth (bench/
 * RESULTS.md 2026-12-03). Same instruction, same bits. Its activation
 * pointer must be opaque inside the group or tile loop (gl_opaque_ptr:
 * kx8_tmpl.h's decode loop, the x16 tile bodies), or gcc hoists the 64
 * addresses themselves into registers and spills those. */
GL_ALWAYS_INLINE __m512i gl512_dpbusd_bcast(__m512i acc, __m512i u, const void *p)
{
#ifdef GL_USE_SIMDE
    return _mm512_dpbusd_epi32(acc, u, _mm512_set1_epi32(x8_load32(p)));
#else
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*(const int32_t *)p));
    return acc;
#endif
}

/* The 64 bytes at p (aligned) as a register value gcc cannot re-derive
 * from memory: otherwise it reloads a vector that several vpdpbusd share
 * (gl512_dpbusd_bcast's asm takes it as an operand) once per product,
 * which doubles the loads of a tile body (kx16_sub16_tmpl.h KS_ISUMS_U). */
GL_ALWAYS_INLINE __m512i gl512_load_pinned(const void *p)
{
    __m512i v = _mm512_load_si512(p);
    GL_IN_REG(v);
    return v;
}

/* A weight unit's 64 bytes at p (any alignment), loaded once into a
 * register when pin, where gcc would fold the load into each of the two or
 * three operations that use it (the K-quant units: v & 0x0f and v >> 4,
 * ...) and so load every line two or three times. The tile paths pin:
 * bench/ab_main, Zen 5, 2048 x 5632, 8 / 32 / 128 columns: Q4_Kx16
 * 1.07 / 1.06 / 1.07x, Q5_Kx16 1.13 / 1.11 / 1.06x, Q6_Kx16 1.04 / 1.01 /
 * 1.00x, IQ4_XSx16 1.05x, Q3_Kx16 1.15 / 1.04 / 1.00x, Q2_Kx16 1.06 / 1.07 /
 * 1.03x (bench/RESULTS.md 2026-12-05, sixth sitting); the 32-element
 * layouts' wide tiles (kernels.c) at 8 / 32 / 128:
 * Q4_0x16 1.05 / 1.06 / 1.07x, Q5_0x16 1.10 / 1.11 / 1.19x, IQ4_NLx16
 * 1.04-1.05x, Q4_1x16 / Q5_1x16 1.00-1.04x. Decode from DRAM does not
 * (pinned: 0.92-1.03x, Q3_Kx16 0.92x): there the folded loads stay. */
GL_ALWAYS_INLINE __m512i gl512_loadu_unit(const void *p, const int pin)
{
    __m512i v = _mm512_loadu_si512(p);
    if (pin)
        GL_IN_REG(v);
    return v;
}

/* v, computed here. A K-quant tile sums each pass's chains times their
 * scales into isum; gcc, free to reorder integer adds, sank every pass's
 * multiply-adds below the last pass, so all the chains of a super-block
 * were live at once and went to the stack (Q6_Kx16's unpacked tile: 510
 * vpdpbusd in a row, then 128 vpmulld, 1511 stack accesses). Taking isum
 * as it is at the end of each pass keeps the passes apart: bench/ab_main,
 * Zen 5, 2048 x 5632, 4 to 128 columns, Q6_Kx16 / Q3_Kx16 / Q2_Kx16 tiles
 * 1.21-1.32x, Q4_Kx16 1.05-1.15x, Q5_Kx16 1.07-1.11x, IQ4_XSx16 1.12-1.15x
 * (bench/RESULTS.md 2026-12-05, sixth sitting). No instruction. */
GL_ALWAYS_INLINE __m512i gl512_settled(__m512i v)
{
    GL_IN_REG(v);
    return v;
}

/* The first m (0..16) floats at p, zeros after; reads only those m. */
GL_ALWAYS_INLINE __m512 gl512_load_part_ps(const float *p, int m)
{
#ifdef GL_USE_SIMDE
    float t[16] = { 0 };
    memcpy(t, p, (size_t)m * sizeof(float));
    return _mm512_loadu_ps(t);
#else
    return _mm512_maskz_loadu_ps((__mmask16)((1u << m) - 1), p);
#endif
}

/* Lanes [lo, hi) of 16 floats at p (reading only those), zeros elsewhere;
 * and the store that writes only those lanes. */
GL_ALWAYS_INLINE __m512 gl512_load_lanes_ps(const float *p, int lo, int hi)
{
#ifdef GL_USE_SIMDE
    float t[16] = { 0 };
    memcpy(t + lo, p + lo, (size_t)(hi - lo) * sizeof(float));
    return _mm512_loadu_ps(t);
#else
    return _mm512_maskz_loadu_ps((__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1)), p);
#endif
}
GL_ALWAYS_INLINE void gl512_store_lanes_ps(float *p, int lo, int hi, __m512 v)
{
#ifdef GL_USE_SIMDE
    float t[16];
    _mm512_storeu_ps(t, v);
    memcpy(p + lo, t + lo, (size_t)(hi - lo) * sizeof(float));
#else
    _mm512_mask_storeu_ps(p, (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1)), v);
#endif
}

/* 16 raw 16-bit values, the first m (0..16) read from p, zeros after. */
GL_ALWAYS_INLINE __m256i gl512_load_part_u16(const uint16_t *p, int m)
{
#ifdef GL_USE_SIMDE
    uint16_t t[16] = { 0 };
    memcpy(t, p, (size_t)m * 2);
    return _mm256_loadu_si256((const __m256i *)t);
#else
    return _mm256_maskz_loadu_epi16((__mmask16)((1u << m) - 1), p);
#endif
}

GL_ALWAYS_INLINE __m512 gl512_from_halves(__m256 lo, __m256 hi)
{
#ifdef GL_USE_SIMDE
    float t[16];
    _mm256_storeu_ps(t, lo);
    _mm256_storeu_ps(t + 8, hi);
    return _mm512_loadu_ps(t);
#else
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
#endif
}

/* The same for 32-bit integer lanes (the bits moved as they are) */
GL_ALWAYS_INLINE __m512i gl512i_from_halves(__m256i lo, __m256i hi)
{
    return _mm512_castps_si512(gl512_from_halves(_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi)));
}

/* 16 halves to float (exact) */
GL_ALWAYS_INLINE __m512 gl512_cvtph_ps(__m256i h)
{
#ifdef GL_USE_SIMDE
    return gl512_from_halves(_mm256_cvtph_ps(_mm256_castsi256_si128(h)),
                             _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)));
#else
    return _mm512_cvtph_ps(h);
#endif
}

/* 16 int8 lanes to int32 (vpmovsxbd) */
GL_ALWAYS_INLINE __m512i gl512_cvtepi8_epi32(__m128i v)
{
#ifdef GL_USE_SIMDE
    return gl512i_from_halves(_mm256_cvtepi8_epi32(v), _mm256_cvtepi8_epi32(_mm_srli_si128(v, 8)));
#else
    return _mm512_cvtepi8_epi32(v);
#endif
}

/* 16 uint16 lanes to int32 (vpmovzxwd) */
GL_ALWAYS_INLINE __m512i gl512_cvtepu16_epi32(__m256i v)
{
#ifdef GL_USE_SIMDE
    return gl512i_from_halves(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)),
                              _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)));
#else
    return _mm512_cvtepu16_epi32(v);
#endif
}

/* int32 to float, 16 lanes (round to nearest even, as cvtdq2ps) */
GL_ALWAYS_INLINE __m512 gl512_cvtepi32_ps(__m512i v)
{
#ifdef GL_USE_SIMDE
    int32_t t[16];
    _mm512_storeu_si512(t, v);
    return gl512_from_halves(_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)t)),
                             _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(t + 8))));
#else
    return _mm512_cvtepi32_ps(v);
#endif
}

/* float to int32, 16 lanes, rounded by MXCSR (nearest even), as cvtps2dq */
GL_ALWAYS_INLINE __m512i gl512_cvtps_epi32(__m512 v)
{
#ifdef GL_USE_SIMDE
    float t[16];
    int32_t r[16];
    _mm512_storeu_ps(t, v);
    _mm256_storeu_si256((__m256i *)r, _mm256_cvtps_epi32(_mm256_loadu_ps(t)));
    _mm256_storeu_si256((__m256i *)(r + 8), _mm256_cvtps_epi32(_mm256_loadu_ps(t + 8)));
    return _mm512_loadu_si512(r);
#else
    return _mm512_cvtps_epi32(v);
#endif
}

/* Arithmetic shift right of 16 int32 lanes by 4. */
GL_ALWAYS_INLINE __m512i gl512_srai4_epi32(__m512i v)
{
#ifdef GL_USE_SIMDE
    int32_t t[16];
    _mm512_storeu_si512(t, v);
    const __m256i lo = _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)t), 4);
    const __m256i hi = _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(t + 8)), 4);
    _mm256_storeu_si256((__m256i *)t, lo);
    _mm256_storeu_si256((__m256i *)(t + 8), hi);
    return _mm512_loadu_si512(t);
#else
    return _mm512_srai_epi32(v, 4);
#endif
}

/* 16 bfloat16 to float (exact) */
GL_ALWAYS_INLINE __m512 gl512_cvtbf16_ps(__m256i h)
{
#ifdef GL_USE_SIMDE
    const __m256i lo = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(h)), 16);
    const __m256i hi = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(h, 1)), 16);
    return gl512_from_halves(_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi));
#else
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
#endif
}

/* The low and the high 8 of 16 floats. */
GL_ALWAYS_INLINE __m256 gl512_lo_ps(__m512 v)
{
    return _mm512_castps512_ps256(v);
}
GL_ALWAYS_INLINE __m256 gl512_hi_ps(__m512 v)
{
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

/* Sum of 16 floats in one fixed order: lo256 + hi256, then gl_hsum8_ps. */
GL_ALWAYS_INLINE float gl512_hsum_ps(__m512 v)
{
    return gl_hsum8_ps(_mm256_add_ps(gl512_lo_ps(v), gl512_hi_ps(v)));
}

#endif
