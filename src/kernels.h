/* THE CONTRACT between the runtime and the per-architecture kernels.
 *
 * Every hot operation is a slot in gl_kernels. arch/generic fills every slot
 * with the C reference; each ISA backend (arch/x86/avx2, ...) overwrites the
 * slots it accelerates and inherits the rest. The runtime calls kernels only
 * through a table, so tests and production take the same path.
 *
 * Rules every implementation keeps:
 *  - n (the reduction length) is a multiple of the weight type's block size;
 *    any number of blocks, so tails are mandatory.
 *  - Inputs may be unaligned; no reads or writes outside the given ranges.
 *  - No allocation, no global state, no I/O.
 *  - Each output element is computed with a reduction order that depends only
 *    on n, never on the row range [r0, r1) or the batch size: results are
 *    bit-identical for any thread split and any batch composition. */
#ifndef GENLOOP_SRC_KERNELS_H
#define GENLOOP_SRC_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "gguf.h"
#include "quant.h"

/* Quantizes n floats (n % 32 == 0) to Q8_0 blocks: d = amax / 127,
 * q = round-half-away(x / d) (roundf), as ggml's reference quantizer does. */
#define GL_DECL_QUANTIZE_FN(name) void name(const float *x, void *y, int n)
typedef GL_DECL_QUANTIZE_FN((*gl_quantize_fn));

/* Matrix product over packed weights, rows [r0, r1) of W:
 *   y[b * y_stride + r] = dot(W row r, activation b)  for b in [0, nb)
 * W rows are w_row_bytes apart. The activation is in the weight type's
 * activation format (see gl_kernels.act_type): Q8_0 blocks for quantized
 * weights, float for float weights; activation b starts at
 * (const char *)x + b * x_stride. */
#define GL_DECL_MATMUL_FN(name)                                                                \
    void name(const void *w, size_t w_row_bytes, const void *x, size_t x_stride, float *y,     \
              size_t y_stride, int n, int r0, int r1, int nb)
typedef GL_DECL_MATMUL_FN((*gl_matmul_fn));

/* Converts n elements of a row of weight type t to float (embedding lookup). */
#define GL_DECL_DEQUANT_FN(name) void name(const void *w, float *y, int n)
typedef GL_DECL_DEQUANT_FN((*gl_dequant_fn));

/* out[i] = x[i] / sqrt(mean(x^2) + eps) * w[i] */
#define GL_DECL_RMSNORM_FN(name) void name(float *out, const float *x, const float *w, int n, float eps)
typedef GL_DECL_RMSNORM_FN((*gl_rmsnorm_fn));

/* out[i] = silu(gate[i]) * up[i] */
#define GL_DECL_SWIGLU_FN(name) void name(float *out, const float *gate, const float *up, int n)
typedef GL_DECL_SWIGLU_FN((*gl_swiglu_fn));

/* LayerNorm: out[i] = (x[i] - mean(x)) / sqrt(var(x) + eps) * w[i] + b[i], the
 * variance over n (not n - 1). out may equal x. */
#define GL_DECL_LAYERNORM_FN(name)                                                              \
    void name(float *out, const float *x, const float *w, const float *b, int n, float eps)
typedef GL_DECL_LAYERNORM_FN((*gl_layernorm_fn));

/* GELU, the tanh approximation GPT-2 uses:
 * out[i] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), x = x[i]. out may equal x.
 * Implementations may approximate tanh to within 1e-6 relative. */
#define GL_DECL_GELU_FN(name) void name(float *out, const float *x, int n)
typedef GL_DECL_GELU_FN((*gl_gelu_fn));

/* Bias add, in place: y[i] += b[i] for i in [0, n). */
#define GL_DECL_ADD_BIAS_FN(name) void name(float *y, const float *b, int n)
typedef GL_DECL_ADD_BIAS_FN((*gl_add_bias_fn));

/* Float dot product of a query with n_keys keys stored as `kv_type` rows
 * (F32 or F16) of len floats, row_stride bytes apart: scores[j] = scale * q.k_j */
#define GL_DECL_ATTN_SCORES_FN(name)                                                            \
    void name(float *scores, const float *q, const void *k, size_t row_stride, int n_keys,      \
              int len, float scale)
typedef GL_DECL_ATTN_SCORES_FN((*gl_attn_scores_fn));

/* out[0..len) += sum_j p[j] * v_j over n rows of V, row_stride bytes apart. */
#define GL_DECL_ATTN_ACCUM_FN(name)                                                             \
    void name(float *out, const float *p, const void *v, size_t row_stride, int n_rows, int len)
typedef GL_DECL_ATTN_ACCUM_FN((*gl_attn_accum_fn));

enum gl_kv_type { GL_KV_F32 = 0, GL_KV_F16 = 1, GL_KV_TYPE_COUNT };

typedef struct gl_kernels {
    const char *name; /* backend name */
    gl_quantize_fn quantize_q8_0;
    gl_matmul_fn matmul[GGUF_T_COUNT];   /* NULL: type not supported     */
    gl_dequant_fn dequant[GGUF_T_COUNT];
    uint8_t act_type[GGUF_T_COUNT];      /* GGUF_T_F32 or GGUF_T_Q8_0    */
    gl_rmsnorm_fn rmsnorm;
    gl_swiglu_fn swiglu;
    gl_layernorm_fn layernorm; /* gpt2 */
    gl_gelu_fn gelu;           /* gpt2 */
    gl_add_bias_fn add_bias;   /* gpt2 */
    gl_attn_scores_fn attn_scores[GL_KV_TYPE_COUNT];
    gl_attn_accum_fn attn_accum[GL_KV_TYPE_COUNT];
} gl_kernels;

/* Backends, in ascending order of preference. X(name, suffix-of-init-fn) */
void gl_kernels_init_generic(gl_kernels *k);

/* Fills k for the named backend ("generic", "avx2", ...), or fails when the
 * build lacks it or the CPU cannot run it. */
gl_status gl_kernels_init(gl_kernels *k, const char *backend, gl_error *err);

#endif
