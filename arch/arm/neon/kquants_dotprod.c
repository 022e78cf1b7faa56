/* NEON + dotprod (Cortex-A76 / Pi 5): Q2_K .. Q6_K and IQ4_XS products
 * with sdot (arch/arm/neon/kquant_tmpl.h). */
#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"

GL_ALWAYS_INLINE int32x4_t kq_dot1(int32x4_t acc, int8x16_t w, const int8_t *x)
{
    return vdotq_s32(acc, w, vld1q_s8(x));
}

GL_ALWAYS_INLINE int32x4_t kq_dot2(int32x4_t acc, int8x16_t w0, int8x16_t w1, const int8_t *x)
{
    return vdotq_s32(vdotq_s32(acc, w0, vld1q_s8(x)), w1, vld1q_s8(x + 16));
}

#define KQ_SUFFIX neon_dotprod
#include "arch/arm/neon/kquant_tmpl.h"
