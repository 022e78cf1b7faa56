/* genloop perplexity: the standard perplexity of a model on a text, and the
 * KL divergence of its predictions from another model's.
 *
 * Method (the reference implementation's perplexity tool): the whole text
 * is tokenized (BOS in front when the vocabulary asks for it) and cut into
 * non-overlapping windows of CTX tokens; the remainder after the last whole
 * window is dropped, and at least two windows are required. Each window is
 * evaluated from an empty cache with its first token replaced by BOS (when
 * the vocabulary uses BOS), and only the second half is scored: the logits
 * at positions CTX/2 .. CTX-2 against the tokens at CTX/2+1 .. CTX-1, so
 * every scored token has at least CTX/2 tokens of context.
 * PPL = exp(mean NLL); its error is PPL x the standard error of the mean of
 * the per-token NLLs (first-order propagation through exp).
 *
 * Several windows go through one forward pass as separate sequences of one
 * context when -b allows (-b / CTX of them); every row of a pass is
 * computed independently of the others and NLLs are summed in text order,
 * so results do not depend on -b or -t. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "context.h"
#include "error.h"
#include "kld_file.h"
#include "text_stream.h"

typedef struct ppl_opts {
    const char *model, *text, *kld_out, *kld_in, *backend;
    long long ctx, batch, threads, chunks, piece;
    bool json, ctx_given;
    int cache_type, kld_type;
} ppl_opts;

static const char ppl_usage[] =
    "usage: genloop perplexity -m MODEL -f TEXT [-c CTX] [-b BATCH] [-t N] [--chunks N] [--json]\n"
    "                          [--kl-divergence-base FILE [--kl-divergence-type f32|f16]]\n"
    "                          [--kl-divergence FILE] [--cache-type f16|q8_0|f32]\n"
    "                          [--backend NAME]\n"
    "\n"
    "  -c CTX    window length in tokens (default 512, or the model's context if smaller);\n"
    "            the second half of each window is scored\n"
    "  -b BATCH  tokens per forward pass (default 2048): BATCH / CTX windows at once\n"
    "  --chunks N                 score at most N windows\n"
    "  --kl-divergence-base FILE  save the log-probabilities of every scored token\n"
    "  --kl-divergence FILE       compare this model against a saved base (same text)\n";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int parse_opts(int argc, char **argv, ppl_opts *o)
{
    *o = (ppl_opts){ .ctx = 512, .batch = 2048, .chunks = -1, .cache_type = GL_CACHE_F16 };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(ppl_usage, stdout);
            exit(0);
        }
        if (!strcmp(a, "--json")) {
            o->json = true;
            continue;
        }
        if (!v) {
            cli_error("perplexity: option '%s' needs a value (see 'genloop perplexity --help')", a);
            return EXIT_USAGE;
        }
        bool ok = true;
        if (!strcmp(a, "-m") || !strcmp(a, "--model"))
            o->model = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file"))
            o->text = v;
        else if (!strcmp(a, "--backend"))
            o->backend = v;
        else if (!strcmp(a, "--kl-divergence-base"))
            o->kld_out = v;
        else if (!strcmp(a, "--kl-divergence"))
            o->kld_in = v;
        else if (!strcmp(a, "--kl-divergence-type")) {
            if (!strcmp(v, "f32"))
                o->kld_type = KLD_ROW_F32;
            else if (!strcmp(v, "f16"))
                o->kld_type = KLD_ROW_F16;
            else {
                cli_error("perplexity: --kl-divergence-type expects f32 or f16, got '%s'", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--cache-type")) {
            o->cache_type = gl_cache_type_from_name(v);
            if (o->cache_type < 0) {
                cli_error("perplexity: --cache-type expects f16, q8_0 or f32, got '%s'", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) {
            ok = cli_int(a, v, 4, 1 << 20, &o->ctx);
            o->ctx_given = true;
        } else if (!strcmp(a, "-b") || !strcmp(a, "--batch-size"))
            ok = cli_int(a, v, 1, 1 << 24, &o->batch);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads"))
            ok = cli_int(a, v, 1, 1024, &o->threads);
        else if (!strcmp(a, "--chunks"))
            ok = cli_int(a, v, 1, 1ll << 40, &o->chunks);
        else if (!strcmp(a, "--piece-bytes")) /* testing aid: small pieces, many cuts */
            ok = cli_int(a, v, 16, TS_MAX_PIECE, &o->piece);
        else {
            cli_error("perplexity: unknown option '%s' (see 'genloop perplexity --help')", a);
            return EXIT_USAGE;
        }
        if (!ok)
            return EXIT_USAGE;
        i++;
    }
    if (!o->model || !o->text) {
        cli_error("perplexity: %s (see 'genloop perplexity --help')",
                  !o->model ? "missing -m MODEL" : "missing -f TEXT");
        return EXIT_USAGE;
    }
    if (o->kld_in && o->kld_out) {
        cli_error("perplexity: --kl-divergence-base and --kl-divergence exclude each other");
        return EXIT_USAGE;
    }
    if (o->backend) {
        gl_error err;
        gl_status st = gl_backend_check(o->backend, &err);
        if (st) {
            cli_error("--backend: %s", err.msg);
            return st == GL_ERR_ARG ? EXIT_USAGE : EXIT_RUNTIME;
        }
    }
    return 0;
}

/* ---- windows of the text ------------------------------------------------- */

/* The next window of n_ctx tokens as evaluated (BOS first when the
 * vocabulary uses one). Returns 1, 0 at the end, -1 with err set. The first
 * call insists on two windows, as the reference does. */
static int next_window(text_stream *ts, const char *path, int n_ctx, uint64_t index, int32_t *dst,
                       gl_error *err)
{
    const size_t want = (size_t)n_ctx * (index == 0 ? 2 : 1);
    const long long got = ts_fill(ts, want, err);
    if (got < 0)
        return -1;
    if (index == 0 && ts->total_bytes == 0) {
        gl_fail(err, GL_ERR_ARG, "'%s' is empty: there is nothing to score", path);
        return -1;
    }
    if (index == 0 && (size_t)got < want) {
        gl_fail(err, GL_ERR_ARG,
                "'%s' has only %lld tokens; perplexity at a context of %d needs at least %zu "
                "(two windows): use a longer text or a smaller -c",
                path, got, n_ctx, want);
        return -1;
    }
    if ((size_t)got < (size_t)n_ctx)
        return 0;
    memcpy(dst, ts_tokens(ts), (size_t)n_ctx * sizeof *dst);
    ts_take(ts, (size_t)n_ctx);
    if (ts->add_bos)
        dst[0] = ts->bos;
    return 1;
}

/* ---- scoring ------------------------------------------------------------- */

/* log-softmax of one logit row in double precision; returns log(sum(exp)).
 * logp may be NULL when only the normaliser is wanted. */
static double log_softmax(const float *x, int n, float *logp)
{
    float mx = x[0];
    for (int i = 1; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += exp((double)x[i] - mx);
    const double lse = mx + log(sum);
    if (logp)
        for (int i = 0; i < n; i++)
            logp[i] = (float)((double)x[i] - lse);
    return lse;
}

static int argmax_f(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

/* Running sums of the comparison with a base file. */
typedef struct kld_acc {
    double sum, sum2, dp_sum, dp_sum2, base_nll, base_nll2;
    uint64_t same_top, n;
    double *vals; /* every token's KLD, for the percentiles */
    size_t cap;
} kld_acc;

static gl_status kld_add(kld_acc *a, const float *lb, const float *ln, int n_vocab, int target,
                         gl_error *err)
{
    double kld = 0;
    for (int i = 0; i < n_vocab; i++)
        kld += exp((double)lb[i]) * ((double)lb[i] - (double)ln[i]);
    const int tb = argmax_f(lb, n_vocab), tn = argmax_f(ln, n_vocab);
    const double dp = exp((double)ln[tb]) - exp((double)lb[tb]);
    if (a->n == a->cap) {
        const size_t nc = a->cap ? a->cap * 2 : 4096;
        double *nv = realloc(a->vals, nc * sizeof *nv);
        if (!nv)
            return gl_fail(err, GL_ERR_NOMEM, "out of memory");
        a->vals = nv;
        a->cap = nc;
    }
    a->vals[a->n++] = kld;
    a->sum += kld;
    a->sum2 += kld * kld;
    a->dp_sum += dp;
    a->dp_sum2 += dp * dp;
    a->same_top += tb == tn;
    a->base_nll += -(double)lb[target];
    a->base_nll2 += (double)lb[target] * lb[target];
    return GL_OK;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean and standard error of the mean from running sums. */
static void mean_err(double sum, double sum2, uint64_t n, double *mean, double *err)
{
    *mean = n ? sum / (double)n : 0;
    const double var = n ? sum2 / (double)n - *mean * *mean : 0;
    *err = n > 1 && var > 0 ? sqrt(var / (double)(n - 1)) : 0;
}

/* ---- the command --------------------------------------------------------- */

typedef struct ppl_run {
    ppl_opts o;
    gl_model *m;
    gl_model_info mi;
    gl_ctx *c;
    int V, n_ctx, first, n_scored, n_seq, pass;
    int32_t *win;  /* [n_seq][n_ctx] windows as evaluated */
    int *seq;      /* [n_seq * n_ctx] sequence of each row */
    int *out_rows; /* per pass */
    float *logits; /* [n_seq][n_scored][V] */
    float *logp, *base;
    kld_file kin, kout;
    bool kin_open, kout_open;
    kld_acc acc;
    double nll, nll2;
    uint64_t count, windows;
} ppl_run;

/* Evaluates nw windows (held in r->win) and adds their scores. */
static gl_status eval_windows(ppl_run *r, int nw, gl_error *err)
{
    const int rows = nw * r->n_ctx;
    for (int s = 0; s < nw; s++)
        gl_ctx_seq_reset(r->c, s);
    for (int r0 = 0, out = 0; r0 < rows; r0 += r->pass) {
        const int n = rows - r0 < r->pass ? rows - r0 : r->pass;
        int n_out = 0;
        for (int i = 0; i < n; i++) {
            const int p = (r0 + i) % r->n_ctx;
            if (p >= r->first && p < r->first + r->n_scored)
                r->out_rows[n_out++] = i;
        }
        gl_batch b = { .tokens = r->win + r0,
                       .seq = r->seq + r0,
                       .n = n,
                       .out_rows = r->out_rows,
                       .n_out = n_out,
                       .logits = r->logits + (size_t)out * (size_t)r->V };
        gl_status st = gl_ctx_forward(r->c, &b, err);
        if (st)
            return st;
        out += n_out;
    }
    for (int s = 0; s < nw; s++) {
        const int32_t *w = r->win + (size_t)s * r->n_ctx;
        for (int j = 0; j < r->n_scored; j++) {
            const float *x = r->logits + ((size_t)s * r->n_scored + j) * (size_t)r->V;
            const int target = w[r->first + j + 1];
            const bool want_rows = r->kout_open || r->kin_open;
            const double lse = log_softmax(x, r->V, want_rows ? r->logp : NULL);
            const double v = lse - x[target];
            r->nll += v;
            r->nll2 += v * v;
            r->count++;
            gl_status st = GL_OK;
            if (r->kout_open)
                st = kld_write_row(&r->kout, r->logp, err);
            if (r->kin_open) {
                for (int i = 0; i < r->V; i++)
                    r->logp[i] = kld_round(r->kin.row_type, r->logp[i]);
                st = kld_read_row(&r->kin, (uint32_t)r->windows, (uint32_t)j, r->base, err);
                if (!st)
                    st = kld_add(&r->acc, r->base, r->logp, r->V, target, err);
            }
            if (st)
                return st;
        }
        r->windows++;
        if (!r->o.json) {
            printf("[%llu]%.4f,", (unsigned long long)r->windows, exp(r->nll / (double)r->count));
            fflush(stdout);
        }
    }
    return GL_OK;
}

/* Pass 1 of a base file: the ids of every window, before any row. */
static gl_status write_base_ids(ppl_run *r, gl_error *err)
{
    text_stream ts;
    gl_status st = ts_open(&ts, r->m, r->o.text, (size_t)r->o.piece, err);
    if (st)
        return st;
    for (uint64_t w = 0; r->o.chunks < 0 || w < (uint64_t)r->o.chunks; w++) {
        const int got = next_window(&ts, r->o.text, r->n_ctx, w, r->win, err);
        if (got < 0) {
            st = err->code;
            break;
        }
        if (!got)
            break;
        if ((st = kld_write_ids(&r->kout, r->win, err)))
            break;
    }
    ts_close(&ts);
    return st ? st : kld_finish_ids(&r->kout, err);
}

static gl_status run_windows(ppl_run *r, gl_error *err)
{
    text_stream ts;
    gl_status st = ts_open(&ts, r->m, r->o.text, (size_t)r->o.piece, err);
    if (st)
        return st;
    uint64_t limit = r->o.chunks < 0 ? UINT64_MAX : (uint64_t)r->o.chunks;
    if (r->kin_open && r->kin.n_windows < limit)
        limit = r->kin.n_windows;
    int32_t *ids = r->kin_open ? malloc((size_t)r->n_ctx * sizeof *ids) : NULL;
    if (r->kin_open && !ids)
        st = gl_fail(err, GL_ERR_NOMEM, "out of memory");
    uint64_t w = 0;
    bool end = false;
    while (!st && !end && w < limit) {
        int nw = 0;
        while (nw < r->n_seq && w + (uint64_t)nw < limit) {
            int32_t *dst = r->win + (size_t)nw * r->n_ctx;
            const int got = next_window(&ts, r->o.text, r->n_ctx, w + (uint64_t)nw, dst, err);
            if (got < 0) {
                st = err->code;
                break;
            }
            if (!got) {
                end = true;
                break;
            }
            if (r->kin_open) {
                const uint64_t wi = w + (uint64_t)nw;
                if ((st = kld_read_ids(&r->kin, (uint32_t)wi, ids, err)))
                    break;
                for (int i = 0; i < r->n_ctx; i++)
                    if (ids[i] != dst[i]) {
                        st = gl_fail(err, GL_ERR_ARG,
                                     "the KL-divergence base was computed on a different text "
                                     "(window %llu, token %d: id %d here, %d in the base)",
                                     (unsigned long long)wi + 1, i, dst[i], ids[i]);
                        break;
                    }
                if (st)
                    break;
            }
            nw++;
        }
        if (!st && nw > 0)
            st = eval_windows(r, nw, err);
        w += (uint64_t)nw;
    }
    if (!st && r->kin_open && end && w < limit)
        st = gl_fail(err, GL_ERR_ARG,
                     "the text gives %llu windows but the KL-divergence base holds %u: it was "
                     "computed on a different text",
                     (unsigned long long)w, r->kin.n_windows);
    free(ids);
    ts_close(&ts);
    return st;
}

static void print_results(const ppl_run *r, double secs)
{
    double nll_mean, nll_err;
    mean_err(r->nll, r->nll2, r->count, &nll_mean, &nll_err);
    const double ppl = exp(nll_mean), ppl_err = ppl * nll_err;
    double kld = 0, kld_err = 0, dp = 0, dp_err = 0, bnll = 0, bnll_err = 0, med = 0, p90 = 0,
           p99 = 0, mx = 0, same = 0, same_err = 0;
    const kld_acc *a = &r->acc;
    if (r->kin_open && a->n) {
        mean_err(a->sum, a->sum2, a->n, &kld, &kld_err);
        mean_err(a->dp_sum, a->dp_sum2, a->n, &dp, &dp_err);
        mean_err(a->base_nll, a->base_nll2, a->n, &bnll, &bnll_err);
        qsort(a->vals, a->n, sizeof *a->vals, cmp_double);
        const double nm1 = (double)(a->n - 1);
        med = a->vals[(size_t)(0.50 * nm1 + 0.5)];
        p90 = a->vals[(size_t)(0.90 * nm1 + 0.5)];
        p99 = a->vals[(size_t)(0.99 * nm1 + 0.5)];
        mx = a->vals[a->n - 1];
        same = (double)a->same_top / (double)a->n;
        same_err = a->n > 1 ? sqrt(same * (1 - same) / (double)(a->n - 1)) : 0;
    }
    if (r->o.json) {
        printf("{\"model\": ");
        json_write_str(stdout, r->o.model, strlen(r->o.model));
        printf(", \"ctx\": %d, \"chunks\": %llu, \"tokens_scored\": %llu, \"nll_mean\": %.8f, "
               "\"ppl\": %.6f, \"ppl_stderr\": %.6f, \"threads\": %d, \"windows_per_pass\": %d, "
               "\"seconds\": %.3f",
               r->n_ctx, (unsigned long long)r->windows, (unsigned long long)r->count, nll_mean,
               ppl, ppl_err, gl_ctx_n_threads(r->c), r->n_seq, secs);
        if (r->kin_open) {
            printf(", \"kld\": {\"base_model\": ");
            json_write_str(stdout, r->kin.name, strlen(r->kin.name));
            printf(", \"base_ppl\": %.6f, \"mean\": %.8g, "
                   "\"stderr\": %.8g, \"median\": %.8g, \"p90\": %.8g, \"p99\": %.8g, "
                   "\"max\": %.8g, \"same_top_pct\": %.4f, \"same_top_pct_stderr\": %.4f, "
                   "\"mean_delta_p_pct\": %.6f, \"mean_delta_p_pct_stderr\": %.6f}",
                   exp(bnll), kld, kld_err, med, p90, p99, mx, 100 * same, 100 * same_err, 100 * dp,
                   100 * dp_err);
        }
        printf("}\n");
        return;
    }
    printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", ppl, ppl_err);
    if (r->kin_open) {
        printf("KL divergence against the base ('%s', PPL %.4f), %llu tokens:\n", r->kin.name,
               exp(bnll), (unsigned long long)a->n);
        printf("  Mean    KLD: %10.6f +/- %.6f\n", kld, kld_err);
        printf("  Median  KLD: %10.6f\n", med);
        printf("  90%%     KLD: %10.6f\n", p90);
        printf("  99%%     KLD: %10.6f\n", p99);
        printf("  Maximum KLD: %10.6f\n", mx);
        printf("  Same top token: %.3f +/- %.3f %%\n", 100 * same, 100 * same_err);
        printf("  Mean delta p of the base's top token: %.3f +/- %.3f %%\n", 100 * dp,
               100 * dp_err);
    }
}

static int setup(ppl_run *r, gl_error *err, int *rc)
{
    ppl_opts *o = &r->o;
    gl_model_params mp = gl_model_default_params();
    mp.backend = o->backend;
    if (gl_model_load(&r->m, o->model, &mp, err))
        return -1;
    cli_model_warnings(r->m);
    gl_model_get_info(r->m, &r->mi);
    r->V = r->mi.n_vocab;
    if (o->kld_in) {
        if (kld_open(&r->kin, o->kld_in, err))
            return -1;
        r->kin_open = true;
        if (r->kin.n_vocab != (uint32_t)r->V) {
            gl_fail(err, GL_ERR_ARG,
                    "the KL-divergence base has a vocabulary of %u tokens, this model %d: "
                    "the models must share their vocabulary",
                    r->kin.n_vocab, r->V);
            return -1;
        }
        if (o->ctx_given && (uint32_t)o->ctx != r->kin.n_ctx) {
            gl_fail(err, GL_ERR_ARG,
                    "the KL-divergence base was computed at a context of %u, not -c %lld",
                    r->kin.n_ctx, o->ctx);
            return -1;
        }
        o->ctx = r->kin.n_ctx;
        o->ctx_given = true;
    } else if (!o->ctx_given && r->mi.n_ctx_train > 0 && r->mi.n_ctx_train < o->ctx) {
        o->ctx = r->mi.n_ctx_train;
    }
    r->n_ctx = (int)o->ctx;
    r->first = r->n_ctx / 2;
    r->n_scored = r->n_ctx - 1 - r->first;
    if (r->kin_open &&
        (r->kin.first != (uint32_t)r->first || r->kin.n_scored != (uint32_t)r->n_scored)) {
        gl_fail(err, GL_ERR_FORMAT, "the KL-divergence base scores other window positions");
        return -1;
    }
    if (r->mi.n_pos_learned > 0 && r->n_ctx > r->mi.n_pos_learned) {
        *rc = EXIT_USAGE;
        gl_fail(err, GL_ERR_ARG, "-c %d is more than the %d positions '%s' has learned", r->n_ctx,
                r->mi.n_pos_learned, r->mi.arch);
        return -1;
    }
    /* windows per pass: -b / CTX, within the 4096-row pass and 1 GiB of logits */
    const long long b = o->batch < 4096 ? o->batch : 4096;
    r->n_seq = b >= r->n_ctx ? (int)(b / r->n_ctx) : 1;
    const size_t row_bytes = (size_t)r->n_scored * (size_t)r->V * sizeof(float);
    while (r->n_seq > 1 && (size_t)r->n_seq * row_bytes > (1u << 30))
        r->n_seq--;
    r->pass = b >= r->n_ctx ? r->n_seq * r->n_ctx : (int)b;

    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = r->n_ctx;
    cp.n_threads = (int)o->threads;
    cp.n_batch = r->pass;
    cp.n_seq = r->n_seq;
    cp.cache_type = o->cache_type;
    if (gl_ctx_create(&r->c, r->m, &cp, err))
        return -1;
    const size_t rows = (size_t)r->n_seq * (size_t)r->n_ctx;
    r->win = malloc(rows * sizeof *r->win);
    r->seq = malloc(rows * sizeof *r->seq);
    r->out_rows = malloc((size_t)r->pass * sizeof *r->out_rows);
    r->logits = malloc((size_t)r->n_seq * row_bytes);
    r->logp = malloc((size_t)r->V * sizeof *r->logp);
    r->base = malloc((size_t)r->V * sizeof *r->base);
    if (!r->win || !r->seq || !r->out_rows || !r->logits || !r->logp || !r->base) {
        gl_fail(err, GL_ERR_NOMEM, "out of memory for %d windows of %d tokens", r->n_seq, r->n_ctx);
        return -1;
    }
    for (size_t i = 0; i < rows; i++)
        r->seq[i] = (int)(i / (size_t)r->n_ctx);
    if (o->kld_out) {
        if (kld_create(&r->kout, o->kld_out, (uint32_t)o->kld_type, (uint32_t)r->V,
                       (uint32_t)r->n_ctx, (uint32_t)r->first, (uint32_t)r->n_scored, r->mi.name,
                       err))
            return -1;
        r->kout_open = true;
        if (write_base_ids(r, err))
            return -1;
    }
    return 0;
}

int cmd_perplexity(int argc, char **argv)
{
    ppl_run r;
    memset(&r, 0, sizeof r);
    int rc = parse_opts(argc, argv, &r.o);
    if (rc)
        return rc;
    gl_error err = { 0 };
    rc = EXIT_RUNTIME;
    const double t0 = now_s();
    if (setup(&r, &err, &rc))
        goto fail;
    if (!r.o.json)
        fprintf(stderr,
                "genloop: perplexity of %s on %s: windows of %d tokens (the last %d scored), "
                "%d windows per pass, %d threads\n",
                r.o.model, r.o.text, r.n_ctx, r.n_scored, r.n_seq, gl_ctx_n_threads(r.c));
    if (run_windows(&r, &err)) {
        if (!r.o.json && r.windows)
            putchar('\n');
        goto fail;
    }
    if (r.kout_open) {
        r.kout_open = false;
        if (kld_close_written(&r.kout, &err))
            goto fail;
    }
    print_results(&r, now_s() - t0);
    rc = 0;
    goto done;
fail:
    cli_error("%s", err.msg);
    if (r.kout_open) { /* no half-written base file left behind */
        kld_close(&r.kout);
        remove(r.o.kld_out);
    }
done:
    if (r.kin_open)
        kld_close(&r.kin);
    free(r.acc.vals);
    free(r.win);
    free(r.seq);
    free(r.out_rows);
    free(r.logits);
    free(r.logp);
    free(r.base);
    gl_ctx_free(r.c);
    gl_model_free(r.m);
    return rc;
}
