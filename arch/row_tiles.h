/* The driver of the row-tile matrix products (the plain-row templates
 * arch/x86/avx2/{kquant,qmatmul,rowtile}_tmpl.h and
 * arch/arm/neon/{kquant,qmatmul}_tmpl.h). GL_ROW_TILES expands inside a
 * GL_DECL_MATMUL_FN body: rows [r0, r1) in tiles of ROWS (a vector's
 * lanes; the last tile may hold m < ROWS rows), the nb columns in tiles of
 * at most MC <= GL_TILE_MAXC, each tile one call
 *     TILE(wt, w_row_bytes, xs, ys, nblk, m, nc)
 * with xs[c] column c's activation blocks (type XBLK), ys[c] its outputs
 * from row r on, and nc a constant, so the tile's loops over the columns
 * unroll. */
#ifndef GENLOOP_ARCH_ROW_TILES_H
#define GENLOOP_ARCH_ROW_TILES_H

#include <stddef.h>

#define GL_TILE_MAXC 4

#define GL_ROW_TILES(TILE, XBLK, ROWS, MC, nblk)                                                   \
    for (int r = r0; r < r1; r += (ROWS)) {                                                        \
        const int m = r1 - r < (ROWS) ? r1 - r : (ROWS);                                           \
        const char *wt = (const char *)w + (size_t)r * w_row_bytes;                                \
        for (int c0 = 0; c0 < nb; c0 += (MC)) {                                                    \
            const int nc = nb - c0 < (MC) ? nb - c0 : (MC);                                        \
            const XBLK *xs[GL_TILE_MAXC];                                                          \
            float *ys[GL_TILE_MAXC];                                                               \
            for (int c = 0; c < nc; c++) {                                                         \
                xs[c] = (const XBLK *)((const char *)x + (size_t)(c0 + c) * x_stride);             \
                ys[c] = y + (size_t)(c0 + c) * y_stride + r;                                       \
            }                                                                                      \
            switch (nc) {                                                                          \
            case 1: TILE(wt, w_row_bytes, xs, ys, nblk, m, 1); break;                              \
            case 2: TILE(wt, w_row_bytes, xs, ys, nblk, m, 2); break;                              \
            case 3: TILE(wt, w_row_bytes, xs, ys, nblk, m, 3); break;                              \
            default: TILE(wt, w_row_bytes, xs, ys, nblk, m, GL_TILE_MAXC); break;                  \
            }                                                                                      \
        }                                                                                          \
    }

#endif
