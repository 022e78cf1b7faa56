/* Binding a llama-like decoder. Llama 1/2/3.x, Mistral (both stored as
 * `llama`), Qwen2/2.5, Qwen3, Gemma 2 and Phi-3 share one layer shape:
 * pre-norm attention with RoPE and a gated FFN, each with a residual. What
 * differs is a handful of traits (the family table below) and which
 * tensors a file carries, so one binder fills one gl_layer per layer and
 * one forward pass (src/forward_llama.c) runs them all.
 *
 * Every tensor of the file must be understood: one this binder did not
 * consume would change the math, so it is an error naming it, never a
 * silent skip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "error.h"
#include "model.h"

enum swa_layers { SWA_ALL = 0, SWA_EVEN }; /* which layers slide when there is a window */

typedef struct gl_family {
    const char *arch;
    uint8_t rope_style; /* enum gl_rope_style */
    uint8_t ffn_act;    /* enum gl_ffn_act */
    bool embd_scale;    /* embeddings times sqrt(dim) */
    bool q_prescale;    /* see gl_config */
    bool needs_qkv_bias, needs_qk_norm, needs_post_norms;
    uint8_t swa_layers; /* enum swa_layers */
    int swa_default;    /* window when the file names none; 0: no sliding layers */
    float attn_softcap; /* defaults when the file names none; 0: off */
    float final_softcap;
} gl_family;

/* Facts from the models' published definitions (HF transformers) as GGUF
 * converters store them: Gemma's norm weights already include the +1 of
 * its (1 + w) RMSNorm, so every family here is plain RMSNorm; Gemma 2
 * slides on even layers (0, 2, ...) with a 4096 default window and caps
 * scores at 50 and logits at 30 unless the file says otherwise; Phi-3's
 * window (attention.sliding_window, 0 for Phi-4) covers every layer. */
static const gl_family families[] = {
    { .arch = "llama", .rope_style = GL_ROPE_NORM },
    { .arch = "qwen2", .rope_style = GL_ROPE_NEOX, .needs_qkv_bias = true },
    { .arch = "qwen3", .rope_style = GL_ROPE_NEOX, .needs_qk_norm = true },
    { .arch = "gemma2",
      .rope_style = GL_ROPE_NEOX,
      .ffn_act = GL_FFN_GEGLU,
      .embd_scale = true,
      .q_prescale = true,
      .needs_post_norms = true,
      .swa_layers = SWA_EVEN,
      .swa_default = 4096,
      .attn_softcap = 50.0f,
      .final_softcap = 30.0f },
    { .arch = "phi3", .rope_style = GL_ROPE_NEOX, .q_prescale = true },
};

const char *gl_supported_archs(void)
{
    return "llama (incl. Llama 3.x, Mistral), qwen2, qwen3, gemma2, phi3, gpt2";
}

/* Metadata keys of other architectures' math: present here, they would
 * mean a model this decoder does not compute. */
static const char *const refused_keys[] = {
    "expert_count",    "logit_scale",      "embedding_scale",     "residual_scale",
    "attention_scale", "attention.causal", "attention.clamp_kqv", "ssm.conv_kernel",
};

static gl_status bind_rope_scaling(gl_model *m, gl_error *err)
{
    gl_config *c = &m->cfg;
    c->rope_freq_scale = 1.0f;
    char key[128];
    snprintf(key, sizeof key, "%s.rope.scaling.type", m->arch);
    gguf_str type;
    bool linear = false;
    if (gguf_get_str(&m->gguf, key, &type)) {
        if (gguf_str_eq(type, "linear"))
            linear = true;
        else if (!gguf_str_eq(type, "none"))
            return gl_fail(err, GL_ERR_UNSUPPORTED, "rope scaling type '%.*s' not supported",
                           (int)(type.len > 32 ? 32 : type.len), type.ptr);
    }
    float factor = 0.0f;
    snprintf(key, sizeof key, "%s.rope.scaling.factor", m->arch);
    bool has_factor = gguf_get_f32(&m->gguf, key, &factor);
    if (!has_factor) {
        /* older converters wrote the linear factor under this name */
        snprintf(key, sizeof key, "%s.rope.scale_linear", m->arch);
        has_factor = gguf_get_f32(&m->gguf, key, &factor);
        if (has_factor)
            linear = true;
    }
    if (linear && has_factor && factor != 0.0f && factor != 1.0f) {
        if (!(factor > 0.0f && factor < 1e6f))
            return gl_fail(err, GL_ERR_FORMAT, "rope scaling factor %g is out of range",
                           (double)factor);
        c->rope_freq_scale = 1.0f / factor;
    }
    return GL_OK;
}

static gl_status bind_config(gl_model *m, const gl_family *f, gl_error *err)
{
    gl_config *c = &m->cfg;
    gl_status st;
    if ((st = gl_meta_int(m, "embedding_length", true, 0, 1, 1 << 16, &c->dim, err)) ||
        (st = gl_meta_int(m, "block_count", true, 0, 1, GL_MAX_LAYERS, &c->n_layers, err)) ||
        (st = gl_meta_int(m, "attention.head_count", true, 0, 1, 1 << 12, &c->n_heads, err)) ||
        (st = gl_meta_int(m, "attention.head_count_kv", false, c->n_heads, 1, c->n_heads,
                          &c->n_kv_heads, err)) ||
        (st = gl_meta_int(m, "feed_forward_length", true, 0, 1, 1 << 20, &c->ffn_dim, err)) ||
        (st = gl_meta_int(m, "context_length", false, 2048, 1, 1 << 24, &c->n_ctx_train, err)))
        return st;
    if (c->n_heads % c->n_kv_heads != 0)
        return gl_fail(err, GL_ERR_FORMAT, "head_count %d is not a multiple of head_count_kv %d",
                       c->n_heads, c->n_kv_heads);
    /* a head is dim / heads wide unless the file says otherwise (Gemma 2,
     * Qwen3: heads * head_dim != dim) */
    const int natural = c->dim % c->n_heads == 0 ? c->dim / c->n_heads : 0;
    int key_len = 0, value_len = 0;
    if ((st = gl_meta_int(m, "attention.key_length", natural == 0, natural, 1, 1 << 12, &key_len,
                          err)) ||
        (st =
             gl_meta_int(m, "attention.value_length", false, key_len, 1, 1 << 12, &value_len, err)))
        return st;
    if (value_len != key_len)
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "attention.value_length %d != attention.key_length %d is not supported",
                       value_len, key_len);
    if ((int64_t)key_len * c->n_heads > 1 << 20)
        return gl_fail(err, GL_ERR_FORMAT, "%d heads of %d are too wide", c->n_heads, key_len);
    c->head_dim = key_len;
    if ((st = gl_meta_int(m, "rope.dimension_count", false, c->head_dim, 2, c->head_dim,
                          &c->rope_dim, err)))
        return st;
    if (c->rope_dim % 2)
        return gl_fail(err, GL_ERR_FORMAT, "rope.dimension_count %d is odd", c->rope_dim);
    if ((st = gl_meta_float(m, "attention.layer_norm_rms_epsilon", 1e-5f, 0.0f, 1.0f, &c->norm_eps,
                            err)) ||
        (st = gl_meta_float(m, "rope.freq_base", 10000.0f, 1.0f, 1e12f, &c->rope_freq_base, err)) ||
        (st = bind_rope_scaling(m, err)))
        return st;

    for (size_t i = 0; i < sizeof refused_keys / sizeof refused_keys[0]; i++) {
        char key[128];
        snprintf(key, sizeof key, "%s.%s", m->arch, refused_keys[i]);
        const gguf_kv *kv = gguf_find(&m->gguf, key);
        int64_t v = 1;
        bool causal = true;
        if (!kv || (gguf_get_i64(&m->gguf, key, &v) && v == 0) ||
            (!strcmp(refused_keys[i], "attention.causal") &&
             gguf_get_bool(&m->gguf, key, &causal) && causal))
            continue; /* absent, zero experts, or causal as assumed */
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "metadata key '%s' changes the model's math in a way genloop's %s "
                       "decoder does not implement",
                       key, m->arch);
    }

    /* traits */
    c->rope_style = f->rope_style;
    c->ffn_act = f->ffn_act;
    c->q_prescale = f->q_prescale;
    c->attn_scale = 1.0f / sqrtf((float)c->head_dim);
    /* Gemma 2 27B scales queries by its query_pre_attn_scalar, dim / heads
     * (144), not by the head size; the 46 layers identify it */
    if (!strcmp(f->arch, "gemma2") && c->n_layers == 46 && natural)
        c->attn_scale = 1.0f / sqrtf((float)natural);
    c->embd_scale = f->embd_scale ? sqrtf((float)c->dim) : 1.0f;
    if ((st = gl_meta_float(m, "attn_logit_softcapping", f->attn_softcap, 0.0f, 1e6f,
                            &c->attn_softcap, err)) ||
        (st = gl_meta_float(m, "final_logit_softcapping", f->final_softcap, 0.0f, 1e6f,
                            &c->final_softcap, err)) ||
        (st = gl_meta_int(m, "attention.sliding_window", false, f->swa_default, 0, 1 << 24,
                          &c->swa_window, err)))
        return st;
    return GL_OK;
}

/* A view of n rows of w from row `first` (rows of a fused matrix). */
static gl_weight weight_rows(const gl_weight *w, int first, int n)
{
    gl_weight v = *w;
    v.data = (const char *)w->data + (size_t)first * w->row_bytes;
    v.n_out = n;
    return v;
}

static bool has_tensor(const gl_model *m, const char *name)
{
    return gguf_find_tensor(&m->gguf, name) != NULL;
}

/* Binds F32 vector `name` when the file has it (or when required). */
static gl_status bind_vector_opt(gl_model *m, const float **out, const char *name, int n,
                                 bool required, gl_error *err)
{
    *out = NULL;
    if (!required && !has_tensor(m, name))
        return GL_OK;
    return gl_bind_vector(m, out, name, n, err);
}

static gl_status bind_layer(gl_model *m, const gl_family *f, int l, gl_error *err)
{
    const gl_config *c = &m->cfg;
    gl_layer *L = &m->layers[l];
    const int q_dim = c->n_heads * c->head_dim, kv_dim = c->n_kv_heads * c->head_dim;
    char n[96];
    gl_status st;
#define NAME(part) (snprintf(n, sizeof n, "blk.%d.%s", l, part), n)
    if ((st = gl_bind_vector(m, &L->attn_norm, NAME("attn_norm.weight"), c->dim, err)))
        return st;
    if (has_tensor(m, NAME("attn_qkv.weight"))) { /* fused: rows [Q; K; V] */
        gl_weight qkv;
        if ((st = gl_bind_weight(m, &qkv, n, c->dim, q_dim + 2 * kv_dim, false, err)))
            return st;
        L->wq = weight_rows(&qkv, 0, q_dim);
        L->wk = weight_rows(&qkv, q_dim, kv_dim);
        L->wv = weight_rows(&qkv, q_dim + kv_dim, kv_dim);
    } else if ((st = gl_bind_weight(m, &L->wq, NAME("attn_q.weight"), c->dim, q_dim, false, err)) ||
               (st =
                    gl_bind_weight(m, &L->wk, NAME("attn_k.weight"), c->dim, kv_dim, false, err)) ||
               (st =
                    gl_bind_weight(m, &L->wv, NAME("attn_v.weight"), c->dim, kv_dim, false, err))) {
        return st;
    }
    const bool bias = f->needs_qkv_bias;
    if ((st = bind_vector_opt(m, &L->bq, NAME("attn_q.bias"), q_dim, bias, err)) ||
        (st = bind_vector_opt(m, &L->bk, NAME("attn_k.bias"), kv_dim, bias, err)) ||
        (st = bind_vector_opt(m, &L->bv, NAME("attn_v.bias"), kv_dim, bias, err)) ||
        (st = bind_vector_opt(m, &L->q_norm, NAME("attn_q_norm.weight"), c->head_dim,
                              f->needs_qk_norm, err)) ||
        (st = bind_vector_opt(m, &L->k_norm, NAME("attn_k_norm.weight"), c->head_dim,
                              f->needs_qk_norm, err)) ||
        (st = gl_bind_weight(m, &L->wo, NAME("attn_output.weight"), q_dim, c->dim, false, err)) ||
        (st = bind_vector_opt(m, &L->post_attn_norm, NAME("post_attention_norm.weight"), c->dim,
                              f->needs_post_norms, err)) ||
        (st = gl_bind_vector(m, &L->ffn_norm, NAME("ffn_norm.weight"), c->dim, err)))
        return st;
    if (!has_tensor(m, NAME("ffn_gate.weight")) && has_tensor(m, NAME("ffn_up.weight"))) {
        /* fused: ffn_up holds [gate; up], 2 * ffn_dim rows (phi3) */
        gl_weight up2;
        if ((st = gl_bind_weight(m, &up2, n, c->dim, 2 * c->ffn_dim, false, err)))
            return st;
        L->w_gate = weight_rows(&up2, 0, c->ffn_dim);
        L->w_up = weight_rows(&up2, c->ffn_dim, c->ffn_dim);
    } else if ((st = gl_bind_weight(m, &L->w_gate, NAME("ffn_gate.weight"), c->dim, c->ffn_dim,
                                    false, err)) ||
               (st = gl_bind_weight(m, &L->w_up, NAME("ffn_up.weight"), c->dim, c->ffn_dim, false,
                                    err))) {
        return st;
    }
    if ((st = gl_bind_weight(m, &L->w_down, NAME("ffn_down.weight"), c->ffn_dim, c->dim, false,
                             err)) ||
        (st = bind_vector_opt(m, &L->post_ffn_norm, NAME("post_ffw_norm.weight"), c->dim,
                              f->needs_post_norms, err)))
        return st;
#undef NAME
    L->sliding = c->swa_window > 0 && (f->swa_layers == SWA_ALL || l % 2 == 0);
    return GL_OK;
}

gl_status gl_bind_decoder(gl_model *m, gl_error *err)
{
    const gl_family *f = NULL;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(m->arch, families[i].arch))
            f = &families[i];
    if (!f)
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "architecture '%s' is not supported (supported: %s)", m->arch,
                       gl_supported_archs());
    gl_config *c = &m->cfg;
    gl_status st = bind_config(m, f, err);
    if (st)
        return st;
    m->tensor_used = calloc(m->gguf.n_tensors + 1, 1);
    m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!m->tensor_used || !m->layers)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for %d layers", c->n_layers);

    const gguf_tensor *emb = gguf_find_tensor(&m->gguf, "token_embd.weight");
    if (!emb)
        return gl_fail(err, GL_ERR_FORMAT, "missing tensor 'token_embd.weight'");
    if (emb->ne[1] != (uint64_t)c->n_vocab)
        return gl_fail(err, GL_ERR_FORMAT,
                       "token_embd.weight has %llu rows but the vocabulary has %d tokens",
                       (unsigned long long)emb->ne[1], c->n_vocab);
    if ((st = gl_bind_weight(m, &m->tok_embd, "token_embd.weight", c->dim, c->n_vocab, false,
                             err)) ||
        (st = gl_bind_vector(m, &m->output_norm, "output_norm.weight", c->dim, err)) ||
        (st = gl_bind_weight(m, &m->output, "output.weight", c->dim, c->n_vocab, true, err)) ||
        (st = bind_vector_opt(m, &m->rope_freqs, "rope_freqs.weight", c->rope_dim / 2, false, err)))
        return st;
    if (!m->output.data) {
        m->output = m->tok_embd; /* tied embeddings */
        m->output_tied = true;
    }
    for (int i = 0; m->rope_freqs && i < c->rope_dim / 2; i++)
        if (!(m->rope_freqs[i] > 0.0f && m->rope_freqs[i] < 1e6f))
            return gl_fail(err, GL_ERR_FORMAT,
                           "rope_freqs.weight[%d] = %g is not a positive factor", i,
                           (double)m->rope_freqs[i]);

    for (int l = 0; l < c->n_layers; l++)
        if ((st = bind_layer(m, f, l, err)))
            return st;

    for (uint64_t i = 0; i < m->gguf.n_tensors; i++) {
        if (m->tensor_used[i])
            continue;
        const gguf_str name = m->gguf.tensors[i].name;
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "tensor '%.*s' is not part of genloop's %s decoder: running without it "
                       "would compute another model",
                       (int)(name.len > 96 ? 96 : name.len), name.ptr, m->arch);
    }
    free(m->tensor_used);
    m->tensor_used = NULL;
    m->has_weights = true;
    m->forward = gl_forward_llama;
    return GL_OK;
}
