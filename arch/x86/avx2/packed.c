/* AVX2 products over the row-interleaved x8 layouts (src/quant.h); the
 * loop structure and the exactness argument are in x8_tmpl.h. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/util.h"

#define X8_C 4

/* Q4_0x8: a = nibble u in [0, 15]. maddubs(u, x) pairs are within
 * +-2 * 15 * 128 = 3840, so the 8 pair-sums of a block (4 bytes x 2
 * nibble halves) add up in int16 without overflow (|sum| <= 30720); one
 * madd per block and column widens them to the row's int32 sum. */
GL_ALWAYS_INLINE void x8_q4_units(const uint8_t *qs, const int8_t *const *xq, __m256i *isum,
                                  const int nc)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    __m256i s16[X8_C];
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++)
        s16[c] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m256i v = gl256_loadu_unit(qs + 32 * k);
        const __m256i lo = _mm256_and_si256(v, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
#pragma GCC unroll 16
        for (int c = 0; c < nc; c++) {
            const __m256i xl = _mm256_set1_epi32(x8_load32(xq[c] + 4 * k));
            const __m256i xh = _mm256_set1_epi32(x8_load32(xq[c] + 16 + 4 * k));
            s16[c] = _mm256_add_epi16(s16[c], _mm256_maddubs_epi16(lo, xl));
            s16[c] = _mm256_add_epi16(s16[c], _mm256_maddubs_epi16(hi, xh));
        }
    }
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++)
        isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(s16[c], _mm256_set1_epi16(1)));
}

GL_ALWAYS_INLINE void x8_isums_q4_avx2(const block_q4_0x8 *blk, const int8_t *const *xq,
                                       __m256i *isum, const int nc)
{
    x8_q4_units(blk->qs, xq, isum, nc);
}

#define X8_NAME  gl_matmul_q4_0_x8_avx2
#define X8_WBLK  block_q4_0x8
#define X8_SHIFT 3
#define X8_ISUMS x8_isums_q4_avx2
#include "arch/x86/avx2/x8_tmpl.h"

/* Q8_0x8 with the sign trick: maddubs(|w|, sign(x, w)) multiplies |w| in
 * [0, 128] (unsigned) by +-x, so each pair sum is at most 2 * 128 * 127 =
 * 32512 and nothing saturates -- because activation quants are in
 * [-127, 127] (the quantize_q8_0 contract, src/kernels.h): sign(-128) would
 * wrap. Weight quants may be anything, -128 included. One madd per 4-byte
 * step widens a row's pair sums to int32 (two steps' pairs could overflow
 * int16). Exact, so the x8 template's equality with generic holds. */
GL_ALWAYS_INLINE void x8_isums_q8_avx2(const block_q8_0x8 *blk, const int8_t *const *xq,
                                       __m256i *isum, const int nc)
{
    const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        const __m256i w = gl256_loadu_unit(blk->qs + 32 * k);
        const __m256i aw = _mm256_abs_epi8(w);
#pragma GCC unroll 16
        for (int c = 0; c < nc; c++) {
            const __m256i sx = _mm256_sign_epi8(_mm256_set1_epi32(x8_load32(xq[c] + 4 * k)), w);
            isum[c] =
                _mm256_add_epi32(isum[c], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, sx), ones));
        }
    }
}

#define X8_NAME  gl_matmul_q8_0_x8_avx2
#define X8_WBLK  block_q8_0x8
#define X8_ISUMS x8_isums_q8_avx2
#include "arch/x86/avx2/x8_tmpl.h"

/* Q5_0x8: a = u = w + 16 in [0, 31], the fifth bit at bit 4 from the
 * re-encoded lanes with one shift (src/quant.h). maddubs(u, x) pairs are
 * within +-2 * 31 * 128 = 7936, so one unit's low and high halves add up
 * in int16 (|sum| <= 15872), widened by one madd per unit; isum starts at
 * -16 sum(x). Exact. */
GL_ALWAYS_INLINE void x8_q5_units(const uint8_t *qh, const uint8_t *qs, const int8_t *const *xq,
                                  __m256i *isum, const int nc)
{
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i h = _mm256_loadu_si256((const __m256i *)qh);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(qs + 32 * k));
        __m256i lo, hi;
        x8_q5_lohi(v, h, k, &lo, &hi);
#pragma GCC unroll 16
        for (int c = 0; c < nc; c++) {
            const __m256i xl = _mm256_set1_epi32(x8_load32(xq[c] + 4 * k));
            const __m256i xh = _mm256_set1_epi32(x8_load32(xq[c] + 16 + 4 * k));
            const __m256i s16 =
                _mm256_add_epi16(_mm256_maddubs_epi16(lo, xl), _mm256_maddubs_epi16(hi, xh));
            isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(s16, ones));
        }
    }
}

GL_ALWAYS_INLINE void x8_isums_q5_avx2(const block_q5_0x8 *blk, const int8_t *const *xq,
                                       __m256i *isum, const int nc)
{
    x8_q5_units(blk->qh, blk->qs, xq, isum, nc);
}

#define X8_NAME  gl_matmul_q5_0_x8_avx2
#define X8_WBLK  block_q5_0x8
#define X8_SHIFT 4
#define X8_ISUMS x8_isums_q5_avx2
#include "arch/x86/avx2/x8_tmpl.h"

/* IQ4_NLx8: each nibble looks up its signed value w in [-127, 113]
 * (vpshufb), then Q8_0x8's sign trick: maddubs(|w|, sign(x, w)) pairs are
 * within 2 * 127 * 127 (activation quants are in [-127, 127]), one madd
 * each. isum starts at 0. Exact. */
GL_ALWAYS_INLINE void x8_isums_iq4nl_avx2(const block_iq4_nlx8 *blk, const int8_t *const *xq,
                                          __m256i *isum, const int nc)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
    const __m256i tab =
        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)gl_iq4nl_values));
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m256i v = gl256_loadu_unit(blk->qs + 32 * k);
        const __m256i wl = _mm256_shuffle_epi8(tab, _mm256_and_si256(v, m4));
        const __m256i wh = _mm256_shuffle_epi8(tab, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
        const __m256i al = _mm256_abs_epi8(wl), ah = _mm256_abs_epi8(wh);
#pragma GCC unroll 16
        for (int c = 0; c < nc; c++) {
            const __m256i xl = _mm256_set1_epi32(x8_load32(xq[c] + 4 * k));
            const __m256i xh = _mm256_set1_epi32(x8_load32(xq[c] + 16 + 4 * k));
            const __m256i pl =
                _mm256_madd_epi16(_mm256_maddubs_epi16(al, _mm256_sign_epi8(xl, wl)), ones);
            const __m256i ph =
                _mm256_madd_epi16(_mm256_maddubs_epi16(ah, _mm256_sign_epi8(xh, wh)), ones);
            isum[c] = _mm256_add_epi32(isum[c], _mm256_add_epi32(pl, ph));
        }
    }
}

#define X8_NAME  gl_matmul_iq4_nl_x8_avx2
#define X8_WBLK  block_iq4_nlx8
#define X8_ISUMS x8_isums_iq4nl_avx2
#include "arch/x86/avx2/x8_tmpl.h"

/* Q4_1x8 / Q5_1x8: Q4_0x8's and Q5_0x8's units with a = q (already
 * unsigned: no correction); the offsets come in through the template's
 * X8_MIN term. */
GL_ALWAYS_INLINE void x8_isums_q41_avx2(const block_q4_1x8 *blk, const int8_t *const *xq,
                                        __m256i *isum, const int nc)
{
    x8_q4_units(blk->qs, xq, isum, nc);
}

#define X8_NAME gl_matmul_q4_1_x8_avx2
#define X8_WBLK block_q4_1x8
#define X8_MIN
#define X8_ISUMS x8_isums_q41_avx2
#include "arch/x86/avx2/x8_tmpl.h"

GL_ALWAYS_INLINE void x8_isums_q51_avx2(const block_q5_1x8 *blk, const int8_t *const *xq,
                                        __m256i *isum, const int nc)
{
    x8_q5_units(blk->qh, blk->qs, xq, isum, nc);
}

#define X8_NAME gl_matmul_q5_1_x8_avx2
#define X8_WBLK block_q5_1x8
#define X8_MIN
#define X8_ISUMS x8_isums_q51_avx2
#include "arch/x86/avx2/x8_tmpl.h"
