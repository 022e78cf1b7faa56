/* Prototypes of the NEON kernels; reachable only through the kernel table
 * (arch/arm/neon/init.c). Three levels, each its own registry entry and
 * static library with its own -march:
 *   neon          AArch64 baseline (-march=armv8-a), Cortex-A72 / Pi 4
 *   neon-dotprod  + sdot  (-march=armv8.2-a+dotprod), Cortex-A76 / Pi 5
 *   neon-i8mm     + smmla (-march=armv8.2-a+dotprod+i8mm)
 * Each level starts from the one below and overwrites what it speeds up. */
#ifndef GENLOOP_ARCH_ARM_NEON_H
#define GENLOOP_ARCH_ARM_NEON_H

#include "kernels.h"

void gl_kernels_init_neon(gl_kernels *k);
void gl_kernels_init_neon_dotprod(gl_kernels *k);
void gl_kernels_init_neon_i8mm(gl_kernels *k);

/* baseline (quant.c, float.c) */
GL_DECL_QUANTIZE_FN(gl_quantize_q8_0_neon);
GL_DECL_MATMUL_FN(gl_matmul_q8_0_neon);
GL_DECL_MATMUL_FN(gl_matmul_q4_0_neon);
GL_DECL_MATMUL_FN(gl_matmul_f32_neon);
GL_DECL_MATMUL_FN(gl_matmul_f16_neon);
GL_DECL_MATMUL_FN(gl_matmul_bf16_neon);
GL_DECL_RMSNORM_FN(gl_rmsnorm_neon);
GL_DECL_SWIGLU_FN(gl_swiglu_neon);
GL_DECL_LAYERNORM_FN(gl_layernorm_neon);
GL_DECL_GELU_FN(gl_gelu_neon);
GL_DECL_SOFTCAP_FN(gl_softcap_neon);
GL_DECL_TO_F16_FN(gl_to_f16_neon);
GL_DECL_ADD_BIAS_FN(gl_add_bias_neon);
GL_DECL_ATTN_SCORES_FN(gl_attn_scores_f32_neon);
GL_DECL_ATTN_SCORES_FN(gl_attn_scores_f16_neon);
GL_DECL_ATTN_ACCUM_FN(gl_attn_accum_f32_neon);
GL_DECL_ATTN_ACCUM_FN(gl_attn_accum_f16_neon);
/* baseline (attention.c) */
GL_DECL_ATTN_SCORES_Q8_FN(gl_attn_scores_q8_neon);
GL_DECL_ATTN_ACCUM_Q8_FN(gl_attn_accum_q8_neon);
GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f32_neon);
GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f16_neon);
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f32_neon);
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f16_neon);
GL_DECL_ATTN_SCORES_T_FN(gl_attn_scores_t_f32_neon);
GL_DECL_ATTN_SCORES_T_FN(gl_attn_scores_t_f16_neon);
GL_DECL_ATTN_SCORES_Q8_G_FN(gl_attn_scores_q8_g_neon);
GL_DECL_ATTN_ACCUM_Q8_G_FN(gl_attn_accum_q8_g_neon);

/* baseline (act.c, kquants.c) */
GL_DECL_MATMUL_FN(gl_matmul_q5_0_neon);
GL_DECL_MATMUL_FN(gl_matmul_iq4_nl_neon);
GL_DECL_MATMUL_FN(gl_matmul_q4_1_neon);
GL_DECL_MATMUL_FN(gl_matmul_q5_1_neon);
GL_DECL_QUANTIZE_FN(gl_quantize_q8_1_neon);
GL_DECL_QUANTIZE_FN(gl_quantize_q8_K_neon);
GL_DECL_MATMUL_FN(gl_matmul_q2_K_neon);
GL_DECL_MATMUL_FN(gl_matmul_q3_K_neon);
GL_DECL_MATMUL_FN(gl_matmul_q4_K_neon);
GL_DECL_MATMUL_FN(gl_matmul_q5_K_neon);
GL_DECL_MATMUL_FN(gl_matmul_q6_K_neon);
GL_DECL_MATMUL_FN(gl_matmul_iq4_xs_neon);

/* dotprod (kquants_dotprod.c) */
GL_DECL_MATMUL_FN(gl_matmul_q5_0_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_iq4_nl_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q4_1_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q5_1_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q2_K_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q3_K_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q4_K_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q5_K_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q6_K_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_iq4_xs_neon_dotprod);

/* dotprod (dotprod.c) */
GL_DECL_MATMUL_FN(gl_matmul_q8_0_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q4_0_neon_dotprod);
GL_DECL_MATMUL_FN(gl_matmul_q8_0_x8_neon_dotprod); /* GL_LAYOUT_Q8_0X8 */
GL_DECL_MATMUL_FN(gl_matmul_q4_0_x8_neon_dotprod); /* GL_LAYOUT_Q4_0X8 */

/* i8mm (i8mm.c, kquants_i8mm.c) */
GL_DECL_MATMUL_FN(gl_matmul_q2_K_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q3_K_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q4_K_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q5_K_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q6_K_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_iq4_xs_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q5_0_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_iq4_nl_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q4_1_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q5_1_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q8_0_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q4_0_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q8_0_x8_neon_i8mm);
GL_DECL_MATMUL_FN(gl_matmul_q4_0_x8_neon_i8mm);

#endif
