/* CPU features and identity, detected once. The only global mutable state
 * the library owns is this table, written under pthread_once. */
#ifndef GENLOOP_SRC_CPU_H
#define GENLOOP_SRC_CPU_H

#include <stdint.h>

enum gl_cpu_flag {
    GL_CPU_SSE42 = 1u << 0,
    GL_CPU_AVX = 1u << 1,
    GL_CPU_AVX2 = 1u << 2,
    GL_CPU_FMA = 1u << 3,
    GL_CPU_F16C = 1u << 4,
    GL_CPU_AVX512F = 1u << 5,
    GL_CPU_AVX512BW = 1u << 6,
    GL_CPU_AVX512VL = 1u << 7,
    GL_CPU_AVX512DQ = 1u << 8,
    GL_CPU_AVX512VNNI = 1u << 9,
    GL_CPU_AVXVNNI = 1u << 10, /* VEX vpdpbusd on ymm (Alder Lake on, Zen 5) */
    GL_CPU_NEON = 1u << 16,
    GL_CPU_DOTPROD = 1u << 17,
    GL_CPU_I8MM = 1u << 18,
};

/* Flags of this CPU, with OS support for the register state checked. */
uint32_t gl_cpu_flags(void);

/* Who made the core and which one it is: what the decode tuning is chosen
 * by (src/tune.h). x86: the CPUID vendor string and the display family and
 * model (base + extended, as vendors' documents number them); elsewhere an
 * empty vendor and -1. */
typedef struct gl_cpu_id {
    char vendor[16];
    int family, model;
} gl_cpu_id;

/* This CPU's identity, detected once with the flags. */
const gl_cpu_id *gl_cpu_identity(void);

/* Implemented per architecture (arch/x86/cpu.c, arch/arm/cpu.c, or a stub). */
uint32_t gl_cpu_detect_arch(void);
void gl_cpu_identify_arch(gl_cpu_id *id);
/* The tune (src/tune.h, enum gl_tune_id) for a CPU of this identity and flags. */
int gl_cpu_tune_arch(const gl_cpu_id *id, uint32_t flags);

#endif
