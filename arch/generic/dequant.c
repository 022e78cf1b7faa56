/* Row conversion to float, used for embedding lookups. */
#include <string.h>

#include "arch/generic/generic.h"
#include "half.h"

GL_DECL_DEQUANT_FN(gl_dequant_f32_generic)
{
    memcpy(y, w, (size_t)n * sizeof(float));
}

GL_DECL_DEQUANT_FN(gl_dequant_f16_generic)
{
    const gl_u16u *h = w;
    for (int j = 0; j < n; j++)
        y[j] = gl_f16_to_f32(h[j]);
}

GL_DECL_DEQUANT_FN(gl_dequant_bf16_generic)
{
    const gl_u16u *h = w;
    for (int j = 0; j < n; j++)
        y[j] = gl_bf16_to_f32(h[j]);
}

GL_DECL_DEQUANT_FN(gl_dequant_q8_0_generic)
{
    const block_q8_0 *b = w;
    for (int i = 0; i < n / QK8_0; i++) {
        const float d = gl_f16_to_f32(b[i].d);
        for (int j = 0; j < QK8_0; j++)
            y[i * QK8_0 + j] = d * b[i].qs[j];
    }
}

GL_DECL_DEQUANT_FN(gl_dequant_q4_0_generic)
{
    const block_q4_0 *b = w;
    for (int i = 0; i < n / QK4_0; i++) {
        const float d = gl_f16_to_f32(b[i].d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            y[i * QK4_0 + j] = d * ((b[i].qs[j] & 0x0f) - 8);
            y[i * QK4_0 + j + QK4_0 / 2] = d * ((b[i].qs[j] >> 4) - 8);
        }
    }
}
