/* Continuous batching: a request's output depends only on its own inputs
 * and seed — not on the batch size, the other requests, the chunking of
 * prompts or the thread count — and equals the single-request loop. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genloop.h"
#include "shared_data.h"

enum { N_REQ = 16 };

typedef struct result {
    int32_t tokens[256];
    int n;
    char text[4096];
    gl_stop_reason stop;
} result;

static const char *prompts[] = {
    "Once upon a time",
    "Lily and Ben went to the park",
    "The little dog was",
    "One day, a bird",
    "",
    "Tom had a big red ball. He liked to throw it high in the sky and",
    "Sara",
    "The sun was shining and the flowers were",
};

static const char *stop_a[] = { "park" };
static const char *stop_b[] = { ".", "!" };
static const char *stop_c[] = { "xyz", "ball" };

static gl_request make_request(int i)
{
    gl_request r = gl_request_default();
    r.prompt = prompts[i % 8];
    r.n_predict = 8 + (i * 13) % 57;
    r.sampling.seed = 1000 + (uint64_t)i;
    switch (i % 4) {
    case 0: r.sampling.temp = 0; break;
    case 1:
        r.sampling.temp = 0.9f;
        r.sampling.top_k = 20;
        break;
    case 2:
        r.sampling.temp = 1.2f;
        r.sampling.top_k = 0;
        r.sampling.top_p = 0.8f;
        break;
    default:
        r.sampling.temp = 0.7f;
        r.sampling.min_p = 0.1f;
        r.sampling.repeat_penalty = 1.3f;
    }
    if (i % 5 == 1) {
        r.stops = stop_a;
        r.n_stops = 1;
    } else if (i % 5 == 3) {
        r.stops = stop_b;
        r.n_stops = 2;
    } else if (i % 7 == 2) {
        r.stops = stop_c;
        r.n_stops = 2;
    }
    return r;
}

static gl_model *load(const char *name)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "models/%s.gguf", name);
    td_need_path(path, sizeof path, rel);
    gl_model *m;
    gl_error err;
    cr_assert_eq(gl_model_load(&m, path, NULL, &err), GL_OK, "%s", err.msg);
    return m;
}

static void collect(const gl_request_status *st, result *r)
{
    r->n = st->n_generated < 256 ? st->n_generated : 256;
    memcpy(r->tokens, st->tokens, sizeof(int32_t) * (size_t)r->n);
    snprintf(r->text, sizeof r->text, "%s", st->text);
    r->stop = st->stop;
}

/* All requests through one engine; submission staggered so requests arrive
 * while others run. */
static void run_engine(gl_model *m, int max_batch, int threads, int budget, result *out)
{
    gl_engine_params ep = gl_engine_default_params();
    ep.max_seqs = max_batch;
    ep.n_threads = threads;
    ep.max_batch_tokens = budget;
    ep.n_ctx = 256;
    gl_engine *e;
    gl_error err;
    cr_assert_eq(gl_engine_create(&e, m, &ep, &err), GL_OK, "%s", err.msg);
    int64_t ids[N_REQ];
    int submitted = 0, finished = 0;
    bool done[N_REQ] = { false };
    while (finished < N_REQ) {
        /* two new arrivals per step */
        for (int k = 0; k < 2 && submitted < N_REQ; k++, submitted++) {
            gl_request r = make_request(submitted);
            cr_assert_eq(gl_engine_submit(e, &r, &ids[submitted], &err), GL_OK, "%s", err.msg);
        }
        cr_assert_eq(gl_engine_step(e, &err), GL_OK, "%s", err.msg);
        for (int i = 0; i < submitted; i++) {
            gl_request_status st;
            if (done[i] || gl_engine_status(e, ids[i], &st, NULL) != GL_OK || !st.finished)
                continue;
            collect(&st, &out[i]);
            gl_engine_release(e, ids[i]);
            done[i] = true;
            finished++;
        }
    }
    cr_assert(!gl_engine_busy(e));
    gl_engine_free(e);
}

static bool on_token(void *user, int32_t id, const char *text, size_t len)
{
    result *r = user;
    (void)id;
    size_t have = strlen(r->text);
    if (have + len < sizeof r->text) {
        memcpy(r->text + have, text, len);
        r->text[have + len] = '\0';
    }
    return true;
}

/* The single-request loop that `genloop run` uses. */
static void run_alone(gl_model *m, int i, result *out)
{
    gl_request r = make_request(i);
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = 256;
    cp.n_threads = 1;
    gl_ctx *c;
    gl_error err;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    int32_t prompt[256];
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    int n = gl_tokenize(m, r.prompt, strlen(r.prompt), mi.add_bos, prompt, 256, &err);
    cr_assert_gt(n, 0);
    gl_gen_params gp = gl_gen_default_params();
    gp.n_predict = r.n_predict;
    gp.sampling = r.sampling;
    gp.stops = r.stops;
    gp.n_stops = r.n_stops;
    gl_gen_result res;
    memset(out, 0, sizeof *out);
    cr_assert_eq(gl_generate(c, prompt, n, &gp, on_token, out, out->tokens, 256, &res, &err), GL_OK,
                 "%s", err.msg);
    out->n = res.n_generated;
    out->stop = res.stop;
    gl_ctx_free(c);
}

static void expect_same(const result *a, const result *b, int i, const char *what)
{
    cr_expect_eq(a->n, b->n, "request %d (%s): %d vs %d tokens", i, what, a->n, b->n);
    cr_expect_eq(memcmp(a->tokens, b->tokens, sizeof(int32_t) * (size_t)a->n), 0,
                 "request %d (%s): tokens differ", i, what);
    cr_expect_str_eq(a->text, b->text, "request %d (%s): text differs", i, what);
    cr_expect_eq(a->stop, b->stop, "request %d (%s): stop differs", i, what);
}

Test(engine, batch_size_threads_and_chunking_do_not_change_outputs)
{
    gl_model *m = load("stories260K");
    static result alone[N_REQ], got[N_REQ];
    for (int i = 0; i < N_REQ; i++)
        run_alone(m, i, &alone[i]);
    const int batches[] = { 1, 4, 16 };
    for (int bi = 0; bi < 3; bi++)
        for (int t = 1; t <= 2; t++)
            for (int budget = 3; budget <= 256; budget += 253) {
                char what[64];
                snprintf(what, sizeof what, "batch %d, %d threads, budget %d", batches[bi], t,
                         budget);
                memset(got, 0, sizeof got);
                run_engine(m, batches[bi], t, budget, got);
                for (int i = 0; i < N_REQ; i++)
                    expect_same(&got[i], &alone[i], i, what);
            }
    /* the test means something: stop strings and every stop reason occur */
    int n_stop = 0, n_len = 0;
    for (int i = 0; i < N_REQ; i++) {
        n_stop += alone[i].stop == GL_STOP_STRING;
        n_len += alone[i].stop == GL_STOP_LENGTH;
        if (alone[i].stop == GL_STOP_STRING)
            for (int k = 0; k < make_request(i).n_stops; k++)
                cr_expect_null(strstr(alone[i].text, make_request(i).stops[k]),
                               "request %d leaks its stop string", i);
    }
    cr_expect_gt(n_stop, 0);
    cr_expect_gt(n_len, 0);
    gl_model_free(m);
}

Test(engine, greedy_batch_matches_reference)
{
    gl_model *m = load("stories260K");
    static td_ref refs[8];
    const int nr = td_read_refs("stories260K", refs, 8);
    cr_assert_gt(nr, 0);
    gl_engine_params ep = gl_engine_default_params();
    ep.max_seqs = 4;
    ep.n_ctx = 512;
    gl_engine *e;
    gl_error err;
    cr_assert_eq(gl_engine_create(&e, m, &ep, &err), GL_OK, "%s", err.msg);
    int64_t ids[8];
    for (int p = 0; p < nr; p++) {
        gl_request r = gl_request_default();
        r.prompt_tokens = refs[p].prompt_tokens;
        r.n_prompt_tokens = refs[p].n_prompt;
        r.n_predict = 64;
        r.sampling.temp = 0;
        cr_assert_eq(gl_engine_submit(e, &r, &ids[p], &err), GL_OK, "%s", err.msg);
    }
    while (gl_engine_busy(e))
        cr_assert_eq(gl_engine_step(e, &err), GL_OK, "%s", err.msg);
    for (int p = 0; p < nr; p++) {
        gl_request_status st;
        cr_assert_eq(gl_engine_status(e, ids[p], &st, NULL), GL_OK);
        cr_assert_eq(st.n_generated, 64);
        for (int i = 0; i < 64; i++)
            cr_expect_eq(st.tokens[i], refs[p].greedy[i], "prompt %d token %d", p, i);
    }
    gl_engine_free(e);
    gl_model_free(m);
}

Test(engine, cancel_and_errors)
{
    gl_model *m = load("stories260K");
    gl_engine *e;
    gl_error err;
    cr_assert_eq(gl_engine_create(&e, m, NULL, &err), GL_OK, "%s", err.msg);
    gl_request r = gl_request_default();
    r.prompt = "Once upon a time";
    r.n_predict = -1;
    int64_t id;
    cr_assert_eq(gl_engine_submit(e, &r, &id, &err), GL_OK);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(gl_engine_step(e, &err), GL_OK);
    cr_assert_eq(gl_engine_cancel(e, id, NULL), GL_OK);
    gl_request_status st;
    cr_assert_eq(gl_engine_status(e, id, &st, NULL), GL_OK);
    cr_expect(st.finished);
    cr_expect_eq(st.stop, GL_STOP_CANCELLED);
    cr_expect(!gl_engine_busy(e));
    gl_engine_release(e, id);
    cr_expect_neq(gl_engine_status(e, id, &st, NULL), GL_OK);

    int32_t bad = 99999;
    r.prompt_tokens = &bad;
    r.n_prompt_tokens = 1;
    cr_expect_eq(gl_engine_submit(e, &r, &id, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "out of range"), "%s", err.msg);
    gl_engine_free(e);
    gl_model_free(m);
}

/* ---- through the command line ------------------------------------------ */

static char *sh_out(const char *cmd)
{
    static char buf[1 << 16];
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = '\0';
    int st = pclose(p);
    cr_assert_eq(st, 0, "'%s' failed: %s", cmd, buf);
    return buf;
}

/* the "key": value part of a JSON line, up to the next top-level key */
static void field(const char *line, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(line, pat);
    cr_assert(p, "no %s in %s", key, line);
    p += strlen(pat);
    const char *e = strstr(p, ", \"");
    size_t n = e ? (size_t)(e - p) : strlen(p);
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
}

Test(engine, cli_batch_equals_run)
{
    char model[1024];
    td_need_path(model, sizeof model, "models/stories260K.gguf");
    const char *bin = getenv("GENLOOP_BIN") ? getenv("GENLOOP_BIN") : "build/genloop";
    const char *in = "/tmp/gl_engine_batch.jsonl";
    FILE *f = fopen(in, "w");
    fprintf(f, "{\"id\": \"g\", \"prompt\": \"Once upon a time\", \"n\": 40, \"temp\": 0}\n"
               "{\"id\": 2, \"prompt\": \"The little dog was\", \"n\": 50, \"temp\": 0.9, "
               "\"top_k\": 30, \"seed\": 11, \"stop\": [\"park\", \"!\"]}\n"
               "\n"
               "{\"prompt\": \"Lily and Ben\", \"n\": 30, \"temp\": 1.1, \"top_p\": 0.9, "
               "\"min_p\": 0.02, \"seed\": 5}\n"
               "{\"id\": [1], \"prompt\": \"Sara\", \"n\": 25, \"temp\": 0.8, \"seed\": 99, "
               "\"stop\": \"the\"}\n");
    fclose(f);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s batch -m %s --input %s --max-batch 3 -t 2 2>/dev/null", bin,
             model, in);
    char *out = strdup(sh_out(cmd));
    static const char *runs[4] = {
        "-p 'Once upon a time' -n 40 --temp 0",
        "-p 'The little dog was' -n 50 --temp 0.9 --top-k 30 --seed 11 --stop park --stop '!'",
        "-p 'Lily and Ben' -n 30 --temp 1.1 --top-p 0.9 --min-p 0.02 --seed 5",
        "-p 'Sara' -n 25 --temp 0.8 --seed 99 --stop the",
    };
    static const char *ids[4] = { "\"g\"", "2", "4", "[1]" };
    int found = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char id[64];
        field(line, "id", id, sizeof id);
        for (int i = 0; i < 4; i++) {
            if (strcmp(id, ids[i]) != 0)
                continue;
            found++;
            char cmd1[2048];
            snprintf(cmd1, sizeof cmd1, "%s run -m %s %s --json -t 1 2>/dev/null", bin, model,
                     runs[i]);
            char *alone = sh_out(cmd1);
            char a[8192], b[8192];
            field(line, "tokens", a, sizeof a);
            field(alone, "tokens", b, sizeof b);
            cr_expect_str_eq(a, b, "request %s tokens", id);
            field(line, "text", a, sizeof a);
            field(alone, "text", b, sizeof b);
            cr_expect_str_eq(a, b, "request %s text", id);
            field(line, "stop", a, sizeof a);
            field(alone, "stop", b, sizeof b);
            cr_expect_str_eq(a, b, "request %s stop", id);
        }
    }
    cr_expect_eq(found, 4, "%d of 4 results", found);
    free(out);

    /* a malformed line fails the run, naming the line */
    f = fopen(in, "w");
    fprintf(f, "{\"prompt\": \"ok\"}\n{\"prompt\": \"bad\", \"n\": }\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s batch -m %s --input %s 2>&1; echo \"rc=$?\"", bin, model, in);
    FILE *p = popen(cmd, "r");
    char buf[1024] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = '\0';
    pclose(p);
    cr_expect(strstr(buf, ":2: "), "%s", buf);
    cr_expect(strstr(buf, "rc=1"), "%s", buf);
    remove(in);
}

/* A request that keeps no history (what `genloop run` streams with) drops
 * old tokens and text as it goes; its output must not change. */
Test(engine, bounded_history_same_output)
{
    gl_model *m = load("stories260K");
    enum { N = 3000 };
    static int32_t full[N], bounded[N];
    gl_error err;
    for (int pass = 0; pass < 2; pass++) {
        gl_engine_params ep = gl_engine_default_params();
        ep.max_seqs = 1;
        ep.n_ctx = 64;
        ep.n_keep = 2;
        gl_engine *e;
        cr_assert_eq(gl_engine_create(&e, m, &ep, &err), GL_OK, "%s", err.msg);
        gl_request r = gl_request_default();
        r.prompt = "Once upon a time";
        r.n_predict = N;
        r.sampling.temp = 1.0f;
        r.sampling.seed = 77;
        r.sampling.repeat_penalty = 1.1f;
        r.sampling.repeat_last_n = 32;
        r.keep_history = pass == 0;
        int64_t id;
        cr_assert_eq(gl_engine_submit(e, &r, &id, &err), GL_OK, "%s", err.msg);
        int got = 0;
        while (gl_engine_busy(e)) {
            cr_assert_eq(gl_engine_step(e, &err), GL_OK, "%s", err.msg);
            gl_request_status st;
            gl_engine_status(e, id, &st, NULL);
            if (pass == 1 && st.tokens == NULL)
                got = -1; /* the head was dropped, as it should be */
            if (pass == 0)
                memcpy(full, st.tokens, sizeof(int32_t) * (size_t)st.n_generated);
        }
        if (pass == 1) {
            cr_expect_eq(got, -1, "a long request kept its whole history");
            gl_request_status st;
            gl_engine_status(e, id, &st, NULL);
            cr_expect_eq(st.n_generated, N);
        }
        gl_engine_free(e);
    }
    /* the bounded run through gl_generate, which records every id */
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = 64;
    cp.n_keep = 2;
    gl_ctx *c;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    gl_gen_params gp = gl_gen_default_params();
    gp.n_predict = N;
    gp.sampling.temp = 1.0f;
    gp.sampling.seed = 77;
    gp.sampling.repeat_penalty = 1.1f;
    gp.sampling.repeat_last_n = 32;
    int32_t prompt[16];
    int n = gl_tokenize(m, "Once upon a time", 16, true, prompt, 16, &err);
    gl_gen_result res;
    cr_assert_eq(gl_generate(c, prompt, n, &gp, NULL, NULL, bounded, N, &res, &err), GL_OK);
    cr_assert_eq(res.n_generated, N);
    cr_expect_eq(memcmp(full, bounded, sizeof full), 0, "bounded history changed the output");
    gl_ctx_free(c);
    gl_model_free(m);
}

/* Prefix reuse: a request whose prompt starts with tokens a free slot still
 * holds keeps those cache entries (gl_request_status.n_reused), and its
 * output stays identical to the request run alone. */
static void alone_prompt(gl_model *m, const char *prompt, const gl_sampler_params *sp, int n_pred,
                         result *out)
{
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = 256;
    cp.n_threads = 1;
    gl_ctx *c;
    gl_error err;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    int32_t toks[256];
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    int n = gl_tokenize(m, prompt, strlen(prompt), mi.add_bos, toks, 256, &err);
    gl_gen_params gp = gl_gen_default_params();
    gp.n_predict = n_pred;
    gp.sampling = *sp;
    gl_gen_result res;
    memset(out, 0, sizeof *out);
    cr_assert_eq(gl_generate(c, toks, n, &gp, on_token, out, out->tokens, 256, &res, &err), GL_OK);
    out->n = res.n_generated;
    out->stop = res.stop;
    gl_ctx_free(c);
}

Test(engine, prefix_reuse_keeps_outputs)
{
    gl_model *m = load("stories260K");
    static const char *prompts[] = {
        "Once upon a time, there was a little girl named Lily.",
        "Once upon a time, there was a little girl named Lily. She loved",
        "Once upon a time, there was a little boy",
        "Once upon a time, there was a little girl named Lily. She loved",
        "The dog ran",
        "Once upon a time, there was a little girl named Lily.",
    };
    enum { N = sizeof prompts / sizeof prompts[0] };
    for (int reuse = 0; reuse < 2; reuse++) {
        gl_engine_params ep = gl_engine_default_params();
        ep.max_seqs = 2;
        ep.n_ctx = 256;
        ep.n_threads = 1;
        ep.max_batch_tokens = 7; /* chunked prefill around the reused prefix */
        ep.prefix_reuse = reuse;
        gl_engine *e;
        gl_error err;
        cr_assert_eq(gl_engine_create(&e, m, &ep, &err), GL_OK, "%s", err.msg);
        int total_reused = 0;
        for (int i = 0; i < N; i++) {
            gl_request rq = gl_request_default();
            rq.prompt = prompts[i];
            rq.n_predict = 12 + i;
            rq.sampling.seed = 77 + (uint64_t)i;
            rq.sampling.temp = i % 2 ? 0.9f : 0.0f;
            int64_t id;
            cr_assert_eq(gl_engine_submit(e, &rq, &id, &err), GL_OK, "%s", err.msg);
            while (gl_engine_busy(e))
                cr_assert_eq(gl_engine_step(e, &err), GL_OK, "%s", err.msg);
            gl_request_status st;
            cr_assert_eq(gl_engine_status(e, id, &st, NULL), GL_OK);
            result got, want;
            collect(&st, &got);
            alone_prompt(m, prompts[i], &rq.sampling, rq.n_predict, &want);
            expect_same(&got, &want, i, reuse ? "prefix reuse" : "no reuse");
            cr_assert(reuse || st.n_reused == 0);
            cr_assert_lt(st.n_reused, st.n_prompt, "the last prompt token is always fed");
            total_reused += st.n_reused;
            gl_engine_release(e, id);
        }
        gl_engine_stats es;
        gl_engine_get_stats(e, &es);
        cr_assert_eq(es.reused_tokens, (uint64_t)total_reused);
        if (reuse)
            cr_assert_gt(total_reused, 20, "prefixes were not reused (%d tokens)", total_reused);
        gl_engine_free(e);
    }
    gl_model_free(m);
}
