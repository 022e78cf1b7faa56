/* A loaded model: hyperparameters (Config), weights pointing into the
 * mapped file (Weights), the tokenizer and the kernel table. */
#ifndef GENLOOP_SRC_MODEL_H
#define GENLOOP_SRC_MODEL_H

#include "genloop.h"
#include "gguf.h"
#include "kernels.h"

struct gl_tokenizer;
struct gl_ctx;

/* An architecture's forward pass: nb tokens at c->pos.., logits for rows
 * first_row..nb-1, then c->pos += nb. */
typedef gl_status (*gl_forward_fn)(struct gl_ctx *c, const int32_t *tokens, int nb,
                                   float *logits, int first_row, gl_error *err);

#define GL_MAX_LAYERS 512

/* A weight matrix: n_out rows of n_in elements, stored as GGUF packs them. */
typedef struct gl_weight {
    const void *data;
    uint32_t type;
    int n_in, n_out;
    size_t row_bytes;
} gl_weight;

typedef struct gl_layer {
    const float *attn_norm; /* (dim)                            */
    gl_weight wq;           /* dim -> n_heads * head_dim        */
    gl_weight wk;           /* dim -> n_kv_heads * head_dim     */
    gl_weight wv;           /* dim -> n_kv_heads * head_dim     */
    gl_weight wo;           /* n_heads * head_dim -> dim        */
    const float *ffn_norm;  /* (dim)                            */
    gl_weight w_gate;       /* dim -> ffn_dim                   */
    gl_weight w_up;         /* dim -> ffn_dim                   */
    gl_weight w_down;       /* ffn_dim -> dim                   */
} gl_layer;

typedef struct gl_config {
    int dim, n_layers, n_heads, n_kv_heads, head_dim, ffn_dim, n_vocab, n_ctx_train;
    int rope_dim;          /* leading dims of each head that RoPE rotates */
    float norm_eps;
    float rope_freq_base;
    float rope_freq_scale; /* positions are multiplied by this (linear scaling) */
} gl_config;

struct gl_model {
    gl_mapping map;
    gguf_file gguf;
    char arch[64];
    char name[128];
    gl_config cfg;
    bool has_weights;
    gl_weight tok_embd; /* n_vocab rows of dim */
    const float *output_norm;
    gl_weight output;   /* dim -> n_vocab (tied: tok_embd) */
    gl_layer *layers;
    struct gl_tokenizer *tok;
    gl_forward_fn forward;
    gl_kernels k;
};

#endif
