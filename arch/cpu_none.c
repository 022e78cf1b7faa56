/* Architectures without SIMD backends run the generic kernels only. */
#include "cpu.h"

uint32_t gl_cpu_detect_arch(void)
{
    return 0;
}
