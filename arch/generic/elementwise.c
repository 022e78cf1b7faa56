/* Normalization and activation references. */
#include <math.h>

#include "arch/generic/generic.h"

GL_DECL_RMSNORM_FN(gl_rmsnorm_generic)
{
    float ss = 0.0f;
    for (int j = 0; j < n; j++)
        ss += x[j] * x[j];
    const float scale = 1.0f / sqrtf(ss / (float)n + eps);
    for (int j = 0; j < n; j++)
        out[j] = x[j] * scale * w[j];
}

GL_DECL_SOFTCAP_FN(gl_softcap_generic)
{
    for (int j = 0; j < n; j++)
        x[j] = cap * tanhf(x[j] / cap);
}

GL_DECL_SWIGLU_FN(gl_swiglu_generic)
{
    for (int j = 0; j < n; j++) {
        const float g = gate[j];
        out[j] = g / (1.0f + expf(-g)) * up[j];
    }
}
