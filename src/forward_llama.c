/* The llama transformer forward pass over a chunk of nb tokens: prefill
 * feeds a whole prompt chunk, decode feeds one token. Read top to bottom:
 * embed → per layer (RMSNorm → Q,K,V → RoPE → attention → output →
 * residual → RMSNorm → SwiGLU FFN → residual) → final norm → logits. */
#include <math.h>
#include <string.h>

#include "context.h"
#include "error.h"

/* ---- RoPE: rotate adjacent pairs (x[2i], x[2i+1]) by pos * theta_i ------ */

static void rope_tables(gl_ctx *c, int nb)
{
    const gl_config *cfg = &c->m->cfg;
    const int half = cfg->rope_dim / 2;
    for (int b = 0; b < nb; b++) {
        const double p = (double)c->row_pos[b] * cfg->rope_freq_scale;
        float *cs = c->rope_cs + (size_t)b * cfg->rope_dim;
        for (int i = 0; i < half; i++) {
            const double th = p * c->rope_inv_freq[i];
            cs[2 * i] = (float)cos(th);
            cs[2 * i + 1] = (float)sin(th);
        }
    }
}

static void rope(float *v, int n_heads, int head_dim, int rope_dim, const float *cs)
{
    for (int h = 0; h < n_heads; h++) {
        float *x = v + h * head_dim;
        for (int i = 0; i < rope_dim; i += 2) {
            const float c = cs[i], s = cs[i + 1];
            const float x0 = x[i], x1 = x[i + 1];
            x[i] = x0 * c - x1 * s;
            x[i + 1] = x0 * s + x1 * c;
        }
    }
}

/* ---- the forward pass ---------------------------------------------------- */

gl_status gl_forward_llama(gl_ctx *c, const gl_batch *batch, gl_error *err)
{
    const gl_model *m = c->m;
    const gl_config *cfg = &m->cfg;
    const gl_kernels *k = c->k;
    const int dim = cfg->dim, hd = cfg->head_dim;
    const int q_dim = cfg->n_heads * hd, kv_dim = cfg->n_kv_heads * hd;
    const int nb = batch->n;
    (void)err;

    for (int b = 0; b < nb; b++) {
        const gl_weight *e = &m->tok_embd;
        k->dequant[e->type]((const char *)e->data + (size_t)batch->tokens[b] * e->row_bytes,
                            c->x + (size_t)b * dim, dim);
    }
    rope_tables(c, nb);
    gl_kv_plan(c, nb);

    /* gl_matmul_next before each product names the one after it: a thread
     * that waits (for the other threads, or while one runs the serial
     * steps) prefetches its share of those weights meanwhile */
    for (int l = 0; l < cfg->n_layers; l++) {
        const gl_layer *L = &m->layers[l];
        const gl_layer *L_next = l + 1 < cfg->n_layers ? &m->layers[l + 1] : NULL;

        for (int b = 0; b < nb; b++)
            k->rmsnorm(c->xb + (size_t)b * dim, c->x + (size_t)b * dim, L->attn_norm, dim,
                       cfg->norm_eps);
        gl_matmul_next(c, &L->wo, NULL, NULL);
        gl_matmul3(c, c->xb, dim, nb, &L->wq, c->q, &L->wk, c->kcur, &L->wv, c->vcur);
        for (int b = 0; b < nb; b++) {
            const float *cs = c->rope_cs + (size_t)b * cfg->rope_dim;
            rope(c->q + (size_t)b * q_dim, cfg->n_heads, hd, cfg->rope_dim, cs);
            rope(c->kcur + (size_t)b * kv_dim, cfg->n_kv_heads, hd, cfg->rope_dim, cs);
            gl_kv_to_cache_format(c, c->k_chunk + b * c->kv_row_bytes, c->kcur + (size_t)b * kv_dim,
                                  kv_dim);
            gl_kv_to_cache_format(c, c->v_chunk + b * c->kv_row_bytes, c->vcur + (size_t)b * kv_dim,
                                  kv_dim);
        }
        gl_attention(c, l, nb);
        gl_kv_store_chunk(c, l, nb);

        gl_matmul_next(c, &L->w_gate, &L->w_up, NULL);
        gl_matmul3(c, c->att, q_dim, nb, &L->wo, c->xb, NULL, NULL, NULL, NULL);
        for (size_t i = 0; i < (size_t)nb * dim; i++)
            c->x[i] += c->xb[i];

        for (int b = 0; b < nb; b++)
            k->rmsnorm(c->xb + (size_t)b * dim, c->x + (size_t)b * dim, L->ffn_norm, dim,
                       cfg->norm_eps);
        gl_matmul_next(c, &L->w_down, NULL, NULL);
        gl_matmul3(c, c->xb, dim, nb, &L->w_gate, c->hb, &L->w_up, c->hb2, NULL, NULL);
        for (int b = 0; b < nb; b++)
            k->swiglu(c->hb + (size_t)b * cfg->ffn_dim, c->hb + (size_t)b * cfg->ffn_dim,
                      c->hb2 + (size_t)b * cfg->ffn_dim, cfg->ffn_dim);
        if (L_next)
            gl_matmul_next(c, &L_next->wq, &L_next->wk, &L_next->wv);
        else
            gl_matmul_next(c, &m->output, NULL, NULL);
        gl_matmul3(c, c->hb, cfg->ffn_dim, nb, &L->w_down, c->xb, NULL, NULL, NULL, NULL);
        for (size_t i = 0; i < (size_t)nb * dim; i++)
            c->x[i] += c->xb[i];
    }

    /* logits only for the rows someone samples from */
    for (int i = 0; i < batch->n_out; i++)
        k->rmsnorm(c->xb + (size_t)i * dim, c->x + (size_t)batch->out_rows[i] * dim, m->output_norm,
                   dim, cfg->norm_eps);
    if (batch->n_out > 0) {
        const gl_layer *L0 = &m->layers[0]; /* the next token's first product */
        gl_matmul_next(c, &L0->wq, &L0->wk, &L0->wv);
        gl_matmul3(c, c->xb, dim, batch->n_out, &m->output, batch->logits, NULL, NULL, NULL, NULL);
    }
    return GL_OK;
}
