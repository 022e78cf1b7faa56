/* Activation quantization: d = amax / 127, q = round-half-even(x * 127 /
 * amax), exactly specified so SIMD versions are checked for equality, not
 * closeness. */
#include <float.h>
#include <math.h>

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
