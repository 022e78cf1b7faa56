/* A tiny, valid llama-architecture GGUF built in memory, for hardening
 * tests and fuzz seeds: small enough to load and evaluate in microseconds,
 * complete enough to pass every check of model binding. Options knock out
 * or distort one piece at a time to build structurally valid files that
 * the model loader must reject. */
#ifndef GENLOOP_TESTS_TINY_MODEL_H
#define GENLOOP_TESTS_TINY_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "gguf_writer.h"

#define TM_N_TENSORS 12 /* token_embd, output_norm, output, 9 per layer (1 layer) */

typedef struct tm_opts {
    uint32_t wtype; /* type of the 2-D weights: GGUF_T_F32 (0), F16, BF16, Q8_0, Q4_0,
                     * Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K..Q6_K, IQ4_XS. Types with
                     * 256-element blocks get dim 256 and FFN 256 (tm_dims)   */
    bool tied;      /* no output.weight (tied embeddings)                               */
    int n_layers;   /* 0: 1                                                             */
    /* Distortions: each makes a structurally valid file the loader rejects. */
    int drop_tensor;      /* 1-based index in tm_tensor_name order: omit that tensor          */
    int bad_shape_tensor; /* 1-based: that tensor gets ne[0] + 1 (data sized to match)       */
    int bad_type_tensor;  /* 1-based: that tensor is stored with bad_type                    */
    uint32_t bad_type;
    const char *drop_key;     /* omit this metadata key                                           */
    const char *override_key; /* set this u32/i32 hyperparameter key to override_val          */
    int64_t override_val;
    const char *wrong_type_key; /* write this key as a string instead of its number          */
    /* Not a distortion the loader sees: a scale stored as these F16 bits
     * (NaN, inf) in block 0's d and, for types with a min, block 1's min
     * of that 1-based tensor (a quantized one). */
    int bad_scale_tensor;
    uint16_t bad_scale_bits;
} tm_opts;

/* The model's dimensions for weight type wtype (dim, ffn; 4 heads, 2 KV). */
void tm_dims(uint32_t wtype, int *dim, int *ffn);

/* Names of the tensors the builder writes, in order (index 0..n-1 for one
 * layer); NULL past the end. */
const char *tm_tensor_name(int i);
/* Number of tensors written for opts (one layer: TM_N_TENSORS, or one less when tied). */
int tm_n_tensors(const tm_opts *o);

void tm_build(gw_buf *b, const tm_opts *o);

#endif
