/* The decoder forward pass of every llama-like family over a chunk of nb
 * tokens: prefill feeds a whole prompt chunk, decode feeds one token. Read
 * top to bottom: embed → per layer (RMSNorm → Q,K,V → RoPE → attention →
 * output → residual → RMSNorm → gated FFN → residual) → final norm →
 * logits. The families' differences are traits of gl_config and optional
 * pieces of gl_layer (src/model_decoder.c), each applied where the
 * family's definition puts it: Q/K/V biases (qwen2), per-head Q/K RMSNorm
 * (qwen3), the embedding scale, post-attention / post-FFN norms, GeGLU and
 * the soft-caps (gemma2), sliding-window layers (gemma2, phi3). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "context.h"
#include "error.h"

/* ---- RoPE ----------------------------------------------------------------
 * Frequency i (of rope_dim / 2) turns by pos * theta_i; rope_inv_freq holds
 * theta_i with any per-frequency divisor (rope_freqs) applied. NORM styles
 * rotate adjacent pairs (x[2i], x[2i+1]), NEOX the halves (x[i],
 * x[i + rope_dim/2]); dims past rope_dim are left alone. */

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

static void rope(float *v, int n_heads, int head_dim, int rope_dim, int style, const float *cs)
{
    const int half = rope_dim / 2;
    const int pair = style == GL_ROPE_NEOX ? half : 1; /* distance to the partner */
    const int step = style == GL_ROPE_NEOX ? 1 : 2;    /* from one pair to the next */
    for (int h = 0; h < n_heads; h++) {
        float *x = v + h * head_dim;
        for (int i = 0; i < half; i++) {
            const float c = cs[2 * i], s = cs[2 * i + 1];
            float *a = x + i * step, *b = a + pair;
            const float x0 = *a, x1 = *b;
            *a = x0 * c - x1 * s;
            *b = x0 * s + x1 * c;
        }
    }
}

/* y[b] += bias for each of nb rows of n floats (bias may be NULL) */
static void add_bias_rows(const gl_kernels *k, float *y, const float *bias, int n, int nb)
{
    for (int b = 0; bias && b < nb; b++)
        k->add_bias(y + (size_t)b * n, bias, n);
}

/* RMSNorm in place of each of n_heads heads of every row (qwen3's Q/K norm) */
static void norm_heads(const gl_kernels *k, float *v, const float *w, int n_rows, int head_dim,
                       float eps)
{
    for (int i = 0; w && i < n_rows; i++)
        k->rmsnorm(v + (size_t)i * head_dim, v + (size_t)i * head_dim, w, head_dim, eps);
}

/* RMSNorm in place of nb rows (gemma2's post-attention / post-FFN norms) */
static void norm_rows(const gl_kernels *k, float *x, const float *w, int dim, int nb, float eps)
{
    for (int b = 0; w && b < nb; b++)
        k->rmsnorm(x + (size_t)b * dim, x + (size_t)b * dim, w, dim, eps);
}

/* An F16 matrix meets its input at F16 precision, as the reference
 * implementation computes such products (it converts the activations to
 * F16 first). Matching it matters for deep models: on the 26-layer Gemma 2
 * test file it takes the mean distance to the reference logits from 2.0 %
 * to 0.6 % (Llama 3: 0.065 % to 0.045 %). x is scratch the product reads
 * once, so it is rounded in place. */
static void round_input(const gl_kernels *k, const gl_weight *w, float *x, size_t n)
{
    if (w->type == GGUF_T_F16)
        k->round_f16(x, (int)n);
}

/* tanh-GELU at F16 precision, as the reference implementation computes it:
 * it looks GELU up in a table of F16 results indexed by the input's F16
 * value. Rounding in, GELU, rounding out gives the same values (but for
 * inputs >= 10, which the table passes through unrounded: a relative 4e-4
 * on rare outliers) with vector kernels. Together with round_input this
 * halves the distance to its logits on the 26-layer Gemma 2 test file. */
static void gelu_f16(const gl_kernels *k, float *x, int n)
{
    k->round_f16(x, n);
    k->gelu(x, x, n);
    k->round_f16(x, n);
}

/* Asks for the n floats at w (NULL: none). A layer's norm weights and
 * biases are read once a token, between two products, long after the
 * weights' stream pushed them out of every cache, by a step the other
 * threads wait for. Asked for as the product before them starts, they
 * arrive while it streams. Zen 5, decode, the two RMSNorm steps of every
 * layer together (timed in a scratch build): TinyLlama Q4_K_M 95-123 ->
 * 61-80 us a token, Qwen3-0.6B 75-98 -> 34-53 us (1 and 2 threads). */
static void prefetch_floats(const float *w, int n)
{
    if (!w)
        return;
    /* from the line holding w[0] to the one holding w[n - 1] */
    const uintptr_t end = (uintptr_t)(w + n);
    for (uintptr_t a = (uintptr_t)w & ~(uintptr_t)63; a < end; a += 64)
        __builtin_prefetch((const void *)a, 0, 3);
}

/* ---- the steps between the products, one row (token) at a time ----------
 * A prompt's rows are independent between the products, and each row's
 * step is the same arithmetic whichever thread runs it, so a chunk of
 * many rows is split over the pool (gl_each_row: one thread ran them all
 * while the others waited, ~10 % of a 2-thread prefill). */

/* The attention block's input: RMSNorm of the residual stream. */
static void attn_in_row(gl_ctx *c, const void *layer, int b)
{
    const gl_layer *L = layer;
    const int dim = c->m->cfg.dim;
    float *xb = c->xb + (size_t)b * dim;
    c->k->rmsnorm(xb, c->x + (size_t)b * dim, L->attn_norm, dim, c->m->cfg.norm_eps);
    round_input(c->k, &L->wq, xb, (size_t)dim);
}

/* Q, K and V of a row made ready for attention: biases, per-head norms,
 * RoPE at the row's position, the query prescale; K and V into the chunk
 * that the cache takes. */
static void qkv_row(gl_ctx *c, const void *layer, int b)
{
    const gl_layer *L = layer;
    const gl_config *cfg = &c->m->cfg;
    const gl_kernels *k = c->k;
    const int hd = cfg->head_dim, q_dim = cfg->n_heads * hd, kv_dim = cfg->n_kv_heads * hd;
    float *q = c->q + (size_t)b * q_dim;
    float *kc = c->kcur + (size_t)b * kv_dim, *vc = c->vcur + (size_t)b * kv_dim;
    add_bias_rows(k, q, L->bq, q_dim, 1);
    add_bias_rows(k, kc, L->bk, kv_dim, 1);
    add_bias_rows(k, vc, L->bv, kv_dim, 1);
    norm_heads(k, q, L->q_norm, cfg->n_heads, hd, cfg->norm_eps);
    norm_heads(k, kc, L->k_norm, cfg->n_kv_heads, hd, cfg->norm_eps);
    const float *cs = c->rope_cs + (size_t)b * cfg->rope_dim;
    rope(q, cfg->n_heads, hd, cfg->rope_dim, cfg->rope_style, cs);
    rope(kc, cfg->n_kv_heads, hd, cfg->rope_dim, cfg->rope_style, cs);
    for (int i = 0; cfg->q_prescale && i < q_dim; i++)
        q[i] *= cfg->attn_scale;
    gl_kv_chunk_put(c, b, kc, vc);
}

/* The output projection's result into the residual stream (unless the
 * product's epilogue added it: residual_epilogue), then the FFN block's
 * input: RMSNorm of that stream. */
static void ffn_in_row(gl_ctx *c, const void *layer, int b)
{
    const gl_layer *L = layer;
    const gl_config *cfg = &c->m->cfg;
    const int dim = cfg->dim;
    float *x = c->x + (size_t)b * dim, *xb = c->xb + (size_t)b * dim;
    if (L->post_attn_norm) {
        norm_rows(c->k, xb, L->post_attn_norm, dim, 1, cfg->norm_eps);
        for (int i = 0; i < dim; i++)
            x[i] += xb[i];
    }
    c->k->rmsnorm(xb, x, L->ffn_norm, dim, cfg->norm_eps);
    round_input(c->k, &L->w_gate, xb, (size_t)dim);
}

/* The gated activation: SwiGLU, or GeGLU at F16 precision (gemma2). */
static void ffn_act_row(gl_ctx *c, const void *layer, int b)
{
    const gl_layer *L = layer;
    const gl_config *cfg = &c->m->cfg;
    float *h = c->hb + (size_t)b * cfg->ffn_dim, *u = c->hb2 + (size_t)b * cfg->ffn_dim;
    if (cfg->ffn_act == GL_FFN_GEGLU) {
        gelu_f16(c->k, h, cfg->ffn_dim);
        for (int i = 0; i < cfg->ffn_dim; i++)
            h[i] *= u[i];
    } else {
        c->k->swiglu(h, h, u, cfg->ffn_dim);
    }
    round_input(c->k, &L->w_down, h, (size_t)cfg->ffn_dim);
}

/* The FFN block's result, normed (gemma2's post-FFN norm), into the
 * residual stream; without that norm the product's epilogue adds it. */
static void ffn_out_row(gl_ctx *c, const void *layer, int b)
{
    const gl_layer *L = layer;
    const int dim = c->m->cfg.dim;
    float *x = c->x + (size_t)b * dim, *xb = c->xb + (size_t)b * dim;
    norm_rows(c->k, xb, L->post_ffn_norm, dim, 1, c->m->cfg.norm_eps);
    for (int i = 0; i < dim; i++)
        x[i] += xb[i];
}

/* A block's output goes straight into the residual stream, as each thread
 * finishes its rows, unless a norm of the whole row comes first (post_norm):
 * the serial step after the product read half its input from the other
 * cores' caches. */
static const gl_epilogue *residual_epilogue(const gl_ctx *c, const float *post_norm,
                                            gl_epilogue *ep)
{
    if (post_norm)
        return NULL;
    *ep = (gl_epilogue){ .add_to = c->x, .add_stride = (size_t)c->m->cfg.dim };
    return ep;
}

/* ---- the forward pass ---------------------------------------------------- */

gl_status gl_forward_llama(gl_ctx *c, const gl_batch *batch, gl_error *err)
{
    const gl_model *m = c->m;
    const gl_config *cfg = &m->cfg;
    const gl_kernels *k = c->k;
    const int dim = cfg->dim, q_dim = cfg->n_heads * cfg->head_dim;
    const int kv_dim = cfg->n_kv_heads * cfg->head_dim;
    const int nb = batch->n;
    (void)err;

    for (int b = 0; b < nb; b++) {
        float *x = c->x + (size_t)b * dim;
        gl_model_embed_row(m, k, batch->tokens[b], x, c->embd_row);
        for (int i = 0; cfg->embd_scale != 1.0f && i < dim; i++)
            x[i] *= cfg->embd_scale;
    }
    rope_tables(c, nb);
    gl_kv_plan(c, nb);

    /* gl_matmul_next before each product names the one after it: a thread
     * that waits (for the other threads, or while one runs the serial
     * steps) prefetches its share of those weights meanwhile */
    for (int l = 0; l < cfg->n_layers; l++) {
        const gl_layer *L = &m->layers[l];
        const gl_layer *L_next = l + 1 < cfg->n_layers ? &m->layers[l + 1] : NULL;

        gl_each_row(c, L, nb, dim, attn_in_row);
        gl_matmul_next(c, &L->wo, NULL, NULL);
        gl_attention_next(c, l); /* and before it, this layer's cached K and V */
        prefetch_floats(L->bq, q_dim);
        prefetch_floats(L->bk, kv_dim);
        prefetch_floats(L->bv, kv_dim);
        prefetch_floats(L->q_norm, cfg->head_dim);
        prefetch_floats(L->k_norm, cfg->head_dim);
        gl_matmul3(c, c->xb, dim, nb, &L->wq, c->q, &L->wk, c->kcur, &L->wv, c->vcur);
        gl_each_row(c, L, nb, q_dim, qkv_row);
        gl_attention(c, l, nb);
        gl_kv_store_chunk(c, l, nb);

        gl_matmul_next(c, &L->w_gate, &L->w_up, NULL);
        round_input(k, &L->wo, c->att, (size_t)nb * q_dim);
        prefetch_floats(L->post_attn_norm, dim);
        prefetch_floats(L->ffn_norm, dim);
        gl_epilogue ep;
        gl_matmul_ep(c, c->att, q_dim, nb, &L->wo, c->xb,
                     residual_epilogue(c, L->post_attn_norm, &ep));
        gl_each_row(c, L, nb, dim, ffn_in_row);

        gl_matmul_next(c, &L->w_down, NULL, NULL);
        gl_matmul3(c, c->xb, dim, nb, &L->w_gate, c->hb, &L->w_up, c->hb2, NULL, NULL);
        gl_each_row(c, L, nb, cfg->ffn_dim, ffn_act_row);
        if (L_next)
            gl_matmul_next(c, &L_next->wq, &L_next->wk, &L_next->wv);
        else
            gl_matmul_next(c, &m->output, NULL, NULL);
        prefetch_floats(L->post_ffn_norm, dim);
        prefetch_floats(L_next ? L_next->attn_norm : m->output_norm, dim);
        gl_matmul_ep(c, c->hb, cfg->ffn_dim, nb, &L->w_down, c->xb,
                     residual_epilogue(c, L->post_ffn_norm, &ep));
        if (L->post_ffn_norm)
            gl_each_row(c, L, nb, dim, ffn_out_row);
    }

    /* logits only for the rows someone samples from */
    for (int i = 0; i < batch->n_out; i++)
        k->rmsnorm(c->xb + (size_t)i * dim, c->x + (size_t)batch->out_rows[i] * dim, m->output_norm,
                   dim, cfg->norm_eps);
    if (batch->n_out > 0) {
        const gl_layer *L0 = &m->layers[0]; /* the next token's first product */
        gl_matmul_next(c, &L0->wq, &L0->wk, &L0->wv);
        prefetch_floats(L0->attn_norm, dim);
        round_input(k, &m->output, c->xb, (size_t)batch->n_out * dim);
        /* gemma2's soft-cap, by each thread on its rows of the logits */
        const gl_epilogue cap = { .softcap = cfg->final_softcap };
        gl_matmul_ep(c, c->xb, dim, batch->n_out, &m->output, batch->logits, &cap);
    }
    return GL_OK;
}
