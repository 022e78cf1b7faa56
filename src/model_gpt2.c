/* Binding a gpt2 GGUF: hyperparameters under gpt2.*, learned token and
 * position embeddings, and per block LayerNorms (weight + bias), the fused
 * QKV projection, the output projection and the GELU MLP, all with biases.
 * Every tensor is checked for shape and type before it is used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "context.h"
#include "error.h"
#include "model.h"

static gl_status bind_gpt2_config(gl_model *m, gl_error *err)
{
    gl_config *c = &m->cfg;
    gl_status st;
    if ((st = gl_meta_int(m, "embedding_length", true, 0, 1, 1 << 16, &c->dim, err)) ||
        (st = gl_meta_int(m, "block_count", true, 0, 1, GL_MAX_LAYERS, &c->n_layers, err)) ||
        (st = gl_meta_int(m, "attention.head_count", true, 0, 1, 1 << 12, &c->n_heads, err)) ||
        (st = gl_meta_int(m, "feed_forward_length", true, 0, 1, 1 << 20, &c->ffn_dim, err)) ||
        (st = gl_meta_int(m, "context_length", true, 0, 1, 1 << 24, &c->n_ctx_train, err)) ||
        (st = gl_meta_float(m, "attention.layer_norm_epsilon", 1e-5f, 0.0f, 1.0f, &c->norm_eps,
                            err)))
        return st;
    if (c->dim % c->n_heads != 0)
        return gl_fail(err, GL_ERR_FORMAT,
                       "embedding_length %d is not a multiple of "
                       "head_count %d",
                       c->dim, c->n_heads);
    c->n_kv_heads = c->n_heads;
    c->head_dim = c->dim / c->n_heads;
    c->rope_dim = 0; /* positions are learned, not rotated */
    c->rope_freq_base = 0.0f;
    c->rope_freq_scale = 1.0f;
    c->n_pos_learned = c->n_ctx_train;
    c->attn_scale = 1.0f / sqrtf((float)c->head_dim);
    c->embd_scale = 1.0f;
    return GL_OK;
}

gl_status gl_bind_gpt2(gl_model *m, gl_error *err)
{
    gl_config *c = &m->cfg;
    gl_status st = bind_gpt2_config(m, err);
    if (st)
        return st;
    const int dim = c->dim;
    if ((st = gl_bind_weight(m, &m->tok_embd, "token_embd.weight", dim, c->n_vocab, false, err)) ||
        (st = gl_bind_weight(m, &m->pos_embd, "position_embd.weight", dim, c->n_pos_learned, false,
                             err)) ||
        (st = gl_bind_vector(m, &m->output_norm, "output_norm.weight", dim, err)) ||
        (st = gl_bind_vector(m, &m->output_norm_b, "output_norm.bias", dim, err)) ||
        (st = gl_bind_weight(m, &m->output, "output.weight", dim, c->n_vocab, true, err)))
        return st;
    if (!m->output.data) {
        m->output = m->tok_embd; /* tied embeddings, as GPT-2 trained them */
        m->output_tied = true;
    }

    m->gpt2_layers = calloc((size_t)c->n_layers, sizeof *m->gpt2_layers);
    if (!m->gpt2_layers)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for %d layers", c->n_layers);
    for (int l = 0; l < c->n_layers; l++) {
        gl_gpt2_layer *L = &m->gpt2_layers[l];
        char n[12][96];
        static const char *const parts[12] = {
            "attn_norm.weight",   "attn_norm.bias",   "attn_qkv.weight", "attn_qkv.bias",
            "attn_output.weight", "attn_output.bias", "ffn_norm.weight", "ffn_norm.bias",
            "ffn_up.weight",      "ffn_up.bias",      "ffn_down.weight", "ffn_down.bias",
        };
        for (int i = 0; i < 12; i++)
            snprintf(n[i], sizeof n[i], "blk.%d.%s", l, parts[i]);
        if ((st = gl_bind_vector(m, &L->attn_norm, n[0], dim, err)) ||
            (st = gl_bind_vector(m, &L->attn_norm_b, n[1], dim, err)) ||
            (st = gl_bind_weight(m, &L->wqkv, n[2], dim, 3 * dim, false, err)) ||
            (st = gl_bind_vector(m, &L->bqkv, n[3], 3 * dim, err)) ||
            (st = gl_bind_weight(m, &L->wo, n[4], dim, dim, false, err)) ||
            (st = gl_bind_vector(m, &L->bo, n[5], dim, err)) ||
            (st = gl_bind_vector(m, &L->ffn_norm, n[6], dim, err)) ||
            (st = gl_bind_vector(m, &L->ffn_norm_b, n[7], dim, err)) ||
            (st = gl_bind_weight(m, &L->w_up, n[8], dim, c->ffn_dim, false, err)) ||
            (st = gl_bind_vector(m, &L->b_up, n[9], c->ffn_dim, err)) ||
            (st = gl_bind_weight(m, &L->w_down, n[10], c->ffn_dim, dim, false, err)) ||
            (st = gl_bind_vector(m, &L->b_down, n[11], dim, err)))
            return st;
    }
    m->has_weights = true;
    m->forward = gl_forward_gpt2;
    return GL_OK;
}
