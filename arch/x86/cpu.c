/* x86 feature detection: CPUID says what the core has, XGETBV says whether
 * the OS saves the wider register state; both must agree before a kernel
 * may touch YMM or ZMM registers. Compiled without any -m flags. */
#include <cpuid.h>
#include <stdint.h>
#include <string.h>

#include "cpu.h"
#include "tune.h"

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
        /* AVX-VNNI (leaf 7 subleaf 1, EAX bit 4): VEX-encoded, YMM state only */
        const unsigned max_sub = a;
        if (max_sub >= 1) {
            __cpuid_count(7, 1, a, b, c, d);
            if (ymm_ok && ((a >> 4) & 1))
                f |= GL_CPU_AVXVNNI;
        }
    }
    return f;
}

void gl_cpu_identify_arch(gl_cpu_id *id)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return;
    memcpy(id->vendor, &b, 4);
    memcpy(id->vendor + 4, &d, 4);
    memcpy(id->vendor + 8, &c, 4);
    id->vendor[12] = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    /* display family = base + extended when base is 0xf; display model
     * takes the extended bits when base family is 6 or 0xf */
    const int base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
    id->family = base_family == 0xf ? base_family + (int)((a >> 20) & 0xff) : base_family;
    id->model =
        base_family == 0xf || base_family == 6 ? base_model | (int)((a >> 12) & 0xf0) : base_model;
}

/* Zen 5 and later (family 1Ah on) take the zen tune: there the decode
 * products stream 20-30 % faster with prefetcht0 at shorter distances than
 * with the default's prefetcht1 into L2. Zen 4 (family 19h with AVX-512;
 * Zen 3, the same family, has none) takes zen4: on it every software
 * prefetch in decode slowed the stream (zen's prefetcht0 most) and one
 * stream per thread with the hardware prefetcher alone was the fastest
 * (measured on an EPYC family 19h model 11h, bench/RESULTS.md, src/tune.h).
 * Every other CPU keeps the default, tuned on Intel Sapphire Rapids; Zen
 * 1-3 are unmeasured with the zen tunes. */
int gl_cpu_tune_arch(const gl_cpu_id *id, uint32_t flags)
{
    const int amd = !strcmp(id->vendor, "AuthenticAMD");
    if (amd && id->family >= 0x1a)
        return GL_TUNE_ZEN;
    if (amd && id->family == 0x19 && (flags & GL_CPU_AVX512F))
        return GL_TUNE_ZEN4;
    return GL_TUNE_DEFAULT;
}
