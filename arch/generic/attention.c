/* Attention inner loops over cached key/value rows. Scores are independent
 * dot products; the value accumulation adds rows strictly in the order
 * given, so results do not depend on how the caller splits positions into
 * runs (ring wrap, prompt chunks). */
#include <math.h>

#include "arch/generic/generic.h"
#include "half.h"

/* Element i of a cache row r (its bytes) as a float, per cache format. A
 * Q8_0 row holds every KV head of a position, so the Q8_0 kernels count a
 * head's elements from their parameter `off`. */
#define EL_F32(r, i) (((const gl_f32u *)(r))[i])
#define EL_F16(r, i) gl_f16_to_f32(((const gl_u16u *)(r))[i])
#define EL_Q8(r, i)  q8_elem((const block_q8_0 *)(r), off + (i))

static inline float q8_elem(const block_q8_0 *row, int i)
{
    return gl_f16_to_f32(row[i / QK8_0].d) * row[i / QK8_0].qs[i % QK8_0];
}

/* ---- one query head ------------------------------------------------------ */

#define DEF_SCORES(DECL, name, EL)                                                                 \
    DECL(name)                                                                                     \
    {                                                                                              \
        for (int j = 0; j < n_keys; j++) {                                                         \
            const char *kr = (const char *)k + j * row_stride;                                     \
            float s = 0.0f;                                                                        \
            for (int i = 0; i < len; i++)                                                          \
                s += q[i] * EL(kr, i);                                                             \
            scores[j] = s * scale;                                                                 \
        }                                                                                          \
    }

#define DEF_ACCUM(DECL, name, EL)                                                                  \
    DECL(name)                                                                                     \
    {                                                                                              \
        for (int j = 0; j < n_rows; j++) {                                                         \
            const char *vr = (const char *)v + j * row_stride;                                     \
            const float pj = p[j];                                                                 \
            for (int i = 0; i < len; i++)                                                          \
                out[i] += pj * EL(vr, i);                                                          \
        }                                                                                          \
    }

DEF_SCORES(GL_DECL_ATTN_SCORES_FN, gl_attn_scores_f32_generic, EL_F32)
DEF_SCORES(GL_DECL_ATTN_SCORES_FN, gl_attn_scores_f16_generic, EL_F16)
DEF_SCORES(GL_DECL_ATTN_SCORES_Q8_FN, gl_attn_scores_q8_generic, EL_Q8)
DEF_ACCUM(GL_DECL_ATTN_ACCUM_FN, gl_attn_accum_f32_generic, EL_F32)
DEF_ACCUM(GL_DECL_ATTN_ACCUM_FN, gl_attn_accum_f16_generic, EL_F16)
DEF_ACCUM(GL_DECL_ATTN_ACCUM_Q8_FN, gl_attn_accum_q8_generic, EL_Q8)

/* ---- scores over key-transposed blocks (kernels.h: the definition) ---- */

#define DEF_SCORES_T(name, T, EL)                                                                  \
    GL_DECL_ATTN_SCORES_T_FN(name)                                                                 \
    {                                                                                              \
        for (int j = 0; j < n_keys; j++) {                                                         \
            const int p = lane0 + j;                                                               \
            const char *kp =                                                                       \
                (const char *)((const T *)k +                                                      \
                               ((size_t)(p / GL_KT_BLOCK) * (size_t)len) * GL_KT_BLOCK +           \
                               p % GL_KT_BLOCK);                                                   \
            for (int h = 0; h < n_q; h++) {                                                        \
                const float *qh = q + h * q_stride;                                                \
                float s = 0.0f;                                                                    \
                for (int i = 0; i < len; i++)                                                      \
                    s = fmaf(EL(kp, (size_t)i * GL_KT_BLOCK), qh[i], s);                           \
                scores[h * scores_stride + j] = s * scale;                                         \
            }                                                                                      \
        }                                                                                          \
    }

DEF_SCORES_T(gl_attn_scores_t_f32_generic, gl_f32u, EL_F32)
DEF_SCORES_T(gl_attn_scores_t_f16_generic, gl_u16u, EL_F16)

/* ---- grouped-query forms ------------------------------------------------
 * Key (value) row major: each row is visited once for all n_q heads, and
 * every output gets exactly the operations of the single-head kernel above
 * (scores: one sequential dot, then * scale; accumulation: rows in order,
 * multiply then add), so results are bit-identical to it for any n_q. */

#define DEF_SCORES_G(DECL, name, EL)                                                               \
    DECL(name)                                                                                     \
    {                                                                                              \
        for (int j = 0; j < n_keys; j++) {                                                         \
            const char *kr = (const char *)k + j * row_stride;                                     \
            for (int h = 0; h < n_q; h++) {                                                        \
                const float *qh = q + h * q_stride;                                                \
                float s = 0.0f;                                                                    \
                for (int i = 0; i < len; i++)                                                      \
                    s += qh[i] * EL(kr, i);                                                        \
                scores[h * scores_stride + j] = s * scale;                                         \
            }                                                                                      \
        }                                                                                          \
    }

#define DEF_ACCUM_G(DECL, name, EL)                                                                \
    DECL(name)                                                                                     \
    {                                                                                              \
        for (int j = 0; j < n_rows; j++) {                                                         \
            const char *vr = (const char *)v + j * row_stride;                                     \
            for (int h = 0; h < n_q; h++) {                                                        \
                float *oh = out + h * out_stride;                                                  \
                const float pj = p[h * p_stride + j];                                              \
                for (int i = 0; i < len; i++)                                                      \
                    oh[i] += pj * EL(vr, i);                                                       \
            }                                                                                      \
        }                                                                                          \
    }

DEF_SCORES_G(GL_DECL_ATTN_SCORES_G_FN, gl_attn_scores_g_f32_generic, EL_F32)
DEF_SCORES_G(GL_DECL_ATTN_SCORES_G_FN, gl_attn_scores_g_f16_generic, EL_F16)
DEF_SCORES_G(GL_DECL_ATTN_SCORES_Q8_G_FN, gl_attn_scores_q8_g_generic, EL_Q8)
DEF_ACCUM_G(GL_DECL_ATTN_ACCUM_G_FN, gl_attn_accum_g_f32_generic, EL_F32)
DEF_ACCUM_G(GL_DECL_ATTN_ACCUM_G_FN, gl_attn_accum_g_f16_generic, EL_F16)
DEF_ACCUM_G(GL_DECL_ATTN_ACCUM_Q8_G_FN, gl_attn_accum_q8_g_generic, EL_Q8)

GL_DECL_SOFTMAX_FN(gl_softmax_generic)
{
    float mx = -INFINITY, sum = 0.0f;
    for (int j = 0; j < n; j++)
        mx = x[j] > mx ? x[j] : mx;
    for (int j = 0; j < n; j++) {
        x[j] = expf(x[j] - mx);
        sum += x[j];
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < n; j++)
        x[j] *= inv;
    if (round_f16)
        gl_round_f16_generic(x, n);
}

GL_DECL_ROUND_F16_FN(gl_round_f16_generic)
{
    for (int i = 0; i < n; i++)
        x[i] = gl_f16_to_f32(gl_f32_to_f16(x[i]));
}

GL_DECL_TO_F16_FN(gl_to_f16_generic)
{
    for (int i = 0; i < n; i++)
        y[i] = gl_f32_to_f16(x[i]);
}
