/* AArch64 Linux feature detection from the kernel's HWCAP words. */
#include <sys/auxv.h>

#include "cpu.h"

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif

uint32_t gl_cpu_detect_arch(void)
{
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned long hw2 = getauxval(AT_HWCAP2);
    uint32_t f = 0;
    if (hw & HWCAP_ASIMD)
        f |= GL_CPU_NEON;
    if (hw & HWCAP_ASIMDDP)
        f |= GL_CPU_DOTPROD;
    if (hw2 & HWCAP2_I8MM)
        f |= GL_CPU_I8MM;
    return f;
}

/* The NEON kernels do not prefetch: one tune. (MIDR_EL1 would name the
 * core, should a NEON kernel ever want per-core parameters.) */
void gl_cpu_identify_arch(gl_cpu_id *id)
{
    (void)id;
}

int gl_cpu_tune_arch(const gl_cpu_id *id, uint32_t flags)
{
    (void)id;
    (void)flags;
    return 0; /* GL_TUNE_DEFAULT */
}
