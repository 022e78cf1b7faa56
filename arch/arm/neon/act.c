/* NEON (AArch64 baseline) quantizers of the Q8_1 and Q8_K activation
 * formats, byte-identical to arch/generic/quantize.c:
 *  - the maxima by vmaxnm (exact; like fmaxf and generic's strict '>'
 *    scan, it never lets a NaN through: a NaN lane loses to the number);
 *  - scales by the same scalar expressions as generic;
 *  - q = fcvtns(x * id), round half to even as nearbyintf in the default
 *    rounding mode; products outside [-127.5, 127.5] or NaN give 0, as
 *    generic's range test does (vcvtnq would saturate instead);
 *  - block sums by exact widening pairwise adds. */
#include <float.h>

#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"
#include "half.h"

/* 4 floats times s, rounded half-even to int32; 0 where the product is
 * outside [-127.5, 127.5] or NaN. */
GL_ALWAYS_INLINE int32x4_t q8_round4(float32x4_t x, float32x4_t s)
{
    const float32x4_t v = vmulq_f32(x, s);
    const uint32x4_t ok =
        vandq_u32(vcgeq_f32(v, vdupq_n_f32(-127.5f)), vcleq_f32(v, vdupq_n_f32(127.5f)));
    return vreinterpretq_s32_u32(vandq_u32(ok, vreinterpretq_u32_s32(vcvtnq_s32_f32(v))));
}

/* 16 floats at x times s -> 16 int8 (values in [-128, 128] narrow exactly:
 * nearbyint of [-127.5, 127.5] is within it; generic stores (int8_t) of
 * the same value). */
GL_ALWAYS_INLINE int8x16_t q8_round16(const float32x4_t *v, float32x4_t s)
{
    const int16x8_t a = vcombine_s16(vmovn_s32(q8_round4(v[0], s)), vmovn_s32(q8_round4(v[1], s)));
    const int16x8_t b = vcombine_s16(vmovn_s32(q8_round4(v[2], s)), vmovn_s32(q8_round4(v[3], s)));
    return vcombine_s8(vmovn_s16(a), vmovn_s16(b));
}

GL_DECL_QUANTIZE_FN(gl_quantize_q8_1_neon)
{
    block_q8_1 *out = y;
    for (int b = 0; b < n / QK8_0; b++) {
        const float *xb = x + b * QK8_0;
        float32x4_t v[8];
        for (int i = 0; i < 8; i++)
            v[i] = vld1q_f32(xb + 4 * i);
        float32x4_t m0 = vmaxnmq_f32(vabsq_f32(v[0]), vabsq_f32(v[1]));
        float32x4_t m1 = vmaxnmq_f32(vabsq_f32(v[2]), vabsq_f32(v[3]));
        float32x4_t m2 = vmaxnmq_f32(vabsq_f32(v[4]), vabsq_f32(v[5]));
        float32x4_t m3 = vmaxnmq_f32(vabsq_f32(v[6]), vabsq_f32(v[7]));
        m0 = vmaxnmq_f32(vmaxnmq_f32(m0, m1), vmaxnmq_f32(m2, m3));
        const float amax = vmaxnmvq_f32(vmaxnmq_f32(m0, vdupq_n_f32(0.0f)));
        const float d = amax / 127.0f;
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        if (id > FLT_MAX) /* amax < ~3.7e-37: 127 / amax overflowed; all q = 0 */
            id = 0.0f;
        const float32x4_t vid = vdupq_n_f32(id);
        const int8x16_t q0 = q8_round16(v, vid), q1 = q8_round16(v + 4, vid);
        out[b].d = gl_f32_to_f16(d);
        out[b].s = (int16_t)(vaddlvq_s8(q0) + vaddlvq_s8(q1));
        vst1q_s8(out[b].qs, q0);
        vst1q_s8(out[b].qs + 16, q1);
    }
}

/* Q8_K: max = the FIRST element of largest magnitude (generic's strict '>'
 * scan keeps the earliest), found by comparing |x| with amax. */
GL_DECL_QUANTIZE_FN(gl_quantize_q8_K_neon)
{
    block_q8_K *out = y;
    for (int b = 0; b < n / QK_K; b++) {
        const float *xb = x + b * QK_K;
        float32x4_t m[4];
        for (int i = 0; i < 4; i++)
            m[i] = vdupq_n_f32(0.0f);
        for (int i = 0; i < QK_K / 4; i += 4)
            for (int k = 0; k < 4; k++)
                m[k] = vmaxnmq_f32(m[k], vabsq_f32(vld1q_f32(xb + 4 * (i + k))));
        const float amax =
            vmaxnmvq_f32(vmaxnmq_f32(vmaxnmq_f32(m[0], m[1]), vmaxnmq_f32(m[2], m[3])));
        float max = 0.0f;
        if (amax != 0.0f) {
            const float32x4_t va = vdupq_n_f32(amax);
            int i = 0;
            while (vmaxvq_u32(vceqq_f32(vabsq_f32(vld1q_f32(xb + 4 * i)), va)) == 0)
                i++;
            for (int j = 4 * i;; j++)
                if (__builtin_fabsf(xb[j]) == amax) {
                    max = xb[j];
                    break;
                }
        }
        const float iscale = amax != 0.0f ? -127.0f / max : 0.0f;
        out[b].d = amax != 0.0f ? 1.0f / iscale : 0.0f;
        const float32x4_t vs = vdupq_n_f32(iscale);
        int16x8_t s16[16];
        for (int i = 0; i < 16; i++) {
            float32x4_t v[4];
            for (int k = 0; k < 4; k++)
                v[k] = vld1q_f32(xb + 16 * i + 4 * k);
            const int8x16_t q = q8_round16(v, vs);
            vst1q_s8(out[b].qs + 16 * i, q);
            s16[i] = vpaddlq_s8(q);
        }
        /* |partial sums| <= 16 * 127: every step fits int16 */
        int16x8_t t[8];
        for (int i = 0; i < 8; i++)
            t[i] = vpaddq_s16(s16[2 * i], s16[2 * i + 1]);
        for (int i = 0; i < 4; i++)
            t[i] = vpaddq_s16(t[2 * i], t[2 * i + 1]);
        int16_t bs[16];
        vst1q_s16(bs, vpaddq_s16(t[0], t[1]));
        vst1q_s16(bs + 8, vpaddq_s16(t[2], t[3]));
        memcpy(out[b].bsums, bs, sizeof bs);
    }
}
