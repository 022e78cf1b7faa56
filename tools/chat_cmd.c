/* genloop template and genloop chat: chat templates rendered from a model,
 * a template file or a family name, and an interactive multi-turn chat
 * that keeps the conversation's KV cache between turns. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "genloop.h"
#include "json_in.h"

/* ---- Ctrl-C -------------------------------------------------------------- */

/* The one piece of process state the CLI needs: a signal handler can only
 * talk to the program through a flag. */
static volatile sig_atomic_t sigint_seen;

static void on_sigint(int sig)
{
    (void)sig;
    sigint_seen = 1;
}

void cli_sigint_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocked read returns so we can react */
    sigaction(SIGINT, &sa, NULL);
}

bool cli_sigint_pending(void)
{
    return sigint_seen != 0;
}

void cli_sigint_clear(void)
{
    sigint_seen = 0;
}

/* ---- messages as JSON -------------------------------------------------- */

typedef struct chat_log {
    gl_chat_message *m;
    int n, cap;
} chat_log;

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static bool log_add(chat_log *l, const char *role, const char *content, size_t content_len)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        gl_chat_message *m = realloc(l->m, (size_t)cap * sizeof *m);
        if (!m)
            return false;
        l->m = m;
        l->cap = cap;
    }
    char *r = dup_n(role, strlen(role)), *c = dup_n(content, content_len);
    if (!r || !c) {
        free(r);
        free(c);
        return false;
    }
    l->m[l->n++] = (gl_chat_message){ r, c };
    return true;
}

static void log_clear(chat_log *l, int keep)
{
    for (int i = keep; i < l->n; i++) {
        free((char *)l->m[i].role);
        free((char *)l->m[i].content);
    }
    if (l->n > keep)
        l->n = keep;
}

/* Parses a JSON list of {"role": ..., "content": ...} objects into l. */
static bool parse_messages(const char *s, size_t len, chat_log *l, char *msg, size_t cap)
{
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", s[i]))
        i++;
    if (i == len || s[i] != '[') {
        snprintf(msg, cap, "expected a JSON list of messages");
        return false;
    }
    i++;
    for (;;) {
        while (i < len && strchr(" \t\r\n,", s[i]))
            i++;
        if (i < len && s[i] == ']')
            return true;
        if (i == len || s[i] != '{') {
            snprintf(msg, cap, "expected a message object at byte %zu", i);
            return false;
        }
        /* the object's extent: braces outside strings */
        size_t j = i, depth = 0;
        bool in_str = false;
        for (; j < len; j++) {
            char c = s[j];
            if (in_str) {
                if (c == '\\')
                    j++;
                else if (c == '"')
                    in_str = false;
            } else if (c == '"') {
                in_str = true;
            } else if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                break;
            }
        }
        if (j >= len) {
            snprintf(msg, cap, "unterminated message object at byte %zu", i);
            return false;
        }
        json_object o;
        char err[200];
        if (!json_parse_object(s + i, j + 1 - i, &o, err, sizeof err)) {
            snprintf(msg, cap, "message %d: %s", l->n, err);
            return false;
        }
        const json_value *r = json_get(&o, "role"), *c = json_get(&o, "content");
        bool ok = r && r->type == JV_STR && c && (c->type == JV_STR || c->type == JV_NULL);
        if (!ok)
            snprintf(msg, cap, "message %d needs string \"role\" and \"content\"", l->n);
        else if (!log_add(l, r->str, c->type == JV_STR ? c->str : "",
                          c->type == JV_STR ? strlen(c->str) : 0)) {
            snprintf(msg, cap, "out of memory");
            ok = false;
        }
        json_object_free(&o);
        if (!ok)
            return false;
        i = j + 1;
    }
}

static bool load_messages(const char *path, chat_log *l, char *msg, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, cap, "cannot open '%s': %s", path, strerror(errno));
        return false;
    }
    size_t len;
    char *s = read_all(f, &len);
    fclose(f);
    if (!s) {
        snprintf(msg, cap, "cannot read '%s'", path);
        return false;
    }
    char why[300];
    bool ok = parse_messages(s, len, l, why, sizeof why);
    if (!ok)
        snprintf(msg, cap, "%s: %s", path, why);
    free(s);
    return ok;
}

static bool save_messages(const char *path, const chat_log *l)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    fputs("[\n", f);
    for (int i = 0; i < l->n; i++) {
        fputs("  {\"role\": ", f);
        json_write_str(f, l->m[i].role, strlen(l->m[i].role));
        fputs(", \"content\": ", f);
        json_write_str(f, l->m[i].content, strlen(l->m[i].content));
        fputs(i + 1 < l->n ? "},\n" : "}\n", f);
    }
    fputs("]\n", f);
    return fclose(f) == 0;
}

/* Renders l into a heap string (length in *len), or NULL. */
static char *render(const char *tmpl, const chat_log *l, bool gen, const char *bos, const char *eos,
                    size_t *len)
{
    gl_error err;
    int n = gl_chat_render(tmpl, l->m, l->n, gen, bos, eos, NULL, 0, &err);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s && gl_chat_render(tmpl, l->m, l->n, gen, bos, eos, s, (size_t)n + 1, &err) != n) {
        free(s);
        return NULL;
    }
    *len = (size_t)n;
    return s;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = read_all(f, len);
    fclose(f);
    return s;
}

/* The model's template (heap) or NULL, with BOS/EOS texts. */
static char *model_template(const gl_model *m, char *bos, char *eos, size_t cap)
{
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    if (mi.bos_id < 0 || gl_model_token_text(m, mi.bos_id, bos, cap) < 0)
        bos[0] = '\0';
    if (mi.eos_id < 0 || gl_model_token_text(m, mi.eos_id, eos, cap) < 0)
        eos[0] = '\0';
    int n = gl_model_meta_str(m, "tokenizer.chat_template", NULL, 0);
    if (n < 0)
        return NULL;
    char *t = malloc((size_t)n + 1);
    if (t)
        gl_model_meta_str(m, "tokenizer.chat_template", t, (size_t)n + 1);
    return t;
}

/* Picks the template: --chat-template NAME wins, else the model's. Warns
 * (once, on stderr) when it falls back to ChatML. */
static const char *pick_template(const char *name, const char *source, const char *what)
{
    if (name) {
        if (!gl_chat_template_family(name)) {
            cli_error("unknown chat template '%s' (see 'genloop template --help' for names)", name);
            return NULL;
        }
        return name;
    }
    if (!source) {
        fprintf(stderr, "genloop: warning: %s has no chat template; using chatml\n", what);
        return "chatml";
    }
    if (!gl_chat_template_family(source)) {
        fprintf(stderr,
                "genloop: warning: the chat template of %s is not one genloop knows; "
                "using chatml (--chat-template NAME to choose)\n",
                what);
        return "chatml";
    }
    return source;
}

/* ---- genloop template ---------------------------------------------------- */

static const char template_usage[] =
    "usage: genloop template (-m MODEL | --template-file FILE | --chat-template NAME)\n"
    "                        --messages FILE.json [--bos TEXT] [--eos TEXT]\n"
    "                        [--no-generation-prompt]\n"
    "Prints the conversation rendered with the chat template, byte for byte.\n";

static void print_names(FILE *f)
{
    const char *names[64];
    int n = gl_chat_template_names(names, 64);
    fputs("templates:", f);
    for (int i = 0; i < n && i < 64; i++)
        fprintf(f, " %s", names[i]);
    fputc('\n', f);
}

int cmd_template(int argc, char **argv)
{
    const char *model = NULL, *file = NULL, *name = NULL, *messages = NULL;
    const char *bos_opt = NULL, *eos_opt = NULL;
    bool gen = true;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(template_usage, stdout);
            print_names(stdout);
            return 0;
        }
        if (!strcmp(a, "--no-generation-prompt")) {
            gen = false;
            continue;
        }
        const char **dst = !strcmp(a, "-m") || !strcmp(a, "--model") ? &model
                           : !strcmp(a, "--template-file")           ? &file
                           : !strcmp(a, "--chat-template")           ? &name
                           : !strcmp(a, "--messages")                ? &messages
                           : !strcmp(a, "--bos")                     ? &bos_opt
                           : !strcmp(a, "--eos")                     ? &eos_opt
                                                                     : NULL;
        if (!dst) {
            fprintf(stderr, "genloop: error: unknown option '%s' (see 'genloop template --help')\n",
                    a);
            return EXIT_USAGE;
        }
        if (!v) {
            fprintf(stderr, "genloop: error: option '%s' needs a value\n", a);
            return EXIT_USAGE;
        }
        *dst = v;
        i++;
    }
    if (!!model + !!file + !!name != 1) {
        fprintf(stderr, "genloop: error: give one of -m MODEL, --template-file FILE or "
                        "--chat-template NAME (see 'genloop template --help')\n");
        return EXIT_USAGE;
    }
    if (!messages) {
        fprintf(stderr, "genloop: error: missing --messages FILE.json (see 'genloop template "
                        "--help')\n");
        return EXIT_USAGE;
    }
    int rc = 0;
    chat_log l = { 0 };
    char *source = NULL, *text = NULL;
    char bos[256] = "", eos[256] = "", msg[512];
    gl_model *m = NULL;
    const char *tmpl = NULL;
    if (model) {
        gl_error err;
        gl_model_params mp = gl_model_default_params();
        mp.vocab_only = true;
        if (gl_model_load(&m, model, &mp, &err)) {
            cli_error("%s", err.msg);
            rc = EXIT_RUNTIME;
            goto done;
        }
        source = model_template(m, bos, eos, sizeof bos);
        tmpl = pick_template(NULL, source, model);
    } else if (file) {
        size_t len;
        source = read_file(file, &len);
        if (!source) {
            cli_error("cannot read '%s': %s", file, strerror(errno));
            rc = EXIT_RUNTIME;
            goto done;
        }
        tmpl = pick_template(NULL, source, file);
    } else {
        tmpl = pick_template(name, NULL, "");
        if (!tmpl) {
            rc = EXIT_USAGE;
            goto done;
        }
    }
    if (!load_messages(messages, &l, msg, sizeof msg)) {
        cli_error("%s", msg);
        rc = EXIT_RUNTIME;
        goto done;
    }
    size_t len;
    text = render(tmpl, &l, gen, bos_opt ? bos_opt : bos, eos_opt ? eos_opt : eos, &len);
    if (!text) {
        cli_error("out of memory rendering the conversation");
        rc = EXIT_RUNTIME;
        goto done;
    }
    fwrite(text, 1, len, stdout);
    if (fflush(stdout)) {
        cli_error("writing the output failed");
        rc = EXIT_RUNTIME;
    }
done:
    free(text);
    free(source);
    log_clear(&l, 0);
    free(l.m);
    gl_model_free(m);
    return rc;
}

/* ---- genloop chat -------------------------------------------------------- */

static const char chat_usage[] =
    "usage: genloop chat -m MODEL [--system TEXT] [--chat-template NAME] [-n N] [--temp T]\n"
    "                    [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R]\n"
    "                    [--repeat-last-n N] [--seed S] [-t THREADS] [-c CTX] [--keep N]\n"
    "                    [--cache-type f16|q8_0|f32] [--backend NAME]\n"
    "Interactive chat: one user turn per line of input (a terminal or a pipe).\n"
    "Commands: /reset, /system TEXT, /save FILE, /load FILE, /quit. Ctrl-C stops the\n"
    "current answer, Ctrl-D (end of input) exits. Timings of each answer go to stderr.\n";

typedef struct chat_opts {
    const char *model, *system, *template_name, *backend;
    long long n_predict, threads, n_ctx, keep, repeat_last_n;
    double temp, top_k, top_p, min_p, repeat_penalty;
    uint64_t seed;
    bool have_seed;
    int cache_type;
} chat_opts;

static int parse_chat(int argc, char **argv, chat_opts *o)
{
    *o = (chat_opts){ .n_predict = 512,
                      .temp = 0.8,
                      .top_k = 40,
                      .top_p = 0.95,
                      .min_p = 0.05,
                      .repeat_penalty = 1.0,
                      .repeat_last_n = 64 };
    for (int i = 0; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(chat_usage, stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "genloop: error: %s '%s'%s (see 'genloop chat --help')\n",
                    a[0] == '-' ? "option" : "unexpected argument", a,
                    a[0] == '-' ? " needs a value or is unknown" : "");
            return EXIT_USAGE;
        }
        bool ok = true;
        if (!strcmp(a, "-m") || !strcmp(a, "--model"))
            o->model = v;
        else if (!strcmp(a, "--system"))
            o->system = v;
        else if (!strcmp(a, "--chat-template"))
            o->template_name = v;
        else if (!strcmp(a, "--backend"))
            o->backend = v;
        else if (!strcmp(a, "-n"))
            ok = cli_int(a, v, -1, 1 << 30, &o->n_predict);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads"))
            ok = cli_int(a, v, 0, 4096, &o->threads);
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx"))
            ok = cli_int(a, v, 0, 1 << 24, &o->n_ctx);
        else if (!strcmp(a, "--keep"))
            ok = cli_int(a, v, 0, 1 << 24, &o->keep);
        else if (!strcmp(a, "--repeat-last-n"))
            ok = cli_int(a, v, 0, 1 << 20, &o->repeat_last_n);
        else if (!strcmp(a, "--temp"))
            ok = cli_float(a, v, 0, 100, &o->temp);
        else if (!strcmp(a, "--top-k"))
            ok = cli_float(a, v, 0, 1e9, &o->top_k);
        else if (!strcmp(a, "--top-p"))
            ok = cli_float(a, v, 0, 1, &o->top_p);
        else if (!strcmp(a, "--min-p"))
            ok = cli_float(a, v, 0, 1, &o->min_p);
        else if (!strcmp(a, "--repeat-penalty"))
            ok = cli_float(a, v, 0, 100, &o->repeat_penalty);
        else if (!strcmp(a, "--seed")) {
            ok = cli_u64(a, v, &o->seed);
            o->have_seed = true;
        } else if (!strcmp(a, "--cache-type")) {
            o->cache_type = gl_cache_type_from_name(v);
            if (o->cache_type < 0) {
                fprintf(stderr, "genloop: error: --cache-type must be f16, q8_0 or f32\n");
                return EXIT_USAGE;
            }
        } else {
            fprintf(stderr, "genloop: error: unknown option '%s' (see 'genloop chat --help')\n", a);
            return EXIT_USAGE;
        }
        if (!ok)
            return EXIT_USAGE;
    }
    if (!o->model) {
        fprintf(stderr, "genloop: error: missing -m MODEL (see 'genloop chat --help')\n");
        return EXIT_USAGE;
    }
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The conversation's state: what the KV cache holds, as text and ids. */
typedef struct chat {
    gl_model *m;
    gl_ctx *c;
    gl_sampler *smp;
    const char *tmpl;
    char bos[256], eos[256];
    bool add_bos;
    int n_vocab, n_ctx, n_pos_learned;
    int n_predict;
    chat_log log;
    char *fed; /* rendered text whose tokens are in the cache */
    size_t fed_len;
    int32_t *hist; /* the ids in the cache, in order */
    int n_hist, cap_hist;
    float *logits;
} chat;

static bool hist_push(chat *ch, const int32_t *ids, int n)
{
    if (ch->n_hist + n > ch->cap_hist) {
        int cap = ch->cap_hist ? ch->cap_hist : 1024;
        while (cap < ch->n_hist + n)
            cap *= 2;
        int32_t *h = realloc(ch->hist, (size_t)cap * sizeof *h);
        if (!h)
            return false;
        ch->hist = h;
        ch->cap_hist = cap;
    }
    memcpy(ch->hist + ch->n_hist, ids, (size_t)n * sizeof *ids);
    ch->n_hist += n;
    return true;
}

static bool fed_append(chat *ch, const char *s, size_t n)
{
    char *p = realloc(ch->fed, ch->fed_len + n + 1);
    if (!p)
        return false;
    memcpy(p + ch->fed_len, s, n);
    ch->fed = p;
    ch->fed_len += n;
    p[ch->fed_len] = '\0';
    return true;
}

static void chat_forget(chat *ch)
{
    gl_ctx_reset(ch->c);
    ch->n_hist = 0;
    ch->fed_len = 0;
    if (ch->fed)
        ch->fed[0] = '\0';
}

/* Feeds ids; models with learned positions cannot slide, so past their
 * last position the cache restarts from the latest half of the history
 * (the crop policy). RoPE models slide in the ring cache. */
static gl_status feed(chat *ch, const int32_t *ids, int n, gl_error *err)
{
    if (ch->n_pos_learned > 0 && gl_ctx_pos(ch->c) + n > ch->n_pos_learned) {
        int keep = ch->n_pos_learned / 2;
        if (n >= keep) {
            ids += n - keep;
            n = keep;
            keep = 0;
        } else {
            keep -= n;
        }
        if (keep > ch->n_hist)
            keep = ch->n_hist;
        gl_ctx_reset(ch->c);
        if (keep > 0) {
            gl_status st = gl_ctx_eval(ch->c, ch->hist + ch->n_hist - keep, keep, NULL, false, err);
            if (st)
                return st;
        }
    }
    gl_status st = gl_ctx_eval(ch->c, ids, n, ch->logits, false, err);
    if (!st && !hist_push(ch, ids, n)) {
        err->code = GL_ERR_NOMEM;
        snprintf(err->msg, sizeof err->msg, "out of memory for the conversation's history");
        return GL_ERR_NOMEM;
    }
    return st;
}

static int user_turns(const chat_log *l)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += !strcmp(l->m[i].role, "user");
    return n;
}

/* One turn: render, feed what the cache lacks, stream the answer. */
static int chat_turn(chat *ch, const char *user_text)
{
    gl_error err;
    if (!log_add(&ch->log, "user", user_text, strlen(user_text))) {
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    size_t full_len;
    char *full = render(ch->tmpl, &ch->log, true, ch->bos, ch->eos, &full_len);
    if (!full) {
        cli_error("out of memory rendering the conversation");
        return EXIT_RUNTIME;
    }
    /* Only the new part is processed when the cache holds a prefix of it;
     * otherwise (a template that rewrites history) start over. */
    size_t from = 0;
    if (ch->fed_len && ch->fed_len <= full_len && !memcmp(full, ch->fed, ch->fed_len))
        from = ch->fed_len;
    else
        chat_forget(ch);
    /* BOS at the start; later turns continue the text in the cache */
    const unsigned flags = GL_TOKENIZE_SPECIAL | (from == 0 && ch->add_bos ? GL_TOKENIZE_BOS : 0u) |
                           (from > 0 ? GL_TOKENIZE_CONTINUE : 0u);
    const double t0 = now_ms();
    int n = gl_tokenize_ex(ch->m, full + from, full_len - from, flags, NULL, 0, &err);
    int32_t *ids = n > 0 ? malloc((size_t)n * sizeof *ids) : NULL;
    if (n < 0 || (n > 0 && (!ids || gl_tokenize_ex(ch->m, full + from, full_len - from, flags, ids,
                                                   n, &err) != n))) {
        cli_error("%s", n < 0 ? err.msg : "out of memory");
        free(ids);
        free(full);
        return EXIT_RUNTIME;
    }
    int rc = 0;
    if (n > 0 && feed(ch, ids, n, &err)) {
        cli_error("%s", err.msg);
        rc = EXIT_RUNTIME;
        goto out;
    }
    free(ch->fed);
    ch->fed = full;
    ch->fed_len = full_len;
    full = NULL;
    const double t_prefill = now_ms();
    double t_first = 0;

    char *answer = NULL;
    size_t a_len = 0, a_cap = 0;
    gl_detok d;
    gl_detok_init(&d);
    int n_gen = 0;
    const char *stop = "length";
    while (ch->n_predict < 0 || n_gen < ch->n_predict) {
        if (cli_sigint_pending()) {
            stop = "interrupted";
            break;
        }
        int lo = ch->n_hist > 4096 ? ch->n_hist - 4096 : 0;
        int32_t tok = gl_sampler_sample(ch->smp, ch->logits, ch->hist + lo, ch->n_hist - lo);
        if (!t_first)
            t_first = now_ms();
        if (gl_model_is_eog(ch->m, tok)) {
            stop = "eos";
            break;
        }
        char piece[128];
        int k = gl_detok_push(ch->m, &d, tok, piece, sizeof piece);
        n_gen++;
        if (k > 0) {
            fwrite(piece, 1, (size_t)k, stdout);
            fflush(stdout);
            if (a_len + (size_t)k + 1 > a_cap) {
                a_cap = (a_len + (size_t)k + 1) * 2;
                char *p = realloc(answer, a_cap);
                if (!p) {
                    cli_error("out of memory");
                    rc = EXIT_RUNTIME;
                    break;
                }
                answer = p;
            }
            memcpy(answer + a_len, piece, (size_t)k);
            a_len += (size_t)k;
        }
        if (feed(ch, &tok, 1, &err)) {
            cli_error("%s", err.msg);
            rc = EXIT_RUNTIME;
            break;
        }
    }
    {
        char tail[16];
        int k = gl_detok_flush(&d, tail, sizeof tail);
        if (k > 0 && a_len + (size_t)k + 1 <= a_cap) {
            fwrite(tail, 1, (size_t)k, stdout);
            memcpy(answer + a_len, tail, (size_t)k);
            a_len += (size_t)k;
        }
    }
    fputc('\n', stdout);
    fflush(stdout);
    const double t_end = now_ms();
    /* The cache now holds the rendered prompt plus the answer's text. */
    if (!log_add(&ch->log, "assistant", answer ? answer : "", a_len) ||
        !fed_append(ch, answer ? answer : "", a_len)) {
        cli_error("out of memory");
        rc = EXIT_RUNTIME;
    }
    free(answer);
    const double dec_ms = t_end - t_prefill;
    fprintf(stderr,
            "genloop: turn %d | new prompt %d tok %.1f ms | ttft %.1f ms | decode %d tok %.1f "
            "tok/s | context %lld/%d | stop %s\n",
            user_turns(&ch->log), n, t_prefill - t0, (t_first ? t_first : t_end) - t0, n_gen,
            dec_ms > 0 ? n_gen / (dec_ms / 1e3) : 0.0, (long long)gl_ctx_pos(ch->c), ch->n_ctx,
            stop);
    cli_sigint_clear();
out:
    free(ids);
    free(full);
    return rc;
}

static void set_system(chat *ch, const char *text)
{
    log_clear(&ch->log, 0);
    if (text && text[0])
        log_add(&ch->log, "system", text, strlen(text));
    chat_forget(ch);
}

/* Reads one line (without its newline) into a growing buffer; returns
 * false at end of input. An interrupted read returns an empty line with
 * *interrupted set. */
static bool read_line(char **buf, size_t *cap, bool *interrupted)
{
    *interrupted = false;
    errno = 0;
    ssize_t n = getline(buf, cap, stdin);
    if (n < 0) {
        if (errno == EINTR || cli_sigint_pending()) {
            clearerr(stdin);
            cli_sigint_clear();
            *interrupted = true;
            return true;
        }
        return false;
    }
    while (n > 0 && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
        (*buf)[--n] = '\0';
    return true;
}

int cmd_chat(int argc, char **argv)
{
    chat_opts o;
    int rc = parse_chat(argc, argv, &o);
    if (rc)
        return rc;
    chat ch = { 0 };
    char *source = NULL, *line = NULL;
    size_t line_cap = 0;
    gl_error err;
    gl_model_params mp = gl_model_default_params();
    mp.backend = o.backend;
    if (gl_model_load(&ch.m, o.model, &mp, &err)) {
        cli_error("%s", err.msg);
        return EXIT_RUNTIME;
    }
    cli_model_warnings(ch.m);
    gl_model_info mi;
    gl_model_get_info(ch.m, &mi);
    ch.add_bos = mi.add_bos;
    ch.n_vocab = mi.n_vocab;
    ch.n_pos_learned = mi.n_pos_learned;
    ch.n_predict = (int)o.n_predict;
    source = model_template(ch.m, ch.bos, ch.eos, sizeof ch.bos);
    ch.tmpl = pick_template(o.template_name, source, o.model);
    if (!ch.tmpl) {
        rc = EXIT_USAGE;
        goto done;
    }
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = (int)o.n_ctx;
    cp.n_threads = (int)o.threads;
    cp.n_keep = (int)o.keep;
    cp.cache_type = o.cache_type;
    gl_status st = gl_ctx_create(&ch.c, ch.m, &cp, &err);
    if (st) {
        cli_error("%s", err.msg);
        rc = st == GL_ERR_ARG ? EXIT_USAGE : EXIT_RUNTIME;
        goto done;
    }
    ch.n_ctx = gl_ctx_n_ctx(ch.c);
    gl_sampler_params sp = gl_sampler_default_params();
    sp.temp = (float)o.temp;
    sp.top_k = (int)o.top_k;
    sp.top_p = (float)o.top_p;
    sp.min_p = (float)o.min_p;
    sp.repeat_penalty = (float)o.repeat_penalty;
    sp.repeat_last_n = (int)o.repeat_last_n;
    sp.seed = o.have_seed ? o.seed : (uint64_t)time(NULL);
    ch.logits = malloc((size_t)ch.n_vocab * sizeof *ch.logits);
    if (!ch.logits || gl_sampler_create(&ch.smp, ch.n_vocab, &sp, &err)) {
        cli_error("%s", ch.logits ? err.msg : "out of memory");
        rc = EXIT_RUNTIME;
        goto done;
    }
    set_system(&ch, o.system);
    cli_sigint_install();
    const bool tty = isatty(STDIN_FILENO);
    if (tty)
        fprintf(stderr,
                "genloop chat: %s, template %s, context %d. /reset /system TEXT "
                "/save FILE /load FILE; Ctrl-C stops an answer, Ctrl-D exits.\n",
                mi.name[0] ? mi.name : o.model, gl_chat_template_family(ch.tmpl), ch.n_ctx);
    for (;;) {
        if (tty) {
            fputs("> ", stdout);
            fflush(stdout);
        }
        bool intr;
        if (!read_line(&line, &line_cap, &intr))
            break;
        if (intr) {
            fputc('\n', stdout);
            continue;
        }
        if (!line[0])
            continue;
        if (!strcmp(line, "/quit") || !strcmp(line, "/exit"))
            break;
        if (!strcmp(line, "/reset")) {
            /* keep the system message, forget the rest */
            int keep = ch.log.n > 0 && !strcmp(ch.log.m[0].role, "system") ? 1 : 0;
            log_clear(&ch.log, keep);
            chat_forget(&ch);
            fprintf(stderr, "genloop: conversation reset\n");
            continue;
        }
        if (!strncmp(line, "/system", 7) && (line[7] == ' ' || !line[7])) {
            set_system(&ch, line[7] ? line + 8 : "");
            fprintf(stderr, "genloop: system message set; conversation reset\n");
            continue;
        }
        if (!strncmp(line, "/save ", 6)) {
            if (save_messages(line + 6, &ch.log))
                fprintf(stderr, "genloop: saved %d messages to %s\n", ch.log.n, line + 6);
            else
                cli_error("cannot write '%s': %s", line + 6, strerror(errno));
            continue;
        }
        if (!strncmp(line, "/load ", 6)) {
            chat_log l = { 0 };
            char msg[512];
            if (!load_messages(line + 6, &l, msg, sizeof msg)) {
                cli_error("%s", msg);
                log_clear(&l, 0);
                free(l.m);
                continue;
            }
            log_clear(&ch.log, 0);
            free(ch.log.m);
            ch.log = l;
            chat_forget(&ch);
            fprintf(stderr, "genloop: loaded %d messages from %s\n", l.n, line + 6);
            continue;
        }
        if ((rc = chat_turn(&ch, line)))
            break;
    }
done:
    free(line);
    free(source);
    free(ch.fed);
    free(ch.hist);
    free(ch.logits);
    log_clear(&ch.log, 0);
    free(ch.log.m);
    gl_sampler_free(ch.smp);
    gl_ctx_free(ch.c);
    gl_model_free(ch.m);
    return rc;
}
