/* NEON attention kernels (AArch64 baseline): the grouped-query forms over
 * F32 / F16 / Q8_0 caches, and the single-head Q8_0 ones (the single-head
 * F32 / F16 ones are in float.c): arch/attention_tmpl.h with 8 lanes as two
 * float32x4 and tiles of 8 accumulators, whose lane sums are reduced four at
 * a time by hsum8x4, gl_hsum8_f32's additions side by side, so a group score
 * is bit-identical to the single-head slot's. The folder builds with
 * -ffp-contract=off, so the accumulation's multiply-then-add stays two
 * roundings as in generic.
 *
 * Q8_0 elements are d * q, exact in float (11 x 8 significant bits). */
#include <string.h>

#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"
#include "half.h"

enum { KT_F32, KT_F16, KT_Q8 };

typedef struct {
    float32x4_t a, b;
} v8;

GL_ALWAYS_INLINE v8 v8_zero(void)
{
    return (v8){ vdupq_n_f32(0.0f), vdupq_n_f32(0.0f) };
}
GL_ALWAYS_INLINE v8 v8_f32(const float *f)
{
    return (v8){ vld1q_f32(f), vld1q_f32(f + 4) };
}
GL_ALWAYS_INLINE v8 v8_f32p(const float *f, int m)
{
    float t[8] = { 0 };
    memcpy(t, f, (size_t)m * 4);
    return v8_f32(t);
}
GL_ALWAYS_INLINE void v8_store(float *f, v8 x)
{
    vst1q_f32(f, x.a);
    vst1q_f32(f + 4, x.b);
}
GL_ALWAYS_INLINE v8 v8_f16(const uint16_t *p)
{
    const uint16x8_t h = vld1q_u16(p);
    return (v8){ gl_h2f4(vget_low_u16(h)), vcvt_high_f32_f16(vreinterpretq_f16_u16(h)) };
}

GL_ALWAYS_INLINE float q8_d(const block_q8_0 *b)
{
    return gl_f16_to_f32(gl_blk_d(b));
}

/* Elements [e, e + m) of a Q8_0 row (m <= 8), zeros after. */
GL_ALWAYS_INLINE v8 ldp8_q8(const void *row, int e, int m)
{
    float t[8] = { 0 };
    for (int k = 0; k < m; k++) {
        const block_q8_0 *b = (const block_q8_0 *)row + (e + k) / QK8_0;
        t[k] = q8_d(b) * b->qs[(e + k) % QK8_0];
    }
    return v8_f32(t);
}

/* 8 elements that straddle two blocks (a head not on a block boundary),
 * out of line: inlined into the score and accumulation tiles, its stack
 * array made the compiler keep the tiles' accumulators in memory on the
 * common path too (AVX-512, Qwen3-0.6B with a Q8_0 cache at 2048
 * positions, 1 thread: attention 18 -> 9 ms a decode step). */
static __attribute__((noinline, cold)) v8 ld8_q8_straddle(const void *row, int e)
{
    return ldp8_q8(row, e, 8);
}

GL_ALWAYS_INLINE v8 ld8_q8(const void *row, int e)
{
    const block_q8_0 *b = (const block_q8_0 *)row + e / QK8_0;
    const int o = e % QK8_0;
    if (__builtin_expect(o <= QK8_0 - 8, 1)) {
        const int16x8_t w = vmovl_s8(vld1_s8(b->qs + o));
        const float32x4_t d = vdupq_n_f32(q8_d(b));
        return (v8){ vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(w))), d),
                     vmulq_f32(vcvtq_f32_s32(vmovl_high_s16(w)), d) };
    }
    return ld8_q8_straddle(row, e);
}

/* 8 elements of a row from element e (F32 / F16: row at the head; Q8_0:
 * row start, e includes the head's offset); the _p form reads only m < 8
 * and gives zeros after. */
GL_ALWAYS_INLINE v8 ld8(const int kt, const void *row, int e)
{
    if (kt == KT_F32)
        return v8_f32((const float *)row + e);
    if (kt == KT_F16)
        return v8_f16((const uint16_t *)row + e);
    return ld8_q8(row, e);
}

GL_ALWAYS_INLINE v8 ldp8(const int kt, const void *row, int e, int m)
{
    if (kt == KT_F32)
        return v8_f32p((const float *)row + e, m);
    if (kt == KT_F16) {
        uint16_t t[8] = { 0 };
        memcpy(t, (const uint16_t *)row + e, (size_t)m * 2);
        return v8_f16(t);
    }
    return ldp8_q8(row, e, m);
}

/* lane k = gl_hsum8_f32(a[k].a, a[k].b), bit for bit, for 4 vectors */
GL_ALWAYS_INLINE float32x4_t hsum8x4(const v8 *a)
{
    float32x4_t s[4];
    for (int k = 0; k < 4; k++)
        s[k] = vaddq_f32(a[k].a, a[k].b);
    return vpaddq_f32(vpaddq_f32(s[0], s[1]), vpaddq_f32(s[2], s[3]));
}

GL_ALWAYS_INLINE v8 fma8(v8 acc, v8 k, v8 q)
{
    return (v8){ vfmaq_f32(acc.a, k.a, q.a), vfmaq_f32(acc.b, k.b, q.b) };
}

GL_ALWAYS_INLINE v8 v8_set1(float x)
{
    return (v8){ vdupq_n_f32(x), vdupq_n_f32(x) };
}
GL_ALWAYS_INLINE v8 v8_mul(v8 v, float s)
{
    return (v8){ vmulq_n_f32(v.a, s), vmulq_n_f32(v.b, s) };
}

/* o + p * v, a multiply then an add per lane */
GL_ALWAYS_INLINE v8 mul_add8(v8 o, float p, v8 v)
{
    const float32x4_t pj = vdupq_n_f32(p);
    return (v8){ vaddq_f32(o.a, vmulq_f32(pj, v.a)), vaddq_f32(o.b, vmulq_f32(pj, v.b)) };
}

/* the store of lanes [0, m) only */
GL_ALWAYS_INLINE void v8_store_p(float *f, int m, v8 x)
{
    float t[8];
    v8_store(t, x);
    memcpy(f, t, (size_t)m * sizeof(float));
}

/* res[t] = scale * gl_hsum8_f32(acc[t]), t < 8 */
GL_ALWAYS_INLINE void tile_out8(const v8 *acc, float *res, float scale)
{
    const float32x4_t vs = vdupq_n_f32(scale);
    vst1q_f32(res, vmulq_f32(hsum8x4(acc), vs));
    vst1q_f32(res + 4, vmulq_f32(hsum8x4(acc + 4), vs));
}

#define AT_T                     v8
#define AT_W                     8
#define AT_NT                    8
#define AT_ZERO()                v8_zero()
#define AT_FMA(acc, k, q)        fma8(acc, k, q)
#define AT_MUL_ADD(o, p, v)      mul_add8(o, p, v)
#define AT_LD_F32(p)             v8_f32(p)
#define AT_LDP_F32(p, m)         v8_f32p(p, m)
#define AT_ST_F32(p, v)          v8_store(p, v)
#define AT_STP_F32(p, m, v)      v8_store_p(p, m, v)
#define AT_LD(kt, row, e)        ld8(kt, row, e)
#define AT_LDP(kt, row, e, m)    ldp8(kt, row, e, m)
#define AT_TILE_OUT(acc, res, s) tile_out8(acc, res, s)
#define AT_JB                    64
#define AT_TT                    8
#define AT_SET1(x)               v8_set1(x)
#define AT_MUL(v, s)             v8_mul(v, s)
#define AT_FN(name)              gl_##name##_neon
#define AT_LINKAGE
#include "arch/attention_tmpl.h"
