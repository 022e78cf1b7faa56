/* Prototypes of the C reference kernels; reachable from src/ only through
 * the kernel table (gl_kernels_init_generic). */
#ifndef GENLOOP_ARCH_GENERIC_H
#define GENLOOP_ARCH_GENERIC_H

#include "kernels.h"

GL_DECL_QUANTIZE_FN(gl_quantize_q8_0_generic);
GL_DECL_QUANTIZE_FN(gl_quantize_q8_1_generic);
GL_DECL_QUANTIZE_FN(gl_quantize_q8_K_generic);

GL_DECL_MATMUL_FN(gl_matmul_f32_generic);
GL_DECL_MATMUL_FN(gl_matmul_f16_generic);
GL_DECL_MATMUL_FN(gl_matmul_bf16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q8_0_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_0_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_1_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_0_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_1_generic);
GL_DECL_MATMUL_FN(gl_matmul_iq4_nl_generic);
GL_DECL_MATMUL_FN(gl_matmul_q2_K_generic);
GL_DECL_MATMUL_FN(gl_matmul_q3_K_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_K_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_K_generic);
GL_DECL_MATMUL_FN(gl_matmul_q6_K_generic);
GL_DECL_MATMUL_FN(gl_matmul_iq4_xs_generic);

GL_DECL_REPACK_FN(gl_repack_q4_0_x8_generic);
GL_DECL_REPACK_FN(gl_repack_q8_0_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q4_0_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q8_0_x8_generic);
GL_DECL_REPACK_FN(gl_repack_q4_0_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q4_0_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q8_0_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q8_0_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_0_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q8_0_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_0_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q8_0_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q5_0_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q5_0_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_0_x16_generic);
GL_DECL_REPACK_FN(gl_repack_iq4_nl_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_iq4_nl_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_iq4_nl_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q4_1_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q4_1_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_1_x8_generic);
GL_DECL_REPACK_FN(gl_repack_q4_1_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q4_1_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_1_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q5_1_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q5_1_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_1_x8_generic);
GL_DECL_REPACK_FN(gl_repack_q5_1_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q5_1_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_1_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q5_0_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q5_0_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_0_x8_generic);
GL_DECL_REPACK_FN(gl_repack_iq4_nl_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_iq4_nl_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_iq4_nl_x8_generic);
GL_DECL_REPACK_FN(gl_repack_q4_K_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q4_K_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_K_x8_generic);
GL_DECL_REPACK_FN(gl_repack_q6_K_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q6_K_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q6_K_x8_generic);
GL_DECL_REPACK_FN(gl_repack_q4_K_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q4_K_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q4_K_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q6_K_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q6_K_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q6_K_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q5_K_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q5_K_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_K_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q5_K_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q5_K_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q5_K_x8_generic);
GL_DECL_REPACK_FN(gl_repack_iq4_xs_x16_generic);
GL_DECL_REPACK_FN(gl_repack_iq4_xs_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_iq4_xs_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_iq4_xs_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_iq4_xs_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_iq4_xs_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q3_K_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q2_K_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q2_K_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q2_K_x8_generic);
GL_DECL_REPACK_FN(gl_repack_q2_K_x16_generic);
GL_DECL_UNPACK_FN(gl_unpack_q2_K_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q2_K_x16_generic);
GL_DECL_REPACK_FN(gl_repack_q3_K_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q3_K_x8_generic);
GL_DECL_MATMUL_FN(gl_matmul_q3_K_x8_generic);
GL_DECL_UNPACK_FN(gl_unpack_q3_K_x16_generic);
GL_DECL_MATMUL_FN(gl_matmul_q3_K_x16_generic);
/* kquants.c: one super-block's step of the plain products */
float gl_kdot_q4_K_generic(float sum, const block_q4_K *w, const block_q8_K *x);
float gl_kdot_q5_K_generic(float sum, const block_q5_K *w, const block_q8_K *x);
float gl_kdot_q6_K_generic(float sum, const block_q6_K *w, const block_q8_K *x);
float gl_kdot_q2_K_generic(float sum, const block_q2_K *w, const block_q8_K *x);
float gl_kdot_q3_K_generic(float sum, const block_q3_K *w, const block_q8_K *x);
float gl_kdot_iq4_xs_generic(float sum, const block_iq4_xs *w, const block_q8_K *x);

GL_DECL_DEQUANT_FN(gl_dequant_f32_generic);
GL_DECL_DEQUANT_FN(gl_dequant_f16_generic);
GL_DECL_DEQUANT_FN(gl_dequant_bf16_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q8_0_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q4_0_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q4_1_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q5_0_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q5_1_generic);
GL_DECL_DEQUANT_FN(gl_dequant_iq4_nl_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q2_K_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q3_K_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q4_K_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q5_K_generic);
GL_DECL_DEQUANT_FN(gl_dequant_q6_K_generic);
GL_DECL_DEQUANT_FN(gl_dequant_iq4_xs_generic);

GL_DECL_RMSNORM_FN(gl_rmsnorm_generic);
GL_DECL_SWIGLU_FN(gl_swiglu_generic);
GL_DECL_LAYERNORM_FN(gl_layernorm_generic);
GL_DECL_GELU_FN(gl_gelu_generic);
GL_DECL_SOFTCAP_FN(gl_softcap_generic);
GL_DECL_ADD_BIAS_FN(gl_add_bias_generic);

GL_DECL_ATTN_SCORES_FN(gl_attn_scores_f32_generic);
GL_DECL_ATTN_SCORES_FN(gl_attn_scores_f16_generic);
GL_DECL_ATTN_ACCUM_FN(gl_attn_accum_f32_generic);
GL_DECL_ATTN_ACCUM_FN(gl_attn_accum_f16_generic);
GL_DECL_SOFTMAX_FN(gl_softmax_generic);
GL_DECL_ROUND_F16_FN(gl_round_f16_generic);
GL_DECL_TO_F16_FN(gl_to_f16_generic);
GL_DECL_ATTN_SCORES_Q8_FN(gl_attn_scores_q8_generic);
GL_DECL_ATTN_ACCUM_Q8_FN(gl_attn_accum_q8_generic);
GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f32_generic);
GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f16_generic);
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f32_generic);
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f16_generic);
GL_DECL_ATTN_SCORES_T_FN(gl_attn_scores_t_f32_generic);
GL_DECL_ATTN_SCORES_T_FN(gl_attn_scores_t_f16_generic);
GL_DECL_ATTN_SCORES_Q8_G_FN(gl_attn_scores_q8_g_generic);
GL_DECL_ATTN_ACCUM_Q8_G_FN(gl_attn_accum_q8_g_generic);

#endif
