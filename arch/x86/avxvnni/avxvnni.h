/* Prototypes of the AVX-VNNI kernels; reachable only through the kernel
 * table (gl_kernels_init_avxvnni). Built with the AVX2 flags + -mavxvnni,
 * or, as "avxvnni-emu", with the AVX2 flags alone (vnni.h). */
#ifndef GENLOOP_ARCH_X86_AVXVNNI_H
#define GENLOOP_ARCH_X86_AVXVNNI_H

#include "arch/x86/avxvnni/vnni.h"
#include "kernels.h"

void GL_VNNI_NAME(gl_kernels_init)(gl_kernels *k);

/* packed.c: one instance per decode tune (src/tune.h) */
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q4_0_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q8_0_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q5_0_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_iq4_nl_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q4_1_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q5_1_x8)[GL_TUNE_COUNT];
/* kpacked.c */
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q4_K_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q5_K_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_iq4_xs_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q6_K_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q3_K_x8)[GL_TUNE_COUNT];
extern const gl_matmul_fn GL_VNNI_TUNED(gl_matmul_q2_K_x8)[GL_TUNE_COUNT];

#endif
