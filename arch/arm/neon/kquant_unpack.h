/* Unpackers of the K-quant (Q2_K .. Q6_K) and IQ4_XS super-blocks into
 * NEON registers, shared by the K-quant kernels of every level
 * (kquant_tmpl.h: neon, neon-dotprod; kquants_i8mm.c). Pure integer
 * bit manipulation, exact: quants as they enter generic's integer sums
 * (arch/generic/kquants.c, unpack_*), scales and mins likewise. All
 * static inline, so each file compiles them with its own -march. */
#ifndef GENLOOP_ARCH_ARM_NEON_KQUANT_UNPACK_H
#define GENLOOP_ARCH_ARM_NEON_KQUANT_UNPACK_H

#include "arch/arm/neon/util.h"

/* One row's super-block in registers. */
typedef struct {
    int8x16_t q[16]; /* element order: register i = elements 16 i .. 16 i + 15 */
    int32x4_t sc[4]; /* sub-block scales: lanes of sc[j / 4], j = sub-block */
    int16x8_t mn[2]; /* mins (Q2_K: 16 in mn[0..1]; Q4_K / Q5_K: 8 in mn[0]) */
} kq_w;

/* ---- unpackers ---------------------------------------------------------- */

/* bytes (0..255 values) -> 4 int32 vectors of lanes */
GL_ALWAYS_INLINE void kq_widen16_u8(uint8x16_t v, int32x4_t *out)
{
    const uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_high_u8(v);
    out[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo)));
    out[1] = vreinterpretq_s32_u32(vmovl_high_u16(lo));
    out[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi)));
    out[3] = vreinterpretq_s32_u32(vmovl_high_u16(hi));
}

GL_ALWAYS_INLINE void kq_widen16_s8(int8x16_t v, int32x4_t *out)
{
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
    out[0] = vmovl_s16(vget_low_s16(lo));
    out[1] = vmovl_high_s16(lo);
    out[2] = vmovl_s16(vget_low_s16(hi));
    out[3] = vmovl_high_s16(hi);
}

/* The 6-bit scales and mins of Q4_K / Q5_K (gl_k4_scale_min), 4 at a time
 * in 32-bit words: bytes 0..3 of *sc8 = scales 0..3, bytes 4..7 = 4..7. */
GL_ALWAYS_INLINE void kq_scale_min_k4(const uint8_t *scales, uint8x8_t *sc8, uint8x8_t *mn8)
{
    uint32_t s[3]; /* three scalar loads (a memcpy of the array may go through the stack) */
    memcpy(&s[0], scales, 4);
    memcpy(&s[1], scales + 4, 4);
    memcpy(&s[2], scales + 8, 4);
    const uint32_t sc_lo = s[0] & 0x3f3f3f3fu, mn_lo = s[1] & 0x3f3f3f3fu;
    const uint32_t sc_hi = (s[2] & 0x0f0f0f0fu) | ((s[0] >> 6) & 0x03030303u) << 4;
    const uint32_t mn_hi = ((s[2] >> 4) & 0x0f0f0f0fu) | ((s[1] >> 6) & 0x03030303u) << 4;
    *sc8 = vcreate_u8((uint64_t)sc_lo | (uint64_t)sc_hi << 32);
    *mn8 = vcreate_u8((uint64_t)mn_lo | (uint64_t)mn_hi << 32);
}

GL_ALWAYS_INLINE void kq_k4_scales(const uint8_t *scales, kq_w *u)
{
    uint8x8_t sc8, mn8;
    kq_scale_min_k4(scales, &sc8, &mn8);
    const uint16x8_t sc16 = vmovl_u8(sc8);
    u->sc[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(sc16)));
    u->sc[1] = vreinterpretq_s32_u32(vmovl_high_u16(sc16));
    u->mn[0] = vreinterpretq_s16_u16(vmovl_u8(mn8));
}

/* Q4_K: qs[32 i + l] low nibble = element 64 i + l, high = 64 i + 32 + l. */
GL_ALWAYS_INLINE void kq_unpack_q4_K(const block_q4_K *b, kq_w *u)
{
    kq_k4_scales(b->scales, u);
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        const uint8x16_t a = vld1q_u8(b->qs + 32 * i), c = vld1q_u8(b->qs + 32 * i + 16);
        u->q[4 * i + 0] = vreinterpretq_s8_u8(vandq_u8(a, m4));
        u->q[4 * i + 1] = vreinterpretq_s8_u8(vandq_u8(c, m4));
        u->q[4 * i + 2] = vreinterpretq_s8_u8(vshrq_n_u8(a, 4));
        u->q[4 * i + 3] = vreinterpretq_s8_u8(vshrq_n_u8(c, 4));
    }
}

/* Q5_K: Q4_K plus bit 2 i (elements 64 i + l) or 2 i + 1 (64 i + 32 + l)
 * of qh[l] as bit 4. */
GL_ALWAYS_INLINE void kq_unpack_q5_K(const block_q5_K *b, kq_w *u)
{
    kq_k4_scales(b->scales, u);
    const uint8x16_t m4 = vdupq_n_u8(0x0f), m16 = vdupq_n_u8(0x10);
    uint8x16_t h0 = vld1q_u8(b->qh), h1 = vld1q_u8(b->qh + 16);
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) { /* h0, h1 = qh >> 2 i */
        const uint8x16_t a = vld1q_u8(b->qs + 32 * i), c = vld1q_u8(b->qs + 32 * i + 16);
        u->q[4 * i + 0] =
            vreinterpretq_s8_u8(vorrq_u8(vandq_u8(a, m4), vandq_u8(vshlq_n_u8(h0, 4), m16)));
        u->q[4 * i + 1] =
            vreinterpretq_s8_u8(vorrq_u8(vandq_u8(c, m4), vandq_u8(vshlq_n_u8(h1, 4), m16)));
        u->q[4 * i + 2] =
            vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(a, 4), vandq_u8(vshlq_n_u8(h0, 3), m16)));
        u->q[4 * i + 3] =
            vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(c, 4), vandq_u8(vshlq_n_u8(h1, 3), m16)));
        h0 = vshrq_n_u8(h0, 2);
        h1 = vshrq_n_u8(h1, 2);
    }
}

/* Q6_K: in half h, element 128 h + 32 s + 16 t + l is register 8 h + 2 s + t:
 * low 4 bits from ql[64 h + 32 (s & 1) + 16 t + l] (low nibble for s < 2),
 * high 2 bits (qh[32 h + 16 t + l] >> 2 s) & 3; q = that - 32. */
GL_ALWAYS_INLINE void kq_unpack_q6_K(const block_q6_K *b, kq_w *u)
{
    kq_widen16_s8(vld1q_s8(b->scales), u->sc);
    const uint8x16_t m63 = vdupq_n_u8(0x3f);
    const int8x16_t k32 = vdupq_n_s8(32);
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
        const uint8_t *ql = b->ql + 64 * h, *qh = b->qh + 32 * h;
        const uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 16);
        const uint8x16_t l2 = vld1q_u8(ql + 32), l3 = vld1q_u8(ql + 48);
        const uint8x16_t q0 = vld1q_u8(qh), q1 = vld1q_u8(qh + 16);
        /* shift-and-insert, then keep the 6 bits: sli(a, b, 4) = b << 4 | a & 15,
         * sri(a, b, 4) = b >> 4 | a & 0xf0 */
        const uint8x16_t q0s = vshrq_n_u8(q0, 2), q1s = vshrq_n_u8(q1, 2);
        uint8x16_t v[8];
        v[0] = vandq_u8(vsliq_n_u8(l0, q0, 4), m63); /* l0 & 15 | (q0 & 3) << 4 */
        v[1] = vandq_u8(vsliq_n_u8(l1, q1, 4), m63);
        v[2] = vandq_u8(vsliq_n_u8(l2, q0s, 4), m63); /* l2 & 15 | (q0 >> 2 & 3) << 4 */
        v[3] = vandq_u8(vsliq_n_u8(l3, q1s, 4), m63);
        v[4] = vandq_u8(vsriq_n_u8(q0, l0, 4), m63); /* l0 >> 4 | q0 & 0x30 */
        v[5] = vandq_u8(vsriq_n_u8(q1, l1, 4), m63);
        v[6] = vandq_u8(vsriq_n_u8(q0s, l2, 4), m63); /* l2 >> 4 | (q0 >> 2) & 0x30 */
        v[7] = vandq_u8(vsriq_n_u8(q1s, l3, 4), m63);
#pragma GCC unroll 16
        for (int i = 0; i < 8; i++)
            u->q[8 * h + i] = vsubq_s8(vreinterpretq_s8_u8(v[i]), k32);
    }
}

/* Q3_K's 16 six-bit scales (stored + 32): low 4 bits of scale j in byte j
 * (j < 8, low nibble) or byte j - 8 (high nibble); high 2 bits at bits
 * 2 (j / 4) of byte 8 + j % 4. */
GL_ALWAYS_INLINE void kq_q3_K_scales(const uint8_t *sc, int32x4_t *out)
{
    const uint8x8_t s0 = vld1_u8(sc);
    uint32_t hw;
    memcpy(&hw, sc + 8, 4);
    const uint8x16_t lo = vcombine_u8(vand_u8(s0, vdup_n_u8(15)), vshr_n_u8(s0, 4));
    static const int8_t shr[16] = { 0, 0, 0, 0, -2, -2, -2, -2, -4, -4, -4, -4, -6, -6, -6, -6 };
    const uint8x16_t hb = vreinterpretq_u8_u32(vdupq_n_u32(hw)); /* byte j = sc[8 + j % 4] */
    const uint8x16_t hi = vshlq_n_u8(vandq_u8(vshlq_u8(hb, vld1q_s8(shr)), vdupq_n_u8(3)), 4);
    kq_widen16_s8(vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(lo, hi)), vdupq_n_s8(32)), out);
}

/* Q3_K: element 128 h + 32 s + 16 t + l (register 8 h + 2 s + t): low 2
 * bits (qs[32 h + 16 t + l] >> 2 s) & 3, high bit (hmask[16 t + l] >>
 * (4 h + s)) & 1; q = low | high << 2, minus 4. */
GL_ALWAYS_INLINE void kq_unpack_q3_K(const block_q3_K *b, kq_w *u)
{
    kq_q3_K_scales(b->scales, u->sc);
    const uint8x16_t m7 = vdupq_n_u8(7);
    const int8x16_t k4 = vdupq_n_s8(4);
    uint8x16_t hm0 = vld1q_u8(b->hmask), hm1 = vld1q_u8(b->hmask + 16);
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
        uint8x16_t a = vld1q_u8(b->qs + 32 * h), c = vld1q_u8(b->qs + 32 * h + 16);
#pragma GCC unroll 16
        for (int s = 0; s < 4; s++) { /* a, c = qs >> 2 s; hm0, hm1 = hmask >> (4 h + s) */
            /* sli(a, hm, 2) & 7 = (a & 3) | (hm & 1) << 2 */
            const uint8x16_t v0 = vandq_u8(vsliq_n_u8(a, hm0, 2), m7);
            const uint8x16_t v1 = vandq_u8(vsliq_n_u8(c, hm1, 2), m7);
            u->q[8 * h + 2 * s] = vsubq_s8(vreinterpretq_s8_u8(v0), k4);
            u->q[8 * h + 2 * s + 1] = vsubq_s8(vreinterpretq_s8_u8(v1), k4);
            a = vshrq_n_u8(a, 2);
            c = vshrq_n_u8(c, 2);
            hm0 = vshrq_n_u8(hm0, 1);
            hm1 = vshrq_n_u8(hm1, 1);
        }
    }
}

/* Q2_K: register 8 h + 2 s + t = (qs[32 h + 16 t + l] >> 2 s) & 3; scales
 * low nibbles, mins high nibbles of scales[j]. */
GL_ALWAYS_INLINE void kq_unpack_q2_K(const block_q2_K *b, kq_w *u)
{
    const uint8x16_t s = vld1q_u8(b->scales), m3 = vdupq_n_u8(3);
    kq_widen16_u8(vandq_u8(s, vdupq_n_u8(15)), u->sc);
    const uint8x16_t mn = vshrq_n_u8(s, 4);
    u->mn[0] = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mn)));
    u->mn[1] = vreinterpretq_s16_u16(vmovl_high_u8(mn));
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
        uint8x16_t a = vld1q_u8(b->qs + 32 * h), c = vld1q_u8(b->qs + 32 * h + 16);
#pragma GCC unroll 16
        for (int k = 0; k < 4; k++) { /* a, c = qs >> 2 k */
            u->q[8 * h + 2 * k] = vreinterpretq_s8_u8(vandq_u8(a, m3));
            u->q[8 * h + 2 * k + 1] = vreinterpretq_s8_u8(vandq_u8(c, m3));
            a = vshrq_n_u8(a, 2);
            c = vshrq_n_u8(c, 2);
        }
    }
}

/* IQ4_XS: qs[16 j + l] low nibble = element 32 j + l, high = 32 j + 16 + l,
 * both indices into gl_iq4nl_values; scale j = (nibble j of scales_l |
 * bits 2 j, 2 j + 1 of scales_h << 4) - 32. */
GL_ALWAYS_INLINE void kq_unpack_iq4_xs(const block_iq4_xs *b, kq_w *u)
{
    uint32_t sl;
    memcpy(&sl, b->scales_l, 4);
    const uint8x8_t l4 = vcreate_u8(sl);
    const uint8x8_t lo = vzip1_u8(vand_u8(l4, vdup_n_u8(15)), vshr_n_u8(l4, 4));
    static const int16_t shr[8] = { 0, -2, -4, -6, -8, -10, -12, -14 };
    const uint16x8_t hs =
        vandq_u16(vshlq_u16(vdupq_n_u16(b->scales_h), vld1q_s16(shr)), vdupq_n_u16(3));
    const int16x8_t ls = vsubq_s16(
        vreinterpretq_s16_u16(vorrq_u16(vmovl_u8(lo), vshlq_n_u16(hs, 4))), vdupq_n_s16(32));
    u->sc[0] = vmovl_s16(vget_low_s16(ls));
    u->sc[1] = vmovl_high_s16(ls);
    const int8x16_t tbl = vld1q_s8(gl_iq4nl_values);
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
#pragma GCC unroll 16
    for (int j = 0; j < 8; j++) {
        const uint8x16_t v = vld1q_u8(b->qs + 16 * j);
        u->q[2 * j] = vqtbl1q_s8(tbl, vandq_u8(v, m4));
        u->q[2 * j + 1] = vqtbl1q_s8(tbl, vshrq_n_u8(v, 4));
    }
}

#endif
