/* The llama transformer forward pass over a chunk of nb tokens: prefill
 * feeds a whole prompt chunk, decode feeds one token. Read top to bottom:
 * embed → per layer (RMSNorm → Q,K,V → RoPE → attention → output →
 * residual → RMSNorm → SwiGLU FFN → residual) → final norm → logits.
 *
 * The KV cache is a ring: position p lives in slot p when p < n_keep
 * (pinned), else in n_keep + (p - n_keep) % (n_ctx - n_keep). Position p
 * attends to the pinned positions and the latest n_ctx - n_keep positions
 * up to p. A chunk's own keys are read from chunk scratch in the cache's
 * storage format and written to the ring only after the layer's attention,
 * so a chunk never overwrites a slot one of its own queries still needs and
 * results are identical however a sequence is cut into chunks. */
#include <math.h>
#include <string.h>

#include "context.h"
#include "error.h"
#include "half.h"

/* ---- matrix products, split by output rows over the thread pool -------- */

typedef struct act {
    const float *x; /* nb rows of n floats, x_stride floats apart */
    size_t x_stride;
    void *q;        /* the same rows quantized to Q8_0, made on first use */
    bool q_ready;
    int n, nb;
} act;

typedef struct mm_job {
    const gl_weight *w;
    const void *x;
    size_t x_stride; /* bytes */
    float *y;
    size_t y_stride; /* floats */
    int nb;
} mm_job;

typedef struct mm_task {
    const gl_kernels *k;
    mm_job jobs[3];
    int n_jobs;
} mm_task;

/* Rows are handed out in multiples of 16 so threads never share a cache
 * line of output and SIMD kernels see whole row groups. */
enum { ROW_GRAIN = 16 };

static void mm_worker(void *arg, int ith, int nth)
{
    const mm_task *t = arg;
    for (int j = 0; j < t->n_jobs; j++) {
        const mm_job *jb = &t->jobs[j];
        int r0, r1;
        gl_split_range(jb->w->n_out, ROW_GRAIN, ith, nth, &r0, &r1);
        if (r0 < r1)
            t->k->matmul[jb->w->type](jb->w->data, jb->w->row_bytes, jb->x, jb->x_stride, jb->y,
                                      jb->y_stride, jb->w->n_in, r0, r1, jb->nb);
    }
}

static mm_job make_job(gl_ctx *c, act *a, const gl_weight *w, float *y, size_t y_stride)
{
    mm_job j = { .w = w, .y = y, .y_stride = y_stride, .nb = a->nb };
    if (c->k->act_type[w->type] == GGUF_T_Q8_0) {
        if (!a->q_ready) {
            for (int b = 0; b < a->nb; b++)
                c->k->quantize_q8_0(a->x + b * a->x_stride, (char *)a->q + b * c->xq_stride,
                                    a->n);
            a->q_ready = true;
        }
        j.x = a->q;
        j.x_stride = c->xq_stride;
    } else {
        j.x = a->x;
        j.x_stride = a->x_stride * sizeof(float);
    }
    return j;
}

/* Up to three products sharing one input, in one parallel region. */
static void matmul3(gl_ctx *c, const float *x, int n, int nb, const gl_weight *w0, float *y0,
                    const gl_weight *w1, float *y1, const gl_weight *w2, float *y2)
{
    act a = { .x = x, .x_stride = (size_t)n, .q = c->xq, .n = n, .nb = nb };
    mm_task t = { .k = c->k };
    const gl_weight *ws[3] = { w0, w1, w2 };
    float *ys[3] = { y0, y1, y2 };
    for (int i = 0; i < 3; i++)
        if (ws[i])
            t.jobs[t.n_jobs++] = make_job(c, &a, ws[i], ys[i], (size_t)ws[i]->n_out);
    gl_threadpool_run(c->pool, mm_worker, &t);
}

/* ---- RoPE: rotate adjacent pairs (x[2i], x[2i+1]) by pos * theta_i ------ */

static void rope_tables(gl_ctx *c, int pos0, int nb)
{
    const gl_config *cfg = &c->m->cfg;
    const int half = cfg->rope_dim / 2;
    for (int b = 0; b < nb; b++) {
        const double p = (double)(pos0 + b) * cfg->rope_freq_scale;
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

/* ---- KV ring ----------------------------------------------------------- */

static int slot_of(const gl_ctx *c, int pos)
{
    if (pos < c->n_keep)
        return pos;
    return c->n_keep + (pos - c->n_keep) % (c->n_ctx - c->n_keep);
}

/* Appends the cached positions [lo, hi) as runs of contiguous slots. */
static int add_cached(const gl_ctx *c, gl_kv_run *r, int n, int lo, int hi)
{
    while (lo < hi) {
        const int s = slot_of(c, lo);
        const int end = lo < c->n_keep ? c->n_keep : lo + (c->n_ctx - s);
        const int take = (hi < end ? hi : end) - lo;
        r[n++] = (gl_kv_run){ .in_chunk = false, .row = s, .n = take };
        lo += take;
    }
    return n;
}

/* Positions [lo, hi) in order: those before pos0 from the ring, the rest
 * from the chunk. */
static int add_positions(const gl_ctx *c, gl_kv_run *r, int n, int lo, int hi, int pos0)
{
    if (lo >= hi)
        return n;
    if (lo < pos0)
        n = add_cached(c, r, n, lo, hi < pos0 ? hi : pos0);
    if (hi > pos0) {
        const int s = lo > pos0 ? lo : pos0;
        r[n++] = (gl_kv_run){ .in_chunk = true, .row = s - pos0, .n = hi - s };
    }
    return n;
}

static void plan_runs(gl_ctx *c, int pos0, int nb)
{
    const int window = c->n_ctx - c->n_keep;
    for (int b = 0; b < nb; b++) {
        const int p = pos0 + b;
        gl_kv_run *r = c->runs + (size_t)b * GL_MAX_RUNS;
        const int pinned_end = p + 1 < c->n_keep ? p + 1 : c->n_keep;
        int lo = p - window + 1;
        if (lo < c->n_keep)
            lo = c->n_keep;
        int n = add_positions(c, r, 0, 0, pinned_end, pos0);
        n = add_positions(c, r, n, lo, p + 1, pos0);
        c->n_runs[b] = n;
    }
}

static void store_kv_chunk(gl_ctx *c, int layer, int pos0, int nb)
{
    const size_t layer_off = (size_t)layer * c->n_ctx * c->kv_row_bytes;
    for (int b = 0; b < nb; b++) {
        const size_t s = (size_t)slot_of(c, pos0 + b);
        memcpy(c->k_cache + layer_off + s * c->kv_row_bytes, c->k_chunk + b * c->kv_row_bytes,
               c->kv_row_bytes);
        memcpy(c->v_cache + layer_off + s * c->kv_row_bytes, c->v_chunk + b * c->kv_row_bytes,
               c->kv_row_bytes);
    }
}

static void to_cache_format(const gl_ctx *c, uint8_t *dst, const float *src, int n)
{
    if (c->kv_type == GL_KV_F16) {
        uint16_t *h = (uint16_t *)dst;
        for (int i = 0; i < n; i++)
            h[i] = gl_f32_to_f16(src[i]);
    } else {
        memcpy(dst, src, (size_t)n * sizeof(float));
    }
}

/* ---- attention: one (token, head) pair per work item --------------------- */

typedef struct attn_task {
    gl_ctx *c;
    int layer, nb;
} attn_task;

static void attn_worker(void *arg, int ith, int nth)
{
    const attn_task *t = arg;
    gl_ctx *c = t->c;
    const gl_config *cfg = &c->m->cfg;
    const int hd = cfg->head_dim, q_dim = cfg->n_heads * hd;
    const int group = cfg->n_heads / cfg->n_kv_heads;
    const float scale = 1.0f / sqrtf((float)hd);
    const size_t layer_off = (size_t)t->layer * c->n_ctx * c->kv_row_bytes;
    float *scores = c->scores + (size_t)ith * c->n_ctx;
    int i0, i1;
    gl_split_range(t->nb * cfg->n_heads, 1, ith, nth, &i0, &i1);
    for (int item = i0; item < i1; item++) {
        const int b = item / cfg->n_heads, h = item % cfg->n_heads;
        const size_t head_off = (size_t)(h / group) * hd * c->kv_elem;
        const float *q = c->q + (size_t)b * q_dim + h * hd;
        float *out = c->att + (size_t)b * q_dim + h * hd;
        const gl_kv_run *runs = c->runs + (size_t)b * GL_MAX_RUNS;

        int n = 0;
        for (int r = 0; r < c->n_runs[b]; r++) {
            const uint8_t *base = runs[r].in_chunk ? c->k_chunk : c->k_cache + layer_off;
            c->k->attn_scores[c->kv_type](scores + n, q,
                                          base + runs[r].row * c->kv_row_bytes + head_off,
                                          c->kv_row_bytes, runs[r].n, hd, scale);
            n += runs[r].n;
        }
        float mx = -INFINITY, sum = 0.0f;
        for (int j = 0; j < n; j++)
            mx = scores[j] > mx ? scores[j] : mx;
        for (int j = 0; j < n; j++) {
            scores[j] = expf(scores[j] - mx);
            sum += scores[j];
        }
        const float inv = 1.0f / sum;
        for (int j = 0; j < n; j++)
            scores[j] *= inv;

        memset(out, 0, (size_t)hd * sizeof(float));
        n = 0;
        for (int r = 0; r < c->n_runs[b]; r++) {
            const uint8_t *base = runs[r].in_chunk ? c->v_chunk : c->v_cache + layer_off;
            c->k->attn_accum[c->kv_type](out, scores + n,
                                         base + runs[r].row * c->kv_row_bytes + head_off,
                                         c->kv_row_bytes, runs[r].n, hd);
            n += runs[r].n;
        }
    }
}

/* ---- the forward pass ---------------------------------------------------- */

gl_status gl_forward(gl_ctx *c, const int32_t *tokens, int nb, float *logits, int first_row,
                     gl_error *err)
{
    const gl_model *m = c->m;
    const gl_config *cfg = &m->cfg;
    const gl_kernels *k = c->k;
    const int dim = cfg->dim, hd = cfg->head_dim;
    const int q_dim = cfg->n_heads * hd, kv_dim = cfg->n_kv_heads * hd;
    const int pos0 = c->pos;

    for (int b = 0; b < nb; b++) {
        if (tokens[b] < 0 || tokens[b] >= cfg->n_vocab)
            return gl_fail(err, GL_ERR_ARG, "token id %d is out of range [0, %d)", tokens[b],
                           cfg->n_vocab);
        const gl_weight *e = &m->tok_embd;
        k->dequant[e->type]((const char *)e->data + (size_t)tokens[b] * e->row_bytes,
                            c->x + (size_t)b * dim, dim);
    }
    rope_tables(c, pos0, nb);
    plan_runs(c, pos0, nb);

    for (int l = 0; l < cfg->n_layers; l++) {
        const gl_layer *L = &m->layers[l];

        for (int b = 0; b < nb; b++)
            k->rmsnorm(c->xb + (size_t)b * dim, c->x + (size_t)b * dim, L->attn_norm, dim,
                       cfg->norm_eps);
        matmul3(c, c->xb, dim, nb, &L->wq, c->q, &L->wk, c->kcur, &L->wv, c->vcur);
        for (int b = 0; b < nb; b++) {
            const float *cs = c->rope_cs + (size_t)b * cfg->rope_dim;
            rope(c->q + (size_t)b * q_dim, cfg->n_heads, hd, cfg->rope_dim, cs);
            rope(c->kcur + (size_t)b * kv_dim, cfg->n_kv_heads, hd, cfg->rope_dim, cs);
            to_cache_format(c, c->k_chunk + b * c->kv_row_bytes, c->kcur + (size_t)b * kv_dim,
                            kv_dim);
            to_cache_format(c, c->v_chunk + b * c->kv_row_bytes, c->vcur + (size_t)b * kv_dim,
                            kv_dim);
        }
        attn_task at = { .c = c, .layer = l, .nb = nb };
        gl_threadpool_run(c->pool, attn_worker, &at);
        store_kv_chunk(c, l, pos0, nb);

        matmul3(c, c->att, q_dim, nb, &L->wo, c->xb, NULL, NULL, NULL, NULL);
        for (size_t i = 0; i < (size_t)nb * dim; i++)
            c->x[i] += c->xb[i];

        for (int b = 0; b < nb; b++)
            k->rmsnorm(c->xb + (size_t)b * dim, c->x + (size_t)b * dim, L->ffn_norm, dim,
                       cfg->norm_eps);
        matmul3(c, c->xb, dim, nb, &L->w_gate, c->hb, &L->w_up, c->hb2, NULL, NULL);
        for (int b = 0; b < nb; b++)
            k->swiglu(c->hb + (size_t)b * cfg->ffn_dim, c->hb + (size_t)b * cfg->ffn_dim,
                      c->hb2 + (size_t)b * cfg->ffn_dim, cfg->ffn_dim);
        matmul3(c, c->hb, cfg->ffn_dim, nb, &L->w_down, c->xb, NULL, NULL, NULL, NULL);
        for (size_t i = 0; i < (size_t)nb * dim; i++)
            c->x[i] += c->xb[i];
    }
    c->pos += nb;

    if (logits && first_row < nb) {
        const int rows = nb - first_row;
        for (int b = first_row; b < nb; b++)
            k->rmsnorm(c->xb + (size_t)(b - first_row) * dim, c->x + (size_t)b * dim,
                       m->output_norm, dim, cfg->norm_eps);
        matmul3(c, c->xb, dim, rows, &m->output, logits, NULL, NULL, NULL, NULL);
    }
    return GL_OK;
}
