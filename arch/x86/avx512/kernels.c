/* AVX-512 backend (F/BW/VL/DQ, optional VNNI). Starts from the AVX2 table
 * and overwrites: the Q8_0 / Q4_0 products with vpdpbusd when the CPU has
 * AVX512-VNNI, and the float products and attention scores with 16-lane
 * vectors. Built twice when the simde_avx512 option is on: natively, and
 * against SIMDe as the test-only backend "avx512-simde" (GL_USE_SIMDE). */
#include <math.h>

#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx512/simd.h"
#include "cpu.h"
#include "kernels.h"
#include "arch/x86/avx512/kquant_init.h"

#ifdef GL_USE_SIMDE
#define GL_AVX512_NAME "avx512-simde"
#define GL_AVX512_INIT gl_kernels_init_avx512_simde
#else
#define GL_AVX512_NAME "avx512"
#define GL_AVX512_INIT gl_kernels_init_avx512
#endif

void gl_kernels_init_avx2(gl_kernels *k);
void GL_AVX512_INIT(gl_kernels *k);

/* ---- int8 products with vpdpbusd (u8 x s8 -> s32, no saturation) ------
 * Same template and same exactness argument as the AVX2 versions (see
 * arch/x86/avx2/qmatmul_tmpl.h): the integer block sums are exact, and the
 * per-block float scaling follows generic's sequence, so results equal
 * generic bit for bit for every r0/r1 and nb. */

/* Q4_0: u = nibble in [0,15] (unsigned operand), x signed:
 * sum((u - 8) x) = dpbusd(u, x) - 8 dpbusd(1, x). */
typedef struct {
    __m256i x, corr;
} q4v_xp;

GL_ALWAYS_INLINE void q4v_wprep(__m256i *p, const block_q4_0 *blk)
{
    const __m128i q = _mm_loadu_si128((const __m128i *)blk->qs);
    *p = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0f));
}

GL_ALWAYS_INLINE void q4v_xprep(q4v_xp *p, const block_q8_0 *xb)
{
    p->x = _mm256_loadu_si256((const __m256i *)xb->qs);
    const __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), p->x);
    p->corr = _mm256_slli_epi32(gl_bcast_sum_epi32(s), 3);
}

GL_ALWAYS_INLINE __m256i q4v_dot(const __m256i *w, const q4v_xp *x)
{
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), *w, x->x);
}

#define QT_NAME    matmul_q4_0_vnni
#define QT_WBLK    block_q4_0
#define QT_WPREP_T __m256i
#define QT_WPREP   q4v_wprep
#define QT_XPREP_T q4v_xp
#define QT_XPREP   q4v_xprep
#define QT_DOT     q4v_dot
#define QT_XCORR   1
#define QT_WCORR   0
static GL_DECL_MATMUL_FN(matmul_q4_0_vnni);
#include "arch/x86/avx2/qmatmul_tmpl.h"

/* Q8_0: x + 128 is unsigned, so sum(w x) = dpbusd(x ^ 0x80, w) - 128 sum(w);
 * the correction depends on the weights only and is computed once per
 * weight block for all activation columns. Exact for all int8 values. */
GL_ALWAYS_INLINE void q8v_wprep(__m256i *p, const block_q8_0 *blk)
{
    *p = _mm256_loadu_si256((const __m256i *)blk->qs);
}

GL_ALWAYS_INLINE void q8v_xprep(__m256i *p, const block_q8_0 *xb)
{
    *p = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)xb->qs), _mm256_set1_epi8(-128));
}

GL_ALWAYS_INLINE __m256i q8v_dot(const __m256i *w, const __m256i *xu)
{
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), *xu, *w);
}

GL_ALWAYS_INLINE __m256i q8v_wcorr(const __m256i *w)
{
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(-128), *w);
}

#define QT_NAME        matmul_q8_0_vnni
#define QT_WBLK        block_q8_0
#define QT_WPREP_T     __m256i
#define QT_WPREP       q8v_wprep
#define QT_XPREP_T     __m256i
#define QT_XPREP       q8v_xprep
#define QT_DOT         q8v_dot
#define QT_XCORR       0
#define QT_WCORR       1
#define QT_WCORR_LANES q8v_wcorr
static GL_DECL_MATMUL_FN(matmul_q8_0_vnni);
#include "arch/x86/avx2/qmatmul_tmpl.h"

/* ---- Q8_0x8 with vpdpbusd (ymm, AVX512-VL) ------------------------------
 * Template and exactness argument: arch/x86/avx2/x8_tmpl.h. Each 32-byte
 * weight load is 4 bytes of each of 8 rows; the 4 activation bytes they
 * meet are broadcast to every lane (a memory broadcast operand), so
 * vpdpbusd leaves each row's partial sum in its own lane: no horizontal
 * sums, no scale gathers. */
#define X8_C 8

/* Q8_0 row groups (x8: ymm, x16: zmm): a = w ^ 0x80 = w + 128 (unsigned),
 * x signed; isum starts at -128 sum(x). Exact for every int8 pair, -128
 * included. */
#define DEF_Q8_ISUMS(name, WBLK, V, W, LOAD, XOR, SET1_8, SET1_32, DPBUSD)                         \
    GL_ALWAYS_INLINE void name(const WBLK *blk, const int8_t *const *xq, V *isum, const int nc)    \
    {                                                                                              \
        const V bias = SET1_8(-128);                                                               \
        _Pragma("GCC unroll 8") for (int k = 0; k < 8; k++)                                        \
        {                                                                                          \
            const V a = XOR(LOAD((const void *)(blk->qs + (W)*k)), bias);                          \
            _Pragma("GCC unroll 16") for (int c = 0; c < nc; c++) isum[c] =                        \
                DPBUSD(isum[c], a, SET1_32(x8_load32(xq[c] + 4 * k)));                             \
        }                                                                                          \
    }

GL_ALWAYS_INLINE __m256i q8_load256(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

DEF_Q8_ISUMS(x8_isums_q8_vnni, block_q8_0x8, __m256i, 32, q8_load256, _mm256_xor_si256,
             _mm256_set1_epi8, _mm256_set1_epi32, _mm256_dpbusd_epi32)

#define X8_NAME  matmul_q8_0_x8_vnni
#define X8_WBLK  block_q8_0x8
#define X8_SHIFT 7
#define X8_ISUMS x8_isums_q8_vnni
#define X8_LINK  static
#include "arch/x86/avx2/x8_tmpl.h"

/* ---- Q4_0x8 with vpdpbusd (ymm, AVX512-VL): the zen4 tune's Q4_0 -------
 * Where 256-bit products stream faster (tune width GL_YMM_Q4_0, src/tune.h)
 * Q4_0 keeps the AVX2 table's x8 layout. Its decode (one column) stays the
 * AVX2 kernel, which streams at the memory's pace; the tiles take
 * vpdpbusd, which prefill needs: the AVX2 tiles' maddubs + madd ran Zen 4
 * prefill at half the Q4_0x16 tiles' speed. Units as in Q4_0x16 below:
 * a = nibble u (unsigned), x signed, isum starts at -8 sum(x). */
GL_ALWAYS_INLINE void x8_isums_q4_vnni(const block_q4_0x8 *blk, const int8_t *const *xq,
                                       __m256i *isum, const int nc)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(blk->qs + 32 * k));
        const __m256i lo = _mm256_and_si256(v, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
#pragma GCC unroll 16
        for (int c = 0; c < nc; c++) {
            isum[c] = _mm256_dpbusd_epi32(isum[c], lo, _mm256_set1_epi32(x8_load32(xq[c] + 4 * k)));
            isum[c] =
                _mm256_dpbusd_epi32(isum[c], hi, _mm256_set1_epi32(x8_load32(xq[c] + 16 + 4 * k)));
        }
    }
}

#define X8_NAME  q4_0_x8_vnni_tiles
#define X8_WBLK  block_q4_0x8
#define X8_SHIFT 3
#define X8_ISUMS x8_isums_q4_vnni
#define X8_LINK  static
#include "arch/x86/avx2/x8_tmpl.h"

GL_ALWAYS_INLINE void q4_0_x8_vnni_impl(const void *w, size_t w_row_bytes, const void *x,
                                        size_t x_stride, float *y, size_t y_stride, int n, int r0,
                                        int r1, int nb, const int tune)
{
    (nb == 1 ? gl_matmul_q4_0_x8_avx2_tuned : q4_0_x8_vnni_tiles_tuned)[tune](
        w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb);
}
GL_TUNED_MATMULS(static, matmul_q4_0_x8_vnni, q4_0_x8_vnni_impl)

/* Unit k of a 32-element x16 block into the nc columns' sums: lo holds the
 * unsigned a of elements 4 k .. 4 k + 3 of each row (lane), hi those of
 * 16 + 4 k .. 16 + 4 k + 3 (Q4_0x16's wide tiles, Q5_0x16, IQ4_NLx16). */
GL_ALWAYS_INLINE void x16_dot_unit(__m512i *isum, __m512i lo, __m512i hi, const int8_t *const *xq,
                                   int k, const int nc)
{
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++) {
        isum[c] = _mm512_dpbusd_epi32(isum[c], lo, _mm512_set1_epi32(x8_load32(xq[c] + 4 * k)));
        isum[c] =
            _mm512_dpbusd_epi32(isum[c], hi, _mm512_set1_epi32(x8_load32(xq[c] + 16 + 4 * k)));
    }
}

/* ---- Q4_0x16 (src/quant.h) with vpdpbusd, one zmm lane per row ---------
 * Template and exactness argument: arch/x86/avx2/x8_tmpl.h, here with 16
 * lanes. Each 64-byte load is 4 bytes of each of 16 rows; a = nibble u
 * (unsigned), x signed, isum starts at -8 sum(x).
 * Decode tiles (nc <= 2) leave the high nibbles unshifted: dpbusd(v & 0xf0,
 * x) is 16 times their dot (products <= 240 * 128, no overflow), so their
 * own chain is shifted once at the end, exactly (a multiple of 16): two ops
 * per 64 bytes fewer, which shows in how fast decode streams. Wider tiles
 * shift per load instead: a second chain per column would cost registers. */
GL_ALWAYS_INLINE void x16_q4_units(const uint8_t *qs, const int8_t *const *xq, __m512i *isum,
                                   const int nc)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    if (nc <= 2) {
        const __m512i m_hi = _mm512_set1_epi8((char)0xf0);
        __m512i s_hi[2] = { _mm512_setzero_si512(), _mm512_setzero_si512() };
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            const __m512i v = _mm512_loadu_si512((const void *)(qs + 64 * k));
            const __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(v, m_hi);
#pragma GCC unroll 2
            for (int c = 0; c < nc; c++) {
                isum[c] =
                    _mm512_dpbusd_epi32(isum[c], lo, _mm512_set1_epi32(x8_load32(xq[c] + 4 * k)));
                s_hi[c] = _mm512_dpbusd_epi32(s_hi[c], hi,
                                              _mm512_set1_epi32(x8_load32(xq[c] + 16 + 4 * k)));
            }
        }
#pragma GCC unroll 2
        for (int c = 0; c < nc; c++)
            isum[c] = _mm512_add_epi32(isum[c], gl512_srai4_epi32(s_hi[c]));
        return;
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m512i v = gl512_loadu_unit(qs + 64 * k, 1);
        const __m512i lo = _mm512_and_si512(v, m4);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        x16_dot_unit(isum, lo, hi, xq, k, nc);
    }
}

GL_ALWAYS_INLINE void x16_isums_q4_vnni(const block_q4_0x16 *blk, const int8_t *const *xq,
                                        __m512i *isum, const int nc)
{
    x16_q4_units(blk->qs, xq, isum, nc);
}

#include "arch/x86/avx512/x16_lanes.h"
#define X8_TS        2
#define X8_SPREAD_PF 1
#define X8_NAME      matmul_q4_0_x16_vnni
#define X8_WBLK      block_q4_0x16
#define X8_SHIFT     3
#define X8_ISUMS     x16_isums_q4_vnni
#define X8_LINK      static
#include "arch/x86/avx2/x8_tmpl.h"

/* ---- Q8_0x16 (src/quant.h) with vpdpbusd, one zmm lane per row ---------
 * As Q8_0x8 (a = w ^ 0x80 = w + 128, isum starts at -128 sum(x)), each
 * 64-byte load 4 bytes of each of 16 rows: no inserts. */
DEF_Q8_ISUMS(x16_isums_q8_vnni, block_q8_0x16, __m512i, 64, _mm512_loadu_si512, _mm512_xor_si512,
             _mm512_set1_epi8, _mm512_set1_epi32, _mm512_dpbusd_epi32)

#include "arch/x86/avx512/x16_lanes.h"
#define X8_TS        2
#define X8_SPREAD_PF 1
#define X8_NAME      matmul_q8_0_x16_vnni
#define X8_WBLK      block_q8_0x16
#define X8_SHIFT     7
#define X8_ISUMS     x16_isums_q8_vnni
#define X8_LINK      static
#include "arch/x86/avx2/x8_tmpl.h"

/* ---- Q5_0x16 (src/quant.h) with vpdpbusd, one zmm lane per row ---------
 * a = u = w + 16 in [0, 31] (the nibble with its fifth bit at bit 4, from
 * the re-encoded lanes with one shift), x signed, isum starts at -16 sum(x):
 * exact, as Q4_0x16. */
GL_ALWAYS_INLINE void x16_q5_units(const uint8_t *qh, const uint8_t *qs, const int8_t *const *xq,
                                   __m512i *isum, const int nc)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f), m10 = _mm512_set1_epi8(0x10);
    const __m512i h = gl512_loadu_unit(qh, nc > 2);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m512i v = gl512_loadu_unit(qs + 64 * k, nc > 2);
        /* a | (b & c) */
        const __m512i lo = _mm512_ternarylogic_epi32(_mm512_and_si512(v, m4),
                                                     _mm512_slli_epi16(h, 4 - k), m10, 0xf8);
        const __m512i hi = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(v, 4), m4),
                                                     _mm512_srli_epi16(h, k), m10, 0xf8);
        x16_dot_unit(isum, lo, hi, xq, k, nc);
    }
}

GL_ALWAYS_INLINE void x16_isums_q5_vnni(const block_q5_0x16 *blk, const int8_t *const *xq,
                                        __m512i *isum, const int nc)
{
    x16_q5_units(blk->qh, blk->qs, xq, isum, nc);
}

#include "arch/x86/avx512/x16_lanes.h"
#define X8_TS        2
#define X8_SPREAD_PF 1
#define X8_NAME      matmul_q5_0_x16_vnni
#define X8_WBLK      block_q5_0x16
#define X8_SHIFT     4
#define X8_ISUMS     x16_isums_q5_vnni
#define X8_LINK      static
#include "arch/x86/avx2/x8_tmpl.h"

/* ---- IQ4_NLx16 (src/quant.h) with vpdpbusd, one zmm lane per row -------
 * Each nibble looks up a = value + 128 in [1, 241] (vpshufb over the table
 * with its sign bits flipped), unsigned; isum starts at -128 sum(x): exact,
 * as Q8_0x16. */
GL_ALWAYS_INLINE void x16_isums_iq4nl_vnni(const block_iq4_nlx16 *blk, const int8_t *const *xq,
                                           __m512i *isum, const int nc)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i tab =
        _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)gl_iq4nl_values)),
                         _mm512_set1_epi8((char)0x80));
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m512i v = gl512_loadu_unit(blk->qs + 64 * k, nc > 2);
        const __m512i lo = _mm512_shuffle_epi8(tab, _mm512_and_si512(v, m4));
        const __m512i hi = _mm512_shuffle_epi8(tab, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
        x16_dot_unit(isum, lo, hi, xq, k, nc);
    }
}

#include "arch/x86/avx512/x16_lanes.h"
#define X8_TS        2
#define X8_SPREAD_PF 1
#define X8_NAME      matmul_iq4_nl_x16_vnni
#define X8_WBLK      block_iq4_nlx16
#define X8_SHIFT     7
#define X8_ISUMS     x16_isums_iq4nl_vnni
#define X8_LINK      static
#include "arch/x86/avx2/x8_tmpl.h"

/* ---- Q4_1x16 / Q5_1x16 (src/quant.h) with vpdpbusd ----------------------
 * Q4_0x16's and Q5_0x16's units with a = q (already unsigned: no
 * correction); the offsets come in through the template's X8_MIN term. */
GL_ALWAYS_INLINE void x16_isums_q41_vnni(const block_q4_1x16 *blk, const int8_t *const *xq,
                                         __m512i *isum, const int nc)
{
    x16_q4_units(blk->qs, xq, isum, nc);
}

#include "arch/x86/avx512/x16_lanes.h"
#define X8_TS        2
#define X8_SPREAD_PF 1
#define X8_NAME      matmul_q4_1_x16_vnni
#define X8_WBLK      block_q4_1x16
#define X8_MIN
#define X8_ISUMS x16_isums_q41_vnni
#define X8_LINK  static
#include "arch/x86/avx2/x8_tmpl.h"

GL_ALWAYS_INLINE void x16_isums_q51_vnni(const block_q5_1x16 *blk, const int8_t *const *xq,
                                         __m512i *isum, const int nc)
{
    x16_q5_units(blk->qh, blk->qs, xq, isum, nc);
}

#include "arch/x86/avx512/x16_lanes.h"
#define X8_TS        2
#define X8_SPREAD_PF 1
#define X8_NAME      matmul_q5_1_x16_vnni
#define X8_WBLK      block_q5_1x16
#define X8_MIN
#define X8_ISUMS x16_isums_q51_vnni
#define X8_LINK  static
#include "arch/x86/avx2/x8_tmpl.h"

/* ---- float products, 16 lanes ------------------------------------------
 * arch/float_tmpl.h's, the lanes summed by gl512_hsum_ps. */
GL_ALWAYS_INLINE __m512 l5_f32(const void *p, int i)
{
    return _mm512_loadu_ps((const float *)p + i);
}
GL_ALWAYS_INLINE __m512 l5p_f32(const void *p, int i, int m)
{
    return gl512_load_part_ps((const float *)p + i, m);
}
GL_ALWAYS_INLINE __m512 l5_f16(const void *p, int i)
{
    return gl512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)p + i)));
}
GL_ALWAYS_INLINE __m512 l5p_f16(const void *p, int i, int m)
{
    return gl512_cvtph_ps(gl512_load_part_u16((const uint16_t *)p + i, m));
}
GL_ALWAYS_INLINE __m512 l5_bf16(const void *p, int i)
{
    return gl512_cvtbf16_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)p + i)));
}
GL_ALWAYS_INLINE __m512 l5p_bf16(const void *p, int i, int m)
{
    return gl512_cvtbf16_ps(gl512_load_part_u16((const uint16_t *)p + i, m));
}

#define FV_T                __m512
#define FV_W                16
#define FV_ZERO()           _mm512_setzero_ps()
#define FV_FMA(acc, w, x)   _mm512_fmadd_ps(w, x, acc)
#define FV_HSUM(v)          gl512_hsum_ps(v)
#define FV_LD_F32(p, i)     l5_f32(p, i)
#define FV_LDP_F32(p, i, m) l5p_f32(p, i, m)
#define FT_LINKAGE          static
/* 8 x 3 tiles: 24 accumulators, and each converted weight vector serves 3
 * columns (Qwen2.5-0.5B shape in F16, prefill of 64 tokens, 1 thread, Zen
 * 5: 151-170 tok/s with 4 x 2, 172-178 with 4 x 4, 204-212 with 6 x 4,
 * 204-223 with 8 x 3) */
#define FT_R 8
#define FT_C 3
#include "arch/float_tmpl.h"

DEF_FTILE(f5tile_f32, l5_f32, l5p_f32, 4)
DEF_FTILE(f5tile_f16, l5_f16, l5p_f16, 2)
DEF_FTILE(f5tile_bf16, l5_bf16, l5p_bf16, 2)

DEF_FMATMUL(matmul_f32_512, f5tile_f32)
DEF_FMATMUL(matmul_f16_512, f5tile_f16)
DEF_FMATMUL(matmul_bf16_512, f5tile_bf16)

DEF_FSCORES(attn_scores_f32_512, f5tile_f32)
DEF_FSCORES(attn_scores_f16_512, f5tile_f16)

/* ---- Q4_1, Q5_1, Q5_0, IQ4_NL with vpdpbusd (legacy_vnni.h) ---------- */
#if GL_AVX512_KQUANTS
#include "arch/x86/avx512/legacy_vnni.h"
#include "arch/x86/avx512/kquants_low.h"
#endif

/* ---- grouped-query and Q8_0-cache attention (attention.h) ------------- */
#include "arch/x86/avx512/attention.h"
#include "arch/x86/avx512/float_ops.h"
#include "arch/x86/avx512/quant_act.h"

/* Below these lengths 16-lane tiles and their horizontal sums cost more than
 * they save (stories260K, 64-wide rows and 8-wide heads: 48 -> 38 us per
 * token with the AVX2 kernels), so the AVX-512 backend hands them to AVX2.
 * The choice depends only on the length, fixed per weight and per model, so
 * results stay independent of batch size, thread split and chunking. */
#define SHORT_ROW  512
#define SHORT_HEAD 32

/* (the accumulations are bit-identical on every backend, so any mix is) */
static GL_DECL_ATTN_ACCUM_G_FN(attn_accum_g_f32_mix)
{
    (len < SHORT_HEAD ? gl_attn_accum_g_f32_avx2 : attn_accum_g_f32_512)(
        out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, len);
}
static GL_DECL_ATTN_ACCUM_G_FN(attn_accum_g_f16_mix)
{
    (len < SHORT_HEAD ? gl_attn_accum_g_f16_avx2 : attn_accum_g_f16_512)(
        out, out_stride, p, p_stride, n_q, v, row_stride, n_rows, len);
}

static GL_DECL_MATMUL_FN(matmul_f32_mix)
{
    (n < SHORT_ROW ? gl_matmul_f32_avx2 : matmul_f32_512)(w, w_row_bytes, x, x_stride, y, y_stride,
                                                          n, r0, r1, nb);
}
static GL_DECL_MATMUL_FN(matmul_f16_mix)
{
    (n < SHORT_ROW ? gl_matmul_f16_avx2 : matmul_f16_512)(w, w_row_bytes, x, x_stride, y, y_stride,
                                                          n, r0, r1, nb);
}
static GL_DECL_ATTN_SCORES_FN(attn_scores_f32_mix)
{
    (len < SHORT_HEAD ? gl_attn_scores_f32_avx2 : attn_scores_f32_512)(scores, q, k, row_stride,
                                                                       n_keys, len, scale);
}
static GL_DECL_ATTN_SCORES_FN(attn_scores_f16_mix)
{
    (len < SHORT_HEAD ? gl_attn_scores_f16_avx2 : attn_scores_f16_512)(scores, q, k, row_stride,
                                                                       n_keys, len, scale);
}
static GL_DECL_ATTN_SCORES_G_FN(attn_scores_g_f32_mix)
{
    (len < SHORT_HEAD ? gl_attn_scores_g_f32_avx2 : attn_scores_g_f32_512)(
        scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, len, scale);
}
static GL_DECL_ATTN_SCORES_G_FN(attn_scores_g_f16_mix)
{
    (len < SHORT_HEAD ? gl_attn_scores_g_f16_avx2 : attn_scores_g_f16_512)(
        scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, len, scale);
}
static GL_DECL_ATTN_SCORES_Q8_FN(attn_scores_q8_mix)
{
    (len < SHORT_HEAD ? gl_attn_scores_q8_avx2 : attn_scores_q8_512)(scores, q, k, row_stride,
                                                                     n_keys, off, len, scale);
}
static GL_DECL_ATTN_SCORES_Q8_G_FN(attn_scores_q8_g_mix)
{
    (len < SHORT_HEAD ? gl_attn_scores_q8_g_avx2 : attn_scores_q8_g_512)(
        scores, scores_stride, q, q_stride, n_q, k, row_stride, n_keys, off, len, scale);
}

void GL_AVX512_INIT(gl_kernels *k)
{
    gl_kernels_init_avx2(k);
    k->name = GL_AVX512_NAME;
#ifdef GL_USE_SIMDE
    const int vnni = 1; /* emulated: always test the VNNI path */
#else
    const int vnni = (gl_cpu_flags() & GL_CPU_AVX512VNNI) != 0;
#endif
    if (vnni) {
        k->matmul[GGUF_T_Q8_0] = matmul_q8_0_vnni;
        k->matmul[GGUF_T_Q4_0] = matmul_q4_0_vnni;
        /* the decode tune's instances (src/tune.h); with 256-bit products
         * (tune +ymm) the legacy types keep the AVX2 table's x8 layouts,
         * Q4_0x8 and Q8_0x8 with vpdpbusd on ymm; with +ymm-q4_0 only Q4_0
         * does */
        const int t = k->tune.id;
        k->matmul_packed[GL_LAYOUT_Q8_0X8] = matmul_q8_0_x8_vnni_tuned[t];
        k->matmul_packed[GL_LAYOUT_Q4_0X8] = matmul_q4_0_x8_vnni_tuned[t];
        static const gl_packed_kernel q4_0_x16[] = {
            { GL_LAYOUT_Q4_0X16, matmul_q4_0_x16_vnni_tuned, 1 },
        };
        static const gl_packed_kernel x16[] = {
            { GL_LAYOUT_Q8_0X16, matmul_q8_0_x16_vnni_tuned, 1 },
            { GL_LAYOUT_Q5_0X16, matmul_q5_0_x16_vnni_tuned, 1 },
            { GL_LAYOUT_IQ4_NLX16, matmul_iq4_nl_x16_vnni_tuned, 1 },
            { GL_LAYOUT_Q4_1X16, matmul_q4_1_x16_vnni_tuned, 1 },
            { GL_LAYOUT_Q5_1X16, matmul_q5_1_x16_vnni_tuned, 1 },
        };
        if (k->tune.ymm == GL_YMM_NONE)
            gl_kernels_set_packed(k, q4_0_x16, 1);
        if (k->tune.ymm != GL_YMM_ALL)
            gl_kernels_set_packed(k, x16, sizeof x16 / sizeof x16[0]);
#if GL_AVX512_KQUANTS
        legacy_init_vnni(k);
        kquants_low_init_vnni(k);
        GL_AVX512_KQUANT_INIT(k); /* kquant.c */
#endif
    }
    k->matmul[GGUF_T_F32] = matmul_f32_mix;
    k->matmul[GGUF_T_F16] = matmul_f16_mix;
    k->matmul[GGUF_T_BF16] = matmul_bf16_512;
    attn_init_512(k);
    k->softmax = softmax_512;
    k->swiglu = swiglu_512;
    k->gelu = gelu_512;
    k->quantize_act[GL_ACT_Q8_K] = quantize_q8_K_512;
    /* short rows and heads go to the AVX2 kernels, on both sides of the
     * single-head / group contract */
    k->attn_scores[GL_KV_F32] = attn_scores_f32_mix;
    k->attn_scores[GL_KV_F16] = attn_scores_f16_mix;
    k->attn_scores_g[GL_KV_F32] = attn_scores_g_f32_mix;
    k->attn_scores_g[GL_KV_F16] = attn_scores_g_f16_mix;
    k->attn_scores_q8 = attn_scores_q8_mix;
    k->attn_scores_q8_g = attn_scores_q8_g_mix;
    k->attn_accum_g[GL_KV_F32] = attn_accum_g_f32_mix;
    k->attn_accum_g[GL_KV_F16] = attn_accum_g_f16_mix;
}
