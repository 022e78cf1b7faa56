/* AVX-VNNI backend: the AVX2 table, then the integer products vpdpbusd
 * makes faster (vnni.h). Only pointer stores happen here. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avxvnni/avxvnni.h"

void GL_VNNI_NAME(gl_kernels_init)(gl_kernels *k)
{
    gl_kernels_init_avx2(k);
#ifdef GL_AVXVNNI_EMU
    k->name = "avxvnni-emu";
#else
    k->name = "avxvnni";
#endif
    /* which layouts loaders repack into is the AVX2 table's choice, made above */
    static const gl_packed_kernel packed[] = {
        { GL_LAYOUT_Q4_KX8, GL_VNNI_TUNED(gl_matmul_q4_K_x8), 0 },
        { GL_LAYOUT_Q6_KX8, GL_VNNI_TUNED(gl_matmul_q6_K_x8), 0 },
        { GL_LAYOUT_Q5_KX8, GL_VNNI_TUNED(gl_matmul_q5_K_x8), 0 },
        { GL_LAYOUT_IQ4_XSX8, GL_VNNI_TUNED(gl_matmul_iq4_xs_x8), 0 },
        { GL_LAYOUT_Q3_KX8, GL_VNNI_TUNED(gl_matmul_q3_K_x8), 0 },
        { GL_LAYOUT_Q2_KX8, GL_VNNI_TUNED(gl_matmul_q2_K_x8), 0 },
        { GL_LAYOUT_Q4_0X8, GL_VNNI_TUNED(gl_matmul_q4_0_x8), 0 },
        { GL_LAYOUT_Q8_0X8, GL_VNNI_TUNED(gl_matmul_q8_0_x8), 0 },
        { GL_LAYOUT_Q5_0X8, GL_VNNI_TUNED(gl_matmul_q5_0_x8), 0 },
        { GL_LAYOUT_IQ4_NLX8, GL_VNNI_TUNED(gl_matmul_iq4_nl_x8), 0 },
        { GL_LAYOUT_Q4_1X8, GL_VNNI_TUNED(gl_matmul_q4_1_x8), 0 },
        { GL_LAYOUT_Q5_1X8, GL_VNNI_TUNED(gl_matmul_q5_1_x8), 0 },
    };
    gl_kernels_set_packed(k, packed, sizeof packed / sizeof packed[0]);
}
