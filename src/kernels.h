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
 *  - Quantized blocks may start at any byte (GGUF packs 34- and 18-byte
 *    blocks back to back); float arrays and F32/F16/BF16 rows are
 *    element-aligned (GGUF aligns tensors to 32 bytes; the loader checks);
 *    no reads or writes outside the given ranges.
 *  - No allocation, no global state, no I/O.
 *  - Each output element is computed with a reduction order that depends only
 *    on n, never on the row range [r0, r1) or the batch size: results are
 *    bit-identical for any thread split and any batch composition. */
#ifndef GENLOOP_SRC_KERNELS_H
#define GENLOOP_SRC_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gguf.h"
#include "quant.h"
#include "tune.h"

/* Quantizes n floats (n % 32 == 0) to Q8_0 blocks, per block of 32:
 *   amax = max |x|, d = amax / 127 (stored as half, round to nearest even),
 *   id = 127 / amax, or 0 when amax == 0 or 127 / amax overflows to inf,
 *   q = nearbyintf(x * id): round half to EVEN (the current rounding mode),
 *   not ggml's reference round-half-away (roundf(x / d)); one multiply by id.
 * Every implementation is bit-exact with arch/generic/quantize.c. */
#define GL_DECL_QUANTIZE_FN(name) void name(const float *x, void *y, int n)
typedef GL_DECL_QUANTIZE_FN((*gl_quantize_fn));

/* Activation formats (src/quant.h): what a matrix product's input is
 * quantized to, per weight type (gl_kernels.act_type). Each has a quantize
 * slot (quantize_act[]) specified exactly as quantize_q8_0 above, so every
 * backend's quantized activations are byte-identical:
 *   F32   float weights (F32, F16, BF16) take float activations as they are.
 *   Q8_0  quantize_q8_0 above.
 *   Q8_1  Q8_0 rounding (d half, q = nearbyint(x * 127 / amax)) plus
 *         s = the integer sum of the block's 32 quants.
 *   Q8_K  blocks of 256: max = the first element of largest magnitude,
 *         iscale = -127 / max (0 when max == 0), d = 1 / iscale kept as
 *         float (0 when max == 0), q = nearbyint(x * iscale) (out-of-range
 *         or non-finite products -> 0); bsums[j] = the sum of quants
 *         16 j .. 16 j + 15. (d carries the sign of max, as the reference's
 *         Q8_K does, so rounding matches it.)
 * All quants are in [-127, 127]. */
enum gl_act { GL_ACT_F32 = 0, GL_ACT_Q8_0, GL_ACT_Q8_1, GL_ACT_Q8_K, GL_ACT_COUNT };

/* Bytes of one activation row of n elements (n a multiple of the format's block). */
static inline size_t gl_act_row_bytes(int act, int n)
{
    switch (act) {
    case GL_ACT_Q8_0: return (size_t)n / QK8_0 * sizeof(block_q8_0);
    case GL_ACT_Q8_1: return (size_t)n / QK8_0 * sizeof(block_q8_1);
    case GL_ACT_Q8_K: return (size_t)n / QK_K * sizeof(block_q8_K);
    default: return (size_t)n * sizeof(float);
    }
}

/* Matrix product over packed weights, rows [r0, r1) of W:
 *   y[b * y_stride + r] = dot(W row r, activation b)  for b in [0, nb)
 * W rows are w_row_bytes apart. The activation is in the weight type's
 * activation format (gl_kernels.act_type, above); activation b starts at
 * (const char *)x + b * x_stride. Activation quants are in [-127, 127]
 * (kernels may rely on it: -128 never needs negating); weight quants may be
 * any value their format encodes.
 *
 * The float arithmetic of quantized products is specified exactly, so SIMD
 * kernels can be bit-identical to generic (arch/generic/matmul*.c): a row's
 * sum starts at 0.0f and takes one float update per weight block, in block
 * order; inside a block everything is exact integer arithmetic. With dw,
 * mw (weight scale and min, half -> float), dx (activation scale), isum the
 * integer dot product of the block's quants:
 *   Q4_0, Q8_0, Q5_0, IQ4_NL (act Q8_0):  sum += (float)isum * (dw * dx)
 *      (Q5_0's quants are q - 16; IQ4_NL's are gl_iq4nl_values[q])
 *   Q4_1, Q5_1 (act Q8_1): sum += (float)isum * (dw * dx) + (float)s * (mw * dx)
 *   Q4_K, Q5_K (act Q8_K): isum = sum_j sc_j * isum_j over the 8 sub-blocks,
 *      imin = sum_j m_j * (bsums[2 j] + bsums[2 j + 1]);
 *      sum += (float)isum * (dx * dw) - (float)imin * (dx * dmin)
 *   Q2_K: isum = sum_j (scales[j] & 15) * isum_j, imin = sum_j (scales[j] >> 4)
 *      * bsums[j] over 16 sub-blocks; the update as for Q4_K
 *   Q3_K, Q6_K (signed quants, signed scales), IQ4_XS (scale ls - 32):
 *      isum = sum_j scale_j * isum_j; sum += (float)isum * (dx * dw)
 * (each parenthesis one rounding; no fused multiply-add.) */
#define GL_DECL_MATMUL_FN(name)                                                                    \
    void name(const void *w, size_t w_row_bytes, const void *x, size_t x_stride, float *y,         \
              size_t y_stride, int n, int r0, int r1, int nb)
typedef GL_DECL_MATMUL_FN((*gl_matmul_fn));

/* Weight layouts (src/quant.h). PLAIN is the GGUF row layout the matmul[]
 * slots take; the others are made once at load time by a repack slot. */
enum gl_layout {
    GL_LAYOUT_PLAIN = 0,
    GL_LAYOUT_Q4_0X8,
    GL_LAYOUT_Q8_0X8,
    GL_LAYOUT_Q4_0X16,
    GL_LAYOUT_Q4_KX8,
    GL_LAYOUT_Q6_KX8,
    GL_LAYOUT_Q4_KX16,
    GL_LAYOUT_Q6_KX16,
    GL_LAYOUT_Q5_KX16,
    GL_LAYOUT_IQ4_XSX16,
    GL_LAYOUT_Q3_KX16,
    GL_LAYOUT_Q3_KX8,
    GL_LAYOUT_IQ4_XSX8,
    GL_LAYOUT_Q2_KX8,
    GL_LAYOUT_Q2_KX16,
    GL_LAYOUT_Q5_KX8,
    GL_LAYOUT_Q8_0X16,
    GL_LAYOUT_Q5_0X16,
    GL_LAYOUT_IQ4_NLX16,
    GL_LAYOUT_Q5_0X8,
    GL_LAYOUT_IQ4_NLX8,
    GL_LAYOUT_Q4_1X8,
    GL_LAYOUT_Q4_1X16,
    GL_LAYOUT_Q5_1X8,
    GL_LAYOUT_Q5_1X16,
    GL_LAYOUT_COUNT
};

/* Repacks row groups [g0, g1) of a plain matrix (n_rows rows of n elements,
 * w_row_bytes apart) into the layout of its slot: group i goes to
 * (char *)dst + i * group_bytes, group_bytes = n / QK * sizeof(layout block)
 * (QK: the type's block length, 32, or 256 for the K-quant layouts), which
 * is always the group's rows times the plain row bytes.
 * Rows >= n_rows of the last group are written as padding (zeros). Pure
 * byte shuffling: any [g0, g1) split gives the same bytes, so loaders may
 * run it on several threads. */
#define GL_DECL_REPACK_FN(name)                                                                    \
    void name(void *dst, const void *w, size_t w_row_bytes, int n, int n_rows, int g0, int g1)
typedef GL_DECL_REPACK_FN((*gl_repack_fn));

/* The inverse, for one row: row r of a repacked matrix (groups group_bytes
 * apart) back to its n / QK plain GGUF blocks at dst. Tests and rare row
 * access only. */
#define GL_DECL_UNPACK_FN(name)                                                                    \
    void name(void *dst, const void *packed, size_t group_bytes, int n, int r)
typedef GL_DECL_UNPACK_FN((*gl_unpack_fn));

/* Matrix products over a repacked layout take the GL_DECL_MATMUL_FN
 * signature with w = the repacked matrix and w_row_bytes = group_bytes
 * (the distance between row groups); everything else as for plain rows,
 * including arbitrary r0 / r1 (a kernel computes whole groups and stores
 * rows [r0, r1) only). Contract on top of the general rules: results are
 * BIT-IDENTICAL to arch/generic's kernel on the same layout, which is
 * itself bit-identical to generic's plain matmul of the source type, for
 * every r0 / r1 and nb. */

/* Converts n elements of a row of weight type t to float (embedding lookup). */
#define GL_DECL_DEQUANT_FN(name) void name(const void *w, float *y, int n)
typedef GL_DECL_DEQUANT_FN((*gl_dequant_fn));

/* out[i] = x[i] / sqrt(mean(x^2) + eps) * w[i] */
#define GL_DECL_RMSNORM_FN(name)                                                                   \
    void name(float *out, const float *x, const float *w, int n, float eps)
typedef GL_DECL_RMSNORM_FN((*gl_rmsnorm_fn));

/* out[i] = silu(gate[i]) * up[i] */
#define GL_DECL_SWIGLU_FN(name) void name(float *out, const float *gate, const float *up, int n)
typedef GL_DECL_SWIGLU_FN((*gl_swiglu_fn));

/* LayerNorm: out[i] = (x[i] - mean(x)) / sqrt(var(x) + eps) * w[i] + b[i], the
 * variance over n (not n - 1). out may equal x. */
#define GL_DECL_LAYERNORM_FN(name)                                                                 \
    void name(float *out, const float *x, const float *w, const float *b, int n, float eps)
typedef GL_DECL_LAYERNORM_FN((*gl_layernorm_fn));

/* GELU, the tanh approximation GPT-2 uses:
 * out[i] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), x = x[i]. out may equal x.
 * Implementations may approximate tanh to within 1e-6 relative. */
#define GL_DECL_GELU_FN(name) void name(float *out, const float *x, int n)
typedef GL_DECL_GELU_FN((*gl_gelu_fn));

/* Soft-capping, in place: x[i] = cap * tanh(x[i] / cap), cap > 0 (Gemma 2's
 * attention scores and final logits). Implementations may approximate tanh
 * to within 16 ulp relative; NaN stays NaN, +-inf becomes +-cap. */
#define GL_DECL_SOFTCAP_FN(name) void name(float *x, int n, float cap)
typedef GL_DECL_SOFTCAP_FN((*gl_softcap_fn));

/* Bias add, in place: y[i] += b[i] for i in [0, n). */
#define GL_DECL_ADD_BIAS_FN(name) void name(float *y, const float *b, int n)
typedef GL_DECL_ADD_BIAS_FN((*gl_add_bias_fn));

/* Float dot product of a query with n_keys keys stored as `kv_type` rows
 * (F32 or F16) of len floats, row_stride bytes apart: scores[j] = scale * q.k_j */
#define GL_DECL_ATTN_SCORES_FN(name)                                                               \
    void name(float *scores, const float *q, const void *k, size_t row_stride, int n_keys,         \
              int len, float scale)
typedef GL_DECL_ATTN_SCORES_FN((*gl_attn_scores_fn));

/* out[0..len) += sum_j p[j] * v_j over n rows of V, row_stride bytes apart. */
#define GL_DECL_ATTN_ACCUM_FN(name)                                                                \
    void name(float *out, const float *p, const void *v, size_t row_stride, int n_rows, int len)
typedef GL_DECL_ATTN_ACCUM_FN((*gl_attn_accum_fn));

/* The same for a Q8_0 cache: each row (all KV heads of a position) is
 * quantized as Q8_0 blocks of 32, so a head of fewer than 32 elements lives
 * inside a block; k/v point at the row start and the kernel reads elements
 * [off, off + len) of each row. */
#define GL_DECL_ATTN_SCORES_Q8_FN(name)                                                            \
    void name(float *scores, const float *q, const void *k, size_t row_stride, int n_keys,         \
              int off, int len, float scale)
typedef GL_DECL_ATTN_SCORES_Q8_FN((*gl_attn_scores_q8_fn));
#define GL_DECL_ATTN_ACCUM_Q8_FN(name)                                                             \
    void name(float *out, const float *p, const void *v, size_t row_stride, int n_rows, int off,   \
              int len)
typedef GL_DECL_ATTN_ACCUM_Q8_FN((*gl_attn_accum_q8_fn));

/* Grouped-query forms: the n_q query heads that share one KV head, in one
 * pass over its K (V) rows, so each row is read once for the whole group.
 * Query h (h < n_q) is q + h * q_stride; its scores go to
 * scores + h * scores_stride, its weights are p + h * p_stride, its output
 * is out + h * out_stride (strides in floats; the ranges of different heads
 * do not overlap). Contract on top of the single-head one: every output is
 * BIT-IDENTICAL to the same backend's single-head slot called per head
 * (attn_scores[t] / attn_accum[t] / attn_scores_q8 / attn_accum_q8), for
 * any n_q >= 1: a head's results never depend on which heads share a call,
 * so callers may split a group freely. */
#define GL_DECL_ATTN_SCORES_G_FN(name)                                                             \
    void name(float *scores, size_t scores_stride, const float *q, size_t q_stride, int n_q,       \
              const void *k, size_t row_stride, int n_keys, int len, float scale)
typedef GL_DECL_ATTN_SCORES_G_FN((*gl_attn_scores_g_fn));
#define GL_DECL_ATTN_ACCUM_G_FN(name)                                                              \
    void name(float *out, size_t out_stride, const float *p, size_t p_stride, int n_q,             \
              const void *v, size_t row_stride, int n_rows, int len)
typedef GL_DECL_ATTN_ACCUM_G_FN((*gl_attn_accum_g_fn));
#define GL_DECL_ATTN_SCORES_Q8_G_FN(name)                                                          \
    void name(float *scores, size_t scores_stride, const float *q, size_t q_stride, int n_q,       \
              const void *k, size_t row_stride, int n_keys, int off, int len, float scale)
typedef GL_DECL_ATTN_SCORES_Q8_G_FN((*gl_attn_scores_q8_g_fn));
#define GL_DECL_ATTN_ACCUM_Q8_G_FN(name)                                                           \
    void name(float *out, size_t out_stride, const float *p, size_t p_stride, int n_q,             \
              const void *v, size_t row_stride, int n_rows, int off, int len)
typedef GL_DECL_ATTN_ACCUM_Q8_G_FN((*gl_attn_accum_q8_g_fn));

/* Scores against keys stored transposed (F32 / F16 caches, src/attention.c):
 * positions in blocks of GL_KT_BLOCK, block i holding len rows of
 * GL_KT_BLOCK elements, element (position GL_KT_BLOCK * i + l, dimension d)
 * at index (i * len + d) * GL_KT_BLOCK + l from k. The n_keys keys start at
 * lane lane0 (< GL_KT_BLOCK) of the block at k. For query h (q + h * q_stride):
 *   scores[h * scores_stride + j] = scale * s,
 *   s = 0; for d = 0 .. len - 1: s = fmaf(k_{lane0 + j}[d], q_h[d], s)
 * that is one fused multiply-add per dimension, in order, then one multiply:
 * the definition, so every backend gives generic's bits, and no result
 * depends on lane0, n_q or how keys are split into calls. Kernels read the
 * whole blocks they touch (lanes outside the range: any bits, unused). */
enum { GL_KT_BLOCK = 16 };
/* The engine stores keys so for models whose KV heads serve at least this
 * many query heads each (src/attention.c says why). */
enum { GL_KT_MIN_GROUP = 4 };
#define GL_DECL_ATTN_SCORES_T_FN(name)                                                             \
    void name(float *scores, size_t scores_stride, const float *q, size_t q_stride, int n_q,       \
              const void *k, int lane0, int n_keys, int len, float scale)
typedef GL_DECL_ATTN_SCORES_T_FN((*gl_attn_scores_t_fn));

/* Softmax in place over n >= 1 scores: x[j] = exp(x[j] - max) / sum. With
 * round_f16, every result is then rounded to the nearest F16 value (the
 * precision at which the weights meet an F16 cache's values). Backends may
 * use their own exp and summation order: tolerance class exp (8 ulp) plus
 * the reordered sum, and with round_f16 one F16 step where that moves a
 * value across a rounding boundary. */
#define GL_DECL_SOFTMAX_FN(name) void name(float *x, int n, int round_f16)
typedef GL_DECL_SOFTMAX_FN((*gl_softmax_fn));

/* x[i] = the F16 value nearest x[i] (round to nearest even), in place. Exact:
 * every backend gives the same bits. */
#define GL_DECL_ROUND_F16_FN(name) void name(float *x, int n)
typedef GL_DECL_ROUND_F16_FN((*gl_round_f16_fn));

/* y[i] = the F16 nearest x[i] (round to nearest even; past the largest
 * F16, infinity), a NaN as a quiet NaN of its sign (0x7e00): gl_f32_to_f16's
 * bits (src/half.h) from every backend. Writes an F16 KV cache. */
#define GL_DECL_TO_F16_FN(name) void name(uint16_t *y, const float *x, int n)
typedef GL_DECL_TO_F16_FN((*gl_to_f16_fn));

/* KV cache storage types (the Q8_0 one has its own kernel slots). */
enum gl_kv_type { GL_KV_F32 = 0, GL_KV_F16 = 1, GL_KV_TYPE_COUNT, GL_KV_Q8_0 = GL_KV_TYPE_COUNT };

typedef struct gl_kernels {
    const char *name; /* backend name */
    gl_tune tune;     /* the decode tune its kernels were picked for (src/tune.h) */
    gl_quantize_fn quantize_q8_0;
    gl_matmul_fn matmul[GGUF_T_COUNT]; /* NULL: type not supported     */
    gl_dequant_fn dequant[GGUF_T_COUNT];
    uint8_t act_type[GGUF_T_COUNT];            /* enum gl_act, per weight type */
    gl_quantize_fn quantize_act[GL_ACT_COUNT]; /* NULL for GL_ACT_F32      */
    /* The repacked layouts' one definition (generic's, ISA-neutral): which
     * GGUF type, how many rows a group holds, and the byte shuffles to and
     * from plain rows (unpack: tests and rare row access only). */
    struct {
        gl_repack_fn repack;
        gl_unpack_fn unpack;
        uint8_t type, rows;
    } layouts[GL_LAYOUT_COUNT];
    /* Load-time repacking, the backend's choice (gl_kernels_prefer_layout):
     * repack[t].fn (NULL: no packed layout for t) turns a plain matrix of
     * type t into layout repack[t].layout, groups of repack[t].rows rows;
     * matmul_packed[layout] multiplies it (same activation format as
     * act_type[t]). Generic fills all of them. repack[t].use, set by
     * gl_kernels_init, tells loaders whether to repack: only when the
     * backend overrides matmul_packed[layout] (generic's packed kernels are
     * the reference, slower than generic's plain ones, and a backend's SIMD
     * plain kernel must never give way to them). */
    struct {
        gl_repack_fn fn;
        uint8_t layout, rows;
        bool use;
    } repack[GGUF_T_COUNT];
    gl_matmul_fn matmul_packed[GL_LAYOUT_COUNT];
    gl_rmsnorm_fn rmsnorm;
    gl_swiglu_fn swiglu;
    gl_layernorm_fn layernorm; /* gpt2 */
    gl_gelu_fn gelu;           /* gpt2 */
    gl_add_bias_fn add_bias;   /* gpt2 */
    gl_softcap_fn softcap;     /* gemma2 */
    gl_attn_scores_fn attn_scores[GL_KV_TYPE_COUNT];
    gl_attn_accum_fn attn_accum[GL_KV_TYPE_COUNT];
    gl_softmax_fn softmax;
    gl_round_f16_fn round_f16;
    gl_to_f16_fn to_f16;
    gl_attn_scores_q8_fn attn_scores_q8;
    gl_attn_accum_q8_fn attn_accum_q8;
    /* grouped-query forms of the four above (runtime: src/attention.c) */
    gl_attn_scores_g_fn attn_scores_g[GL_KV_TYPE_COUNT];
    gl_attn_accum_g_fn attn_accum_g[GL_KV_TYPE_COUNT];
    gl_attn_scores_q8_g_fn attn_scores_q8_g;
    gl_attn_accum_q8_g_fn attn_accum_q8_g;
    /* scores over transposed keys (src/attention.c: F32 / F16 caches of
     * models with GL_KT_MIN_GROUP or more query heads per KV head) */
    gl_attn_scores_t_fn attn_scores_t[GL_KV_TYPE_COUNT];
} gl_kernels;

/* Loaders repack matrices of the layout's type into `layout`. */
static inline void gl_kernels_prefer_layout(gl_kernels *k, int layout)
{
    const int t = k->layouts[layout].type;
    k->repack[t].fn = k->layouts[layout].repack;
    k->repack[t].layout = (uint8_t)layout;
    k->repack[t].rows = k->layouts[layout].rows;
}

/* A backend's row-group kernels as a table: layout, its decode tunes'
 * instances (indexed by k->tune.id), and whether loaders should repack that
 * type into it (gl_kernels_prefer_layout). */
typedef struct gl_packed_kernel {
    int layout;
    const gl_matmul_fn *tuned;
    int prefer;
} gl_packed_kernel;

static inline void gl_kernels_set_packed(gl_kernels *k, const gl_packed_kernel *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        k->matmul_packed[e[i].layout] = e[i].tuned[k->tune.id];
        if (e[i].prefer)
            gl_kernels_prefer_layout(k, e[i].layout);
    }
}

/* Backends, in ascending order of preference. X(name, suffix-of-init-fn) */
void gl_kernels_init_generic(gl_kernels *k);

/* Fills k for the named backend ("generic", "avx2", ...), or fails when the
 * build lacks it or the CPU cannot run it. The kernels are the ones of the
 * decode tune gl_tune_auto picks (GENLOOP_TUNE, else the CPU's). */
gl_status gl_kernels_init(gl_kernels *k, const char *backend, gl_error *err);
/* The same with the given tune (tests and benchmarks compare tunes). A
 * backend reads k->tune in its init to pick each slot's instance. */
gl_status gl_kernels_init_tuned(gl_kernels *k, const char *backend, gl_tune tune, gl_error *err);

#endif
