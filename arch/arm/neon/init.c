/* NEON backends: overwrite the slots they accelerate; the table arrives
 * filled by gl_kernels_init_generic. Built with the baseline flags (only
 * pointer stores happen here); src/kernels.c selects a level only when
 * the CPU has its features (HWCAP / HWCAP2, arch/arm/cpu.c). The baseline
 * level has no x8 (repacked) kernels, so gl_kernels_init keeps plain GGUF
 * rows for it; dotprod and i8mm multiply the x8 layouts too. */
#include "arch/arm/neon/neon.h"
#include "config.h"

void gl_kernels_init_neon(gl_kernels *k)
{
    k->name = "neon";
    k->quantize_q8_0 = gl_quantize_q8_0_neon;
    k->matmul[GGUF_T_Q8_0] = gl_matmul_q8_0_neon;
    k->matmul[GGUF_T_Q4_0] = gl_matmul_q4_0_neon;
    k->quantize_act[GL_ACT_Q8_1] = gl_quantize_q8_1_neon;
    k->quantize_act[GL_ACT_Q8_K] = gl_quantize_q8_K_neon;
    k->matmul[GGUF_T_Q5_0] = gl_matmul_q5_0_neon;
    k->matmul[GGUF_T_IQ4_NL] = gl_matmul_iq4_nl_neon;
    k->matmul[GGUF_T_Q4_1] = gl_matmul_q4_1_neon;
    k->matmul[GGUF_T_Q5_1] = gl_matmul_q5_1_neon;
    k->matmul[GGUF_T_Q2_K] = gl_matmul_q2_K_neon;
    k->matmul[GGUF_T_Q3_K] = gl_matmul_q3_K_neon;
    k->matmul[GGUF_T_Q4_K] = gl_matmul_q4_K_neon;
    k->matmul[GGUF_T_Q5_K] = gl_matmul_q5_K_neon;
    k->matmul[GGUF_T_Q6_K] = gl_matmul_q6_K_neon;
    k->matmul[GGUF_T_IQ4_XS] = gl_matmul_iq4_xs_neon;
    k->matmul[GGUF_T_F32] = gl_matmul_f32_neon;
    k->matmul[GGUF_T_F16] = gl_matmul_f16_neon;
    k->matmul[GGUF_T_BF16] = gl_matmul_bf16_neon;
    k->rmsnorm = gl_rmsnorm_neon;
    k->swiglu = gl_swiglu_neon;
    k->layernorm = gl_layernorm_neon;
    k->gelu = gl_gelu_neon;
    k->softcap = gl_softcap_neon;
    k->to_f16 = gl_to_f16_neon;
    k->add_bias = gl_add_bias_neon;
    k->attn_scores[GL_KV_F32] = gl_attn_scores_f32_neon;
    k->attn_scores[GL_KV_F16] = gl_attn_scores_f16_neon;
    k->attn_accum[GL_KV_F32] = gl_attn_accum_f32_neon;
    k->attn_accum[GL_KV_F16] = gl_attn_accum_f16_neon;
    k->attn_scores_q8 = gl_attn_scores_q8_neon;
    k->attn_accum_q8 = gl_attn_accum_q8_neon;
    k->attn_scores_g[GL_KV_F32] = gl_attn_scores_g_f32_neon;
    k->attn_scores_g[GL_KV_F16] = gl_attn_scores_g_f16_neon;
    k->attn_accum_g[GL_KV_F32] = gl_attn_accum_g_f32_neon;
    k->attn_accum_g[GL_KV_F16] = gl_attn_accum_g_f16_neon;
    k->attn_scores_t[GL_KV_F32] = gl_attn_scores_t_f32_neon;
    k->attn_scores_t[GL_KV_F16] = gl_attn_scores_t_f16_neon;
    k->attn_scores_q8_g = gl_attn_scores_q8_g_neon;
    k->attn_accum_q8_g = gl_attn_accum_q8_g_neon;
}

#if GL_HAVE_NEON_DOTPROD
void gl_kernels_init_neon_dotprod(gl_kernels *k)
{
    gl_kernels_init_neon(k);
    k->name = "neon-dotprod";
    k->matmul[GGUF_T_Q8_0] = gl_matmul_q8_0_neon_dotprod;
    k->matmul[GGUF_T_Q4_0] = gl_matmul_q4_0_neon_dotprod;
    k->matmul[GGUF_T_Q5_0] = gl_matmul_q5_0_neon_dotprod;
    k->matmul[GGUF_T_IQ4_NL] = gl_matmul_iq4_nl_neon_dotprod;
    k->matmul[GGUF_T_Q4_1] = gl_matmul_q4_1_neon_dotprod;
    k->matmul[GGUF_T_Q5_1] = gl_matmul_q5_1_neon_dotprod;
    k->matmul[GGUF_T_Q2_K] = gl_matmul_q2_K_neon_dotprod;
    k->matmul[GGUF_T_Q3_K] = gl_matmul_q3_K_neon_dotprod;
    k->matmul[GGUF_T_Q4_K] = gl_matmul_q4_K_neon_dotprod;
    k->matmul[GGUF_T_Q5_K] = gl_matmul_q5_K_neon_dotprod;
    k->matmul[GGUF_T_Q6_K] = gl_matmul_q6_K_neon_dotprod;
    k->matmul[GGUF_T_IQ4_XS] = gl_matmul_iq4_xs_neon_dotprod;
    /* sdot by lane fits the x8 layouts' 4-byte groups: load-time repack on */
    k->matmul_packed[GL_LAYOUT_Q8_0X8] = gl_matmul_q8_0_x8_neon_dotprod;
    k->matmul_packed[GL_LAYOUT_Q4_0X8] = gl_matmul_q4_0_x8_neon_dotprod;
}
#endif

#if GL_HAVE_NEON_I8MM
void gl_kernels_init_neon_i8mm(gl_kernels *k)
{
    gl_kernels_init_neon_dotprod(k);
    k->name = "neon-i8mm";
    k->matmul[GGUF_T_Q8_0] = gl_matmul_q8_0_neon_i8mm;
    k->matmul[GGUF_T_Q5_0] = gl_matmul_q5_0_neon_i8mm;
    k->matmul[GGUF_T_IQ4_NL] = gl_matmul_iq4_nl_neon_i8mm;
    k->matmul[GGUF_T_Q4_1] = gl_matmul_q4_1_neon_i8mm;
    k->matmul[GGUF_T_Q5_1] = gl_matmul_q5_1_neon_i8mm;
    k->matmul[GGUF_T_Q4_0] = gl_matmul_q4_0_neon_i8mm;
    k->matmul[GGUF_T_Q2_K] = gl_matmul_q2_K_neon_i8mm;
    k->matmul[GGUF_T_Q3_K] = gl_matmul_q3_K_neon_i8mm;
    k->matmul[GGUF_T_Q4_K] = gl_matmul_q4_K_neon_i8mm;
    k->matmul[GGUF_T_Q5_K] = gl_matmul_q5_K_neon_i8mm;
    k->matmul[GGUF_T_Q6_K] = gl_matmul_q6_K_neon_i8mm;
    k->matmul[GGUF_T_IQ4_XS] = gl_matmul_iq4_xs_neon_i8mm;
    k->matmul_packed[GL_LAYOUT_Q8_0X8] = gl_matmul_q8_0_x8_neon_i8mm;
    k->matmul_packed[GL_LAYOUT_Q4_0X8] = gl_matmul_q4_0_x8_neon_i8mm;
}
#endif
