/* AVX-VNNI products over the row-interleaved x8 layouts (src/quant.h): the
 * AVX2 kernels' loops (arch/x86/avx2/x8_tmpl.h, which holds the exactness
 * argument) with vpdpbusd in place of maddubs + madd. Each 32-byte weight
 * load is 4 bytes of each of 8 rows against 4 activation bytes broadcast to
 * every lane, so each row's sum stays in its own lane. A column's low and
 * high nibble halves are two chains, so decode (one column) keeps two
 * vpdpbusd in flight per group. Integer sums are exact in any order: every
 * output equals generic's bit for bit. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avxvnni/avxvnni.h"

/* columns per tile: vpdpbusd needs no temporaries, so eight fit the
 * registers (Zen 5 prefill tiles, 128 columns, against four: Q4_0 1.07x,
 * Q8_0 1.08x, Q4_1 1.09x) */
#define X8_C 8
/* Unit k of a 32-element block, its low-nibble bytes lo (elements 4 k ..
 * 4 k + 3 of each row) and high ones hi (16 + 4 k ..), into the columns'
 * sums. The high half's chain has its own register sh only for one
 * column (decode's partial groups), where nothing else would overlap the
 * vpdpbusd latencies; vn_lohi_end adds it in. */
GL_ALWAYS_INLINE void vn_lohi(__m256i lo, __m256i hi, const int8_t *const *xq, int k, __m256i *isum,
                              __m256i *sh, const int nc)
{
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++) {
        __m256i *h = nc == 1 ? &sh[0] : &isum[c];
        isum[c] = gl_dpbusd256(isum[c], lo, _mm256_set1_epi32(x8_load32(xq[c] + 4 * k)));
        *h = gl_dpbusd256(*h, hi, _mm256_set1_epi32(x8_load32(xq[c] + 16 + 4 * k)));
    }
}

GL_ALWAYS_INLINE void vn_lohi_end(__m256i *isum, const __m256i *sh, const int nc)
{
    if (nc == 1)
        isum[0] = _mm256_add_epi32(isum[0], sh[0]);
}

/* Q4_0x8 / Q4_1x8: a = nibble u in [0, 15] */
GL_ALWAYS_INLINE void vn_q4_units(const uint8_t *qs, const int8_t *const *xq, __m256i *isum,
                                  const int nc)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    __m256i sh[1] = { _mm256_setzero_si256() };
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m256i v = gl256_loadu_unit(qs + 32 * k);
        const __m256i lo = _mm256_and_si256(v, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        vn_lohi(lo, hi, xq, k, isum, sh, nc);
    }
    vn_lohi_end(isum, sh, nc);
}

GL_ALWAYS_INLINE void vn_isums_q4(const block_q4_0x8 *blk, const int8_t *const *xq, __m256i *isum,
                                  const int nc)
{
    vn_q4_units(blk->qs, xq, isum, nc);
}

#define X8_NAME  vn_q4_0_x8
#define X8_WBLK  block_q4_0x8
#define X8_SHIFT 3
#define X8_ISUMS vn_isums_q4
#define X8_LINK  static
#include "arch/x86/avx2/x8_tmpl.h"

/* Q4_0x8 / Q4_1x8 decode (one column) stays the AVX2 kernel: it streams at
 * the memory's pace either way, and the vpdpbusd form measured slower (Zen
 * 5, 2048 x 5632, one column: Q4_0 from DRAM 0.89-0.98x, Q4_1 in L2 0.86x
 * over three runs; TinyLlama Q4_0 1-thread decode 0.93x); the tiles take
 * vpdpbusd. */
#define VN_DECODE_AVX2(name, avx2_tuned, vnni_tuned)                                               \
    GL_ALWAYS_INLINE void name(const void *w, size_t w_row_bytes, const void *x, size_t x_stride,  \
                               float *y, size_t y_stride, int n, int r0, int r1, int nb,           \
                               const int tune)                                                     \
    {                                                                                              \
        (nb == 1 ? avx2_tuned : vnni_tuned)[tune](w, w_row_bytes, x, x_stride, y, y_stride, n, r0, \
                                                  r1, nb);                                         \
    }
VN_DECODE_AVX2(vn_q4_0_impl, gl_matmul_q4_0_x8_avx2_tuned, vn_q4_0_x8_tuned)
GL_TUNED_MATMULS(, GL_VNNI_NAME(gl_matmul_q4_0_x8), vn_q4_0_impl)

/* Q8_0x8: a = w ^ 0x80 = w + 128 (unsigned), isum starts at -128 sum(x).
 * Exact for every int8 pair, -128 included; even and odd steps are two
 * chains. */
GL_ALWAYS_INLINE void vn_isums_q8(const block_q8_0x8 *blk, const int8_t *const *xq, __m256i *isum,
                                  const int nc)
{
    const __m256i bias = _mm256_set1_epi8(-128);
    __m256i s2[X8_C];
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++)
        s2[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        const __m256i a =
            _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(blk->qs + 32 * k)), bias);
#pragma GCC unroll 16
        for (int c = 0; c < nc; c++) {
            const __m256i x = _mm256_set1_epi32(x8_load32(xq[c] + 4 * k));
            if (k % 2 && nc == 1)
                s2[c] = gl_dpbusd256(s2[c], a, x);
            else
                isum[c] = gl_dpbusd256(isum[c], a, x);
        }
    }
#pragma GCC unroll 16
    for (int c = 0; c < nc; c++)
        isum[c] = _mm256_add_epi32(isum[c], s2[c]);
}

#define X8_NAME  GL_VNNI_NAME(gl_matmul_q8_0_x8)
#define X8_WBLK  block_q8_0x8
#define X8_SHIFT 7
#define X8_ISUMS vn_isums_q8
#include "arch/x86/avx2/x8_tmpl.h"

/* Q5_0x8 / Q5_1x8: a = u in [0, 31], the fifth bit at bit 4 from the
 * re-encoded lanes with one shift (src/quant.h) */
GL_ALWAYS_INLINE void vn_q5_units(const uint8_t *qh, const uint8_t *qs, const int8_t *const *xq,
                                  __m256i *isum, const int nc)
{
    const __m256i h = gl256_loadu_unit(qh);
    __m256i sh[1] = { _mm256_setzero_si256() };
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m256i v = gl256_loadu_unit(qs + 32 * k);
        __m256i lo, hi;
        x8_q5_lohi(v, h, k, &lo, &hi);
        vn_lohi(lo, hi, xq, k, isum, sh, nc);
    }
    vn_lohi_end(isum, sh, nc);
}

GL_ALWAYS_INLINE void vn_isums_q5(const block_q5_0x8 *blk, const int8_t *const *xq, __m256i *isum,
                                  const int nc)
{
    vn_q5_units(blk->qh, blk->qs, xq, isum, nc);
}

#define X8_NAME  GL_VNNI_NAME(gl_matmul_q5_0_x8)
#define X8_WBLK  block_q5_0x8
#define X8_SHIFT 4
#define X8_ISUMS vn_isums_q5
#include "arch/x86/avx2/x8_tmpl.h"

/* IQ4_NLx8: each nibble looks up its table value + 128 in [1, 241]
 * (unsigned; vpshufb of the table with its sign bits flipped), so isum
 * starts at -128 sum(x), as Q8_0's. Exact. */
GL_ALWAYS_INLINE void vn_isums_iq4nl(const block_iq4_nlx8 *blk, const int8_t *const *xq,
                                     __m256i *isum, const int nc)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i tab = vn_iq4_utable();
    __m256i sh[1] = { _mm256_setzero_si256() };
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        const __m256i v = gl256_loadu_unit(blk->qs + 32 * k);
        const __m256i ul = _mm256_shuffle_epi8(tab, _mm256_and_si256(v, m4));
        const __m256i uh = _mm256_shuffle_epi8(tab, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
        vn_lohi(ul, uh, xq, k, isum, sh, nc);
    }
    vn_lohi_end(isum, sh, nc);
}

#define X8_NAME  GL_VNNI_NAME(gl_matmul_iq4_nl_x8)
#define X8_WBLK  block_iq4_nlx8
#define X8_SHIFT 7
#define X8_ISUMS vn_isums_iq4nl
#include "arch/x86/avx2/x8_tmpl.h"

/* Q4_1x8 / Q5_1x8: the units above with a = q (no correction); the
 * offsets come in through the template's X8_MIN term */
GL_ALWAYS_INLINE void vn_isums_q41(const block_q4_1x8 *blk, const int8_t *const *xq, __m256i *isum,
                                   const int nc)
{
    vn_q4_units(blk->qs, xq, isum, nc);
}

#define X8_NAME vn_q4_1_x8
#define X8_WBLK block_q4_1x8
#define X8_MIN
#define X8_ISUMS vn_isums_q41
#define X8_LINK  static
#include "arch/x86/avx2/x8_tmpl.h"

VN_DECODE_AVX2(vn_q4_1_impl, gl_matmul_q4_1_x8_avx2_tuned, vn_q4_1_x8_tuned)
GL_TUNED_MATMULS(, GL_VNNI_NAME(gl_matmul_q4_1_x8), vn_q4_1_impl)

GL_ALWAYS_INLINE void vn_isums_q51(const block_q5_1x8 *blk, const int8_t *const *xq, __m256i *isum,
                                   const int nc)
{
    vn_q5_units(blk->qh, blk->qs, xq, isum, nc);
}

#define X8_NAME GL_VNNI_NAME(gl_matmul_q5_1_x8)
#define X8_WBLK block_q5_1x8
#define X8_MIN
#define X8_ISUMS vn_isums_q51
#include "arch/x86/avx2/x8_tmpl.h"
