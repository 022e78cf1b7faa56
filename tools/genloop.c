/* genloop: the command-line program. Subcommands: run, tokenize, eval,
 * info, synth, quantize, bench, batch, perplexity, serve. Exit status: 0 ok,
 * 1 runtime error, 2 usage error. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "genloop.h"
#include "latency_plot.h"

static const char usage_text[] =
    "usage: genloop <command> [options]\n"
    "\n"
    "commands:\n"
    "  run       -m MODEL -p PROMPT [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p P]\n"
    "            [--repeat-penalty R] [--repeat-last-n N] [--seed S] [-t THREADS] [-c CTX]\n"
    "            [--keep N] [--no-ring] [--context-policy ring|crop] [--no-echo] [--json]\n"
    "            [--special] [--backend NAME] [--latency-plot FILE.svg]\n"
    "  tokenize  -m MODEL [--no-bos] [--special] [-p TEXT]   (text from stdin when -p is absent)\n"
    "  eval      -m MODEL --ids \"1 2 3\" --logits-out FILE [-t THREADS] [-c CTX] [--keep N]\n"
    "  info      [MODEL] [--backend NAME]\n"
    "  synth     --shape NAME --type TYPE -o FILE.gguf   (synthetic model)\n"
    "  quantize  -m IN.gguf -o OUT.gguf --type TYPE [--pure] [-t N]   (q4_k_m, q8_0, ...)\n"
    "  bench     -m MODEL [-p 128[,..]] [-n 64[,..]] [-t N[,..]] [--batch B[,..]] [-r REPS]\n"
    "            [-o md|csv|json|jsonl] [--json] [--plot FILE.svg]   (sweeps: lists)\n"
    "  batch     -m MODEL --input prompts.jsonl [--output out.jsonl] [--max-batch B]\n"
    "            [-t THREADS] [-c CTX]   (continuous batching)\n"
    "  chat      -m MODEL [--system TEXT] [--chat-template NAME] [sampling as run] [-c CTX]\n"
    "  template  (-m MODEL | --template-file F | --chat-template NAME) --messages F.json\n"
    "            [--bos TEXT] [--eos TEXT] [--no-generation-prompt]\n"
    "  perplexity -m MODEL -f TEXT [-c CTX] [-b BATCH] [-t N] [--chunks N] [--json]\n"
    "            [--kl-divergence-base FILE | --kl-divergence FILE]\n"
    "  serve     [-m MODEL] [--host 127.0.0.1] [--port 8080] [--max-batch B] [-c CTX]\n"
    "            [--api-key KEY] [--max-queue N] [--timeout S]   (OpenAI-compatible HTTP)\n"
    "\n"
    "Run 'genloop <command> --help' for details.\n";

/* Options shared by the commands; each command accepts its own subset. */
typedef struct opts {
    const char *model, *prompt, *ids, *logits_out, *backend, *latency_plot;
    bool have_prompt, no_bos, json, no_ring, no_echo, have_seed, special;
    long long n_predict, threads, n_ctx, keep, repeat_last_n;
    double temp, top_k, top_p, min_p, repeat_penalty;
    uint64_t seed;
    int context_policy; /* enum gl_ctx_policy */
    const char *stops[64];
    int n_stops;
    int cache_type; /* enum gl_cache_type */
} opts;

enum { F_RUN = 1, F_TOKENIZE = 2, F_EVAL = 4, F_INFO = 8 };

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "genloop: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'genloop %s --help')\n", cmd);
    return EXIT_USAGE;
}

/* Parses argv into o for command `cmd` (mask F_*); returns 0 or an exit code. */
static int parse(int argc, char **argv, const char *cmd, int mask, opts *o, const char **pos)
{
    *o = (opts){ .n_predict = 256,
                 .threads = 0,
                 .n_ctx = 0,
                 .keep = 0,
                 .temp = 0.8,
                 .top_k = 40,
                 .top_p = 0.95,
                 .min_p = 0.05,
                 .repeat_penalty = 1.0,
                 .repeat_last_n = 64 };
    if (pos)
        *pos = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKES_VALUE(allowed)                                                                       \
    if (!((allowed)&mask))                                                                         \
        return usage_error(cmd, "unknown option '%s'", a);                                         \
    if (!v)                                                                                        \
        return usage_error(cmd, "option '%s' needs a value", a);                                   \
    i++;
        long long iv;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            TAKES_VALUE(F_RUN | F_TOKENIZE | F_EVAL | F_INFO);
            o->model = v;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) {
            TAKES_VALUE(F_RUN | F_TOKENIZE);
            o->prompt = v;
            o->have_prompt = true;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) {
            TAKES_VALUE(F_RUN);
            if (!cli_int(a, v, -1, 1000000000, &o->n_predict))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--temp")) {
            TAKES_VALUE(F_RUN);
            if (!cli_float(a, v, 0, 1000, &o->temp))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--top-k")) {
            TAKES_VALUE(F_RUN);
            if (!cli_int(a, v, 0, 1 << 30, &iv))
                return EXIT_USAGE;
            o->top_k = (double)iv;
        } else if (!strcmp(a, "--top-p")) {
            TAKES_VALUE(F_RUN);
            if (!cli_float(a, v, 1e-9, 1, &o->top_p))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--min-p")) {
            TAKES_VALUE(F_RUN);
            if (!cli_float(a, v, 0, 1, &o->min_p))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--repeat-penalty")) {
            TAKES_VALUE(F_RUN);
            if (!cli_float(a, v, 1e-6, 1000, &o->repeat_penalty))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--repeat-last-n")) {
            TAKES_VALUE(F_RUN);
            if (!cli_int(a, v, 0, 1 << 20, &o->repeat_last_n))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--seed") || !strcmp(a, "-s")) {
            TAKES_VALUE(F_RUN);
            if (!cli_u64(a, v, &o->seed))
                return EXIT_USAGE;
            o->have_seed = true;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            TAKES_VALUE(F_RUN | F_EVAL);
            if (!cli_int(a, v, 1, 1024, &o->threads))
                return EXIT_USAGE;
        } else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) {
            TAKES_VALUE(F_RUN | F_EVAL);
            if (!cli_int(a, v, 1, 1 << 24, &o->n_ctx))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--keep")) {
            TAKES_VALUE(F_RUN | F_EVAL);
            if (!cli_int(a, v, 0, 1 << 24, &o->keep))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--backend")) {
            TAKES_VALUE(F_RUN | F_EVAL | F_INFO | F_TOKENIZE);
            o->backend = v;
        } else if (!strcmp(a, "--context-policy")) {
            TAKES_VALUE(F_RUN);
            if (!strcmp(v, "ring"))
                o->context_policy = GL_CTX_POLICY_RING;
            else if (!strcmp(v, "crop"))
                o->context_policy = GL_CTX_POLICY_CROP;
            else if (!strcmp(v, "auto"))
                o->context_policy = GL_CTX_POLICY_AUTO;
            else
                return usage_error(cmd, "--context-policy expects ring or crop, got '%s'", v);
        } else if (!strcmp(a, "--latency-plot")) {
            TAKES_VALUE(F_RUN);
            o->latency_plot = v;
        } else if (!strcmp(a, "--ids")) {
            TAKES_VALUE(F_EVAL);
            o->ids = v;
        } else if (!strcmp(a, "--logits-out")) {
            TAKES_VALUE(F_EVAL);
            o->logits_out = v;
        } else if (!strcmp(a, "--no-bos") && (mask & F_TOKENIZE)) {
            o->no_bos = true;
        } else if (!strcmp(a, "--json") && (mask & F_RUN)) {
            o->json = true;
        } else if (!strcmp(a, "--no-ring") && (mask & F_RUN)) {
            o->no_ring = true;
        } else if (!strcmp(a, "--no-echo") && (mask & F_RUN)) {
            o->no_echo = true;
        } else if (!strcmp(a, "--special") && (mask & (F_RUN | F_TOKENIZE))) {
            o->special = true; /* control-token text becomes those tokens */
        } else if (!strcmp(a, "--cache-type")) {
            TAKES_VALUE(F_RUN | F_EVAL);
            o->cache_type = gl_cache_type_from_name(v);
            if (o->cache_type < 0)
                return usage_error(cmd, "--cache-type expects f16, q8_0 or f32, got '%s'", v);
        } else if (!strcmp(a, "--stop")) {
            TAKES_VALUE(F_RUN);
            if (o->n_stops == 64)
                return usage_error(cmd, "%s", "at most 64 --stop strings");
            if (!*v)
                return usage_error(cmd, "%s", "--stop needs a non-empty string");
            o->stops[o->n_stops++] = v;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error(cmd, "unknown option '%s'", a);
        } else if (pos && !*pos) {
            *pos = a;
        } else {
            return usage_error(cmd, "unexpected argument '%s'", a);
        }
#undef TAKES_VALUE
    }
    if (o->backend) {
        gl_error err;
        gl_status st = gl_backend_check(o->backend, &err);
        if (st == GL_ERR_ARG) {
            cli_error("--backend: %s", err.msg);
            return EXIT_USAGE;
        }
        if (st) {
            cli_error("%s", err.msg);
            return EXIT_RUNTIME;
        }
    }
    return 0;
}

static int load_model(const opts *o, bool vocab_only, gl_model **m)
{
    gl_error err;
    gl_model_params mp = gl_model_default_params();
    mp.backend = o->backend;
    mp.vocab_only = vocab_only;
    if (gl_model_load(m, o->model, &mp, &err)) {
        cli_error("%s", err.msg);
        return EXIT_RUNTIME;
    }
    cli_model_warnings(*m);
    return 0;
}

static unsigned tok_flags(bool bos, bool special)
{
    return (bos ? GL_TOKENIZE_BOS : 0u) | (special ? GL_TOKENIZE_SPECIAL : 0u);
}

static int make_ctx(const opts *o, gl_model *m, gl_ctx **c)
{
    gl_error err;
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = (int)o->n_ctx;
    cp.n_threads = (int)o->threads;
    cp.n_keep = (int)o->keep;
    cp.cache_type = o->cache_type;
    gl_status st = gl_ctx_create(c, m, &cp, &err);
    if (st) {
        cli_error("%s", err.msg);
        return st == GL_ERR_ARG ? EXIT_USAGE : EXIT_RUNTIME;
    }
    return 0;
}

/* ---- run ----------------------------------------------------------------- */

typedef struct run_state {
    bool stream;
    int64_t n_pos; /* positions so far */
    int n_train;   /* the model's trained context */
    bool warned;
    char *text; /* accumulated output for --json */
    size_t len, cap;
    /* --latency-plot: time between consecutive tokens, as the user sees them */
    bool record;
    double t_last;
    double *lat;
    int n_lat, cap_lat;
} run_state;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Records the time since the previous token (the first token has none: its
 * wait is the prefill). Stops recording, not generating, past 2^22 tokens. */
static void record_latency(run_state *rs)
{
    const double t = mono_s();
    if (rs->t_last > 0 && rs->n_lat < (1 << 22)) {
        if (rs->n_lat == rs->cap_lat) {
            const int nc = rs->cap_lat ? rs->cap_lat * 2 : 1024;
            double *nl = realloc(rs->lat, (size_t)nc * sizeof *nl);
            if (!nl) {
                rs->record = false;
                return;
            }
            rs->lat = nl;
            rs->cap_lat = nc;
        }
        rs->lat[rs->n_lat++] = (t - rs->t_last) * 1e3;
    }
    rs->t_last = t;
}

static bool on_token(void *user, int32_t id, const char *text, size_t len)
{
    run_state *rs = user;
    if (id >= 0 && rs->record)
        record_latency(rs);
    if (id >= 0 && ++rs->n_pos > rs->n_train && !rs->warned && rs->n_train > 0) {
        rs->warned = true;
        fprintf(stderr,
                "%sgenloop: warning: generation has passed the %d positions the model was "
                "trained on; text may degrade from here\n",
                rs->stream ? "\n" : "", rs->n_train);
    }
    if (rs->stream) {
        fwrite(text, 1, len, stdout);
        fflush(stdout);
        return !cli_sigint_pending(); /* Ctrl-C: end cleanly after this token */
    }
    if (rs->len + len + 1 > rs->cap) {
        size_t nc = (rs->cap ? rs->cap * 2 : 4096) + len;
        char *nt = realloc(rs->text, nc);
        if (!nt)
            return false;
        rs->text = nt;
        rs->cap = nc;
    }
    memcpy(rs->text + rs->len, text, len);
    rs->len += len;
    if (cli_sigint_pending())
        return false;
    return true;
}

static int cmd_run(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, "run", F_RUN, &o, NULL);
    if (rc)
        return rc;
    if (!o.model)
        return usage_error("run", "%s", "missing -m MODEL");
    if (!o.have_prompt)
        return usage_error("run", "%s", "missing -p PROMPT");
    if (o.keep && o.n_ctx && o.keep >= o.n_ctx)
        return usage_error("run", "%s", "--keep must be smaller than -c");

    gl_model *m = NULL;
    gl_ctx *c = NULL;
    int32_t *prompt = NULL, *out = NULL;
    run_state rs = { .stream = !o.json, .record = o.latency_plot != NULL };
    if ((rc = load_model(&o, false, &m)))
        goto done;
    gl_error err;
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    /* learned positions never go past their context (crop), so no warning */
    rs.n_train = mi.n_pos_learned > 0 ? 0 : mi.n_ctx_train;
    if (o.context_policy == GL_CTX_POLICY_RING && mi.n_pos_learned > 0) {
        cli_error("--context-policy ring cannot run this '%s' model: its %d positions are "
                  "learned (position_embd), so past them a sliding window is not exact; use "
                  "--context-policy crop (the default)",
                  mi.arch, mi.n_pos_learned);
        rc = EXIT_USAGE;
        goto done;
    }
    const size_t plen = strlen(o.prompt);
    /* BOS as the vocabulary asks (SentencePiece: yes, GPT-2: no) */
    int n = gl_tokenize_ex(m, o.prompt, plen, tok_flags(mi.add_bos, o.special), NULL, 0, &err);
    if (n < 0) {
        cli_error("%s", err.msg);
        rc = EXIT_RUNTIME;
        goto done;
    }
    if (n == 0) {
        cli_error("the prompt is empty and the model adds no BOS token: nothing to start from");
        rc = EXIT_USAGE;
        goto done;
    }
    rs.n_pos = n;
    prompt = malloc((size_t)n * sizeof *prompt);
    if (!prompt ||
        gl_tokenize_ex(m, o.prompt, plen, tok_flags(mi.add_bos, o.special), prompt, n, &err) != n) {
        cli_error("tokenizing the prompt failed");
        rc = EXIT_RUNTIME;
        goto done;
    }
    if ((rc = make_ctx(&o, m, &c)))
        goto done;
    int usable = gl_ctx_n_ctx(c); /* capped at learned positions */
    if (mi.n_pos_learned > 0 && mi.n_pos_learned < usable)
        usable = mi.n_pos_learned;
    if (o.no_ring && n > usable) {
        cli_error("the prompt has %d tokens but the context holds %d (-c)", n, usable);
        rc = EXIT_USAGE;
        goto done;
    }

    gl_gen_params gp = gl_gen_default_params();
    gp.n_predict = (int)o.n_predict;
    gp.ring = !o.no_ring;
    gp.context_policy = o.context_policy;
    gp.stops = o.stops;
    gp.n_stops = o.n_stops;
    gp.sampling.temp = (float)o.temp;
    gp.sampling.top_k = (int)o.top_k;
    gp.sampling.top_p = (float)o.top_p;
    gp.sampling.min_p = (float)o.min_p;
    gp.sampling.repeat_penalty = (float)o.repeat_penalty;
    gp.sampling.repeat_last_n = (int)o.repeat_last_n;
    gp.sampling.seed = o.have_seed ? o.seed : (uint64_t)time(NULL);

    /* streaming keeps nothing, so generating forever runs in fixed memory;
     * --json must print every id */
    const int cap = !o.json ? 0 : o.n_predict >= 0 ? (int)o.n_predict : 1 << 20;
    out = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *out);
    if (!out) {
        cli_error("out of memory");
        rc = EXIT_RUNTIME;
        goto done;
    }
    if (!o.json && !o.no_echo) {
        fputs(o.prompt, stdout);
        fflush(stdout);
    }
    gl_gen_result res;
    cli_sigint_install();
    if (gl_generate(c, prompt, n, &gp, on_token, &rs, out, cap, &res, &err)) {
        if (!o.json)
            fputc('\n', stdout);
        cli_error("%s", err.msg);
        rc = EXIT_RUNTIME;
        goto done;
    }
    double pcts[3];
    lp_percentiles(rs.lat, rs.n_lat, pcts);
    if (o.latency_plot) {
        const char *base = strrchr(o.model, '/');
        const lp_series ser = {
            base ? base + 1 : o.model, rs.lat, rs.n_lat, pcts[0], pcts[1], pcts[2]
        };
        if (latency_plot_write(o.latency_plot, "genloop run: time between generated tokens", &ser,
                               1, NULL, 0, NULL, 0)) {
            cli_error("cannot write the latency plot '%s'", o.latency_plot);
            rc = EXIT_RUNTIME;
        }
    }
    const double dec_tok_s = res.decode_ms > 0 ? res.n_generated / (res.decode_ms / 1e3) : 0;
    const double pre_tok_s = res.prefill_ms > 0 ? n / (res.prefill_ms / 1e3) : 0;
    const char *stop_name = res.stop == GL_STOP_CALLBACK && cli_sigint_pending()
                                ? "interrupted"
                                : gl_stop_reason_name(res.stop);
    if (o.json) {
        printf("{\"prompt_tokens\": [");
        for (int i = 0; i < n; i++)
            printf("%s%d", i ? ", " : "", prompt[i]);
        printf("], \"tokens\": [");
        const int shown = res.n_generated < cap ? res.n_generated : cap;
        for (int i = 0; i < shown; i++)
            printf("%s%d", i ? ", " : "", out[i]);
        printf("], \"text\": ");
        json_write_str(stdout, rs.text ? rs.text : "", rs.len);
        printf(", \"stop\": \"%s\", \"seed\": %llu, \"timings\": {\"prefill_ms\": %.3f, "
               "\"decode_ms\": %.3f, \"prefill_tok_s\": %.2f, \"decode_tok_s\": %.2f",
               stop_name, (unsigned long long)gp.sampling.seed, res.prefill_ms, res.decode_ms,
               pre_tok_s, dec_tok_s);
        if (o.latency_plot) {
            printf(", \"latency_ms\": {\"p50\": %.4f, \"p90\": %.4f, \"p99\": %.4f}, "
                   "\"latency_series_ms\": [",
                   pcts[0], pcts[1], pcts[2]);
            for (int i = 0; i < rs.n_lat; i++)
                printf("%s%.4f", i ? ", " : "", rs.lat[i]);
            printf("]");
        }
        printf("}}\n");
    } else {
        fputc('\n', stdout);
    }
    fflush(stdout);
    fprintf(stderr,
            "genloop: prompt %d tok %.1f tok/s | decode %d tok %.1f tok/s | stop %s | seed "
            "%llu\n",
            n, pre_tok_s, res.n_generated, dec_tok_s, stop_name,
            (unsigned long long)gp.sampling.seed);
done:
    free(rs.lat);
    free(rs.text);
    free(out);
    free(prompt);
    gl_ctx_free(c);
    gl_model_free(m);
    return rc;
}

/* ---- tokenize ------------------------------------------------------------ */

static int cmd_tokenize(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, "tokenize", F_TOKENIZE, &o, NULL);
    if (rc)
        return rc;
    if (!o.model)
        return usage_error("tokenize", "%s", "missing -m MODEL");
    char *text = NULL;
    size_t len;
    if (o.have_prompt) {
        len = strlen(o.prompt);
    } else {
        text = read_all(stdin, &len);
        if (!text) {
            cli_error("cannot read standard input");
            return EXIT_RUNTIME;
        }
    }
    gl_model *m = NULL;
    int32_t *ids = NULL;
    if ((rc = load_model(&o, true, &m)))
        goto done;
    gl_error err;
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    const bool bos = !o.no_bos && mi.add_bos; /* as the vocabulary asks */
    const char *s = text ? text : o.prompt;
    int n = gl_tokenize_ex(m, s, len, tok_flags(bos, o.special), NULL, 0, &err);
    if (n < 0 || !(ids = malloc((size_t)(n ? n : 1) * sizeof *ids)) ||
        gl_tokenize_ex(m, s, len, tok_flags(bos, o.special), ids, n, &err) != n) {
        cli_error("%s", n < 0 ? err.msg : "out of memory");
        rc = EXIT_RUNTIME;
        goto done;
    }
    putchar('[');
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", ids[i]);
    puts("]");
done:
    free(ids);
    free(text);
    gl_model_free(m);
    return rc;
}

/* ---- eval ---------------------------------------------------------------- */

static int parse_ids(const char *s, int32_t **out, int *n_out)
{
    int cap = 64, n = 0;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    if (!ids)
        return -1;
    while (*s) {
        while (*s == ' ' || *s == ',' || *s == '\t' || *s == '\n' || *s == '[' || *s == ']')
            s++;
        if (!*s)
            break;
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > INT32_MAX) {
            free(ids);
            return -2;
        }
        if (n == cap) {
            int32_t *ni = realloc(ids, (size_t)cap * 2 * sizeof *ids);
            if (!ni) {
                free(ids);
                return -1;
            }
            ids = ni;
            cap *= 2;
        }
        ids[n++] = (int32_t)v;
        s = end;
    }
    *out = ids;
    *n_out = n;
    return 0;
}

static int cmd_eval(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, "eval", F_EVAL, &o, NULL);
    if (rc)
        return rc;
    if (!o.model)
        return usage_error("eval", "%s", "missing -m MODEL");
    if (!o.ids)
        return usage_error("eval", "%s", "missing --ids \"ID ID ...\"");
    if (!o.logits_out)
        return usage_error("eval", "%s", "missing --logits-out FILE");
    int32_t *ids = NULL;
    int n = 0;
    if (parse_ids(o.ids, &ids, &n) != 0 || n == 0) {
        free(ids);
        return usage_error("eval", "--ids expects non-negative integers, got '%s'", o.ids);
    }
    gl_model *m = NULL;
    gl_ctx *c = NULL;
    float *logits = NULL;
    FILE *f = NULL;
    if ((rc = load_model(&o, false, &m)))
        goto done;
    const int n_vocab = gl_model_n_vocab(m);
    for (int i = 0; i < n; i++) {
        if (ids[i] >= n_vocab) {
            cli_error("--ids: token %d is out of range [0, %d)", ids[i], n_vocab);
            rc = EXIT_USAGE;
            goto done;
        }
    }
    if ((rc = make_ctx(&o, m, &c)))
        goto done;
    /* Chunks of 64 positions bound memory to 64 rows of logits; the ring
     * makes any chunking give identical results. */
    enum { CHUNK = 64 };
    logits = malloc((size_t)CHUNK * n_vocab * sizeof *logits);
    if (!logits) {
        cli_error("out of memory");
        rc = EXIT_RUNTIME;
        goto done;
    }
    f = fopen(o.logits_out, "wb");
    if (!f) {
        cli_error("cannot open '%s' for writing", o.logits_out);
        rc = EXIT_RUNTIME;
        goto done;
    }
    gl_error err;
    for (int i = 0; i < n; i += CHUNK) {
        const int nb = n - i < CHUNK ? n - i : CHUNK;
        if (gl_ctx_eval(c, &ids[i], nb, logits, true, &err)) {
            cli_error("%s", err.msg);
            rc = EXIT_RUNTIME;
            goto done;
        }
        const size_t want = (size_t)nb * n_vocab;
        if (fwrite(logits, sizeof(float), want, f) != want) {
            cli_error("writing '%s' failed", o.logits_out);
            rc = EXIT_RUNTIME;
            goto done;
        }
    }
    if (fclose(f) != 0) {
        f = NULL;
        cli_error("writing '%s' failed", o.logits_out);
        rc = EXIT_RUNTIME;
        goto done;
    }
    f = NULL;
done:
    if (f)
        fclose(f);
    free(logits);
    free(ids);
    gl_ctx_free(c);
    gl_model_free(m);
    return rc;
}

/* ---- info ---------------------------------------------------------------- */

static int cmd_info(int argc, char **argv)
{
    opts o;
    const char *pos;
    int rc = parse(argc, argv, "info", F_INFO, &o, &pos);
    if (rc)
        return rc;
    if (!o.model)
        o.model = pos;
    const char *names[16];
    int nb = gl_backend_list(names, 16);
    printf("genloop %s\n", GENLOOP_VERSION);
    printf("cpu features: %s\n", gl_cpu_features());
    printf("backends: ");
    for (int i = 0; i < nb; i++) {
        bool ok = gl_backend_check(names[i], NULL) == GL_OK;
        printf("%s%s%s", i ? " " : "", names[i], ok ? "" : "(unavailable)");
    }
    printf("\nbackend: %s\n", o.backend ? o.backend : gl_backend_default());
    {
        char tune[384];
        gl_error terr;
        printf("cpu: %s\n", gl_cpu_model());
        if (gl_tune_describe(gl_tune_default(), tune, sizeof tune, &terr) == GL_OK)
            printf("tune: %s%s\n", tune, getenv("GENLOOP_TUNE") ? " [GENLOOP_TUNE]" : "");
        else
            printf("tune: %s\n", terr.msg);
    }
    if (!o.model)
        return 0;
    gl_model *m = NULL;
    if ((rc = load_model(&o, false, &m)))
        return rc;
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    printf("model: %s\n", o.model);
    printf("  gguf version: %u, tensors: %llu, file: %llu bytes\n", mi.gguf_version,
           (unsigned long long)mi.n_tensors, (unsigned long long)mi.file_bytes);
    printf("  architecture: %s%s%s%s\n", mi.arch[0] ? mi.arch : "(none)", mi.name[0] ? " (" : "",
           mi.name, mi.name[0] ? ")" : "");
    printf("  vocabulary: %d tokens, bos %d, eos %d, add_bos %s\n", mi.n_vocab, mi.bos_id,
           mi.eos_id, mi.add_bos ? "yes" : "no");
    {
        char pre[64] = "", *tmpl = NULL;
        if (gl_model_meta_str(m, "tokenizer.ggml.pre", pre, sizeof pre) < 0)
            snprintf(pre, sizeof pre, "(none: default)");
        int tn = gl_model_meta_str(m, "tokenizer.chat_template", NULL, 0);
        if (tn >= 0 && (tmpl = malloc((size_t)tn + 1)))
            gl_model_meta_str(m, "tokenizer.chat_template", tmpl, (size_t)tn + 1);
        const char *fam = tmpl ? gl_chat_template_family(tmpl) : NULL;
        printf("  pre-tokenizer: %s%s; chat template: %s\n", pre,
               gl_model_tokenizer_warning(m) ? " (unknown: default rules)" : "",
               !tmpl ? "none (chat uses chatml)"
               : fam ? fam
                     : "unrecognised (chat uses chatml)");
        free(tmpl);
    }
    if (mi.has_weights) {
        printf("  dim %d, layers %d, heads %d, kv heads %d, head dim %d, ffn %d, context %d\n",
               mi.dim, mi.n_layers, mi.n_heads, mi.n_kv_heads, mi.head_dim, mi.ffn_dim,
               mi.n_ctx_train);
        if (mi.n_pos_learned > 0)
            printf("  layernorm eps %g, learned positions %d\n", (double)mi.norm_eps,
                   mi.n_pos_learned);
        else
            printf("  rms eps %g, rope base %g, rope scale %g\n", (double)mi.norm_eps,
                   (double)mi.rope_freq_base, (double)mi.rope_scale);
        printf("  tensor types:");
        for (int t = 0; t < 32; t++)
            if (mi.type_counts[t])
                printf(" %s x%llu (%llu bytes)", gl_type_name(t),
                       (unsigned long long)mi.type_counts[t], (unsigned long long)mi.type_bytes[t]);
        printf("\n  memory: weights %llu bytes (%llu repacked, %llu copied into huge pages, the "
               "rest mapped), KV cache %llu bytes at context %d\n",
               (unsigned long long)mi.weight_bytes, (unsigned long long)mi.repacked_bytes,
               (unsigned long long)mi.copied_bytes,
               (unsigned long long)gl_model_kv_bytes(m, mi.n_ctx_train), mi.n_ctx_train);
    } else {
        printf("  vocabulary only (no weights)\n");
    }
    gl_model_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "tokenize"))
        return cmd_tokenize(argc - 2, argv + 2);
    if (!strcmp(cmd, "eval"))
        return cmd_eval(argc - 2, argv + 2);
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "synth"))
        return cmd_synth(argc - 2, argv + 2);
    if (!strcmp(cmd, "quantize"))
        return cmd_quantize(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(cmd, "batch"))
        return cmd_batch(argc - 2, argv + 2);
    if (!strcmp(cmd, "template"))
        return cmd_template(argc - 2, argv + 2);
    if (!strcmp(cmd, "chat"))
        return cmd_chat(argc - 2, argv + 2);
    if (!strcmp(cmd, "perplexity"))
        return cmd_perplexity(argc - 2, argv + 2);
    if (!strcmp(cmd, "serve"))
        return cmd_serve(argc - 2, argv + 2);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        puts(GENLOOP_VERSION);
        return 0;
    }
    fprintf(stderr, "genloop: error: unknown command '%s'\n%s", cmd, usage_text);
    return EXIT_USAGE;
}
