/* The bit unpacking of the K-quant row-group layouts (src/quant.h), written
 * once over the lane width: kx8.h includes it with ymm lanes (8 rows, the
 * AVX2 kernels) and arch/x86/avx512/kquant.h with zmm lanes (16 rows), a
 * row per 32-bit lane either way, with these macros:
 *   KL_FN(name)          name with the width's suffix (8 or 16)
 *   KL_V, KL_BYTES       the vector type and its size
 *   KL_LOAD(p)           unaligned load
 *   KL_LOAD_UNIT(p, pin) a unit's unaligned load (pin: zmm simd.h
 *                        gl512_loadu_unit)
 *   KL_AND KL_OR KL_SUB8 KL_SUB32 KL_SET1_8 KL_SET1_32
 *   KL_SRLI16 KL_SLLI16 KL_SRLI32 KL_SLLI32
 *   KL_ORAND(a, b, m)    a | (b & m)  (zmm: one vpternlogd)
 *   KL_SHUF(v, ctl)      vpshufb by a kx8.h control (a __m256i, the same
 *                        in every 128-bit lane)
 *   KL_DPWSSD(acc, a, b) acc + madd_epi16(a, b), exact (zmm: one vpdpwssd)
 * Only integer bit operations and exact integer sums, so both widths give
 * every row the values generic's unpacking does. No include guard: once
 * per width; the macros are undefined at the end. */

/* Q4_K / Q5_K: the rows' packed 6-bit sub-block scales and mins (three
 * loads A, B, C hold bytes 0-3, 4-7, 8-11 of each row's GGUF scales, so
 * per gl_k4_scale_min sc0..3 = A & 63, sc4..7 = (C & 15) | (A >> 6) << 4,
 * and the mins likewise from B and C >> 4) unpacked per byte: the scales
 * to sc[], the mins times the activation's 32-element sums into imin[c]. */
GL_ALWAYS_INLINE void KL_FN(kx_scales_mins)(const uint8_t *scales, const kx_xprep *const *xp,
                                            KL_V sc[2], KL_V *imin, const int nc)
{
    const KL_V m4 = KL_SET1_8(0x0f), m6 = KL_SET1_8(0x3f), m30 = KL_SET1_8(0x30);
    const KL_V a = KL_LOAD(scales), bv = KL_LOAD(scales + KL_BYTES),
               cv = KL_LOAD(scales + 2 * KL_BYTES);
    sc[0] = KL_AND(a, m6);
    sc[1] = KL_ORAND(KL_AND(cv, m4), KL_SRLI16(a, 2), m30);
    const KL_V mn[2] = { KL_AND(bv, m6),
                         KL_ORAND(KL_AND(KL_SRLI16(cv, 4), m4), KL_SRLI16(bv, 2), m30) };
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        const KL_V mp = KL_SHUF(mn[p / 2], kx_pair16(2 * (p % 2), 2 * (p % 2) + 1));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            imin[c] = KL_DPWSSD(imin[c], mp, KL_SET1_32(xp[c]->b4[p]));
    }
}

/* Q5_K's fifth bit, bit `bit` of each qh byte, moved to bit 4 (16-bit
 * shifts of at most 4 bring nothing from the neighbouring byte into it) */
GL_ALWAYS_INLINE KL_V KL_FN(kx_hbit)(KL_V h, int bit)
{
    return bit <= 4 ? (bit == 4 ? h : KL_SLLI16(h, 4 - bit)) : KL_SRLI16(h, bit - 4);
}

/* Q3_K: a group's three loads at g give eight vectors of u = q + 4 in
 * [0, 7]: three per load at bits 0-2 and 3-5, and two more from bits 6-7
 * of the first two loads with bit 2 from the third's */
GL_ALWAYS_INLINE void KL_FN(kx_q3_units)(const uint8_t *g, KL_V u[8], const int pin)
{
    const KL_V m7 = KL_SET1_8(7), m3 = KL_SET1_8(3), m4 = KL_SET1_8(4);
    const KL_V b0 = KL_LOAD_UNIT(g, pin), b1 = KL_LOAD_UNIT(g + KL_BYTES, pin),
               b2 = KL_LOAD_UNIT(g + 2 * KL_BYTES, pin);
    u[0] = KL_AND(b0, m7);
    u[1] = KL_AND(KL_SRLI16(b0, 3), m7);
    u[2] = KL_AND(b1, m7);
    u[3] = KL_AND(KL_SRLI16(b1, 3), m7);
    u[4] = KL_AND(b2, m7);
    u[5] = KL_AND(KL_SRLI16(b2, 3), m7);
    u[6] = KL_ORAND(KL_AND(KL_SRLI16(b0, 6), m3), KL_SRLI16(b2, 4), m4);
    u[7] = KL_ORAND(KL_AND(KL_SRLI16(b1, 6), m3), KL_SRLI16(b2, 5), m4);
}

/* Q3_K: the rows' scales - 32 as bytes, sc[t] byte b = scale 4 t + b: the
 * low 6 bits of three loads, and the fourth from their top two bits (bits
 * 0-1 from the first load's, 2-3 from the second's, 4-5 from the third's) */
GL_ALWAYS_INLINE void KL_FN(kx_q3_scales)(const uint8_t *scales, KL_V sc[4])
{
    const KL_V m6 = KL_SET1_8(0x3f), k32 = KL_SET1_8(32);
    const KL_V u0 = KL_LOAD(scales), u1 = KL_LOAD(scales + KL_BYTES),
               u2 = KL_LOAD(scales + 2 * KL_BYTES);
    sc[0] = KL_SUB8(KL_AND(u0, m6), k32);
    sc[1] = KL_SUB8(KL_AND(u1, m6), k32);
    sc[2] = KL_SUB8(KL_AND(u2, m6), k32);
    const KL_V t01 =
        KL_ORAND(KL_AND(KL_SRLI16(u0, 6), KL_SET1_8(0x03)), KL_SRLI16(u1, 4), KL_SET1_8(0x0c));
    sc[3] = KL_SUB8(KL_ORAND(t01, KL_SRLI16(u2, 2), KL_SET1_8(0x30)), k32);
}

/* Q2_K: the rows' 4-bit scales (sc[t] byte b = sub-block 4 t + b) and the
 * mins times the activation's 16-element sums into imin[c] */
GL_ALWAYS_INLINE void KL_FN(kx_q2_scales_mins)(const uint8_t *scales, const kx_xprep *const *xp,
                                               KL_V sc[4], KL_V *imin, const int nc)
{
    const KL_V m15 = KL_SET1_8(15);
    KL_V mn[4];
#pragma GCC unroll 4
    for (int t = 0; t < 4; t++) {
        const KL_V u = KL_LOAD(scales + KL_BYTES * t);
        sc[t] = KL_AND(u, m15);
        mn[t] = KL_AND(KL_SRLI16(u, 4), m15);
    }
#pragma GCC unroll 8
    for (int p = 0; p < 8; p++) {
        const KL_V mp = KL_SHUF(mn[p / 2], kx_pair16(2 * (p % 2), 2 * (p % 2) + 1));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            imin[c] = KL_DPWSSD(imin[c], mp, KL_SET1_32(xp[c]->b6[p]));
    }
}

/* Q2_K: unit q's four vectors of 2-bit quants u_s = (v >> 2 s) & 3 */
GL_ALWAYS_INLINE void KL_FN(kx_q2_units)(const uint8_t *q, KL_V u[4], const int pin)
{
    const KL_V m3 = KL_SET1_8(3);
    const KL_V v = KL_LOAD_UNIT(q, pin);
    u[0] = KL_AND(v, m3);
    u[1] = KL_AND(KL_SRLI16(v, 2), m3);
    u[2] = KL_AND(KL_SRLI16(v, 4), m3);
    u[3] = KL_AND(KL_SRLI16(v, 6), m3);
}

/* IQ4_XS: sub-block j's scale ls - 32 in every row's 32-bit lane, from
 * the lanes' 4-bit low parts l (4 j) and 2-bit high parts h (2 j) */
GL_ALWAYS_INLINE KL_V KL_FN(kx_iq4_scale)(KL_V l, KL_V h, int j)
{
    const KL_V lo = KL_AND(KL_SRLI32(l, 4 * j), KL_SET1_32(15));
    const KL_V hi = KL_AND(KL_SRLI32(h, 2 * j), KL_SET1_32(3));
    return KL_SUB32(KL_OR(lo, KL_SLLI32(hi, 4)), KL_SET1_32(32));
}

#undef KL_FN
#undef KL_V
#undef KL_BYTES
#undef KL_LOAD
#undef KL_LOAD_UNIT
#undef KL_AND
#undef KL_OR
#undef KL_SUB8
#undef KL_SUB32
#undef KL_SET1_8
#undef KL_SET1_32
#undef KL_SRLI16
#undef KL_SLLI16
#undef KL_SRLI32
#undef KL_SLLI32
#undef KL_ORAND
#undef KL_SHUF
#undef KL_DPWSSD
