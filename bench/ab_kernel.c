/* ab_kernel — one product kernel of this build, timed, as a loadable
 * module. bench/ab_main loads the modules of two or more builds (a change
 * and its baseline, bench/ab_builds.sh) into one process and times them in
 * alternation, so that the drift of a shared machine's speed, which moves
 * whole runs of a program by 10-40 % within minutes, reaches every build
 * alike and their ratio round by round stays steady.
 *
 * The module holds the whole library (its symbols hidden), so each build's
 * kernels, tunes and layouts are its own. ab_kernel_time is its only
 * export; its state is this benchmark's, not the library's. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

#include "bench_weights.h"
#include "bwprobe.h"
#include "genloop.h"
#include "kernels.h"
#include "threadpool.h"

/* what ab_kernel_time measures: the product of a rows x n matrix of the
 * type (in the backend's repacked layout where it has one, as a loaded
 * model is) by nb activation columns, cycling through enough copies of the
 * matrix to fill cold_mb MiB (0: one copy, read again and again) */
typedef struct ab_setup {
    char type[16], backend[16];
    int n, rows, nb, cold_mb;
} ab_setup;

static struct {
    ab_setup s;
    int ready;
    gl_kernels k;
    int layout, grows;
    gl_matmul_fn f;   /* the product of that type and layout */
    unsigned char *w; /* ncopies matrices of wbytes */
    size_t wbytes, wrb, ncopies, xrb;
    void *x;
    float *y;
    int pool_ready;
    gl_threadpool *pool;
    size_t piece_bytes;
} st;

/* One call of the product: with AB_THREADS=N (N > 1) the rows split over N
 * threads as decode splits them (whole sets of 64 rows), each thread's
 * share in calls of about AB_PIECE_KB KiB of weights (decode's pieces,
 * src/matmul.c; default: the whole share in one call). The pool's workers
 * spin for a while after a module's turn, so the next module's first
 * millisecond shares the cores with them, alike for every module. */
typedef struct ab_call {
    const unsigned char *w;
    size_t gb;
    int rows, n, nb;
} ab_call;

static void ab_worker(void *arg, int ith, int nth)
{
    const ab_call *c = arg;
    int r0, r1;
    gl_split_range(c->rows, 64, ith, nth, &r0, &r1);
    const size_t piece_rows = st.piece_bytes / st.wrb / 64 * 64;
    const int step = st.piece_bytes == SIZE_MAX ? r1 - r0 : piece_rows ? (int)piece_rows : 64;
    for (int a = r0; a < r1; a += step) {
        const int b = r1 - a < step ? r1 : a + step;
        st.f(c->w, c->gb, st.x, st.xrb, st.y, (size_t)c->rows, c->n, a, b, c->nb);
    }
}

static void ab_threads_setup(void)
{
    const char *e = getenv("AB_THREADS"), *pe = getenv("AB_PIECE_KB");
    const int nth = e && atoi(e) > 1 ? atoi(e) : 1;
    st.pool_ready = 1;
    if (nth > 1 && gl_threadpool_create(&st.pool, nth, NULL) != GL_OK)
        st.pool = NULL;
    st.piece_bytes = pe && atoi(pe) > 0 ? (size_t)atoi(pe) << 10 : SIZE_MAX;
}

static int ab_prepare(const ab_setup *s, char *err, size_t errlen)
{
    st.ready = 0; /* until every buffer of the new setup is made */
    int ti = 0;
    while (ti < MV_NTYPES && strcasecmp(mv_types[ti].name, s->type))
        ti++;
    if (ti == MV_NTYPES) {
        snprintf(err, errlen, "unknown type '%s'", s->type);
        return -1;
    }
    const int type = mv_types[ti].type;
    gl_error e;
    if (gl_kernels_init(&st.k, s->backend[0] ? s->backend : NULL, &e) != GL_OK) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    if (!st.k.matmul[type] || s->n < 1 || s->n % mv_types[ti].qk || s->rows < 16 || s->rows % 16 ||
        s->nb < 1 || s->cold_mb < 0) {
        snprintf(err, errlen,
                 "no %s product of %d x %d (n a multiple of the block, rows of 16) here", s->type,
                 s->n, s->rows);
        return -1;
    }
    free(st.w);
    free(st.x);
    free(st.y);
    st.layout = st.k.repack[type].use ? st.k.repack[type].layout : GL_LAYOUT_PLAIN;
    st.grows = st.layout ? st.k.repack[type].rows : 1;
    st.wrb = (size_t)s->n / (size_t)mv_types[ti].qk * mv_types[ti].bytes;
    st.wbytes = st.wrb * (size_t)s->rows;
    st.ncopies = (size_t)s->cold_mb << 20 > st.wbytes ? ((size_t)s->cold_mb << 20) / st.wbytes : 1;
    const int act = st.k.act_type[type];
    st.xrb = gl_act_row_bytes(act, s->n);
    unsigned char *plain = bw_alloc(st.wbytes);
    st.w = bw_alloc(st.wbytes * st.ncopies);
    st.x = malloc(st.xrb * (size_t)s->nb);
    st.y = malloc(sizeof *st.y * (size_t)s->rows * (size_t)s->nb);
    float *xf = malloc(sizeof *xf * (size_t)s->n);
    if (!plain || !st.w || !st.x || !st.y || !xf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t r = 88172645463325252ull;
    for (size_t c = 0; c < st.ncopies; c++) {
        for (size_t i = 0; i + 8 <= st.wbytes; i += 8) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            memcpy(plain + i, &r, 8);
        }
        bench_sane_weights(plain, st.wbytes, 1, ti);
        if (st.layout)
            st.k.repack[type].fn(st.w + c * st.wbytes, plain, st.wrb, s->n, s->rows, 0,
                                 s->rows / st.grows);
        else
            memcpy(st.w + c * st.wbytes, plain, st.wbytes);
    }
    free(plain);
    for (int c = 0; c < s->nb; c++) { /* finite activations, a different column each */
        for (int i = 0; i < s->n; i++)
            xf[i] = (float)(((i + 7 * c) * 37) % 101 - 50) * 0.01f;
        if (st.k.quantize_act[act])
            st.k.quantize_act[act](xf, (char *)st.x + (size_t)c * st.xrb, s->n);
        else
            memcpy((char *)st.x + (size_t)c * st.xrb, xf, sizeof *xf * (size_t)s->n);
    }
    free(xf);
    st.f = st.layout ? st.k.matmul_packed[st.layout] : st.k.matmul[type];
    st.s = *s;
    st.ready = 1;
    return 0;
}

/* Runs the product (setting up first when the setup changed) for about
 * secs seconds and stores the mean seconds per call in *per_call and the
 * matrix's bytes in *bytes. 0, or -1 with a message in err. (bench/ab_main.c declares it too: the
 * module is its only caller.) */
__attribute__((visibility("default"))) int ab_kernel_time(const char *type, const char *backend,
                                                          int n, int rows, int nb, int cold_mb,
                                                          double secs, double *per_call,
                                                          double *bytes, char *err, size_t errlen);
__attribute__((visibility("default"))) int ab_kernel_time(const char *type, const char *backend,
                                                          int n, int rows, int nb, int cold_mb,
                                                          double secs, double *per_call,
                                                          double *bytes, char *err, size_t errlen)
{
    ab_setup s = { .n = n, .rows = rows, .nb = nb, .cold_mb = cold_mb };
    snprintf(s.type, sizeof s.type, "%s", type);
    snprintf(s.backend, sizeof s.backend, "%s", backend ? backend : "");
    if ((!st.ready || memcmp(&s, &st.s, sizeof s)) && ab_prepare(&s, err, errlen))
        return -1;
    const size_t gb = st.wrb * (size_t)st.grows;
    if (!st.pool_ready)
        ab_threads_setup();
    size_t calls = 0;
    const double t0 = bw_now();
    double t;
    do {
        ab_call c = {
            .w = st.w + calls % st.ncopies * st.wbytes, .gb = gb, .rows = rows, .n = n, .nb = nb
        };
        if (st.pool)
            gl_threadpool_run(st.pool, ab_worker, &c);
        else
            ab_worker(&c, 0, 1);
        calls++;
    } while ((t = bw_now() - t0) < secs);
    *per_call = t / (double)calls;
    *bytes = (double)st.wbytes;
    return 0;
}
