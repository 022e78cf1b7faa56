/* The GPT-2 transformer forward pass over a chunk of nb tokens. Read top to
 * bottom: token + learned position embedding → per layer (LayerNorm →
 * fused QKV + bias → attention over the ring cache → output projection +
 * bias → residual → LayerNorm → up + bias → GELU → down + bias → residual)
 * → final LayerNorm → logits. Attention, the KV cache and the matrix
 * products are the llama path's (src/attention.c, src/matmul.c); only the
 * norms, the activation and the biases differ, and the steps between the
 * products are functions of one row, as there. */
#include <string.h>

#include "context.h"
#include "error.h"

/* ---- the steps between the products, one row (token) at a time ----------
 * Over the pool for a prompt's rows (gl_each_row), as in forward_llama.c. */

/* The attention block's input: LayerNorm of the residual stream. */
static void attn_in_row(gl_ctx *c, const void *layer, int b)
{
    const gl_gpt2_layer *L = layer;
    const int dim = c->m->cfg.dim;
    c->k->layernorm(c->xb + (size_t)b * dim, c->x + (size_t)b * dim, L->attn_norm, L->attn_norm_b,
                    dim, c->m->cfg.norm_eps);
}

/* The fused product's row [q | k | v] plus its bias: q for attention, K and
 * V into the chunk that the cache takes. */
static void qkv_row(gl_ctx *c, const void *layer, int b)
{
    const gl_gpt2_layer *L = layer;
    const int dim = c->m->cfg.dim;
    float *row = c->qkv + (size_t)b * 3 * dim;
    c->k->add_bias(row, L->bqkv, 3 * dim);
    memcpy(c->q + (size_t)b * dim, row, (size_t)dim * sizeof(float));
    gl_kv_chunk_put(c, b, row + dim, row + 2 * dim);
}

/* Row b of a block's result (xb) plus its bias into the residual stream. */
static void add_to_stream(gl_ctx *c, const float *bias, int b)
{
    const int dim = c->m->cfg.dim;
    float *x = c->x + (size_t)b * dim, *xb = c->xb + (size_t)b * dim;
    c->k->add_bias(xb, bias, dim);
    for (int i = 0; i < dim; i++)
        x[i] += xb[i];
}

/* The output projection into the residual stream, then the MLP's input:
 * LayerNorm of that stream. */
static void ffn_in_row(gl_ctx *c, const void *layer, int b)
{
    const gl_gpt2_layer *L = layer;
    const int dim = c->m->cfg.dim;
    add_to_stream(c, L->bo, b);
    c->k->layernorm(c->xb + (size_t)b * dim, c->x + (size_t)b * dim, L->ffn_norm, L->ffn_norm_b,
                    dim, c->m->cfg.norm_eps);
}

static void ffn_act_row(gl_ctx *c, const void *layer, int b)
{
    const gl_gpt2_layer *L = layer;
    const int ffn = c->m->cfg.ffn_dim;
    float *h = c->hb + (size_t)b * ffn;
    c->k->add_bias(h, L->b_up, ffn);
    c->k->gelu(h, h, ffn);
}

/* The MLP's result into the residual stream. */
static void ffn_out_row(gl_ctx *c, const void *layer, int b)
{
    add_to_stream(c, ((const gl_gpt2_layer *)layer)->b_down, b);
}

/* ---- the forward pass ---------------------------------------------------- */

gl_status gl_forward_gpt2(gl_ctx *c, const gl_batch *batch, gl_error *err)
{
    const gl_model *m = c->m;
    const gl_config *cfg = &m->cfg;
    const gl_kernels *k = c->k;
    const int dim = cfg->dim, ffn = cfg->ffn_dim;
    const int nb = batch->n;

    /* Learned positions end at n_pos_learned: there is no embedding beyond. */
    for (int b = 0; b < nb; b++)
        if (c->row_pos[b] >= cfg->n_pos_learned)
            return gl_fail(err, GL_ERR_ARG,
                           "position %lld is past the %d positions gpt2 has "
                           "learned",
                           (long long)c->row_pos[b], cfg->n_pos_learned);

    /* x = token embedding + position embedding */
    for (int b = 0; b < nb; b++) {
        const gl_weight *pe = &m->pos_embd;
        float *x = c->x + (size_t)b * dim;
        gl_model_embed_row(m, k, batch->tokens[b], x, c->embd_row);
        k->dequant[pe->type]((const char *)pe->data + (size_t)c->row_pos[b] * pe->row_bytes, c->xb,
                             dim);
        k->add_bias(x, c->xb, dim);
    }
    gl_kv_plan(c, nb);

    /* gl_matmul_next names the product after the next one (see
     * forward_llama.c): waiting threads prefetch their share of it */
    for (int l = 0; l < cfg->n_layers; l++) {
        const gl_gpt2_layer *L = &m->gpt2_layers[l];
        const gl_weight *next_qkv =
            l + 1 < cfg->n_layers ? &m->gpt2_layers[l + 1].wqkv : &m->output;

        /* attention: q, k, v from one fused product, rows [q | k | v] */
        gl_each_row(c, L, nb, dim, attn_in_row);
        gl_matmul_next(c, &L->wo, NULL, NULL);
        gl_attention_next(c, l); /* and before it, this layer's cached K and V */
        gl_matmul3(c, c->xb, dim, nb, &L->wqkv, c->qkv, NULL, NULL, NULL, NULL);
        gl_each_row(c, L, nb, 3 * dim, qkv_row);
        gl_attention(c, l, nb);
        gl_kv_store_chunk(c, l, nb);

        gl_matmul_next(c, &L->w_up, NULL, NULL);
        gl_matmul3(c, c->att, dim, nb, &L->wo, c->xb, NULL, NULL, NULL, NULL);
        gl_each_row(c, L, nb, dim, ffn_in_row);

        /* MLP: up + bias → GELU → down + bias */
        gl_matmul_next(c, &L->w_down, NULL, NULL);
        gl_matmul3(c, c->xb, dim, nb, &L->w_up, c->hb, NULL, NULL, NULL, NULL);
        gl_each_row(c, L, nb, ffn, ffn_act_row);
        gl_matmul_next(c, next_qkv, NULL, NULL);
        gl_matmul3(c, c->hb, ffn, nb, &L->w_down, c->xb, NULL, NULL, NULL, NULL);
        gl_each_row(c, L, nb, dim, ffn_out_row);
    }

    for (int i = 0; i < batch->n_out; i++)
        k->layernorm(c->xb + (size_t)i * dim, c->x + (size_t)batch->out_rows[i] * dim,
                     m->output_norm, m->output_norm_b, dim, cfg->norm_eps);
    if (batch->n_out > 0) {
        gl_matmul_next(c, &m->gpt2_layers[0].wqkv, NULL, NULL); /* the next token's first */
        gl_matmul3(c, c->xb, dim, batch->n_out, &m->output, batch->logits, NULL, NULL, NULL, NULL);
    }
    return GL_OK;
}
