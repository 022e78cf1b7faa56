/* NEON (AArch64 baseline, -march=armv8-a) Q8_0 activation quantizer and
 * Q8_0 / Q4_0 matrix products with widening multiplies. */
#include <float.h>

#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"
#include "half.h"

/* Bit-exact with gl_quantize_q8_0_generic: amax by max (exact), d and id by
 * the same scalar expressions, d to half with gl_f32_to_f16 (round to
 * nearest even), q = fcvtns(x * id), which rounds half to even exactly as
 * nearbyintf does under the default rounding mode. Values are in
 * [-127, 127] (id is set to 0 when 127/amax overflows, as in generic), so
 * narrowing int32 -> int16 -> int8 keeps them. */
GL_DECL_QUANTIZE_FN(gl_quantize_q8_0_neon)
{
    block_q8_0 *out = y;
    for (int b = 0; b < n / QK8_0; b++) {
        const float *xb = x + b * QK8_0;
        float32x4_t v[8];
        for (int i = 0; i < 8; i++)
            v[i] = vld1q_f32(xb + 4 * i);
        float32x4_t m0 = vmaxq_f32(vabsq_f32(v[0]), vabsq_f32(v[1]));
        float32x4_t m1 = vmaxq_f32(vabsq_f32(v[2]), vabsq_f32(v[3]));
        float32x4_t m2 = vmaxq_f32(vabsq_f32(v[4]), vabsq_f32(v[5]));
        float32x4_t m3 = vmaxq_f32(vabsq_f32(v[6]), vabsq_f32(v[7]));
        const float amax = vmaxvq_f32(vmaxq_f32(vmaxq_f32(m0, m1), vmaxq_f32(m2, m3)));
        const float d = amax / 127.0f;
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        if (id > FLT_MAX) /* amax < ~3.7e-37: 127 / amax overflowed; all q = 0 */
            id = 0.0f;
        out[b].d = gl_f32_to_f16(d);
        const float32x4_t vid = vdupq_n_f32(id);
        int16x8_t h[4];
        for (int i = 0; i < 4; i++)
            h[i] = vcombine_s16(vmovn_s32(vcvtnq_s32_f32(vmulq_f32(v[2 * i], vid))),
                                vmovn_s32(vcvtnq_s32_f32(vmulq_f32(v[2 * i + 1], vid))));
        vst1q_s8(out[b].qs, vcombine_s8(vmovn_s16(h[0]), vmovn_s16(h[1])));
        vst1q_s8(out[b].qs + 16, vcombine_s8(vmovn_s16(h[2]), vmovn_s16(h[3])));
    }
}

/* Integer dot of 32 int8 pairs as 4 int32 lanes: smull to int16 (exact,
 * -128 * -128 included), then pairwise widening adds to int32 (two such
 * products can overflow int16, so never add them in 16 bits). */
GL_ALWAYS_INLINE int32x4_t dot32(gl_q32 w, const int8_t *xq)
{
    const int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
    int32x4_t a = vpaddlq_s16(vmull_s8(vget_low_s8(w.lo), vget_low_s8(x0)));
    a = vpadalq_s16(a, vmull_high_s8(w.lo, x0));
    a = vpadalq_s16(a, vmull_s8(vget_low_s8(w.hi), vget_low_s8(x1)));
    return vpadalq_s16(a, vmull_high_s8(w.hi, x1));
}

#define DEF_ISUM(NAME, WBLK, XBLK, UNPACK)                                                         \
    GL_ALWAYS_INLINE void NAME(const WBLK *const *wr, int b, const XBLK *const *xs, const int nc,  \
                               int32x4_t *s)                                                       \
    {                                                                                              \
        const gl_q32 w0 = UNPACK(wr[0] + b), w1 = UNPACK(wr[1] + b);                               \
        const gl_q32 w2 = UNPACK(wr[2] + b), w3 = UNPACK(wr[3] + b);                               \
        for (int c = 0; c < nc; c++) {                                                             \
            const int8_t *xq = xs[c][b].qs;                                                        \
            s[c] = gl_reduce4_s32(dot32(w0, xq), dot32(w1, xq), dot32(w2, xq), dot32(w3, xq));     \
        }                                                                                          \
    }

DEF_ISUM(isum_q8_0, block_q8_0, block_q8_0, gl_unpack_q8_0)
DEF_ISUM(isum_q4_0, block_q4_0, block_q8_0, gl_unpack_q4_0)
DEF_ISUM(isum_q5_0, block_q5_0, block_q8_0, gl_unpack_q5_0)
DEF_ISUM(isum_iq4_nl, block_iq4_nl, block_q8_0, gl_unpack_iq4_nl)
DEF_ISUM(isum_q4_1, block_q4_1, block_q8_1, gl_unpack_q4_1)
DEF_ISUM(isum_q5_1, block_q5_1, block_q8_1, gl_unpack_q5_1)

#define QT_NAME gl_matmul_q8_0_neon
#define QT_WBLK block_q8_0
#define QT_ISUM isum_q8_0
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q4_0_neon
#define QT_WBLK block_q4_0
#define QT_ISUM isum_q4_0
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q5_0_neon
#define QT_WBLK block_q5_0
#define QT_XBLK block_q8_0
#define QT_ISUM isum_q5_0
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_iq4_nl_neon
#define QT_WBLK block_iq4_nl
#define QT_XBLK block_q8_0
#define QT_ISUM isum_iq4_nl
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q4_1_neon
#define QT_WBLK block_q4_1
#define QT_XBLK block_q8_1
#define QT_MIN
#define QT_ISUM isum_q4_1
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q5_1_neon
#define QT_WBLK block_q5_1
#define QT_XBLK block_q8_1
#define QT_MIN
#define QT_ISUM isum_q5_1
#include "arch/arm/neon/qmatmul_tmpl.h"
