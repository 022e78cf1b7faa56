/* The weight types the kernel benchmarks time (bench/matvec.c,
 * bench/ab_kernel.c), and matrices of them that every kernel takes at full
 * speed: random quants with sane scales, or normal floats. */
#ifndef GL_BENCH_WEIGHTS_H
#define GL_BENCH_WEIGHTS_H

#include <stdint.h>
#include <string.h>

#include "kernels.h"

/* The benchmarked weight types: block bytes and elements, and where the
 * block's half scales are (set to 2^-7 so every block is sane; -1: none). */
static const struct bench_weight_type {
    int type;
    const char *name;
    int qk, doff, moff;
    size_t bytes;
} mv_types[] = {
    { GGUF_T_Q4_0, "q4_0", 32, 0, -1, sizeof(block_q4_0) },
    { GGUF_T_Q8_0, "q8_0", 32, 0, -1, sizeof(block_q8_0) },
    { GGUF_T_Q4_1, "q4_1", 32, 0, 2, sizeof(block_q4_1) },
    { GGUF_T_Q5_0, "q5_0", 32, 0, -1, sizeof(block_q5_0) },
    { GGUF_T_Q5_1, "q5_1", 32, 0, 2, sizeof(block_q5_1) },
    { GGUF_T_IQ4_NL, "iq4_nl", 32, 0, -1, sizeof(block_iq4_nl) },
    { GGUF_T_Q2_K, "q2_K", 256, 80, 82, sizeof(block_q2_K) },
    { GGUF_T_Q3_K, "q3_K", 256, 108, -1, sizeof(block_q3_K) },
    { GGUF_T_Q4_K, "q4_K", 256, 0, 2, sizeof(block_q4_K) },
    { GGUF_T_Q5_K, "q5_K", 256, 0, 2, sizeof(block_q5_K) },
    { GGUF_T_Q6_K, "q6_K", 256, 208, -1, sizeof(block_q6_K) },
    { GGUF_T_IQ4_XS, "iq4_xs", 256, 0, -1, sizeof(block_iq4_xs) },
    /* float rows (doff -1): every element made a normal number near 1 */
    { GGUF_T_F16, "f16", 1, -1, -1, 2 },
    { GGUF_T_BF16, "bf16", 1, -1, -1, 2 },
    { GGUF_T_F32, "f32", 1, -1, -1, 4 },
};
enum { MV_NTYPES = sizeof mv_types / sizeof mv_types[0] };

/* The random bits of a float matrix made normal numbers in [0.5, 2) with
 * either sign, in place: no NaN, infinity or subnormal (which some cores
 * take slow paths for) in what is timed. */
static inline void normal_floats(unsigned char *p, size_t bytes, int type)
{
    if (type == GGUF_T_F32)
        for (size_t i = 0; i + 4 <= bytes; i += 4) {
            uint32_t v;
            memcpy(&v, p + i, 4);
            v = (v & 0x80ffffffu) | 0x3f000000u;
            memcpy(p + i, &v, 4);
        }
    else
        for (size_t i = 0; i + 2 <= bytes; i += 2) {
            uint16_t v;
            memcpy(&v, p + i, 2);
            v = type == GGUF_T_F16 ? (uint16_t)((v & 0x87ffu) | 0x3800u)
                                   : (uint16_t)((v & 0x80ffu) | 0x3f00u);
            memcpy(p + i, &v, 2);
        }
}

/* Makes the random bytes at p (ncopies matrices of wbytes bytes, type
 * mv_types[ti]) a timeable matrix: every block's scales 2^-7, float
 * elements normal numbers. */
static inline void bench_sane_weights(unsigned char *p, size_t wbytes, size_t ncopies, int ti)
{
    const size_t bsz = mv_types[ti].bytes;
    const uint16_t d = 0x2000;
    if (mv_types[ti].doff < 0) {
        normal_floats(p, ncopies * wbytes, mv_types[ti].type);
        return;
    }
    for (size_t c = 0; c < ncopies; c++)
        for (size_t b = 0; b < wbytes / bsz; b++) {
            memcpy(p + c * wbytes + b * bsz + mv_types[ti].doff, &d, 2);
            if (mv_types[ti].moff >= 0)
                memcpy(p + c * wbytes + b * bsz + mv_types[ti].moff, &d, 2);
        }
}

#endif
