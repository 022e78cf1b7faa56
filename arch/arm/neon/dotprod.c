/* NEON + dotprod (-march=armv8.2-a+dotprod, Cortex-A76 / Raspberry Pi 5):
 * Q8_0 / Q4_0 matrix products with sdot. Same template and the same
 * exactness argument as the baseline versions (qmatmul_tmpl.h). */
#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"

/* 32 int8 pairs -> 4 int32 lanes; sdot sums 4 products per lane exactly. */
GL_ALWAYS_INLINE int32x4_t dot32_sdot(gl_q32 w, const int8_t *xq)
{
    const int32x4_t a = vdotq_s32(vdupq_n_s32(0), w.lo, vld1q_s8(xq));
    return vdotq_s32(a, w.hi, vld1q_s8(xq + 16));
}

#define DEF_ISUM(NAME, WBLK, XBLK, UNPACK)                                                         \
    GL_ALWAYS_INLINE void NAME(const WBLK *const *wr, int b, const XBLK *const *xs, const int nc,  \
                               int32x4_t *s)                                                       \
    {                                                                                              \
        const gl_q32 w0 = UNPACK(wr[0] + b), w1 = UNPACK(wr[1] + b);                               \
        const gl_q32 w2 = UNPACK(wr[2] + b), w3 = UNPACK(wr[3] + b);                               \
        for (int c = 0; c < nc; c++) {                                                             \
            const int8_t *xq = xs[c][b].qs;                                                        \
            s[c] = gl_reduce4_s32(dot32_sdot(w0, xq), dot32_sdot(w1, xq), dot32_sdot(w2, xq),      \
                                  dot32_sdot(w3, xq));                                             \
        }                                                                                          \
    }

DEF_ISUM(isum_q8_0_sdot, block_q8_0, block_q8_0, gl_unpack_q8_0)
DEF_ISUM(isum_q4_0_sdot, block_q4_0, block_q8_0, gl_unpack_q4_0)
DEF_ISUM(isum_q5_0_sdot, block_q5_0, block_q8_0, gl_unpack_q5_0)
DEF_ISUM(isum_iq4_nl_sdot, block_iq4_nl, block_q8_0, gl_unpack_iq4_nl)
DEF_ISUM(isum_q4_1_sdot, block_q4_1, block_q8_1, gl_unpack_q4_1)
DEF_ISUM(isum_q5_1_sdot, block_q5_1, block_q8_1, gl_unpack_q5_1)

#define QT_NAME gl_matmul_q8_0_neon_dotprod
#define QT_WBLK block_q8_0
#define QT_ISUM isum_q8_0_sdot
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q4_0_neon_dotprod
#define QT_WBLK block_q4_0
#define QT_ISUM isum_q4_0_sdot
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q5_0_neon_dotprod
#define QT_WBLK block_q5_0
#define QT_XBLK block_q8_0
#define QT_ISUM isum_q5_0_sdot
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_iq4_nl_neon_dotprod
#define QT_WBLK block_iq4_nl
#define QT_XBLK block_q8_0
#define QT_ISUM isum_iq4_nl_sdot
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q4_1_neon_dotprod
#define QT_WBLK block_q4_1
#define QT_XBLK block_q8_1
#define QT_MIN
#define QT_ISUM isum_q4_1_sdot
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q5_1_neon_dotprod
#define QT_WBLK block_q5_1
#define QT_XBLK block_q8_1
#define QT_MIN
#define QT_ISUM isum_q5_1_sdot
#include "arch/arm/neon/qmatmul_tmpl.h"

/* ---- x8 layouts (src/quant.h): the 32 bytes of chunk k hold bytes
 * 4k..4k+3 of rows 0..3 (first 16) and rows 4..7 (last 16), so one sdot by
 * lane, with the activation's 4 bytes 4k..4k+3 broadcast from lane k % 4,
 * adds each row's partial dot to its own lane: no reduction. */

GL_ALWAYS_INLINE void isum_q8x8_col(const block_q8_0x8 *wb, const int8_t *xq, int32x4_t *lo,
                                    int32x4_t *hi)
{
    const int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
    const int8_t *q = wb->qs;
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, b0 = a0, b1 = a0;
#define Q8X8_STEP(k, A, B, X, L)                                                                   \
    A = vdotq_laneq_s32(A, vld1q_s8(q + 32 * (k)), X, L);                                          \
    B = vdotq_laneq_s32(B, vld1q_s8(q + 32 * (k) + 16), X, L)
    Q8X8_STEP(0, a0, b0, x0, 0);
    Q8X8_STEP(1, a1, b1, x0, 1);
    Q8X8_STEP(2, a0, b0, x0, 2);
    Q8X8_STEP(3, a1, b1, x0, 3);
    Q8X8_STEP(4, a0, b0, x1, 0);
    Q8X8_STEP(5, a1, b1, x1, 1);
    Q8X8_STEP(6, a0, b0, x1, 2);
    Q8X8_STEP(7, a1, b1, x1, 3);
#undef Q8X8_STEP
    *lo = vaddq_s32(a0, a1);
    *hi = vaddq_s32(b0, b1);
}

/* Q4_0 byte 4k+j of a row holds element 4k+j (low nibble, times x[4k+j])
 * and element 16+4k+j (high nibble, times x[16+4k+j]). */
GL_ALWAYS_INLINE void isum_q4x8_col(const block_q4_0x8 *wb, const int8_t *xq, int32x4_t *lo,
                                    int32x4_t *hi)
{
    const int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
    const int8x16_t eight = vdupq_n_s8(8);
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, b0 = a0, b1 = a0;
#define Q4X8_STEP(k)                                                                               \
    do {                                                                                           \
        const uint8x16_t qa = vld1q_u8(wb->qs + 32 * (k)), qb = vld1q_u8(wb->qs + 32 * (k) + 16);  \
        a0 = vdotq_laneq_s32(a0, vsubq_s8(vreinterpretq_s8_u8(vandq_u8(qa, m4)), eight), x0, k);   \
        b0 = vdotq_laneq_s32(b0, vsubq_s8(vreinterpretq_s8_u8(vandq_u8(qb, m4)), eight), x0, k);   \
        a1 = vdotq_laneq_s32(a1, vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(qa, 4)), eight), x1, k);  \
        b1 = vdotq_laneq_s32(b1, vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(qb, 4)), eight), x1, k);  \
    } while (0)
    Q4X8_STEP(0);
    Q4X8_STEP(1);
    Q4X8_STEP(2);
    Q4X8_STEP(3);
#undef Q4X8_STEP
    *lo = vaddq_s32(a0, a1);
    *hi = vaddq_s32(b0, b1);
}

#define DEF_PK_ISUM(NAME, WBLK, COL)                                                               \
    GL_ALWAYS_INLINE void NAME(const WBLK *wb, const block_q8_0 *const *xs, int b, const int nc,   \
                               int32x4_t *lo, int32x4_t *hi)                                       \
    {                                                                                              \
        for (int c = 0; c < nc; c++)                                                               \
            COL(wb, xs[c][b].qs, &lo[c], &hi[c]);                                                  \
    }

DEF_PK_ISUM(pk_isum_q8x8_sdot, block_q8_0x8, isum_q8x8_col)
DEF_PK_ISUM(pk_isum_q4x8_sdot, block_q4_0x8, isum_q4x8_col)

#define PK_NAME gl_matmul_q8_0_x8_neon_dotprod
#define PK_WBLK block_q8_0x8
#define PK_ISUM pk_isum_q8x8_sdot
#include "arch/arm/neon/packed_tmpl.h"

#define PK_NAME gl_matmul_q4_0_x8_neon_dotprod
#define PK_WBLK block_q4_0x8
#define PK_ISUM pk_isum_q4x8_sdot
#include "arch/arm/neon/packed_tmpl.h"
