#include "cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "genloop.h"

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static uint32_t cpu_flags;
static gl_cpu_id cpu_id;
static char cpu_feature_names[256];
static char cpu_model_name[64];

static const struct {
    uint32_t flag;
    const char *name;
} flag_names[] = {
    { GL_CPU_SSE42, "sse4.2" },      { GL_CPU_AVX, "avx" },
    { GL_CPU_AVX2, "avx2" },         { GL_CPU_FMA, "fma" },
    { GL_CPU_F16C, "f16c" },         { GL_CPU_AVX512F, "avx512f" },
    { GL_CPU_AVX512BW, "avx512bw" }, { GL_CPU_AVX512VL, "avx512vl" },
    { GL_CPU_AVX512DQ, "avx512dq" }, { GL_CPU_AVX512VNNI, "avx512vnni" },
    { GL_CPU_AVXVNNI, "avxvnni" },   { GL_CPU_NEON, "neon" },
    { GL_CPU_DOTPROD, "dotprod" },   { GL_CPU_I8MM, "i8mm" },
};

static void detect(void)
{
    cpu_flags = gl_cpu_detect_arch();
    cpu_id.family = cpu_id.model = -1;
    gl_cpu_identify_arch(&cpu_id);
    if (cpu_id.family >= 0)
        snprintf(cpu_model_name, sizeof cpu_model_name, "%s family %02Xh model %02Xh",
                 cpu_id.vendor, cpu_id.family, cpu_id.model);
    else
        strcpy(cpu_model_name, "(no CPUID: not x86)");
    size_t len = 0;
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++) {
        if (!(cpu_flags & flag_names[i].flag))
            continue;
        int w = snprintf(cpu_feature_names + len, sizeof cpu_feature_names - len, "%s%s",
                         len ? " " : "", flag_names[i].name);
        if (w > 0 && (size_t)w < sizeof cpu_feature_names - len)
            len += (size_t)w;
    }
    if (len == 0)
        strcpy(cpu_feature_names, "(none)");
}

uint32_t gl_cpu_flags(void)
{
    pthread_once(&cpu_once, detect);
    return cpu_flags;
}

const char *gl_cpu_features(void)
{
    pthread_once(&cpu_once, detect);
    return cpu_feature_names;
}

const gl_cpu_id *gl_cpu_identity(void)
{
    pthread_once(&cpu_once, detect);
    return &cpu_id;
}

const char *gl_cpu_model(void)
{
    pthread_once(&cpu_once, detect);
    return cpu_model_name;
}
