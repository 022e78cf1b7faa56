/* Template: float products (F32 / F16 / BF16 weights x float activations)
 * and single-head attention scores over F32 / F16 keys, for a SIMD backend
 * whose vector holds FV_W floats. Define before including:
 *   FV_T                   the vector type (a register, or a struct of them)
 *   FV_W                   floats per vector
 *   FV_ZERO()              all lanes zero
 *   FV_FMA(acc, w, x)      acc + w * x, one fused multiply-add per lane
 *   FV_HSUM(v)             the sum of the lanes, in the backend's one order
 *   FV_LD_F32(p, i) / FV_LDP_F32(p, i, m)
 *                          floats i .. i + FV_W - 1 of p; the first m < FV_W
 *                          of them and zeros after, reading only those m
 *   FT_LINKAGE             storage class of the generated kernels
 * then DEF_FTILE(NAME, LD, LDP) per weight type (LD / LDP as FV_LD_F32 /
 * FV_LDP_F32, for that type's elements), DEF_FMATMUL(NAME, TILE) and
 * DEF_FSCORES(NAME, TILE).
 *
 * Determinism: a dot product is accumulated in FV_W lanes, lane l taking
 * the elements i = l (mod FV_W) in increasing order with one FMA each; a row
 * tail (n % FV_W elements) is one more zero-padded chunk; the lanes are then
 * summed by FV_HSUM. Tiles (FT_R rows x up to FT_C activation columns) only
 * decide which accumulators live in registers together, so each output
 * element sees the same sequence whatever r0 / r1, nb or its place in a
 * tile; scores are that dot times scale, as in generic. */
#ifndef GENLOOP_ARCH_FLOAT_TMPL_H
#define GENLOOP_ARCH_FLOAT_TMPL_H

#define FT_R 4 /* rows per tile    */
#define FT_C 2 /* columns per tile */

/* out[c][k] = dot(row k, column c) for k < m (rows past m repeat row m-1). */
#define DEF_FTILE(NAME, LD, LDP)                                                                   \
    GL_ALWAYS_INLINE void NAME(const char *w, size_t wrb, int m, const float *const *xs,           \
                               float out[FT_C][FT_R], int n, const int nc)                         \
    {                                                                                              \
        const char *wr[FT_R];                                                                      \
        for (int k = 0; k < FT_R; k++)                                                             \
            wr[k] = w + (size_t)(k < m ? k : m - 1) * wrb;                                         \
        FV_T acc[FT_R][FT_C];                                                                      \
        for (int k = 0; k < FT_R; k++)                                                             \
            for (int c = 0; c < nc; c++)                                                           \
                acc[k][c] = FV_ZERO();                                                             \
        int i = 0;                                                                                 \
        for (; i + FV_W <= n; i += FV_W) {                                                         \
            FV_T xv[FT_C];                                                                         \
            for (int c = 0; c < nc; c++)                                                           \
                xv[c] = FV_LD_F32(xs[c], i);                                                       \
            for (int k = 0; k < FT_R; k++) {                                                       \
                const FV_T wv = LD(wr[k], i);                                                      \
                for (int c = 0; c < nc; c++)                                                       \
                    acc[k][c] = FV_FMA(acc[k][c], wv, xv[c]);                                      \
            }                                                                                      \
        }                                                                                          \
        if (i < n) {                                                                               \
            FV_T xv[FT_C];                                                                         \
            for (int c = 0; c < nc; c++)                                                           \
                xv[c] = FV_LDP_F32(xs[c], i, n - i);                                               \
            for (int k = 0; k < FT_R; k++) {                                                       \
                const FV_T wv = LDP(wr[k], i, n - i);                                              \
                for (int c = 0; c < nc; c++)                                                       \
                    acc[k][c] = FV_FMA(acc[k][c], wv, xv[c]);                                      \
            }                                                                                      \
        }                                                                                          \
        for (int k = 0; k < FT_R; k++)                                                             \
            for (int c = 0; c < nc; c++)                                                           \
                out[c][k] = FV_HSUM(acc[k][c]);                                                    \
    }

#define DEF_FMATMUL(NAME, TILE)                                                                    \
    FT_LINKAGE GL_DECL_MATMUL_FN(NAME)                                                             \
    {                                                                                              \
        for (int r = r0; r < r1; r += FT_R) {                                                      \
            const int m = r1 - r < FT_R ? r1 - r : FT_R;                                           \
            const char *wt = (const char *)w + (size_t)r * w_row_bytes;                            \
            for (int c0 = 0; c0 < nb; c0 += FT_C) {                                                \
                const int nc = nb - c0 < FT_C ? nb - c0 : FT_C;                                    \
                const float *xs[FT_C];                                                             \
                float out[FT_C][FT_R];                                                             \
                for (int c = 0; c < nc; c++)                                                       \
                    xs[c] = (const float *)((const char *)x + (size_t)(c0 + c) * x_stride);        \
                if (nc == FT_C)                                                                    \
                    TILE(wt, w_row_bytes, m, xs, out, n, FT_C);                                    \
                else                                                                               \
                    TILE(wt, w_row_bytes, m, xs, out, n, 1);                                       \
                for (int c = 0; c < nc; c++)                                                       \
                    for (int k = 0; k < m; k++)                                                    \
                        y[(size_t)(c0 + c) * y_stride + r + k] = out[c][k];                        \
            }                                                                                      \
        }                                                                                          \
    }

/* scores[j] = (q . k_j) * scale: the dot as in the matmuls, then one
 * multiply, as in generic. */
#define DEF_FSCORES(NAME, TILE)                                                                    \
    FT_LINKAGE GL_DECL_ATTN_SCORES_FN(NAME)                                                        \
    {                                                                                              \
        const float *xs[FT_C] = { q, q };                                                          \
        for (int j = 0; j < n_keys; j += FT_R) {                                                   \
            const int m = n_keys - j < FT_R ? n_keys - j : FT_R;                                   \
            float out[FT_C][FT_R];                                                                 \
            TILE((const char *)k + (size_t)j * row_stride, row_stride, m, xs, out, len, 1);        \
            for (int t = 0; t < m; t++)                                                            \
                scores[j + t] = out[0][t] * scale;                                                 \
        }                                                                                          \
    }

#endif
