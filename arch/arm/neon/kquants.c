/* NEON (AArch64 baseline, Cortex-A72 / Pi 4): Q2_K .. Q6_K and IQ4_XS
 * products with widening multiplies (arch/arm/neon/kquant_tmpl.h). */
#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"

/* smull / smlal2 to int16 (2 products a lane: |sum| <= 2 * 127 * 127 fits),
 * then a widening pairwise add to int32. */
GL_ALWAYS_INLINE int32x4_t kq_dot1(int32x4_t acc, int8x16_t w, const int8_t *x)
{
    const int8x16_t v = vld1q_s8(x);
    return vpadalq_s16(acc, vmlal_high_s8(vmull_s8(vget_low_s8(w), vget_low_s8(v)), w, v));
}

/* 4 products a lane in int16: |w| <= 32 gives |sum| <= 4 * 32 * 127 */
GL_ALWAYS_INLINE int32x4_t kq_dot2(int32x4_t acc, int8x16_t w0, int8x16_t w1, const int8_t *x)
{
    const int8x16_t v0 = vld1q_s8(x), v1 = vld1q_s8(x + 16);
    int16x8_t t = vmull_s8(vget_low_s8(w0), vget_low_s8(v0));
    t = vmlal_high_s8(t, w0, v0);
    t = vmlal_s8(t, vget_low_s8(w1), vget_low_s8(v1));
    return vpadalq_s16(acc, vmlal_high_s8(t, w1, v1));
}

#define KQ_SUFFIX neon
#define KQ_MC16   2
#define KQ_MC32   2
#include "arch/arm/neon/kquant_tmpl.h"
