/* Context lifetime: every buffer the forward pass touches is allocated
 * here, once, sized for n_batch tokens. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "error.h"
#include "hugemem.h"

gl_ctx_params gl_ctx_default_params(void)
{
    return (gl_ctx_params){ .n_ctx = 0, .n_threads = 0, .n_batch = 0, .n_seq = 1 };
}

/* size = a * b * c bytes, or 0 on overflow */
static size_t mul3(size_t a, size_t b, size_t c)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_mul_overflow(r, c, &r))
        return 0;
    return r;
}

/* Fails up front, naming the bytes needed, when the KV cache and scratch of
 * a context cannot fit in physical memory: better than an allocation that
 * succeeds (overcommit) and an OOM kill later. All terms fit in 64 bits:
 * dims <= 2^20, n_batch <= 4096, n_ctx <= 2^24, threads <= 2^16. */
static gl_status check_memory(const gl_config *cfg, const gl_ctx_params *p, size_t kv_row_bytes,
                              size_t xq_stride, gl_error *err)
{
    const uint64_t nb = (uint64_t)p->n_batch, dim = (uint64_t)cfg->dim;
    const uint64_t q_dim = (uint64_t)cfg->n_heads * (uint64_t)cfg->head_dim;
    const uint64_t kv_dim = (uint64_t)cfg->n_kv_heads * (uint64_t)cfg->head_dim;
    const uint64_t group = (uint64_t)(cfg->n_heads / cfg->n_kv_heads);
    const uint64_t kv = 2 * (uint64_t)p->n_seq * (uint64_t)cfg->n_layers *
                        (((uint64_t)p->n_ctx + GL_KT_BLOCK - 1) / GL_KT_BLOCK * GL_KT_BLOCK) *
                        kv_row_bytes;
    const uint64_t scratch =
        nb * (5 * dim + 2 * q_dim + 2 * kv_dim + 2 * (uint64_t)cfg->ffn_dim) * sizeof(float) +
        2 * (nb + GL_KT_BLOCK) * kv_row_bytes + nb * xq_stride +
        (uint64_t)p->n_threads * group * ((uint64_t)p->n_ctx + (uint64_t)cfg->head_dim) *
            sizeof(float);
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return GL_OK; /* unknown: let the allocations decide */
    const uint64_t phys = (uint64_t)pages * (uint64_t)page;
    if (kv + scratch > phys)
        return gl_fail(err, GL_ERR_NOMEM,
                       "a context of %d positions needs %llu bytes (KV cache "
                       "%llu + scratch %llu), more than this machine's %llu bytes of physical "
                       "memory: lower -c",
                       p->n_ctx, (unsigned long long)(kv + scratch), (unsigned long long)kv,
                       (unsigned long long)scratch, (unsigned long long)phys);
    return GL_OK;
}

int gl_cache_type_from_name(const char *name)
{
    if (!strcmp(name, "f16"))
        return GL_CACHE_F16;
    if (!strcmp(name, "f32"))
        return GL_CACHE_F32;
    if (!strcmp(name, "q8_0"))
        return GL_CACHE_Q8_0;
    return -1;
}

gl_status gl_ctx_create(gl_ctx **out, gl_model *m, const gl_ctx_params *params, gl_error *err)
{
    *out = NULL;
    if (!m->has_weights)
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "the model file has no weights (a vocabulary-only GGUF): it can tokenize "
                       "but not generate");
    gl_ctx_params p = params ? *params : gl_ctx_default_params();
    const gl_config *cfg = &m->cfg;
    if (p.n_ctx < 0 || p.n_threads < 0 || p.n_batch < 0 || p.n_keep < 0 || p.n_seq < 0)
        return gl_fail(err, GL_ERR_ARG, "negative context parameter");
    if (p.n_seq == 0)
        p.n_seq = 1;
    if (p.n_seq > 4096)
        return gl_fail(err, GL_ERR_ARG, "%d sequences is too many (at most 4096)", p.n_seq);
    if (p.n_ctx == 0)
        p.n_ctx = cfg->n_ctx_train;
    if (p.n_ctx > (1 << 24))
        return gl_fail(err, GL_ERR_ARG, "context size %d is too large (at most %d)", p.n_ctx,
                       1 << 24);
    if (p.n_keep >= p.n_ctx)
        return gl_fail(err, GL_ERR_ARG, "--keep %d must be smaller than the context size %d",
                       p.n_keep, p.n_ctx);
    if (p.n_threads == 0)
        p.n_threads = gl_physical_cores();
    if (p.n_batch == 0)
        p.n_batch = 512;
    if (p.n_batch > 4096)
        return gl_fail(err, GL_ERR_ARG, "n_batch %d is too large (at most 4096 tokens per pass)",
                       p.n_batch);

    gl_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    c->m = m;
    c->k = &m->k;
    c->n_ctx = p.n_ctx;
    c->n_keep = p.n_keep;
    c->n_batch = p.n_batch;
    c->n_threads = p.n_threads;
    c->n_seq = p.n_seq;
    switch (p.cache_type) {
    case GL_CACHE_F16:
        c->kv_type = GL_KV_F16;
        c->kv_elem = 2;
        break;
    case GL_CACHE_F32:
        c->kv_type = GL_KV_F32;
        c->kv_elem = 4;
        break;
    case GL_CACHE_Q8_0:
        c->kv_type = GL_KV_Q8_0;
        c->kv_elem = 0;
        break;
    default: free(c); return gl_fail(err, GL_ERR_ARG, "unknown cache type %d", p.cache_type);
    }

    const size_t nb = (size_t)p.n_batch, dim = (size_t)cfg->dim;
    const size_t hd = (size_t)cfg->head_dim;
    const size_t q_dim = (size_t)cfg->n_heads * hd, kv_dim = (size_t)cfg->n_kv_heads * hd;
    const size_t ffn = (size_t)cfg->ffn_dim;
    const size_t max_in = ffn > q_dim ? (ffn > dim ? ffn : dim) : (q_dim > dim ? q_dim : dim);
    if (c->kv_type == GL_KV_Q8_0 && kv_dim % QK8_0 != 0) {
        free(c);
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "a Q8_0 KV cache needs the KV width (%zu = %d "
                       "heads x %zu) to be a multiple of 32",
                       kv_dim, cfg->n_kv_heads, hd);
    }
    c->kv_row_bytes =
        c->kv_type == GL_KV_Q8_0 ? kv_dim / QK8_0 * sizeof(block_q8_0) : kv_dim * c->kv_elem;
    c->n_ctx_alloc = (p.n_ctx + GL_KT_BLOCK - 1) / GL_KT_BLOCK * GL_KT_BLOCK;
    c->k_transposed = c->kv_type != GL_KV_Q8_0 && cfg->n_heads / cfg->n_kv_heads >= GL_KT_MIN_GROUP;
    c->seq_cache_bytes = mul3((size_t)cfg->n_layers, (size_t)c->n_ctx_alloc, c->kv_row_bytes);
    const size_t cache_bytes = mul3(c->seq_cache_bytes, (size_t)p.n_seq, 1);
    /* one activation row per format the model's weights take, wide enough
     * for the widest product input (rounded up to the format's block) */
    c->xq_bytes_per_row = 0;
    for (int a = GL_ACT_Q8_0; a < GL_ACT_COUNT; a++) {
        if (!(m->act_mask & 1u << a))
            continue;
        const size_t blk = a == GL_ACT_Q8_K ? QK_K : QK8_0;
        c->xq_stride[a] = gl_act_row_bytes(a, (int)((max_in + blk - 1) / blk * blk));
        c->xq_bytes_per_row += c->xq_stride[a];
    }

    gl_status st = check_memory(cfg, &p, c->kv_row_bytes, c->xq_bytes_per_row, err);
    if (st) {
        free(c);
        return st;
    }
    st = gl_threadpool_create(&c->pool, p.n_threads, err);
    if (st) {
        free(c);
        return st;
    }
    if (!cache_bytes || !(c->k_cache = gl_alloc_huge(cache_bytes)) ||
        !(c->v_cache = gl_alloc_huge(cache_bytes))) {
        gl_ctx_free(c);
        return gl_fail(err, GL_ERR_NOMEM,
                       "cannot allocate the KV cache for %d positions: %llu bytes needed", p.n_ctx,
                       2ull * (unsigned long long)cache_bytes);
    }
    c->x = malloc(nb * dim * sizeof(float));
    c->xb = malloc(nb * dim * sizeof(float));
    c->q = malloc(nb * q_dim * sizeof(float));
    c->kcur = malloc(nb * kv_dim * sizeof(float));
    c->vcur = malloc(nb * kv_dim * sizeof(float));
    c->att = malloc(nb * q_dim * sizeof(float));
    c->hb = malloc(nb * ffn * sizeof(float));
    c->hb2 = malloc(nb * ffn * sizeof(float));
    /* K in whole transposed blocks (src/attention.c); zeroed, so the lanes
     * past the batch's rows hold finite values */
    c->k_chunk = calloc((nb + GL_KT_BLOCK - 1) / GL_KT_BLOCK * GL_KT_BLOCK, c->kv_row_bytes);
    c->v_chunk = malloc(nb * c->kv_row_bytes);
    c->xq = malloc(nb * c->xq_bytes_per_row + 1);
    for (int a = GL_ACT_Q8_0, off = 0; c->xq && a < GL_ACT_COUNT; a++) {
        if (!c->xq_stride[a])
            continue;
        c->xq_act[a] = (char *)c->xq + nb * (size_t)off;
        off += (int)c->xq_stride[a];
    }
    /* (+1: gpt2 has no RoPE, and malloc(0) may return NULL) */
    c->rope_cs = malloc((nb * (size_t)cfg->rope_dim + 1) * sizeof(float));
    c->rope_inv_freq = malloc(((size_t)cfg->rope_dim / 2 + 1) * sizeof(double));
    if (m->gpt2_layers)
        c->qkv = malloc(nb * 3 * dim * sizeof(float));
    c->embd_row = malloc(m->tok_embd.row_bytes + 1);
    /* attention scratch per thread: one KV head's group of query heads */
    const size_t group = (size_t)(cfg->n_heads / cfg->n_kv_heads);
    c->scores = malloc((size_t)p.n_threads * group * (size_t)p.n_ctx * sizeof(float));
    c->q16 = malloc((size_t)p.n_threads * group * hd * sizeof(float));
    c->seq_pos = calloc((size_t)p.n_seq, sizeof *c->seq_pos);
    c->all_rows = malloc(nb * sizeof(int));
    c->row_seq_arg = malloc(nb * sizeof(int));
    c->row_seq = malloc(nb * sizeof(int));
    c->row_pos = malloc(nb * sizeof *c->row_pos);
    c->row_first = malloc(nb * sizeof(int));
    c->row_k_src = malloc(nb * sizeof *c->row_k_src);
    c->row_v_src = malloc(nb * sizeof *c->row_v_src);
    c->runs = malloc(nb * GL_MAX_RUNS * sizeof(gl_kv_run));
    c->n_runs = malloc(nb * sizeof(int));
    const bool any_sliding = m->layers && cfg->swa_window > 0;
    if (any_sliding) {
        c->runs_swa = malloc(nb * GL_MAX_RUNS * sizeof(gl_kv_run));
        c->n_runs_swa = malloc(nb * sizeof(int));
    }
    c->mm_ranges =
        aligned_alloc(_Alignof(gl_row_range), (size_t)p.n_threads * sizeof(gl_row_range));
    if (!c->x || !c->xb || !c->q || !c->kcur || !c->vcur || !c->att || !c->hb || !c->hb2 ||
        !c->k_chunk || !c->v_chunk || !c->xq || !c->rope_cs || !c->rope_inv_freq || !c->scores ||
        !c->q16 || !c->runs || !c->n_runs || !c->seq_pos || !c->all_rows || !c->row_seq_arg ||
        !c->row_seq || !c->row_pos || !c->row_first || !c->row_k_src || !c->row_v_src ||
        !c->mm_ranges || !c->embd_row || (m->gpt2_layers && !c->qkv) ||
        (any_sliding && (!c->runs_swa || !c->n_runs_swa))) {
        gl_ctx_free(c);
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for the context's scratch buffers");
    }
    for (int i = 0; i < p.n_batch; i++)
        c->all_rows[i] = i;
    /* theta_i = base^(-2i / rope_dim), divided by Llama 3.1's per-frequency
     * factor when the model has them */
    for (int i = 0; i < cfg->rope_dim / 2; i++)
        c->rope_inv_freq[i] = pow((double)cfg->rope_freq_base, -2.0 * i / cfg->rope_dim) /
                              (m->rope_freqs ? (double)m->rope_freqs[i] : 1.0);
    *out = c;
    return GL_OK;
}

void gl_ctx_free(gl_ctx *c)
{
    if (!c)
        return;
    gl_threadpool_free(c->pool);
    free(c->k_cache);
    free(c->v_cache);
    free(c->x);
    free(c->xb);
    free(c->q);
    free(c->kcur);
    free(c->vcur);
    free(c->att);
    free(c->hb);
    free(c->hb2);
    free(c->embd_row);
    free(c->qkv);
    free(c->k_chunk);
    free(c->v_chunk);
    free(c->xq);
    free(c->rope_cs);
    free(c->rope_inv_freq);
    free(c->scores);
    free(c->q16);
    free(c->seq_pos);
    free(c->all_rows);
    free(c->row_seq_arg);
    free(c->mm_ranges);
    free(c->row_seq);
    free(c->row_pos);
    free(c->row_first);
    free(c->row_k_src);
    free(c->row_v_src);
    free(c->runs);
    free(c->n_runs);
    free(c->runs_swa);
    free(c->n_runs_swa);
    free(c);
}

int gl_ctx_n_ctx(const gl_ctx *c)
{
    return c->n_ctx;
}

uint64_t gl_ctx_kv_bytes(const gl_ctx *c)
{
    return 2ull * (uint64_t)c->n_seq * (uint64_t)c->seq_cache_bytes;
}

int gl_ctx_n_threads(const gl_ctx *c)
{
    return c->n_threads;
}

int64_t gl_ctx_pos(const gl_ctx *c)
{
    return c->seq_pos[0];
}

void gl_ctx_reset(gl_ctx *c)
{
    for (int s = 0; s < c->n_seq; s++)
        c->seq_pos[s] = 0;
}

void gl_ctx_seq_reset(gl_ctx *c, int seq)
{
    c->seq_pos[seq] = 0;
}

bool gl_ctx_seq_truncate(gl_ctx *c, int seq, int64_t n)
{
    if (n < 0 || n > c->seq_pos[seq] || c->seq_pos[seq] > c->n_ctx)
        return false;
    c->seq_pos[seq] = n;
    return true;
}

gl_status gl_ctx_forward(gl_ctx *c, const gl_batch *b, gl_error *err)
{
    const int n_vocab = c->m->cfg.n_vocab;
    if (b->n < 1 || b->n > c->n_batch)
        return gl_fail(err, GL_ERR_ARG, "a batch of %d tokens (this context takes 1 to %d)", b->n,
                       c->n_batch);
    for (int i = 0; i < b->n; i++) {
        const int s = b->seq ? b->seq[i] : 0;
        if (s < 0 || s >= c->n_seq)
            return gl_fail(err, GL_ERR_ARG, "sequence %d is out of range [0, %d)", s, c->n_seq);
        if (b->tokens[i] < 0 || b->tokens[i] >= n_vocab)
            return gl_fail(err, GL_ERR_ARG, "token id %d is out of range [0, %d)", b->tokens[i],
                           n_vocab);
        const bool starts = i == 0 || c->row_seq[i - 1] != s;
        if (starts)
            for (int j = 0; j < i; j++)
                if (c->row_seq[j] == s)
                    return gl_fail(err, GL_ERR_ARG, "sequence %d's rows are not contiguous", s);
        c->row_seq[i] = s;
        c->row_first[i] = starts ? i : c->row_first[i - 1];
        if (c->seq_pos[s] > INT64_MAX - b->n) /* ~3e5 years at 1M tokens/s */
            return gl_fail(err, GL_ERR_ARG, "sequence %d has run out of positions", s);
        c->row_pos[i] = c->seq_pos[s] + (i - c->row_first[i]);
    }
    for (int i = 0; i < b->n_out; i++)
        if (b->out_rows[i] < 0 || b->out_rows[i] >= b->n ||
            (i > 0 && b->out_rows[i] <= b->out_rows[i - 1]))
            return gl_fail(err, GL_ERR_ARG, "logit rows must be ascending batch rows");
    const int n_pos = c->m->cfg.n_pos_learned;
    for (int i = 0; i < b->n; i++)
        if (n_pos > 0 && c->row_pos[i] >= n_pos)
            return gl_fail(err, GL_ERR_ARG,
                           "position %lld is past the %d positions '%s' has "
                           "learned (position_embd): reset the context or crop the history",
                           (long long)c->row_pos[i], n_pos, c->m->arch);
    gl_status st = c->m->forward(c, b, err);
    if (st)
        return st;
    for (int i = 0; i < b->n; i++)
        c->seq_pos[c->row_seq[i]]++;
    return GL_OK;
}

int gl_ctx_n_seq(const gl_ctx *c)
{
    return c->n_seq;
}

int64_t gl_ctx_seq_pos(const gl_ctx *c, int seq)
{
    return seq >= 0 && seq < c->n_seq ? c->seq_pos[seq] : -1;
}

gl_status gl_ctx_reset_seq(gl_ctx *c, int seq, gl_error *err)
{
    if (seq < 0 || seq >= c->n_seq)
        return gl_fail(err, GL_ERR_ARG, "sequence %d is out of range [0, %d)", seq, c->n_seq);
    gl_ctx_seq_reset(c, seq);
    return GL_OK;
}

gl_status gl_ctx_eval(gl_ctx *c, const int32_t *tokens, int n, float *logits, bool all_logits,
                      gl_error *err)
{
    return gl_ctx_eval_seq(c, 0, tokens, n, logits, all_logits, err);
}

gl_status gl_ctx_eval_seq(gl_ctx *c, int seq, const int32_t *tokens, int n, float *logits,
                          bool all_logits, gl_error *err)
{
    if (n < 0)
        return gl_fail(err, GL_ERR_ARG, "negative token count");
    if (seq < 0 || seq >= c->n_seq)
        return gl_fail(err, GL_ERR_ARG, "sequence %d is out of range [0, %d)", seq, c->n_seq);
    const int n_pos = c->m->cfg.n_pos_learned;
    if (n_pos > 0 && n > n_pos - c->seq_pos[seq])
        return gl_fail(err, GL_ERR_ARG,
                       "positions %lld..%lld are past the %d positions '%s' has "
                       "learned (position_embd): reset the context or crop the history",
                       (long long)c->seq_pos[seq], (long long)(c->seq_pos[seq] + n - 1), n_pos,
                       c->m->arch);
    const size_t n_vocab = (size_t)c->m->cfg.n_vocab;
    /* every row of the pass is this sequence (the row tables are n_batch long) */
    for (int i = 0; i < c->n_batch && i < n; i++)
        c->row_seq_arg[i] = seq;
    for (int done = 0; done < n;) {
        const int nb = n - done < c->n_batch ? n - done : c->n_batch;
        const bool last = done + nb == n;
        gl_batch b = { .tokens = tokens + done,
                       .seq = seq ? c->row_seq_arg : NULL,
                       .n = nb,
                       .out_rows = c->all_rows };
        if (logits && all_logits) {
            b.logits = logits + (size_t)done * n_vocab;
            b.n_out = nb;
        } else if (logits && last) {
            b.logits = logits;
            b.out_rows = c->all_rows + nb - 1;
            b.n_out = 1;
        }
        gl_status st = gl_ctx_forward(c, &b, err);
        if (st)
            return st;
        done += nb;
    }
    return GL_OK;
}

typedef struct row_task {
    gl_ctx *c;
    const void *layer;
    gl_row_step *fn;
    int nb;
} row_task;

static void row_worker(void *arg, int ith, int nth)
{
    const row_task *t = arg;
    int b0, b1;
    gl_split_range(t->nb, 1, ith, nth, &b0, &b1);
    for (int b = b0; b < b1; b++)
        t->fn(t->c, t->layer, b);
}

void gl_each_row(gl_ctx *c, const void *layer, int nb, int n, gl_row_step *fn)
{
    row_task t = { .c = c, .layer = layer, .fn = fn, .nb = nb };
    if ((double)nb * n >= GL_MIN_PARALLEL_WORK)
        gl_threadpool_run(c->pool, row_worker, &t);
    else
        row_worker(&t, 0, 1);
}
