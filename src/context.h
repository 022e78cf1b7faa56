/* A context: one sequence's ring KV cache plus the scratch the forward pass
 * needs, all allocated once at creation (nothing per token). */
#ifndef GENLOOP_SRC_CONTEXT_H
#define GENLOOP_SRC_CONTEXT_H

#include "model.h"
#include "threadpool.h"

/* A run of attended positions stored contiguously: in the cache (rows from
 * slot `row`) or in the current chunk's own K/V (rows from chunk index). */
typedef struct gl_kv_run {
    bool in_chunk;
    int row;
    int n;
} gl_kv_run;

#define GL_MAX_RUNS 6

struct gl_ctx {
    gl_model *m;
    const gl_kernels *k;
    gl_threadpool *pool;
    int n_ctx;    /* slots per layer                                         */
    int n_keep;   /* pinned leading positions ("attention sinks")            */
    int n_batch;  /* most tokens per forward pass                            */
    int pos;      /* next position                                           */
    int kv_type;  /* enum gl_kv_type                                         */
    size_t kv_elem;
    size_t kv_row_bytes; /* one position's K (or V) for all KV heads          */
    uint8_t *k_cache, *v_cache; /* [n_layers][n_ctx][kv_row_bytes]            */

    /* scratch, n_batch rows each */
    float *x, *xb, *q, *kcur, *vcur, *att, *hb, *hb2;
    float *qkv;                 /* gpt2: [n_batch][3 * dim] fused projection */
    uint8_t *k_chunk, *v_chunk; /* this chunk's K/V in cache format        */
    void *xq;                   /* quantized activations                    */
    size_t xq_stride;
    float *rope_cs;             /* [n_batch][rope_dim]: cos, sin pairs      */
    double *rope_inv_freq;      /* [rope_dim / 2]                           */
    float *scores;              /* [n_threads][n_ctx]                       */
    float *q16;                 /* [n_threads][head_dim]: query at F16 precision */
    gl_kv_run *runs;            /* [n_batch][GL_MAX_RUNS]                    */
    int *n_runs;                /* [n_batch]                                 */
    int n_threads;
};

/* Runs the transformer over nb tokens at positions c->pos...; writes n_vocab
 * logits for rows first_row..nb-1 into logits and advances c->pos. */
gl_status gl_forward_llama(gl_ctx *c, const int32_t *tokens, int nb, float *logits, int first_row,
                           gl_error *err);

/* The gpt2 forward pass (src/forward_gpt2.c), same contract; positions
 * must stay below the model's learned positions. */
gl_status gl_forward_gpt2(gl_ctx *c, const int32_t *tokens, int nb, float *logits, int first_row,
                          gl_error *err);

/* Up to three products sharing the input x (nb rows of n floats), run as one
 * parallel region; pass NULL for unused weights. Output rows are n_out apart. */
void gl_matmul3(gl_ctx *c, const float *x, int n, int nb, const gl_weight *w0, float *y0,
                const gl_weight *w1, float *y1, const gl_weight *w2, float *y2);

/* Ring KV cache and attention (src/attention.c). */
void gl_kv_plan(gl_ctx *c, int pos0, int nb);
/* Converts n floats to the cache's storage type. */
void gl_kv_to_cache_format(const gl_ctx *c, uint8_t *dst, const float *src, int n);
/* Attention for every (token, head) of the chunk: reads c->q, c->k_chunk,
 * c->v_chunk and the ring; writes c->att. */
void gl_attention(gl_ctx *c, int layer, int nb);
/* Copies the chunk's K/V rows into their ring slots. */
void gl_kv_store_chunk(gl_ctx *c, int layer, int pos0, int nb);

#endif
