/* NEON + i8mm (-march=armv8.2-a+dotprod+i8mm): Q2_K .. Q6_K and IQ4_XS
 * products with smmla, 2 rows x 2 activation columns per instruction.
 *
 * smmla(acc, A, B) adds the 2x2 integer products of A = [row a chunk |
 * row b chunk] and B = [column c chunk | column d chunk] (8-byte chunks)
 * into lanes {a.c, a.d, b.c, b.d}. Over the chunks of one sub-block that
 * is the tile of the 4 sub-block sums isum_j; times the scale vector
 * {sa_j, sa_j, sb_j, sb_j} and summed over j it is the tile of isum
 * (exact: the same integers as generic, any grouping). The mins' imin
 * tile comes from widening int16 products as in kquant_tmpl.h. Two row
 * pairs' tiles unzip to one vector per column with lane k = row k, and
 * the float update is kquant_tmpl.h's (generic's) expression, so results
 * are bit-identical to generic for every r0 / r1 and nb.
 *
 * Columns go in pairs (up to 2 pairs per tile, so a row pair's unpack
 * serves 4 columns); an odd last column goes to the dotprod kernel, which
 * is bit-identical too (one column would waste half of every smmla). The
 * activation chunks of a column pair are interleaved once per super-block
 * and tile, and reused by both row pairs. */
#include "arch/arm/neon/kquant_unpack.h"
#include "arch/arm/neon/neon.h"

#define KM_MAXCP 2 /* column pairs per tile */

/* [a chunk 2 i | b chunk 2 i], [a chunk 2 i + 1 | b chunk 2 i + 1] */
GL_ALWAYS_INLINE int8x16_t km_zip_lo(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
GL_ALWAYS_INLINE int8x16_t km_zip_hi(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}

/* bsums[i .. i + 7] (the member may sit at any address) */
GL_ALWAYS_INLINE int16x8_t km_bsums(const block_q8_K *x, int i)
{
    return vreinterpretq_s16_u8(vld1q_u8((const uint8_t *)x->bsums + 2 * i));
}

/* lanes summing to imin of one row (mins mn) and one column (x) */
GL_ALWAYS_INLINE int32x4_t km_imin(const kq_w *u, const block_q8_K *x, const int sub)
{
    if (sub == 32) { /* imin = sum_j m_j * (bsums[2 j] + bsums[2 j + 1]) */
        const int16x8_t b2 = vpaddq_s16(km_bsums(x, 0), km_bsums(x, 8));
        return vmlal_high_s16(vmull_s16(vget_low_s16(u->mn[0]), vget_low_s16(b2)), u->mn[0], b2);
    }
    const int16x8_t b0 = km_bsums(x, 0), b1 = km_bsums(x, 8); /* imin = sum_j m_j * bsums[j] */
    int32x4_t a = vmull_s16(vget_low_s16(u->mn[0]), vget_low_s16(b0));
    a = vmlal_high_s16(a, u->mn[0], b0);
    a = vmlal_s16(a, vget_low_s16(u->mn[1]), vget_low_s16(b1));
    return vmlal_high_s16(a, u->mn[1], b1);
}

#define KM_CAT2(a, b) a##b

/* KM_DEF(type, block type, unpack, SUB, MINS, d field, dmin field) */
#define KM_DEF(T, BT, UNPACK, SUB, MINS, DF, DMF)                                                  \
    /* Row pair (a, b) of super-block b x column pairs xz[0..ncp): isum tiles                      \
     * t[cp], imin tiles mt[cp] (lanes {a.c, a.d, b.c, b.d}). */                                   \
    GL_ALWAYS_INLINE void KM_CAT2(T, _pair)(                                                       \
        const BT *ba, const BT *bb, const block_q8_K *const *xs, int b, int8x16_t(*xz)[32],        \
        const int ncp, int32x4_t *t, int32x4_t *mt)                                                \
    {                                                                                              \
        kq_w ua, ub;                                                                               \
        __asm__ volatile("" ::: "memory");                                                         \
        UNPACK(ba, &ua);                                                                           \
        UNPACK(bb, &ub);                                                                           \
        int32_t sa[16], sb[16];                                                                    \
        for (int g = 0; g < 4 && 4 * g < 256 / SUB; g++) {                                         \
            vst1q_s32(sa + 4 * g, ua.sc[g]);                                                       \
            vst1q_s32(sb + 4 * g, ub.sc[g]);                                                       \
        }                                                                                          \
        for (int cp = 0; cp < ncp; cp++)                                                           \
            t[cp] = vdupq_n_s32(0);                                                                \
        _Pragma("GCC unroll 16") for (int j = 0; j < 256 / SUB; j++)                               \
        {                                                                                          \
            int32x4_t tj[KM_MAXCP];                                                                \
            for (int cp = 0; cp < ncp; cp++)                                                       \
                tj[cp] = vdupq_n_s32(0);                                                           \
            _Pragma("GCC unroll 2") for (int i = j * SUB / 16; i < (j + 1) * SUB / 16; i++)        \
            {                                                                                      \
                const int8x16_t z0 = km_zip_lo(ua.q[i], ub.q[i]),                                  \
                                z1 = km_zip_hi(ua.q[i], ub.q[i]);                                  \
                for (int cp = 0; cp < ncp; cp++) {                                                 \
                    tj[cp] = vmmlaq_s32(tj[cp], z0, xz[cp][2 * i]);                                \
                    tj[cp] = vmmlaq_s32(tj[cp], z1, xz[cp][2 * i + 1]);                            \
                }                                                                                  \
            }                                                                                      \
            const int32x4_t s = vcombine_s32(vdup_n_s32(sa[j]), vdup_n_s32(sb[j]));                \
            for (int cp = 0; cp < ncp; cp++)                                                       \
                t[cp] = vmlaq_s32(t[cp], tj[cp], s);                                               \
        }                                                                                          \
        if (MINS)                                                                                  \
            for (int cp = 0; cp < ncp; cp++) {                                                     \
                const block_q8_K *xc = xs[2 * cp] + b, *xd = xs[2 * cp + 1] + b;                   \
                mt[cp] = vpaddq_s32(vpaddq_s32(km_imin(&ua, xc, SUB), km_imin(&ua, xd, SUB)),      \
                                    vpaddq_s32(km_imin(&ub, xc, SUB), km_imin(&ub, xd, SUB)));     \
            }                                                                                      \
    }                                                                                              \
                                                                                                   \
    /* rows [0, m) of a 4-row tile x columns xs[0 .. 2 ncp) */                                     \
    GL_ALWAYS_INLINE void KM_CAT2(T, _mtile)(const char *w, size_t wrb,                            \
                                             const block_q8_K *const *xs, float *const *ys,        \
                                             int nsb, int m, const int ncp)                        \
    {                                                                                              \
        const BT *wr[4];                                                                           \
        for (int k = 0; k < 4; k++) /* rows past the range repeat the last one */                  \
            wr[k] = (const BT *)(w + (size_t)(k < m ? k : m - 1) * wrb);                           \
        float32x4_t acc[2 * KM_MAXCP];                                                             \
        for (int c = 0; c < 2 * ncp; c++)                                                          \
            acc[c] = vdupq_n_f32(0.0f);                                                            \
        for (int b = 0; b < nsb; b++) {                                                            \
            int8x16_t xz[KM_MAXCP][32];                                                            \
            for (int cp = 0; cp < ncp; cp++)                                                       \
                for (int i = 0; i < 16; i++) {                                                     \
                    const int8x16_t xc = vld1q_s8(xs[2 * cp][b].qs + 16 * i);                      \
                    const int8x16_t xd = vld1q_s8(xs[2 * cp + 1][b].qs + 16 * i);                  \
                    xz[cp][2 * i] = km_zip_lo(xc, xd);                                             \
                    xz[cp][2 * i + 1] = km_zip_hi(xc, xd);                                         \
                }                                                                                  \
            int32x4_t t01[KM_MAXCP], t23[KM_MAXCP], m01[KM_MAXCP], m23[KM_MAXCP];                  \
            KM_CAT2(T, _pair)(wr[0] + b, wr[1] + b, xs, b, xz, ncp, t01, m01);                     \
            KM_CAT2(T, _pair)(wr[2] + b, wr[3] + b, xs, b, xz, ncp, t23, m23);                     \
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
            for (int c = 0; c < 2 * ncp; c++) {                                                    \
                const int cp = c / 2;                                                              \
                /* lane k = row k: even columns from lanes 0 / 2 of the tiles */                   \
                const int32x4_t ps =                                                               \
                    c % 2 ? vuzp2q_s32(t01[cp], t23[cp]) : vuzp1q_s32(t01[cp], t23[cp]);           \
                float dxs;                                                                         \
                memcpy(&dxs, &xs[c][b].d, 4);                                                      \
                const float32x4_t dx = vdupq_n_f32(dxs);                                           \
                const float32x4_t a = vmulq_f32(vcvtq_f32_s32(ps), vmulq_f32(dx, dw));             \
                if (MINS) {                                                                        \
                    const int32x4_t ms =                                                           \
                        c % 2 ? vuzp2q_s32(m01[cp], m23[cp]) : vuzp1q_s32(m01[cp], m23[cp]);       \
                    const float32x4_t tt =                                                         \
                        vsubq_f32(a, vmulq_f32(vcvtq_f32_s32(ms), vmulq_f32(dx, dm)));             \
                    const uint32x4_t nomin = vandq_u32(vceqq_f32(dm, vdupq_n_f32(0.0f)),           \
                                                       vceqq_s32(ms, vdupq_n_s32(0)));             \
                    acc[c] = vaddq_f32(acc[c], vbslq_f32(nomin, a, tt));                           \
                } else {                                                                           \
                    acc[c] = vaddq_f32(acc[c], a);                                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (int c = 0; c < 2 * ncp; c++)                                                          \
            n4_store_rows(ys[c], acc[c], m);                                                       \
    }                                                                                              \
                                                                                                   \
    GL_DECL_MATMUL_FN(gl_matmul_##T##_neon_i8mm)                                                   \
    {                                                                                              \
        const int nsb = n / QK_K, nb2 = nb & ~1;                                                   \
        for (int r = r0; r < r1; r += 4) {                                                         \
            const int m = r1 - r < 4 ? r1 - r : 4;                                                 \
            const char *wt = (const char *)w + (size_t)r * w_row_bytes;                            \
            for (int c0 = 0; c0 < nb2; c0 += 2 * KM_MAXCP) {                                       \
                const int nc = nb2 - c0 < 2 * KM_MAXCP ? nb2 - c0 : 2 * KM_MAXCP;                  \
                const block_q8_K *xs[2 * KM_MAXCP];                                                \
                float *ys[2 * KM_MAXCP];                                                           \
                for (int c = 0; c < nc; c++) {                                                     \
                    xs[c] = (const block_q8_K *)((const char *)x + (size_t)(c0 + c) * x_stride);   \
                    ys[c] = y + (size_t)(c0 + c) * y_stride + r;                                   \
                }                                                                                  \
                if (nc == 2)                                                                       \
                    KM_CAT2(T, _mtile)(wt, w_row_bytes, xs, ys, nsb, m, 1);                        \
                else                                                                               \
                    KM_CAT2(T, _mtile)(wt, w_row_bytes, xs, ys, nsb, m, KM_MAXCP);                 \
            }                                                                                      \
        }                                                                                          \
        if (nb2 < nb)                                                                              \
            gl_matmul_##T##_neon_dotprod(w, w_row_bytes, (const char *)x + (size_t)nb2 * x_stride, \
                                         x_stride, y + (size_t)nb2 * y_stride, y_stride, n, r0,    \
                                         r1, 1);                                                   \
    }

KM_DEF(q2_K, block_q2_K, kq_unpack_q2_K, 16, 1, d, dmin)
KM_DEF(q3_K, block_q3_K, kq_unpack_q3_K, 16, 0, d, d)
KM_DEF(q4_K, block_q4_K, kq_unpack_q4_K, 32, 1, d, dmin)
KM_DEF(q5_K, block_q5_K, kq_unpack_q5_K, 32, 1, d, dmin)
KM_DEF(q6_K, block_q6_K, kq_unpack_q6_K, 16, 0, d, d)
KM_DEF(iq4_xs, block_iq4_xs, kq_unpack_iq4_xs, 32, 0, d, d)
