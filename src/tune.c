/* Choosing the decode tune (src/tune.h): GENLOOP_TUNE, else by CPU. */
#include "tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "genloop.h"

/* the product-width suffixes, by enum gl_tune_width */
static const char *const width_suffix[GL_YMM_COUNT] = { "+zmm", "+ymm-q4_0", "+ymm" };

static void tune_names(char *buf, size_t cap)
{
    buf[0] = 0;
    for (int i = 0; i < GL_TUNE_COUNT; i++) {
        strncat(buf, i ? ", " : "", cap - strlen(buf) - 1);
        strncat(buf, gl_tunes[i].name, cap - strlen(buf) - 1);
    }
}

gl_status gl_tune_parse(const char *s, gl_tune *t, gl_error *err)
{
    const char *plus = strchr(s, '+');
    const size_t len = plus ? (size_t)(plus - s) : strlen(s);
    for (int i = 0; i < GL_TUNE_COUNT; i++) {
        if (strlen(gl_tunes[i].name) != len || strncmp(s, gl_tunes[i].name, len))
            continue;
        t->id = (uint8_t)i;
        t->ymm = gl_tunes[i].ymm;
        if (!plus)
            return GL_OK;
        for (int w = 0; w < GL_YMM_COUNT; w++)
            if (!strcmp(plus, width_suffix[w])) {
                t->ymm = (uint8_t)w;
                return GL_OK;
            }
        return gl_fail(err, GL_ERR_ARG, "tune '%s': '%s' is not +ymm, +ymm-q4_0 or +zmm", s, plus);
    }
    char list[128];
    tune_names(list, sizeof list);
    return gl_fail(
        err, GL_ERR_ARG,
        "unknown tune '%s' (this build has: %s, each optionally +ymm, +ymm-q4_0 or +zmm)", s, list);
}

gl_status gl_tune_auto(gl_tune *t, gl_error *err)
{
    const char *env = getenv("GENLOOP_TUNE");
    if (env && *env) {
        gl_error e;
        if (gl_tune_parse(env, t, &e) != GL_OK)
            return gl_fail(err, e.code, "GENLOOP_TUNE: %s", e.msg);
        return GL_OK;
    }
    const int id = gl_cpu_tune_arch(gl_cpu_identity(), gl_cpu_flags());
    t->id = (uint8_t)(id >= 0 && id < GL_TUNE_COUNT ? id : GL_TUNE_DEFAULT);
    t->ymm = gl_tunes[t->id].ymm;
    return GL_OK;
}

void gl_tune_format(gl_tune t, char *buf, size_t cap)
{
    const gl_tune_params *p = &gl_tunes[t.id < GL_TUNE_COUNT ? t.id : 0];
    snprintf(buf, cap, "%s%s", p->name,
             t.ymm == p->ymm || t.ymm >= GL_YMM_COUNT ? "" : width_suffix[t.ymm]);
}

/* ---- public: what `genloop info` prints --------------------------------- */

const char *gl_tune_default(void)
{
    const char *env = getenv("GENLOOP_TUNE");
    if (env && *env)
        return env;
    gl_tune t;
    gl_tune_auto(&t, NULL);
    return gl_tunes[t.id].name;
}

gl_status gl_tune_describe(const char *name, char *buf, size_t cap, gl_error *err)
{
    gl_tune t;
    gl_status st = gl_tune_parse(name, &t, err);
    if (st != GL_OK)
        return st;
    const gl_tune_params *p = &gl_tunes[t.id];
    char fmt[32];
    gl_tune_format(t, fmt, sizeof fmt);
#if !defined(__x86_64__) && !defined(__i386__)
    /* only the x86 kernels prefetch; the numbers mean nothing here */
    snprintf(buf, cap, "%s (%s; no effect on this architecture: its kernels take no tune)", fmt,
             p->what);
    return GL_OK;
#endif
    const char *far = p->far_t0 ? "prefetcht0" : "prefetcht1";
    const char *width = t.ymm == GL_YMM_ALL    ? "256-bit Q4_0/Q8_0"
                        : t.ymm == GL_YMM_Q4_0 ? "256-bit Q4_0, 512-bit Q8_0"
                                               : "512-bit Q4_0/Q8_0";
    char both[96], tiles[112];
    snprintf(both, sizeof both, "%s %u B + prefetcht0 %u B ahead%s, K-quants %u + %u B", far,
             p->pf_far, p->pf_near, p->pf_lines ? " once per line" : "", p->kx_far, p->kx_near);
    if (p->tile_far)
        snprintf(tiles, sizeof tiles, "%s %u B ahead (K-quants %u B), each line once", far,
                 p->pf_far, p->kx_far);
    else
        snprintf(tiles, sizeof tiles, "%s", both);
    if (p->hw_decode)
        snprintf(buf, cap,
                 "%s (%s): decode with hardware prefetch alone (AVX2 8-row K-quants %s %u + "
                 "prefetcht0 %u B ahead), %u stream%s per thread; prefill and batches %s; %s "
                 "decode products",
                 fmt, p->what, far, p->kx_far, p->kx_near, p->x8_streams,
                 p->x8_streams == 1 ? "" : "s", tiles, width);
    else
        snprintf(buf, cap, "%s (%s): %s, %u stream%s per thread%s%s; %s decode products", fmt,
                 p->what, both, p->x8_streams, p->x8_streams == 1 ? "" : "s",
                 p->tile_far ? "; prefill and batches " : "", p->tile_far ? tiles : "", width);
    return GL_OK;
}
