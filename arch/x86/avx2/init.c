/* AVX2 backend: overwrites the slots it accelerates; the table arrives
 * filled by gl_kernels_init_generic. Only pointer stores happen here. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/legacy.h"

void gl_kernels_init_avx2(gl_kernels *k)
{
    k->name = "avx2";
    k->quantize_q8_0 = gl_quantize_q8_0_avx2;
    k->matmul[GGUF_T_Q8_0] = gl_matmul_q8_0_avx2;
    k->matmul[GGUF_T_Q4_0] = gl_matmul_q4_0_avx2;
    k->matmul[GGUF_T_Q4_K] = gl_matmul_q4_K_avx2;
    k->matmul[GGUF_T_Q5_K] = gl_matmul_q5_K_avx2;
    k->matmul[GGUF_T_Q6_K] = gl_matmul_q6_K_avx2;
    /* the row-group kernels, the decode tune's instances (src/tune.h);
     * prefer: repack that type into the layout (Q4_0 / Q8_0 / Q4_K / Q6_K
     * already prefer their x8 layouts from generic) */
    static const gl_packed_kernel packed[] = {
        { GL_LAYOUT_Q4_KX8, gl_matmul_q4_K_x8_avx2_tuned, 0 },
        { GL_LAYOUT_Q6_KX8, gl_matmul_q6_K_x8_avx2_tuned, 0 },
        { GL_LAYOUT_Q3_KX8, gl_matmul_q3_K_x8_avx2_tuned, 1 },
        { GL_LAYOUT_IQ4_XSX8, gl_matmul_iq4_xs_x8_avx2_tuned, 1 },
        { GL_LAYOUT_Q2_KX8, gl_matmul_q2_K_x8_avx2_tuned, 1 },
        { GL_LAYOUT_Q5_KX8, gl_matmul_q5_K_x8_avx2_tuned, 1 },
        { GL_LAYOUT_Q4_0X8, gl_matmul_q4_0_x8_avx2_tuned, 0 },
        { GL_LAYOUT_Q8_0X8, gl_matmul_q8_0_x8_avx2_tuned, 0 },
        { GL_LAYOUT_Q5_0X8, gl_matmul_q5_0_x8_avx2_tuned, 1 },
        { GL_LAYOUT_IQ4_NLX8, gl_matmul_iq4_nl_x8_avx2_tuned, 1 },
        { GL_LAYOUT_Q4_1X8, gl_matmul_q4_1_x8_avx2_tuned, 1 },
        { GL_LAYOUT_Q5_1X8, gl_matmul_q5_1_x8_avx2_tuned, 1 },
    };
    gl_kernels_set_packed(k, packed, sizeof packed / sizeof packed[0]);
    k->matmul[GGUF_T_F32] = gl_matmul_f32_avx2;
    k->matmul[GGUF_T_F16] = gl_matmul_f16_avx2;
    k->matmul[GGUF_T_BF16] = gl_matmul_bf16_avx2;
    k->rmsnorm = gl_rmsnorm_avx2;
    k->swiglu = gl_swiglu_avx2;
    k->gelu = gl_gelu_avx2;
    k->softcap = gl_softcap_avx2;
    k->softmax = gl_softmax_avx2;
    k->round_f16 = gl_round_f16_avx2;
    k->to_f16 = gl_to_f16_avx2;
    k->attn_scores[GL_KV_F32] = gl_attn_scores_f32_avx2;
    k->attn_scores[GL_KV_F16] = gl_attn_scores_f16_avx2;
    k->attn_accum[GL_KV_F32] = gl_attn_accum_f32_avx2;
    k->attn_accum[GL_KV_F16] = gl_attn_accum_f16_avx2;
    k->attn_scores_q8 = gl_attn_scores_q8_avx2;
    k->attn_accum_q8 = gl_attn_accum_q8_avx2;
    k->attn_scores_g[GL_KV_F32] = gl_attn_scores_g_f32_avx2;
    k->attn_scores_g[GL_KV_F16] = gl_attn_scores_g_f16_avx2;
    k->attn_accum_g[GL_KV_F32] = gl_attn_accum_g_f32_avx2;
    k->attn_accum_g[GL_KV_F16] = gl_attn_accum_g_f16_avx2;
    k->attn_scores_t[GL_KV_F32] = gl_attn_scores_t_f32_avx2;
    k->attn_scores_t[GL_KV_F16] = gl_attn_scores_t_f16_avx2;
    k->attn_scores_q8_g = gl_attn_scores_q8_g_avx2;
    k->attn_accum_q8_g = gl_attn_accum_q8_g_avx2;
    /* legacy.h: the remaining block types and their activation formats */
    k->quantize_act[GL_ACT_Q8_1] = gl_quantize_q8_1_avx2;
    k->quantize_act[GL_ACT_Q8_K] = gl_quantize_q8_K_avx2;
    k->matmul[GGUF_T_Q4_1] = gl_matmul_q4_1_avx2;
    k->matmul[GGUF_T_Q5_0] = gl_matmul_q5_0_avx2;
    k->matmul[GGUF_T_Q5_1] = gl_matmul_q5_1_avx2;
    k->matmul[GGUF_T_IQ4_NL] = gl_matmul_iq4_nl_avx2;
    k->matmul[GGUF_T_Q2_K] = gl_matmul_q2_K_avx2;
    k->matmul[GGUF_T_Q3_K] = gl_matmul_q3_K_avx2;
    k->matmul[GGUF_T_IQ4_XS] = gl_matmul_iq4_xs_avx2;
}
