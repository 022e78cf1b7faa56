/* Block layouts exactly as GGUF stores them (ggml-common.h bytes). */
#ifndef GENLOOP_SRC_QUANT_H
#define GENLOOP_SRC_QUANT_H

#include <assert.h>
#include <stdint.h>

#define QK8_0 32
#define QK4_0 32

/* 32 signed bytes scaled by one half-precision d: x = d * q. */
typedef struct block_q8_0 {
    uint16_t d;
    int8_t qs[QK8_0];
} block_q8_0;

/* 32 nibbles scaled by d: x = d * (q - 8). Byte j holds element j in its
 * low nibble and element j + 16 in its high nibble. */
typedef struct block_q4_0 {
    uint16_t d;
    uint8_t qs[QK4_0 / 2];
} block_q4_0;

static_assert(sizeof(block_q8_0) == 34, "block_q8_0 must match GGUF");
static_assert(sizeof(block_q4_0) == 18, "block_q4_0 must match GGUF");

#endif
