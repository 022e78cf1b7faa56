/* AVX-VNNI products over the K-quant row groups Q4_Kx8, Q5_Kx8, IQ4_XSx8,
 * Q6_Kx8, Q3_Kx8 and Q2_Kx8 (src/quant.h):
 * the AVX2 kernels' loops (arch/x86/avx2/kx8_tmpl.h holds the exactness
 * argument) with each sub-block's sum one vpdpbusd chain in int32 lanes,
 * then one multiply by its scale, where AVX2 sums maddubs pairs in int16
 * and widens them with a madd per sub-block. All exact: the same integers
 * as generic's. */
#include "arch/x86/avx2/kx8.h"
#include "arch/x86/avxvnni/avxvnni.h"

#define KX_C 4

/* Q4_Kx8 / Q5_Kx8: pair i of sub-blocks (2 i: low nibbles, 2 i + 1: high
 * ones) is two vpdpbusd chains over its eight units, each then multiplied
 * by its scale, byte 2 (i % 2) (+ 1) of sc[i / 2] (kx_scales_mins8),
 * zero-extended to each row's lane. Q4_K's high nibbles stay in place
 * (v & 0xf0 = 16 u: a chain sums at most 32 * 240 * 128, a multiple of 16
 * shifted back once, exactly); Q5_K's fifth bit (qh unit k, bit 2 i for the
 * low nibbles, 2 i + 1 for the high ones) joins at bit 4 (u <= 31). */
GL_ALWAYS_INLINE void vn_q45K_pair(const __m256i sc[2], const uint8_t *qs, const uint8_t *qh,
                                   size_t blk_bytes, const int8_t *const *xq, __m256i *isum,
                                   const int nc, const kx_pf *pf, const int i)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), mf0 = _mm256_set1_epi8((char)0xf0);
    __m256i al[KX_C], ah[KX_C];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        al[c] = ah[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        if (pf)
            kx_pf_part(pf, 8 * i + k, 32, blk_bytes);
        const __m256i v = gl256_loadu_unit(qs + 32 * (8 * i + k));
        __m256i lo, hi;
        if (qh) {
            kx_q5_lohi8(v, gl256_loadu_unit(qh + 32 * k), i, &lo, &hi);
        } else {
            lo = _mm256_and_si256(v, m4);
            hi = _mm256_and_si256(v, mf0);
        }
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            al[c] = gl_dpbusd256(al[c], lo, _mm256_set1_epi32(x8_load32(xq[c] + 64 * i + 4 * k)));
            ah[c] =
                gl_dpbusd256(ah[c], hi, _mm256_set1_epi32(x8_load32(xq[c] + 64 * i + 32 + 4 * k)));
        }
    }
    const __m256i s_lo = _mm256_shuffle_epi8(sc[i / 2], kx_byte32(2 * (i % 2), 0));
    const __m256i s_hi = _mm256_shuffle_epi8(sc[i / 2], kx_byte32(2 * (i % 2) + 1, 0));
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        const __m256i h = qh ? ah[c] : _mm256_srai_epi32(ah[c], 4);
        isum[c] = _mm256_add_epi32(isum[c], _mm256_add_epi32(_mm256_mullo_epi32(al[c], s_lo),
                                                             _mm256_mullo_epi32(h, s_hi)));
    }
}

/* The tile path takes two pairs a loop: unrolled whole, its chains and
 * scales spilled (Zen 5, Q4_K against the full unroll: 128 columns 1.12x,
 * batch-8 decode 1.14x); decode (pf) unrolls whole (Q5_K: rolled, 0.86x
 * AVX2's from DRAM). */
GL_ALWAYS_INLINE void vn_isums_q45K(const uint8_t *scales, const uint8_t *qs, const uint8_t *qh,
                                    size_t blk_bytes, const int8_t *const *xq,
                                    const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                                    const int nc, const kx_pf *pf)
{
    __m256i sc[2];
    kx_scales_mins8(scales, xp, sc, imin, nc);
    if (pf) {
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++)
            vn_q45K_pair(sc, qs, qh, blk_bytes, xq, isum, nc, pf, i);
    } else {
#pragma GCC unroll 2
        for (int i = 0; i < 4; i++)
            vn_q45K_pair(sc, qs, qh, blk_bytes, xq, isum, nc, NULL, i);
    }
}

#define VN_Q4K(b, q, p, s, m, n, f)                                                                \
    vn_isums_q45K((b)->scales, (b)->qs, NULL, sizeof *(b), q, p, s, m, n, f)
#define KX_NAME                       GL_VNNI_NAME(gl_matmul_q4_K_x8)
#define KX_WBLK                       block_q4_Kx8
#define KX_ISUMS(b, q, p, s, m, n)    VN_Q4K(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) VN_Q4K(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    1
#include "arch/x86/avx2/kx8_tmpl.h"

#define VN_Q5K(b, q, p, s, m, n, f)                                                                \
    vn_isums_q45K((b)->scales, (b)->qs, (b)->qh, sizeof *(b), q, p, s, m, n, f)
#define KX_NAME                       GL_VNNI_NAME(gl_matmul_q5_K_x8)
#define KX_WBLK                       block_q5_Kx8
#define KX_ISUMS(b, q, p, s, m, n)    VN_Q5K(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) VN_Q5K(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    1
#include "arch/x86/avx2/kx8_tmpl.h"

/* IQ4_XSx8: each nibble looks up its table value + 128 in [1, 241]
 * (unsigned: the table with its sign bits flipped); sub-block j's chain
 * starts at -128 times its activation sum (kx_xprep iq4c), so it sums
 * w x itself, then takes its scale ls - 32 (kx_iq4_scale8: int32 lanes). */
GL_ALWAYS_INLINE void vn_isums_iq4xs(const block_iq4_xsx8 *blk, const int8_t *const *xq,
                                     const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                                     const int nc, const kx_pf *pf)
{
    (void)imin;
    const __m256i tbl = vn_iq4_utable();
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i l = _mm256_loadu_si256((const __m256i *)blk->scales_l);
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)blk->scales_h));
#pragma GCC unroll 2
    for (int j = 0; j < 8; j++) {
        if (pf)
            kx_pf_part(pf, j, 8, sizeof *blk);
        __m256i a[KX_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            a[c] = _mm256_set1_epi32(xp[c]->iq4c[j]);
#pragma GCC unroll 4
        for (int kk = 0; kk < 4; kk++) {
            const __m256i v = gl256_loadu_unit(blk->qs + 32 * (4 * j + kk));
            const __m256i ul = _mm256_shuffle_epi8(tbl, _mm256_and_si256(v, m4));
            const __m256i uh =
                _mm256_shuffle_epi8(tbl, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                a[c] =
                    gl_dpbusd256(a[c], ul, _mm256_set1_epi32(x8_load32(xq[c] + 32 * j + 4 * kk)));
                a[c] = gl_dpbusd256(a[c], uh,
                                    _mm256_set1_epi32(x8_load32(xq[c] + 32 * j + 16 + 4 * kk)));
            }
        }
        const __m256i sj = kx_iq4_scale8(l, h, j);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] = _mm256_add_epi32(isum[c], _mm256_mullo_epi32(a[c], sj));
    }
}

#define KX_NAME                       GL_VNNI_NAME(gl_matmul_iq4_xs_x8)
#define KX_WBLK                       block_iq4_xsx8
#define KX_ISUMS(b, q, p, s, m, n)    vn_isums_iq4xs(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) vn_isums_iq4xs(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    0
#include "arch/x86/avx2/kx8_tmpl.h"

/* Q6_Kx8: stored quants u = q + 32 in [0, 63]; sub-block j's chain starts
 * at -32 bsums[j] (kx_xprep q6c), so it sums q x itself, then takes its
 * signed scale (byte j % 4 of the j / 4-th scale vector, sign-extended).
 * Chunk t = 4 h + s: sub-block 2 t is units 0-3, 2 t + 1 units 4-7. The
 * units come from the block, or unpacked from ub (KX_UNPACK below). */
GL_ALWAYS_INLINE void vn_q6K_sub(const block_q6_Kx8 *blk, const uint8_t *ub,
                                 const int8_t *const *xq, const kx_xprep *const *xp, __m256i *isum,
                                 const int nc, const kx_pf *pf, int h, int s, int half)
{
    const int j = 8 * h + 2 * s + half;
    __m256i a[KX_C];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        a[c] = _mm256_set1_epi32(xp[c]->q6c[j]);
#pragma GCC unroll 2
    for (int kp = 0; kp < 2; kp++) {
        const int k = 4 * half + 2 * kp;
        const int un = 16 * h + 4 * s + 2 * half + kp; /* the unit pair */
        if (pf)
            kx_pf_part(pf, un, 32, sizeof *blk);
        const __m256i u0 =
            ub ? _mm256_loadu_si256((const __m256i *)(ub + 64 * un)) : kx_q6_u(blk, h, s, k);
        const __m256i u1 = ub ? _mm256_loadu_si256((const __m256i *)(ub + 64 * un + 32))
                              : kx_q6_u(blk, h, s, k + 1);
        const int xo = 128 * h + 32 * s + 4 * k;
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            a[c] = gl_dpbusd256(a[c], u0, _mm256_set1_epi32(x8_load32(xq[c] + xo)));
            a[c] = gl_dpbusd256(a[c], u1, _mm256_set1_epi32(x8_load32(xq[c] + xo + 4)));
        }
    }
    const __m256i s4 = _mm256_loadu_si256((const __m256i *)(blk->scales + 32 * (j / 4)));
    const __m256i sc = _mm256_srai_epi32(_mm256_shuffle_epi8(s4, kx_byte32(j % 4, 1)), 24);
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        isum[c] = gl256_settled(_mm256_add_epi32(isum[c], _mm256_mullo_epi32(a[c], sc)));
}

/* Tile path: a loop over the chunks, two at a time. Fully unrolled, the
 * compiler hoisted every chunk's scales and spilled them with the tile's
 * accumulators (perf: vpmulld from the stack); Zen 5 prefill tile, 128
 * columns, against the full unroll 1.23x (1.50x AVX2's). */
GL_ALWAYS_INLINE void vn_isums_q6K(const block_q6_Kx8 *blk, const uint8_t *ub,
                                   const int8_t *const *xq, const kx_xprep *const *xp,
                                   __m256i *isum, __m256i *imin, const int nc)
{
    (void)imin;
#pragma GCC unroll 1
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
        for (int s = 0; s < 4; s++)
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++)
                vn_q6K_sub(blk, ub, xq, xp, isum, nc, NULL, h, s, half);
}

/* Decode (one column), unrolled whole: rolled as the tile path, its
 * prefetch arithmetic and the loop cost 0.76x. */
GL_ALWAYS_INLINE void vn_isums1_q6K(const block_q6_Kx8 *blk, const int8_t *xq, const kx_xprep *xp,
                                    __m256i *isum, const kx_pf *pf)
{
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 4
        for (int s = 0; s < 4; s++)
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++)
                vn_q6K_sub(blk, NULL, &xq, &xp, isum, 1, pf, h, s, half);
}

/* wide batches unpack each super-block's 64 units once (2 KiB) for all
 * their column tiles (kx8_tmpl.h KX_UNPACK), in vn_isums_q6K's order */
GL_ALWAYS_INLINE void vn_unpack_q6K(const block_q6_Kx8 *blk, uint8_t *ub)
{
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 4
        for (int s = 0; s < 4; s++)
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++)
                _mm256_storeu_si256((__m256i *)(ub + 32 * (32 * h + 8 * s + k)),
                                    kx_q6_u(blk, h, s, k));
}

#define KX_NAME                          GL_VNNI_NAME(gl_matmul_q6_K_x8)
#define KX_WBLK                          block_q6_Kx8
#define KX_ISUMS(b, q, p, s, m, n)       vn_isums_q6K(b, NULL, q, p, s, m, n)
#define KX_ISUMS_PF(b, q, p, s, m, f)    ((void)(m), vn_isums1_q6K(b, q, p, s, f))
#define KX_UNPACK(b, ub)                 vn_unpack_q6K(b, ub)
#define KX_ISUMS_U(b, ub, q, p, s, m, n) vn_isums_q6K(b, ub, q, p, s, m, n)
#define KX_UBYTES                        2048
#define KX_HAS_MIN                       0
#include "arch/x86/avx2/kx8_tmpl.h"

/* Q3_Kx8: a group's three loads give eight vectors of u = q + 4 in [0, 7]
 * (kx_q3_units8); sub-block j's chain starts at -4 times its activation
 * sum (kx_xprep q3c), so it ends at sum q x, |q x| <= 4 * 128 sixteen
 * times: 8192, inside int16 (KS_SCALE2); its scale (signed, - 32 applied)
 * sign-extended from byte j % 4 of sc[j / 4], as an int16 */
#define KS_ISUMS                       vn_isums_q3K
#define KS_WBLK                        block_q3_Kx8
#define KS_KSTEP                       2
#define KS_UNITS(blk, h, k, u)         kx_q3_units8((blk)->q + 96 * (4 * (h) + (k) / 2), u, 0)
#define KS_PREP(blk, xp, sc, imin, nc) ((void)(imin), kx_q3_scales8((blk)->scales, sc))
#define KS_START(xp, j)                _mm256_set1_epi32((xp)->q3c[j])
#define KS_SCALE2(sc, ja, jb)                                                                      \
    _mm256_srai_epi16(_mm256_shuffle_epi8((sc)[(ja) / 4], kx_pair16_hi((ja) % 4, (jb) % 4)), 8)
#include "arch/x86/avxvnni/kx8_sub16_tmpl.h"

#define KX_NAME                       GL_VNNI_NAME(gl_matmul_q3_K_x8)
#define KX_WBLK                       block_q3_Kx8
#define KX_ISUMS(b, q, p, s, m, n)    vn_isums_q3K(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) vn_isums_q3K(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    0
#include "arch/x86/avx2/kx8_tmpl.h"

/* Q2_Kx8: unit k gives four vectors of 2-bit quants (kx_q2_units8), a
 * chain at most 16 * 3 * 128 = 6144 (inside int16: KS_SCALE2); the 4-bit
 * scales zero-extended to int16 from byte j % 4 of sc[j / 4], the mins'
 * sums into imin (kx_q2_scales_mins8) */
#define KS_ISUMS                       vn_isums_q2K
#define KS_WBLK                        block_q2_Kx8
#define KS_KSTEP                       1
#define KS_UNITS(blk, h, k, u)         kx_q2_units8((blk)->qs + 32 * (8 * (h) + (k)), u, 0)
#define KS_PREP(blk, xp, sc, imin, nc) kx_q2_scales_mins8((blk)->scales, xp, sc, imin, nc)
#define KS_START(xp, j)                ((void)(xp), _mm256_setzero_si256())
#define KS_SCALE2(sc, ja, jb)          _mm256_shuffle_epi8((sc)[(ja) / 4], kx_pair16((ja) % 4, (jb) % 4))
#include "arch/x86/avxvnni/kx8_sub16_tmpl.h"

#define KX_NAME                       GL_VNNI_NAME(gl_matmul_q2_K_x8)
#define KX_WBLK                       block_q2_Kx8
#define KX_ISUMS(b, q, p, s, m, n)    vn_isums_q2K(b, q, p, s, m, n, NULL)
#define KX_ISUMS_PF(b, q, p, s, m, f) vn_isums_q2K(b, &(q), &(p), s, m, 1, f)
#define KX_HAS_MIN                    1
#include "arch/x86/avx2/kx8_tmpl.h"
