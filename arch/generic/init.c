#include "arch/generic/generic.h"

void gl_kernels_init_generic(gl_kernels *k)
{
    *k = (gl_kernels){ .name = "generic" };
    k->quantize_q8_0 = gl_quantize_q8_0_generic;
    k->quantize_act[GL_ACT_Q8_0] = gl_quantize_q8_0_generic;
    k->quantize_act[GL_ACT_Q8_1] = gl_quantize_q8_1_generic;
    k->quantize_act[GL_ACT_Q8_K] = gl_quantize_q8_K_generic;

    k->matmul[GGUF_T_F32] = gl_matmul_f32_generic;
    k->matmul[GGUF_T_F16] = gl_matmul_f16_generic;
    k->matmul[GGUF_T_BF16] = gl_matmul_bf16_generic;
    k->matmul[GGUF_T_Q8_0] = gl_matmul_q8_0_generic;
    k->matmul[GGUF_T_Q4_0] = gl_matmul_q4_0_generic;
    k->matmul[GGUF_T_Q4_1] = gl_matmul_q4_1_generic;
    k->matmul[GGUF_T_Q5_0] = gl_matmul_q5_0_generic;
    k->matmul[GGUF_T_Q5_1] = gl_matmul_q5_1_generic;
    k->matmul[GGUF_T_IQ4_NL] = gl_matmul_iq4_nl_generic;
    k->matmul[GGUF_T_Q2_K] = gl_matmul_q2_K_generic;
    k->matmul[GGUF_T_Q3_K] = gl_matmul_q3_K_generic;
    k->matmul[GGUF_T_Q4_K] = gl_matmul_q4_K_generic;
    k->matmul[GGUF_T_Q5_K] = gl_matmul_q5_K_generic;
    k->matmul[GGUF_T_Q6_K] = gl_matmul_q6_K_generic;
    k->matmul[GGUF_T_IQ4_XS] = gl_matmul_iq4_xs_generic;

    static const struct {
        int layout, type, rows;
        gl_repack_fn repack;
        gl_unpack_fn unpack;
        gl_matmul_fn matmul;
    } layouts[] = {
        { GL_LAYOUT_Q4_0X8, GGUF_T_Q4_0, GL_X8_ROWS, gl_repack_q4_0_x8_generic,
          gl_unpack_q4_0_x8_generic, gl_matmul_q4_0_x8_generic },
        { GL_LAYOUT_Q8_0X8, GGUF_T_Q8_0, GL_X8_ROWS, gl_repack_q8_0_x8_generic,
          gl_unpack_q8_0_x8_generic, gl_matmul_q8_0_x8_generic },
        { GL_LAYOUT_Q4_0X16, GGUF_T_Q4_0, GL_X16_ROWS, gl_repack_q4_0_x16_generic,
          gl_unpack_q4_0_x16_generic, gl_matmul_q4_0_x16_generic },
        { GL_LAYOUT_IQ4_NLX8, GGUF_T_IQ4_NL, GL_X8_ROWS, gl_repack_iq4_nl_x8_generic,
          gl_unpack_iq4_nl_x8_generic, gl_matmul_iq4_nl_x8_generic },
        { GL_LAYOUT_Q5_0X8, GGUF_T_Q5_0, GL_X8_ROWS, gl_repack_q5_0_x8_generic,
          gl_unpack_q5_0_x8_generic, gl_matmul_q5_0_x8_generic },
        { GL_LAYOUT_IQ4_NLX16, GGUF_T_IQ4_NL, GL_X16_ROWS, gl_repack_iq4_nl_x16_generic,
          gl_unpack_iq4_nl_x16_generic, gl_matmul_iq4_nl_x16_generic },
        { GL_LAYOUT_Q5_0X16, GGUF_T_Q5_0, GL_X16_ROWS, gl_repack_q5_0_x16_generic,
          gl_unpack_q5_0_x16_generic, gl_matmul_q5_0_x16_generic },
        { GL_LAYOUT_Q4_1X8, GGUF_T_Q4_1, GL_X8_ROWS, gl_repack_q4_1_x8_generic,
          gl_unpack_q4_1_x8_generic, gl_matmul_q4_1_x8_generic },
        { GL_LAYOUT_Q4_1X16, GGUF_T_Q4_1, GL_X16_ROWS, gl_repack_q4_1_x16_generic,
          gl_unpack_q4_1_x16_generic, gl_matmul_q4_1_x16_generic },
        { GL_LAYOUT_Q5_1X8, GGUF_T_Q5_1, GL_X8_ROWS, gl_repack_q5_1_x8_generic,
          gl_unpack_q5_1_x8_generic, gl_matmul_q5_1_x8_generic },
        { GL_LAYOUT_Q5_1X16, GGUF_T_Q5_1, GL_X16_ROWS, gl_repack_q5_1_x16_generic,
          gl_unpack_q5_1_x16_generic, gl_matmul_q5_1_x16_generic },
        { GL_LAYOUT_Q8_0X16, GGUF_T_Q8_0, GL_X16_ROWS, gl_repack_q8_0_x16_generic,
          gl_unpack_q8_0_x16_generic, gl_matmul_q8_0_x16_generic },
        { GL_LAYOUT_Q4_KX8, GGUF_T_Q4_K, GL_X8_ROWS, gl_repack_q4_K_x8_generic,
          gl_unpack_q4_K_x8_generic, gl_matmul_q4_K_x8_generic },
        { GL_LAYOUT_Q6_KX8, GGUF_T_Q6_K, GL_X8_ROWS, gl_repack_q6_K_x8_generic,
          gl_unpack_q6_K_x8_generic, gl_matmul_q6_K_x8_generic },
        { GL_LAYOUT_Q4_KX16, GGUF_T_Q4_K, GL_X16_ROWS, gl_repack_q4_K_x16_generic,
          gl_unpack_q4_K_x16_generic, gl_matmul_q4_K_x16_generic },
        { GL_LAYOUT_Q6_KX16, GGUF_T_Q6_K, GL_X16_ROWS, gl_repack_q6_K_x16_generic,
          gl_unpack_q6_K_x16_generic, gl_matmul_q6_K_x16_generic },
        { GL_LAYOUT_Q5_KX16, GGUF_T_Q5_K, GL_X16_ROWS, gl_repack_q5_K_x16_generic,
          gl_unpack_q5_K_x16_generic, gl_matmul_q5_K_x16_generic },
        { GL_LAYOUT_IQ4_XSX16, GGUF_T_IQ4_XS, GL_X16_ROWS, gl_repack_iq4_xs_x16_generic,
          gl_unpack_iq4_xs_x16_generic, gl_matmul_iq4_xs_x16_generic },
        { GL_LAYOUT_Q3_KX16, GGUF_T_Q3_K, GL_X16_ROWS, gl_repack_q3_K_x16_generic,
          gl_unpack_q3_K_x16_generic, gl_matmul_q3_K_x16_generic },
        { GL_LAYOUT_Q3_KX8, GGUF_T_Q3_K, GL_X8_ROWS, gl_repack_q3_K_x8_generic,
          gl_unpack_q3_K_x8_generic, gl_matmul_q3_K_x8_generic },
        { GL_LAYOUT_IQ4_XSX8, GGUF_T_IQ4_XS, GL_X8_ROWS, gl_repack_iq4_xs_x8_generic,
          gl_unpack_iq4_xs_x8_generic, gl_matmul_iq4_xs_x8_generic },
        { GL_LAYOUT_Q2_KX8, GGUF_T_Q2_K, GL_X8_ROWS, gl_repack_q2_K_x8_generic,
          gl_unpack_q2_K_x8_generic, gl_matmul_q2_K_x8_generic },
        { GL_LAYOUT_Q2_KX16, GGUF_T_Q2_K, GL_X16_ROWS, gl_repack_q2_K_x16_generic,
          gl_unpack_q2_K_x16_generic, gl_matmul_q2_K_x16_generic },
        { GL_LAYOUT_Q5_KX8, GGUF_T_Q5_K, GL_X8_ROWS, gl_repack_q5_K_x8_generic,
          gl_unpack_q5_K_x8_generic, gl_matmul_q5_K_x8_generic },
    };
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        const int l = layouts[i].layout;
        k->layouts[l].type = (uint8_t)layouts[i].type;
        k->layouts[l].rows = (uint8_t)layouts[i].rows;
        k->layouts[l].repack = layouts[i].repack;
        k->layouts[l].unpack = layouts[i].unpack;
        k->matmul_packed[l] = layouts[i].matmul;
    }
    k->matmul_packed[GL_LAYOUT_PLAIN] = NULL; /* plain rows: matmul[type] */
    gl_kernels_prefer_layout(k, GL_LAYOUT_Q4_0X8);
    gl_kernels_prefer_layout(k, GL_LAYOUT_Q8_0X8);
    gl_kernels_prefer_layout(k, GL_LAYOUT_Q4_KX8);
    gl_kernels_prefer_layout(k, GL_LAYOUT_Q6_KX8);

    k->dequant[GGUF_T_F32] = gl_dequant_f32_generic;
    k->dequant[GGUF_T_F16] = gl_dequant_f16_generic;
    k->dequant[GGUF_T_BF16] = gl_dequant_bf16_generic;
    k->dequant[GGUF_T_Q8_0] = gl_dequant_q8_0_generic;
    k->dequant[GGUF_T_Q4_0] = gl_dequant_q4_0_generic;
    k->dequant[GGUF_T_Q4_1] = gl_dequant_q4_1_generic;
    k->dequant[GGUF_T_Q5_0] = gl_dequant_q5_0_generic;
    k->dequant[GGUF_T_Q5_1] = gl_dequant_q5_1_generic;
    k->dequant[GGUF_T_IQ4_NL] = gl_dequant_iq4_nl_generic;
    k->dequant[GGUF_T_Q2_K] = gl_dequant_q2_K_generic;
    k->dequant[GGUF_T_Q3_K] = gl_dequant_q3_K_generic;
    k->dequant[GGUF_T_Q4_K] = gl_dequant_q4_K_generic;
    k->dequant[GGUF_T_Q5_K] = gl_dequant_q5_K_generic;
    k->dequant[GGUF_T_Q6_K] = gl_dequant_q6_K_generic;
    k->dequant[GGUF_T_IQ4_XS] = gl_dequant_iq4_xs_generic;

    for (int t = 0; t < GGUF_T_COUNT; t++)
        k->act_type[t] = GL_ACT_F32;
    k->act_type[GGUF_T_Q8_0] = GL_ACT_Q8_0;
    k->act_type[GGUF_T_Q4_0] = GL_ACT_Q8_0;
    k->act_type[GGUF_T_Q4_1] = GL_ACT_Q8_1;
    k->act_type[GGUF_T_Q5_0] = GL_ACT_Q8_0;
    k->act_type[GGUF_T_Q5_1] = GL_ACT_Q8_1;
    k->act_type[GGUF_T_IQ4_NL] = GL_ACT_Q8_0;
    k->act_type[GGUF_T_Q2_K] = GL_ACT_Q8_K;
    k->act_type[GGUF_T_Q3_K] = GL_ACT_Q8_K;
    k->act_type[GGUF_T_Q4_K] = GL_ACT_Q8_K;
    k->act_type[GGUF_T_Q5_K] = GL_ACT_Q8_K;
    k->act_type[GGUF_T_Q6_K] = GL_ACT_Q8_K;
    k->act_type[GGUF_T_IQ4_XS] = GL_ACT_Q8_K;

    k->rmsnorm = gl_rmsnorm_generic;
    k->swiglu = gl_swiglu_generic;
    k->layernorm = gl_layernorm_generic;
    k->gelu = gl_gelu_generic;
    k->softcap = gl_softcap_generic;
    k->add_bias = gl_add_bias_generic;
    k->attn_scores[GL_KV_F32] = gl_attn_scores_f32_generic;
    k->attn_scores[GL_KV_F16] = gl_attn_scores_f16_generic;
    k->attn_accum[GL_KV_F32] = gl_attn_accum_f32_generic;
    k->attn_accum[GL_KV_F16] = gl_attn_accum_f16_generic;
    k->softmax = gl_softmax_generic;
    k->round_f16 = gl_round_f16_generic;
    k->to_f16 = gl_to_f16_generic;
    k->attn_scores_q8 = gl_attn_scores_q8_generic;
    k->attn_accum_q8 = gl_attn_accum_q8_generic;
    k->attn_scores_g[GL_KV_F32] = gl_attn_scores_g_f32_generic;
    k->attn_scores_g[GL_KV_F16] = gl_attn_scores_g_f16_generic;
    k->attn_accum_g[GL_KV_F32] = gl_attn_accum_g_f32_generic;
    k->attn_accum_g[GL_KV_F16] = gl_attn_accum_g_f16_generic;
    k->attn_scores_t[GL_KV_F32] = gl_attn_scores_t_f32_generic;
    k->attn_scores_t[GL_KV_F16] = gl_attn_scores_t_f16_generic;
    k->attn_scores_q8_g = gl_attn_scores_q8_g_generic;
    k->attn_accum_q8_g = gl_attn_accum_q8_g_generic;
}
