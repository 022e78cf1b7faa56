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
typedef struct { int8x16_t p[4]; } pair32;

GL_ALWAYS_INLINE pair32 zip_rows(gl_q32 a, gl_q32 b)
{
    const int64x2_t alo = vreinterpretq_s64_s8(a.lo), blo = vreinterpretq_s64_s8(b.lo);
    const int64x2_t ahi = vreinterpretq_s64_s8(a.hi), bhi = vreinterpretq_s64_s8(b.hi);
    return (pair32){ { vreinterpretq_s8_s64(vzip1q_s64(alo, blo)),
                       vreinterpretq_s8_s64(vzip2q_s64(alo, blo)),
                       vreinterpretq_s8_s64(vzip1q_s64(ahi, bhi)),
                       vreinterpretq_s8_s64(vzip2q_s64(ahi, bhi)) } };
}

GL_ALWAYS_INLINE int32x4_t mmla32(const pair32 *w, const pair32 *x)
{
    int32x4_t a = vmmlaq_s32(vdupq_n_s32(0), w->p[0], x->p[0]);
    a = vmmlaq_s32(a, w->p[1], x->p[1]);
    a = vmmlaq_s32(a, w->p[2], x->p[2]);
    return vmmlaq_s32(a, w->p[3], x->p[3]);
}

/* Columns go in pairs; an odd last column is paired with itself. */
#define DEF_ISUM(NAME, WBLK, UNPACK)                                                           \
    GL_ALWAYS_INLINE void NAME(const WBLK *const *wr, int b, const block_q8_0 *const *xs,      \
                               const int nc, int32x4_t *s)                                    \
    {                                                                                          \
        const pair32 w01 = zip_rows(UNPACK(wr[0] + b), UNPACK(wr[1] + b));                     \
        const pair32 w23 = zip_rows(UNPACK(wr[2] + b), UNPACK(wr[3] + b));                     \
        for (int c = 0; c < nc; c += 2) {                                                      \
            const int c1 = c + 1 < nc ? c + 1 : c;                                             \
            const pair32 xp = zip_rows(gl_unpack_q8_0(xs[c] + b), gl_unpack_q8_0(xs[c1] + b)); \
            const int32x4_t t01 = mmla32(&w01, &xp), t23 = mmla32(&w23, &xp);                  \
            s[c] = vuzp1q_s32(t01, t23); /* {r0 r1 r2 r3} . column c  */                       \
            if (c + 1 < nc)                                                                    \
                s[c + 1] = vuzp2q_s32(t01, t23); /* . column c + 1 */                          \
        }                                                                                      \
    }

DEF_ISUM(isum_q8_0_mmla, block_q8_0, gl_unpack_q8_0)
DEF_ISUM(isum_q4_0_mmla, block_q4_0, gl_unpack_q4_0)

#define QT_NAME gl_matmul_q8_0_neon_i8mm
#define QT_WBLK block_q8_0
#define QT_ISUM isum_q8_0_mmla
#include "arch/arm/neon/qmatmul_tmpl.h"

#define QT_NAME gl_matmul_q4_0_neon_i8mm
#define QT_WBLK block_q4_0
#define QT_ISUM isum_q4_0_mmla
#include "arch/arm/neon/qmatmul_tmpl.h"
