/* Aggregate decode throughput of the continuous-batching engine at several
 * batch sizes: B sequences decode together, so each step reads every weight
 * once for B tokens. Reports tok/s per batch size and the speed-up over
 * batch 1.
 *
 *   bench/batch_decode MODEL.gguf [-t THREADS] [-n STEPS] [-b 1,4,8,16] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "genloop.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double run(gl_model *m, int batch, int threads, int steps)
{
    gl_engine_params ep = gl_engine_default_params();
    ep.max_seqs = batch;
    ep.n_threads = threads;
    ep.n_ctx = 256;
    ep.max_batch_tokens = 512;
    gl_engine *e;
    gl_error err;
    if (gl_engine_create(&e, m, &ep, &err)) {
        fprintf(stderr, "batch_decode: %s\n", err.msg);
        exit(1);
    }
    int32_t prompt[16];
    for (int b = 0; b < batch; b++) {
        for (int i = 0; i < 16; i++)
            prompt[i] = 1 + (b * 131 + i * 17) % 250;
        gl_request r = gl_request_default();
        r.prompt_tokens = prompt;
        r.n_prompt_tokens = 16;
        r.n_predict = steps + 2;
        r.sampling.temp = 0;
        if (gl_engine_submit(e, &r, NULL, &err)) {
            fprintf(stderr, "batch_decode: %s\n", err.msg);
            exit(1);
        }
    }
    /* the first step prefills every prompt; time only decode steps */
    gl_engine_step(e, &err);
    gl_engine_stats s0;
    gl_engine_get_stats(e, &s0);
    double t0 = now_s();
    for (int i = 0; i < steps; i++)
        if (gl_engine_step(e, &err)) {
            fprintf(stderr, "batch_decode: %s\n", err.msg);
            exit(1);
        }
    double dt = now_s() - t0;
    gl_engine_stats s1;
    gl_engine_get_stats(e, &s1);
    gl_engine_free(e);
    return (double)(s1.decode_tokens - s0.decode_tokens) / dt;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: batch_decode MODEL.gguf [-t THREADS] [-n STEPS] [-b 1,4,8,16]\n");
        return 2;
    }
    int threads = 0, steps = 16;
    char sizes[128] = "1,4,8,16";
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-t"))
            threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-b"))
            snprintf(sizes, sizeof sizes, "%s", argv[i + 1]);
    }
    gl_model *m;
    gl_error err;
    if (gl_model_load(&m, argv[1], NULL, &err)) {
        fprintf(stderr, "batch_decode: %s\n", err.msg);
        return 1;
    }
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    printf("model %s, backend %s, threads %d, %d decode steps per size\n", argv[1], mi.backend,
           threads, steps);
    printf("%6s %14s %10s\n", "batch", "decode tok/s", "x batch 1");
    double base = 0;
    for (char *tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
        const int b = atoi(tok);
        if (b < 1)
            continue;
        const double tps = run(m, b, threads, steps);
        if (base == 0)
            base = tps;
        printf("%6d %14.2f %10.2f\n", b, tps, tps / base);
        fflush(stdout);
    }
    gl_model_free(m);
    return 0;
}
