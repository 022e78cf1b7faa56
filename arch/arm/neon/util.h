/* Helpers shared by the NEON kernels (baseline, dotprod and i8mm files).
 * Everything is static inline, so each file gets its own copy compiled
 * with its own -march: a non-static inline could be merged by the linker
 * into the copy built for the higher ISA and then run on a CPU without it. */
#ifndef GENLOOP_ARCH_ARM_NEON_UTIL_H
#define GENLOOP_ARCH_ARM_NEON_UTIL_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#include "quant.h"

#define GL_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Horizontal sum of 8 float lanes held as (a, b), in one fixed order:
 * a + b, then pairwise (0+1, 2+3), then (01 + 23). Every float kernel that
 * reduces lanes uses this one function, so every path rounds the same way. */
/* a 4-row tile's lanes to y: all 4, or the first m at a range's end */
GL_ALWAYS_INLINE void n4_store_rows(float *y, float32x4_t v, int m)
{
    if (m == 4) {
        vst1q_f32(y, v);
    } else {
        float t[4];
        vst1q_f32(t, v);
        memcpy(y, t, (size_t)m * sizeof(float));
    }
}

GL_ALWAYS_INLINE float gl_hsum8_f32(float32x4_t a, float32x4_t b)
{
    float32x4_t s = vaddq_f32(a, b);
    s = vpaddq_f32(s, s);
    return vgetq_lane_f32(s, 0) + vgetq_lane_f32(s, 1);
}

/* Four rows' partial int32 sums -> lane k = sum of the lanes of p_k (exact). */
GL_ALWAYS_INLINE int32x4_t gl_reduce4_s32(int32x4_t p0, int32x4_t p1, int32x4_t p2, int32x4_t p3)
{
    return vpaddq_s32(vpaddq_s32(p0, p1), vpaddq_s32(p2, p3));
}

/* Half / bfloat16 to float, 4 or 8 at a time (exact, subnormals included:
 * Linux runs with FPCR.FZ / FZ16 clear). */
GL_ALWAYS_INLINE float32x4_t gl_h2f4(uint16x4_t h)
{
    return vcvt_f32_f16(vreinterpret_f16_u16(h));
}
GL_ALWAYS_INLINE float32x4_t gl_bf2f4(uint16x4_t h)
{
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

/* Block scale d of block b of a row, as a half bit pattern; rows may be at
 * any byte offset, so through memcpy. */
GL_ALWAYS_INLINE uint16_t gl_blk_d(const void *blk)
{
    uint16_t d;
    memcpy(&d, blk, 2);
    return d;
}

/* A row's int8 quants for one block, widened to 32 signed bytes (lo = the
 * block's elements 0..15, hi = 16..31). Q4_0: byte j holds element j in its
 * low nibble and j + 16 in its high nibble; w = nibble - 8. */
typedef struct {
    int8x16_t lo, hi;
} gl_q32;

GL_ALWAYS_INLINE gl_q32 gl_unpack_q8_0(const block_q8_0 *b)
{
    return (gl_q32){ vld1q_s8(b->qs), vld1q_s8(b->qs + 16) };
}

GL_ALWAYS_INLINE gl_q32 gl_unpack_q4_0(const block_q4_0 *b)
{
    const uint8x16_t q = vld1q_u8(b->qs);
    const int8x16_t eight = vdupq_n_s8(8);
    return (gl_q32){ vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0f))), eight),
                     vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight) };
}

/* 32 activation quants (Q8_0 / Q8_1 qs) as a gl_q32. */
GL_ALWAYS_INLINE gl_q32 gl_load_x32(const int8_t *q)
{
    return (gl_q32){ vld1q_s8(q), vld1q_s8(q + 16) };
}

/* Q4_1: the nibbles as they are (0..15). */
GL_ALWAYS_INLINE gl_q32 gl_unpack_q4_1(const block_q4_1 *b)
{
    const uint8x16_t q = vld1q_u8(b->qs);
    return (gl_q32){ vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0f))),
                     vreinterpretq_s8_u8(vshrq_n_u8(q, 4)) };
}

/* IQ4_NL: the nibbles index gl_iq4nl_values. */
GL_ALWAYS_INLINE gl_q32 gl_unpack_iq4_nl(const block_iq4_nl *b)
{
    const uint8x16_t q = vld1q_u8(b->qs);
    const int8x16_t t = vld1q_s8(gl_iq4nl_values);
    return (gl_q32){ vqtbl1q_s8(t, vandq_u8(q, vdupq_n_u8(0x0f))),
                     vqtbl1q_s8(t, vshrq_n_u8(q, 4)) };
}

/* Bit 4 of the 32 elements of a Q5 block (bit j of the little-endian qh
 * is element j's) as 0x10 / 0 bytes: byte j / 8 of qh spread over 8 lanes,
 * then each lane tests its own bit. */
GL_ALWAYS_INLINE void gl_q5_high(const uint8_t *qh, uint8x16_t *lo, uint8x16_t *hi)
{
    uint32_t h;
    memcpy(&h, qh, 4);
    const uint8x16_t t = vreinterpretq_u8_u32(vdupq_n_u32(h));
    static const uint8_t ilo[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1 };
    static const uint8_t bit[16] = { 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128 };
    const uint8x16_t i0 = vld1q_u8(ilo), bits = vld1q_u8(bit), m16 = vdupq_n_u8(0x10);
    *lo = vandq_u8(vtstq_u8(vqtbl1q_u8(t, i0), bits), m16);
    *hi = vandq_u8(vtstq_u8(vqtbl1q_u8(t, vaddq_u8(i0, vdupq_n_u8(2))), bits), m16);
}

/* Q5_1: nibble | bit 4 (0..31). */
GL_ALWAYS_INLINE gl_q32 gl_unpack_q5_1(const block_q5_1 *b)
{
    uint8x16_t hl, hh;
    gl_q5_high(b->qh, &hl, &hh);
    const uint8x16_t q = vld1q_u8(b->qs);
    return (gl_q32){ vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0f)), hl)),
                     vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), hh)) };
}

/* Q5_0: (nibble | bit 4) - 16. */
GL_ALWAYS_INLINE gl_q32 gl_unpack_q5_0(const block_q5_0 *b)
{
    uint8x16_t hl, hh;
    gl_q5_high(b->qh, &hl, &hh);
    const uint8x16_t q = vld1q_u8(b->qs);
    const int8x16_t k16 = vdupq_n_s8(16);
    return (
        gl_q32){ vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0f)), hl)), k16),
                 vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), hh)), k16) };
}

/* e^x, |rel err| <= ~3 ulp over the clamped range. x is clamped to
 * [-88, 88.75]: below, e^x only ever meets 1 + e^x (== 1); above, the result
 * overflows to +inf as expf does. 2^n is applied in two factors so n = 128
 * and n = -127 need no special case. */
GL_ALWAYS_INLINE float32x4_t gl_exp4_f32(float32x4_t x)
{
    x = vmaxq_f32(vminq_f32(x, vdupq_n_f32(88.75f)), vdupq_n_f32(-88.0f));
    const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504088896341f)));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.0f / 5040);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 720), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 120), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 24), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 6), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    const int32x4_t ni = vcvtq_s32_f32(n);
    const int32x4_t n1 = vshrq_n_s32(ni, 1);
    const int32x4_t n2 = vsubq_s32(ni, n1);
    const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
    const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
}

/* tanh y, |rel err| <= ~8 ulp: the AVX2 twin's method (x86/avx2/util.h
 * gl_tanh8_ps): odd series to y^15 below |y| = 0.5, 1 - 2 / (1 + e^2|y|)
 * above, the sign back last, NaN passed through. */
GL_ALWAYS_INLINE float32x4_t gl_tanh4_f32(float32x4_t y)
{
    const float32x4_t a = vabsq_f32(y);
    const float32x4_t z = vmulq_f32(a, a);
    float32x4_t p = vdupq_n_f32(-929569.0f / 638512875.0f);
    p = vfmaq_f32(vdupq_n_f32(21844.0f / 6081075.0f), p, z);
    p = vfmaq_f32(vdupq_n_f32(-1382.0f / 155925.0f), p, z);
    p = vfmaq_f32(vdupq_n_f32(62.0f / 2835.0f), p, z);
    p = vfmaq_f32(vdupq_n_f32(-17.0f / 315.0f), p, z);
    p = vfmaq_f32(vdupq_n_f32(2.0f / 15.0f), p, z);
    p = vfmaq_f32(vdupq_n_f32(-1.0f / 3.0f), p, z);
    const float32x4_t small = vfmaq_f32(a, vmulq_f32(a, z), p);
    const float32x4_t e = gl_exp4_f32(vaddq_f32(a, a));
    const float32x4_t big =
        vsubq_f32(vdupq_n_f32(1.0f), vdivq_f32(vdupq_n_f32(2.0f), vaddq_f32(vdupq_n_f32(1.0f), e)));
    const float32x4_t t = vbslq_f32(vcltq_f32(a, vdupq_n_f32(0.5f)), small, big);
    /* the sign bit of y onto t */
    const float32x4_t r = vbslq_f32(vdupq_n_u32(0x80000000u), y, t);
    return vbslq_f32(vceqq_f32(y, y), r, y);
}

#endif
