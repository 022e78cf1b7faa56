/* genloop bench: prefill and decode speed of a model, with the machine's
 * memory read bandwidth measured in the same run, so decode speed is
 * reported against its roofline: tok/s <= bandwidth / weight bytes per token. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench/bwprobe.h"
#include "cli.h"
#include "genloop.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best-of-reps read bandwidth of a buffer far larger than any cache, with
 * n_threads readers, in GB/s: the probe bench/membw uses. */
static double bench_memory_bandwidth(int n_threads, size_t bytes, int reps)
{
    unsigned char *buf = bw_alloc(bytes);
    gl_threadpool *pool = NULL;
    double bw = 0;
    if (buf && gl_threadpool_create(&pool, n_threads, NULL) == GL_OK) {
        memset(buf, 1, bytes);
        bw = bw_measure(pool, buf, bytes, reps);
    }
    gl_threadpool_free(pool);
    free(buf);
    return bw;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *sorted, int n, double p)
{
    if (n == 0)
        return 0;
    int i = (int)(p / 100.0 * (n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

int cmd_bench(int argc, char **argv)
{
    const char *model = NULL, *backend = NULL;
    long long n_prompt = 128, n_gen = 64, threads = 0, reps = 3, bw_mib = 1024;
    bool json = false;
    int cache_type = GL_CACHE_F16;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            json = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: genloop bench -m MODEL [-p 128] [-n 64] [-t N] [-r REPS] "
                   "[--bw-mib 1024] [--cache-type f16|q8_0|f32] [--backend NAME] [--json]\n");
            return 0;
        }
        if (!v) {
            cli_error("bench: option '%s' needs a value", a);
            return EXIT_USAGE;
        }
        bool ok = true;
        if (!strcmp(a, "-m"))
            model = v;
        else if (!strcmp(a, "--backend"))
            backend = v;
        else if (!strcmp(a, "--cache-type")) {
            cache_type = gl_cache_type_from_name(v);
            if (cache_type < 0) {
                cli_error("bench: --cache-type expects f16, q8_0 or f32, got '%s'", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "-p"))
            ok = cli_int(a, v, 1, 1 << 16, &n_prompt);
        else if (!strcmp(a, "-n"))
            ok = cli_int(a, v, 1, 1 << 20, &n_gen);
        else if (!strcmp(a, "-t"))
            ok = cli_int(a, v, 1, 256, &threads);
        else if (!strcmp(a, "-r"))
            ok = cli_int(a, v, 1, 1000, &reps);
        else if (!strcmp(a, "--bw-mib"))
            ok = cli_int(a, v, 16, 1 << 16, &bw_mib);
        else {
            cli_error("bench: unknown option '%s'", a);
            return EXIT_USAGE;
        }
        if (!ok)
            return EXIT_USAGE;
        i++;
    }
    if (!model) {
        cli_error("bench: missing -m MODEL");
        return EXIT_USAGE;
    }
    gl_error err;
    if (backend && gl_backend_check(backend, &err)) {
        cli_error("%s", err.msg);
        return err.code == GL_ERR_ARG ? EXIT_USAGE : EXIT_RUNTIME;
    }

    double t_load = now_s();
    gl_model *m = NULL;
    gl_model_params mp = gl_model_default_params();
    mp.backend = backend;
    if (gl_model_load(&m, model, &mp, &err)) {
        cli_error("%s", err.msg);
        return EXIT_RUNTIME;
    }
    const double load_s = now_s() - t_load;
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = (int)(n_prompt + n_gen + 1);
    cp.n_threads = (int)threads;
    cp.cache_type = cache_type;
    gl_ctx *c = NULL;
    if (gl_ctx_create(&c, m, &cp, &err)) {
        cli_error("%s", err.msg);
        gl_model_free(m);
        return EXIT_RUNTIME;
    }
    const int nt = threads ? (int)threads : gl_ctx_n_threads(c);
    gl_model_info info;
    gl_model_get_info(m, &info);
    const int V = info.n_vocab;
    float *logits = malloc(sizeof *logits * (size_t)V);
    int32_t *prompt = malloc(sizeof *prompt * (size_t)n_prompt);
    double *lat = malloc(sizeof *lat * (size_t)(reps * n_gen));
    double *pre = malloc(sizeof *pre * (size_t)reps), *dec = malloc(sizeof *dec * (size_t)reps);
    double ttft = 0, load_to_first = 0;
    int n_lat = 0;
    /* a fixed, vocabulary-spread prompt: same work on every run */
    for (int i = 0; i < n_prompt; i++)
        prompt[i] = (int32_t)(i == 0 && info.bos_id >= 0 ? info.bos_id
                                                         : 3 + (i * 7919) % (V > 3 ? V - 3 : 1));
    for (int r = 0; r < reps; r++) {
        gl_ctx_reset(c);
        double t0 = now_s();
        if (gl_ctx_eval(c, prompt, (int)n_prompt, logits, false, &err))
            goto fail;
        int32_t tok = argmax(logits, V);
        double t1 = now_s();
        if (r == 0)
            load_to_first = t1 - t_load;
        pre[r] = n_prompt / (t1 - t0);
        ttft = r == 0 || (t1 - t0) * 1e3 < ttft ? (t1 - t0) * 1e3 : ttft;
        double td = now_s();
        for (int i = 0; i < n_gen; i++) {
            double ts = now_s();
            if (gl_ctx_eval(c, &tok, 1, logits, false, &err))
                goto fail;
            tok = argmax(logits, V);
            lat[n_lat++] = (now_s() - ts) * 1e3;
        }
        dec[r] = n_gen / (now_s() - td);
    }
    qsort(lat, (size_t)n_lat, sizeof *lat, cmp_double);
    qsort(pre, (size_t)reps, sizeof *pre, cmp_double);
    qsort(dec, (size_t)reps, sizeof *dec, cmp_double);
    const double pre_med = pre[reps / 2], dec_med = dec[reps / 2];

    /* peak RSS of the model run, read before the probe's buffer counts */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rss = (double)ru.ru_maxrss * 1024.0;
    double bw = bench_memory_bandwidth(nt, (size_t)bw_mib << 20, 3);
    const double wbt = (double)info.weight_bytes_per_token;
    const double roof = bw > 0 ? bw * 1e9 / wbt : 0;
    if (json) {
        printf("{\"model\": ");
        json_write_str(stdout, model, strlen(model));
        printf(", \"backend\": \"%s\", \"threads\": %d, \"n_prompt\": %lld, \"n_gen\": %lld, "
               "\"reps\": %lld, \"prefill_tok_s\": %.2f, \"decode_tok_s\": %.2f, "
               "\"latency_ms\": {\"p50\": %.4f, \"p90\": %.4f, \"p99\": %.4f}, "
               "\"ttft_ms\": %.3f, \"load_ms\": %.3f, \"load_to_first_token_ms\": %.3f, "
               "\"peak_rss_bytes\": %.0f, "
               "\"bandwidth_gbs\": %.3f, \"weight_bytes_per_token\": %.0f, "
               "\"roofline_tok_s\": %.2f, \"roofline_pct\": %.2f}\n",
               info.backend, nt, n_prompt, n_gen, reps, pre_med, dec_med, pct(lat, n_lat, 50),
               pct(lat, n_lat, 90), pct(lat, n_lat, 99), ttft, load_s * 1e3, load_to_first * 1e3,
               rss, bw, wbt, roof, roof > 0 ? 100.0 * dec_med / roof : 0);
    } else {
        printf("model %s (%s, %d layers, dim %d), backend %s, %d threads\n", model, info.name,
               info.n_layers, info.dim, info.backend, nt);
        printf("prefill  %6lld tok: %10.2f tok/s   (time to first token %.2f ms)\n", n_prompt,
               pre_med, ttft);
        printf("decode   %6lld tok: %10.2f tok/s   latency p50 %.3f p90 %.3f p99 %.3f ms\n", n_gen,
               dec_med, pct(lat, n_lat, 50), pct(lat, n_lat, 90), pct(lat, n_lat, 99));
        printf("memory read bandwidth %.2f GB/s, weights %.1f MB/token -> roofline %.2f tok/s; "
               "decode at %.1f%% of roofline\n",
               bw, wbt / 1e6, roof, roof > 0 ? 100.0 * dec_med / roof : 0);
        printf("peak RSS %.1f MB; load %.1f ms; load + first token %.1f ms\n", rss / 1e6,
               load_s * 1e3, load_to_first * 1e3);
    }
    free(logits);
    free(prompt);
    free(lat);
    free(pre);
    free(dec);
    gl_ctx_free(c);
    gl_model_free(m);
    return 0;
fail:
    cli_error("%s", err.msg);
    gl_ctx_free(c);
    gl_model_free(m);
    return EXIT_RUNTIME;
}
