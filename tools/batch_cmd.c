/* genloop batch: serves a file of requests through the continuous-batching
 * engine. Input: one JSON object per line, {"id", "prompt", "n", "temp",
 * "top_k", "top_p", "min_p", "repeat_penalty", "seed", "stop": [...]} with
 * all but "prompt" optional. Output: one line per request as it finishes,
 * {"id", "prompt_tokens", "tokens", "text", "stop", "seed"}; a throughput
 * summary goes to stderr. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "genloop.h"
#include "json_in.h"

typedef struct job {
    json_object obj;
    char id_raw[256];
    int64_t eid;
    uint64_t seed;
    bool done;
} job;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Reads the numeric field key into *out within [lo, hi]; false with a
 * message when present but invalid. */
static bool num_field(const json_object *o, const char *key, double lo, double hi, double *out,
                      const char *file, int line)
{
    const json_value *v = json_get(o, key);
    if (!v || v->type == JV_NULL)
        return true;
    if (v->type != JV_NUM || !(v->num >= lo && v->num <= hi)) {
        cli_error("%s:%d: \"%s\" must be a number in [%g, %g]", file, line, key, lo, hi);
        return false;
    }
    *out = v->num;
    return true;
}

static void write_result(FILE *out, const job *j, const gl_request_status *st)
{
    fprintf(out, "{\"id\": %s, \"prompt_tokens\": [", j->id_raw);
    for (int i = 0; i < st->n_prompt; i++)
        fprintf(out, "%s%d", i ? ", " : "", st->prompt_tokens[i]);
    fprintf(out, "], \"tokens\": [");
    for (int i = 0; i < st->n_generated; i++)
        fprintf(out, "%s%d", i ? ", " : "", st->tokens[i]);
    fprintf(out, "], \"text\": ");
    json_write_str(out, st->text, st->text_len);
    fprintf(out, ", \"stop\": \"%s\", \"seed\": %llu}\n", gl_stop_reason_name(st->stop),
            (unsigned long long)j->seed);
    fflush(out);
}

int cmd_batch(int argc, char **argv)
{
    const char *model = NULL, *input = NULL, *output = NULL, *backend = NULL;
    long long max_batch = 8, threads = 0, n_ctx = 0, keep = 0, budget = 256;
    int cache_type = GL_CACHE_F16;
    for (int i = 0; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: genloop batch -m MODEL --input prompts.jsonl [--output out.jsonl] "
                   "[--max-batch B] [--max-batch-tokens N] [-t THREADS] [-c CTX] [--keep N] "
                   "[--cache-type f16|q8_0|f32] [--backend NAME]\n");
            return 0;
        }
        if (!v) {
            cli_error("batch: option '%s' needs a value", a);
            return EXIT_USAGE;
        }
        bool ok = true;
        if (!strcmp(a, "-m"))
            model = v;
        else if (!strcmp(a, "--input"))
            input = v;
        else if (!strcmp(a, "--output"))
            output = v;
        else if (!strcmp(a, "--backend"))
            backend = v;
        else if (!strcmp(a, "--cache-type")) {
            cache_type = gl_cache_type_from_name(v);
            if (cache_type < 0) {
                cli_error("batch: --cache-type expects f16, q8_0 or f32, got '%s'", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--max-batch"))
            ok = cli_int(a, v, 1, 4096, &max_batch);
        else if (!strcmp(a, "--max-batch-tokens"))
            ok = cli_int(a, v, 1, 65536, &budget);
        else if (!strcmp(a, "-t"))
            ok = cli_int(a, v, 1, 1024, &threads);
        else if (!strcmp(a, "-c"))
            ok = cli_int(a, v, 1, 1 << 24, &n_ctx);
        else if (!strcmp(a, "--keep"))
            ok = cli_int(a, v, 0, 1 << 24, &keep);
        else {
            cli_error("batch: unknown option '%s'", a);
            return EXIT_USAGE;
        }
        if (!ok)
            return EXIT_USAGE;
    }
    if (!model || !input) {
        cli_error("batch: missing %s", !model ? "-m MODEL" : "--input FILE");
        return EXIT_USAGE;
    }
    if (n_ctx && keep >= n_ctx) {
        cli_error("batch: --keep must be smaller than -c");
        return EXIT_USAGE;
    }
    gl_error err;
    if (backend && gl_backend_check(backend, &err)) {
        cli_error("%s", err.msg);
        return err.code == GL_ERR_ARG ? EXIT_USAGE : EXIT_RUNTIME;
    }

    FILE *in = strcmp(input, "-") ? fopen(input, "rb") : stdin;
    if (!in) {
        cli_error("cannot open '%s'", input);
        return EXIT_RUNTIME;
    }
    size_t len;
    char *text = read_all(in, &len);
    if (in != stdin)
        fclose(in);
    if (!text) {
        cli_error("cannot read '%s'", input);
        return EXIT_RUNTIME;
    }

    int rc = 0, n_jobs = 0, cap = 0;
    job *jobs = NULL;
    gl_model *m = NULL;
    gl_engine *e = NULL;
    FILE *out = stdout;
    double *lat = NULL;

    /* parse every line first: a bad line fails the run before any work */
    int line = 0;
    for (char *s = text; s < text + len;) {
        char *nl = memchr(s, '\n', (size_t)(text + len - s));
        size_t ll = nl ? (size_t)(nl - s) : (size_t)(text + len - s);
        line++;
        const char *p = s;
        s += ll + 1;
        while (ll && (p[ll - 1] == '\r' || p[ll - 1] == ' '))
            ll--;
        size_t k = 0;
        while (k < ll && (p[k] == ' ' || p[k] == '\t'))
            k++;
        if (k == ll)
            continue; /* blank line */
        if (n_jobs == cap) {
            cap = cap ? cap * 2 : 16;
            job *nj = realloc(jobs, sizeof *nj * (size_t)cap);
            if (!nj) {
                cli_error("out of memory");
                rc = EXIT_RUNTIME;
                goto done;
            }
            jobs = nj;
        }
        job *j = &jobs[n_jobs];
        memset(j, 0, sizeof *j);
        char msg[128];
        if (!json_parse_object(p, ll, &j->obj, msg, sizeof msg)) {
            cli_error("%s:%d: %s", input, line, msg);
            rc = EXIT_RUNTIME;
            goto done;
        }
        n_jobs++;
        const json_value *pr = json_get(&j->obj, "prompt"), *id = json_get(&j->obj, "id");
        if (!pr || pr->type != JV_STR) {
            cli_error("%s:%d: \"prompt\" (a string) is required", input, line);
            rc = EXIT_RUNTIME;
            goto done;
        }
        if (id && id->raw_len < sizeof j->id_raw)
            snprintf(j->id_raw, sizeof j->id_raw, "%.*s", (int)id->raw_len, id->raw);
        else
            snprintf(j->id_raw, sizeof j->id_raw, "%d", line);
    }

    gl_model_params mp = gl_model_default_params();
    mp.backend = backend;
    if (gl_model_load(&m, model, &mp, &err)) {
        cli_error("%s", err.msg);
        rc = EXIT_RUNTIME;
        goto done;
    }
    cli_model_warnings(m);
    gl_engine_params ep = gl_engine_default_params();
    ep.max_seqs = (int)max_batch;
    ep.n_ctx = (int)n_ctx;
    ep.n_keep = (int)keep;
    ep.n_threads = (int)threads;
    ep.max_batch_tokens = (int)budget;
    ep.cache_type = cache_type;
    if (gl_engine_create(&e, m, &ep, &err)) {
        cli_error("%s", err.msg);
        rc = err.code == GL_ERR_ARG ? EXIT_USAGE : EXIT_RUNTIME;
        goto done;
    }
    if (output && !(out = fopen(output, "wb"))) {
        out = stdout;
        cli_error("cannot open '%s' for writing", output);
        rc = EXIT_RUNTIME;
        goto done;
    }

    const double t_start = now_ms();
    const uint64_t base_seed = (uint64_t)time(NULL);
    line = 0;
    for (int i = 0; i < n_jobs; i++) {
        job *j = &jobs[i];
        const json_object *o = &j->obj;
        gl_request rq = gl_request_default();
        const json_value *pr = json_get(o, "prompt"), *st = json_get(o, "stop");
        rq.prompt = pr->str;
        rq.prompt_len = pr->str_len;
        double n = 256, temp = 0.8, top_k = 40, top_p = 0.95, min_p = 0.05, rp = 1.0;
        double seed = -1;
        if (!num_field(o, "n", -1, 1e9, &n, input, i + 1) ||
            !num_field(o, "temp", 0, 1000, &temp, input, i + 1) ||
            !num_field(o, "top_k", 0, 1 << 30, &top_k, input, i + 1) ||
            !num_field(o, "top_p", 1e-9, 1, &top_p, input, i + 1) ||
            !num_field(o, "min_p", 0, 1, &min_p, input, i + 1) ||
            !num_field(o, "repeat_penalty", 1e-6, 1000, &rp, input, i + 1) ||
            !num_field(o, "seed", 0, 1.8e19, &seed, input, i + 1)) {
            rc = EXIT_RUNTIME;
            goto done;
        }
        rq.n_predict = (int)n;
        rq.sampling.temp = (float)temp;
        rq.sampling.top_k = (int)top_k;
        rq.sampling.top_p = (float)top_p;
        rq.sampling.min_p = (float)min_p;
        rq.sampling.repeat_penalty = (float)rp;
        j->seed = seed >= 0 ? (uint64_t)seed : base_seed + (uint64_t)i;
        rq.sampling.seed = j->seed;
        if (st && st->type == JV_STR) {
            rq.stops = (const char *const *)&st->str;
            rq.n_stops = 1;
        } else if (st && st->type == JV_STR_ARRAY) {
            rq.stops = (const char *const *)st->arr;
            rq.n_stops = st->n_arr;
        } else if (st && st->type != JV_NULL) {
            cli_error("%s: request %s: \"stop\" must be a string or an array of strings", input,
                      j->id_raw);
            rc = EXIT_RUNTIME;
            goto done;
        }
        if (gl_engine_submit(e, &rq, &j->eid, &err)) {
            cli_error("%s: request %s: %s", input, j->id_raw, err.msg);
            rc = EXIT_RUNTIME;
            goto done;
        }
    }

    lat = malloc(sizeof *lat * (n_jobs > 0 ? (size_t)n_jobs : 1));
    int n_done = 0;
    while (n_done < n_jobs) {
        if (gl_engine_step(e, &err)) {
            cli_error("%s", err.msg);
            rc = EXIT_RUNTIME;
            goto done;
        }
        for (int i = 0; i < n_jobs; i++) {
            gl_request_status st;
            if (jobs[i].done || gl_engine_status(e, jobs[i].eid, &st, NULL) || !st.finished)
                continue;
            write_result(out, &jobs[i], &st);
            lat[n_done++] = st.latency_ms;
            jobs[i].done = true;
            gl_engine_release(e, jobs[i].eid);
        }
    }
    const double wall = now_ms() - t_start;
    gl_engine_stats es;
    gl_engine_get_stats(e, &es);
    qsort(lat, (size_t)n_done, sizeof *lat, cmp_double);
    fprintf(stderr,
            "genloop batch: %d requests in %.2f s | prefill %llu tok %.1f tok/s | decode %llu tok "
            "%.1f tok/s | latency p50 %.1f ms p99 %.1f ms | max batch %lld\n",
            n_jobs, wall / 1e3, (unsigned long long)es.prefill_tokens,
            es.prefill_ms > 0 ? es.prefill_tokens / (es.prefill_ms / 1e3) : 0,
            (unsigned long long)es.decode_tokens,
            es.decode_ms > 0 ? es.decode_tokens / (es.decode_ms / 1e3) : 0,
            n_done ? lat[(int)(0.50 * (n_done - 1) + 0.5)] : 0,
            n_done ? lat[(int)(0.99 * (n_done - 1) + 0.5)] : 0, max_batch);
done:
    if (out != stdout && fclose(out) != 0 && rc == 0) {
        cli_error("writing '%s' failed", output);
        rc = EXIT_RUNTIME;
    }
    for (int i = 0; i < n_jobs; i++)
        json_object_free(&jobs[i].obj);
    free(jobs);
    free(lat);
    free(text);
    gl_engine_free(e);
    gl_model_free(m);
    return rc;
}
