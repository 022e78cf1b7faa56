/* The ring KV cache and attention over it.
 *
 * Position p lives in slot p when p < n_keep (pinned), else in
 * n_keep + (p - n_keep) % (n_ctx - n_keep). Position p attends to the pinned
 * positions and the latest n_ctx - n_keep positions up to p. A chunk's own
 * keys are read from chunk scratch in the cache's storage format and written
 * to the ring only after the layer's attention, so a chunk never overwrites a
 * slot one of its own queries still needs and results are identical however
 * a sequence is cut into chunks. */
#include <math.h>
#include <string.h>

#include "context.h"
#include "half.h"

/* ---- KV ring ----------------------------------------------------------- */

static int slot_of(const gl_ctx *c, int64_t pos)
{
    if (pos < c->n_keep)
        return (int)pos;
    return c->n_keep + (int)((pos - c->n_keep) % (c->n_ctx - c->n_keep));
}

/* Appends the cached positions [lo, hi) as runs of contiguous slots. */
static int add_cached(const gl_ctx *c, gl_kv_run *r, int n, int64_t lo, int64_t hi)
{
    while (lo < hi) {
        const int s = slot_of(c, lo);
        const int64_t end = lo < c->n_keep ? c->n_keep : lo + (c->n_ctx - s);
        const int take = (int)((hi < end ? hi : end) - lo);
        r[n++] = (gl_kv_run){ .in_chunk = false, .row = s, .n = take };
        lo += take;
    }
    return n;
}

/* Positions [lo, hi) in order: those before pos0 (the sequence's first
 * position in this batch, at batch row first) from the ring, the rest from
 * the batch. */
static int add_positions(const gl_ctx *c, gl_kv_run *r, int n, int64_t lo, int64_t hi, int64_t pos0,
                         int first)
{
    if (lo >= hi)
        return n;
    if (lo < pos0)
        n = add_cached(c, r, n, lo, hi < pos0 ? hi : pos0);
    if (hi > pos0) {
        const int64_t s = lo > pos0 ? lo : pos0;
        r[n++] =
            (gl_kv_run){ .in_chunk = true, .row = first + (int)(s - pos0), .n = (int)(hi - s) };
    }
    return n;
}

/* Plans the runs of every row for a layer that attends to at most `limit`
 * latest positions (the ring's own limit applies too; 0: none). */
static void plan_runs(gl_ctx *c, int nb, int64_t limit, gl_kv_run *runs, int *n_runs)
{
    const int window = c->n_ctx - c->n_keep;
    for (int b = 0; b < nb; b++) {
        const int64_t p = c->row_pos[b], pos0 = c->row_pos[c->row_first[b]];
        const int first = c->row_first[b];
        gl_kv_run *r = runs + (size_t)b * GL_MAX_RUNS;
        const int64_t oldest = limit > 0 ? p - limit + 1 : 0; /* sliding-window layers */
        const int64_t pinned_end = p + 1 < c->n_keep ? p + 1 : c->n_keep;
        int64_t lo = p - window + 1;
        if (lo < c->n_keep)
            lo = c->n_keep;
        if (lo < oldest)
            lo = oldest;
        int n = add_positions(c, r, 0, oldest > 0 ? oldest : 0, pinned_end, pos0, first);
        n = add_positions(c, r, n, lo, p + 1, pos0, first);
        n_runs[b] = n;
    }
}

void gl_kv_plan(gl_ctx *c, int nb)
{
    plan_runs(c, nb, 0, c->runs, c->n_runs);
    if (c->runs_swa)
        plan_runs(c, nb, c->m->cfg.swa_window, c->runs_swa, c->n_runs_swa);
}

/* Layout of one (sequence, layer) of the K or V cache. F16 / F32 caches are
 * head-major, [kv_head][n_ctx][head_dim]: the rows one attention item reads
 * (one KV head, every cached position) are one contiguous stream, which the
 * hardware prefetchers follow, where position-major rows gave each thread
 * pieces of head_dim elements every kv_row_bytes (TinyLlama Q4_0 decode at
 * 4096 cached positions: 35.3 -> 30.5 ms per token). Q8_0 caches stay
 * position-major, [n_ctx][kv_row]: a block may span heads (head_dim < 32). */
static bool head_major(const gl_ctx *c)
{
    return c->kv_type != GL_KV_Q8_0;
}

static size_t head_bytes(const gl_ctx *c)
{
    return (size_t)c->m->cfg.head_dim * c->kv_elem;
}

/* Rows of KV head h from slot s on, and their stride, within a layer (a
 * position-major row is addressed at its start: Q8_0 kernels take the
 * head's element offset). */
static size_t slot_off(const gl_ctx *c, int h, size_t s)
{
    return head_major(c) ? ((size_t)h * (size_t)c->n_ctx + s) * head_bytes(c) : s * c->kv_row_bytes;
}
static size_t cache_stride(const gl_ctx *c)
{
    return head_major(c) ? head_bytes(c) : c->kv_row_bytes;
}

/* Byte offset of (sequence, layer) in the K or V cache. */
static size_t cache_off(const gl_ctx *c, int seq, int layer)
{
    return (size_t)seq * c->seq_cache_bytes + (size_t)layer * c->n_ctx * c->kv_row_bytes;
}

void gl_kv_store_chunk(gl_ctx *c, int layer, int nb)
{
    for (int b = 0; b < nb; b++) {
        const size_t layer_off = cache_off(c, c->row_seq[b], layer);
        const size_t s = (size_t)slot_of(c, c->row_pos[b]);
        const int n_parts = head_major(c) ? c->m->cfg.n_kv_heads : 1;
        const size_t part = head_major(c) ? head_bytes(c) : c->kv_row_bytes;
        for (int h = 0; h < n_parts; h++) {
            memcpy(c->k_cache + layer_off + slot_off(c, h, s),
                   c->k_chunk + b * c->kv_row_bytes + h * part, part);
            memcpy(c->v_cache + layer_off + slot_off(c, h, s),
                   c->v_chunk + b * c->kv_row_bytes + h * part, part);
        }
    }
}

void gl_kv_to_cache_format(const gl_ctx *c, uint8_t *dst, const float *src, int n)
{
    if (c->kv_type == GL_KV_Q8_0) {
        c->k->quantize_q8_0(src, dst, n);
    } else if (c->kv_type == GL_KV_F16) {
        uint16_t *h = (uint16_t *)dst;
        for (int i = 0; i < n; i++)
            h[i] = gl_f32_to_f16(src[i]);
    } else {
        memcpy(dst, src, (size_t)n * sizeof(float));
    }
}

/* ---- attention: one (token, KV head) per work item -----------------------
 * The query heads sharing a KV head (a group, grouped-query attention) are
 * computed together by the group kernels, which read each K and V row once
 * for the whole group. When there are fewer (token, KV head) items than
 * threads (decode with few KV heads), a group is cut into sub-groups so
 * every thread has work; the group kernels give each head the same bits
 * whichever heads share a call, so the cut never changes a result. */

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
    const int n_kv = cfg->n_kv_heads, group = cfg->n_heads / n_kv;
    /* queries that arrive scaled (q_prescale) meet the keys unscaled */
    const float scale = cfg->q_prescale ? 1.0f : cfg->attn_scale;
    const float cap = cfg->attn_softcap;
    const bool sliding = c->m->layers && c->m->layers[t->layer].sliding;
    const gl_kv_run *all_runs = sliding ? c->runs_swa : c->runs;
    const int *all_n_runs = sliding ? c->n_runs_swa : c->n_runs;
    const size_t ss = (size_t)c->n_ctx; /* scores of head h at scores + h * ss */
    float *scores = c->scores + (size_t)ith * group * ss;
    float *q16 = c->q16 + (size_t)ith * group * hd;
    const bool q8 = c->kv_type == GL_KV_Q8_0, f16 = c->kv_type == GL_KV_F16;

    /* sub-groups of `sub` query heads, `per_kv` of them per KV head */
    int per_kv = 1;
    const int items = t->nb * n_kv;
    if (items < nth)
        per_kv = (nth + items - 1) / items < group ? (nth + items - 1) / items : group;
    const int sub = (group + per_kv - 1) / per_kv;
    per_kv = (group + sub - 1) / sub;

    int i0, i1;
    gl_split_range(items * per_kv, 1, ith, nth, &i0, &i1);
    for (int item = i0; item < i1; item++) {
        const int b = item / (n_kv * per_kv), rem = item % (n_kv * per_kv);
        const int kvh = rem / per_kv, g0 = rem % per_kv * sub;
        const int nq = group - g0 < sub ? group - g0 : sub;
        const int h0 = kvh * group + g0; /* first query head of the item */
        const size_t layer_off = cache_off(c, c->row_seq[b], t->layer);
        /* F16/F32 rows are addressed at the head; Q8_0 rows at the row start
         * plus an element offset, since a head may sit inside a block */
        const int head_elem = kvh * hd;
        const size_t head_off = q8 ? 0 : (size_t)head_elem * c->kv_elem;
        const float *q = c->q + (size_t)b * q_dim + (size_t)h0 * hd;
        if (f16) {
            /* The keys are F16, so the query meets them at F16 precision, as
             * the reference implementation computes it: this halves our
             * distance to its logits and keeps near-tie greedy choices equal. */
            memcpy(q16, q, sizeof *q16 * (size_t)(nq * hd));
            c->k->round_f16(q16, nq * hd);
            q = q16;
        }
        float *out = c->att + (size_t)b * q_dim + (size_t)h0 * hd;
        const gl_kv_run *runs = all_runs + (size_t)b * GL_MAX_RUNS;
        const int n_runs = all_n_runs[b];

        /* a run's rows: in the chunk scratch (position-major, kv_row_bytes
         * apart) or in the cache (cache_stride apart) */
        const uint8_t *k_rows[GL_MAX_RUNS], *v_rows[GL_MAX_RUNS];
        size_t strides[GL_MAX_RUNS];
        for (int r = 0; r < n_runs; r++) {
            const int row = runs[r].row;
            if (runs[r].in_chunk) {
                k_rows[r] = c->k_chunk + row * c->kv_row_bytes + head_off;
                v_rows[r] = c->v_chunk + row * c->kv_row_bytes + head_off;
                strides[r] = c->kv_row_bytes;
            } else {
                const size_t off = layer_off + slot_off(c, kvh, (size_t)row);
                k_rows[r] = c->k_cache + off;
                v_rows[r] = c->v_cache + off;
                strides[r] = cache_stride(c);
            }
        }

        int n = 0;
        for (int r = 0; r < n_runs; r++) {
            if (q8)
                c->k->attn_scores_q8_g(scores + n, ss, q, (size_t)hd, nq, k_rows[r], strides[r],
                                       runs[r].n, head_elem, hd, scale);
            else
                c->k->attn_scores_g[c->kv_type](scores + n, ss, q, (size_t)hd, nq, k_rows[r],
                                                strides[r], runs[r].n, hd, scale);
            n += runs[r].n;
        }
        /* soft-capped scores (gemma2): cap * tanh(score / cap) */
        for (int h = 0; cap > 0.0f && h < nq; h++)
            c->k->softcap(scores + h * ss, n, cap);
        /* softmax per head; an F16 cache's values meet the weights at F16
         * precision, as the queries meet its keys */
        for (int h = 0; h < nq; h++)
            c->k->softmax(scores + h * ss, n, f16);

        memset(out, 0, (size_t)nq * hd * sizeof(float));
        n = 0;
        for (int r = 0; r < n_runs; r++) {
            if (q8)
                c->k->attn_accum_q8_g(out, (size_t)hd, scores + n, ss, nq, v_rows[r], strides[r],
                                      runs[r].n, head_elem, hd);
            else
                c->k->attn_accum_g[c->kv_type](out, (size_t)hd, scores + n, ss, nq, v_rows[r],
                                               strides[r], runs[r].n, hd);
            n += runs[r].n;
        }
    }
}

void gl_attention(gl_ctx *c, int layer, int nb)
{
    attn_task at = { .c = c, .layer = layer, .nb = nb };
    const gl_config *cfg = &c->m->cfg;
    const bool sliding = c->m->layers && c->m->layers[layer].sliding;
    const gl_kv_run *runs = sliding ? c->runs_swa : c->runs;
    const int *n_runs = sliding ? c->n_runs_swa : c->n_runs;
    double work = 0;
    for (int b = 0; b < nb; b++)
        for (int r = 0; r < n_runs[b]; r++)
            work += 2.0 * runs[b * GL_MAX_RUNS + r].n * cfg->head_dim * cfg->n_heads;
    gl_threadpool_run_sized(c->pool, attn_worker, &at, work);
}
