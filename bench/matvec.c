/* matvec — quantized matrix-vector products (the decode-time matmul) per
 * backend, 1 thread and all threads, rows split with gl_split_range in
 * grains of 16 as src/forward.c does. Reports GB/s of weight bytes against
 * the machine's measured read bandwidth.
 *   "cold": the product cycles through copies of the matrix that together
 *           exceed --mb (default 1024 MiB), so weights come from DRAM;
 *   "hot":  one copy, read again and again (cache-resident if it fits).
 *   matvec [--mb SIZE] [-t THREADS] [--backend NAME] [--type T[,T...]]
 * (default types q4_0,q8_0; "all": every quantized type a backend runs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* The benchmarked weight types: block bytes and elements, and where the
 * block's half scales are (set to 2^-7 so every block is sane; -1: none). */
static const struct {
    int type;
    const char *name;
    int qk, doff, moff;
    size_t bytes;
} mv_types[] = {
    { GGUF_T_Q4_0, "q4_0", 32, 0, -1, sizeof(block_q4_0) },
    { GGUF_T_Q8_0, "q8_0", 32, 0, -1, sizeof(block_q8_0) },
    { GGUF_T_Q4_1, "q4_1", 32, 0, 2, sizeof(block_q4_1) },
    { GGUF_T_Q5_0, "q5_0", 32, 0, -1, sizeof(block_q5_0) },
    { GGUF_T_Q5_1, "q5_1", 32, 0, 2, sizeof(block_q5_1) },
    { GGUF_T_IQ4_NL, "iq4_nl", 32, 0, -1, sizeof(block_iq4_nl) },
    { GGUF_T_Q2_K, "q2_K", 256, 80, 82, sizeof(block_q2_K) },
    { GGUF_T_Q3_K, "q3_K", 256, 108, -1, sizeof(block_q3_K) },
    { GGUF_T_Q4_K, "q4_K", 256, 0, 2, sizeof(block_q4_K) },
    { GGUF_T_Q5_K, "q5_K", 256, 0, 2, sizeof(block_q5_K) },
    { GGUF_T_Q6_K, "q6_K", 256, 208, -1, sizeof(block_q6_K) },
    { GGUF_T_IQ4_XS, "iq4_xs", 256, 0, -1, sizeof(block_iq4_xs) },
};
enum { MV_NTYPES = sizeof mv_types / sizeof mv_types[0] };

static const char *layout_name(int ti, int layout)
{
    switch (layout) {
    case GL_LAYOUT_Q4_0X8: return "q4_0x8";
    case GL_LAYOUT_Q8_0X8: return "q8_0x8";
    case GL_LAYOUT_Q4_0X16: return "q4_0x16";
    case GL_LAYOUT_Q4_KX8: return "q4_Kx8";
    case GL_LAYOUT_Q6_KX8: return "q6_Kx8";
    case GL_LAYOUT_Q4_KX16: return "q4_Kx16";
    case GL_LAYOUT_Q6_KX16: return "q6_Kx16";
    case GL_LAYOUT_Q5_KX16: return "q5_Kx16";
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

int main(int argc, char **argv)
{
    size_t mb = 1024;
    int threads = gl_physical_cores();
    const char *only = NULL, *tlist = NULL;
    int rows_override =
        0; /* --rows R: R rows (small: the "hot" column then times the kernel in L2) */
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
        else {
            fprintf(stderr,
                    "usage: matvec [--mb SIZE] [-t THREADS] [--backend NAME] [--type T,...|all] "
                    "[--rows R]\n");
            return 2;
        }
    }
    const size_t arena = mb << 20;
    unsigned char *buf = bw_alloc(arena), *pbuf = bw_alloc(arena);
    if (!buf || !pbuf)
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
    static const struct {
        int n, rows;
    } shapes[] = { { 2048, 5632 }, { 5632, 2048 } };
    printf("%-13s %-7s %-10s %3s %10s %9s %6s %9s\n", "backend", "type", "n x rows", "thr",
           "us/call", "GB/s cold", "of bw", "GB/s hot");
    for (int bi = 0; bi < nb; bi++) {
        gl_kernels k;
        if ((only && strcmp(only, names[bi])) || gl_kernels_init(&k, names[bi], NULL) != GL_OK)
            continue;
        for (int ti = 0; ti < (threads > 1 ? 2 : 1); ti++) {
            gl_threadpool *pool;
            if (gl_threadpool_create(&pool, nths[ti], NULL) != GL_OK)
                return 1;
            for (int ty = 0; ty < 2 * MV_NTYPES; ty++)
                for (int si = 0; si < 2; si++) {
                    /* ty >= MV_NTYPES: the same matrices repacked, where the backend uses a layout
                     */
                    const int tix = ty % MV_NTYPES, type = mv_types[tix].type;
                    const int n = shapes[si].n;
                    const int rows =
                        rows_override > 0 ? (rows_override + 15) / 16 * 16 : shapes[si].rows;
                    const int layout = ty >= MV_NTYPES ? k.repack[type].layout : 0;
                    if (!mv_wanted(tlist, tix) || !k.matmul[type] ||
                        (ty >= MV_NTYPES && !k.repack[type].use))
                        continue;
                    const size_t bsz = mv_types[tix].bytes;
                    const size_t wrb = (size_t)n / (size_t)mv_types[tix].qk * bsz;
                    const size_t wbytes = wrb * (size_t)rows;
                    const size_t ncopies = arena / wbytes;
                    const uint16_t d = 0x2000;
                    for (size_t c = 0; c < ncopies; c++) /* sane scales in every block */
                        for (size_t b = 0; b < wbytes / bsz; b++) {
                            memcpy(buf + c * wbytes + b * bsz + mv_types[tix].doff, &d, 2);
                            if (mv_types[tix].moff >= 0)
                                memcpy(buf + c * wbytes + b * bsz + mv_types[tix].moff, &d, 2);
                        }
                    const int act = k.act_type[type];
                    void *x = malloc(gl_act_row_bytes(act, n));
                    float *y = malloc((size_t)rows * sizeof(float));
                    float *xf = malloc((size_t)n * sizeof(float));
                    for (int i = 0; i < n; i++) /* finite activations */
                        xf[i] = (float)((i * 37) % 101 - 50) * 0.01f;
                    k.quantize_act[act](xf, x, n);
                    free(xf);
                    if (layout)
                        for (size_t c = 0; c < ncopies; c++)
                            k.repack[type].fn(pbuf + c * wbytes, buf + c * wbytes, wrb, n, rows, 0,
                                              rows / k.repack[type].rows);
                    unsigned char *base = layout ? pbuf : buf;
                    mv_task t = { .k = &k,
                                  .type = type,
                                  .n = n,
                                  .rows = rows,
                                  .wrb = wrb,
                                  .x = x,
                                  .y = y,
                                  .layout = layout,
                                  .grows = k.repack[type].rows };
                    double gbs[2];
                    for (int hot = 0; hot < 2; hot++) {
                        const int calls = hot ? 200 : (int)(ncopies < 200 ? ncopies * 2 : 400);
                        double best = 1e30;
                        for (int rep = 0; rep < 3; rep++) {
                            const double t0 = bw_now();
                            for (int i = 0; i < calls; i++) {
                                t.w = base + (hot ? 0 : (size_t)i % ncopies * wbytes);
                                gl_threadpool_run(pool, mv_worker, &t);
                            }
                            const double dt = (bw_now() - t0) / calls;
                            if (dt < best)
                                best = dt;
                        }
                        gbs[hot] = (double)wbytes / best * 1e-9;
                        if (!hot)
                            printf("%-13s %-7s %4dx%-5d %3d %10.1f %9.1f %5.0f%%", names[bi],
                                   layout_name(tix, layout), n, rows, nths[ti], best * 1e6, gbs[0],
                                   100 * gbs[0] / bw[ti]);
                    }
                    printf(" %9.1f\n", gbs[1]);
                    free(x);
                    free(y);
                }
            gl_threadpool_free(pool);
        }
    }
    free(buf);
    free(pbuf);
    return 0;
}
