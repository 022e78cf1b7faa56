/* Activation quantization: d = amax / 127, q = round-half-even(x * 127 /
 * amax), exactly specified so SIMD versions are checked for equality, not
 * closeness. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "arch/generic/generic.h"
#include "half.h"

GL_DECL_QUANTIZE_FN(gl_quantize_q8_0_generic)
{
    block_q8_0 *out = y;
    for (int b = 0; b < n / QK8_0; b++) {
        const float *xb = x + b * QK8_0;
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++)
            amax = fmaxf(amax, fabsf(xb[j]));
        const float d = amax / 127.0f;
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        if (id > FLT_MAX) /* amax < ~3.7e-37: 127 / amax overflowed; all q = 0 */
            id = 0.0f;
        out[b].d = gl_f32_to_f16(d);
        for (int j = 0; j < QK8_0; j++) {
            /* |x * id| <= 127 for finite x; a NaN or inf activation (from a
             * broken model) must not make the conversion undefined */
            const float v = xb[j] * id;
            out[b].qs[j] = v >= -127.5f && v <= 127.5f ? (int8_t)nearbyintf(v) : 0;
        }
    }
}

GL_DECL_QUANTIZE_FN(gl_quantize_q8_1_generic)
{
    block_q8_1 *out = y;
    for (int b = 0; b < n / QK8_0; b++) {
        block_q8_0 q;
        gl_quantize_q8_0_generic(x + b * QK8_0, &q, QK8_0);
        int s = 0;
        for (int j = 0; j < QK8_0; j++)
            s += q.qs[j];
        out[b].d = q.d;
        out[b].s = (int16_t)s;
        memcpy(out[b].qs, q.qs, QK8_0);
    }
}

/* Q8_K keeps the sign of the largest-magnitude element in its scale, as the
 * reference implementation does: matching its rounding keeps K-quant logits
 * closer to the reference's (pad256 Q4_K: worst step 7.9 -> 4.1 %). */
GL_DECL_QUANTIZE_FN(gl_quantize_q8_K_generic)
{
    block_q8_K *out = y;
    for (int b = 0; b < n / QK_K; b++) {
        const float *xb = x + b * QK_K;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            if (fabsf(xb[j]) > amax) {
                amax = fabsf(xb[j]);
                max = xb[j];
            }
        }
        const float iscale = amax != 0.0f ? -127.0f / max : 0.0f;
        out[b].d = amax != 0.0f ? 1.0f / iscale : 0.0f;
        for (int j = 0; j < QK_K; j++) {
            const float v = xb[j] * iscale; /* |v| <= 127 for finite input */
            out[b].qs[j] = v >= -127.5f && v <= 127.5f ? (int8_t)nearbyintf(v) : 0;
        }
        for (int i = 0; i < QK_K / 16; i++) {
            int s = 0;
            for (int j = 0; j < 16; j++)
                s += out[b].qs[16 * i + j];
            out[b].bsums[i] = (int16_t)s;
        }
    }
}
