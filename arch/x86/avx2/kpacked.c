/* AVX2 products over the K-quant row groups Q4_Kx8, Q5_Kx8, Q6_Kx8, Q3_Kx8,
 * Q2_Kx8 and IQ4_XSx8 (src/quant.h);
 * loop structure and exactness argument in kx8_tmpl.h. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/kx8.h"

#define KX_C 4

/* Q4_Kx8. Scales and mins unpacked per byte (kx_unpack_tmpl.h). Quants:
 * maddubs(nibble, x) pairs are at most 2 * 15 * 128; a sub-block's 8 loads
 * sum to at most 30720 in int16, then one madd with the sub-block's scale
 * (an int16 pair per lane) widens to int32. Exact. */
GL_ALWAYS_INLINE void kx_isums_q4K_avx2(const block_q4_Kx8 *blk, const int8_t *const *xq,
                                        const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                                        const int nc, const kx_pf *pf)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    __m256i sc[2];
    kx_scales_mins8(blk->scales, xp, sc, imin, nc);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        const __m256i s_lo = _mm256_shuffle_epi8(sc[i / 2], kx_pair16(2 * (i % 2), 2 * (i % 2)));
        const __m256i s_hi =
            _mm256_shuffle_epi8(sc[i / 2], kx_pair16(2 * (i % 2) + 1, 2 * (i % 2) + 1));
        __m256i pl[KX_C], ph[KX_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            pl[c] = ph[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            if (pf)
                kx_pf_part(pf, 8 * i + k, 32, sizeof *blk);
            const __m256i v = gl256_loadu_unit(blk->qs + 32 * (8 * i + k));
            const __m256i lo = _mm256_and_si256(v, m4);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                const __m256i xl = _mm256_set1_epi32(x8_load32(xq[c] + 64 * i + 4 * k));
                const __m256i xh = _mm256_set1_epi32(x8_load32(xq[c] + 64 * i + 32 + 4 * k));
                pl[c] = _mm256_add_epi16(pl[c], _mm256_maddubs_epi16(lo, xl));
                ph[c] = _mm256_add_epi16(ph[c], _mm256_maddubs_epi16(hi, xh));
            }
        }
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] = gl256_settled(
                _mm256_add_epi32(isum[c], _mm256_add_epi32(_mm256_madd_epi16(pl[c], s_lo),
                                                           _mm256_madd_epi16(ph[c], s_hi))));
    }
}

#define KX_NAME gl_matmul_q4_K_x8_avx2
#define KX_WBLK block_q4_Kx8
/* the tile path, and decode with the stream's prefetches spread over the
 * block's loads (kx8_tmpl.h) */
#define KX_ISUMS(b, q, p, s, m, n)    kx_isums_q4K_avx2(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) kx_isums_q4K_avx2(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    1
#include "arch/x86/avx2/kx8_tmpl.h"

/* Q6_Kx8. Stored quants u = q + 32 in [0, 63] (unsigned operand), so
 * isum = sum_j sc_j (sum u x)_j - 32 sum_j sc_j bsums_j. maddubs(u, x)
 * pairs are at most 2 * 63 * 128 = 16128: two loads' pairs add up in int16
 * (32256), then a madd with the sub-block's signed scale (vpshufb puts the
 * int8 scale in the high byte of each int16, srai 8 sign-extends) widens
 * to int32. Chunk t = 4 h + s (elements 128 h + 32 s + l): sub-block 2 t
 * for l < 16 (ql / qh units k < 4), 2 t + 1 for the rest. Exact. */
GL_ALWAYS_INLINE __m256i kx_q6_scale(const __m256i *s4, int a, int b)
{
    return _mm256_srai_epi16(_mm256_shuffle_epi8(s4[a / 4], kx_pair16_hi(a % 4, b % 4)), 8);
}

/* sum_j sc_j bsums_j per lane (the quants' offset, Q6_K's 32 and Q3_K's
 * 4, times it), for the signed byte scales s4 (byte b of s4[t]: scale
 * 4 t + b, kx_q6_scale) and each column's bsum pairs */
GL_ALWAYS_INLINE void kx_scaled_bsums(const __m256i *s4, const kx_xprep *const *xp, __m256i *corr,
                                      const int nc)
{
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        corr[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int p = 0; p < 8; p++) {
        const __m256i sp = kx_q6_scale(s4, 2 * p, 2 * p + 1);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            corr[c] =
                _mm256_add_epi32(corr[c], _mm256_madd_epi16(sp, _mm256_set1_epi32(xp[c]->b6[p])));
    }
}

GL_ALWAYS_INLINE void kx_isums_q6K_avx2(const block_q6_Kx8 *blk, const int8_t *const *xq,
                                        const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                                        const int nc, const kx_pf *pf)
{
    (void)imin;
    __m256i s4[4];
#pragma GCC unroll 4
    for (int u = 0; u < 4; u++)
        s4[u] = _mm256_loadu_si256((const __m256i *)(blk->scales + 32 * u));
    __m256i corr[KX_C];
    kx_scaled_bsums(s4, xp, corr, nc);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 4
        for (int s = 0; s < 4; s++)
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++) {
                const int j = 8 * h + 2 * s + half;
                const __m256i sc = kx_q6_scale(s4, j, j);
#pragma GCC unroll 2
                for (int kp = 0; kp < 2; kp++) {
                    const int k = 4 * half + 2 * kp;
                    if (pf)
                        kx_pf_part(pf, 16 * h + 4 * s + 2 * half + kp, 32, sizeof *blk);
                    const __m256i u0 = kx_q6_u(blk, h, s, k), u1 = kx_q6_u(blk, h, s, k + 1);
                    const int xo = 128 * h + 32 * s + 4 * k;
#pragma GCC unroll 8
                    for (int c = 0; c < nc; c++) {
                        const __m256i p = _mm256_add_epi16(
                            _mm256_maddubs_epi16(u0, _mm256_set1_epi32(x8_load32(xq[c] + xo))),
                            _mm256_maddubs_epi16(u1, _mm256_set1_epi32(x8_load32(xq[c] + xo + 4))));
                        isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(p, sc));
                    }
                }
            }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        isum[c] = _mm256_sub_epi32(isum[c], _mm256_slli_epi32(corr[c], 5));
}

#define KX_NAME                       gl_matmul_q6_K_x8_avx2
#define KX_WBLK                       block_q6_Kx8
#define KX_ISUMS(b, q, p, s, m, n)    kx_isums_q6K_avx2(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) kx_isums_q6K_avx2(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    0
#include "arch/x86/avx2/kx8_tmpl.h"

/* Q3_Kx8 (layout: src/quant.h). A group's three 32-byte loads give eight
 * vectors of u = q + 4 in [0, 7]; sub-block j = 8 h + 2 s + half takes
 * four maddubs (pairs at most 2 * 7 * 128, four of them 7168: int16),
 * then one madd with its scale - 32 (int16 pair per lane) widens to int32.
 * The -4 offset: isum -= 4 sum_j sc_j bsums_j (pairs of scales madd the
 * bsum pairs b6). Exact. */
/* the sub16 template's state (kx8_sub16_tmpl.h): the scales, and Q3_K's
 * offset correction */
typedef struct {
    __m256i sc[4];
    __m256i corr[KX_C];
} kx8_s16;

GL_ALWAYS_INLINE void kx_q3_prep(const block_q3_Kx8 *blk, const kx_xprep *const *xp, kx8_s16 *st,
                                 const int nc)
{
    kx_q3_scales8(blk->scales, st->sc);
    kx_scaled_bsums(st->sc, xp, st->corr, nc);
}

GL_ALWAYS_INLINE void kx_q3_finish(const kx8_s16 *st, __m256i *isum, const int nc)
{
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        isum[c] = _mm256_sub_epi32(isum[c], _mm256_slli_epi32(st->corr[c], 2));
}

#define KS_ISUMS                       kx_isums_q3K_avx2
#define KS_WBLK                        block_q3_Kx8
#define KS_KSTEP                       2
#define KS_UNITS(blk, h, k, u)         kx_q3_units8((blk)->q + 96 * (4 * (h) + (k) / 2), u, 0)
#define KS_PREP(blk, xp, st, imin, nc) ((void)(imin), kx_q3_prep(blk, xp, st, nc))
#define KS_SCALE(st, j)                kx_q6_scale((st)->sc, j, j)
#define KS_FINISH(st, isum, nc)        kx_q3_finish(st, isum, nc)
#include "arch/x86/avx2/kx8_sub16_tmpl.h"

#define KX_NAME                       gl_matmul_q3_K_x8_avx2
#define KX_WBLK                       block_q3_Kx8
#define KX_ISUMS(b, q, p, s, m, n)    kx_isums_q3K_avx2(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) kx_isums_q3K_avx2(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    0
#include "arch/x86/avx2/kx8_tmpl.h"

/* IQ4_XSx8 (layout: src/quant.h). Each nibble looks up its signed value
 * w (vpshufb of gl_iq4nl_values); maddubs takes |w| (<= 127) against the
 * activation with w's sign (vpsign: Q8_K quants are in [-127, 127], so no
 * -128 to negate): pairs at most 2 * 127 * 127, inside int16; one madd per
 * maddubs with the sub-block's scale ls - 32 (int16 pair per lane) widens
 * to int32. Exact. */
GL_ALWAYS_INLINE __m256i kx_iq4_scale_pair(__m256i l, __m256i h, int j)
{
    /* the low int16 of each lane's scale into both halves */
    return _mm256_shuffle_epi8(kx_iq4_scale8(l, h, j),
                               _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13,
                                                0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12,
                                                13));
}

GL_ALWAYS_INLINE void kx_isums_iq4xs_avx2(const block_iq4_xsx8 *blk, const int8_t *const *xq,
                                          const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                                          const int nc, const kx_pf *pf)
{
    (void)xp;
    (void)imin;
    const __m256i tbl =
        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)gl_iq4nl_values));
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i l = _mm256_loadu_si256((const __m256i *)blk->scales_l);
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)blk->scales_h));
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
        if (pf)
            kx_pf_part(pf, j, 8, sizeof *blk);
        const __m256i sj = kx_iq4_scale_pair(l, h, j);
#pragma GCC unroll 4
        for (int kk = 0; kk < 4; kk++) {
            const __m256i v = gl256_loadu_unit(blk->qs + 32 * (4 * j + kk));
            const __m256i wl = _mm256_shuffle_epi8(tbl, _mm256_and_si256(v, m4));
            const __m256i wh =
                _mm256_shuffle_epi8(tbl, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
            const __m256i al = _mm256_abs_epi8(wl), ah = _mm256_abs_epi8(wh);
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                const __m256i xl = _mm256_set1_epi32(x8_load32(xq[c] + 32 * j + 4 * kk));
                const __m256i xh = _mm256_set1_epi32(x8_load32(xq[c] + 32 * j + 16 + 4 * kk));
                const __m256i pl = _mm256_maddubs_epi16(al, _mm256_sign_epi8(xl, wl));
                const __m256i ph = _mm256_maddubs_epi16(ah, _mm256_sign_epi8(xh, wh));
                isum[c] = _mm256_add_epi32(isum[c], _mm256_add_epi32(_mm256_madd_epi16(pl, sj),
                                                                     _mm256_madd_epi16(ph, sj)));
            }
        }
    }
}

#define KX_NAME                       gl_matmul_iq4_xs_x8_avx2
#define KX_WBLK                       block_iq4_xsx8
#define KX_ISUMS(b, q, p, s, m, n)    kx_isums_iq4xs_avx2(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) kx_isums_iq4xs_avx2(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    0
#include "arch/x86/avx2/kx8_tmpl.h"

/* Q2_Kx8 (layout: src/quant.h). Unit k of qs gives four vectors of 2-bit
 * quants u_s = (v >> 2 s) & 3 (sub-block 8 h + 2 s + half, h = k / 8,
 * half = k % 8 / 4); a sub-block's four maddubs (pairs at most 2 * 3 *
 * 128) add up in int16, then one madd with its 4-bit scale widens to
 * int32; the mins madd the bsum pairs (b6). Exact. */
#define KS_ISUMS                       kx_isums_q2K_avx2
#define KS_WBLK                        block_q2_Kx8
#define KS_KSTEP                       1
#define KS_UNITS(blk, h, k, u)         kx_q2_units8((blk)->qs + 32 * (8 * (h) + (k)), u, 0)
#define KS_PREP(blk, xp, st, imin, nc) kx_q2_scales_mins8((blk)->scales, xp, (st)->sc, imin, nc)
#define KS_SCALE(st, j)                _mm256_shuffle_epi8((st)->sc[(j) / 4], kx_pair16((j) % 4, (j) % 4))
#define KS_FINISH(st, isum, nc)        ((void)(st), (void)(isum))
#include "arch/x86/avx2/kx8_sub16_tmpl.h"

#define KX_NAME                       gl_matmul_q2_K_x8_avx2
#define KX_WBLK                       block_q2_Kx8
#define KX_ISUMS(b, q, p, s, m, n)    kx_isums_q2K_avx2(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) kx_isums_q2K_avx2(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    1
#include "arch/x86/avx2/kx8_tmpl.h"

/* Q5_Kx8: the Q4_Kx8 kernel plus the fifth bit (qh unit k, bit 2 i for the
 * low nibbles of pair i, 2 i + 1 for the high ones, moved to bit 4 with
 * 16-bit shifts of at most 4). Quants u <= 31: maddubs pairs at most
 * 2 * 31 * 128 = 7936, so four loads add up in int16 before each madd with
 * the sub-block's scale. Exact. */
GL_ALWAYS_INLINE void kx_isums_q5K_avx2(const block_q5_Kx8 *blk, const int8_t *const *xq,
                                        const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                                        const int nc, const kx_pf *pf)
{
    __m256i sc[2];
    kx_scales_mins8(blk->scales, xp, sc, imin, nc);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        const __m256i s_lo = _mm256_shuffle_epi8(sc[i / 2], kx_pair16(2 * (i % 2), 2 * (i % 2)));
        const __m256i s_hi =
            _mm256_shuffle_epi8(sc[i / 2], kx_pair16(2 * (i % 2) + 1, 2 * (i % 2) + 1));
#pragma GCC unroll 2
        for (int kh = 0; kh < 2; kh++) {
            __m256i pl[KX_C], ph[KX_C];
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++)
                pl[c] = ph[c] = _mm256_setzero_si256();
#pragma GCC unroll 4
            for (int kk = 0; kk < 4; kk++) {
                const int k = 4 * kh + kk;
                if (pf)
                    kx_pf_part(pf, 8 * i + k, 32, sizeof *blk);
                const __m256i v = gl256_loadu_unit(blk->qs + 32 * (8 * i + k));
                const __m256i h = gl256_loadu_unit(blk->qh + 32 * k);
                __m256i lo, hi;
                kx_q5_lohi8(v, h, i, &lo, &hi);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++) {
                    const __m256i xl = _mm256_set1_epi32(x8_load32(xq[c] + 64 * i + 4 * k));
                    const __m256i xh = _mm256_set1_epi32(x8_load32(xq[c] + 64 * i + 32 + 4 * k));
                    pl[c] = _mm256_add_epi16(pl[c], _mm256_maddubs_epi16(lo, xl));
                    ph[c] = _mm256_add_epi16(ph[c], _mm256_maddubs_epi16(hi, xh));
                }
            }
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++)
                isum[c] = gl256_settled(
                    _mm256_add_epi32(isum[c], _mm256_add_epi32(_mm256_madd_epi16(pl[c], s_lo),
                                                               _mm256_madd_epi16(ph[c], s_hi))));
        }
    }
}

#define KX_NAME                       gl_matmul_q5_K_x8_avx2
#define KX_WBLK                       block_q5_Kx8
#define KX_ISUMS(b, q, p, s, m, n)    kx_isums_q5K_avx2(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) kx_isums_q5K_avx2(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    1
#include "arch/x86/avx2/kx8_tmpl.h"
