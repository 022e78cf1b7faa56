/* Quantization mixes: which tensor gets which type for a target such as
 * Q4_K_M, following the rules of GGUF's reference quantizer (higher types
 * for output.weight, attn_v, ffn_down on the "more bits" layers, ...,
 * fallbacks for rows that are not a multiple of the block, 1-D tensors and
 * norms left alone). Pure: all state is in the caller's gl_qmix_state. */
#ifndef GENLOOP_SRC_QUANT_MIX_H
#define GENLOOP_SRC_QUANT_MIX_H

#include <stdbool.h>
#include <stdint.h>

/* A --type target. */
typedef struct gl_qmix {
    const char *name; /* lower case, as the command line spells it */
    int ftype;        /* general.file_type (the reference's llama_ftype) */
    uint32_t base;    /* the type most tensors get (enum gguf_ttype)     */
} gl_qmix;

/* Looks up a target name, case-insensitive: q8_0 q4_0 q4_1 q5_0 q5_1 q2_k
 * q3_k_s q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m q6_k iq4_nl iq4_xs, and
 * f32 f16 bf16. NULL when unknown. */
const gl_qmix *gl_qmix_find(const char *name);
/* "q8_0, q4_0, ..." for messages and usage text. */
const char *gl_qmix_names(void);
/* A single tensor type by name (f32 f16 bf16 q8_0 ... q6_k iq4_nl iq4_xs),
 * case-insensitive, for --output-type and friends; -1 when unknown. */
int gl_qmix_tensor_type_by_name(const char *name);

/* What the rules need to know about the model. */
typedef struct gl_qmix_model {
    const char *arch;   /* general.architecture                          */
    int n_layer;        /* <arch>.block_count                            */
    int n_head;         /* <arch>.attention.head_count                   */
    int n_head_kv;      /* <arch>.attention.head_count_kv (0: = n_head)  */
    int n_expert;       /* <arch>.expert_count (0 when absent)           */
    int n_attention_wv; /* tensors named *attn_v.weight, *attn_qkv.weight, *attn_kv_b.weight */
    bool has_output;    /* an output.weight tensor exists                */
} gl_qmix_model;

/* Counters of the reference's walk over the tensors; zero-initialise and
 * feed the tensors in gl_qmix_order's order. */
typedef struct gl_qmix_state {
    int i_attention_wv, i_ffn_down, i_ffn_gate, i_ffn_up;
} gl_qmix_state;

/* Whether a tensor is quantized at all (its name ends in "weight", it has
 * 2 or more non-trivial dimensions, it is not a norm, positional embedding
 * or one of the small special matrices). n_dims counts up to the last
 * dimension larger than 1. */
bool gl_qmix_quantizable(const char *name, int n_dims);

/* Options of a run. */
typedef struct gl_qmix_opts {
    bool pure;           /* every quantized tensor in the base type        */
    int output_type;     /* type for output.weight, -1: the mix decides   */
    int token_embd_type; /* type for token_embd.weight, -1: the mix       */
} gl_qmix_opts;

/* The type for a quantizable tensor with rows of ne0 elements. Advances
 * the counters in st. */
uint32_t gl_qmix_tensor_type(const gl_qmix *mix, const gl_qmix_opts *o, const gl_qmix_model *m,
                             gl_qmix_state *st, const char *name, int64_t ne0);

/* The reference's tensor order: by layer number ("blk.N."; other tensors
 * first), then by name. Negative, zero or positive as for qsort. */
int gl_qmix_order(const char *a, const char *b);

#endif
