/* Reference matrix products over packed GGUF rows. Each output element is
 * one dot product accumulated block by block in order, independent of the
 * row range and the batch size. */
#include "arch/generic/generic.h"
#include "half.h"

static float dot_q8_0_q8_0(const block_q8_0 *w, const block_q8_0 *x, int nblocks)
{
    float sum = 0.0f;
    for (int b = 0; b < nblocks; b++) {
        int isum = 0;
        for (int j = 0; j < QK8_0; j++)
            isum += w[b].qs[j] * x[b].qs[j];
        sum += (float)isum * (gl_f16_to_f32(w[b].d) * gl_f16_to_f32(x[b].d));
    }
    return sum;
}

static float dot_q4_0_q8_0(const block_q4_0 *w, const block_q8_0 *x, int nblocks)
{
    float sum = 0.0f;
    for (int b = 0; b < nblocks; b++) {
        int isum = 0;
        for (int j = 0; j < QK4_0 / 2; j++) {
            isum += ((w[b].qs[j] & 0x0f) - 8) * x[b].qs[j];
            isum += ((w[b].qs[j] >> 4) - 8) * x[b].qs[j + QK4_0 / 2];
        }
        sum += (float)isum * (gl_f16_to_f32(w[b].d) * gl_f16_to_f32(x[b].d));
    }
    return sum;
}

GL_DECL_MATMUL_FN(gl_matmul_q8_0_generic)
{
    for (int b = 0; b < nb; b++) {
        const block_q8_0 *xb = (const block_q8_0 *)((const char *)x + b * x_stride);
        for (int r = r0; r < r1; r++) {
            const block_q8_0 *wr = (const block_q8_0 *)((const char *)w + r * w_row_bytes);
            y[b * y_stride + r] = dot_q8_0_q8_0(wr, xb, n / QK8_0);
        }
    }
}

GL_DECL_MATMUL_FN(gl_matmul_q4_0_generic)
{
    for (int b = 0; b < nb; b++) {
        const block_q8_0 *xb = (const block_q8_0 *)((const char *)x + b * x_stride);
        for (int r = r0; r < r1; r++) {
            const block_q4_0 *wr = (const block_q4_0 *)((const char *)w + r * w_row_bytes);
            y[b * y_stride + r] = dot_q4_0_q8_0(wr, xb, n / QK4_0);
        }
    }
}

GL_DECL_MATMUL_FN(gl_matmul_f32_generic)
{
    for (int b = 0; b < nb; b++) {
        const gl_f32u *xb = (const gl_f32u *)((const char *)x + b * x_stride);
        for (int r = r0; r < r1; r++) {
            const gl_f32u *wr = (const gl_f32u *)((const char *)w + r * w_row_bytes);
            float sum = 0.0f;
            for (int j = 0; j < n; j++)
                sum += wr[j] * xb[j];
            y[b * y_stride + r] = sum;
        }
    }
}

GL_DECL_MATMUL_FN(gl_matmul_f16_generic)
{
    for (int b = 0; b < nb; b++) {
        const gl_f32u *xb = (const gl_f32u *)((const char *)x + b * x_stride);
        for (int r = r0; r < r1; r++) {
            const gl_u16u *wr = (const gl_u16u *)((const char *)w + r * w_row_bytes);
            float sum = 0.0f;
            for (int j = 0; j < n; j++)
                sum += gl_f16_to_f32(wr[j]) * xb[j];
            y[b * y_stride + r] = sum;
        }
    }
}

GL_DECL_MATMUL_FN(gl_matmul_bf16_generic)
{
    for (int b = 0; b < nb; b++) {
        const gl_f32u *xb = (const gl_f32u *)((const char *)x + b * x_stride);
        for (int r = r0; r < r1; r++) {
            const gl_u16u *wr = (const gl_u16u *)((const char *)w + r * w_row_bytes);
            float sum = 0.0f;
            for (int j = 0; j < n; j++)
                sum += gl_bf16_to_f32(wr[j]) * xb[j];
            y[b * y_stride + r] = sum;
        }
    }
}
