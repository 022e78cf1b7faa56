/* Template: matrix products over the row-interleaved x8 layouts
 * (src/quant.h, GL_LAYOUT_Q4_0X8 / Q8_0X8) x Q8_0 activations, included
 * once per (layout, ISA level) with these macros defined:
 *   PK_NAME           name of the generated GL_DECL_MATMUL_FN
 *   PK_WBLK           x8 block type (block_q4_0x8 / block_q8_0x8)
 *   PK_ISUM(wb, xs, b, nc, lo, hi)
 *                     for x8 block *wb (8 rows' block b) and activation
 *                     columns xs[0..nc): lo[c] lanes = the exact integer
 *                     dots of rows 0..3 with column c's block b, hi[c] of
 *                     rows 4..7 (always inline; nc is a constant)
 *
 * Exactness as in qmatmul_tmpl.h: per output element the float sequence is
 * generic's  sum = 0; for b: sum = sum + (float)isum_b * (dw_b * dx_b)
 * with float lanes over rows, so results are bit-equal to generic's packed
 * and plain kernels for every r0 / r1 and nb. A tile is one group of 8
 * rows x up to PK_MAXC columns; the whole group is computed and only rows
 * [r0, r1) are stored. */

#ifndef PK_MAXC
#define PK_MAXC 4
#endif

#define PK_CAT2(a, b) a##b
#define PK_CAT(a, b)  PK_CAT2(a, b)
#define PK_TILE       PK_CAT(PK_NAME, _tile)

GL_ALWAYS_INLINE void PK_TILE(const PK_WBLK *wg, const block_q8_0 *const *xs, float *const *ys,
                              int nblk, int k0, int k1, const int nc)
{
    float32x4_t alo[PK_MAXC], ahi[PK_MAXC];
    for (int c = 0; c < nc; c++)
        alo[c] = ahi[c] = vdupq_n_f32(0.0f);
    for (int b = 0; b < nblk; b++) {
        int32x4_t lo[PK_MAXC], hi[PK_MAXC];
        PK_ISUM(&wg[b], xs, b, nc, lo, hi);
        /* d[] opens the block (src/quant.h); bytes, as the block types are packed */
        const uint16x8_t dh =
            vreinterpretq_u16_u8(vld1q_u8((const uint8_t *)(const void *)(wg + b)));
        const float32x4_t dwlo = gl_h2f4(vget_low_u16(dh)), dwhi = gl_h2f4(vget_high_u16(dh));
        for (int c = 0; c < nc; c++) {
            const float32x4_t dx = gl_h2f4(vdup_n_u16(gl_blk_d(xs[c] + b)));
            alo[c] = vaddq_f32(alo[c], vmulq_f32(vcvtq_f32_s32(lo[c]), vmulq_f32(dwlo, dx)));
            ahi[c] = vaddq_f32(ahi[c], vmulq_f32(vcvtq_f32_s32(hi[c]), vmulq_f32(dwhi, dx)));
        }
    }
    for (int c = 0; c < nc; c++) {
        float t[8];
        vst1q_f32(t, alo[c]);
        vst1q_f32(t + 4, ahi[c]);
        memcpy(ys[c] + k0, t + k0, (size_t)(k1 - k0) * sizeof(float));
    }
}

GL_DECL_MATMUL_FN(PK_NAME)
{
    const int nblk = n / QK8_0;
    for (int g = r0 / GL_X8_ROWS; g * GL_X8_ROWS < r1; g++) {
        const int base = g * GL_X8_ROWS;
        const int k0 = r0 > base ? r0 - base : 0;
        const int k1 = r1 - base < GL_X8_ROWS ? r1 - base : GL_X8_ROWS;
        const PK_WBLK *wg = (const PK_WBLK *)((const char *)w + (size_t)g * w_row_bytes);
        for (int c0 = 0; c0 < nb; c0 += PK_MAXC) {
            const int nc = nb - c0 < PK_MAXC ? nb - c0 : PK_MAXC;
            const block_q8_0 *xs[PK_MAXC];
            float *ys[PK_MAXC];
            for (int c = 0; c < nc; c++) {
                xs[c] = (const block_q8_0 *)((const char *)x + (size_t)(c0 + c) * x_stride);
                ys[c] = y + (size_t)(c0 + c) * y_stride + base;
            }
            switch (nc) {
            case 1: PK_TILE(wg, xs, ys, nblk, k0, k1, 1); break;
            case 2: PK_TILE(wg, xs, ys, nblk, k0, k1, 2); break;
            case 3: PK_TILE(wg, xs, ys, nblk, k0, k1, 3); break;
            default: PK_TILE(wg, xs, ys, nblk, k0, k1, PK_MAXC); break;
            }
        }
    }
}

#undef PK_TILE
#undef PK_NAME
#undef PK_WBLK
#undef PK_ISUM
