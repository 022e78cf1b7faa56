/* Template: K-quant (Q2_K .. Q6_K) and IQ4_XS weights x Q8_K activations,
 * included once per ISA level by a file that first defines
 *   KQ_SUFFIX            name suffix: gl_matmul_<type>_<KQ_SUFFIX>
 *   kq_dot1(acc, w, x)   acc + 4 int32 lanes whose sum is the exact dot of
 *                        the 16 int8 w with the 16 int8 at x (any quants of
 *                        these formats: |w * x| <= 127 * 127)
 *   kq_dot2(acc, w0, w1, x)
 *                        the same for 32 pairs (w0 with x[0..15], w1 with
 *                        x[16..31]); may assume |w| <= 32, so that 4
 *                        products fit int16 (the plain-NEON version sums
 *                        them there before widening)
 * (always-inline functions).
 *
 * Exactness. Per super-block, a row's unpack gives its 256 quants as 16
 * int8 registers in element order, its sub-block scales as int32 lanes and
 * (Q2_K, Q4_K, Q5_K) its mins as int16 lanes. Every integer of
 * src/kernels.h (isum, imin) is then formed exactly: sub-block dots in
 * lanes, pairwise-added to one lane per sub-block, times the scales, and
 * the 4 rows' vectors pairwise-added so lane k holds row k's value. The
 * float update is generic's (arch/generic/kquants.c, kblock_dot), lanes
 * over the 4 rows of a tile:
 *   no mins:  sum = sum + (float)isum * (dx * dw)
 *   mins:     sum = sum + ((float)isum * (dx * dw) - (float)imin * (dx * dmin)),
 *             or the no-mins form where dmin == 0 and imin == 0 (generic's
 *             branch, selected per lane),
 * separate multiplies and adds (this folder builds with -ffp-contract=off).
 * So results are bit-identical to generic for every r0 / r1 and nb. A
 * weight super-block is unpacked once per tile and reused for up to
 * KQ_MC16 / KQ_MC32 activation columns. */

#include "arch/row_tiles.h"
#define KQ_MAXC GL_TILE_MAXC
/* Columns per tile of the 16- and 32-element sub-block types (<= KQ_MAXC):
 * more columns share a row's unpack, fewer keep the tile's state in
 * registers (the 16-sub-block types hold 4 scale vectors; the plain-NEON
 * dot needs more temporaries). */
#ifndef KQ_MC16
#define KQ_MC16 2
#endif
#ifndef KQ_MC32
#define KQ_MC32 4
#endif

#define KQ_CAT2(a, b) a##b
#define KQ_FN2(t, s)  gl_matmul_##t##_##s
#define KQ_FN(t, s)   KQ_FN2(t, s)

#include "arch/arm/neon/kquant_unpack.h"

/* ---- one row's super-block . one activation column ------------------------
 * *p: 4 lanes whose sum is isum = sum_j scale_j * isum_j (exact);
 * *m (mins types): lanes summing to imin. */

/* bsums[i .. i + 7] of an activation block (as bytes: the member may sit
 * at any address) */
GL_ALWAYS_INLINE int16x8_t kq_bsums(const block_q8_K *x, int i)
{
    return vreinterpretq_s16_u8(vld1q_u8((const uint8_t *)x->bsums + 2 * i));
}

/* 8 sub-blocks of 32 */
GL_ALWAYS_INLINE void kq_rowdot32(const kq_w *u, const block_q8_K *x, const int small,
                                  const int mins, int32x4_t *p, int32x4_t *m)
{
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t d[8];
#pragma GCC unroll 16
    for (int j = 0; j < 8; j++) {
        const int8_t *xq = x->qs + 32 * j;
        d[j] = small ? kq_dot2(z, u->q[2 * j], u->q[2 * j + 1], xq)
                     : kq_dot1(kq_dot1(z, u->q[2 * j], xq), u->q[2 * j + 1], xq + 16);
    }
    /* lane j of t0 / t1 = isum_j / isum_{4 + j} */
    const int32x4_t t0 = vpaddq_s32(vpaddq_s32(d[0], d[1]), vpaddq_s32(d[2], d[3]));
    const int32x4_t t1 = vpaddq_s32(vpaddq_s32(d[4], d[5]), vpaddq_s32(d[6], d[7]));
    *p = vmlaq_s32(vmulq_s32(t0, u->sc[0]), t1, u->sc[1]);
    if (mins) { /* imin = sum_j m_j * (bsums[2 j] + bsums[2 j + 1]) */
        const int16x8_t b2 = vpaddq_s16(kq_bsums(x, 0), kq_bsums(x, 8));
        *m = vmlal_high_s16(vmull_s16(vget_low_s16(u->mn[0]), vget_low_s16(b2)), u->mn[0], b2);
    }
}

/* 16 sub-blocks of 16 */
GL_ALWAYS_INLINE void kq_rowdot16(const kq_w *u, const block_q8_K *x, const int mins, int32x4_t *p,
                                  int32x4_t *m)
{
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t acc = z;
#pragma GCC unroll 16
    for (int g = 0; g < 4; g++) {
        int32x4_t d[4];
#pragma GCC unroll 16
        for (int k = 0; k < 4; k++)
            d[k] = kq_dot1(z, u->q[4 * g + k], x->qs + 16 * (4 * g + k));
        const int32x4_t t = vpaddq_s32(vpaddq_s32(d[0], d[1]), vpaddq_s32(d[2], d[3]));
        acc = vmlaq_s32(acc, t, u->sc[g]);
    }
    *p = acc;
    if (mins) { /* imin = sum_j m_j * bsums[j] */
        const int16x8_t b0 = kq_bsums(x, 0), b1 = kq_bsums(x, 8);
        int32x4_t a = vmull_s16(vget_low_s16(u->mn[0]), vget_low_s16(b0));
        a = vmlal_high_s16(a, u->mn[0], b0);
        a = vmlal_s16(a, vget_low_s16(u->mn[1]), vget_low_s16(b1));
        *m = vmlal_high_s16(a, u->mn[1], b1);
    }
}

/* ---- the matmul generator --------------------------------------------------
 * KQ_DEF(type, block type, unpack, SUB (16 / 32), SMALL (kq_dot2 allowed),
 *        MINS, d field, dmin field (= d when no mins), MC = columns per tile
 *        (<= KQ_MAXC)) */
#define KQ_DEF(T, BT, UNPACK, SUB, SMALL, MINS, DF, DMF, MC)                                       \
    /* r[c]: lanes summing to isum (no mins), or [isum | isum | imin | imin]                       \
     * halves (mins: vpaddq(p, m)), for column c */                                                \
    GL_ALWAYS_INLINE void KQ_CAT2(T, _row)(const BT *blk, const block_q8_K *const *xs, int b,      \
                                           const int nc, int32x4_t *r)                             \
    {                                                                                              \
        kq_w u;                                                                                    \
        /* one row at a time: keeps the compiler from interleaving rows (which                     \
         * spills the unpacked quants); the CPU overlaps them anyway */                            \
        __asm__ volatile("" ::: "memory");                                                         \
        UNPACK(blk, &u);                                                                           \
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++)                                       \
        {                                                                                          \
            int32x4_t p, mm = vdupq_n_s32(0);                                                      \
            if (SUB == 32)                                                                         \
                kq_rowdot32(&u, xs[c] + b, SMALL, MINS, &p, &mm);                                  \
            else                                                                                   \
                kq_rowdot16(&u, xs[c] + b, MINS, &p, &mm);                                         \
            r[c] = MINS ? vpaddq_s32(p, mm) : p;                                                   \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    GL_ALWAYS_INLINE void KQ_CAT2(T, _tile)(const char *w, size_t wrb,                             \
                                            const block_q8_K *const *xs, float *const *ys,         \
                                            int nsb, int m, const int nc)                          \
    {                                                                                              \
        const BT *wr[4];                                                                           \
        for (int k = 0; k < 4; k++) /* rows past the range repeat the last one */                  \
            wr[k] = (const BT *)(w + (size_t)(k < m ? k : m - 1) * wrb);                           \
        float32x4_t acc[KQ_MAXC];                                                                  \
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) acc[c] = vdupq_n_f32(0.0f);           \
        for (int b = 0; b < nsb; b++) {                                                            \
            /* rows pairwise: a01 = vpaddq(r0, r1), a23 = vpaddq(r2, r3); then                     \
             * no mins: isum lanes = vpaddq(a01, a23) (lane k = row k);                            \
             * mins: a01 = [isum0 imin0 isum1 imin1], a23 likewise: unzip */                       \
            int32x4_t a01[KQ_MAXC], a23[KQ_MAXC], t[KQ_MAXC], ps[KQ_MAXC], ms[KQ_MAXC];            \
            KQ_CAT2(T, _row)(wr[0] + b, xs, b, nc, a01);                                           \
            KQ_CAT2(T, _row)(wr[1] + b, xs, b, nc, t);                                             \
            _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) a01[c] =                          \
                vpaddq_s32(a01[c], t[c]);                                                          \
            KQ_CAT2(T, _row)(wr[2] + b, xs, b, nc, a23);                                           \
            KQ_CAT2(T, _row)(wr[3] + b, xs, b, nc, t);                                             \
            _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++)                                   \
            {                                                                                      \
                a23[c] = vpaddq_s32(a23[c], t[c]);                                                 \
                if (MINS) {                                                                        \
                    ps[c] = vuzp1q_s32(a01[c], a23[c]);                                            \
                    ms[c] = vuzp2q_s32(a01[c], a23[c]);                                            \
                } else {                                                                           \
                    ps[c] = vpaddq_s32(a01[c], a23[c]);                                            \
                    ms[c] = ps[c]; /* unused */                                                    \
                }                                                                                  \
            }                                                                                      \
            uint16x4_t dh = vdup_n_u16(0), mh = dh;                                                \
            dh = vset_lane_u16(gl_blk_d(&wr[0][b].DF), dh, 0);                                     \
            dh = vset_lane_u16(gl_blk_d(&wr[1][b].DF), dh, 1);                                     \
            dh = vset_lane_u16(gl_blk_d(&wr[2][b].DF), dh, 2);                                     \
            dh = vset_lane_u16(gl_blk_d(&wr[3][b].DF), dh, 3);                                     \
            if (MINS) {                                                                            \
                mh = vset_lane_u16(gl_blk_d(&wr[0][b].DMF), mh, 0);                                \
                mh = vset_lane_u16(gl_blk_d(&wr[1][b].DMF), mh, 1);                                \
                mh = vset_lane_u16(gl_blk_d(&wr[2][b].DMF), mh, 2);                                \
                mh = vset_lane_u16(gl_blk_d(&wr[3][b].DMF), mh, 3);                                \
            }                                                                                      \
            const float32x4_t dw = gl_h2f4(dh), dm = gl_h2f4(mh);                                  \
            _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++)                                   \
            {                                                                                      \
                float dxs;                                                                         \
                memcpy(&dxs, &xs[c][b].d, 4);                                                      \
                const float32x4_t dx = vdupq_n_f32(dxs);                                           \
                const float32x4_t a = vmulq_f32(vcvtq_f32_s32(ps[c]), vmulq_f32(dx, dw));          \
                if (MINS) {                                                                        \
                    const float32x4_t t =                                                          \
                        vsubq_f32(a, vmulq_f32(vcvtq_f32_s32(ms[c]), vmulq_f32(dx, dm)));          \
                    const uint32x4_t nomin = vandq_u32(vceqq_f32(dm, vdupq_n_f32(0.0f)),           \
                                                       vceqq_s32(ms[c], vdupq_n_s32(0)));          \
                    acc[c] = vaddq_f32(acc[c], vbslq_f32(nomin, a, t));                            \
                } else {                                                                           \
                    acc[c] = vaddq_f32(acc[c], a);                                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) n4_store_rows(ys[c], acc[c], m);      \
    }                                                                                              \
                                                                                                   \
    GL_DECL_MATMUL_FN(KQ_FN(T, KQ_SUFFIX))                                                         \
    {                                                                                              \
        const int nsb = n / QK_K;                                                                  \
        GL_ROW_TILES(KQ_CAT2(T, _tile), block_q8_K, 4, MC, nsb)                                    \
    }

KQ_DEF(q2_K, block_q2_K, kq_unpack_q2_K, 16, 1, 1, d, dmin, KQ_MC16)
KQ_DEF(q3_K, block_q3_K, kq_unpack_q3_K, 16, 1, 0, d, d, KQ_MC16)
KQ_DEF(q4_K, block_q4_K, kq_unpack_q4_K, 32, 1, 1, d, dmin, KQ_MC32)
KQ_DEF(q5_K, block_q5_K, kq_unpack_q5_K, 32, 1, 1, d, dmin, KQ_MC32)
KQ_DEF(q6_K, block_q6_K, kq_unpack_q6_K, 16, 1, 0, d, d, KQ_MC16)
KQ_DEF(iq4_xs, block_iq4_xs, kq_unpack_iq4_xs, 32, 0, 0, d, d, KQ_MC32)
