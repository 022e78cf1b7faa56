/* Prototypes of the AVX2 kernels; reachable only through the kernel table
 * (gl_kernels_init_avx2). Built with -mavx2 -mfma -mf16c. */
#ifndef GENLOOP_ARCH_X86_AVX2_H
#define GENLOOP_ARCH_X86_AVX2_H

#include "kernels.h"

void gl_kernels_init_avx2(gl_kernels *k);

GL_DECL_QUANTIZE_FN(gl_quantize_q8_0_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q8_0_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q4_0_avx2);
/* packed.c, kpacked.c: one instance per decode tune (src/tune.h) */
extern const gl_matmul_fn gl_matmul_q4_0_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q8_0_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q4_K_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q6_K_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q3_K_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q2_K_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q5_K_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_iq4_xs_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q5_0_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_iq4_nl_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q4_1_x8_avx2_tuned[GL_TUNE_COUNT];
extern const gl_matmul_fn gl_matmul_q5_1_x8_avx2_tuned[GL_TUNE_COUNT];
/* kquant.c */
GL_DECL_MATMUL_FN(gl_matmul_q4_K_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q5_K_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q6_K_avx2);
GL_DECL_MATMUL_FN(gl_matmul_f32_avx2);
GL_DECL_MATMUL_FN(gl_matmul_f16_avx2);
GL_DECL_MATMUL_FN(gl_matmul_bf16_avx2);
GL_DECL_RMSNORM_FN(gl_rmsnorm_avx2);
GL_DECL_SWIGLU_FN(gl_swiglu_avx2);
GL_DECL_GELU_FN(gl_gelu_avx2);
GL_DECL_SOFTCAP_FN(gl_softcap_avx2);
GL_DECL_SOFTMAX_FN(gl_softmax_avx2);
GL_DECL_ROUND_F16_FN(gl_round_f16_avx2);
GL_DECL_TO_F16_FN(gl_to_f16_avx2);
GL_DECL_ATTN_SCORES_FN(gl_attn_scores_f32_avx2);
GL_DECL_ATTN_SCORES_FN(gl_attn_scores_f16_avx2);
GL_DECL_ATTN_ACCUM_FN(gl_attn_accum_f32_avx2);
GL_DECL_ATTN_ACCUM_FN(gl_attn_accum_f16_avx2);
/* attention.c */
GL_DECL_ATTN_SCORES_Q8_FN(gl_attn_scores_q8_avx2);
GL_DECL_ATTN_ACCUM_Q8_FN(gl_attn_accum_q8_avx2);
GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f32_avx2);
GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f16_avx2);
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f32_avx2);
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f16_avx2);
GL_DECL_ATTN_SCORES_T_FN(gl_attn_scores_t_f32_avx2);
GL_DECL_ATTN_SCORES_T_FN(gl_attn_scores_t_f16_avx2);
GL_DECL_ATTN_SCORES_Q8_G_FN(gl_attn_scores_q8_g_avx2);
GL_DECL_ATTN_ACCUM_Q8_G_FN(gl_attn_accum_q8_g_avx2);

#endif
