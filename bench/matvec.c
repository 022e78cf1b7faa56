/* matvec — quantized matrix-vector products (the decode-time matmul) per
 * backend, 1 thread and all threads, rows split with gl_split_range in
 * grains of 16 as src/forward.c does. Reports GB/s of weight bytes against
 * the machine's measured read bandwidth.
 *   "cold": the product cycles through copies of the matrix that together
 *           exceed --mb (default 1024 MiB), so weights come from DRAM;
 *   "hot":  one copy, read again and again (cache-resident if it fits).
 *   matvec [--mb SIZE] [-t THREADS] [--backend NAME] [--type T[,T...]]
 *          [--tune NAME[,NAME...]|all] [--rounds R] [--shape NxROWS ...]
 * (default types q4_0,q8_0; "all": every type a backend runs, f16, bf16 and
 * f32 included).
 * --tune compares decode tunes (src/tune.h; default: the one this CPU
 * gets; "all": every preset with 512- and 256-bit products): each round
 * times every tune once, the best of --rounds (default 3) counts.
 * --shape (repeatable) times n x rows products in place of TinyLlama's
 * FFN pair 2048x5632 and 5632x2048 (types whose blocks do not divide n are
 * left out of that shape). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench_weights.h"
#include "bwprobe.h"
#include "genloop.h"
#include "kernels.h"

typedef struct mv_task {
    const gl_kernels *k;
    int type, n, rows, layout; /* layout != 0: w is repacked, groups grows rows apart */
    int grows;
    size_t wrb;
    const void *w, *x;
    float *y;
} mv_task;

static void mv_worker(void *arg, int ith, int nth)
{
    const mv_task *t = arg;
    int r0, r1;
    gl_split_range(t->rows, 16, ith, nth, &r0, &r1);
    if (r0 < r1 && t->layout)
        t->k->matmul_packed[t->layout](t->w, t->wrb * (size_t)t->grows, t->x, 0, t->y,
                                       (size_t)t->rows, t->n, r0, r1, 1);
    else if (r0 < r1)
        t->k->matmul[t->type](t->w, t->wrb, t->x, 0, t->y, (size_t)t->rows, t->n, r0, r1, 1);
}

static const char *layout_name(int ti, int layout)
{
    switch (layout) {
    case GL_LAYOUT_Q4_0X8: return "q4_0x8";
    case GL_LAYOUT_Q8_0X8: return "q8_0x8";
    case GL_LAYOUT_Q4_0X16: return "q4_0x16";
    case GL_LAYOUT_Q8_0X16: return "q8_0x16";
    case GL_LAYOUT_Q5_0X16: return "q5_0x16";
    case GL_LAYOUT_IQ4_NLX16: return "iq4_nlx16";
    case GL_LAYOUT_Q5_0X8: return "q5_0x8";
    case GL_LAYOUT_IQ4_NLX8: return "iq4_nlx8";
    case GL_LAYOUT_Q4_1X8: return "q4_1x8";
    case GL_LAYOUT_Q4_1X16: return "q4_1x16";
    case GL_LAYOUT_Q5_1X8: return "q5_1x8";
    case GL_LAYOUT_Q5_1X16: return "q5_1x16";
    case GL_LAYOUT_Q4_KX8: return "q4_Kx8";
    case GL_LAYOUT_Q6_KX8: return "q6_Kx8";
    case GL_LAYOUT_Q4_KX16: return "q4_Kx16";
    case GL_LAYOUT_Q6_KX16: return "q6_Kx16";
    case GL_LAYOUT_Q5_KX16: return "q5_Kx16";
    case GL_LAYOUT_IQ4_XSX16: return "iq4_xsx16";
    case GL_LAYOUT_Q3_KX16: return "q3_Kx16";
    case GL_LAYOUT_Q3_KX8: return "q3_Kx8";
    case GL_LAYOUT_IQ4_XSX8: return "iq4_xsx8";
    case GL_LAYOUT_Q2_KX8: return "q2_Kx8";
    case GL_LAYOUT_Q2_KX16: return "q2_Kx16";
    case GL_LAYOUT_Q5_KX8: return "q5_Kx8";
    default: return mv_types[ti].name;
    }
}

/* is type ti in the comma-separated list (NULL: q4_0 and q8_0) */
static int mv_wanted(const char *list, int ti)
{
    if (!list)
        return ti < 2;
    if (!strcmp(list, "all"))
        return 1;
    const size_t len = strlen(mv_types[ti].name);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncasecmp(p, mv_types[ti].name, len) && (p[len] == ',' || p[len] == 0))
            return 1;
    return 0;
}

/* One measured configuration: a kernel table (backend + tune) and, for a
 * layout, its own repacked copies of the matrices. */
typedef struct mv_cfg {
    gl_kernels k;
    char tune[32];
    int layout;
    unsigned char *base;
    double best_cold, best_hot;
} mv_cfg;

/* Best time per call of `calls` products over the copies at base (cold:
 * cycling through ncopies; hot: copy 0 only). */
static double mv_time(gl_threadpool *pool, mv_task *t, unsigned char *base, size_t wbytes,
                      size_t ncopies, int hot)
{
    const int calls = hot ? 200 : (int)(ncopies < 200 ? ncopies * 2 : 400);
    const double t0 = bw_now();
    for (int i = 0; i < calls; i++) {
        t->w = base + (hot ? 0 : (size_t)i % ncopies * wbytes);
        gl_threadpool_run(pool, mv_worker, t);
    }
    return (bw_now() - t0) / calls;
}

int main(int argc, char **argv)
{
    size_t mb = 1024;
    int threads = gl_physical_cores(), rounds = 3;
    const char *only = NULL, *tlist = NULL, *tunes = NULL;
    int rows_override =
        0; /* --rows R: R rows (small: the "hot" column then times the kernel in L2) */
    /* --shape NxROWS (repeatable): a model's product shapes in place of the
     * TinyLlama FFN pair */
    struct {
        int n, rows;
    } shapes[8] = { { 2048, 5632 }, { 5632, 2048 } };
    int n_shapes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--type") && i + 1 < argc)
            tlist = argv[++i];
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
            rows_override = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (n_shapes == 8 ||
                sscanf(argv[++i], "%dx%d", &shapes[n_shapes].n, &shapes[n_shapes].rows) != 2 ||
                shapes[n_shapes].n < 32 || shapes[n_shapes].n % 32 || shapes[n_shapes].rows < 16) {
                fprintf(stderr, "matvec: --shape NxROWS: n a multiple of 32, rows >= 16, "
                                "at most 8 shapes\n");
                return 2;
            }
            n_shapes++;
        } else if (!strcmp(argv[i], "--tune") && i + 1 < argc)
            tunes = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: matvec [--mb SIZE] [-t THREADS] [--backend NAME] "
                    "[--type T,...|all] [--rows R] [--shape NxROWS ...] [--tune NAME,...|all] "
                    "[--rounds R]\n");
            return 2;
        }
    }
    if (threads < 1 || rounds < 1 || rounds > 100 || mb < 16) {
        fprintf(stderr, "matvec: -t, --rounds (1..100) and --mb (>= 16) out of range\n");
        return 2;
    }
    /* the tunes to compare: the one this CPU gets, a list, or all presets */
    gl_tune tl[16];
    int n_tunes = 0;
    if (!tunes) {
        if (gl_tune_auto(&tl[n_tunes++], NULL) != GL_OK)
            tl[0] = (gl_tune){ 0, 0 };
    } else if (!strcmp(tunes, "all")) {
        for (int i = 0; i < GL_TUNE_COUNT && n_tunes + 2 <= 16; i++) {
            tl[n_tunes++] = (gl_tune){ (uint8_t)i, 0 };
            tl[n_tunes++] = (gl_tune){ (uint8_t)i, 1 };
        }
    } else {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", tunes);
        for (char *tok = strtok(buf, ","); tok && n_tunes < 16; tok = strtok(NULL, ",")) {
            gl_error err;
            if (gl_tune_parse(tok, &tl[n_tunes++], &err) != GL_OK) {
                fprintf(stderr, "matvec: %s\n", err.msg);
                return 2;
            }
        }
    }
    const size_t arena = mb << 20;
    unsigned char *buf = bw_alloc(arena);
    unsigned char *pbufs[16] = { 0 }; /* per distinct layout of the tunes */
    int pbuf_layout[16];
    int n_pbufs = 0;
    if (!buf)
        return 1;
    /* plausible blocks: random quants, d = 2^-7 */
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < arena; i += 8) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        memcpy(buf + i, &s, 8);
    }
    int nths[2] = { 1, threads };
    double bw[2];
    for (int ti = 0; ti < 2; ti++) {
        gl_threadpool *pool;
        if (gl_threadpool_create(&pool, nths[ti], NULL) != GL_OK)
            return 1;
        bw[ti] = bw_measure(pool, buf, arena, 3);
        gl_threadpool_free(pool);
        printf("read bandwidth, %d thread%s: %.1f GB/s\n", nths[ti], nths[ti] > 1 ? "s" : "",
               bw[ti]);
        if (threads == 1) {
            bw[1] = bw[0];
            break;
        }
    }

    const char *names[16];
    const int nb = gl_backend_list(names, 16);
    if (!n_shapes)
        n_shapes = 2;
    printf("%-13s %-12s %-7s %-10s %3s %10s %9s %6s %9s\n", "backend", "tune", "type", "n x rows",
           "thr", "us/call", "GB/s cold", "of bw", "GB/s hot");
    for (int bi = 0; bi < nb; bi++) {
        if (only && strcmp(only, names[bi]))
            continue;
        mv_cfg cfg[16];
        int n_cfg = 0;
        for (int i = 0; i < n_tunes; i++)
            if (gl_kernels_init_tuned(&cfg[n_cfg].k, names[bi], tl[i], NULL) == GL_OK)
                gl_tune_format(tl[i], cfg[n_cfg++].tune, sizeof cfg[0].tune);
        /* generic's kernels are the same whatever the tune */
        if (!strcmp(names[bi], "generic"))
            n_cfg = n_cfg > 1 ? 1 : n_cfg;
        if (!n_cfg)
            continue;
        for (int ti = 0; ti < (threads > 1 ? 2 : 1); ti++) {
            gl_threadpool *pool;
            if (gl_threadpool_create(&pool, nths[ti], NULL) != GL_OK)
                return 1;
            for (int ty = 0; ty < 2 * MV_NTYPES; ty++)
                for (int si = 0; si < n_shapes; si++) {
                    /* ty >= MV_NTYPES: the same matrices repacked, where the backend uses a
                     * layout (per tune: +ymm may pick another) */
                    const int tix = ty % MV_NTYPES, type = mv_types[tix].type;
                    const int n = shapes[si].n;
                    const int rows =
                        rows_override > 0 ? (rows_override + 15) / 16 * 16 : shapes[si].rows;
                    const gl_kernels *k0 = &cfg[0].k;
                    if (!mv_wanted(tlist, tix) || !k0->matmul[type] ||
                        (ty >= MV_NTYPES && !k0->repack[type].use) || n % mv_types[tix].qk)
                        continue;
                    const size_t bsz = mv_types[tix].bytes;
                    const size_t wrb = (size_t)n / (size_t)mv_types[tix].qk * bsz;
                    const size_t wbytes = wrb * (size_t)rows;
                    const size_t ncopies = arena / wbytes;
                    bench_sane_weights(buf, wbytes, ncopies, tix);
                    const int act = k0->act_type[type];
                    void *x = malloc(gl_act_row_bytes(act, n));
                    float *y = malloc((size_t)rows * sizeof(float));
                    float *xf = malloc((size_t)n * sizeof(float));
                    if (!x || !y || !xf)
                        return 1;
                    for (int i = 0; i < n; i++) /* finite activations */
                        xf[i] = (float)((i * 37) % 101 - 50) * 0.01f;
                    if (k0->quantize_act[act])
                        k0->quantize_act[act](xf, x, n);
                    else /* float rows take the activations as they are */
                        memcpy(x, xf, (size_t)n * sizeof(float));
                    free(xf);
                    n_pbufs = 0;
                    for (int c = 0; c < n_cfg; c++) {
                        const gl_kernels *k = &cfg[c].k;
                        cfg[c].layout = ty >= MV_NTYPES ? k->repack[type].layout : 0;
                        cfg[c].base = buf;
                        cfg[c].best_cold = cfg[c].best_hot = 1e30;
                        if (!cfg[c].layout)
                            continue;
                        int pb = 0;
                        while (pb < n_pbufs && pbuf_layout[pb] != cfg[c].layout)
                            pb++;
                        if (pb == n_pbufs) { /* first tune with this layout: repack */
                            if (!pbufs[pb] && !(pbufs[pb] = bw_alloc(arena)))
                                return 1;
                            pbuf_layout[n_pbufs++] = cfg[c].layout;
                            for (size_t cp = 0; cp < ncopies; cp++)
                                k->repack[type].fn(pbufs[pb] + cp * wbytes, buf + cp * wbytes, wrb,
                                                   n, rows, 0, rows / k->repack[type].rows);
                        }
                        cfg[c].base = pbufs[pb];
                    }
                    /* interleaved rounds: every tune once per round, so a drift of
                     * the machine's bandwidth reaches them all alike */
                    for (int r = 0; r < rounds; r++)
                        for (int c = 0; c < n_cfg; c++)
                            for (int hot = 0; hot < 2; hot++) {
                                mv_task t = { .k = &cfg[c].k,
                                              .type = type,
                                              .n = n,
                                              .rows = rows,
                                              .wrb = wrb,
                                              .x = x,
                                              .y = y,
                                              .layout = cfg[c].layout,
                                              .grows = cfg[c].k.repack[type].rows };
                                const double dt =
                                    mv_time(pool, &t, cfg[c].base, wbytes, ncopies, hot);
                                double *best = hot ? &cfg[c].best_hot : &cfg[c].best_cold;
                                *best = dt < *best ? dt : *best;
                            }
                    for (int c = 0; c < n_cfg; c++) {
                        const double cold = (double)wbytes / cfg[c].best_cold * 1e-9;
                        printf("%-13s %-12s %-7s %4dx%-5d %3d %10.1f %9.1f %5.0f%% %9.1f\n",
                               names[bi], cfg[c].tune, layout_name(tix, cfg[c].layout), n, rows,
                               nths[ti], cfg[c].best_cold * 1e6, cold, 100 * cold / bw[ti],
                               (double)wbytes / cfg[c].best_hot * 1e-9);
                    }
                    free(x);
                    free(y);
                }
            gl_threadpool_free(pool);
        }
    }
    free(buf);
    for (int i = 0; i < 16; i++)
        free(pbufs[i]);
    return 0;
}
