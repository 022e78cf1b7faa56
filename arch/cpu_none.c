/* Architectures without SIMD backends run the generic kernels only. */
#include "cpu.h"

uint32_t gl_cpu_detect_arch(void)
{
    return 0;
}

void gl_cpu_identify_arch(gl_cpu_id *id)
{
    (void)id;
}

int gl_cpu_tune_arch(const gl_cpu_id *id, uint32_t flags)
{
    (void)id;
    (void)flags;
    return 0; /* GL_TUNE_DEFAULT: no kernel here prefetches */
}
