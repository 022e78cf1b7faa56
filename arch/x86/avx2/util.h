/* Helpers shared by the AVX2 kernels (and, through qmatmul_tmpl.h, by the
 * AVX-512 ones). Everything here is static inline so each including folder
 * gets its own copy compiled with its own target flags; a non-static inline
 * could be merged by the linker into the copy built for the wider ISA. */
#ifndef GENLOOP_ARCH_X86_AVX2_UTIL_H
#define GENLOOP_ARCH_X86_AVX2_UTIL_H

#include <stdint.h>
#include <string.h>

#include "quant.h"
#include "tune.h"

/* The AVX-512 folder may have included SIMDe in place of the native header
 * (arch/x86/avx512/simd.h); then the intrinsics are already declared. */
#ifndef GL_X86_INTRINSICS
#include <immintrin.h>
#define GL_X86_INTRINSICS 1
#endif

#define GL_ALWAYS_INLINE static inline __attribute__((always_inline))
/* a function gcc must neither inline nor clone for constant arguments
 * (clang has no such cloning, nor the attribute) */
#if defined(__GNUC__) && !defined(__clang__)
#define GL_NOINLINE_NOIPA __attribute__((noinline, noipa))
#else
#define GL_NOINLINE_NOIPA __attribute__((noinline))
#endif

/* Horizontal sum of 8 floats in one fixed order: (lo128 + hi128), then
 * (0+2, 1+3), then (0 + 1). Every float kernel that reduces lanes uses this
 * one function, so every code path of a backend rounds the same way. */
GL_ALWAYS_INLINE float gl_hsum8_ps(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Lane k of the result = gl_hsum8_ps(a[k]), bit for bit: the same
 * additions (lo + hi, then 0+2 / 1+3, then 0+1), eight sums side by side
 * (the attention kernels' batched score reduction). */
GL_ALWAYS_INLINE __m256 gl_hsum8x8_ps(const __m256 *a)
{
    __m256 s[4];
    for (int k = 0; k < 4; k++)
        s[k] = _mm256_add_ps(_mm256_permute2f128_ps(a[2 * k], a[2 * k + 1], 0x20),
                             _mm256_permute2f128_ps(a[2 * k], a[2 * k + 1], 0x31));
    /* s[k] = [lo+hi of a[2k] | lo+hi of a[2k+1]] */
    const __m256 t0 =
        _mm256_add_ps(_mm256_shuffle_ps(s[0], s[1], 0x44), _mm256_shuffle_ps(s[0], s[1], 0xee));
    const __m256 t1 =
        _mm256_add_ps(_mm256_shuffle_ps(s[2], s[3], 0x44), _mm256_shuffle_ps(s[2], s[3], 0xee));
    /* t0 = [x0 y0 x2 y2 | x1 y1 x3 y3]: x = lanes 0+2, y = lanes 1+3 of a[k] */
    const __m256 r =
        _mm256_add_ps(_mm256_shuffle_ps(t0, t1, 0x88), _mm256_shuffle_ps(t0, t1, 0xdd));
    /* r = sums of [a0 a2 a4 a6 | a1 a3 a5 a7] */
    return _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* Integer lane sums of eight 8-lane vectors: lane k of the result is the
 * sum of all lanes of p_k. Exact (integer adds), so the order is free. */
GL_ALWAYS_INLINE __m256i gl_reduce8_epi32(__m256i p0, __m256i p1, __m256i p2, __m256i p3,
                                          __m256i p4, __m256i p5, __m256i p6, __m256i p7)
{
    __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(p0, p1), _mm256_hadd_epi32(p2, p3));
    __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(p4, p5), _mm256_hadd_epi32(p6, p7));
    return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                            _mm256_permute2x128_si256(a, b, 0x31));
}

/* Sum of the 8 lanes of v in every lane (exact). */
GL_ALWAYS_INLINE __m256i gl_bcast_sum_epi32(__m256i v)
{
    v = _mm256_add_epi32(v, _mm256_permute2x128_si256(v, v, 0x01));
    v = _mm256_add_epi32(v, _mm256_shuffle_epi32(v, 0x4e));
    return _mm256_add_epi32(v, _mm256_shuffle_epi32(v, 0xb1));
}

/* Lane mask selecting the first m (0..8) of 8 lanes, for maskload/store. */
GL_ALWAYS_INLINE __m256i gl_tail_mask8(int m)
{
    static const int32_t t[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
    return _mm256_loadu_si256((const __m256i *)(t + 8 - m));
}

/* 4 bytes at any alignment, for broadcasting (x8 layouts). */
/* an 8-row tile's lanes to y: all 8, or the first m at a range's end */
GL_ALWAYS_INLINE void x8_store_rows(float *y, __m256 v, int m)
{
    if (m == 8) {
        _mm256_storeu_ps(y, v);
    } else {
        float t[8];
        _mm256_storeu_ps(t, v);
        memcpy(y, t, (size_t)m * sizeof(float));
    }
}

/* p, as a value gcc cannot see through (so it cannot hoist what is computed
 * from it out of the loop around the call) */
GL_ALWAYS_INLINE const int8_t *gl_opaque_ptr(const int8_t *p)
{
    __asm__("" : "+r"(p));
    return p;
}

/* Keeps vector v in a register as it is at this point: gcc can neither
 * re-derive it from memory (fold its load into each use) nor move what
 * computes it past here. An empty asm, no instruction; nothing under SIMDe,
 * whose vectors are not registers. */
#ifdef GL_USE_SIMDE
#define GL_IN_REG(v) ((void)(v))
#else
#define GL_IN_REG(v) __asm__("" : "+v"(v))
#endif

/* A 4-bit layout's unit of weights (the nibbles that two masks or
 * shifts take apart), loaded once into a register where gcc would fold the
 * load into both operations and read each line twice (arch/x86/avx512/
 * simd.h gl512_loadu_unit). bench/ab_main, Zen 5, two runs each way, 2048 x
 * 5632: AVX2 Q4_K decode 1.04-1.09x, tiles (128 columns) 1.06-1.09x, Q4_0
 * tiles 1.01-1.04x, Q5_K tiles 1.03-1.05x; AVX-VNNI Q4_0 / Q4_K tiles
 * 1.05-1.09x, Q5_0 and IQ4_XS 1.03-1.05x; decode otherwise within the noise.
 * Where it did not pay the loads fold: the 6-, 3- and 2-bit units (kx8.h;
 * Q6_K decode 0.93-0.95x) and AVX2's Q5_0 / Q5_1 units (decode 0.92-1.07x). */
GL_ALWAYS_INLINE __m256i gl256_loadu_unit(const void *p)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)p);
    GL_IN_REG(v);
    return v;
}

/* v, computed here: a tile's sums taken as they are at the end of each
 * pass, so gcc cannot sink the pass's multiply-adds below later passes and
 * spill their chains meanwhile (arch/x86/avx512/simd.h gl512_settled).
 * bench/ab_main, Zen 5, 8 and 128 columns: AVX2 Q4_K 1.05-1.11x, Q5_K
 * 1.04-1.09x, Q3_K 1.03x, Q2_K 1.08-1.11x; AVX-VNNI Q6_K 1.05-1.09x, Q3_K
 * 1.06-1.08x, Q2_K 1.11-1.12x. Not where it did not pay: AVX-VNNI's Q4_K
 * (0.91x at 8 columns) and IQ4_XS (1.00x). */
GL_ALWAYS_INLINE __m256i gl256_settled(__m256i v)
{
    GL_IN_REG(v);
    return v;
}

GL_ALWAYS_INLINE int32_t x8_load32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Lane mask selecting lanes [lo, hi) of 8, for maskload/store. */
GL_ALWAYS_INLINE __m256i x8_lane_mask(int lo, int hi)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(hi), idx),
                            _mm256_cmpgt_epi32(idx, _mm256_set1_epi32(lo - 1)));
}

/* Q5_0x8 / Q5_1x8 unit k (k < 4): the quants u = q in [0, 31] of its low
 * (lo) and high (hi) nibbles, the fifth bit at bit 4 from the re-encoded
 * qh lanes h with one shift (src/quant.h) */
GL_ALWAYS_INLINE void x8_q5_lohi(__m256i v, __m256i h, int k, __m256i *lo, __m256i *hi)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), m10 = _mm256_set1_epi8(0x10);
    *lo = _mm256_or_si256(_mm256_and_si256(v, m4),
                          _mm256_and_si256(_mm256_slli_epi16(h, 4 - k), m10));
    *hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                          _mm256_and_si256(_mm256_srli_epi16(h, k), m10));
}

/* Half to float of one scalar (exact; F16C). */
GL_ALWAYS_INLINE float gl_h2f(uint16_t h)
{
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

/* Loads 8 halves / bfloat16s as floats; the _part forms read only m < 8
 * elements (the rest become 0) so row tails never read past the row. */
GL_ALWAYS_INLINE __m256 gl_load8_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
GL_ALWAYS_INLINE __m256 gl_load8_bf16(const uint16_t *p)
{
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
GL_ALWAYS_INLINE __m128i gl_load_part_u16(const uint16_t *p, int m)
{
    uint16_t t[8] = { 0 };
    memcpy(t, p, (size_t)m * 2);
    return _mm_loadu_si128((const __m128i *)t);
}
GL_ALWAYS_INLINE __m256 gl_load_part_f32(const float *p, int m)
{
    return _mm256_maskload_ps(p, gl_tail_mask8(m));
}

/* The largest lane (exact in any order). */
GL_ALWAYS_INLINE float gl_hmax8_ps(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

/* Q8_K's scales from its largest magnitude amax and the first element of
 * that magnitude, max (signed): the quants are x * iscale, the block stores
 * d. The scalar expressions of arch/generic/quantize.c, shared by the
 * vector quantizers so their bytes stay generic's. */
typedef struct gl_q8k_scales {
    float iscale, d;
} gl_q8k_scales;
GL_ALWAYS_INLINE gl_q8k_scales gl_q8k_scales_of(float amax, float max)
{
    const float iscale = amax != 0.0f ? -127.0f / max : 0.0f;
    return (gl_q8k_scales){ iscale, amax != 0.0f ? 1.0f / iscale : 0.0f };
}

/* p * 2^n (n integral) in two steps, p * 2^(n >> 1) * 2^(n - (n >> 1)), so
 * that e^x near its clamp at -88 comes out as a subnormal instead of 0
 * (2^n alone would not fit a float's exponent). */
GL_ALWAYS_INLINE __m256 gl_exp8_scale(__m256 p, __m256 n)
{
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256 s1 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
    const __m256 s2 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/* e^x for the SwiGLU gate, |rel err| <= ~3 ulp over the clamped range.
 * x is clamped to [-88, 88.75]: below, e^x only ever meets 1 + e^x (== 1);
 * above, the result overflows to +inf as expf does. 2^n is applied in two
 * factors so n = 128 and n = -127 need no special case. */
GL_ALWAYS_INLINE __m256 gl_exp8_ps(__m256 x)
{
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.75f)), _mm256_set1_ps(-88.0f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    return gl_exp8_scale(p, n);
}

/* tanh y, |rel err| <= ~8 ulp (checkkernels: softcap). Below |y| = 0.5 the
 * odd Taylor series to y^15 (the next term is under 0.2 ulp there), so small
 * scores keep their relative precision; above, 1 - 2 / (1 + e^2|y|), where
 * the cancellation costs at most ~2 bits and e^x's overflow to inf gives
 * exactly 1. The sign goes back last; NaN passes through. */
GL_ALWAYS_INLINE __m256 gl_tanh8_ps(__m256 y)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 a = _mm256_andnot_ps(sign, y);
    const __m256 z = _mm256_mul_ps(a, a);
    __m256 p = _mm256_set1_ps(-929569.0f / 638512875.0f);
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(21844.0f / 6081075.0f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-1382.0f / 155925.0f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(62.0f / 2835.0f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-17.0f / 315.0f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.0f / 15.0f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-1.0f / 3.0f));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(a, z), p, a);
    const __m256 e = gl_exp8_ps(_mm256_add_ps(a, a));
    const __m256 big =
        _mm256_sub_ps(_mm256_set1_ps(1.0f),
                      _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e)));
    const __m256 t =
        _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.5f), _CMP_LT_OQ));
    const __m256 r = _mm256_or_ps(t, _mm256_and_ps(sign, y));
    return _mm256_blendv_ps(r, y, _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
}

/* ---- decode streaming over the x8 / x16 layouts (x8_tmpl.h, kx8_tmpl.h)
 * Software prefetch at two distances: far ahead, so enough DRAM requests
 * are in flight, and near, into L1, so the loads of a compute-heavy block
 * do not wait on L2. Distances and the far prefetch's hint are the tune's
 * (src/tune.h), a compile-time constant in every kernel instance:
 *  - default (Intel Sapphire Rapids): far = prefetcht1 (into L2) 4 KiB
 *    ahead, near = prefetcht0 1 KiB ahead. Measured (bench/matvec, 1 GiB
 *    cycle of 2048x5632 matrices, 2 threads, AVX-512 Q4_0x8): an L1
 *    prefetch 1 KiB ahead alone streamed at 74 % of the read bandwidth, L2
 *    2 KiB: 98 %, 4 KiB: 101 %, 8 KiB: 98 %; end to end (TinyLlama Q4_0
 *    decode, 2 threads) adding the L1 one took the products from ~23.1 to
 *    ~24.2 GB/s.
 *  - zen (AMD Zen 5): both prefetcht0, 2 KiB and 1 KiB ahead. On a Zen 5
 *    prefetcht1 only fills L2 and slowed every stream: AVX-512 Q4_0x16, 1
 *    thread, 28 GB/s with the default, 34-36 with these (probe 34-35);
 *    t0 at 4 / 8 KiB or alone at 2 KiB was slower (bench/RESULTS.md).
 *  - zen4 (AMD Zen 4): none in decode (the tune's hw_decode, one stream
 *    per thread), the default's in the tiles. Among prefetched streams
 *    prefetcht0 far ahead was the slowest (zen's numbers or 4 KiB: Q4_0x8
 *    1 thread 47-57 % of the probe against 88-96 %; prefetchnta as slow),
 *    t2 the same as t1; with four streams no prefetch read 46-66 %, but
 *    one unprefetched stream read Q4_0x16 / Q8_0x16 at 87-102 / 88-104 %
 *    where four prefetched ones read 71-74 / 71-84 %. */
GL_ALWAYS_INLINE void gl_prefetch_far(const int tune, const char *p)
{
    if (gl_tunes[tune].far_t0)
        _mm_prefetch(p, _MM_HINT_T0);
    else
        _mm_prefetch(p, _MM_HINT_T1);
}

/* The offset dist bytes ahead of offset at in a stream of gbytes: at or
 * past gbytes it moves skip bytes further, into the group that stream reads
 * next (gbytes = SIZE_MAX: never). */
GL_ALWAYS_INLINE size_t gl_pf_ahead(size_t at, size_t dist, size_t gbytes, size_t skip)
{
    return at + dist + (at + dist >= gbytes ? skip : 0);
}

/* Prefetches, for ng streams gb bytes apart from w, the blk bytes at
 * offset at + distance of each (gl_pf_ahead). With the tune's pf_lines, each
 * cache line is prefetched once: the lines that start inside the range
 * (blocks of 272 or 288 bytes are not line multiples, so one prefetch per
 * 64 bytes from a block's start touches some lines twice; on a Zen 5 the
 * spared instructions took Q4_0x16 and Q8_0x8 decode, 1 thread, from ~34
 * to ~37 GB/s). */
GL_ALWAYS_INLINE void gl_prefetch_streams(const int tune, const char *w, size_t gb, int ng,
                                          size_t at, size_t blk, size_t gbytes, size_t skip)
{
    const size_t far = gl_tunes[tune].pf_far, near = gl_tunes[tune].pf_near;
    const size_t o2 = gl_pf_ahead(at, far, gbytes, skip), o1 = gl_pf_ahead(at, near, gbytes, skip);
    if (gl_tunes[tune].pf_lines && blk >= 64) {
        /* a range of blk bytes holds at least nmin line starts (a constant:
         * unrolled) and at most one more */
        const size_t nmin = (blk - 63 + 63) / 64;
        for (int g = 0; g < ng; g++) {
            const uintptr_t a2 = (uintptr_t)(w + (size_t)g * gb + o2);
            const uintptr_t a1 = (uintptr_t)(w + (size_t)g * gb + o1);
            const uintptr_t l2 = (a2 + 63) & ~(uintptr_t)63, l1 = (a1 + 63) & ~(uintptr_t)63;
            for (size_t l = 0; l < nmin; l++) {
                gl_prefetch_far(tune, (const char *)(l2 + 64 * l));
                _mm_prefetch((const char *)(l1 + 64 * l), _MM_HINT_T0);
            }
            if (l2 + 64 * nmin < a2 + blk)
                gl_prefetch_far(tune, (const char *)(l2 + 64 * nmin));
            if (l1 + 64 * nmin < a1 + blk)
                _mm_prefetch((const char *)(l1 + 64 * nmin), _MM_HINT_T0);
        }
        return;
    }
    for (int g = 0; g < ng; g++)
        for (size_t o = 0; o < blk; o += 64) {
            gl_prefetch_far(tune, w + (size_t)g * gb + o2 + o);
            _mm_prefetch(w + (size_t)g * gb + o1 + o, _MM_HINT_T0);
        }
}

/* A prefetch that stays where the program puts it (prefetcht0 with t0,
 * else prefetcht1): gcc's scheduler gathers _mm_prefetch calls spread
 * between loads back into bursts. Zen 5, the Q4_0x16 decode loop below
 * with these instead of _mm_prefetch: TinyLlama decode per step, 1 thread
 * +5-7 %, 2 threads +5 % (bench/RESULTS.md, 2026-12-04). */
GL_ALWAYS_INLINE void gl_prefetch_in_order(const char *p, const int t0)
{
    if (t0)
        __asm__ volatile("prefetcht0 %0" ::"m"(*p));
    else
        __asm__ volatile("prefetcht1 %0" ::"m"(*p));
}

/* gl_prefetch_streams over whole lines, for one stream at w (a multiple of
 * 64): lines l0 .. l1 - 1 counted from offset at + distance (at a multiple
 * of 64; gl_pf_ahead). The lines pf_lines takes
 * block by block, without its per-block alignment arithmetic: decode
 * kernels step over whole lines of blocks (GL_LINE_BLOCKS) to use it. */
GL_ALWAYS_INLINE void gl_prefetch_line_span(const int tune, const char *w, size_t at, int l0,
                                            int l1, size_t gbytes, size_t skip)
{
    const size_t far = gl_tunes[tune].pf_far, near = gl_tunes[tune].pf_near;
    const char *a2 = w + gl_pf_ahead(at, far, gbytes, skip);
    const char *a1 = w + gl_pf_ahead(at, near, gbytes, skip);
    /* one register per distance, each line a displacement from it: left
     * to itself gcc re-associated the stream's offset + 64 l into a
     * constant per line, a load and an add for every prefetch */
    __asm__("" : "+r"(a2), "+r"(a1));
    for (int l = l0; l < l1; l++) {
        gl_prefetch_in_order(a2 + 64 * l, gl_tunes[tune].far_t0);
        gl_prefetch_in_order(a1 + 64 * l, 1);
    }
}

/* The fewest blocks of blk bytes that make whole cache lines: 64 over the
 * largest power of two (up to 64) dividing blk. */
#define GL_LINE_BLOCKS(blk) (64 / (((blk) & -(blk)) < 64 ? ((blk) & -(blk)) : 64))

/* Row groups (or pairs) per panel of the general, many-column paths:
 * ~512 KiB of weights, so a panel stays in L2 while every column tile
 * streams over it; at least one. unit_bytes: one group's bytes per block. */
GL_ALWAYS_INLINE int gl_panel_groups(int kmax, size_t unit_bytes)
{
    const size_t n = ((size_t)512 << 10) / ((size_t)kmax * unit_bytes);
    return n < 1 ? 1 : (int)n;
}

/* Per activation block b < kn of one column: its scale as float, and the
 * correction -2^shift sum(quants) of kernels whose integer dot takes an
 * unsigned a = w + 2^shift (shift < 0: none, 0). Exact. */
GL_ALWAYS_INLINE void gl_x8_col_prep(const block_q8_0 *xs, int kn, int shift, int32_t *corr,
                                     float *dx)
{
    for (int b = 0; b < kn; b++) {
        if (shift >= 0) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)xs[b].qs);
            const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), v),
                                                _mm256_set1_epi16(1));
            corr[b] = -(_mm256_cvtsi256_si32(gl_bcast_sum_epi32(s)) * (1 << shift));
        } else {
            corr[b] = 0;
        }
        dx[b] = gl_h2f(xs[b].d);
    }
}

/* The same for Q8_1 activations (weights with an offset): sums[b] = the
 * block's quant sum s, dx[b] its scale. */
GL_ALWAYS_INLINE void gl_x8_col_prep_q8_1(const block_q8_1 *xs, int kn, int32_t *sums, float *dx)
{
    for (int b = 0; b < kn; b++) {
        sums[b] = xs[b].s;
        dx[b] = gl_h2f(xs[b].d);
    }
}

#endif
