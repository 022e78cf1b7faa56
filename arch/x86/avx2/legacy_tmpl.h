/* Template: the Q4_1, Q5_1 (Q8_1 activations) and Q5_0 (Q8_0) products on
 * the row-tile template (rowtile_tmpl.h: lanes over rows, bit-identical to
 * arch/generic/legacy_quants.c), included once per ISA with:
 *   LQ_NAME(t)     the name of type t's generated matmul
 *   LQ_LINK        its linkage (static or empty)
 *   LQ_DOT(u, xq)  a block's dot of 32 unsigned quants u (<= 31) with 32
 *                  int8 activations, split over 8 int32 lanes (the
 *                  template sums them), exact
 *   LQ_HIGH(qh)    the Q5 fifth bits, bit j of the 32-bit qh as 0x10 in
 *                  byte j
 * u is the stored quant: Q4_1 the nibble, Q5_x nibble | bit << 4; Q5_0's
 * w = u - 16 takes back 16 sum(x) per column block. */
#define LQ_CAT2(a, b) a##b
#define LQ_CAT(a, b)  LQ_CAT2(a, b)
#define LQ_ROW(t)     LQ_CAT(LQ_NAME(t), _row)

GL_ALWAYS_INLINE void LQ_ROW(q4_1)(const block_q4_1 *wb, const block_q8_1 *const *xb, __m256i *p,
                                   __m256i *pm, const int nc)
{
    (void)pm;
    const __m256i u = lq_nibbles(wb->qs);
    for (int c = 0; c < nc; c++)
        p[c] = LQ_DOT(u, xb[c]->qs);
}

#define RT_NAME LQ_NAME(q4_1)
#define RT_WBLK block_q4_1
#define RT_QK   QK4_0
#define RT_XBLK block_q8_1
#define RT_ACT  RT_Q8_1
#define RT_DOFF 0
#define RT_DHI  0
#define RT_MIN  1
#define RT_ROW  LQ_ROW(q4_1)
LQ_LINK GL_DECL_MATMUL_FN(LQ_NAME(q4_1));
#include "arch/x86/avx2/rowtile_tmpl.h"

GL_ALWAYS_INLINE void LQ_ROW(q5_1)(const block_q5_1 *wb, const block_q8_1 *const *xb, __m256i *p,
                                   __m256i *pm, const int nc)
{
    (void)pm;
    const __m256i u = _mm256_or_si256(lq_nibbles(wb->qs), LQ_HIGH(wb->qh));
    for (int c = 0; c < nc; c++)
        p[c] = LQ_DOT(u, xb[c]->qs);
}

#define RT_NAME LQ_NAME(q5_1)
#define RT_WBLK block_q5_1
#define RT_QK   QK4_0
#define RT_XBLK block_q8_1
#define RT_ACT  RT_Q8_1
#define RT_DOFF 0
#define RT_DHI  0
#define RT_MIN  1
#define RT_ROW  LQ_ROW(q5_1)
LQ_LINK GL_DECL_MATMUL_FN(LQ_NAME(q5_1));
#include "arch/x86/avx2/rowtile_tmpl.h"

GL_ALWAYS_INLINE void LQ_ROW(q5_0)(const block_q5_0 *wb, const block_q8_0 *const *xb, __m256i *p,
                                   __m256i *pm, const int nc)
{
    (void)pm;
    const __m256i u = _mm256_or_si256(lq_nibbles(wb->qs), LQ_HIGH(wb->qh));
    for (int c = 0; c < nc; c++)
        p[c] = LQ_DOT(u, xb[c]->qs);
}

/* 16 sum(x) in every lane */
GL_ALWAYS_INLINE __m256i LQ_CAT(LQ_NAME(q5_0), _xcorr)(const block_q8_0 *xb)
{
    return _mm256_slli_epi32(gl_bcast_sum_epi32(LQ_DOT(_mm256_set1_epi8(1), xb->qs)), 4);
}

#define RT_NAME  LQ_NAME(q5_0)
#define RT_WBLK  block_q5_0
#define RT_QK    QK4_0
#define RT_XBLK  block_q8_0
#define RT_ACT   RT_Q8_0
#define RT_DOFF  0
#define RT_DHI   0
#define RT_MIN   0
#define RT_ROW   LQ_ROW(q5_0)
#define RT_XCORR LQ_CAT(LQ_NAME(q5_0), _xcorr)
LQ_LINK GL_DECL_MATMUL_FN(LQ_NAME(q5_0));
#include "arch/x86/avx2/rowtile_tmpl.h"

#undef LQ_ROW
#undef LQ_CAT
#undef LQ_CAT2
#undef LQ_NAME
#undef LQ_LINK
#undef LQ_DOT
#undef LQ_HIGH
