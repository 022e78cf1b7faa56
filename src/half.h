/* IEEE half and bfloat16 conversions, exact and portable (no F16C needed). */
#ifndef GENLOOP_SRC_HALF_H
#define GENLOOP_SRC_HALF_H

#include <stdint.h>
#include <string.h>

static inline float gl_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t gl_bits_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float gl_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        /* zero or subnormal: value = mant * 2^-24, exact in float */
        float v = (float)mant * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    if (exp == 31)
        return gl_f32_from_bits(sign | 0x7f800000u | (mant << 13));
    return gl_f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

/* Round to nearest even, as F16C's vcvtps2ph with imm 0 does. */
static inline uint16_t gl_f32_to_f16(float f)
{
    uint32_t x = gl_bits_from_f32(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000u) { /* below 2^-14: subnormal half */
        float a = gl_f32_from_bits(ax);
        /* adding 0.5 in float aligns the mantissa; rounding is the FPU's RNE */
        float r = a + 0.5f;
        return (uint16_t)(sign | (gl_bits_from_f32(r) - 0x3f000000u));
    }
    uint32_t mant_odd = (ax >> 13) & 1;
    ax += 0xc8000fffu + mant_odd; /* rebias exponent and round to nearest even */
    return (uint16_t)(sign | (ax >> 13));
}

static inline float gl_bf16_to_f32(uint16_t h)
{
    return gl_f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t gl_f32_to_bf16(float f)
{
    uint32_t x = gl_bits_from_f32(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 64); /* quiet nan */
    return (uint16_t)((x + (0x7fff + ((x >> 16) & 1))) >> 16);
}

#endif
