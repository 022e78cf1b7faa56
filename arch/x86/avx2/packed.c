/* AVX2 products over the row-interleaved x8 layouts (src/quant.h); the
 * loop structure and the exactness argument are in x8_tmpl.h. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/util.h"

#define X8_C 4

/* Q4_0x8: a = nibble u in [0, 15]. maddubs(u, x) pairs are within
 * +-2 * 15 * 128 = 3840, so the 8 pair-sums of a block (4 bytes x 2
 * nibble halves) add up in int16 without overflow (|sum| <= 30720); one
 * madd per block and column widens them to the row's int32 sum. */
GL_ALWAYS_INLINE void x8_isums_q4_avx2(const block_q4_0x8 *blk, const int8_t *const *xq,
                                       __m256i *isum, const int nc)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    __m256i s16[X8_C];
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++)
        s16[c] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(blk->qs + 32 * k));
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
        const __m256i w = _mm256_loadu_si256((const __m256i *)(blk->qs + 32 * k));
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
