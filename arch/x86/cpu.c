/* x86 feature detection: CPUID says what the core has, XGETBV says whether
 * the OS saves the wider register state; both must agree before a kernel
 * may touch YMM or ZMM registers. Compiled without any -m flags. */
#include <cpuid.h>
#include <stdint.h>

#include "cpu.h"

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

uint32_t gl_cpu_detect_arch(void)
{
    unsigned a, b, c, d;
    uint32_t f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    const int osxsave = (c >> 27) & 1;
    if ((c >> 20) & 1)
        f |= GL_CPU_SSE42;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    const int ymm_ok = (xcr0 & 0x6) == 0x6;   /* SSE and AVX state    */
    const int zmm_ok = (xcr0 & 0xe6) == 0xe6; /* + opmask, ZMM hi/lo  */
    if (ymm_ok && ((c >> 28) & 1))
        f |= GL_CPU_AVX;
    if (ymm_ok && ((c >> 12) & 1))
        f |= GL_CPU_FMA;
    if (ymm_ok && ((c >> 29) & 1))
        f |= GL_CPU_F16C;
    if (__get_cpuid_max(0, 0) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        if (ymm_ok && ((b >> 5) & 1))
            f |= GL_CPU_AVX2;
        if (zmm_ok) {
            if ((b >> 16) & 1)
                f |= GL_CPU_AVX512F;
            if ((b >> 17) & 1)
                f |= GL_CPU_AVX512DQ;
            if ((b >> 30) & 1)
                f |= GL_CPU_AVX512BW;
            if ((b >> 31) & 1)
                f |= GL_CPU_AVX512VL;
            if ((c >> 11) & 1)
                f |= GL_CPU_AVX512VNNI;
        }
    }
    return f;
}
