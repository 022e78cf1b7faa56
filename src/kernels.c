/* Backend registry and selection. Adding an ISA means one folder under
 * arch/ and one entry in backends[] below. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cpu.h"
#include "error.h"
#include "kernels.h"

typedef struct gl_backend {
    const char *name;
    uint32_t needs; /* CPU flags the backend's kernels execute */
    void (*init)(gl_kernels *k);
} gl_backend;

#if GL_HAVE_AVX2
void gl_kernels_init_avx2(gl_kernels *k);
#endif
#if GL_HAVE_AVXVNNI
void gl_kernels_init_avxvnni(gl_kernels *k);
#endif
#if GL_HAVE_AVXVNNI_EMU
void gl_kernels_init_avxvnni_emu(gl_kernels *k);
#endif
#if GL_HAVE_AVX512
void gl_kernels_init_avx512(gl_kernels *k);
#endif
#if GL_HAVE_AVX512_SIMDE
void gl_kernels_init_avx512_simde(gl_kernels *k);
#endif
#if GL_HAVE_NEON
void gl_kernels_init_neon(gl_kernels *k);
#endif
#if GL_HAVE_NEON_DOTPROD
void gl_kernels_init_neon_dotprod(gl_kernels *k);
#endif
#if GL_HAVE_NEON_I8MM
void gl_kernels_init_neon_i8mm(gl_kernels *k);
#endif

/* Ascending preference; each init starts from the generic table. */
static const gl_backend backends[] = {
    { "generic", 0, gl_kernels_init_generic },
#if GL_HAVE_AVX512_SIMDE
    /* test-only: the AVX-512 kernels built against SIMDe (meson -Dsimde_avx512=true) listed
     * first so it is never the default choice */
    { "avx512-simde", GL_CPU_AVX2 | GL_CPU_FMA | GL_CPU_F16C, gl_kernels_init_avx512_simde },
#endif
#if GL_HAVE_AVXVNNI_EMU
    /* test-only: the AVX-VNNI kernels with an emulated vpdpbusd (meson -Davxvnni_emu=true),
     * listed before avx2 so it is never the default choice */
    { "avxvnni-emu", GL_CPU_AVX2 | GL_CPU_FMA | GL_CPU_F16C, gl_kernels_init_avxvnni_emu },
#endif
#if GL_HAVE_AVX2
    { "avx2", GL_CPU_AVX2 | GL_CPU_FMA | GL_CPU_F16C, gl_kernels_init_avx2 },
#endif
#if GL_HAVE_AVXVNNI
    { "avxvnni", GL_CPU_AVXVNNI | GL_CPU_AVX2 | GL_CPU_FMA | GL_CPU_F16C, gl_kernels_init_avxvnni },
#endif
#if GL_HAVE_AVX512
    { "avx512",
      GL_CPU_AVX512F | GL_CPU_AVX512BW | GL_CPU_AVX512VL | GL_CPU_AVX512DQ | GL_CPU_AVX2 |
          GL_CPU_FMA | GL_CPU_F16C,
      gl_kernels_init_avx512 },
#endif
#if GL_HAVE_NEON
    { "neon", GL_CPU_NEON, gl_kernels_init_neon },
#endif
#if GL_HAVE_NEON_DOTPROD
    { "neon-dotprod", GL_CPU_NEON | GL_CPU_DOTPROD, gl_kernels_init_neon_dotprod },
#endif
#if GL_HAVE_NEON_I8MM
    { "neon-i8mm", GL_CPU_NEON | GL_CPU_DOTPROD | GL_CPU_I8MM, gl_kernels_init_neon_i8mm },
#endif
};
enum { n_backends = sizeof backends / sizeof backends[0] };

static const gl_backend *find_backend(const char *name)
{
    for (int i = 0; i < n_backends; i++)
        if (strcmp(backends[i].name, name) == 0)
            return &backends[i];
    return NULL;
}

static int runnable(const gl_backend *b)
{
    return (gl_cpu_flags() & b->needs) == b->needs;
}

int gl_backend_list(const char **names, int cap)
{
    int n = 0;
    for (int i = 0; i < n_backends && n < cap; i++)
        names[n++] = backends[i].name;
    return n;
}

static const char *best_backend(void)
{
    const char *best = "generic";
    for (int i = 0; i < n_backends; i++)
        if (runnable(&backends[i]))
            best = backends[i].name;
    return best;
}

/* What gl_kernels_init picks for a NULL backend: GENLOOP_BACKEND verbatim
 * when set (even a name it will refuse: gl_backend_check says why), else the
 * best this CPU runs. */
const char *gl_backend_default(void)
{
    const char *env = getenv("GENLOOP_BACKEND");
    if (env && *env)
        return env;
    return best_backend();
}

gl_status gl_backend_check(const char *name, gl_error *err)
{
    const gl_backend *b = find_backend(name);
    if (!b) {
        char list[128] = "";
        for (int i = 0; i < n_backends; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, backends[i].name, sizeof list - strlen(list) - 1);
        }
        return gl_fail(err, GL_ERR_ARG, "unknown backend '%s' (this build has: %s)", name, list);
    }
    if (!runnable(b))
        return gl_fail(err, GL_ERR_CPU,
                       "backend '%s' needs CPU features this machine lacks "
                       "(found: %s)",
                       name, gl_cpu_features());
    return GL_OK;
}

gl_status gl_kernels_init(gl_kernels *k, const char *backend, gl_error *err)
{
    gl_tune tune;
    gl_status st = gl_tune_auto(&tune, err);
    if (st != GL_OK)
        return st;
    return gl_kernels_init_tuned(k, backend, tune, err);
}

gl_status gl_kernels_init_tuned(gl_kernels *k, const char *backend, gl_tune tune, gl_error *err)
{
    if (!backend || !*backend)
        backend = gl_backend_default();
    gl_status st = gl_backend_check(backend, err);
    if (st != GL_OK)
        return st;
    if (tune.id >= GL_TUNE_COUNT)
        return gl_fail(err, GL_ERR_ARG, "tune %d is out of range", tune.id);
    gl_kernels_init_generic(k);
    k->tune = tune;
    find_backend(backend)->init(k);
    /* one Q8_0 activation quantizer: a backend overrides quantize_q8_0 */
    k->quantize_act[GL_ACT_Q8_0] = k->quantize_q8_0;
    /* Loaders repack only for a backend with its own packed kernel (see
     * gl_kernels.repack): generic's packed kernels are references, slower
     * than its plain-row ones, and must never replace a SIMD plain one. */
    gl_kernels gen;
    gl_kernels_init_generic(&gen);
    for (int t = 0; t < GGUF_T_COUNT; t++) {
        const int l = k->repack[t].layout;
        k->repack[t].use = k->repack[t].fn && k->matmul_packed[l] != gen.matmul_packed[l];
    }
    return GL_OK;
}
