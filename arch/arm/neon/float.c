/* NEON float kernels (AArch64 baseline): F32 / F16 / BF16 weights x float
 * activations, attention over F32 / F16 caches, RMSNorm, SwiGLU, and the
 * GPT-2 LayerNorm / GELU / bias add.
 *
 * Determinism: the products and scores are arch/float_tmpl.h's with 8
 * lanes (two float32x4) summed by gl_hsum8_f32. Element-wise parts repeat
 * generic's scalar expression with the same operation order (this folder
 * builds with -ffp-contract=off). */
#include <math.h>

#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"
#include "half.h"

/* 8 elements at element index i of a row, as two float32x4 */
typedef struct {
    float32x4_t a, b;
} f8;

GL_ALWAYS_INLINE f8 ld_f32(const void *p, int i)
{
    const float *f = (const float *)p + i;
    return (f8){ vld1q_f32(f), vld1q_f32(f + 4) };
}
GL_ALWAYS_INLINE f8 ld_f16(const void *p, int i)
{
    const uint16x8_t h = vld1q_u16((const uint16_t *)p + i);
    return (f8){ gl_h2f4(vget_low_u16(h)), vcvt_high_f32_f16(vreinterpretq_f16_u16(h)) };
}
GL_ALWAYS_INLINE f8 ld_bf16(const void *p, int i)
{
    const uint16x8_t h = vld1q_u16((const uint16_t *)p + i);
    return (f8){ gl_bf2f4(vget_low_u16(h)), vreinterpretq_f32_u32(vshll_high_n_u16(h, 16)) };
}
/* the first m < 8 elements, zeros after; reads only those m */
GL_ALWAYS_INLINE f8 ldp_f32(const void *p, int i, int m)
{
    float t[8] = { 0 };
    memcpy(t, (const float *)p + i, (size_t)m * 4);
    return ld_f32(t, 0);
}
GL_ALWAYS_INLINE f8 ldp_f16(const void *p, int i, int m)
{
    uint16_t t[8] = { 0 };
    memcpy(t, (const uint16_t *)p + i, (size_t)m * 2);
    return ld_f16(t, 0);
}
GL_ALWAYS_INLINE f8 ldp_bf16(const void *p, int i, int m)
{
    uint16_t t[8] = { 0 };
    memcpy(t, (const uint16_t *)p + i, (size_t)m * 2);
    return ld_bf16(t, 0);
}

GL_ALWAYS_INLINE f8 fma8(f8 acc, f8 w, f8 x)
{
    return (f8){ vfmaq_f32(acc.a, w.a, x.a), vfmaq_f32(acc.b, w.b, x.b) };
}

#define FV_T                f8
#define FV_W                8
#define FV_ZERO()           ((f8){ vdupq_n_f32(0.0f), vdupq_n_f32(0.0f) })
#define FV_FMA(acc, w, x)   fma8(acc, w, x)
#define FV_HSUM(v)          gl_hsum8_f32((v).a, (v).b)
#define FV_LD_F32(p, i)     ld_f32(p, i)
#define FV_LDP_F32(p, i, m) ldp_f32(p, i, m)
#define FT_LINKAGE
#include "arch/float_tmpl.h"

DEF_FTILE(ftile_f32, ld_f32, ldp_f32, 4)
DEF_FTILE(ftile_f16, ld_f16, ldp_f16, 2)
DEF_FTILE(ftile_bf16, ld_bf16, ldp_bf16, 2)

DEF_FMATMUL(gl_matmul_f32_neon, ftile_f32)
DEF_FMATMUL(gl_matmul_f16_neon, ftile_f16)
DEF_FMATMUL(gl_matmul_bf16_neon, ftile_bf16)

DEF_FSCORES(gl_attn_scores_f32_neon, ftile_f32)
DEF_FSCORES(gl_attn_scores_f16_neon, ftile_f16)

/* out[i] += p[j] * v_j[i], rows in order, multiply then add: the same
 * operations per element as generic, so the result is bit-identical. Up to
 * 16 outputs stay in registers across all rows. */
#define DEF_ACCUM(NAME, LD, T)                                                                     \
    GL_DECL_ATTN_ACCUM_FN(NAME)                                                                    \
    {                                                                                              \
        int i = 0;                                                                                 \
        for (; i + 16 <= len; i += 16) {                                                           \
            f8 o0 = ld_f32(out, i), o1 = ld_f32(out, i + 8);                                       \
            for (int j = 0; j < n_rows; j++) {                                                     \
                const void *vr = (const char *)v + (size_t)j * row_stride;                         \
                const float32x4_t pj = vdupq_n_f32(p[j]);                                          \
                const f8 v0 = LD(vr, i), v1 = LD(vr, i + 8);                                       \
                o0.a = vaddq_f32(o0.a, vmulq_f32(pj, v0.a));                                       \
                o0.b = vaddq_f32(o0.b, vmulq_f32(pj, v0.b));                                       \
                o1.a = vaddq_f32(o1.a, vmulq_f32(pj, v1.a));                                       \
                o1.b = vaddq_f32(o1.b, vmulq_f32(pj, v1.b));                                       \
            }                                                                                      \
            vst1q_f32(out + i, o0.a);                                                              \
            vst1q_f32(out + i + 4, o0.b);                                                          \
            vst1q_f32(out + i + 8, o1.a);                                                          \
            vst1q_f32(out + i + 12, o1.b);                                                         \
        }                                                                                          \
        for (; i + 8 <= len; i += 8) {                                                             \
            f8 o0 = ld_f32(out, i);                                                                \
            for (int j = 0; j < n_rows; j++) {                                                     \
                const float32x4_t pj = vdupq_n_f32(p[j]);                                          \
                const f8 v0 = LD((const char *)v + (size_t)j * row_stride, i);                     \
                o0.a = vaddq_f32(o0.a, vmulq_f32(pj, v0.a));                                       \
                o0.b = vaddq_f32(o0.b, vmulq_f32(pj, v0.b));                                       \
            }                                                                                      \
            vst1q_f32(out + i, o0.a);                                                              \
            vst1q_f32(out + i + 4, o0.b);                                                          \
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
DEF_ACCUM(gl_attn_accum_f32_neon, ld_f32, float)
DEF_ACCUM(gl_attn_accum_f16_neon, ld_f16, uint16_t)

/* ss by lanes (8 lanes, FMA, zero-padded tail, gl_hsum8_f32); the scale and
 * the products use generic's scalar expression and operation order. */
GL_DECL_RMSNORM_FN(gl_rmsnorm_neon)
{
    f8 acc = { vdupq_n_f32(0.0f), vdupq_n_f32(0.0f) };
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const f8 v = ld_f32(x, j);
        acc = fma8(acc, v, v);
    }
    if (j < n) {
        const f8 v = ldp_f32(x, j, n - j);
        acc = fma8(acc, v, v);
    }
    const float ss = gl_hsum8_f32(acc.a, acc.b);
    const float scale = 1.0f / sqrtf(ss / (float)n + eps);
    const float32x4_t vs = vdupq_n_f32(scale);
    for (j = 0; j + 4 <= n; j += 4)
        vst1q_f32(out + j, vmulq_f32(vmulq_f32(vld1q_f32(x + j), vs), vld1q_f32(w + j)));
    for (; j < n; j++)
        out[j] = x[j] * scale * w[j];
}

/* out = g / (1 + e^-g) * up with the vector e^x of util.h (a few ulp from
 * expf); a tail goes through the same vector code via a zero-padded copy. */
GL_ALWAYS_INLINE float32x4_t swiglu4(float32x4_t g, float32x4_t u)
{
    const float32x4_t e = gl_exp4_f32(vnegq_f32(g));
    return vmulq_f32(vdivq_f32(g, vaddq_f32(vdupq_n_f32(1.0f), e)), u);
}

GL_DECL_SWIGLU_FN(gl_swiglu_neon)
{
    int j = 0;
    for (; j + 4 <= n; j += 4)
        vst1q_f32(out + j, swiglu4(vld1q_f32(gate + j), vld1q_f32(up + j)));
    if (j < n) {
        float g[4] = { 0 }, u[4] = { 0 }, o[4];
        memcpy(g, gate + j, (size_t)(n - j) * 4);
        memcpy(u, up + j, (size_t)(n - j) * 4);
        vst1q_f32(o, swiglu4(vld1q_f32(g), vld1q_f32(u)));
        memcpy(out + j, o, (size_t)(n - j) * 4);
    }
}

/* Two passes as generic: the mean (sum by 8 lanes, zero-padded tail,
 * gl_hsum8_f32), then the sum of squared centred values by 8 lanes with the
 * tail added after the lanes, in order (a zero-padded lane would add
 * mean^2). The output is generic's expression with its operation order. */
GL_DECL_LAYERNORM_FN(gl_layernorm_neon)
{
    f8 acc = { vdupq_n_f32(0.0f), vdupq_n_f32(0.0f) };
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const f8 v = ld_f32(x, j);
        acc.a = vaddq_f32(acc.a, v.a);
        acc.b = vaddq_f32(acc.b, v.b);
    }
    if (j < n) {
        const f8 v = ldp_f32(x, j, n - j);
        acc.a = vaddq_f32(acc.a, v.a);
        acc.b = vaddq_f32(acc.b, v.b);
    }
    const float mean = gl_hsum8_f32(acc.a, acc.b) / (float)n;
    const float32x4_t vm = vdupq_n_f32(mean);
    acc = (f8){ vdupq_n_f32(0.0f), vdupq_n_f32(0.0f) };
    for (j = 0; j + 8 <= n; j += 8) {
        const f8 v = ld_f32(x, j);
        const f8 d = { vsubq_f32(v.a, vm), vsubq_f32(v.b, vm) };
        acc = fma8(acc, d, d);
    }
    float ss = gl_hsum8_f32(acc.a, acc.b);
    for (; j < n; j++) {
        const float d = x[j] - mean;
        ss += d * d;
    }
    const float scale = 1.0f / sqrtf(ss / (float)n + eps);
    const float32x4_t vs = vdupq_n_f32(scale);
    for (j = 0; j + 4 <= n; j += 4) {
        const float32x4_t t =
            vmulq_f32(vmulq_f32(vsubq_f32(vld1q_f32(x + j), vm), vs), vld1q_f32(w + j));
        vst1q_f32(out + j, vaddq_f32(t, vld1q_f32(b + j)));
    }
    for (; j < n; j++)
        out[j] = (x[j] - mean) * scale * w[j] + b[j];
}

/* generic's x / (1 + e^(-2 sqrt(2/pi) (x + 0.044715 x^3))) with the same
 * operation order; only e^x is the vector approximation of util.h. */
GL_ALWAYS_INLINE float32x4_t gelu4(float32x4_t v)
{
    const float32x4_t c = vdupq_n_f32(0.044715f);
    const float32x4_t nk2 = vdupq_n_f32(-(2.0f * 0.7978845608028654f));
    const float32x4_t cube = vmulq_f32(vmulq_f32(vmulq_f32(c, v), v), v);
    const float32x4_t e = gl_exp4_f32(vmulq_f32(nk2, vaddq_f32(v, cube)));
    return vdivq_f32(v, vaddq_f32(vdupq_n_f32(1.0f), e));
}

GL_DECL_GELU_FN(gl_gelu_neon)
{
    int j = 0;
    for (; j + 4 <= n; j += 4)
        vst1q_f32(out + j, gelu4(vld1q_f32(x + j)));
    if (j < n) {
        float t[4] = { 0 }, o[4];
        memcpy(t, x + j, (size_t)(n - j) * 4);
        vst1q_f32(o, gelu4(vld1q_f32(t)));
        memcpy(out + j, o, (size_t)(n - j) * 4);
    }
}

/* cap * tanh(x / cap) with util.h's vector tanh; the division as generic's */
GL_ALWAYS_INLINE float32x4_t softcap4(float32x4_t v, float32x4_t cap)
{
    return vmulq_f32(cap, gl_tanh4_f32(vdivq_f32(v, cap)));
}

GL_DECL_SOFTCAP_FN(gl_softcap_neon)
{
    const float32x4_t vc = vdupq_n_f32(cap);
    int j = 0;
    for (; j + 4 <= n; j += 4)
        vst1q_f32(x + j, softcap4(vld1q_f32(x + j), vc));
    if (j < n) {
        float t[4] = { 0 };
        memcpy(t, x + j, (size_t)(n - j) * 4);
        vst1q_f32(t, softcap4(vld1q_f32(t), vc));
        memcpy(x + j, t, (size_t)(n - j) * 4);
    }
}

/* FCVTN rounds to nearest even (the FPCR's default mode, as gl_f32_to_f16);
 * a NaN keeps only its sign (FCVTN would keep the top of its payload), so
 * every NaN comes out as gl_f32_to_f16's. */
GL_ALWAYS_INLINE uint16x4_t to_f16_4(float32x4_t v)
{
    const uint16x4_t h = vreinterpret_u16_f16(vcvt_f16_f32(v));
    const uint16x4_t nan = vmovn_u32(vmvnq_u32(vceqq_f32(v, v)));
    const uint16x4_t qnan = vorr_u16(vand_u16(h, vdup_n_u16(0x8000)), vdup_n_u16(0x7e00));
    return vbsl_u16(nan, qnan, h);
}

GL_DECL_TO_F16_FN(gl_to_f16_neon)
{
    int i = 0;
    for (; i + 4 <= n; i += 4)
        vst1_u16(y + i, to_f16_4(vld1q_f32(x + i)));
    if (i < n) {
        float t[4] = { 0 };
        uint16_t h[4];
        memcpy(t, x + i, (size_t)(n - i) * sizeof(float));
        vst1_u16(h, to_f16_4(vld1q_f32(t)));
        memcpy(y + i, h, (size_t)(n - i) * sizeof(uint16_t));
    }
}

/* y += b, element by element: bit-identical to generic. */
GL_DECL_ADD_BIAS_FN(gl_add_bias_neon)
{
    int j = 0;
    for (; j + 4 <= n; j += 4)
        vst1q_f32(y + j, vaddq_f32(vld1q_f32(y + j), vld1q_f32(b + j)));
    for (; j < n; j++)
        y[j] += b[j];
}
