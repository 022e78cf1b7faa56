/* A loaded model: hyperparameters (Config), weights pointing into the
 * mapped file (Weights), the tokenizer and the kernel table. */
#ifndef GENLOOP_SRC_MODEL_H
#define GENLOOP_SRC_MODEL_H

#include "genloop.h"
#include "gguf.h"
#include "kernels.h"

struct gl_tokenizer;
struct gl_ctx;

/* An architecture's forward pass over a batch (see gl_batch in context.h). */
struct gl_batch;
typedef gl_status (*gl_forward_fn)(struct gl_ctx *c, const struct gl_batch *b, gl_error *err);

#define GL_MAX_LAYERS 512

/* A weight matrix: n_out rows of n_in elements, stored as GGUF packs them
 * (layout GL_LAYOUT_PLAIN: data in the mapped file, rows row_bytes apart)
 * or, after gl_model_repack, in a load-time layout (data in the model's
 * repack arena, row groups group_bytes apart; row_bytes still describes
 * the GGUF rows). */
typedef struct gl_weight {
    const void *data;
    uint32_t type;
    int n_in, n_out;
    size_t row_bytes;
    uint8_t layout;     /* enum gl_layout */
    size_t group_bytes; /* packed layouts: bytes per row group */
} gl_weight;

/* One decoder layer. Every family binds into this one struct; a piece a
 * family does not have is NULL (vectors) or left out of the math by its
 * trait (see gl_config). Fused files (phi3's attn_qkv and [gate; up]
 * ffn_up) bind as row views of the fused matrix, so the forward pass never
 * knows the difference. */
typedef struct gl_layer {
    const float *attn_norm;       /* (dim)                                  */
    gl_weight wq;                 /* dim -> n_heads * head_dim              */
    gl_weight wk;                 /* dim -> n_kv_heads * head_dim           */
    gl_weight wv;                 /* dim -> n_kv_heads * head_dim           */
    const float *bq, *bk, *bv;    /* Q/K/V biases (qwen2), or NULL          */
    const float *q_norm, *k_norm; /* (head_dim) per-head RMSNorm (qwen3)   */
    gl_weight wo;                 /* n_heads * head_dim -> dim              */
    const float *post_attn_norm;  /* (dim) norm of the attention output (gemma2) */
    const float *ffn_norm;        /* (dim)                                  */
    gl_weight w_gate;             /* dim -> ffn_dim                         */
    gl_weight w_up;               /* dim -> ffn_dim                         */
    gl_weight w_down;             /* ffn_dim -> dim                         */
    const float *post_ffn_norm;   /* (dim) norm of the FFN output (gemma2)  */
    bool sliding;                 /* attends to the last cfg.swa_window positions only */
} gl_layer;

/* A GPT-2 block: LayerNorms with bias, fused QKV, GELU MLP, all biased. */
typedef struct gl_gpt2_layer {
    const float *attn_norm, *attn_norm_b; /* (dim)                        */
    gl_weight wqkv;                       /* dim -> 3 * dim: q, k, v rows */
    const float *bqkv;                    /* (3 * dim)                    */
    gl_weight wo;                         /* dim -> dim                   */
    const float *bo;                      /* (dim)                        */
    const float *ffn_norm, *ffn_norm_b;   /* (dim)                        */
    gl_weight w_up;                       /* dim -> ffn_dim               */
    const float *b_up;                    /* (ffn_dim)                    */
    gl_weight w_down;                     /* ffn_dim -> dim               */
    const float *b_down;                  /* (dim)                        */
} gl_gpt2_layer;

/* How a family rotates: adjacent pairs (x[2i], x[2i+1]) or the two halves
 * (x[i], x[i + rope_dim/2]), "NEOX" in GGUF's vocabulary. */
enum gl_rope_style { GL_ROPE_NORM = 0, GL_ROPE_NEOX };
/* The gated FFN's activation: silu(gate) * up, or tanh-GELU(gate) * up. */
enum gl_ffn_act { GL_FFN_SWIGLU = 0, GL_FFN_GEGLU };

typedef struct gl_config {
    int dim, n_layers, n_heads, n_kv_heads, head_dim, ffn_dim, n_vocab, n_ctx_train;
    int rope_dim; /* leading dims of each head that RoPE rotates */
    float norm_eps;
    float rope_freq_base;
    float rope_freq_scale; /* positions are multiplied by this (linear scaling) */
    int n_pos_learned;     /* learned absolute positions (gpt2: position_embd
                            * rows); positions must stay below it. 0: none */
    /* decoder traits (src/model_decoder.c fills them per family) */
    uint8_t rope_style;  /* enum gl_rope_style */
    uint8_t ffn_act;     /* enum gl_ffn_act */
    bool q_prescale;     /* queries are multiplied by attn_scale before they meet
                          * the keys (gemma2, phi3), not the scores after */
    float attn_scale;    /* score scale, usually 1/sqrt(head_dim) */
    float embd_scale;    /* token embeddings are multiplied by this (gemma: sqrt(dim)) */
    float attn_softcap;  /* scores become cap * tanh(score / cap); 0: off */
    float final_softcap; /* the same for the logits; 0: off */
    int swa_window;      /* a sliding layer attends to this many latest positions */
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
    gl_weight output;      /* dim -> n_vocab (tied: tok_embd) */
    bool output_tied;      /* output is the embedding table: repacked on its own for the
                              product, tok_embd's file rows stay for the row lookups */
    bool embd_from_output; /* tied, and the output's copy in a packed layout: the
                              row lookups unpack its rows (src/repack.c) */
    gl_layer *layers;
    const float *rope_freqs; /* (rope_dim / 2) per-frequency divisors (Llama 3.1
                              * rope_freqs.weight), or NULL */
    uint8_t *tensor_used;    /* while binding: 1 per GGUF tensor bound */
    /* gpt2 only (NULL / zero otherwise) */
    gl_gpt2_layer *gpt2_layers;
    gl_weight pos_embd; /* n_pos_learned rows of dim */
    const float *output_norm_b;
    struct gl_tokenizer *tok;
    gl_forward_fn forward;
    gl_kernels k;
    uint32_t act_mask;      /* 1 << enum gl_act of every bound weight's activation format */
    void *repack_arena;     /* owned: every repacked or copied matrix (src/repack.c) */
    size_t repack_bytes;    /* of those repacked into a kernel layout */
    size_t copied_bytes;    /* of those copied as they are (huge pages only) */
    char load_warning[200]; /* "" or what loading left slower than it could (repack.c) */
};

/* Loading helpers shared by the architectures (src/model.c). */

/* Reads "<arch>.<suffix>" as an integer in [lo, hi] (def when absent and
 * not required). */
gl_status gl_meta_int(const gl_model *m, const char *suffix, bool required, int64_t def, int64_t lo,
                      int64_t hi, int *out, gl_error *err);
/* Reads "<arch>.<suffix>" as a float in [lo, hi] (def when absent). */
gl_status gl_meta_float(const gl_model *m, const char *suffix, float def, float lo, float hi,
                        float *out, gl_error *err);
/* Binds matrix `name` of shape [n_in, n_out] in a type the kernels can
 * multiply; optional: a missing tensor leaves w zeroed. */
gl_status gl_bind_weight(gl_model *m, gl_weight *w, const char *name, int n_in, int n_out,
                         bool optional, gl_error *err);
/* Binds F32 vector `name` of n elements. */
gl_status gl_bind_vector(gl_model *m, const float **out, const char *name, int n, gl_error *err);

/* Rewrites every matrix the kernel table can repack (k.repack) into its
 * packed layout, in one owned arena, and drops the file pages it came
 * from. Called once at the end of loading; GENLOOP_REPACK=0 disables it.
 * The token embedding, read by row, keeps its GGUF layout; its rows come
 * from the file, or from the output's copy when tied (embd_from_output).
 * (src/repack.c) */
gl_status gl_model_repack(gl_model *m, gl_error *err);

/* Row `token` (checked by the caller) of the token embedding, dim floats,
 * into x; scratch holds one GGUF row of it (tok_embd.row_bytes). */
void gl_model_embed_row(const gl_model *m, const gl_kernels *k, int token, float *x, void *scratch);

/* Binds a llama-like decoder (llama, mistral, qwen2, qwen3, gemma2, phi3):
 * the family's traits, hyperparameters and tensors (src/model_decoder.c).
 * Fails naming the supported architectures when m->arch is none of them. */
gl_status gl_bind_decoder(gl_model *m, gl_error *err);
/* The architectures genloop runs, comma separated, for error messages. */
const char *gl_supported_archs(void);

/* Binds a gpt2 model's hyperparameters and tensors (src/model_gpt2.c). */
gl_status gl_bind_gpt2(gl_model *m, gl_error *err);

#endif
