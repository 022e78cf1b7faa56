/* References for the GPT-2 block: LayerNorm with bias, tanh-GELU, bias add. */
#include <math.h>

#include "arch/generic/generic.h"

GL_DECL_LAYERNORM_FN(gl_layernorm_generic)
{
    /* two passes: the mean first, then the variance of the centred values,
     * which stays accurate when |mean| >> std */
    float sum = 0.0f;
    for (int j = 0; j < n; j++)
        sum += x[j];
    const float mean = sum / (float)n;
    float ss = 0.0f;
    for (int j = 0; j < n; j++) {
        const float d = x[j] - mean;
        ss += d * d;
    }
    const float scale = 1.0f / sqrtf(ss / (float)n + eps);
    for (int j = 0; j < n; j++)
        out[j] = (x[j] - mean) * scale * w[j] + b[j];
}

/* 0.5 x (1 + tanh(u)) = x * sigmoid(2u) = x / (1 + exp(-2u)): one expf
 * instead of tanhf (a third of a gpt2 forward pass in glibc), and stable at
 * both ends (exp overflowing to inf gives -0, as GELU tends to). */
GL_DECL_GELU_FN(gl_gelu_generic)
{
    const float k2 = 2.0f * 0.7978845608028654f; /* 2 sqrt(2 / pi) */
    for (int j = 0; j < n; j++) {
        const float v = x[j];
        out[j] = v / (1.0f + expf(-k2 * (v + 0.044715f * v * v * v)));
    }
}

GL_DECL_ADD_BIAS_FN(gl_add_bias_generic)
{
    for (int j = 0; j < n; j++)
        y[j] += b[j];
}
