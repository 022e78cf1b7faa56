/* Float rows to GGUF blocks and back: the quantizers behind `genloop
 * quantize` and `genloop synth`, with a dequantizer per type (for requantizing
 * and for measuring the error).
 *
 * The quantizers follow the reference quantizer's algorithms without an
 * importance matrix (same block rules, same scale searches), so their error
 * matches the reference's; Q8_0 is bit-exact. Every function is pure: no
 * global state, the output depends only on the input row, so rows may be
 * split over threads in any way. */
#ifndef GENLOOP_SRC_QUANTIZE_ROWS_H
#define GENLOOP_SRC_QUANTIZE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True for the types gl_quantize_row writes: F32, F16, BF16, Q8_0, Q4_0,
 * Q4_1, Q5_0, Q5_1, Q2_K..Q6_K, IQ4_NL, IQ4_XS. */
bool gl_quant_can_write(uint32_t type);
/* True for the types gl_dequantize_row reads (the same set). */
bool gl_quant_can_read(uint32_t type);
/* Elements per block (1 for float types), 0 for unknown types. */
int64_t gl_quant_block_elems(uint32_t type);
/* Bytes of a row of n elements (n a multiple of the block), 0 if unknown. */
size_t gl_quant_row_bytes(uint32_t type, int64_t n);

/* Quantizes n floats (a multiple of the type's block) into dst. Returns
 * false for a type it cannot write or a bad n. */
bool gl_quantize_row(uint32_t type, const float *x, void *dst, int64_t n);
/* Quantizes nrows rows of n floats (row r at x + r * n) into consecutive
 * rows of dst, the rows split over nthreads threads (<= 1: the caller's).
 * The bytes do not depend on nthreads. */
bool gl_quantize_rows(uint32_t type, const float *x, void *dst, int64_t nrows, int64_t n,
                      int nthreads);
/* Decodes n elements of a row of type into y; false for unknown types. */
bool gl_dequantize_row(uint32_t type, const void *src, float *y, int64_t n);

#endif
