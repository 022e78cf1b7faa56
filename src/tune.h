/* Decode tuning per microarchitecture. A tune fixes the knobs of the x86
 * decode kernels that change how fast they stream weights from DRAM but
 * never what they compute: software prefetch distances and hints, how many
 * row groups one thread reads side by side (each a stream), and whether the
 * AVX-512 backend multiplies Q4_0 / Q8_0 weights with 512- or 256-bit
 * bodies (the Q4_0x16 / Q8_0x16 layouts or Q4_0x8 / Q8_0x8), for Q4_0 alone or
 * for every legacy type. Every tune's kernels give
 * bit-identical results (tests/checkkernels.c runs each tune's against generic).
 *
 * The tune is chosen once per kernel table (gl_kernels_init): GENLOOP_TUNE
 * when set, else by the CPU's vendor, family and model
 * (gl_cpu_tune_arch). GENLOOP_TUNE is a preset name, optionally with
 * "+ymm", "+ymm-q4_0" or "+zmm" to override its product widths: "zen",
 * "default+ymm".
 *
 * The kernels are instantiated once per preset with the preset's numbers
 * as compile-time constants (arch/x86: GL_FOR_EACH_TUNE), so a tune costs
 * no instruction in the hot loops; adding one means one entry here. */
#ifndef GENLOOP_SRC_TUNE_H
#define GENLOOP_SRC_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum gl_tune_id { GL_TUNE_DEFAULT = 0, GL_TUNE_ZEN, GL_TUNE_ZEN4, GL_TUNE_COUNT };

/* gl_tune_params.ymm / gl_tune.ymm: which legacy types the AVX-512
 * backend multiplies with 256-bit bodies over the x8 layouts */
enum gl_tune_width {
    GL_YMM_NONE = 0, /* "+zmm": Q4_0x16, Q8_0x16, ... */
    GL_YMM_Q4_0,     /* Q4_0x8 (AVX2 decode, vpdpbusd ymm tiles), the rest x16 */
    GL_YMM_ALL,      /* "+ymm": every legacy type in the AVX2 table's x8 layouts */
    GL_YMM_COUNT
};

/* X(suffix, id, a, b) for every preset: one kernel instance each */
#define GL_FOR_EACH_TUNE(X, a, b)                                                                  \
    X(default, GL_TUNE_DEFAULT, a, b) X(zen, GL_TUNE_ZEN, a, b) X(zen4, GL_TUNE_ZEN4, a, b)

/* For a matrix-product body impl(w, w_row_bytes, x, x_stride, y, y_stride,
 * n, r0, r1, nb, tune) (always inline, tune a compile-time constant):
 * static GL_DECL_MATMUL_FN name_<preset> for every preset and the table
 * `link const gl_matmul_fn name_tuned[GL_TUNE_COUNT]` of them (link: empty
 * or static). Used where kernels.h is included. */
#define GL_TUNE_CAT2(a, b) a##b
#define GL_TUNE_CAT(a, b)  GL_TUNE_CAT2(a, b)
#define GL_TUNED_FN_(sfx, id, name, impl)                                                          \
    static GL_DECL_MATMUL_FN(GL_TUNE_CAT(name, _##sfx))                                            \
    {                                                                                              \
        impl(w, w_row_bytes, x, x_stride, y, y_stride, n, r0, r1, nb, id);                         \
    }
#define GL_TUNED_ENTRY_(sfx, id, name, impl) [id] = GL_TUNE_CAT(name, _##sfx),
#define GL_TUNED_MATMULS(link, name, impl)                                                         \
    GL_FOR_EACH_TUNE(GL_TUNED_FN_, name, impl)                                                     \
    link const gl_matmul_fn GL_TUNE_CAT(                                                           \
        name, _tuned)[GL_TUNE_COUNT] = { GL_FOR_EACH_TUNE(GL_TUNED_ENTRY_, name, impl) };

typedef struct gl_tune_params {
    const char *name, *what;
    /* the 32-element layouts (Q4_0x8, Q4_0x16, Q8_0x8): prefetch far (into
     * L2 with prefetcht1, or with prefetcht0 when far_t0) and near (into
     * L1, prefetcht0), bytes ahead of the loads of each stream */
    uint16_t pf_far, pf_near;
    uint8_t far_t0;
    uint8_t pf_lines;   /* each line of a block's range once (else every 64 bytes from its start) */
    uint8_t x8_streams; /* row groups per thread in decode lockstep, every x8/x16 layout */
    /* the K-quant super-block layouts (Q4_Kx8/x16, Q5_Kx16, Q6_Kx8/x16) */
    uint16_t kx_far, kx_near;
    uint8_t ymm; /* AVX-512 backend: which 256-bit products (enum gl_tune_width) */
    /* 1: decode (one activation column) issues no software prefetch and
     * leaves each stream to the hardware prefetcher, in every kernel over
     * the 32-element layouts and the 16-row K-quant ones; the AVX2 8-row
     * K-quant kernels keep theirs (kx8_tmpl.h KX_HW_PF), and so do the
     * tiles of prefill and batched decode */
    uint8_t hw_decode;
    /* 1: the tiles of prefill and batched decode prefetch each weight line
     * once, far ahead (pf_far, K-quants kx_far, with the far hint), instead
     * of far and near: a tile computes long enough on each block that the
     * near copy only adds a burst of prefetches that holds it up */
    uint8_t tile_far;
} gl_tune_params;

/* The numbers, each measured (bench/RESULTS.md, "tune"): the default on
 * Intel Sapphire Rapids, zen on an AMD EPYC Zen 5 (family 1Ah), where
 * prefetcht1 slowed every stream (Q4_0x16 1 thread: 28 against 34-36 GB/s
 * with prefetcht0, probe 34-35). zen4 on an AMD EPYC Zen 4 (family 19h
 * model 11h), where any software prefetch in decode costs: one stream per
 * thread with the hardware prefetcher alone read Q4_0x16 / Q8_0x16 /
 * Q4_Kx16 / Q6_Kx16 at 87-102 / 88-104 / 74-87 / 77-89 % of the probe (1
 * thread) against 65-84 % with the default's 4 prefetched streams, zen's
 * prefetcht0 streams 41-57 %; 2 or 4 unprefetched streams 46-96 %, below
 * one on every product.
 * Static and constant: kernels index it with a constant tune, so the
 * compiler folds each field into the instruction stream. */
static const gl_tune_params gl_tunes[GL_TUNE_COUNT] = {
    [GL_TUNE_DEFAULT] = { "default", "tuned on Intel Sapphire Rapids; every CPU not listed", 4096,
                          1024, 0, 0, 4, 8192, 2048, GL_YMM_NONE, 0, 0 },
    [GL_TUNE_ZEN] = { "zen", "AMD Zen 5", 2048, 1024, 1, 1, 4, 4096, 2048, GL_YMM_NONE, 0, 0 },
    [GL_TUNE_ZEN4] = { "zen4", "AMD Zen 4", 4096, 1024, 0, 0, 1, 8192, 2048, GL_YMM_NONE, 1, 1 },
};

/* A tune as chosen: the preset and the product widths (enum gl_tune_width). */
typedef struct gl_tune {
    uint8_t id, ymm;
} gl_tune;

/* Parses "NAME[+ymm|+ymm-q4_0|+zmm]". */
gl_status gl_tune_parse(const char *s, gl_tune *t, gl_error *err);
/* The tune kernel tables get without an explicit one: GENLOOP_TUNE when
 * set (a bad one fails here), else the CPU's (gl_cpu_tune_arch). */
gl_status gl_tune_auto(gl_tune *t, gl_error *err);
/* "zen", "default+ymm": what gl_tune_parse takes back. */
void gl_tune_format(gl_tune t, char *buf, size_t cap);

#endif
