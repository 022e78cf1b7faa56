/* AVX-512 VNNI K-quant products (kquant.h: plain Q4_K / Q5_K / Q6_K rows
 * and the x16 row groups), a translation unit of its own: they are
 * the larger half of the backend's code, and apart from kernels.c the two
 * compile in parallel (the sanitizer builds took over ten minutes for the
 * one file). The SIMDe build leaves them out unless GL_SIMDE_KQUANTS
 * (kquant_init.h). */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx512/simd.h"
#include "cpu.h"
#include "kernels.h"
#include "arch/x86/avx512/kquant_init.h"

#if GL_AVX512_KQUANTS

#include "arch/x86/avx512/kquant.h"

/* The slots of the VNNI path for the decode tune (k->tune). The K-quants take the
 * 16-row layouts under every tune, +ymm included: the 8-row ymm VNNI
 * kernels this file once had read 20-30 % fewer GB/s than these on Zen 5
 * at 1 and 2 threads, cold and in cache (bench/RESULTS.md, 2026-12-02
 * fourth sitting), so the Q4_Kx8 / Q6_Kx8 slots keep the AVX2 table's. */
void GL_AVX512_KQUANT_INIT(gl_kernels *k)
{
    k->matmul[GGUF_T_Q4_K] = matmul_q4_K_vnni;
    k->matmul[GGUF_T_Q5_K] = matmul_q5_K_vnni;
    k->matmul[GGUF_T_Q6_K] = matmul_q6_K_vnni;
    static const gl_packed_kernel x16[] = {
        { GL_LAYOUT_Q4_KX16, matmul_q4_K_x16_vnni_tuned, 1 },
        { GL_LAYOUT_Q6_KX16, matmul_q6_K_x16_vnni_tuned, 1 },
        { GL_LAYOUT_Q5_KX16, matmul_q5_K_x16_vnni_tuned, 1 },
        { GL_LAYOUT_IQ4_XSX16, matmul_iq4_xs_x16_vnni_tuned, 1 },
        { GL_LAYOUT_Q3_KX16, matmul_q3_K_x16_vnni_tuned, 1 },
        { GL_LAYOUT_Q2_KX16, matmul_q2_K_x16_vnni_tuned, 1 },
    };
    gl_kernels_set_packed(k, x16, sizeof x16 / sizeof x16[0]);
}
#else
typedef int gl_avx512_kquant_unused; /* an empty translation unit is not C */
#endif
