/* Quantization mixes (see quant_mix.h). The rules restate the reference
 * quantizer's per-tensor choices for the targets genloop writes. */
#include "quant_mix.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gguf.h"

/* The reference's llama_ftype numbers, stored as general.file_type. */
enum {
    FT_F32 = 0,
    FT_F16 = 1,
    FT_Q4_0 = 2,
    FT_Q4_1 = 3,
    FT_Q8_0 = 7,
    FT_Q5_0 = 8,
    FT_Q5_1 = 9,
    FT_Q2_K = 10,
    FT_Q3_K_S = 11,
    FT_Q3_K_M = 12,
    FT_Q3_K_L = 13,
    FT_Q4_K_S = 14,
    FT_Q4_K_M = 15,
    FT_Q5_K_S = 16,
    FT_Q5_K_M = 17,
    FT_Q6_K = 18,
    FT_IQ4_NL = 25,
    FT_IQ4_XS = 30,
    FT_BF16 = 32,
};

static const gl_qmix mixes[] = {
    { "q8_0", FT_Q8_0, GGUF_T_Q8_0 },       { "q4_0", FT_Q4_0, GGUF_T_Q4_0 },
    { "q4_1", FT_Q4_1, GGUF_T_Q4_1 },       { "q5_0", FT_Q5_0, GGUF_T_Q5_0 },
    { "q5_1", FT_Q5_1, GGUF_T_Q5_1 },       { "q2_k", FT_Q2_K, GGUF_T_Q2_K },
    { "q3_k_s", FT_Q3_K_S, GGUF_T_Q3_K },   { "q3_k_m", FT_Q3_K_M, GGUF_T_Q3_K },
    { "q3_k_l", FT_Q3_K_L, GGUF_T_Q3_K },   { "q4_k_s", FT_Q4_K_S, GGUF_T_Q4_K },
    { "q4_k_m", FT_Q4_K_M, GGUF_T_Q4_K },   { "q5_k_s", FT_Q5_K_S, GGUF_T_Q5_K },
    { "q5_k_m", FT_Q5_K_M, GGUF_T_Q5_K },   { "q6_k", FT_Q6_K, GGUF_T_Q6_K },
    { "iq4_nl", FT_IQ4_NL, GGUF_T_IQ4_NL }, { "iq4_xs", FT_IQ4_XS, GGUF_T_IQ4_XS },
    { "f32", FT_F32, GGUF_T_F32 },          { "f16", FT_F16, GGUF_T_F16 },
    { "bf16", FT_BF16, GGUF_T_BF16 },
};

const gl_qmix *gl_qmix_find(const char *name)
{
    for (size_t i = 0; i < sizeof mixes / sizeof mixes[0]; i++)
        if (!strcasecmp(name, mixes[i].name))
            return &mixes[i];
    return NULL;
}

const char *gl_qmix_names(void)
{
    return "q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k_s q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m q6_k "
           "iq4_nl iq4_xs f16 bf16 f32";
}

int gl_qmix_tensor_type_by_name(const char *name)
{
    static const struct {
        const char *name;
        uint32_t type;
    } types[] = {
        { "f32", GGUF_T_F32 },   { "f16", GGUF_T_F16 },       { "bf16", GGUF_T_BF16 },
        { "q8_0", GGUF_T_Q8_0 }, { "q4_0", GGUF_T_Q4_0 },     { "q4_1", GGUF_T_Q4_1 },
        { "q5_0", GGUF_T_Q5_0 }, { "q5_1", GGUF_T_Q5_1 },     { "q2_k", GGUF_T_Q2_K },
        { "q3_k", GGUF_T_Q3_K }, { "q4_k", GGUF_T_Q4_K },     { "q5_k", GGUF_T_Q5_K },
        { "q6_k", GGUF_T_Q6_K }, { "iq4_nl", GGUF_T_IQ4_NL }, { "iq4_xs", GGUF_T_IQ4_XS },
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcasecmp(name, types[i].name))
            return (int)types[i].type;
    return -1;
}

static bool has(const char *s, const char *part)
{
    return strstr(s, part) != NULL;
}

static bool ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

bool gl_qmix_quantizable(const char *name, int n_dims)
{
    static const char *const never[] = {
        "_norm.weight",
        "ffn_gate_inp.weight",
        "ssm_conv1d.weight",
        "time_mix_first.weight",
        "time_mix_w1.weight",
        "time_mix_w2.weight",
        "time_mix_decay_w1.weight",
        "time_mix_decay_w2.weight",
        "time_mix_lerp_fused.weight",
        "attn_rel_b.weight",
    };
    if (!ends_with(name, "weight") || n_dims < 2)
        return false;
    if (!strcmp(name, "position_embd.weight") || !strcmp(name, "token_types.weight"))
        return false;
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (has(name, never[i]))
            return false;
    return true;
}

static int layer_of(const char *name)
{
    int l = -1;
    if (sscanf(name, "blk.%d.", &l) != 1)
        l = -1;
    return l;
}

int gl_qmix_order(const char *a, const char *b)
{
    const int la = layer_of(a), lb = layer_of(b);
    if (la != lb)
        return la < lb ? -1 : 1;
    return strcmp(a, b);
}

/* The layers that get more bits: the first and last eighth and every third
 * in between. */
static bool more_bits(int i, int n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* The 32-element type a 256-element type falls back to when rows are not a
 * multiple of 256; F16 when even that does not fit. */
static uint32_t fallback(uint32_t t, int64_t ne0)
{
    switch (t) {
    case GGUF_T_Q2_K:
    case GGUF_T_Q3_K:
    case GGUF_T_IQ4_XS: t = GGUF_T_IQ4_NL; break;
    case GGUF_T_Q4_K: t = GGUF_T_Q5_0; break;
    case GGUF_T_Q5_K: t = GGUF_T_Q5_1; break;
    case GGUF_T_Q6_K: t = GGUF_T_Q8_0; break;
    default: t = GGUF_T_F16; break;
    }
    if (ne0 % (int64_t)gguf_type_block_elems(t))
        t = GGUF_T_F16;
    return t;
}

static uint32_t mix_rules(const gl_qmix *mix, const gl_qmix_opts *o, const gl_qmix_model *m,
                          gl_qmix_state *st, const char *name, int64_t ne0)
{
    const int ft = mix->ftype;
    const bool falcon = m->arch && !strcmp(m->arch, "falcon");
    const int n_kv = m->n_head_kv > 0 ? m->n_head_kv : m->n_head;
    const int gqa = n_kv > 0 ? m->n_head / n_kv : 1;
    const bool is_70b =
        m->arch && !strcmp(m->arch, "llama") && m->n_layer == 80 && m->n_head != n_kv;
    const bool iq4 = ft == FT_IQ4_NL || ft == FT_IQ4_XS;
    uint32_t t = mix->base;

    if (!strcmp(name, "output.weight") || (!m->has_output && !strcmp(name, "token_embd.weight"))) {
        if (o->output_type >= 0)
            t = (uint32_t)o->output_type;
        else if (falcon || ne0 % (int64_t)gguf_type_block_elems(t))
            t = GGUF_T_Q8_0;
        else if (t != GGUF_T_Q8_0)
            t = GGUF_T_Q6_K;
    } else if (!strcmp(name, "token_embd.weight")) {
        if (o->token_embd_type >= 0)
            t = (uint32_t)o->token_embd_type;
    } else if (has(name, "attn_v.weight")) {
        const int i = st->i_attention_wv;
        if (ft == FT_Q2_K)
            t = gqa >= 4 ? GGUF_T_Q4_K : GGUF_T_Q3_K;
        else if (ft == FT_Q3_K_M)
            t = i < 2 ? GGUF_T_Q5_K : GGUF_T_Q4_K;
        else if (ft == FT_Q3_K_L)
            t = GGUF_T_Q5_K;
        else if (iq4 && gqa >= 4)
            t = GGUF_T_Q5_K;
        else if ((ft == FT_Q4_K_M || ft == FT_Q5_K_M) && more_bits(i, m->n_attention_wv))
            t = GGUF_T_Q6_K;
        else if (ft == FT_Q4_K_S && i < 4)
            t = GGUF_T_Q5_K;
        if (is_70b && (t == GGUF_T_Q3_K || t == GGUF_T_Q4_K))
            t = GGUF_T_Q5_K;
        if (m->n_expert == 8)
            t = GGUF_T_Q8_0;
        st->i_attention_wv++;
    } else if (has(name, "attn_k.weight")) {
        if (m->n_expert == 8)
            t = GGUF_T_Q8_0;
    } else if (has(name, "ffn_down")) {
        int i = st->i_ffn_down, n = m->n_layer;
        if (m->n_expert > 1) {
            const int l = layer_of(name);
            i = l >= 0 ? l : i;
        }
        if (ft == FT_Q2_K)
            t = GGUF_T_Q3_K;
        else if (ft == FT_Q3_K_M)
            t = i < n / 16 ? GGUF_T_Q5_K : !falcon || more_bits(i, n) ? GGUF_T_Q4_K : GGUF_T_Q3_K;
        else if (ft == FT_Q3_K_L)
            t = falcon ? GGUF_T_Q4_K : GGUF_T_Q5_K;
        else if (ft == FT_Q4_K_M) {
            if (falcon)
                t = i < n / 16 ? GGUF_T_Q6_K : more_bits(i, n) ? GGUF_T_Q5_K : GGUF_T_Q4_K;
            else if (more_bits(i, n))
                t = GGUF_T_Q6_K;
        } else if (i < n / 8 && iq4)
            t = GGUF_T_Q5_K;
        else if (ft == FT_Q5_K_M && more_bits(i, n))
            t = GGUF_T_Q6_K;
        else if (ft == FT_Q4_K_S && !falcon && i < n / 8)
            t = GGUF_T_Q5_K;
        st->i_ffn_down++;
    } else if (has(name, "attn_output.weight")) {
        if (!falcon) {
            if (m->n_expert == 8) {
                if (ft == FT_Q2_K || ft == FT_Q3_K_S || ft == FT_Q3_K_M || ft == FT_IQ4_NL ||
                    ft == FT_Q4_K_S || ft == FT_Q4_K_M || ft == FT_IQ4_XS)
                    t = GGUF_T_Q5_K;
            } else if (ft == FT_Q2_K) {
                t = GGUF_T_Q3_K;
            } else if (ft == FT_Q3_K_M) {
                t = GGUF_T_Q4_K;
            } else if (ft == FT_Q3_K_L) {
                t = GGUF_T_Q5_K;
            }
        } else if (ft == FT_Q3_K_L) {
            t = GGUF_T_Q4_K;
        }
    } else if (has(name, "attn_qkv.weight")) {
        if (ft == FT_Q3_K_M || ft == FT_Q3_K_L)
            t = GGUF_T_Q4_K;
        else if (ft == FT_Q4_K_M)
            t = GGUF_T_Q5_K;
        else if (ft == FT_Q5_K_M)
            t = GGUF_T_Q6_K;
    } else if (has(name, "ffn_gate")) {
        st->i_ffn_gate++;
    } else if (has(name, "ffn_up")) {
        st->i_ffn_up++;
    }
    return t;
}

uint32_t gl_qmix_tensor_type(const gl_qmix *mix, const gl_qmix_opts *o, const gl_qmix_model *m,
                             gl_qmix_state *st, const char *name, int64_t ne0)
{
    const bool quantized =
        mix->base != GGUF_T_F32 && mix->base != GGUF_T_F16 && mix->base != GGUF_T_BF16;
    uint32_t t = mix->base;
    if (!o->pure && quantized)
        t = mix_rules(mix, o, m, st, name, ne0);
    if (o->token_embd_type >= 0 && !strcmp(name, "token_embd.weight"))
        t = (uint32_t)o->token_embd_type;
    if (o->output_type >= 0 && !strcmp(name, "output.weight"))
        t = (uint32_t)o->output_type;
    const int64_t be = (int64_t)gguf_type_block_elems(t);
    if (be > 1 && ne0 % be)
        t = fallback(t, ne0);
    return t;
}
