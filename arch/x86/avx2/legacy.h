/* Prototypes of the AVX2 kernels of the block types beyond Q4_0 / Q8_0 and
 * the K-quants Q4_K..Q6_K: Q4_1, Q5_0, Q5_1, IQ4_NL (legacy_quants.c),
 * Q2_K, Q3_K, IQ4_XS (kquants_low.c) and the Q8_1 / Q8_K activation
 * quantizers (quant_act.c). Reachable only through the kernel table. */
#ifndef GENLOOP_ARCH_X86_AVX2_LEGACY_H
#define GENLOOP_ARCH_X86_AVX2_LEGACY_H

#include "kernels.h"

GL_DECL_QUANTIZE_FN(gl_quantize_q8_1_avx2);
GL_DECL_QUANTIZE_FN(gl_quantize_q8_K_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q4_1_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q5_0_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q5_1_avx2);
GL_DECL_MATMUL_FN(gl_matmul_iq4_nl_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q2_K_avx2);
GL_DECL_MATMUL_FN(gl_matmul_q3_K_avx2);
GL_DECL_MATMUL_FN(gl_matmul_iq4_xs_avx2);

#endif
