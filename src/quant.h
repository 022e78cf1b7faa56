/* Block layouts exactly as GGUF stores them (ggml-common.h bytes). */
#ifndef GENLOOP_SRC_QUANT_H
#define GENLOOP_SRC_QUANT_H

#include <assert.h>
#include <stdint.h>

/* GGUF gives blocks no alignment: rows of 34-byte Q8_0 blocks start
 * anywhere, and kernels accept unaligned pointers. Packed (alignment 1)
 * block types make every member access valid at any address. */
#if defined(__GNUC__)
#define GL_PACKED __attribute__((packed))
/* Scalars of weight and cache rows, which may sit at any address. */
typedef float gl_f32u __attribute__((aligned(1)));
typedef uint16_t gl_u16u __attribute__((aligned(1)));
#else
#define GL_PACKED
typedef float gl_f32u;
typedef uint16_t gl_u16u;
#endif

#define QK8_0 32
#define QK4_0 32

/* 32 signed bytes scaled by one half-precision d: x = d * q. */
typedef struct GL_PACKED block_q8_0 {
    uint16_t d;
    int8_t qs[QK8_0];
} block_q8_0;

/* 32 nibbles scaled by d: x = d * (q - 8). Byte j holds element j in its
 * low nibble and element j + 16 in its high nibble. */
typedef struct GL_PACKED block_q4_0 {
    uint16_t d;
    uint8_t qs[QK4_0 / 2];
} block_q4_0;

static_assert(sizeof(block_q8_0) == 34, "block_q8_0 must match GGUF");
static_assert(sizeof(block_q4_0) == 18, "block_q4_0 must match GGUF");

/* ---- Row-interleaved ("x8") layouts, made at load time (src/repack.c).
 *
 * ISA-neutral: arch/generic implements them (repack, unpack, matmul) and
 * every backend's kernels answer to that reference. A repacked matrix is a
 * sequence of row groups of GL_X8_ROWS rows; group i holds rows 8i..8i+7
 * and is nblk = n / 32 consecutive x8 blocks, one per 32 columns, so group
 * i starts at i * nblk * sizeof(block). Rows past the matrix in the last
 * group are padding: d = 0 and every quant 0 (x = 0 in both layouts below).
 *
 * Within a block the quant bytes of the 8 rows are interleaved in 4-byte
 * groups: qs[32 k + 4 r + j] is byte 4 k + j of row r's GGUF block
 * (k = 0..3 for Q4_0, 0..7 for Q8_0; j = 0..3). One 32-byte load thus
 * holds 4 consecutive bytes of each of the 8 rows, lane r = row r, and a
 * 4-byte dot product per 32-bit lane (vpdpbusd, maddubs+madd, sdot, ...)
 * yields 8 rows' partial sums with no horizontal reduction. The quant bytes
 * keep their GGUF meaning (no bias or sign trick): a Q4_0 byte holds
 * element e (low nibble) and e + 16 (high nibble) of its row's block. */
#define GL_X8_ROWS 8

typedef struct GL_PACKED block_q4_0x8 {
    uint16_t d[GL_X8_ROWS];             /* row r's d */
    uint8_t qs[GL_X8_ROWS * QK4_0 / 2]; /* 4 x (8 rows x 4 bytes) */
} block_q4_0x8;

typedef struct GL_PACKED block_q8_0x8 {
    uint16_t d[GL_X8_ROWS];
    int8_t qs[GL_X8_ROWS * QK8_0]; /* 8 x (8 rows x 4 bytes) */
} block_q8_0x8;

/* Q4_0x16: the same interleave over 16 rows (qs[64 k + 4 r + j]), so one
 * 64-byte load holds 4 bytes of each of 16 rows: a zmm register's lanes.
 * AVX-512 decode streams it faster than two Q4_0x8 groups side by side
 * (no inserts, one stream per 16 rows; bench/matvec 2 threads 2048x5632:
 * 93 -> 97 % of the read bandwidth). */
#define GL_X16_ROWS 16

typedef struct GL_PACKED block_q4_0x16 {
    uint16_t d[GL_X16_ROWS];
    uint8_t qs[GL_X16_ROWS * QK4_0 / 2]; /* 4 x (16 rows x 4 bytes) */
} block_q4_0x16;

static_assert(sizeof(block_q4_0x8) == 8 * sizeof(block_q4_0), "block_q4_0x8: 8 Q4_0 blocks");
static_assert(sizeof(block_q4_0x16) == 16 * sizeof(block_q4_0), "block_q4_0x16: 16 Q4_0 blocks");
static_assert(sizeof(block_q8_0x8) == 8 * sizeof(block_q8_0), "block_q8_0x8: 8 Q8_0 blocks");
static_assert(sizeof(block_q4_0x8) % 16 == 0 && sizeof(block_q8_0x8) % 16 == 0 &&
                  sizeof(block_q4_0x16) % 32 == 0,
              "x8 blocks keep 16-byte alignment from one block to the next");

#endif
