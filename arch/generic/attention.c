/* Attention inner loops over cached key/value rows. Scores are independent
 * dot products; the value accumulation adds rows strictly in the order
 * given, so results do not depend on how the caller splits positions into
 * runs (ring wrap, prompt chunks). */
#include "arch/generic/generic.h"
#include "half.h"

GL_DECL_ATTN_SCORES_FN(gl_attn_scores_f32_generic)
{
    for (int j = 0; j < n_keys; j++) {
        const float *kr = (const float *)((const char *)k + j * row_stride);
        float s = 0.0f;
        for (int i = 0; i < len; i++)
            s += q[i] * kr[i];
        scores[j] = s * scale;
    }
}

GL_DECL_ATTN_SCORES_FN(gl_attn_scores_f16_generic)
{
    for (int j = 0; j < n_keys; j++) {
        const uint16_t *kr = (const uint16_t *)((const char *)k + j * row_stride);
        float s = 0.0f;
        for (int i = 0; i < len; i++)
            s += q[i] * gl_f16_to_f32(kr[i]);
        scores[j] = s * scale;
    }
}

GL_DECL_ATTN_ACCUM_FN(gl_attn_accum_f32_generic)
{
    for (int j = 0; j < n_rows; j++) {
        const float *vr = (const float *)((const char *)v + j * row_stride);
        const float pj = p[j];
        for (int i = 0; i < len; i++)
            out[i] += pj * vr[i];
    }
}

GL_DECL_ATTN_ACCUM_FN(gl_attn_accum_f16_generic)
{
    for (int j = 0; j < n_rows; j++) {
        const uint16_t *vr = (const uint16_t *)((const char *)v + j * row_stride);
        const float pj = p[j];
        for (int i = 0; i < len; i++)
            out[i] += pj * gl_f16_to_f32(vr[i]);
    }
}
