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
 * summed by FV_HSUM. Tiles (FT_R rows x FT_C activation columns, or FT_R1
 * rows x one column) only decide which accumulators live in registers
 * together, so each output element sees the same sequence whatever r0 / r1,
 * nb or its place in a tile; scores are that dot times scale, as in
 * generic. */
#ifndef GENLOOP_ARCH_FLOAT_TMPL_H
#define GENLOOP_ARCH_FLOAT_TMPL_H

/* A tile of several columns (prefill, batches) is FT_R rows x FT_C columns,
 * FT_R FT_C accumulators; a backend with registers to spare sets both
 * before including this file (AVX-512: 8 x 3) */
#ifndef FT_R
#define FT_R 4
#endif
#ifndef FT_C
#define FT_C 2
#endif
/* Rows per tile of one column (decode, scores): each row's dot is one
 * chain of dependent FMAs, and 8 chains keep the FMA units busy where 4
 * left them waiting (Qwen2.5-0.5B shape in F16, 1 thread, Zen 5: 23-24
 * tok/s with 4 rows, 24-28 with 8, 25-27 with 16) */
#define FT_R1 8
_Static_assert(FT_R <= FT_R1, "a tile's row pointers and outputs are sized by FT_R1");

/* Decode streams a tile's rows from memory: R rows, each a short stream
 * that the next tile follows in memory (rows are contiguous). Rows of at
 * least FT_PF_MIN bytes prefetch the next tile's rows as the loads move
 * along their own, a line per row, so each tile starts with its lines on
 * the way (Qwen2.5-0.5B shape in F16, 1 thread, Zen 5: 21-22 tok/s without
 * prefetching, 23-24 with each row 512-2048 B ahead, 25-28 with the next
 * tile's). Shorter rows are cache-resident (stories260K's 256 B). */
#ifndef FT_PF_MIN
#define FT_PF_MIN 1024
#endif
/* Batches of up to FT_PF_NB columns (batched decode) prefetch in their
 * first column tile: F16 batch 2 / 4 / 8, 1 thread, 31 / 50-56 / 79-81 ->
 * 43-46 / 70-71 / 94-115 tok/s. Prefill does not (it reads its rows many
 * times and computes: 177-187 -> 144-178 tok/s at 64 tokens with it). */
#ifndef FT_PF_NB
#define FT_PF_NB 8
#endif

/* out[c][k] = dot(row k, column c) for k < m <= R (rows past m repeat row
 * m-1); R nc accumulators; ESZ bytes an element; PF: prefetch the rows */
#define DEF_FTILE(NAME, LD, LDP, ESZ)                                                              \
    GL_ALWAYS_INLINE void NAME(const char *w, size_t wrb, int m, const float *const *xs,           \
                               float out[FT_C][FT_R1], int n, const int R, const int nc,           \
                               const int PF)                                                       \
    {                                                                                              \
        const char *wr[FT_R1];                                                                     \
        for (int k = 0; k < R; k++)                                                                \
            wr[k] = w + (size_t)(k < m ? k : m - 1) * wrb;                                         \
        FV_T acc[FT_R1][FT_C];                                                                     \
        for (int k = 0; k < R; k++)                                                                \
            for (int c = 0; c < nc; c++)                                                           \
                acc[k][c] = FV_ZERO();                                                             \
        int i = 0;                                                                                 \
        for (; i + FV_W <= n; i += FV_W) {                                                         \
            if (PF && (size_t)i * ESZ % 64 < (size_t)FV_W * ESZ)                                   \
                for (int k = 0; k < R; k++)                                                        \
                    __builtin_prefetch(wr[k] + (size_t)R * wrb + (size_t)i * ESZ, 0, 3);           \
            FV_T xv[FT_C];                                                                         \
            for (int c = 0; c < nc; c++)                                                           \
                xv[c] = FV_LD_F32(xs[c], i);                                                       \
            for (int k = 0; k < R; k++) {                                                          \
                const FV_T wv = LD(wr[k], i);                                                      \
                for (int c = 0; c < nc; c++)                                                       \
                    acc[k][c] = FV_FMA(acc[k][c], wv, xv[c]);                                      \
            }                                                                                      \
        }                                                                                          \
        if (i < n) {                                                                               \
            FV_T xv[FT_C];                                                                         \
            for (int c = 0; c < nc; c++)                                                           \
                xv[c] = FV_LDP_F32(xs[c], i, n - i);                                               \
            for (int k = 0; k < R; k++) {                                                          \
                const FV_T wv = LDP(wr[k], i, n - i);                                              \
                for (int c = 0; c < nc; c++)                                                       \
                    acc[k][c] = FV_FMA(acc[k][c], wv, xv[c]);                                      \
            }                                                                                      \
        }                                                                                          \
        for (int k = 0; k < R; k++)                                                                \
            for (int c = 0; c < nc; c++)                                                           \
                out[c][k] = FV_HSUM(acc[k][c]);                                                    \
    }

#define DEF_FMATMUL(NAME, TILE)                                                                    \
    FT_LINKAGE GL_DECL_MATMUL_FN(NAME)                                                             \
    {                                                                                              \
        const int rt = nb == 1 ? FT_R1 : FT_R; /* rows per tile */                                 \
        for (int r = r0; r < r1; r += rt) {                                                        \
            const int m = r1 - r < rt ? r1 - r : rt;                                               \
            const char *wt = (const char *)w + (size_t)r * w_row_bytes;                            \
            for (int c0 = 0; c0 < nb; c0 += FT_C) {                                                \
                const int nc = nb - c0 < FT_C ? nb - c0 : FT_C;                                    \
                const float *xs[FT_C];                                                             \
                float out[FT_C][FT_R1];                                                            \
                for (int c = 0; c < nc; c++)                                                       \
                    xs[c] = (const float *)((const char *)x + (size_t)(c0 + c) * x_stride);        \
                /* a batch's first column tile streams the rows: it prefetches */                  \
                const int pf = c0 == 0 && nb <= FT_PF_NB && w_row_bytes >= FT_PF_MIN;              \
                if (nb == 1 && pf)                                                                 \
                    TILE(wt, w_row_bytes, m, xs, out, n, FT_R1, 1, 1);                             \
                else if (nb == 1)                                                                  \
                    TILE(wt, w_row_bytes, m, xs, out, n, FT_R1, 1, 0);                             \
                else if (nc == FT_C && pf)                                                         \
                    TILE(wt, w_row_bytes, m, xs, out, n, FT_R, FT_C, 1);                           \
                else if (nc == FT_C)                                                               \
                    TILE(wt, w_row_bytes, m, xs, out, n, FT_R, FT_C, 0);                           \
                else { /* the last columns (fewer than FT_C): two, then one at a time */           \
                    int c = 0;                                                                     \
                    if (nc >= 2 && FT_C > 2) {                                                     \
                        TILE(wt, w_row_bytes, m, xs, out, n, FT_R, 2, pf);                         \
                        c = 2;                                                                     \
                    }                                                                              \
                    for (; c < nc; c++)                                                            \
                        TILE(wt, w_row_bytes, m, xs + c, out + c, n, FT_R, 1, pf && c == 0);       \
                }                                                                                  \
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
        const float *xs[FT_C] = { q };                                                             \
        for (int j = 0; j < n_keys; j += FT_R1) {                                                  \
            const int m = n_keys - j < FT_R1 ? n_keys - j : FT_R1;                                 \
            float out[FT_C][FT_R1];                                                                \
            TILE((const char *)k + (size_t)j * row_stride, row_stride, m, xs, out, len, FT_R1, 1,  \
                 0);                                                                               \
            for (int t = 0; t < m; t++)                                                            \
                scores[j + t] = out[0][t] * scale;                                                 \
        }                                                                                          \
    }

#endif
