/* NEON + i8mm (-march=armv8.2-a+dotprod+i8mm): Q8_0 / Q4_0 matrix products
 * with smmla. One smmla multiplies a 2x8 int8 matrix (two rows' 8-byte
 * chunks) by the transpose of another 2x8 (two activation columns' chunks)
 * into a 2x2 int32 tile, {r0.c0, r0.c1, r1.c0, r1.c1}: the 4-row x 2-column
 * tile of a block takes 4 chunks x 2 row pairs = 8 smmla. Same template and
 * exactness argument as the baseline versions (qmatmul_tmpl.h). */
#include "arch/arm/neon/neon.h"
#include "arch/arm/neon/util.h"

/* The 4 8-byte chunks of two 32-byte rows, interleaved pairwise:
 * p[j] = [a chunk j | b chunk j]. */
typedef struct {
    int8x16_t p[4];
} pair32;

GL_ALWAYS_INLINE pair32 zip_rows(gl_q32 a, gl_q32 b)
{
    const int64x2_t alo = vreinterpretq_s64_s8(a.lo), blo = vreinterpretq_s64_s8(b.lo);
    const int64x2_t ahi = vreinterpretq_s64_s8(a.hi), bhi = vreinterpretq_s64_s8(b.hi);
    return (pair32){
        { vreinterpretq_s8_s64(vzip1q_s64(alo, blo)), vreinterpretq_s8_s64(vzip2q_s64(alo, blo)),
          vreinterpretq_s8_s64(vzip1q_s64(ahi, bhi)), vreinterpretq_s8_s64(vzip2q_s64(ahi, bhi)) }
    };
}

GL_ALWAYS_INLINE int32x4_t mmla32(const pair32 *w, const pair32 *x)
{
    int32x4_t a = vmmlaq_s32(vdupq_n_s32(0), w->p[0], x->p[0]);
    a = vmmlaq_s32(a, w->p[1], x->p[1]);
    a = vmmlaq_s32(a, w->p[2], x->p[2]);
    return vmmlaq_s32(a, w->p[3], x->p[3]);
}

/* Columns go in pairs; an odd last column is paired with itself. */
#define DEF_ISUM(NAME, WBLK, XBLK, UNPACK)                                                         \
    GL_ALWAYS_INLINE void NAME(const WBLK *const *wr, int b, const XBLK *const *xs, const int nc,  \
                               int32x4_t *s)                                                       \
    {                                                                                              \
        const pair32 w01 = zip_rows(UNPACK(wr[0] + b), UNPACK(wr[1] + b));                         \
        const pair32 w23 = zip_rows(UNPACK(wr[2] + b), UNPACK(wr[3] + b));                         \
        for (int c = 0; c < nc; c += 2) {                                                          \
            const int c1 = c + 1 < nc ? c + 1 : c;                                                 \
            const pair32 xp = zip_rows(gl_load_x32(xs[c][b].qs), gl_load_x32(xs[c1][b].qs));       \
            const int32x4_t t01 = mmla32(&w01, &xp), t23 = mmla32(&w23, &xp);                      \
            s[c] = vuzp1q_s32(t01, t23); /* {r0 r1 r2 r3} . column c  */                           \
            if (c + 1 < nc)                                                                        \
                s[c + 1] = vuzp2q_s32(t01, t23); /* . column c + 1 */                              \
        }                                                                                          \
    }

DEF_ISUM(isum_q8_0_mmla, block_q8_0, block_q8_0, gl_unpack_q8_0)
DEF_ISUM(isum_q4_0_mmla, block_q4_0, block_q8_0, gl_unpack_q4_0)
DEF_ISUM(isum_q5_0_mmla, block_q5_0, block_q8_0, gl_unpack_q5_0)
DEF_ISUM(isum_iq4_nl_mmla, block_iq4_nl, block_q8_0, gl_unpack_iq4_nl)
DEF_ISUM(isum_q4_1_mmla, block_q4_1, block_q8_1, gl_unpack_q4_1)
DEF_ISUM(isum_q5_1_mmla, block_q5_1, block_q8_1, gl_unpack_q5_1)

#define QT_NAME gl_matmul_q8_0_neon_i8mm
#define QT_WBLK block_q8_0
#define QT_ISUM isum_q8_0_mmla
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q4_0_neon_i8mm
#define QT_WBLK block_q4_0
#define QT_ISUM isum_q4_0_mmla
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q5_0_neon_i8mm
#define QT_WBLK block_q5_0
#define QT_XBLK block_q8_0
#define QT_ISUM isum_q5_0_mmla
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_iq4_nl_neon_i8mm
#define QT_WBLK block_iq4_nl
#define QT_XBLK block_q8_0
#define QT_ISUM isum_iq4_nl_mmla
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q4_1_neon_i8mm
#define QT_WBLK block_q4_1
#define QT_XBLK block_q8_1
#define QT_MIN
#define QT_ISUM isum_q4_1_mmla
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q5_1_neon_i8mm
#define QT_WBLK block_q5_1
#define QT_XBLK block_q8_1
#define QT_MIN
#define QT_ISUM isum_q5_1_mmla
#include "arch/arm/neon/qmatmul_tmpl.h"

/* ---- x8 layouts (src/quant.h). Chunk k of a block holds bytes 4k..4k+3 of
 * rows 0..3 (16 bytes) then rows 4..7; zipping the 32-bit lanes of chunks
 * k and k + 1 gives [row r bytes 4k..4k+7 | row r + 1 bytes 4k..4k+7], the
 * 2x8 operand smmla takes. Columns go in pairs (an odd last one is paired
 * with itself): 16 smmla per block and column pair. */

GL_ALWAYS_INLINE int8x16_t zip32_lo(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s32(vzip1q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
}
GL_ALWAYS_INLINE int8x16_t zip32_hi(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s32(vzip2q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
}

/* rows 0..7 of chunks (k, k + 1), given as 8 x 4 bytes each (ka/kb: rows
 * 0..3, ka4/kb4: rows 4..7), times activation pair chunk xm */
#define X8_MMLA(ka, kb, ka4, kb4, xm)                                                              \
    do {                                                                                           \
        acc01 = vmmlaq_s32(acc01, zip32_lo(ka, kb), xm);                                           \
        acc23 = vmmlaq_s32(acc23, zip32_hi(ka, kb), xm);                                           \
        acc45 = vmmlaq_s32(acc45, zip32_lo(ka4, kb4), xm);                                         \
        acc67 = vmmlaq_s32(acc67, zip32_hi(ka4, kb4), xm);                                         \
    } while (0)

#define X8_PAIR_OUT()                                                                              \
    do {                                                                                           \
        lo[c] = vuzp1q_s32(acc01, acc23);                                                          \
        hi[c] = vuzp1q_s32(acc45, acc67);                                                          \
        if (c + 1 < nc) {                                                                          \
            lo[c + 1] = vuzp2q_s32(acc01, acc23);                                                  \
            hi[c + 1] = vuzp2q_s32(acc45, acc67);                                                  \
        }                                                                                          \
    } while (0)

GL_ALWAYS_INLINE void pk_isum_q8x8_mmla(const block_q8_0x8 *wb, const block_q8_0 *const *xs, int b,
                                        const int nc, int32x4_t *lo, int32x4_t *hi)
{
    const int8_t *q = wb->qs;
    for (int c = 0; c < nc; c += 2) {
        const int c1 = c + 1 < nc ? c + 1 : c;
        const pair32 xp = zip_rows(gl_unpack_q8_0(xs[c] + b), gl_unpack_q8_0(xs[c1] + b));
        int32x4_t acc01 = vdupq_n_s32(0), acc23 = acc01, acc45 = acc01, acc67 = acc01;
        for (int m = 0; m < 4; m++) {
            const int8_t *p = q + 64 * m; /* chunks 2m, 2m + 1 */
            X8_MMLA(vld1q_s8(p), vld1q_s8(p + 32), vld1q_s8(p + 16), vld1q_s8(p + 48), xp.p[m]);
        }
        X8_PAIR_OUT();
    }
}

/* Q4_0: low nibbles of chunks 0..3 are elements 0..15 (activation pair
 * chunks m = 0, 1), high nibbles elements 16..31 (m = 2, 3). */
GL_ALWAYS_INLINE void pk_isum_q4x8_mmla(const block_q4_0x8 *wb, const block_q8_0 *const *xs, int b,
                                        const int nc, int32x4_t *lo, int32x4_t *hi)
{
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
    const int8x16_t eight = vdupq_n_s8(8);
    int8x16_t L[8], H[8]; /* chunk k: [2k] rows 0..3, [2k + 1] rows 4..7 */
    for (int i = 0; i < 8; i++) {
        const uint8x16_t v = vld1q_u8(wb->qs + 16 * i);
        L[i] = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, m4)), eight);
        H[i] = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight);
    }
    for (int c = 0; c < nc; c += 2) {
        const int c1 = c + 1 < nc ? c + 1 : c;
        const pair32 xp = zip_rows(gl_unpack_q8_0(xs[c] + b), gl_unpack_q8_0(xs[c1] + b));
        int32x4_t acc01 = vdupq_n_s32(0), acc23 = acc01, acc45 = acc01, acc67 = acc01;
        X8_MMLA(L[0], L[2], L[1], L[3], xp.p[0]);
        X8_MMLA(L[4], L[6], L[5], L[7], xp.p[1]);
        X8_MMLA(H[0], H[2], H[1], H[3], xp.p[2]);
        X8_MMLA(H[4], H[6], H[5], H[7], xp.p[3]);
        X8_PAIR_OUT();
    }
}

#define PK_NAME gl_matmul_q8_0_x8_neon_i8mm
#define PK_WBLK block_q8_0x8
#define PK_ISUM pk_isum_q8x8_mmla
#include "arch/arm/neon/packed_tmpl.h"

#define PK_NAME gl_matmul_q4_0_x8_neon_i8mm
#define PK_WBLK block_q4_0x8
#define PK_ISUM pk_isum_q4x8_mmla
#include "arch/arm/neon/packed_tmpl.h"
