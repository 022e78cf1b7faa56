/* AVX-512 (VL + VNNI) K-quant products, included by kernels.c (static
 * functions, one copy per build: native and SIMDe).
 *
 * Plain rows: arch/x86/avx2/kquant_ops.h with the scale step as one
 * vpdpwssd (acc + madd(p, s), exact) in place of madd + add.
 *
 * Row groups (Q4_Kx8, Q6_Kx8; arch/x86/avx2/kx8_tmpl.h, ymm lanes = rows):
 * each sub-block's quants go through a vpdpbusd chain into its own int32
 * lanes (u unsigned x activation int8, no saturation), then one vpmulld by
 * the row's scale; all exact, so the template's equality with generic
 * holds. */
#include "arch/x86/avx2/kx8.h"

static GL_DECL_MATMUL_FN(matmul_q4_K_vnni);
static GL_DECL_MATMUL_FN(matmul_q5_K_vnni);
static GL_DECL_MATMUL_FN(matmul_q6_K_vnni);
#define KQ_SFX                 vnni
#define KQ_NAME_Q4K            matmul_q4_K_vnni
#define KQ_NAME_Q5K            matmul_q5_K_vnni
#define KQ_NAME_Q6K            matmul_q6_K_vnni
#define KQ_MADD_ACC(acc, p, s) _mm256_dpwssd_epi32(acc, p, s)
#include "arch/x86/avx2/kquant_ops.h"

/* vpshufb control: in each 32-bit lane q, byte 4 q + a zero-extended to
 * int32 (hi = 0), or placed in the top byte (hi = 1: srai 24 sign-extends) */
GL_ALWAYS_INLINE __m256i kx_byte32(int a, int hi)
{
    const int v = hi ? (int)(0x00808080u | (unsigned)a << 24) : (int)(0x80808000u | (unsigned)a);
    const int step = hi ? 0x04000000 : 0x00000004;
    return _mm256_add_epi8(_mm256_set1_epi32(v), _mm256_setr_epi32(0, step, 2 * step, 3 * step, 0,
                                                                   step, 2 * step, 3 * step));
}

#define KX_C 4

/* Q4_Kx8: scales and mins unpacked per lane as in the AVX2 kernel
 * (kx8.h kx_scales_mins8); the high nibbles are used unshifted (v & 0xf0
 * = 16 u, dpbusd sums at most 32 * 240 * 128 per lane) and their sum
 * shifted back once, exactly. */
GL_ALWAYS_INLINE void kx_isums_q4K_vnni(const block_q4_Kx8 *blk, const int8_t *const *xq,
                                        const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                                        const int nc)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), mf0 = _mm256_set1_epi8((char)0xf0);
    __m256i sc[2], mn[2];
    kx_scales_mins8(blk->scales, sc, mn);
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        const __m256i mp = _mm256_shuffle_epi8(mn[p / 2], kx_pair16(2 * (p % 2), 2 * (p % 2) + 1));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            imin[c] = _mm256_dpwssd_epi32(imin[c], mp, _mm256_set1_epi32(xp[c]->b4[p]));
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        __m256i al[KX_C], ah[KX_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            al[c] = ah[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(blk->qs + 32 * (8 * i + k)));
            const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(v, mf0);
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                al[c] = _mm256_dpbusd_epi32(al[c], lo,
                                            _mm256_set1_epi32(x8_load32(xq[c] + 64 * i + 4 * k)));
                ah[c] = _mm256_dpbusd_epi32(
                    ah[c], hi, _mm256_set1_epi32(x8_load32(xq[c] + 64 * i + 32 + 4 * k)));
            }
        }
        const __m256i s_lo = _mm256_shuffle_epi8(sc[i / 2], kx_byte32(2 * (i % 2), 0));
        const __m256i s_hi = _mm256_shuffle_epi8(sc[i / 2], kx_byte32(2 * (i % 2) + 1, 0));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] = _mm256_add_epi32(
                isum[c], _mm256_add_epi32(_mm256_mullo_epi32(al[c], s_lo),
                                          _mm256_mullo_epi32(_mm256_srai_epi32(ah[c], 4), s_hi)));
    }
}

#define KX_NAME    matmul_q4_K_x8_vnni
#define KX_WBLK    block_q4_Kx8
#define KX_ISUMS   kx_isums_q4K_vnni
#define KX_HAS_MIN 1
#define KX_LINK    static
#include "arch/x86/avx2/kx8_tmpl.h"

/* Q6_Kx8: stored u = q + 32 (unsigned); a sub-block (16 elements = 4
 * units) is one dpbusd chain, times its signed scale, and the -32 offset
 * comes back through bsums (as in the AVX2 kernel). */
GL_ALWAYS_INLINE __m256i kx_q6_u_vnni(const block_q6_Kx8 *blk, int h, int s, int k)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    const __m256i q =
        _mm256_loadu_si256((const __m256i *)(blk->ql + 32 * (16 * h + 8 * (s & 1) + k)));
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(blk->qh + 32 * (8 * h + k)));
    const __m256i lo =
        s < 2 ? _mm256_and_si256(q, m4) : _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    const __m256i hb = s == 0   ? _mm256_slli_epi16(qh, 4)
                       : s == 1 ? _mm256_slli_epi16(qh, 2)
                       : s == 2 ? qh
                                : _mm256_srli_epi16(qh, 2);
    return _mm256_ternarylogic_epi32(lo, hb, m30, 0xf8); /* lo | (hb & m30) */
}

GL_ALWAYS_INLINE void kx_isums_q6K_vnni(const block_q6_Kx8 *blk, const int8_t *const *xq,
                                        const kx_xprep *const *xp, __m256i *isum, __m256i *imin,
                                        const int nc)
{
    (void)imin;
    __m256i s4[4];
#pragma GCC unroll 4
    for (int u = 0; u < 4; u++)
        s4[u] = _mm256_loadu_si256((const __m256i *)(blk->scales + 32 * u));
    __m256i corr[KX_C];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        corr[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int p = 0; p < 8; p++) {
        const __m256i sp = _mm256_srai_epi16(
            _mm256_shuffle_epi8(s4[p / 2], kx_pair16_hi(2 * (p % 2), 2 * (p % 2) + 1)), 8);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            corr[c] = _mm256_dpwssd_epi32(corr[c], sp, _mm256_set1_epi32(xp[c]->b6[p]));
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 4
        for (int s = 0; s < 4; s++)
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++) {
                const int j = 8 * h + 2 * s + half;
                const __m256i sc =
                    _mm256_srai_epi32(_mm256_shuffle_epi8(s4[j / 4], kx_byte32(j % 4, 1)), 24);
                __m256i acc[KX_C];
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
                    acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 4
                for (int kk = 0; kk < 4; kk++) {
                    const int k = 4 * half + kk;
                    const __m256i u = kx_q6_u_vnni(blk, h, s, k);
#pragma GCC unroll 8
                    for (int c = 0; c < nc; c++)
                        acc[c] = _mm256_dpbusd_epi32(
                            acc[c], u,
                            _mm256_set1_epi32(x8_load32(xq[c] + 128 * h + 32 * s + 4 * k)));
                }
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
                    isum[c] = _mm256_add_epi32(isum[c], _mm256_mullo_epi32(acc[c], sc));
            }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++)
        isum[c] = _mm256_sub_epi32(isum[c], _mm256_slli_epi32(corr[c], 5));
}

#define KX_NAME    matmul_q6_K_x8_vnni
#define KX_WBLK    block_q6_Kx8
#define KX_ISUMS   kx_isums_q6K_vnni
#define KX_HAS_MIN 0
#define KX_LINK    static
#include "arch/x86/avx2/kx8_tmpl.h"

/* Four columns per tile for the x16 groups too: at eight, a tile's chains,
 * sums and accumulators (40 zmm for Q4_K, more for Q6_K) spilled to the
 * stack in every super-block, and unpacking the weights twice costs less
 * than that (bench/RESULTS.md 2026-12-02, second sitting: TinyLlama batch-8
 * decode 1 thread Q4_K_M +12 %, Q6_K +20 %, prefill unchanged). */
#undef KX_C
#ifndef GL_KX16_C
#define GL_KX16_C 4
#endif
#define KX_C GL_KX16_C

/* ---- Q4_Kx16: the Q4_Kx8 kernel over 16 rows, one zmm lane per row ----
 * (vpshufb controls repeat per 128-bit lane, so kx8.h's serve here too) */
GL_ALWAYS_INLINE __m512i kx512_ctl(__m256i ctl)
{
    return _mm512_broadcast_i32x4(_mm256_castsi256_si128(ctl));
}

/* Q4_K / Q5_K x16, shared: the 16 rows' packed 6-bit sub-block scales and
 * mins (src/quant.h) unpacked to bytes, the scales to sc[], the mins
 * multiplied by the activation's sub-block sums into imin[c] (exact). */
GL_ALWAYS_INLINE void kx16_scales_mins(const uint8_t *scales, const kx_xprep *const *xp,
                                       __m512i sc[2], __m512i *imin, const int nc)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f), m6 = _mm512_set1_epi8(0x3f),
                  m30 = _mm512_set1_epi8(0x30);
    const __m512i a = _mm512_loadu_si512((const void *)scales);
    const __m512i bv = _mm512_loadu_si512((const void *)(scales + 64));
    const __m512i cv = _mm512_loadu_si512((const void *)(scales + 128));
    sc[0] = _mm512_and_si512(a, m6);
    sc[1] =
        _mm512_or_si512(_mm512_and_si512(cv, m4), _mm512_and_si512(_mm512_srli_epi16(a, 2), m30));
    const __m512i mn[2] = { _mm512_and_si512(bv, m6),
                            _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(cv, 4), m4),
                                            _mm512_and_si512(_mm512_srli_epi16(bv, 2), m30)) };
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        const __m512i mp =
            _mm512_shuffle_epi8(mn[p / 2], kx512_ctl(kx_pair16(2 * (p % 2), 2 * (p % 2) + 1)));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            imin[c] = _mm512_dpwssd_epi32(imin[c], mp, _mm512_set1_epi32(xp[c]->b4[p]));
    }
}

/* a sub-block pair's contribution, al * its scale (sub-block 2 i) + ah *
 * its scale (2 i + 1), per lane; exact */
GL_ALWAYS_INLINE __m512i kx16_scaled_pair(const __m512i sc[2], int i, __m512i al, __m512i ah)
{
    const __m512i s_lo = _mm512_shuffle_epi8(sc[i / 2], kx512_ctl(kx_byte32(2 * (i % 2), 0)));
    const __m512i s_hi = _mm512_shuffle_epi8(sc[i / 2], kx512_ctl(kx_byte32(2 * (i % 2) + 1, 0)));
    return _mm512_add_epi32(_mm512_mullo_epi32(al, s_lo), _mm512_mullo_epi32(ah, s_hi));
}

GL_ALWAYS_INLINE void kx16_isums_q4K_vnni(const block_q4_Kx16 *blk, const int8_t *const *xq,
                                          const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                                          const int nc)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f), mf0 = _mm512_set1_epi8((char)0xf0);
    __m512i sc[2];
    kx16_scales_mins(blk->scales, xp, sc, imin, nc);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        __m512i al[KX_C], ah[KX_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            al[c] = ah[c] = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m512i v = _mm512_loadu_si512((const void *)(blk->qs + 64 * (8 * i + k)));
            const __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(v, mf0);
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                al[c] = _mm512_dpbusd_epi32(al[c], lo,
                                            _mm512_set1_epi32(x8_load32(xq[c] + 64 * i + 4 * k)));
                ah[c] = _mm512_dpbusd_epi32(
                    ah[c], hi, _mm512_set1_epi32(x8_load32(xq[c] + 64 * i + 32 + 4 * k)));
            }
        }
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] =
                _mm512_add_epi32(isum[c], kx16_scaled_pair(sc, i, al[c], gl512_srai4_epi32(ah[c])));
    }
}

/* Decode (one column): the eight sub-block chains side by side, so each
 * dpbusd's latency hides behind seven independent ones, and the stream's
 * prefetches in eight slices between the loads. */
GL_ALWAYS_INLINE void kx16_isums1_q4K_vnni(const block_q4_Kx16 *blk, const int8_t *xq,
                                           const kx_xprep *xp, __m512i *isum, __m512i *imin,
                                           const kx_pf *pf)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f), mf0 = _mm512_set1_epi8((char)0xf0);
    __m512i sc[2];
    kx16_scales_mins(blk->scales, &xp, sc, imin, 1);
    __m512i al[4], ah[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        al[i] = ah[i] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        kx_pf_part(pf, k, 8, sizeof *blk);
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const __m512i v = _mm512_loadu_si512((const void *)(blk->qs + 64 * (8 * i + k)));
            al[i] = _mm512_dpbusd_epi32(al[i], _mm512_and_si512(v, m4),
                                        _mm512_set1_epi32(x8_load32(xq + 64 * i + 4 * k)));
            ah[i] = _mm512_dpbusd_epi32(ah[i], _mm512_and_si512(v, mf0),
                                        _mm512_set1_epi32(x8_load32(xq + 64 * i + 32 + 4 * k)));
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        *isum = _mm512_add_epi32(*isum, kx16_scaled_pair(sc, i, al[i], gl512_srai4_epi32(ah[i])));
    }
}

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME     matmul_q4_K_x16_vnni
#define KX_WBLK     block_q4_Kx16
#define KX_ISUMS    kx16_isums_q4K_vnni
#define KX_ISUMS_PF kx16_isums1_q4K_vnni
#define KX_HAS_MIN  1
#define KX_LINK     static
#include "arch/x86/avx2/kx8_tmpl.h"

/* ---- Q5_Kx16: Q4_Kx16 plus the fifth bit (qh unit k, bit 2 i for the low
 * nibbles of pair i, 2 i + 1 for the high ones), moved to bit 4 with 16-bit
 * shifts of at most 4 (nothing from the neighbouring byte reaches bit 4).
 * Quants u <= 31: dpbusd sums at most 32 * 31 * 128 per sub-block. */
GL_ALWAYS_INLINE __m512i kx16_bit4(__m512i h, int bit)
{
    return bit <= 4 ? (bit == 4 ? h : _mm512_slli_epi16(h, 4 - bit))
                    : _mm512_srli_epi16(h, bit - 4);
}

GL_ALWAYS_INLINE void kx16_isums_q5K_vnni(const block_q5_Kx16 *blk, const int8_t *const *xq,
                                          const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                                          const int nc)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f), m10 = _mm512_set1_epi8(0x10);
    __m512i sc[2];
    kx16_scales_mins(blk->scales, xp, sc, imin, nc);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        __m512i al[KX_C], ah[KX_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            al[c] = ah[c] = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m512i v = _mm512_loadu_si512((const void *)(blk->qs + 64 * (8 * i + k)));
            const __m512i h = _mm512_loadu_si512((const void *)(blk->qh + 64 * k));
            const __m512i lo = _mm512_or_si512(_mm512_and_si512(v, m4),
                                               _mm512_and_si512(kx16_bit4(h, 2 * i), m10));
            const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 4), m4),
                                               _mm512_and_si512(kx16_bit4(h, 2 * i + 1), m10));
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                al[c] = _mm512_dpbusd_epi32(al[c], lo,
                                            _mm512_set1_epi32(x8_load32(xq[c] + 64 * i + 4 * k)));
                ah[c] = _mm512_dpbusd_epi32(
                    ah[c], hi, _mm512_set1_epi32(x8_load32(xq[c] + 64 * i + 32 + 4 * k)));
            }
        }
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] = _mm512_add_epi32(isum[c], kx16_scaled_pair(sc, i, al[c], ah[c]));
    }
}

/* Decode (one column), as kx16_isums1_q4K_vnni: eight chains side by side,
 * the prefetches in eight slices. */
GL_ALWAYS_INLINE void kx16_isums1_q5K_vnni(const block_q5_Kx16 *blk, const int8_t *xq,
                                           const kx_xprep *xp, __m512i *isum, __m512i *imin,
                                           const kx_pf *pf)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f), m10 = _mm512_set1_epi8(0x10);
    __m512i sc[2];
    kx16_scales_mins(blk->scales, &xp, sc, imin, 1);
    __m512i al[4], ah[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        al[i] = ah[i] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        kx_pf_part(pf, k, 8, sizeof *blk);
        const __m512i h = _mm512_loadu_si512((const void *)(blk->qh + 64 * k));
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const __m512i v = _mm512_loadu_si512((const void *)(blk->qs + 64 * (8 * i + k)));
            const __m512i lo = _mm512_or_si512(_mm512_and_si512(v, m4),
                                               _mm512_and_si512(kx16_bit4(h, 2 * i), m10));
            const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 4), m4),
                                               _mm512_and_si512(kx16_bit4(h, 2 * i + 1), m10));
            al[i] =
                _mm512_dpbusd_epi32(al[i], lo, _mm512_set1_epi32(x8_load32(xq + 64 * i + 4 * k)));
            ah[i] = _mm512_dpbusd_epi32(ah[i], hi,
                                        _mm512_set1_epi32(x8_load32(xq + 64 * i + 32 + 4 * k)));
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        *isum = _mm512_add_epi32(*isum, kx16_scaled_pair(sc, i, al[i], ah[i]));
    }
}

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME     matmul_q5_K_x16_vnni
#define KX_WBLK     block_q5_Kx16
#define KX_ISUMS    kx16_isums_q5K_vnni
#define KX_ISUMS_PF kx16_isums1_q5K_vnni
#define KX_HAS_MIN  1
#define KX_LINK     static
#include "arch/x86/avx2/kx8_tmpl.h"

/* the four 6-bit units u[s] of a group's three 64-byte loads at g: u_s =
 * v_s & 0x3f for s < 3, u_3 from bits 6-7 of all three. The 16-bit shifts
 * bring in bits of the next byte above each field, which the two
 * bit-selects (0xe4: c ? a : b) and the last mask drop. */
GL_ALWAYS_INLINE void kx16_q6_units(const uint8_t *g, __m512i m6, __m512i m3, __m512i mf,
                                    __m512i u[4])
{
    const __m512i v0 = _mm512_loadu_si512((const void *)g);
    const __m512i v1 = _mm512_loadu_si512((const void *)(g + 64));
    const __m512i v2 = _mm512_loadu_si512((const void *)(g + 128));
    const __m512i t =
        _mm512_ternarylogic_epi32(_mm512_srli_epi16(v0, 6), _mm512_srli_epi16(v1, 4), m3, 0xe4);
    u[0] = _mm512_and_si512(v0, m6);
    u[1] = _mm512_and_si512(v1, m6);
    u[2] = _mm512_and_si512(v2, m6);
    u[3] = _mm512_and_si512(_mm512_ternarylogic_epi32(t, _mm512_srli_epi16(v2, 2), mf, 0xe4), m6);
}

/* ---- Q6_Kx16 (layout: src/quant.h), one zmm lane per row ----
 * A group (h, k) is three loads v0..v2: u_s = v_s & 0x3f for s < 3, u_3 from
 * bits 6-7 of all three. Sub-block j = 8 h + 2 s + half is one dpbusd chain
 * over k = 4 half .. 4 half + 3, started at -32 bsums[j] (the offset of
 * u = q + 32, so no correction pass), times its sign-extended scale: all
 * exact, the same integer isum as generic's. */
GL_ALWAYS_INLINE void kx16_isums_q6K_vnni(const block_q6_Kx16 *blk, const int8_t *const *xq,
                                          const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                                          const int nc)
{
    (void)imin;
    const __m512i m6 = _mm512_set1_epi8(0x3f), m3 = _mm512_set1_epi8(0x03),
                  mf = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++) {
            __m512i acc[KX_C][4];
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
                for (int s = 0; s < 4; s++)
                    acc[c][s] = _mm512_set1_epi32(xp[c]->q6c[8 * h + 2 * s + half]);
#pragma GCC unroll 4
            for (int kk = 0; kk < 4; kk++) {
                const int k = 4 * half + kk;
                __m512i u[4];
                kx16_q6_units(blk->q + 64 * 3 * (8 * h + k), m6, m3, mf, u);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
                    for (int s = 0; s < 4; s++)
                        acc[c][s] = _mm512_dpbusd_epi32(
                            acc[c][s], u[s],
                            _mm512_set1_epi32(x8_load32(xq[c] + 128 * h + 32 * s + 4 * k)));
            }
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++) {
                const int j = 8 * h + 2 * s + half;
                const __m512i sc = _mm512_cvtepi8_epi32(
                    _mm_loadu_si128((const __m128i *)(blk->scales + GL_X16_ROWS * j)));
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
                    isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c][s], sc));
            }
        }
}

/* Decode (one column): both halves of each h at once, eight chains side
 * by side, and the stream's prefetches in sixteen slices between the
 * loads. */
GL_ALWAYS_INLINE void kx16_isums1_q6K_vnni(const block_q6_Kx16 *blk, const int8_t *xq,
                                           const kx_xprep *xp, __m512i *isum, __m512i *imin,
                                           const kx_pf *pf)
{
    (void)imin;
    const __m512i m6 = _mm512_set1_epi8(0x3f), m3 = _mm512_set1_epi8(0x03),
                  mf = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m512i acc[2][4];
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++)
                acc[half][s] = _mm512_set1_epi32(xp->q6c[8 * h + 2 * s + half]);
#pragma GCC unroll 4
        for (int kk = 0; kk < 4; kk++)
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++) {
                const int k = 4 * half + kk;
                kx_pf_part(pf, 8 * h + 2 * kk + half, 16, sizeof *blk);
                __m512i u[4];
                kx16_q6_units(blk->q + 64 * 3 * (8 * h + k), m6, m3, mf, u);
#pragma GCC unroll 4
                for (int s = 0; s < 4; s++)
                    acc[half][s] = _mm512_dpbusd_epi32(
                        acc[half][s], u[s],
                        _mm512_set1_epi32(x8_load32(xq + 128 * h + 32 * s + 4 * k)));
            }
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++) {
                const int j = 8 * h + 2 * s + half;
                const __m512i sc = _mm512_cvtepi8_epi32(
                    _mm_loadu_si128((const __m128i *)(blk->scales + GL_X16_ROWS * j)));
                *isum = _mm512_add_epi32(*isum, _mm512_mullo_epi32(acc[half][s], sc));
            }
    }
}

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME     matmul_q6_K_x16_vnni
#define KX_WBLK     block_q6_Kx16
#define KX_ISUMS    kx16_isums_q6K_vnni
#define KX_ISUMS_PF kx16_isums1_q6K_vnni
#define KX_HAS_MIN  0
#define KX_LINK     static
#include "arch/x86/avx2/kx8_tmpl.h"
/* ---- IQ4_XSx16 (layout: src/quant.h), one zmm lane per row ----
 * Each nibble looks up u = value + 128 in [1, 241] (vpshufb; the sign
 * bit of gl_iq4nl_values flipped), unsigned for vpdpbusd; sub-block j's chain
 * starts at -128 times its activation sum (xp->iq4c[j]), which takes the
 * offset back exactly, then one vpmulld by the row's scale ls - 32.
 * Bounds: |chain| <= 32 * 241 * 128 + 130048, times |scale| <= 32, eight
 * sub-blocks: inside int32. */
GL_ALWAYS_INLINE __m512i kx16_iq4_table(void)
{
    return _mm512_xor_si512(
        _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)gl_iq4nl_values)),
        _mm512_set1_epi8((char)0x80));
}

GL_ALWAYS_INLINE __m512i kx16_iq4_scale(__m512i l, __m512i h, int j)
{
    const __m512i lo = _mm512_and_si512(_mm512_srli_epi32(l, 4 * j), _mm512_set1_epi32(15));
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(h, 2 * j), _mm512_set1_epi32(3));
    return _mm512_sub_epi32(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 4)), _mm512_set1_epi32(32));
}

GL_ALWAYS_INLINE void kx16_iq4_scale_regs(const block_iq4_xsx16 *blk, __m512i *l, __m512i *h)
{
    *l = _mm512_loadu_si512((const void *)blk->scales_l);
    *h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)blk->scales_h));
}

GL_ALWAYS_INLINE void kx16_isums_iq4xs_vnni(const block_iq4_xsx16 *blk, const int8_t *const *xq,
                                            const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                                            const int nc)
{
    (void)imin;
    const __m512i tbl = kx16_iq4_table();
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512i l, h;
    kx16_iq4_scale_regs(blk, &l, &h);
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
        __m512i acc[KX_C];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            acc[c] = _mm512_set1_epi32(xp[c]->iq4c[j]);
#pragma GCC unroll 4
        for (int kk = 0; kk < 4; kk++) {
            const __m512i v = _mm512_loadu_si512((const void *)(blk->qs + 64 * (4 * j + kk)));
            const __m512i lo = _mm512_shuffle_epi8(tbl, _mm512_and_si512(v, m4));
            const __m512i hi =
                _mm512_shuffle_epi8(tbl, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                acc[c] = _mm512_dpbusd_epi32(acc[c], lo,
                                             _mm512_set1_epi32(x8_load32(xq[c] + 32 * j + 4 * kk)));
                acc[c] = _mm512_dpbusd_epi32(
                    acc[c], hi, _mm512_set1_epi32(x8_load32(xq[c] + 32 * j + 16 + 4 * kk)));
            }
        }
        const __m512i sc = kx16_iq4_scale(l, h, j);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c], sc));
    }
}

/* Decode (one column): the eight sub-block chains side by side, the
 * stream's prefetches in four slices between the loads. */
GL_ALWAYS_INLINE void kx16_isums1_iq4xs_vnni(const block_iq4_xsx16 *blk, const int8_t *xq,
                                             const kx_xprep *xp, __m512i *isum, __m512i *imin,
                                             const kx_pf *pf)
{
    (void)imin;
    const __m512i tbl = kx16_iq4_table();
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512i acc[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        acc[j] = _mm512_set1_epi32(xp->iq4c[j]);
#pragma GCC unroll 4
    for (int kk = 0; kk < 4; kk++) {
        kx_pf_part(pf, kk, 4, sizeof *blk);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) {
            const __m512i v = _mm512_loadu_si512((const void *)(blk->qs + 64 * (4 * j + kk)));
            const __m512i lo = _mm512_shuffle_epi8(tbl, _mm512_and_si512(v, m4));
            const __m512i hi =
                _mm512_shuffle_epi8(tbl, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
            acc[j] =
                _mm512_dpbusd_epi32(acc[j], lo, _mm512_set1_epi32(x8_load32(xq + 32 * j + 4 * kk)));
            acc[j] = _mm512_dpbusd_epi32(acc[j], hi,
                                         _mm512_set1_epi32(x8_load32(xq + 32 * j + 16 + 4 * kk)));
        }
    }
    __m512i l, h;
    kx16_iq4_scale_regs(blk, &l, &h);
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        *isum = _mm512_add_epi32(*isum, _mm512_mullo_epi32(acc[j], kx16_iq4_scale(l, h, j)));
}

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME     matmul_iq4_xs_x16_vnni
#define KX_WBLK     block_iq4_xsx16
#define KX_ISUMS    kx16_isums_iq4xs_vnni
#define KX_ISUMS_PF kx16_isums1_iq4xs_vnni
#define KX_HAS_MIN  0
#define KX_LINK     static
#include "arch/x86/avx2/kx8_tmpl.h"
/* ---- Q3_Kx16 (layout: src/quant.h), one zmm lane per row ----
 * A group's three loads give eight vectors of u = q + 4 (kx16_q3_units);
 * sub-block j = 8 h + 2 s + half is one dpbusd chain started at -4
 * bsums[j] (xp->q3c: the offset, exactly), times its scale - 32. Bounds:
 * |chain| <= 16 * 7 * 127 + 4 * 16 * 128, times 32, sixteen sub-blocks:
 * inside int32. */
GL_ALWAYS_INLINE void kx16_q3_units(const uint8_t *g, __m512i u[8])
{
    const __m512i m7 = _mm512_set1_epi8(7), m3 = _mm512_set1_epi8(3);
    const __m512i b0 = _mm512_loadu_si512((const void *)g);
    const __m512i b1 = _mm512_loadu_si512((const void *)(g + 64));
    const __m512i b2 = _mm512_loadu_si512((const void *)(g + 128));
    u[0] = _mm512_and_si512(b0, m7);
    u[1] = _mm512_and_si512(_mm512_srli_epi16(b0, 3), m7);
    u[2] = _mm512_and_si512(b1, m7);
    u[3] = _mm512_and_si512(_mm512_srli_epi16(b1, 3), m7);
    u[4] = _mm512_and_si512(b2, m7);
    u[5] = _mm512_and_si512(_mm512_srli_epi16(b2, 3), m7);
    /* bits 0-1 from B0 / B1's top bits, bit 2 from B2's (0xe4: c ? a : b) */
    u[6] = _mm512_and_si512(
        _mm512_ternarylogic_epi32(_mm512_srli_epi16(b0, 6), _mm512_srli_epi16(b2, 4), m3, 0xe4),
        m7);
    u[7] = _mm512_and_si512(
        _mm512_ternarylogic_epi32(_mm512_srli_epi16(b1, 6), _mm512_srli_epi16(b2, 5), m3, 0xe4),
        m7);
}

/* the sixteen rows' scales - 32 as bytes: sc[t] byte b = scale 4 t + b */
GL_ALWAYS_INLINE void kx16_q3_scales(const uint8_t *scales, __m512i sc[4])
{
    const __m512i m6 = _mm512_set1_epi8(0x3f), k32 = _mm512_set1_epi8(32);
    const __m512i u0 = _mm512_loadu_si512((const void *)scales);
    const __m512i u1 = _mm512_loadu_si512((const void *)(scales + 64));
    const __m512i u2 = _mm512_loadu_si512((const void *)(scales + 128));
    sc[0] = _mm512_sub_epi8(_mm512_and_si512(u0, m6), k32);
    sc[1] = _mm512_sub_epi8(_mm512_and_si512(u1, m6), k32);
    sc[2] = _mm512_sub_epi8(_mm512_and_si512(u2, m6), k32);
    /* bits 0-1 from unit 0's top bits, 2-3 from unit 1's, 4-5 from unit 2's */
    const __m512i t12 = _mm512_ternarylogic_epi32(
        _mm512_srli_epi16(u1, 4), _mm512_srli_epi16(u2, 2), _mm512_set1_epi8(0x0c), 0xe4);
    const __m512i top =
        _mm512_ternarylogic_epi32(_mm512_srli_epi16(u0, 6), t12, _mm512_set1_epi8(0x03), 0xe4);
    sc[3] = _mm512_sub_epi8(_mm512_and_si512(top, m6), k32);
}

/* sub-block j's scales as int32 lanes (sign-extended byte j % 4 of sc[j / 4]) */
GL_ALWAYS_INLINE __m512i kx16_q3_scale(const __m512i sc[4], int j)
{
    return _mm512_srai_epi32(_mm512_shuffle_epi8(sc[j / 4], kx512_ctl(kx_byte32(j % 4, 1))), 24);
}

GL_ALWAYS_INLINE void kx16_isums_q3K_vnni(const block_q3_Kx16 *blk, const int8_t *const *xq,
                                          const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                                          const int nc)
{
    (void)imin;
    __m512i sc[4];
    kx16_q3_scales(blk->scales, sc);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++) {
            __m512i acc[KX_C][4];
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
                for (int s = 0; s < 4; s++)
                    acc[c][s] = _mm512_set1_epi32(xp[c]->q3c[8 * h + 2 * s + half]);
#pragma GCC unroll 2
            for (int pp = 0; pp < 2; pp++) {
                const int p = 2 * half + pp;
                __m512i u[8];
                kx16_q3_units(blk->q + 192 * (4 * h + p), u);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
#pragma GCC unroll 8
                    for (int t = 0; t < 8; t++)
                        acc[c][t % 4] = _mm512_dpbusd_epi32(
                            acc[c][t % 4], u[t],
                            _mm512_set1_epi32(
                                x8_load32(xq[c] + 128 * h + 32 * (t % 4) + 4 * (2 * p + t / 4))));
            }
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++) {
                const __m512i scj = kx16_q3_scale(sc, 8 * h + 2 * s + half);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
                    isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c][s], scj));
            }
        }
}

/* Decode (one column): both halves of each h at once (eight chains), the
 * stream's prefetches in eight slices between the loads. */
GL_ALWAYS_INLINE void kx16_isums1_q3K_vnni(const block_q3_Kx16 *blk, const int8_t *xq,
                                           const kx_xprep *xp, __m512i *isum, __m512i *imin,
                                           const kx_pf *pf)
{
    (void)imin;
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m512i acc[2][4];
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++)
                acc[half][s] = _mm512_set1_epi32(xp->q3c[8 * h + 2 * s + half]);
#pragma GCC unroll 2
        for (int pp = 0; pp < 2; pp++)
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++) {
                const int p = 2 * half + pp;
                kx_pf_part(pf, 4 * h + 2 * pp + half, 8, sizeof *blk);
                __m512i u[8];
                kx16_q3_units(blk->q + 192 * (4 * h + p), u);
#pragma GCC unroll 8
                for (int t = 0; t < 8; t++)
                    acc[half][t % 4] = _mm512_dpbusd_epi32(
                        acc[half][t % 4], u[t],
                        _mm512_set1_epi32(
                            x8_load32(xq + 128 * h + 32 * (t % 4) + 4 * (2 * p + t / 4))));
            }
        __m512i sc[4];
        kx16_q3_scales(blk->scales, sc);
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++)
                *isum = _mm512_add_epi32(
                    *isum,
                    _mm512_mullo_epi32(acc[half][s], kx16_q3_scale(sc, 8 * h + 2 * s + half)));
    }
}

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME     matmul_q3_K_x16_vnni
#define KX_WBLK     block_q3_Kx16
#define KX_ISUMS    kx16_isums_q3K_vnni
#define KX_ISUMS_PF kx16_isums1_q3K_vnni
#define KX_HAS_MIN  0
#define KX_LINK     static
#include "arch/x86/avx2/kx8_tmpl.h"
/* ---- Q2_Kx16 (layout: src/quant.h), one zmm lane per row ----
 * Unit k of qs gives four vectors of 2-bit quants u_s = (v >> 2 s) & 3;
 * sub-block j = 8 h + 2 s + half (h = k / 8, half = k % 8 / 4) is one
 * dpbusd chain, times its 4-bit scale; the mins dpwssd the bsum pairs
 * (b6). All exact. */
GL_ALWAYS_INLINE void kx16_q2_scales_mins(const uint8_t *scales, const kx_xprep *const *xp,
                                          __m512i sc[4], __m512i *imin, const int nc)
{
    const __m512i m15 = _mm512_set1_epi8(15);
    __m512i mn[4];
#pragma GCC unroll 4
    for (int t = 0; t < 4; t++) {
        const __m512i u = _mm512_loadu_si512((const void *)(scales + 64 * t));
        sc[t] = _mm512_and_si512(u, m15);
        mn[t] = _mm512_and_si512(_mm512_srli_epi16(u, 4), m15);
    }
#pragma GCC unroll 8
    for (int p = 0; p < 8; p++) {
        const __m512i mp =
            _mm512_shuffle_epi8(mn[p / 2], kx512_ctl(kx_pair16(2 * (p % 2), 2 * (p % 2) + 1)));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++)
            imin[c] = _mm512_dpwssd_epi32(imin[c], mp, _mm512_set1_epi32(xp[c]->b6[p]));
    }
}

GL_ALWAYS_INLINE void kx16_q2_units(const uint8_t *q, __m512i u[4])
{
    const __m512i m3 = _mm512_set1_epi8(3);
    const __m512i v = _mm512_loadu_si512((const void *)q);
    u[0] = _mm512_and_si512(v, m3);
    u[1] = _mm512_and_si512(_mm512_srli_epi16(v, 2), m3);
    u[2] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m3);
    u[3] = _mm512_and_si512(_mm512_srli_epi16(v, 6), m3);
}

/* sub-block j's scales as int32 lanes */
GL_ALWAYS_INLINE __m512i kx16_q2_scale(const __m512i sc[4], int j)
{
    return _mm512_shuffle_epi8(sc[j / 4], kx512_ctl(kx_byte32(j % 4, 0)));
}

GL_ALWAYS_INLINE void kx16_isums_q2K_vnni(const block_q2_Kx16 *blk, const int8_t *const *xq,
                                          const kx_xprep *const *xp, __m512i *isum, __m512i *imin,
                                          const int nc)
{
    __m512i sc[4];
    kx16_q2_scales_mins(blk->scales, xp, sc, imin, nc);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++) {
            __m512i acc[KX_C][4];
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
                for (int s = 0; s < 4; s++)
                    acc[c][s] = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int kk = 0; kk < 4; kk++) {
                const int k = 8 * h + 4 * half + kk;
                __m512i u[4];
                kx16_q2_units(blk->qs + 64 * k, u);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
#pragma GCC unroll 4
                    for (int s = 0; s < 4; s++)
                        acc[c][s] = _mm512_dpbusd_epi32(
                            acc[c][s], u[s],
                            _mm512_set1_epi32(x8_load32(xq[c] + 128 * h + 32 * s + 4 * (k % 8))));
            }
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++) {
                const __m512i scj = kx16_q2_scale(sc, 8 * h + 2 * s + half);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++)
                    isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c][s], scj));
            }
        }
}

/* Decode (one column): both halves of each h at once (eight chains), the
 * stream's prefetches in sixteen slices between the loads. */
GL_ALWAYS_INLINE void kx16_isums1_q2K_vnni(const block_q2_Kx16 *blk, const int8_t *xq,
                                           const kx_xprep *xp, __m512i *isum, __m512i *imin,
                                           const kx_pf *pf)
{
    __m512i sc[4];
    kx16_q2_scales_mins(blk->scales, &xp, sc, imin, 1);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m512i acc[2][4];
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++)
                acc[half][s] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int kk = 0; kk < 4; kk++)
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++) {
                const int k = 8 * h + 4 * half + kk;
                kx_pf_part(pf, 8 * h + 2 * kk + half, 16, sizeof *blk);
                __m512i u[4];
                kx16_q2_units(blk->qs + 64 * k, u);
#pragma GCC unroll 4
                for (int s = 0; s < 4; s++)
                    acc[half][s] = _mm512_dpbusd_epi32(
                        acc[half][s], u[s],
                        _mm512_set1_epi32(x8_load32(xq + 128 * h + 32 * s + 4 * (k % 8))));
            }
#pragma GCC unroll 2
        for (int half = 0; half < 2; half++)
#pragma GCC unroll 4
            for (int s = 0; s < 4; s++)
                *isum = _mm512_add_epi32(
                    *isum,
                    _mm512_mullo_epi32(acc[half][s], kx16_q2_scale(sc, 8 * h + 2 * s + half)));
    }
}

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME     matmul_q2_K_x16_vnni
#define KX_WBLK     block_q2_Kx16
#define KX_ISUMS    kx16_isums_q2K_vnni
#define KX_ISUMS_PF kx16_isums1_q2K_vnni
#define KX_HAS_MIN  1
#define KX_LINK     static
#include "arch/x86/avx2/kx8_tmpl.h"
#undef KX_C
