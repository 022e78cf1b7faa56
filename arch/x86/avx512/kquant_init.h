/* The one entry point between the AVX-512 backend's two translation units:
 * kernels.c calls, kquant.c defines, the K-quant slots of the VNNI path
 * for decode tune t. The SIMDe build (test-only backend "avx512-simde")
 * leaves the K-quants out: through SIMDe's emulation gcc needs tens of
 * minutes for them (measured: > 8 min at -O1, > 17 min at -O3 on one
 * core), which CI cannot afford. They are checked natively on AVX-512
 * CPUs; -DGL_SIMDE_KQUANTS builds them against SIMDe too. */
#ifndef GENLOOP_ARCH_X86_AVX512_KQUANT_INIT_H
#define GENLOOP_ARCH_X86_AVX512_KQUANT_INIT_H

#include "kernels.h"

#if !defined(GL_USE_SIMDE) || defined(GL_SIMDE_KQUANTS)
#define GL_AVX512_KQUANTS 1
#else
#define GL_AVX512_KQUANTS 0
#endif

#if GL_AVX512_KQUANTS
#ifdef GL_USE_SIMDE
#define GL_AVX512_KQUANT_INIT gl_avx512_simde_kquant_init
#else
#define GL_AVX512_KQUANT_INIT gl_avx512_kquant_init
#endif
void GL_AVX512_KQUANT_INIT(gl_kernels *k);
#endif

#endif
