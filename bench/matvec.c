/* matvec — Q4_0 / Q8_0 / Q4_K / Q6_K / Q5_K matrix-vector products (the decode-time matmul) per
 * backend, 1 thread and all threads, rows split with gl_split_range in
 * grains of 16 as src/forward.c does. Reports GB/s of weight bytes against
 * the machine's measured read bandwidth.
 *   "cold": the product cycles through copies of the matrix that together
 *           exceed --mb (default 1024 MiB), so weights come from DRAM;
 *   "hot":  one copy, read again and again (cache-resident if it fits).
 *   matvec [--mb SIZE] [-t THREADS] [--backend NAME] [--type q4_K,q6_K,...] */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const char *layout_name(int type, int layout)
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
    default: return gguf_type_name((uint32_t)type);
    }
}

/* bytes and elements of one weight block, and where its (first) half-float
 * scale sits */
static void type_block(int type, size_t *bytes, int *elems, size_t *d_off)
{
    *d_off = 0;
    *elems = QK_K;
    switch (type) {
    case GGUF_T_Q4_0: *bytes = sizeof(block_q4_0), *elems = QK4_0; break;
    case GGUF_T_Q8_0: *bytes = sizeof(block_q8_0), *elems = QK8_0; break;
    case GGUF_T_Q4_K: *bytes = sizeof(block_q4_K); break;
    case GGUF_T_Q5_K: *bytes = sizeof(block_q5_K); break;
    default: *bytes = sizeof(block_q6_K), *d_off = offsetof(block_q6_K, d); break;
    }
}

int main(int argc, char **argv)
{
    size_t mb = 1024;
    int threads = gl_physical_cores();
    const char *only = NULL, *only_types = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--type") && i + 1 < argc)
            only_types = argv[++i];
        else {
            fprintf(stderr, "usage: matvec [--mb SIZE] [-t THREADS] [--backend NAME] [--type T,...]\n");
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
    static const int types[] = { GGUF_T_Q4_0, GGUF_T_Q8_0, GGUF_T_Q4_K, GGUF_T_Q6_K, GGUF_T_Q5_K };
    enum { NTYPES = sizeof types / sizeof types[0] };
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
            for (int ty = 0; ty < 2 * NTYPES; ty++)
                for (int si = 0; si < 2; si++) {
                    /* ty >= NTYPES: the same matrices repacked, where the backend uses them */
                    const int type = types[ty % NTYPES], n = shapes[si].n, rows = shapes[si].rows;
                    const int layout = ty >= NTYPES ? k.repack[type].layout : 0;
                    if (ty >= NTYPES && !k.repack[type].use)
                        continue;
                    if (!k.matmul[type] ||
                        (only_types && !strstr(only_types, gguf_type_name((uint32_t)type))))
                        continue;
                    size_t bbytes, d_off;
                    int belems;
                    type_block(type, &bbytes, &belems, &d_off);
                    const size_t wrb = (size_t)n / (size_t)belems * bbytes;
                    const size_t wbytes = wrb * (size_t)rows;
                    const size_t ncopies = arena / wbytes;
                    for (size_t c = 0; c < ncopies; c++) /* sane scales in every block */
                        for (size_t b = 0; b < wbytes / bbytes; b++) {
                            const uint16_t d[2] = { 0x2000, 0x2000 }; /* d (and dmin) */
                            memcpy(buf + c * wbytes + b * bbytes + d_off, d,
                                   d_off ? 2 : sizeof d);
                        }
                    const int act = k.act_type[type];
                    void *x = malloc(gl_act_row_bytes(act, n));
                    float *y = malloc((size_t)rows * sizeof(float));
                    float *xf = malloc((size_t)n * sizeof(float));
                    for (int i = 0; i < n; i++) /* any finite input */
                        xf[i] = (float)((i * 7919) % 255 - 127) / 127.0f;
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
                                   layout_name(type, layout), n, rows, nths[ti], best * 1e6, gbs[0],
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
