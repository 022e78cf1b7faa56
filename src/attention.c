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

/* Whether batch row b is the only row of its sequence (decode steps,
 * batched or not): then its own K/V can go straight to its ring slot, which
 * none of the batch's queries reads before (the position that slot held is
 * outside every window of the sequence from p on). */
static bool row_alone(const gl_ctx *c, int b)
{
    return c->row_first[b] == b && (b + 1 == c->plan_nb || c->row_first[b + 1] == b + 1);
}

/* Plans the runs of every row for a layer that attends to at most `limit`
 * latest positions (the ring's own limit applies too; 0: none). A row whose
 * K/V the attention stores first (kv_in_region) reads them from the ring. */
static void plan_runs(gl_ctx *c, int nb, int64_t limit, gl_kv_run *runs, int *n_runs)
{
    const int window = c->n_ctx - c->n_keep;
    for (int b = 0; b < nb; b++) {
        const int64_t p = c->row_pos[b];
        const int64_t pos0 =
            c->kv_in_region && row_alone(c, b) ? p + 1 : c->row_pos[c->row_first[b]];
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

static bool head_major(const gl_ctx *c);

void gl_kv_plan(gl_ctx *c, int nb)
{
    /* Rows alone in their sequence have their K/V formatted and stored by
     * the thread that computes their attention, in the attention region,
     * when each (row, KV head) is one work item (every thread has one):
     * no serial store after it, and the lines a store writes (the whole
     * block of transposed keys) stay in the cache of the thread that reads
     * them at the next token. Position-major Q8_0 rows hold every head, so
     * a block may be shared by two items: stored after the region as before. */
    c->plan_nb = nb;
    c->kv_in_region = head_major(c) && nb * c->m->cfg.n_kv_heads >= gl_threadpool_size(c->pool);
    plan_runs(c, nb, 0, c->runs, c->n_runs);
    if (c->runs_swa)
        plan_runs(c, nb, c->m->cfg.swa_window, c->runs_swa, c->n_runs_swa);
}

/* Layout of one (sequence, layer) of the K or V cache. F16 / F32 caches are
 * head-major, [kv_head][n_ctx_alloc][head_dim]: the rows one attention item
 * reads (one KV head, every cached position) are one contiguous stream,
 * which the hardware prefetchers follow, where position-major rows gave each
 * thread pieces of head_dim elements every kv_row_bytes (TinyLlama Q4_0
 * decode at 4096 cached positions: 35.3 -> 30.5 ms per token).
 *
 * Where a KV head serves GL_KT_MIN_GROUP or more query heads, its keys are
 * moreover transposed in blocks of GL_KT_BLOCK positions (k_transposed:
 * [kv_head][block][head_dim][GL_KT_BLOCK], kernels.h attn_scores_t). A
 * vector then holds one dimension of several keys and each score is a
 * chain of FMAs in its own lane, where key rows need a sum across the lanes
 * of every score, which bounds attention once many queries share each row.
 * bench/attn_stream, 1024 positions, AVX-512 on a Zen 5, F16 cache, scores
 * and accumulation: 4 query heads per KV head 1.05-1.16x, 7 1.24x, 8
 * 1.42-1.55x; but 1-3 0.89-1.02x (hd 64-256), where the memory bounds it and
 * a row is one stream: those keep rows. (AVX2: 4-8 heads 1.02-1.06x.)
 * n_ctx_alloc is n_ctx rounded up to whole blocks. Values stay rows: their
 * accumulation is lane-parallel already.
 *
 * Q8_0 caches are head-major too where each head is whole blocks (head_dim
 * a multiple of 32: every family's real sizes), never transposed. Position-
 * major, an item read 136 bytes (Qwen3's 128-dim head) every 1088, and
 * Q8_0 attention at 1024 cached positions took twice the F16 cache's time
 * for half its bytes (Qwen3-0.6B, 2 threads, Zen 5: 6.9 against 3.2-3.5 ms
 * a token). A head_dim below or not a multiple of 32 keeps [n_ctx][kv_row]:
 * a block there may span heads. */
static bool head_major(const gl_ctx *c)
{
    return c->kv_type != GL_KV_Q8_0 || c->m->cfg.head_dim % QK8_0 == 0;
}

static size_t head_bytes(const gl_ctx *c)
{
    if (c->kv_type == GL_KV_Q8_0)
        return (size_t)c->m->cfg.head_dim / QK8_0 * sizeof(block_q8_0);
    return (size_t)c->m->cfg.head_dim * c->kv_elem;
}

/* Rows of KV head h from slot s on, and their stride, within a layer (a
 * position-major row is addressed at its start: Q8_0 kernels take the
 * head's element offset). In transposed keys the same offset at a block's
 * first slot is that block's start. */
static size_t slot_off(const gl_ctx *c, int h, size_t s)
{
    return head_major(c) ? ((size_t)h * (size_t)c->n_ctx_alloc + s) * head_bytes(c)
                         : s * c->kv_row_bytes;
}
static size_t cache_stride(const gl_ctx *c)
{
    return head_major(c) ? head_bytes(c) : c->kv_row_bytes;
}

/* Byte offset of (sequence, layer) in the K or V cache. */
static size_t cache_off(const gl_ctx *c, int seq, int layer)
{
    return (size_t)seq * c->seq_cache_bytes + (size_t)layer * c->n_ctx_alloc * c->kv_row_bytes;
}

/* Transposed keys of the chunk are in the same blocks, [kv_head][chunk block]
 * [head_dim][GL_KT_BLOCK], batch row b at block b / GL_KT_BLOCK, so a
 * chunk's own keys go through the same kernel as cached ones (the same bits
 * however a sequence is cut into chunks). */
static size_t chunk_rows(const gl_ctx *c)
{
    return ((size_t)c->n_batch + GL_KT_BLOCK - 1) / GL_KT_BLOCK * GL_KT_BLOCK;
}

/* Element (slot s, dimension d) of KV head h in a transposed region whose
 * heads are `rows` slots apart. */
static size_t kt_elem(const gl_ctx *c, size_t rows, int h, size_t s, int d)
{
    const size_t hd = (size_t)c->m->cfg.head_dim;
    return ((size_t)h * rows + s / GL_KT_BLOCK * GL_KT_BLOCK) * hd + (size_t)d * GL_KT_BLOCK +
           s % GL_KT_BLOCK;
}

/* Bytes of transposed keys holding n keys from lane `lane` of a block on:
 * the whole blocks. */
static size_t kt_run_bytes(const gl_ctx *c, int lane, int n)
{
    return ((size_t)lane + (size_t)n + GL_KT_BLOCK - 1) / GL_KT_BLOCK * GL_KT_BLOCK * head_bytes(c);
}

/* One head's key (hd floats) into transposed storage whose dimension 0 is at
 * e0: dimension d lands GL_KT_BLOCK elements after d - 1. Converted a piece
 * at a time, then scattered. */
static void kt_put(const gl_ctx *c, uint8_t *e0, const float *k, int hd)
{
    enum { PIECE = 64 };
    uint8_t tmp[PIECE * sizeof(float)];
    const size_t el = c->kv_elem, step = GL_KT_BLOCK * el;
    for (int d0 = 0; d0 < hd; d0 += PIECE) {
        const int m = hd - d0 < PIECE ? hd - d0 : PIECE;
        gl_kv_to_cache_format(c, tmp, k + d0, m);
        for (int d = 0; d < m; d++)
            memcpy(e0 + (size_t)(d0 + d) * step, tmp + (size_t)d * el, el);
    }
}

/* K and V of batch row b, KV head h, from floats straight to its ring slot
 * (rows alone in their sequence, kv_in_region). */
static void kv_put_head(gl_ctx *c, int layer, int b, int h)
{
    const int hd = c->m->cfg.head_dim;
    const size_t layer_off = cache_off(c, c->row_seq[b], layer);
    const size_t s = (size_t)slot_of(c, c->row_pos[b]);
    const float *k = c->row_k_src[b] + (size_t)h * hd, *v = c->row_v_src[b] + (size_t)h * hd;
    gl_kv_to_cache_format(c, c->v_cache + layer_off + slot_off(c, h, s), v, hd);
    if (!c->k_transposed) {
        gl_kv_to_cache_format(c, c->k_cache + layer_off + slot_off(c, h, s), k, hd);
        return;
    }
    kt_put(c, c->k_cache + layer_off + kt_elem(c, (size_t)c->n_ctx_alloc, h, s, 0) * c->kv_elem, k,
           hd);
}

void gl_kv_store_chunk(gl_ctx *c, int layer, int nb)
{
    const int n_kv = c->m->cfg.n_kv_heads, hd = c->m->cfg.head_dim;
    for (int b = 0; b < nb; b++) {
        if (c->kv_in_region && row_alone(c, b))
            continue; /* stored by its attention items */
        const size_t layer_off = cache_off(c, c->row_seq[b], layer);
        const size_t s = (size_t)slot_of(c, c->row_pos[b]);
        if (!head_major(c)) {
            memcpy(c->k_cache + layer_off + slot_off(c, 0, s), c->k_chunk + b * c->kv_row_bytes,
                   c->kv_row_bytes);
            memcpy(c->v_cache + layer_off + slot_off(c, 0, s), c->v_chunk + b * c->kv_row_bytes,
                   c->kv_row_bytes);
            continue;
        }
        for (int h = 0; h < n_kv; h++) {
            memcpy(c->v_cache + layer_off + slot_off(c, h, s),
                   c->v_chunk + b * c->kv_row_bytes + h * head_bytes(c), head_bytes(c));
            if (!c->k_transposed) {
                memcpy(c->k_cache + layer_off + slot_off(c, h, s),
                       c->k_chunk + b * c->kv_row_bytes + h * head_bytes(c), head_bytes(c));
                continue;
            }
            for (int d = 0; d < hd; d++) {
                const size_t from = kt_elem(c, chunk_rows(c), h, (size_t)b, d) * c->kv_elem;
                const size_t to = kt_elem(c, (size_t)c->n_ctx_alloc, h, s, d) * c->kv_elem;
                memcpy(c->k_cache + layer_off + to, c->k_chunk + from, c->kv_elem);
            }
        }
    }
}

void gl_kv_to_cache_format(const gl_ctx *c, uint8_t *dst, const float *src, int n)
{
    if (c->kv_type == GL_KV_Q8_0) {
        c->k->quantize_q8_0(src, dst, n);
    } else if (c->kv_type == GL_KV_F16) {
        c->k->to_f16((uint16_t *)dst, src, n);
    } else {
        memcpy(dst, src, (size_t)n * sizeof(float));
    }
}

void gl_kv_chunk_put(gl_ctx *c, int b, const float *k, const float *v)
{
    const int n_kv = c->m->cfg.n_kv_heads, hd = c->m->cfg.head_dim;
    if (c->kv_in_region && row_alone(c, b)) { /* formatted by its attention items */
        c->row_k_src[b] = k;
        c->row_v_src[b] = v;
        return;
    }
    gl_kv_to_cache_format(c, c->v_chunk + b * c->kv_row_bytes, v, n_kv * hd);
    if (!c->k_transposed) {
        gl_kv_to_cache_format(c, c->k_chunk + b * c->kv_row_bytes, k, n_kv * hd);
        return;
    }
    for (int h = 0; h < n_kv; h++)
        kt_put(c, c->k_chunk + kt_elem(c, chunk_rows(c), h, (size_t)b, 0) * c->kv_elem, k + h * hd,
               hd);
}

/* ---- attention: one (token, KV head) per work item -----------------------
 * The query heads sharing a KV head (a group, grouped-query attention) are
 * computed together by the group kernels, which read each K and V row once
 * for the whole group. When there are fewer (token, KV head) items than
 * threads (decode with few KV heads), a group is cut into sub-groups so
 * every thread has work; the group kernels give each head the same bits
 * whichever heads share a call, so the cut never changes a result. */

/* An item's cached keys and values come from memory (the weights' stream
 * evicted them since the last token), a few KiB per KV head, which the
 * kernels' loads alone leave to the hardware prefetcher, one short stream
 * after another. Asking for the first ATTN_PF_BYTES of each at the item's
 * start: bench/attn_stream --alloc 1024 --prefetch 4096, F16, AVX-512 on a
 * Zen 5, best of 3 interleaved, ms a pass for (query heads per KV head x
 * head_dim) at 40 positions: 1x96 11.6 -> 8.0, 2x128 11.6 -> 6.9, 4x64
 * 16.2 -> 11.3, 8x64 16.4 -> 12.0; 128 positions 2x128 17.9 -> 16.1, 8x64
 * 31.0 -> 27.4; 1000 positions 95.4 -> 92.8, 140.3 -> 140.0. All of a long
 * context's lines at once were slower (1024 positions in one stream 19.7 ->
 * 25.4). */
enum { ATTN_PF_BYTES = 4096 };

/* Asks for the first *budget bytes of n rows of `bytes` bytes, `stride`
 * apart, and takes them from *budget. */
static void prefetch_rows(const uint8_t *p, size_t stride, int n, size_t bytes, size_t *budget)
{
    if (stride == bytes) {
        bytes *= (size_t)n;
        n = 1;
    }
    for (int i = 0; i<n && * budget> 0; i++, p += stride) {
        const size_t len = bytes < *budget ? bytes : *budget;
        for (size_t o = 0; o < len; o += 64)
            __builtin_prefetch(p + o, 0, 3);
        *budget -= len;
    }
}

/* The work items of a layer's attention over nb rows, as thread ith of nth
 * takes them: items [*i0, *i1) of nb * n_kv_heads * per_kv, item i being
 * row i / (n_kv * per_kv), KV head i / per_kv % n_kv, and query heads
 * sub * (i % per_kv) on of that head's group: `per_kv` sub-groups of `sub`
 * query heads each. */
static void attn_items(const gl_ctx *c, int nb, int ith, int nth, int *per_kv, int *sub, int *i0,
                       int *i1)
{
    const int n_kv = c->m->cfg.n_kv_heads, group = c->m->cfg.n_heads / n_kv;
    const int items = nb * n_kv;
    int pk = 1;
    if (items < nth)
        pk = (nth + items - 1) / items < group ? (nth + items - 1) / items : group;
    *sub = (group + pk - 1) / pk;
    *per_kv = (group + *sub - 1) / *sub;
    gl_split_range(items * *per_kv, 1, ith, nth, i0, i1);
}

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
    const bool q8_rows = q8 && !head_major(c); /* position-major Q8_0 rows */

    int per_kv, sub, i0, i1;
    attn_items(c, t->nb, ith, nth, &per_kv, &sub, &i0, &i1);
    for (int item = i0; item < i1; item++) {
        const int b = item / (n_kv * per_kv), rem = item % (n_kv * per_kv);
        const int kvh = rem / per_kv, g0 = rem % per_kv * sub;
        const int nq = group - g0 < sub ? group - g0 : sub;
        const int h0 = kvh * group + g0; /* first query head of the item */
        const size_t layer_off = cache_off(c, c->row_seq[b], t->layer);
        /* rows are addressed at the head; position-major Q8_0 rows at the
         * row start plus an element offset, since a head may sit inside a
         * block */
        const int head_elem = q8_rows ? kvh * hd : 0;
        const size_t head_off = q8_rows ? 0 : (size_t)kvh * head_bytes(c);
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
        if (c->kv_in_region && row_alone(c, b)) /* one item per (row, KV head) */
            kv_put_head(c, t->layer, b, kvh);
        const gl_kv_run *runs = all_runs + (size_t)b * GL_MAX_RUNS;
        const int n_runs = all_n_runs[b];

        /* a run's rows: in the chunk scratch (position-major, kv_row_bytes
         * apart) or in the cache (cache_stride apart); transposed keys: the
         * block holding the run's first key, and its lane */
        const uint8_t *k_rows[GL_MAX_RUNS], *v_rows[GL_MAX_RUNS];
        size_t strides[GL_MAX_RUNS];
        int lanes[GL_MAX_RUNS];
        for (int r = 0; r < n_runs; r++) {
            const int row = runs[r].row;
            const size_t blk_row = (size_t)row / GL_KT_BLOCK * GL_KT_BLOCK;
            lanes[r] = row % GL_KT_BLOCK;
            if (runs[r].in_chunk) {
                k_rows[r] =
                    !c->k_transposed
                        ? c->k_chunk + row * c->kv_row_bytes + head_off
                        : c->k_chunk + ((size_t)kvh * chunk_rows(c) + blk_row) * head_bytes(c);
                v_rows[r] = c->v_chunk + row * c->kv_row_bytes + head_off;
                strides[r] = c->kv_row_bytes;
            } else {
                const size_t off = layer_off + slot_off(c, kvh, (size_t)row);
                k_rows[r] = !c->k_transposed ? c->k_cache + off
                                             : c->k_cache + layer_off + slot_off(c, kvh, blk_row);
                v_rows[r] = c->v_cache + off;
                strides[r] = cache_stride(c);
            }
        }
        size_t k_budget = ATTN_PF_BYTES, v_budget = ATTN_PF_BYTES;
        for (int r = 0; r < n_runs; r++) {
            size_t off = 0, bytes = head_bytes(c);
            if (q8_rows) { /* the blocks holding the head */
                off = (size_t)head_elem / QK8_0 * sizeof(block_q8_0);
                bytes = ((size_t)(head_elem + hd + QK8_0 - 1) / QK8_0 - (size_t)head_elem / QK8_0) *
                        sizeof(block_q8_0);
            }
            if (c->k_transposed)
                prefetch_rows(k_rows[r], 0, 1, kt_run_bytes(c, lanes[r], runs[r].n), &k_budget);
            else
                prefetch_rows(k_rows[r] + off, strides[r], runs[r].n, bytes, &k_budget);
            prefetch_rows(v_rows[r] + off, strides[r], runs[r].n, bytes, &v_budget);
        }

        int n = 0;
        for (int r = 0; r < n_runs; r++) {
            if (q8)
                c->k->attn_scores_q8_g(scores + n, ss, q, (size_t)hd, nq, k_rows[r], strides[r],
                                       runs[r].n, head_elem, hd, scale);
            else if (c->k_transposed)
                c->k->attn_scores_t[c->kv_type](scores + n, ss, q, (size_t)hd, nq, k_rows[r],
                                                lanes[r], runs[r].n, hd, scale);
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

/* The first bytes of each cached K and V head a thread's items read that it
 * prefetches while it waits for the attention region: the keys and values
 * come from memory (evicted since the last token), and reading them as
 * short cold streams was a third of a decode step's attention. TinyLlama
 * Q4_K_M decode at 16-80 positions, 2 threads on a Zen 5: the region
 * 9.0-9.7 -> 7.0-7.6 us a layer (bench/RESULTS.md). */
enum { ATTN_IDLE_BYTES = 8 << 10 };

void gl_attention_next(gl_ctx *c, int layer)
{
    /* decode rows alone in their sequence read their history from the ring
     * (kv_in_region); position-major Q8_0 rows would be many short runs */
    if (!c->kv_in_region || !head_major(c))
        return;
    const int n_kv = c->m->cfg.n_kv_heads, nth = gl_threadpool_size(c->pool);
    const bool sliding = c->m->layers && c->m->layers[layer].sliding;
    const gl_kv_run *all_runs = sliding ? c->runs_swa : c->runs;
    const int *all_n_runs = sliding ? c->n_runs_swa : c->n_runs;
    const size_t head_stride = (size_t)c->n_ctx_alloc * head_bytes(c);
    for (int ith = 0; ith < nth; ith++) {
        int per_kv, sub, i0, i1;
        attn_items(c, c->plan_nb, ith, nth, &per_kv, &sub, &i0, &i1);
        if (i0 >= i1)
            continue;
        /* the KV heads of the thread's first row, one run of each */
        const int b = i0 / (n_kv * per_kv);
        if (!row_alone(c, b) || all_n_runs[b] < 1)
            continue;
        const int h0 = i0 / per_kv % n_kv;
        const int last =
            i1 - 1 < (b + 1) * n_kv * per_kv - 1 ? i1 - 1 : (b + 1) * n_kv * per_kv - 1;
        const int h1 = last / per_kv % n_kv + 1;
        const gl_kv_run *r = &all_runs[(size_t)b * GL_MAX_RUNS];
        if (r->in_chunk)
            continue;
        const size_t layer_off = cache_off(c, c->row_seq[b], layer);
        /* transposed keys: the whole blocks holding the run's positions */
        const int lane = c->k_transposed ? r->row % GL_KT_BLOCK : 0;
        const size_t k_row = (size_t)(r->row - lane);
        const size_t v_len = (size_t)r->n * head_bytes(c);
        const size_t k_len = c->k_transposed ? kt_run_bytes(c, lane, r->n) : v_len;
        gl_threadpool_push_prefetch(
            c->pool, ith, c->v_cache + layer_off + slot_off(c, h0, (size_t)r->row),
            v_len < ATTN_IDLE_BYTES ? v_len : ATTN_IDLE_BYTES, head_stride, h1 - h0);
        gl_threadpool_push_prefetch(c->pool, ith, c->k_cache + layer_off + slot_off(c, h0, k_row),
                                    k_len < ATTN_IDLE_BYTES ? k_len : ATTN_IDLE_BYTES, head_stride,
                                    h1 - h0);
    }
}

double gl_kv_step_bytes(const gl_ctx *c, int64_t pos)
{
    const gl_config *cfg = &c->m->cfg;
    const int64_t cached = pos + 1 < c->n_ctx ? pos + 1 : c->n_ctx; /* the ring's limit */
    double positions = 0;
    for (int l = 0; l < cfg->n_layers; l++) {
        const bool sliding = c->m->layers && c->m->layers[l].sliding;
        positions += (double)(sliding && cfg->swa_window < cached ? cfg->swa_window : cached);
    }
    return 2.0 * positions * (double)c->kv_row_bytes; /* K and V */
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
