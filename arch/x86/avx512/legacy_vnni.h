/* AVX-512 VNNI products of Q4_1, Q5_1, Q5_0 and IQ4_NL, included by
 * kernels.c (static functions: the native and the SIMDe builds each get
 * their own). The AVX2 row-tile template (arch/x86/avx2/rowtile_tmpl.h,
 * lanes over rows, bit-identical to generic) with vpdpbusd (u8 x s8 -> s32,
 * no saturation) for the block dot products: one instruction where AVX2
 * needs maddubs + madd (and, for IQ4_NL, two sign operations):
 *   Q4_1 / Q5_1 / Q5_0: u = the unsigned quant (Q5_0: w + 16; 16 sum(x)
 *     subtracted per column block);
 *   IQ4_NL: u = table value + 128 in [1, 241]; 128 sum(x) subtracted. */
#include "arch/x86/avx2/lq_util.h"

/* the Q5 high bits as 0x10 bytes: one masked move with AVX512BW */
GL_ALWAYS_INLINE __m256i lv_high_bits(const uint8_t *qh)
{
#ifdef GL_USE_SIMDE
    return lq_high_bits(qh);
#else
    return _mm256_maskz_mov_epi8((__mmask32)(uint32_t)x8_load32(qh), _mm256_set1_epi8(0x10));
#endif
}

GL_ALWAYS_INLINE __m256i lv_dot(__m256i u, const int8_t *xq)
{
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, _mm256_loadu_si256((const __m256i *)xq));
}

/* (sum of the block's 32 activation quants) << shift, in every lane */
GL_ALWAYS_INLINE __m256i lv_xsum(const int8_t *xq, int shift)
{
    return _mm256_slli_epi32(gl_bcast_sum_epi32(lv_dot(_mm256_set1_epi8(1), xq)), shift);
}

#define LQ_NAME(t)    matmul_##t##_vnni
#define LQ_LINK       static
#define LQ_DOT(u, xq) lv_dot(u, xq)
#define LQ_HIGH(qh)   lv_high_bits(qh)
#include "arch/x86/avx2/legacy_tmpl.h"

/* gl_iq4nl_values + 128 */
static const uint8_t lv_iq4nl_u[16] = { 1,   24,  45,  63,  79,  93,  106, 118,
                                        129, 141, 153, 166, 181, 197, 217, 241 };

GL_ALWAYS_INLINE void iq4_nl_row_vnni(const block_iq4_nl *wb, const block_q8_0 *const *xb,
                                      __m256i *p, __m256i *pm, const int nc)
{
    (void)pm;
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)lv_iq4nl_u));
    const __m256i u = _mm256_shuffle_epi8(tbl, lq_nibbles(wb->qs));
    for (int c = 0; c < nc; c++)
        p[c] = lv_dot(u, xb[c]->qs);
}

GL_ALWAYS_INLINE __m256i iq4_nl_xcorr_vnni(const block_q8_0 *xb)
{
    return lv_xsum(xb->qs, 7);
}

#define RT_NAME  matmul_iq4_nl_vnni
#define RT_WBLK  block_iq4_nl
#define RT_QK    QK4_0
#define RT_XBLK  block_q8_0
#define RT_ACT   RT_Q8_0
#define RT_DOFF  0
#define RT_DHI   0
#define RT_MIN   0
#define RT_ROW   iq4_nl_row_vnni
#define RT_XCORR iq4_nl_xcorr_vnni
static GL_DECL_MATMUL_FN(matmul_iq4_nl_vnni);
#include "arch/x86/avx2/rowtile_tmpl.h"

static void legacy_init_vnni(gl_kernels *k)
{
    k->matmul[GGUF_T_Q4_1] = matmul_q4_1_vnni;
    k->matmul[GGUF_T_Q5_1] = matmul_q5_1_vnni;
    k->matmul[GGUF_T_Q5_0] = matmul_q5_0_vnni;
    k->matmul[GGUF_T_IQ4_NL] = matmul_iq4_nl_vnni;
}
