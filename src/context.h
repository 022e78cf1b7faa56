/* A context: one sequence's ring KV cache plus the scratch the forward pass
 * needs, all allocated once at creation (nothing per token). */
#ifndef GENLOOP_SRC_CONTEXT_H
#define GENLOOP_SRC_CONTEXT_H

#include <stdatomic.h>

#include "model.h"
#include "threadpool.h"

/* One forward pass: n token rows, each belonging to a sequence slot. Rows of
 * one sequence are contiguous and in order; their positions continue that
 * sequence's. Logits are wanted for out_rows (ascending), written to logits
 * as n_out rows of n_vocab. */
typedef struct gl_batch {
    const int32_t *tokens;
    const int *seq; /* per row; NULL: every row is sequence 0 */
    int n;
    const int *out_rows;
    int n_out;
    float *logits;
} gl_batch;

/* A run of attended positions stored contiguously: in the cache (rows from
 * slot `row`) or in the current chunk's own K/V (rows from chunk index). */
typedef struct gl_kv_run {
    bool in_chunk;
    int row;
    int n;
} gl_kv_run;

#define GL_MAX_RUNS 6

/* One thread's share of a parallel matrix product, in row units: [front,
 * back) packed in one word, so its owner (from the front) and thieves
 * (from the back) claim pieces with one compare-and-swap. A cache line
 * each, so owners never contend with each other. */
typedef struct gl_row_range {
    _Alignas(64) _Atomic uint64_t front_back;
} gl_row_range;

struct gl_ctx {
    gl_model *m;
    const gl_kernels *k;
    gl_threadpool *pool;
    int n_ctx;              /* slots per layer of each sequence                        */
    int n_ctx_alloc;        /* n_ctx rounded up to whole key blocks (src/attention.c)  */
    bool k_transposed;      /* keys in transposed blocks (src/attention.c)             */
    int n_keep;             /* pinned leading positions ("attention sinks")            */
    int n_batch;            /* most tokens per forward pass                            */
    int n_seq;              /* sequence slots, each with its own ring                  */
    int64_t *seq_pos;       /* [n_seq] next position of each sequence (64-bit: a ring
                             * generates for ever, past 2^31 tokens too)            */
    size_t seq_cache_bytes; /* one sequence's K (or V) cache: all layers     */
    int kv_type;            /* enum gl_kv_type                                         */
    size_t kv_elem;
    size_t kv_row_bytes;        /* one position's K (or V) for all KV heads          */
    uint8_t *k_cache, *v_cache; /* [n_seq][n_layers] of n_ctx_alloc x kv_row_bytes,
                                   head-major for F16/F32 (src/attention.c) */

    /* the batch being computed, per row */
    int *row_seq, *row_first;             /* sequence, its first row in the batch */
    int64_t *row_pos;                     /* absolute position                    */
    int *all_rows;                        /* 0, 1, ..., n_batch - 1              */
    int *row_seq_arg;                     /* gl_ctx_eval_seq's batch.seq          */
    const float **row_k_src, **row_v_src; /* K/V floats of rows stored in the
                                             attention region (src/attention.c) */
    int plan_nb;       /* rows of the batch gl_kv_plan planned                    */
    bool kv_in_region; /* rows alone in their sequence store K/V in the attention */

    /* scratch, n_batch rows each */
    float *x, *xb, *q, *kcur, *vcur, *att, *hb, *hb2;
    float *qkv;                 /* gpt2: [n_batch][3 * dim] fused projection */
    void *embd_row;             /* one GGUF row of the token embedding (unpacked) */
    uint8_t *k_chunk, *v_chunk; /* this chunk's K/V in cache format (K in
                                   transposed blocks when k_transposed) */
    void *xq;                   /* quantized activations: one region per format */
    void *xq_act[GL_ACT_COUNT]; /* n_batch rows of xq_stride[act] bytes; NULL:
                                   no weight of the model takes that format */
    size_t xq_stride[GL_ACT_COUNT];
    size_t xq_bytes_per_row; /* the sum of xq_stride[] */
    float *rope_cs;          /* [n_batch][rope_dim]: cos, sin pairs      */
    double *rope_inv_freq;   /* [rope_dim / 2]                           */
    float *scores;           /* [n_threads][group][n_ctx], group = n_heads / n_kv_heads */
    float *q16;              /* [n_threads][group][head_dim]: queries at F16 precision */
    gl_kv_run *runs;         /* [n_batch][GL_MAX_RUNS]                    */
    int *n_runs;             /* [n_batch]                                 */
    gl_kv_run *runs_swa;     /* the same for sliding-window layers (NULL: none) */
    int *n_runs_swa;
    gl_row_range *mm_ranges; /* [n_threads], matmul.c                  */
    int n_threads;
};

/* Runs a batch through the model (checks it, then calls the architecture's
 * forward pass) and advances each sequence's position. */
gl_status gl_ctx_forward(gl_ctx *c, const gl_batch *b, gl_error *err);
/* Forgets one sequence's positions. */
void gl_ctx_seq_reset(gl_ctx *c, int seq);
/* Keeps the first n positions of a sequence and forgets the rest, so the
 * next token fed goes to position n. Only exact while the ring has not
 * wrapped (every position still in the cache): false, and nothing changed,
 * otherwise. */
bool gl_ctx_seq_truncate(gl_ctx *c, int seq, int64_t n);

/* The architectures' forward passes, called by gl_ctx_forward with the row
 * tables filled in. */
gl_status gl_forward_llama(gl_ctx *c, const gl_batch *b, gl_error *err);
gl_status gl_forward_gpt2(gl_ctx *c, const gl_batch *b, gl_error *err);

/* fn(c, layer, b) for the chunk's rows b < nb: the steps between the
 * products, where a prompt's rows are independent. Split into contiguous
 * runs over the pool when the rows touch at least GL_MIN_PARALLEL_WORK
 * floats (n a row); else on the caller, outside any region (a decode
 * step's row: a region would cost more than it saves). A row's result
 * never depends on the thread that computes it. layer: the pass's own
 * layer type. */
typedef void gl_row_step(gl_ctx *c, const void *layer, int b);
void gl_each_row(gl_ctx *c, const void *layer, int nb, int n, gl_row_step *fn);

/* Up to three products sharing the input x (nb rows of n floats), run as one
 * parallel region; pass NULL for unused weights. Output rows are n_out apart. */
void gl_matmul3(gl_ctx *c, const float *x, int n, int nb, const gl_weight *w0, float *y0,
                const gl_weight *w1, float *y1, const gl_weight *w2, float *y2);
/* What a product does to its output rows on the thread that computed them,
 * right after (in its cache, and in parallel, where a step of its own
 * would run on one thread and read half the rows from the other cores):
 * softcap > 0: y = softcap * tanh(y / softcap); add_to: add_to[b *
 * add_stride + r] += y[b][r] (a residual stream). Each value's arithmetic
 * is the same as a separate step's, whichever thread computes it. */
typedef struct gl_epilogue {
    float softcap;
    float *add_to;
    size_t add_stride; /* floats */
} gl_epilogue;
/* gl_matmul3 of one product with an epilogue. */
void gl_matmul_ep(gl_ctx *c, const float *x, int n, int nb, const gl_weight *w, float *y,
                  const gl_epilogue *ep);
/* Names the weights of the product that follows the next gl_matmul3 (NULL
 * for unused ones): threads that wait, from the end of their share of the
 * next product on, prefetch the start of their share of this one. A hint
 * only: results never depend on it. */
void gl_matmul_next(gl_ctx *c, const gl_weight *w0, const gl_weight *w1, const gl_weight *w2);

/* Ring KV cache and attention (src/attention.c). Plans which positions each
 * row of the batch attends to: every layer's, and a sliding-window layer's
 * (the latest cfg.swa_window positions of those). A sliding layer keeps a
 * full-size ring; it just reads less of it. */
void gl_kv_plan(gl_ctx *c, int nb);
/* Converts n floats to the cache's storage type. */
void gl_kv_to_cache_format(const gl_ctx *c, uint8_t *dst, const float *src, int n);
/* Puts batch row b's K and V (kv_dim floats each) into the chunk scratch,
 * in the cache's storage type and layout. */
void gl_kv_chunk_put(gl_ctx *c, int b, const float *k, const float *v);
/* Attention for every (token, head) of the chunk, the query heads of a KV
 * head together: reads c->q, c->k_chunk, c->v_chunk and the ring; writes
 * c->att. */
void gl_attention(gl_ctx *c, int layer, int nb);
/* Names to the pool what each thread's share of a layer's attention reads
 * from the cache (gl_threadpool_push_prefetch): call after gl_matmul_next. */
void gl_attention_next(gl_ctx *c, int layer);
/* The bytes of cached keys and values a decode step of one sequence at
 * position pos reads over every layer (its own position included; a
 * sliding layer's window, the ring's size): with the weights, what a
 * decode step reads from memory. */
double gl_kv_step_bytes(const gl_ctx *c, int64_t pos);
/* Copies the batch's K/V rows into their sequences' ring slots. */
void gl_kv_store_chunk(gl_ctx *c, int layer, int nb);

#endif
