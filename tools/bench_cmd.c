/* genloop bench: prefill and decode speed of a model, with the machine's
 * memory read bandwidth measured in the same run, so decode speed is
 * reported against its roofline: tok/s <= bandwidth / weight bytes per token,
 * and against a second one that adds the KV cache a step reads.
 *
 * -p, -n, -t and --batch take comma-separated lists and -m repeats: every
 * combination is one configuration, measured after an uncounted warm-up
 * pass, -r times (mean and standard deviation over the repetitions). The
 * bandwidth probe runs with the largest thread count before and after the
 * measurements, and the better of the two is the roofline: a neighbour on a
 * shared machine that steals bandwidth during one probe would otherwise
 * lower the roofline and flatter the ratio. --batch B decodes B sequences together (one token each
 * per step, every weight read once per step), so its tok/s are aggregate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "bench/bwprobe.h"
#include "cli.h"
#include "context.h"
#include "error.h"
#include "genloop.h"
#include "latency_plot.h"

#define MAX_LIST    32
#define MAX_MODELS  16
#define MAX_CONFIGS 4096

enum { OUT_LEGACY, OUT_MD, OUT_CSV, OUT_JSON, OUT_JSONL };

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

/* The same probe in a child process, so its buffer never counts in this
 * process's peak RSS (the before-the-runs probe); 0 if it cannot run. */
static double bench_memory_bandwidth_child(int n_threads, size_t bytes, int reps)
{
    int fd[2];
    if (pipe(fd))
        return 0;
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        const double bw = bench_memory_bandwidth(n_threads, bytes, reps);
        _exit(write(fd[1], &bw, sizeof bw) == (ssize_t)sizeof bw ? 0 : 1);
    }
    close(fd[1]);
    double bw = 0;
    if (pid < 0 || read(fd[0], &bw, sizeof bw) != (ssize_t)sizeof bw)
        bw = 0;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return bw;
}

/* The CPU's marketing name: /proc/cpuinfo's "model name" (x86, some Arm
 * kernels), else the CPUID brand string, else "unknown". */
static void cpu_name(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) && strncmp(line, "Hardware", 8))
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            continue;
        for (v++; *v == ' ' || *v == '\t';)
            v++;
        snprintf(out, cap, "%s", v);
        out[strcspn(out, "\r\n")] = '\0';
        fclose(f);
        return;
    }
    if (f)
        fclose(f);
#if defined(__x86_64__) || defined(__i386__)
    unsigned int r[12];
    if (__get_cpuid(0x80000000u, &r[0], &r[1], &r[2], &r[3]) && r[0] >= 0x80000004u) {
        for (unsigned int i = 0; i < 3; i++)
            __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
        char brand[49];
        memcpy(brand, r, 48);
        brand[48] = '\0';
        const char *b = brand;
        while (*b == ' ')
            b++;
        if (*b)
            snprintf(out, cap, "%s", b);
    }
#endif
}

/* The weight type holding most bytes, and the runner-up when there is one
 * besides F32 (norms): "Q4_K+Q6_K". */
static void model_type(const gl_model_info *info, char *out, size_t cap)
{
    int best = -1, second = -1;
    for (int t = 0; t < 32; t++) {
        if (!info->type_bytes[t])
            continue;
        if (best < 0 || info->type_bytes[t] > info->type_bytes[best]) {
            second = best;
            best = t;
        } else if (second < 0 || info->type_bytes[t] > info->type_bytes[second]) {
            second = t;
        }
    }
    if (best < 0)
        snprintf(out, cap, "none");
    else if (second >= 0 && second != 0 && best != 0)
        snprintf(out, cap, "%s+%s", gl_type_name(best), gl_type_name(second));
    else
        snprintf(out, cap, "%s", gl_type_name(best));
}

typedef struct int_list {
    long long v[MAX_LIST];
    int n;
} int_list;

static bool parse_list(const char *flag, const char *s, long long lo, long long hi, int_list *out)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    out->n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (out->n == MAX_LIST) {
            cli_error("%s takes at most %d values", flag, MAX_LIST);
            return false;
        }
        if (!cli_int(flag, tok, lo, hi, &out->v[out->n]))
            return false;
        out->n++;
    }
    if (!out->n || s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,")) {
        cli_error("%s expects a comma-separated list of numbers, got '%s'", flag, s);
        return false;
    }
    return true;
}

/* --breakdown: one kind of product (gl_trace_kind), per decode step: its
 * regions and ms, the GB/s of weights over all of them, and the 10th, 50th
 * and 90th percentiles of its regions' own GB/s (a median near the probe
 * with a low mean: the machine's stalls; a low median: the kernel's) */
typedef struct bench_kind {
    char name[128];
    double regions, ms, gbs, gbs_p10, gbs_p50, gbs_p90;
} bench_kind;

typedef struct bench_row {
    const char *model;
    char model_name[128], model_type[32], label[192];
    const char *backend, *cpu, *tune;
    uint64_t model_bytes;
    int threads, n_prompt, n_gen, batch, reps;
    double pre_mean, pre_std, dec_mean, dec_std, ttft_ms, load_ms, load_first_ms;
    double p50, p90, p99, rss, wbt, bw, roof_tok_s, roof_pct;
    double bw_before, bw_after; /* the probes at the row's threads; bw is the higher */
    /* the cached keys and values the decode steps read, all sequences of
     * a step together (averaged over the steps), and the roofline of
     * weights and cache together */
    double kvbt, roof_kv_tok_s, roof_kv_pct;
    /* --breakdown, per decode step: ms in product regions (and their GB/s),
     * in other regions, outside any (the serial steps; of them, the
     * sampler's), thread-ms idle at region ends, regions */
    bool has_bd;
    double bd_product_ms, bd_product_gbs, bd_other_ms, bd_serial_ms, bd_wait_ms, bd_regions;
    double bd_sample_ms;
    int bd_n_kinds; /* the products by kind, most time first */
    bench_kind bd_kinds[GL_TRACE_KINDS];
    double *series; /* per-token decode latency of the last repetition */
} bench_row;

static void mean_std(const double *v, int n, double *mean, double *std)
{
    double s = 0, s2 = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = n ? s / n : 0;
    for (int i = 0; i < n; i++)
        s2 += (v[i] - *mean) * (v[i] - *mean);
    *std = n > 1 ? sqrt(s2 / (n - 1)) : 0;
}

/* The buffers of one configuration. */
typedef struct bench_run {
    gl_ctx *c;
    gl_region_trace *trace; /* --breakdown: the decode steps' regions, summed */
    int V, p, n, batch;
    int32_t *prompt_rows, *tok; /* [batch * p], [batch] */
    int *seq_rows, *out_rows;   /* [batch * p], [max(batch, n_batch)] */
    float *logits;              /* [batch][V] */
    /* the next tokens: the library's greedy sampler, as `run --temp 0`
     * picks them (a plain compare-and-branch loop here took ~100 us of
     * each step over a 151936-token vocabulary) */
    gl_sampler *greedy;
    double sample_s; /* --breakdown: the decode steps' time in the sampler */
} bench_run;

/* One prefill of every sequence's prompt and n decode steps. lat (n entries,
 * may be NULL) gets each step's milliseconds. */
static gl_status one_pass(bench_run *b, int n, double *pre_s, double *dec_s, double *lat,
                          gl_error *err)
{
    gl_ctx_reset(b->c);
    const int rows = b->batch * b->p, nb = b->c->n_batch;
    const double t0 = now_s();
    for (int r0 = 0, out = 0; r0 < rows; r0 += nb) {
        const int cnt = rows - r0 < nb ? rows - r0 : nb;
        int n_out = 0;
        for (int i = 0; i < cnt; i++)
            if ((r0 + i) % b->p == b->p - 1)
                b->out_rows[n_out++] = i;
        gl_batch bt = { .tokens = b->prompt_rows + r0,
                        .seq = b->seq_rows + r0,
                        .n = cnt,
                        .out_rows = b->out_rows,
                        .n_out = n_out,
                        .logits = b->logits + (size_t)out * (size_t)b->V };
        gl_status st = gl_ctx_forward(b->c, &bt, err);
        if (st)
            return st;
        out += n_out;
    }
    for (int s = 0; s < b->batch; s++)
        b->tok[s] = gl_sampler_sample(b->greedy, b->logits + (size_t)s * (size_t)b->V, NULL, 0);
    const double t1 = now_s();
    for (int s = 0; s < b->batch; s++)
        b->out_rows[s] = s;
    gl_threadpool_set_trace(b->c->pool, lat ? b->trace : NULL);
    for (int i = 0; i < n; i++) {
        const double ts = now_s();
        /* one token per sequence: row s is sequence s, and out_rows
         * holds 0..batch-1, so it serves as the sequence table too */
        gl_batch bt = { .tokens = b->tok,
                        .seq = b->out_rows,
                        .n = b->batch,
                        .out_rows = b->out_rows,
                        .n_out = b->batch,
                        .logits = b->logits };
        gl_status st = gl_ctx_forward(b->c, &bt, err);
        if (st) {
            gl_threadpool_set_trace(b->c->pool, NULL);
            return st;
        }
        const double t_sample = now_s();
        for (int s = 0; s < b->batch; s++)
            b->tok[s] = gl_sampler_sample(b->greedy, b->logits + (size_t)s * (size_t)b->V, NULL, 0);
        if (lat && b->trace)
            b->sample_s += now_s() - t_sample;
        if (lat)
            lat[i] = (now_s() - ts) * 1e3;
    }
    gl_threadpool_set_trace(b->c->pool, NULL);
    *pre_s = t1 - t0;
    *dec_s = now_s() - t1;
    return GL_OK;
}

static void free_run(bench_run *b)
{
    gl_ctx_free(b->c);
    gl_sampler_free(b->greedy);
    free(b->prompt_rows);
    free(b->tok);
    free(b->seq_rows);
    free(b->out_rows);
    free(b->logits);
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int cmp_kind_ms(const void *a, const void *b)
{
    const double x = ((const bench_kind *)a)->ms, y = ((const bench_kind *)b)->ms;
    return (x < y) - (x > y);
}

/* "Q4_K 2048x2048 + Q4_K 2048x256 + Q6_K 2048x256": each product's type
 * and its n_in x rows, as bench/matvec names shapes */
static void kind_name(const gl_trace_kind *k, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (int j = 0; j < 3 && k->type[j] >= 0 && len < cap; j++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s %dx%d", j ? " + " : "",
                                gl_type_name(k->type[j]), (int)k->n_in, (int)k->rows[j]);
}

/* The trace's kinds into row, per decode step, most time first. */
static gl_status kinds_of(const gl_region_trace *t, double steps, bench_row *row, gl_error *err)
{
    float *s = malloc(sizeof(float) * GL_TRACE_KIND_SAMPLES);
    if (!s)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    row->bd_n_kinds = t->n_kinds;
    for (int i = 0; i < t->n_kinds; i++) {
        const gl_trace_kind_stats *k = &t->kinds[i];
        bench_kind *o = &row->bd_kinds[i];
        kind_name(&k->kind, o->name, sizeof o->name);
        o->regions = (double)k->regions / steps;
        o->ms = (double)k->ns * 1e-6 / steps;
        o->gbs = k->ns ? (double)k->bytes / (double)k->ns : 0;
        const int n = (int)k->n_samples;
        memcpy(s, k->gbs, (size_t)n * sizeof *s);
        qsort(s, (size_t)n, sizeof *s, cmp_float);
        o->gbs_p10 = n ? s[(int)(0.1 * (n - 1) + 0.5)] : 0;
        o->gbs_p50 = n ? s[(int)(0.5 * (n - 1) + 0.5)] : 0;
        o->gbs_p90 = n ? s[(int)(0.9 * (n - 1) + 0.5)] : 0;
    }
    qsort(row->bd_kinds, (size_t)row->bd_n_kinds, sizeof *row->bd_kinds, cmp_kind_ms);
    free(s);
    return GL_OK;
}

/* Measures one configuration into row (model fields already set). */
static gl_status run_config(gl_model *m, const gl_model_info *info, int cache_type, bool breakdown,
                            bench_row *row, gl_error *err)
{
    const double t_ctx = now_s();
    bench_run b = { .V = info->n_vocab, .p = row->n_prompt, .n = row->n_gen, .batch = row->batch };
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = b.p + b.n + 1;
    cp.n_threads = row->threads;
    cp.n_seq = b.batch;
    cp.n_batch = b.batch > 512 ? b.batch : 512;
    cp.cache_type = cache_type;
    gl_status st = gl_ctx_create(&b.c, m, &cp, err);
    if (st)
        return st;
    row->threads = gl_ctx_n_threads(b.c);
    /* step i feeds position p + i of every sequence */
    for (int i = 0; i < b.n; i++)
        row->kvbt += (double)b.batch * gl_kv_step_bytes(b.c, (int64_t)b.p + i) / b.n;
    gl_sampler_params sp = gl_sampler_default_params();
    sp.temp = 0.0f;
    if ((st = gl_sampler_create(&b.greedy, b.V, &sp, err))) {
        free_run(&b);
        return st;
    }
    const size_t rows = (size_t)b.batch * (size_t)b.p;
    const int reps = row->reps;
    b.prompt_rows = malloc(rows * sizeof *b.prompt_rows);
    b.seq_rows = malloc(rows * sizeof *b.seq_rows);
    b.tok = malloc((size_t)b.batch * sizeof *b.tok);
    b.out_rows = malloc((size_t)cp.n_batch * sizeof *b.out_rows);
    b.logits = malloc((size_t)b.batch * (size_t)b.V * sizeof *b.logits);
    double *lat = malloc((size_t)reps * (size_t)b.n * sizeof *lat);
    if (breakdown && (b.trace = aligned_alloc(64, sizeof *b.trace)))
        memset(b.trace, 0, sizeof *b.trace);
    double *pre = malloc((size_t)reps * sizeof *pre), *dec = malloc((size_t)reps * sizeof *dec);
    row->series = malloc((size_t)b.n * sizeof *row->series);
    if (!b.prompt_rows || !b.seq_rows || !b.tok || !b.out_rows || !b.logits || !lat || !pre ||
        !dec || !row->series || (breakdown && !b.trace)) {
        st = gl_fail(err, GL_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* a fixed, vocabulary-spread prompt: same work on every run */
    const int V = b.V;
    for (size_t r = 0; r < rows; r++) {
        const int i = (int)(r % (size_t)b.p);
        b.prompt_rows[r] =
            (int32_t)(i == 0 && info->bos_id >= 0 ? info->bos_id
                                                  : 3 + (i * 7919) % (V > 3 ? V - 3 : 1));
        b.seq_rows[r] = (int)(r / (size_t)b.p);
    }
    /* warm-up, not counted: caches, page faults, thread wake-ups */
    double ps, ds;
    if ((st = one_pass(&b, b.n < 4 ? b.n : 4, &ps, &ds, NULL, err)))
        goto done;
    row->load_first_ms = row->load_ms + (now_s() - t_ctx - ds) * 1e3;
    double ttft = 0, dec_s = 0;
    for (int r = 0; r < reps; r++) {
        if ((st = one_pass(&b, b.n, &ps, &ds, lat + (size_t)r * (size_t)b.n, err)))
            goto done;
        pre[r] = (double)rows / ps;
        dec[r] = (double)b.batch * b.n / ds;
        ttft = r == 0 || ps * 1e3 < ttft ? ps * 1e3 : ttft;
        dec_s += ds;
    }
    if (b.trace) { /* sums over every repetition's decode steps, per step */
        const gl_region_trace *t = b.trace;
        const double steps = (double)reps * b.n;
        row->has_bd = true;
        row->bd_product_ms = (double)t->product_ns * 1e-6 / steps;
        row->bd_product_gbs = t->product_ns ? (double)t->product_bytes / (double)t->product_ns : 0;
        row->bd_other_ms = (double)t->other_ns * 1e-6 / steps;
        row->bd_serial_ms = dec_s * 1e3 / steps - row->bd_product_ms - row->bd_other_ms;
        row->bd_wait_ms = (double)t->wait_ns * 1e-6 / steps;
        row->bd_regions = (double)t->regions / steps;
        row->bd_sample_ms = b.sample_s * 1e3 / steps;
        if ((st = kinds_of(t, steps, row, err)))
            goto done;
    }
    memcpy(row->series, lat + (size_t)(reps - 1) * (size_t)b.n, (size_t)b.n * sizeof *lat);
    mean_std(pre, reps, &row->pre_mean, &row->pre_std);
    mean_std(dec, reps, &row->dec_mean, &row->dec_std);
    double p[3];
    if (lp_percentiles(lat, reps * b.n, p)) {
        st = gl_fail(err, GL_ERR_NOMEM, "out of memory");
        goto done;
    }
    row->p50 = p[0];
    row->p90 = p[1];
    row->p99 = p[2];
    row->ttft_ms = ttft;
    /* peak RSS so far (a high-water mark of the whole sweep), read before
     * the probe's buffer counts */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    row->rss = (double)ru.ru_maxrss * 1024.0;
done:
    free(lat);
    free(pre);
    free(dec);
    free(b.trace);
    free_run(&b);
    return st;
}

/* The probes before and after the runs bracket them: on a quiet machine
 * they agree to within ~15 % (a 2-vCPU VM, 2026-12-07: 3-15 %), while
 * another tenant's memory traffic during the runs moved them by up to
 * 40 % (75.8 -> 45.6 GB/s), and then the decode rows were measured under
 * a bandwidth neither probe saw: the warning keeps such a ratio from
 * being read as the code's. */
enum { PROBE_SPREAD_WARN_PCT = 20 };

static void warn_probe_spread(double before, double after, int threads)
{
    const double hi = before > after ? before : after, lo = before > after ? after : before;
    const double spread = hi > 0 ? 100.0 * (hi - lo) / hi : 0;
    if (spread > PROBE_SPREAD_WARN_PCT)
        fprintf(stderr,
                "genloop: bench: warning: the %d-thread probes before and after the runs differ "
                "by %.0f %% (%.2f vs %.2f GB/s): the machine's bandwidth changed while it ran "
                "(another load?), so the roofline figures at %d thread%s are uncertain; rerun on "
                "a quiet machine\n",
                threads, spread, before, after, threads, threads == 1 ? "" : "s");
}

/* ---- output -------------------------------------------------------------- */

static void json_row(const bench_row *r, bool series)
{
    printf("{\"model\": ");
    json_write_str(stdout, r->model, strlen(r->model));
    printf(", \"model_name\": ");
    json_write_str(stdout, r->model_name, strlen(r->model_name));
    printf(", \"cpu\": ");
    json_write_str(stdout, r->cpu, strlen(r->cpu));
    printf(", \"tune\": ");
    json_write_str(stdout, r->tune, strlen(r->tune));
    printf(", \"model_type\": \"%s\", \"model_bytes\": %llu, \"backend\": \"%s\", "
           "\"threads\": %d, \"batch\": %d, \"n_prompt\": %d, \"n_gen\": %d, \"reps\": %d, "
           "\"prefill_tok_s\": %.2f, \"prefill_tok_s_std\": %.2f, \"decode_tok_s\": %.2f, "
           "\"decode_tok_s_std\": %.2f, "
           "\"latency_ms\": {\"p50\": %.4f, \"p90\": %.4f, \"p99\": %.4f}, "
           "\"ttft_ms\": %.3f, \"load_ms\": %.3f, \"load_to_first_token_ms\": %.3f, "
           "\"peak_rss_bytes\": %.0f, \"bandwidth_gbs\": %.3f, \"bandwidth_before_gbs\": %.3f, "
           "\"bandwidth_after_gbs\": %.3f, \"weight_bytes_per_token\": %.0f, "
           "\"roofline_tok_s\": %.2f, \"roofline_pct\": %.2f, \"kv_bytes_per_step\": %.0f, "
           "\"roofline_kv_tok_s\": %.2f, \"roofline_kv_pct\": %.2f",
           r->model_type, (unsigned long long)r->model_bytes, r->backend, r->threads, r->batch,
           r->n_prompt, r->n_gen, r->reps, r->pre_mean, r->pre_std, r->dec_mean, r->dec_std, r->p50,
           r->p90, r->p99, r->ttft_ms, r->load_ms, r->load_first_ms, r->rss, r->bw, r->bw_before,
           r->bw_after, r->wbt, r->roof_tok_s, r->roof_pct, r->kvbt, r->roof_kv_tok_s,
           r->roof_kv_pct);
    if (r->has_bd)
        printf(", \"breakdown\": {\"product_ms\": %.4f, \"product_gbs\": %.3f, \"other_ms\": %.4f, "
               "\"serial_ms\": %.4f, \"sample_ms\": %.4f, \"wait_thread_ms\": %.4f, "
               "\"regions\": %.1f",
               r->bd_product_ms, r->bd_product_gbs, r->bd_other_ms, r->bd_serial_ms,
               r->bd_sample_ms, r->bd_wait_ms, r->bd_regions);
    if (r->has_bd) {
        printf(", \"products\": [");
        for (int i = 0; i < r->bd_n_kinds; i++) {
            const bench_kind *k = &r->bd_kinds[i];
            printf("%s{\"kind\": ", i ? ", " : "");
            json_write_str(stdout, k->name, strlen(k->name));
            printf(", \"regions\": %.2f, \"ms\": %.4f, \"gbs\": %.3f, \"gbs_p10\": %.3f, "
                   "\"gbs_p50\": %.3f, \"gbs_p90\": %.3f}",
                   k->regions, k->ms, k->gbs, k->gbs_p10, k->gbs_p50, k->gbs_p90);
        }
        printf("]}");
    }
    if (series) {
        printf(", \"latency_series_ms\": [");
        for (int i = 0; i < r->n_gen; i++)
            printf("%s%.4f", i ? ", " : "", r->series[i]);
        printf("]");
    }
    printf("}");
}

static void csv_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void print_rows(const bench_row *rows, int n, int fmt)
{
    if (fmt == OUT_JSON || fmt == OUT_JSONL) {
        if (fmt == OUT_JSON)
            printf("[\n");
        for (int i = 0; i < n; i++) {
            json_row(&rows[i], true);
            printf(fmt == OUT_JSON && i + 1 < n ? ",\n" : "\n");
        }
        if (fmt == OUT_JSON)
            printf("]\n");
        return;
    }
    if (fmt == OUT_CSV) {
        printf("model,model_type,model_bytes,cpu,backend,threads,batch,n_prompt,n_gen,reps,"
               "prefill_tok_s,prefill_tok_s_std,decode_tok_s,decode_tok_s_std,latency_p50_ms,"
               "latency_p90_ms,latency_p99_ms,ttft_ms,peak_rss_bytes,bandwidth_gbs,"
               "weight_bytes_per_token,roofline_tok_s,roofline_pct,kv_bytes_per_step,"
               "roofline_kv_tok_s,roofline_kv_pct\n");
        for (int i = 0; i < n; i++) {
            const bench_row *r = &rows[i];
            csv_str(r->model);
            printf(",%s,%llu,", r->model_type, (unsigned long long)r->model_bytes);
            csv_str(r->cpu);
            printf(",%s,%d,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.4f,%.4f,%.4f,%.3f,%.0f,%.3f,%.0f,"
                   "%.2f,%.2f,%.0f,%.2f,%.2f\n",
                   r->backend, r->threads, r->batch, r->n_prompt, r->n_gen, r->reps, r->pre_mean,
                   r->pre_std, r->dec_mean, r->dec_std, r->p50, r->p90, r->p99, r->ttft_ms, r->rss,
                   r->bw, r->wbt, r->roof_tok_s, r->roof_pct, r->kvbt, r->roof_kv_tok_s,
                   r->roof_kv_pct);
        }
        return;
    }
    printf("| model | type | size MiB | cpu | backend | threads | batch | prompt | gen | "
           "prefill tok/s | decode tok/s | p50 ms | p99 ms | roofline %% | with KV %% |\n"
           "|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        const char *base = strrchr(r->model, '/');
        printf("| %s | %s | %.1f | %s | %s | %d | %d | %d | %d | %.1f ± %.1f | %.2f ± %.2f | "
               "%.3f | %.3f | %.1f | %.1f |\n",
               base ? base + 1 : r->model, r->model_type, r->model_bytes / 1048576.0, r->cpu,
               r->backend, r->threads, r->batch, r->n_prompt, r->n_gen, r->pre_mean, r->pre_std,
               r->dec_mean, r->dec_std, r->p50, r->p99, r->roof_pct, r->roof_kv_pct);
    }
    printf("\nmemory read bandwidth");
    for (int i = 0; i < n; i++) { /* each thread count's probe once, in the rows' order */
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= rows[j].threads == rows[i].threads;
        if (!seen)
            printf("%s %.2f GB/s at %d thread%s", i ? "," : "", rows[i].bw, rows[i].threads,
                   rows[i].threads == 1 ? "" : "s");
    }
    printf(" (the better of probes before and after the sweep); roofline %% = decode tok/s / "
           "(batch x bandwidth at the row's threads / weight bytes per token); with KV %%: the "
           "same with the cached keys and values each step reads added to the weights\n");
}

static void print_legacy(const bench_row *r)
{
    const double bw = r->bw;
    printf("model %s (%s, %s, %.1f MiB), backend %s, %d threads, cpu %s, tune %s\n", r->model,
           r->model_name, r->model_type, r->model_bytes / 1048576.0, r->backend, r->threads, r->cpu,
           r->tune);
    printf("prefill  %6d tok: %10.2f ± %.2f tok/s   (time to first token %.2f ms)\n", r->n_prompt,
           r->pre_mean, r->pre_std, r->ttft_ms);
    printf("decode   %6d tok: %10.2f ± %.2f tok/s   latency p50 %.3f p90 %.3f p99 %.3f ms\n",
           r->n_gen, r->dec_mean, r->dec_std, r->p50, r->p90, r->p99);
    printf("memory read bandwidth %.2f GB/s, weights %.1f MB/token -> roofline %.2f tok/s; "
           "decode at %.1f%% of roofline\n",
           bw, r->wbt / 1e6, r->roof_tok_s, r->roof_pct);
    printf("with the KV cache a step reads (%.1f MB at positions %d-%d): roofline %.2f tok/s; "
           "decode at %.1f%% of it\n",
           r->kvbt / 1e6, r->n_prompt, r->n_prompt + r->n_gen - 1, r->roof_kv_tok_s,
           r->roof_kv_pct);
    printf("peak RSS %.1f MB; load %.1f ms; load + first token %.1f ms\n", r->rss / 1e6, r->load_ms,
           r->load_first_ms);
    if (r->has_bd)
        printf("per decode step: products %.3f ms (%.1f GB/s of weights), other regions %.3f ms, "
               "serial %.3f ms (sampling %.3f); threads idle at region ends %.3f thread-ms; "
               "%.0f regions\n",
               r->bd_product_ms, r->bd_product_gbs, r->bd_other_ms, r->bd_serial_ms,
               r->bd_sample_ms, r->bd_wait_ms, r->bd_regions);
    if (r->has_bd && r->bd_n_kinds)
        printf("products by kind, per decode step (regions, ms, GB/s of weights; each region's "
               "GB/s p10 / median / p90):\n");
    for (int i = 0; r->has_bd && i < r->bd_n_kinds; i++) {
        const bench_kind *k = &r->bd_kinds[i];
        printf("  %-44s %5.1f %8.3f ms %6.1f GB/s  %5.1f / %5.1f / %5.1f\n", k->name, k->regions,
               k->ms, k->gbs, k->gbs_p10, k->gbs_p50, k->gbs_p90);
    }
}

/* Labels naming what varies across the sweep; with `skip` ('t' or 'p')
 * that parameter is left out (the x axis of a sweep panel). */
static void make_label(const bench_row *r, const bool vary[5], char skip, char *out, size_t cap)
{
    const char *base = strrchr(r->model, '/');
    size_t w = 0;
    out[0] = '\0';
#define ADD(...) w += (size_t)snprintf(out + w, w < cap ? cap - w : 0, __VA_ARGS__)
    if (vary[0])
        ADD("%s ", base ? base + 1 : r->model);
    if (vary[1] && skip != 't')
        ADD("t=%d ", r->threads);
    if (vary[2] && skip != 'p')
        ADD("p=%d ", r->n_prompt);
    if (vary[3])
        ADD("n=%d ", r->n_gen);
    if (vary[4])
        ADD("b=%d ", r->batch);
#undef ADD
    if (w == 0)
        snprintf(out, cap, "%s t=%d", base ? base + 1 : r->model, r->threads);
    else if (w < cap)
        out[w - 1] = '\0';
}

static int write_plot(const char *path, bench_row *rows, int n, int n_models)
{
    bool vary[5] = { n_models > 1, false, false, false, false };
    for (int i = 1; i < n; i++) {
        vary[1] |= rows[i].threads != rows[0].threads;
        vary[2] |= rows[i].n_prompt != rows[0].n_prompt;
        vary[3] |= rows[i].n_gen != rows[0].n_gen;
        vary[4] |= rows[i].batch != rows[0].batch;
    }
    lp_series *s = calloc((size_t)n, sizeof *s);
    lp_point *pt = calloc((size_t)n, sizeof *pt), *pd = calloc((size_t)n, sizeof *pd);
    char(*gt)[192] = calloc((size_t)n, sizeof *gt), (*gd)[192] = calloc((size_t)n, sizeof *gd);
    int rc = -1;
    if (s && pt && pd && gt && gd) {
        for (int i = 0; i < n; i++) {
            make_label(&rows[i], vary, 0, rows[i].label, sizeof rows[i].label);
            make_label(&rows[i], vary, 't', gt[i], sizeof gt[i]);
            make_label(&rows[i], vary, 'p', gd[i], sizeof gd[i]);
            s[i] = (lp_series){ rows[i].label, rows[i].series, rows[i].n_gen,
                                rows[i].p50,   rows[i].p90,    rows[i].p99 };
            pt[i] = (lp_point){ gt[i], rows[i].threads, rows[i].dec_mean };
            pd[i] = (lp_point){ gd[i], rows[i].n_prompt, rows[i].dec_mean };
        }
        char title[512];
        snprintf(title, sizeof title, "genloop bench on %s (%s)", rows[0].cpu, rows[0].backend);
        rc = latency_plot_write(path, title, s, n, pt, n, pd, n);
    }
    free(s);
    free(pt);
    free(pd);
    free(gt);
    free(gd);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    const char *models[MAX_MODELS], *backend = NULL, *plot = NULL;
    int n_models = 0;
    int_list lp = { { 128 }, 1 }, ln = { { 64 }, 1 }, lt = { { 0 }, 1 }, lb = { { 1 }, 1 };
    long long reps = 3, bw_mib = 1024;
    int fmt = OUT_LEGACY;
    bool fmt_given = false;
    int cache_type = GL_CACHE_F16;
    bool breakdown = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            fmt = OUT_JSONL;
            fmt_given = true;
            continue;
        }
        if (!strcmp(a, "--breakdown")) {
            breakdown = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: genloop bench -m MODEL [-m MODEL2 ...] [-p 128[,512...]] [-n 64[,...]]\n"
                   "                     [-t N[,...]] [--batch B[,...]] [-r REPS] "
                   "[-o md|csv|json|jsonl] [--json]\n"
                   "                     [--plot FILE.svg] [--bw-mib 1024] "
                   "[--cache-type f16|q8_0|f32] [--backend NAME]\n"
                   "                     [--breakdown]\n"
                   "Lists sweep every combination (one row each, mean ± stddev over -r "
                   "repetitions after a warm-up);\n--json is -o jsonl (one object per "
                   "configuration); --batch B decodes B sequences at once; --breakdown splits a\n"
                   "decode step into matrix products (and their GB/s), other parallel regions,\n"
                   "serial steps (the sampler's share named) and the threads' waits at region\n"
                   "ends, then lists the products by kind (types and n_in x rows; time and\n"
                   "GB/s, each region's GB/s percentiles). Decode is reported against the\n"
                   "roofline bandwidth / weight bytes per token, and (\"with KV\") bandwidth\n"
                   "/ (weights + KV cache bytes a step reads),\n"
                   "the bandwidth probed before and after the runs (the higher counts; a warning\n"
                   "when the two differ by more than 20 %%).\n");
            return 0;
        }
        if (!v) {
            cli_error("bench: option '%s' needs a value", a);
            return EXIT_USAGE;
        }
        bool ok = true;
        if (!strcmp(a, "-m")) {
            if (n_models == MAX_MODELS) {
                cli_error("bench: at most %d models (-m)", MAX_MODELS);
                return EXIT_USAGE;
            }
            models[n_models++] = v;
        } else if (!strcmp(a, "--backend"))
            backend = v;
        else if (!strcmp(a, "--plot"))
            plot = v;
        else if (!strcmp(a, "-o")) {
            fmt_given = true;
            if (!strcmp(v, "md"))
                fmt = OUT_MD;
            else if (!strcmp(v, "csv"))
                fmt = OUT_CSV;
            else if (!strcmp(v, "json"))
                fmt = OUT_JSON;
            else if (!strcmp(v, "jsonl"))
                fmt = OUT_JSONL;
            else {
                cli_error("bench: -o expects md, csv, json or jsonl, got '%s'", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--cache-type")) {
            cache_type = gl_cache_type_from_name(v);
            if (cache_type < 0) {
                cli_error("bench: --cache-type expects f16, q8_0 or f32, got '%s'", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "-p"))
            ok = parse_list(a, v, 1, 1 << 16, &lp);
        else if (!strcmp(a, "-n"))
            ok = parse_list(a, v, 1, 1 << 20, &ln);
        else if (!strcmp(a, "-t"))
            ok = parse_list(a, v, 1, 256, &lt);
        else if (!strcmp(a, "--batch"))
            ok = parse_list(a, v, 1, 256, &lb);
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
    if (!n_models) {
        cli_error("bench: missing -m MODEL");
        return EXIT_USAGE;
    }
    const int n_cfg = n_models * lt.n * lp.n * ln.n * lb.n;
    if (n_cfg > MAX_CONFIGS) {
        cli_error("bench: %d configurations is too many (at most %d)", n_cfg, MAX_CONFIGS);
        return EXIT_USAGE;
    }
    if (n_cfg > 1 && !fmt_given)
        fmt = OUT_MD;
    gl_error err;
    if (backend && gl_backend_check(backend, &err)) {
        cli_error("%s", err.msg);
        return err.code == GL_ERR_ARG ? EXIT_USAGE : EXIT_RUNTIME;
    }
    char cpu[256];
    cpu_name(cpu, sizeof cpu);
    bench_row *rows = calloc((size_t)n_cfg, sizeof *rows);
    if (!rows) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    int n_rows = 0, rc = 0;
    /* Thread counts as the contexts resolve them (-t 0, the default: one per
     * physical core), and a bandwidth probe at each, before and after the
     * runs: a row's roofline is what its own thread count can read (a
     * 2-thread decode against a 1-thread probe read as 146 % of it). */
    double bw_before[MAX_LIST], bw_after[MAX_LIST];
    for (int ti = 0; ti < lt.n; ti++) {
        if (lt.v[ti] == 0)
            lt.v[ti] = gl_physical_cores();
        int same = 0;
        while (lt.v[same] != lt.v[ti])
            same++;
        bw_before[ti] = same < ti
                            ? bw_before[same]
                            : bench_memory_bandwidth_child((int)lt.v[ti], (size_t)bw_mib << 20, 3);
    }
    for (int mi = 0; mi < n_models && !rc; mi++) {
        const double t_load = now_s();
        gl_model *m = NULL;
        gl_model_params mp = gl_model_default_params();
        mp.backend = backend;
        if (gl_model_load(&m, models[mi], &mp, &err)) {
            cli_error("%s", err.msg);
            rc = EXIT_RUNTIME;
            break;
        }
        cli_model_warnings(m);
        const double load_ms = (now_s() - t_load) * 1e3;
        gl_model_info info;
        gl_model_get_info(m, &info);
        for (int ti = 0; ti < lt.n && !rc; ti++)
            for (int pi = 0; pi < lp.n && !rc; pi++)
                for (int ni = 0; ni < ln.n && !rc; ni++)
                    for (int bi = 0; bi < lb.n && !rc; bi++) {
                        bench_row *r = &rows[n_rows];
                        r->model = models[mi];
                        r->cpu = cpu;
                        snprintf(r->model_name, sizeof r->model_name, "%s", info.name);
                        model_type(&info, r->model_type, sizeof r->model_type);
                        r->backend = info.backend;
                        r->tune = gl_tune_default();
                        r->model_bytes = info.file_bytes;
                        r->threads = (int)lt.v[ti];
                        r->n_prompt = (int)lp.v[pi];
                        r->n_gen = (int)ln.v[ni];
                        r->batch = (int)lb.v[bi];
                        r->reps = (int)reps;
                        r->load_ms = load_ms;
                        r->wbt = (double)info.weight_bytes_per_token;
                        if (run_config(m, &info, cache_type, breakdown, r, &err)) {
                            cli_error("%s", err.msg);
                            rc = EXIT_RUNTIME;
                        }
                        n_rows++;
                        if (fmt != OUT_LEGACY && fmt != OUT_JSONL && !rc && n_cfg > 1)
                            fprintf(stderr, "genloop: bench %d/%d done\n", n_rows, n_cfg);
                    }
        /* the backend name outlives the model: it is a static string */
        gl_model_free(m);
    }
    if (!rc) {
        for (int ti = 0; ti < lt.n; ti++) {
            int same = 0;
            while (lt.v[same] != lt.v[ti])
                same++;
            if (same < ti) {
                bw_after[ti] = bw_after[same];
                continue;
            }
            bw_after[ti] = bench_memory_bandwidth((int)lt.v[ti], (size_t)bw_mib << 20, 3);
            fprintf(stderr,
                    "genloop: bench: memory read bandwidth %.2f GB/s before the runs, %.2f after "
                    "(%lld thread%s)\n",
                    bw_before[ti], bw_after[ti], lt.v[ti], lt.v[ti] == 1 ? "" : "s");
            warn_probe_spread(bw_before[ti], bw_after[ti], (int)lt.v[ti]);
        }
        for (int i = 0; i < n_rows; i++) {
            bench_row *r = &rows[i];
            int ti = 0; /* the probe at the row's thread count */
            while (ti + 1 < lt.n && lt.v[ti] != r->threads)
                ti++;
            const double bw = bw_before[ti] > bw_after[ti] ? bw_before[ti] : bw_after[ti];
            r->bw = bw;
            r->bw_before = bw_before[ti];
            r->bw_after = bw_after[ti];
            r->roof_tok_s = bw > 0 ? r->batch * bw * 1e9 / r->wbt : 0;
            r->roof_pct = r->roof_tok_s > 0 ? 100.0 * r->dec_mean / r->roof_tok_s : 0;
            r->roof_kv_tok_s = bw > 0 ? r->batch * bw * 1e9 / (r->wbt + r->kvbt) : 0;
            r->roof_kv_pct = r->roof_kv_tok_s > 0 ? 100.0 * r->dec_mean / r->roof_kv_tok_s : 0;
        }
        if (fmt == OUT_LEGACY)
            print_legacy(&rows[0]);
        else
            print_rows(rows, n_rows, fmt);
        fflush(stdout);
        if (plot && write_plot(plot, rows, n_rows, n_models)) {
            cli_error("cannot write the plot '%s'", plot);
            rc = EXIT_RUNTIME;
        }
    }
    for (int i = 0; i < n_rows; i++)
        free(rows[i].series);
    free(rows);
    return rc;
}
