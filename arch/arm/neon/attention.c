/* NEON attention kernels (AArch64 baseline): the grouped-query forms over
 * F32 / F16 / Q8_0 caches, and the single-head Q8_0 ones (the single-head
 * F32 / F16 ones are in float.c).
 *
 * Scores: each dot product takes exactly the operations of float.c's
 * DEF_SCORES (8 lanes as two float32x4, lane l the elements i = l (mod 8)
 * in order with one FMA each, the len % 8 tail one zero-padded chunk,
 * gl_hsum8_f32's order, then * scale), so a group score is bit-identical
 * to the single-head slot's. A tile is R keys x C queries (R C = 8): a key
 * chunk is loaded and converted once for C queries, and the lane sums are
 * reduced four at a time by hsum8x4, gl_hsum8_f32's additions side by side.
 *
 * Accumulation: out[i] += p[j] * v_j[i], rows strictly in order, multiply
 * then add (-ffp-contract=off): bit-identical to generic for any split of
 * rows or heads. 8 elements x up to 8 heads per pass over a block of JB
 * rows, so the block's V rows stay in L1.
 *
 * Q8_0 elements are d * q, exact in float (11 x 8 significant bits). */
#include <string.h>

#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"
#include "half.h"

enum { KT_F32, KT_F16, KT_Q8 };
#define JB 64 /* V rows per block */

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
    return ldp8_q8(row, e, 8);
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

GL_ALWAYS_INLINE void fma8(v8 *acc, v8 k, v8 q)
{
    acc->a = vfmaq_f32(acc->a, k.a, q.a);
    acc->b = vfmaq_f32(acc->b, k.b, q.b);
}

/* res[r * C + c] = scale * (q_c . key r), R C == 8; keys past m repeat key
 * m - 1 (results unused). */
GL_ALWAYS_INLINE void scores_tile(const int kt, const int R, const int C, const char *k, size_t rs,
                                  int m, int e0, const float *const *qs, int len, float scale,
                                  float *res)
{
    const char *kr[8];
    for (int r = 0; r < R; r++)
        kr[r] = k + (size_t)(r < m ? r : m - 1) * rs;
    v8 acc[8];
    for (int t = 0; t < 8; t++)
        acc[t] = v8_zero();
    int i = 0;
    for (; i + 8 <= len; i += 8)
        for (int r = 0; r < R; r++) {
            const v8 kv = ld8(kt, kr[r], e0 + i);
            for (int c = 0; c < C; c++)
                fma8(&acc[r * C + c], kv, v8_f32(qs[c] + i));
        }
    if (i < len)
        for (int r = 0; r < R; r++) {
            const v8 kv = ldp8(kt, kr[r], e0 + i, len - i);
            for (int c = 0; c < C; c++)
                fma8(&acc[r * C + c], kv, v8_f32p(qs[c] + i, len - i));
        }
    const float32x4_t vs = vdupq_n_f32(scale);
    vst1q_f32(res, vmulq_f32(hsum8x4(acc), vs));
    vst1q_f32(res + 4, vmulq_f32(hsum8x4(acc + 4), vs));
}

GL_ALWAYS_INLINE void scores_rc(const int kt, const int R, const int C, float *scores, size_t ss,
                                const float *q, size_t qstr, int nq, const void *k, size_t rs,
                                int nk, int e0, int len, float scale)
{
    for (int j = 0; j < nk; j += R) {
        const int m = nk - j < R ? nk - j : R;
        for (int h = 0; h < nq; h += C) {
            const int nc = nq - h < C ? nq - h : C;
            const float *qs[8];
            for (int c = 0; c < C; c++)
                qs[c] = q + (size_t)(h + (c < nc ? c : nc - 1)) * qstr;
            float res[8];
            scores_tile(kt, R, C, (const char *)k + (size_t)j * rs, rs, m, e0, qs, len, scale, res);
            for (int c = 0; c < nc; c++)
                for (int r = 0; r < m; r++)
                    scores[(size_t)(h + c) * ss + j + r] = res[r * C + c];
        }
    }
}

GL_ALWAYS_INLINE void scores_g(const int kt, float *scores, size_t ss, const float *q, size_t qstr,
                               int nq, const void *k, size_t rs, int nk, int e0, int len,
                               float scale)
{
    if (nq >= 8)
        scores_rc(kt, 1, 8, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else if (nq >= 4)
        scores_rc(kt, 2, 4, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else if (nq >= 2)
        scores_rc(kt, 4, 2, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
    else
        scores_rc(kt, 8, 1, scores, ss, q, qstr, nq, k, rs, nk, e0, len, scale);
}

/* Elements [i, i + m) (m <= 8, FULL: m == 8) of HB heads over nr rows. */
GL_ALWAYS_INLINE void accum_blk(const int kt, const int HB, const int FULL, float *out, size_t os,
                                const float *p, size_t ps, const char *v, size_t rs, int nr, int e0,
                                int i, int m)
{
    v8 o[8];
    for (int h = 0; h < HB; h++)
        o[h] = FULL ? v8_f32(out + h * os + i) : v8_f32p(out + h * os + i, m);
    for (int j = 0; j < nr; j++) {
        const char *vr = v + (size_t)j * rs;
        const v8 vv = FULL ? ld8(kt, vr, e0 + i) : ldp8(kt, vr, e0 + i, m);
        for (int h = 0; h < HB; h++) {
            const float32x4_t pj = vdupq_n_f32(p[h * ps + j]);
            o[h].a = vaddq_f32(o[h].a, vmulq_f32(pj, vv.a));
            o[h].b = vaddq_f32(o[h].b, vmulq_f32(pj, vv.b));
        }
    }
    for (int h = 0; h < HB; h++) {
        if (FULL) {
            v8_store(out + h * os + i, o[h]);
        } else {
            float t[8];
            v8_store(t, o[h]);
            memcpy(out + h * os + i, t, (size_t)m * sizeof(float));
        }
    }
}

GL_ALWAYS_INLINE void accum_heads(const int kt, const int FULL, float *out, size_t os,
                                  const float *p, size_t ps, int nq, const char *v, size_t rs,
                                  int nr, int e0, int i, int m)
{
    int h = 0;
    for (; h + 8 <= nq; h += 8)
        accum_blk(kt, 8, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
    if (nq - h >= 4) {
        accum_blk(kt, 4, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
        h += 4;
    }
    if (nq - h >= 2) {
        accum_blk(kt, 2, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
        h += 2;
    }
    if (nq - h >= 1)
        accum_blk(kt, 1, FULL, out + h * os, os, p + h * ps, ps, v, rs, nr, e0, i, m);
}

GL_ALWAYS_INLINE void accum_g(const int kt, float *out, size_t os, const float *p, size_t ps,
                              int nq, const void *v, size_t rs, int nr, int e0, int len)
{
    for (int j0 = 0; j0 < nr; j0 += JB) {
        const int jn = nr - j0 < JB ? nr - j0 : JB;
        const char *vb = (const char *)v + (size_t)j0 * rs;
        int i = 0;
        for (; i + 8 <= len; i += 8)
            accum_heads(kt, 1, out, os, p + j0, ps, nq, vb, rs, jn, e0, i, 8);
        if (i < len)
            accum_heads(kt, 0, out, os, p + j0, ps, nq, vb, rs, jn, e0, i, len - i);
    }
}

GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f32_neon)
{
    scores_g(KT_F32, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, 0, len, scale);
}
GL_DECL_ATTN_SCORES_G_FN(gl_attn_scores_g_f16_neon)
{
    scores_g(KT_F16, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, 0, len, scale);
}
GL_DECL_ATTN_SCORES_Q8_G_FN(gl_attn_scores_q8_g_neon)
{
    scores_g(KT_Q8, scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, off, len,
             scale);
}
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f32_neon)
{
    accum_g(KT_F32, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, 0, len);
}
GL_DECL_ATTN_ACCUM_G_FN(gl_attn_accum_g_f16_neon)
{
    accum_g(KT_F16, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, 0, len);
}
GL_DECL_ATTN_ACCUM_Q8_G_FN(gl_attn_accum_q8_g_neon)
{
    accum_g(KT_Q8, out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, off, len);
}

/* single-head Q8_0: one query of the group forms */
GL_DECL_ATTN_SCORES_Q8_FN(gl_attn_scores_q8_neon)
{
    scores_g(KT_Q8, scores, 0, q, 0, 1, k, row_stride, n_keys, off, len, scale);
}
GL_DECL_ATTN_ACCUM_Q8_FN(gl_attn_accum_q8_neon)
{
    accum_g(KT_Q8, out, 0, p, 0, 1, v, row_stride, n_rows, off, len);
}
