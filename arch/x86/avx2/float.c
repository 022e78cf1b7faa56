/* AVX2 float kernels: F32 / F16 / BF16 weights x float activations,
 * attention over F32 / F16 caches, RMSNorm and SwiGLU.
 *
 * Determinism: the products and scores are arch/float_tmpl.h's with 8
 * lanes summed by gl_hsum8_ps. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/util.h"
#include <math.h>

#include "half.h"

GL_ALWAYS_INLINE __m256 ld_f32(const void *p, int i)
{
    return _mm256_loadu_ps((const float *)p + i);
}
GL_ALWAYS_INLINE __m256 ldp_f32(const void *p, int i, int m)
{
    return gl_load_part_f32((const float *)p + i, m);
}
GL_ALWAYS_INLINE __m256 ld_f16(const void *p, int i)
{
    return gl_load8_f16((const uint16_t *)p + i);
}
GL_ALWAYS_INLINE __m256 ldp_f16(const void *p, int i, int m)
{
    return _mm256_cvtph_ps(gl_load_part_u16((const uint16_t *)p + i, m));
}
GL_ALWAYS_INLINE __m256 ld_bf16(const void *p, int i)
{
    return gl_load8_bf16((const uint16_t *)p + i);
}
GL_ALWAYS_INLINE __m256 ldp_bf16(const void *p, int i, int m)
{
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(gl_load_part_u16((const uint16_t *)p + i, m)), 16));
}

#define FV_T                __m256
#define FV_W                8
#define FV_ZERO()           _mm256_setzero_ps()
#define FV_FMA(acc, w, x)   _mm256_fmadd_ps(w, x, acc)
#define FV_HSUM(v)          gl_hsum8_ps(v)
#define FV_LD_F32(p, i)     ld_f32(p, i)
#define FV_LDP_F32(p, i, m) ldp_f32(p, i, m)
#define FT_LINKAGE
#include "arch/float_tmpl.h"

DEF_FTILE(ftile_f32, ld_f32, ldp_f32, 4)
DEF_FTILE(ftile_f16, ld_f16, ldp_f16, 2)
DEF_FTILE(ftile_bf16, ld_bf16, ldp_bf16, 2)

DEF_FMATMUL(gl_matmul_f32_avx2, ftile_f32)
DEF_FMATMUL(gl_matmul_f16_avx2, ftile_f16)
DEF_FMATMUL(gl_matmul_bf16_avx2, ftile_bf16)

DEF_FSCORES(gl_attn_scores_f32_avx2, ftile_f32)
DEF_FSCORES(gl_attn_scores_f16_avx2, ftile_f16)

/* out[i] += p[j] * v_j[i], rows in order, multiply then add: the same
 * operations per element as generic, so the result is bit-identical. Up to
 * 32 outputs stay in registers across all rows. */
#define DEF_ACCUM(NAME, LD, T)                                                                     \
    GL_DECL_ATTN_ACCUM_FN(NAME)                                                                    \
    {                                                                                              \
        int i = 0;                                                                                 \
        for (; i + 32 <= len; i += 32) {                                                           \
            __m256 o0 = _mm256_loadu_ps(out + i), o1 = _mm256_loadu_ps(out + i + 8);               \
            __m256 o2 = _mm256_loadu_ps(out + i + 16), o3 = _mm256_loadu_ps(out + i + 24);         \
            for (int j = 0; j < n_rows; j++) {                                                     \
                const void *vr = (const char *)v + (size_t)j * row_stride;                         \
                const __m256 pj = _mm256_set1_ps(p[j]);                                            \
                o0 = _mm256_add_ps(o0, _mm256_mul_ps(pj, LD(vr, i)));                              \
                o1 = _mm256_add_ps(o1, _mm256_mul_ps(pj, LD(vr, i + 8)));                          \
                o2 = _mm256_add_ps(o2, _mm256_mul_ps(pj, LD(vr, i + 16)));                         \
                o3 = _mm256_add_ps(o3, _mm256_mul_ps(pj, LD(vr, i + 24)));                         \
            }                                                                                      \
            _mm256_storeu_ps(out + i, o0);                                                         \
            _mm256_storeu_ps(out + i + 8, o1);                                                     \
            _mm256_storeu_ps(out + i + 16, o2);                                                    \
            _mm256_storeu_ps(out + i + 24, o3);                                                    \
        }                                                                                          \
        for (; i + 8 <= len; i += 8) {                                                             \
            __m256 o0 = _mm256_loadu_ps(out + i);                                                  \
            for (int j = 0; j < n_rows; j++) {                                                     \
                const void *vr = (const char *)v + (size_t)j * row_stride;                         \
                o0 = _mm256_add_ps(o0, _mm256_mul_ps(_mm256_set1_ps(p[j]), LD(vr, i)));            \
            }                                                                                      \
            _mm256_storeu_ps(out + i, o0);                                                         \
        }                                                                                          \
        for (; i < len; i++) {                                                                     \
            float o = out[i];                                                                      \
            for (int j = 0; j < n_rows; j++) {                                                     \
                const T *vr = (const T *)((const char *)v + (size_t)j * row_stride);               \
                o += p[j] * TO_F32_##T(vr[i]);                                                     \
            }                                                                                      \
            out[i] = o;                                                                            \
        }                                                                                          \
    }

#define TO_F32_float(v)    (v)
#define TO_F32_uint16_t(v) gl_f16_to_f32(v)
DEF_ACCUM(gl_attn_accum_f32_avx2, ld_f32, float)
DEF_ACCUM(gl_attn_accum_f16_avx2, ld_f16, uint16_t)

/* ss by lanes (8 lanes, FMA, zero-padded tail, gl_hsum8_ps); the scale and
 * the products use generic's scalar expression and operation order. */
GL_DECL_RMSNORM_FN(gl_rmsnorm_avx2)
{
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_loadu_ps(x + j);
        acc = _mm256_fmadd_ps(v, v, acc);
    }
    if (j < n) {
        const __m256 v = gl_load_part_f32(x + j, n - j);
        acc = _mm256_fmadd_ps(v, v, acc);
    }
    const float ss = gl_hsum8_ps(acc);
    const float scale = 1.0f / sqrtf(ss / (float)n + eps);
    const __m256 vs = _mm256_set1_ps(scale);
    for (j = 0; j + 8 <= n; j += 8)
        _mm256_storeu_ps(out + j, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + j), vs),
                                                _mm256_loadu_ps(w + j)));
    for (; j < n; j++)
        out[j] = x[j] * scale * w[j];
}

/* out = g / (1 + e^-g) * up with the vector e^x of util.h (a few ulp from
 * expf); tails go through the same vector code with masked loads/stores. */
GL_ALWAYS_INLINE __m256 swiglu8(__m256 g, __m256 u)
{
    const __m256 e = gl_exp8_ps(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));
    return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

GL_DECL_SWIGLU_FN(gl_swiglu_avx2)
{
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(out + j, swiglu8(_mm256_loadu_ps(gate + j), _mm256_loadu_ps(up + j)));
    if (j < n) {
        const __m256i mk = gl_tail_mask8(n - j);
        _mm256_maskstore_ps(
            out + j, mk, swiglu8(_mm256_maskload_ps(gate + j, mk), _mm256_maskload_ps(up + j, mk)));
    }
}

/* generic's x / (1 + e^(-2 sqrt(2/pi) (x + 0.044715 x^3))) with the same
 * operation order; only e^x is the vector approximation of util.h. */
GL_ALWAYS_INLINE __m256 gelu8(__m256 v)
{
    const __m256 c = _mm256_set1_ps(0.044715f);
    const __m256 nk2 = _mm256_set1_ps(-(2.0f * 0.7978845608028654f));
    const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(c, v), v), v);
    const __m256 e = gl_exp8_ps(_mm256_mul_ps(nk2, _mm256_add_ps(v, cube)));
    return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

GL_DECL_GELU_FN(gl_gelu_avx2)
{
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(out + j, gelu8(_mm256_loadu_ps(x + j)));
    if (j < n) {
        const __m256i mk = gl_tail_mask8(n - j);
        _mm256_maskstore_ps(out + j, mk, gelu8(_mm256_maskload_ps(x + j, mk)));
    }
}

/* cap * tanh(x / cap) with util.h's vector tanh; the division as generic's */
GL_ALWAYS_INLINE __m256 softcap8(__m256 v, __m256 cap)
{
    return _mm256_mul_ps(cap, gl_tanh8_ps(_mm256_div_ps(v, cap)));
}

GL_DECL_SOFTCAP_FN(gl_softcap_avx2)
{
    const __m256 vc = _mm256_set1_ps(cap);
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(x + j, softcap8(_mm256_loadu_ps(x + j), vc));
    if (j < n) {
        const __m256i mk = gl_tail_mask8(n - j);
        _mm256_maskstore_ps(x + j, mk, softcap8(_mm256_maskload_ps(x + j, mk), vc));
    }
}
