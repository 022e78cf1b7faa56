/* The public API keeps its own word (include/genloop.h), and the README's
 * features each have a test: multi-sequence contexts, errors with messages
 * from every fallible call, queue times, engine statistics, KV sizes, the
 * callback stop, backend and repacking selection by environment, and the
 * CLI's --no-echo, --cache-type and trained-context warning. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_run.h"
#include "genloop.h"
#include "model.h"
#include "shared_data.h"

static const char *model_path(const char *name)
{
    static char path[1024];
    char rel[256];
    snprintf(rel, sizeof rel, "models/%s.gguf", name);
    td_need_path(path, sizeof path, rel);
    return path;
}

static gl_model *load(const char *name, const char *backend)
{
    gl_model_params mp = gl_model_default_params();
    mp.backend = backend;
    gl_model *m;
    gl_error err;
    cr_assert_eq(gl_model_load(&m, model_path(name), &mp, &err), GL_OK, "%s", err.msg);
    return m;
}

static gl_ctx *make_ctx(gl_model *m, int n_seq, int n_ctx)
{
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = n_ctx;
    cp.n_threads = 1;
    cp.n_seq = n_seq;
    gl_ctx *c;
    gl_error err;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    return c;
}

/* The logits of 8 ids fed at once to a fresh one-thread context (malloc'd). */
static float *logits_of_8(gl_model *m, const int32_t ids[8])
{
    gl_ctx *c = make_ctx(m, 1, 32);
    float *lg = malloc(sizeof *lg * (size_t)gl_model_n_vocab(m) * 8);
    gl_error err;
    cr_assert_eq(gl_ctx_eval(c, ids, 8, lg, true, &err), GL_OK, "%s", err.msg);
    gl_ctx_free(c);
    return lg;
}

/* ---- contexts ----------------------------------------------------------- */

/* Every sequence slot a context allocates can be fed, and each behaves as a
 * context of its own. */
Test(api, multi_sequence_context)
{
    gl_model *m = load("stories260K", NULL);
    const int V = gl_model_n_vocab(m);
    gl_ctx *c = make_ctx(m, 3, 64), *one = make_ctx(m, 1, 64);
    cr_assert_eq(gl_ctx_n_seq(c), 3);
    cr_expect_eq(gl_ctx_kv_bytes(c), 3 * gl_model_kv_bytes(m, 64));
    cr_expect_eq(gl_ctx_kv_bytes(one), gl_model_kv_bytes(m, 64));
    const int32_t a[6] = { 1, 403, 407, 261, 378, 432 }, b[4] = { 1, 20, 30, 40 };
    float *got = malloc(sizeof *got * (size_t)V * 6), *want = malloc(sizeof *want * (size_t)V * 6);
    gl_error err;
    /* interleaved: sequence 2 gets b, sequence 1 gets a in two pieces */
    cr_assert_eq(gl_ctx_eval_seq(c, 2, b, 4, NULL, false, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(gl_ctx_eval_seq(c, 1, a, 2, NULL, false, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(gl_ctx_eval_seq(c, 0, b, 1, NULL, false, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(gl_ctx_eval_seq(c, 1, a + 2, 4, got, true, &err), GL_OK, "%s", err.msg);
    cr_expect_eq(gl_ctx_seq_pos(c, 0), 1);
    cr_expect_eq(gl_ctx_seq_pos(c, 1), 6);
    cr_expect_eq(gl_ctx_seq_pos(c, 2), 4);
    cr_expect_eq(gl_ctx_pos(c), 1);
    cr_expect_eq(gl_ctx_seq_pos(c, 3), -1);
    cr_assert_eq(gl_ctx_eval(one, a, 6, want, true, &err), GL_OK, "%s", err.msg);
    cr_expect_eq(memcmp(got, want + (size_t)2 * V, sizeof *got * (size_t)V * 4), 0,
                 "sequence 1 of 3 differs from a context of its own");
    /* out of range: an error with a message, nothing fed */
    for (int bad = -1; bad <= 3; bad += 4) {
        err.msg[0] = '\0';
        cr_expect_eq(gl_ctx_eval_seq(c, bad, a, 1, NULL, false, &err), GL_ERR_ARG);
        cr_expect(strstr(err.msg, "out of range"), "%s", err.msg);
        cr_expect_eq(gl_ctx_reset_seq(c, bad, &err), GL_ERR_ARG);
    }
    cr_assert_eq(gl_ctx_reset_seq(c, 1, &err), GL_OK);
    cr_expect_eq(gl_ctx_seq_pos(c, 1), 0);
    cr_expect_eq(gl_ctx_seq_pos(c, 2), 4);
    gl_ctx_reset(c);
    cr_expect_eq(gl_ctx_seq_pos(c, 2), 0);
    free(got);
    free(want);
    gl_ctx_free(c);
    gl_ctx_free(one);
    gl_model_free(m);
}

Test(api, context_parameters_out_of_range_are_errors)
{
    gl_model *m = load("stories260K", NULL);
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = 32;
    cp.n_threads = 1;
    gl_ctx *c = NULL;
    gl_error err;
    cp.n_batch = 4097;
    cr_expect_eq(gl_ctx_create(&c, m, &cp, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "n_batch 4097"), "%s", err.msg);
    cr_expect_null(c);
    cp.n_batch = 4096;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    gl_ctx_free(c);
    cp.n_batch = 0;
    cp.n_seq = 4097;
    cr_expect_eq(gl_ctx_create(&c, m, &cp, &err), GL_ERR_ARG);
    cp.n_seq = 1;
    cp.cache_type = 7;
    cr_expect_eq(gl_ctx_create(&c, m, &cp, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "cache type 7"), "%s", err.msg);
    gl_model_free(m);
}

/* ---- the engine ---------------------------------------------------------- */

Test(api, engine_errors_have_messages)
{
    gl_model *m = load("stories260K", NULL);
    gl_engine *e;
    gl_error err;
    cr_assert_eq(gl_engine_create(&e, m, NULL, &err), GL_OK, "%s", err.msg);
    gl_request_status st;
    err.msg[0] = '\0';
    cr_expect_eq(gl_engine_status(e, 42, &st, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "no request 42"), "%s", err.msg);
    err.msg[0] = '\0';
    cr_expect_eq(gl_engine_cancel(e, 42, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "no request 42"), "%s", err.msg);
    cr_expect_eq(gl_engine_cancel(e, 42, NULL), GL_ERR_ARG); /* NULL err is fine */
    gl_engine_free(e);
    /* a step is one forward pass of at most 4096 rows: more is an error,
     * never a silent clamp */
    gl_engine_params ep = gl_engine_default_params();
    ep.n_ctx = 32;
    ep.n_threads = 1;
    ep.max_seqs = 8;
    ep.max_batch_tokens = 4089;
    cr_expect_eq(gl_engine_create(&e, m, &ep, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "max_batch_tokens 4089 is out of range [1, 4088]"), "%s", err.msg);
    ep.max_batch_tokens = 4088;
    cr_assert_eq(gl_engine_create(&e, m, &ep, &err), GL_OK, "%s", err.msg);
    gl_engine_free(e);
    gl_model_free(m);
}

/* One slot, three requests: the later ones wait, and their queue time says
 * so; the statistics add up to what was fed. */
/* milliseconds on the clock the engine stamps requests with */
static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

Test(api, engine_queue_time_and_stats)
{
    gl_model *m = load("stories260K", NULL);
    gl_engine_params ep = gl_engine_default_params();
    ep.max_seqs = 1;
    ep.n_ctx = 64;
    ep.n_threads = 1;
    gl_engine *e;
    gl_error err;
    cr_assert_eq(gl_engine_create(&e, m, &ep, &err), GL_OK, "%s", err.msg);
    int64_t ids[3];
    double before[3], after[3]; /* bounds on each submit time, the engine's clock */
    for (int i = 0; i < 3; i++) {
        gl_request r = gl_request_default();
        r.prompt = i == 1 ? "Once upon a time" : "The dog";
        r.n_predict = 6;
        r.sampling.temp = 0;
        before[i] = mono_ms();
        cr_assert_eq(gl_engine_submit(e, &r, &ids[i], &err), GL_OK, "%s", err.msg);
        after[i] = mono_ms();
    }
    gl_request_status st;
    cr_assert_eq(gl_engine_step(e, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(gl_engine_status(e, ids[2], &st, &err), GL_OK);
    cr_expect(!st.running && !st.finished);
    cr_expect_gt(st.queue_ms, 0, "a waiting request's queue time grows");
    while (gl_engine_busy(e))
        cr_assert_eq(gl_engine_step(e, &err), GL_OK, "%s", err.msg);
    uint64_t prompt_toks = 0, decoded = 0;
    double lat_prev = 0;
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(gl_engine_status(e, ids[i], &st, &err), GL_OK);
        cr_expect(st.finished);
        cr_expect_eq(st.stop, GL_STOP_LENGTH);
        cr_expect_geq(st.queue_ms, 0);
        /* admitted only once the one before was done (one slot): its queue
         * reaches past that one's latency less the gap between the two
         * submits (bounded here, so a slow submit cannot fail this) */
        if (i > 0)
            cr_expect_geq(st.queue_ms, lat_prev - (after[i] - before[i - 1]) - 1e-3,
                          "request %d was admitted before the one before it was done", i);
        cr_expect_leq(st.queue_ms + st.prefill_ms, st.latency_ms + 1e-6);
        if (i > 0) /* it waited for a whole request before it */
            cr_expect_gt(st.queue_ms, 0);
        lat_prev = st.latency_ms;
        prompt_toks += (uint64_t)st.n_prompt;
        decoded += (uint64_t)st.n_generated - 1; /* the last sampled token is never fed */
    }
    gl_engine_stats s;
    gl_engine_get_stats(e, &s);
    cr_expect_eq(s.prefill_tokens, prompt_toks);
    cr_expect_eq(s.decode_tokens, decoded);
    cr_expect_eq(s.steps, 3 + decoded, "one prefill step per request, one step per decode");
    cr_expect_gt(s.prefill_ms + s.decode_ms, 0);
    gl_engine_free(e);
    gl_model_free(m);
}

static bool stop_after_three(void *user, int32_t id, const char *text, size_t len)
{
    (void)text;
    (void)len;
    int *calls = user;
    return id < 0 || ++*calls < 3;
}

Test(api, callback_stops_generation)
{
    gl_model *m = load("stories260K", NULL);
    gl_ctx *c = make_ctx(m, 1, 64);
    const int32_t prompt[5] = { 1, 403, 407, 261, 378 };
    gl_gen_params gp = gl_gen_default_params();
    gp.n_predict = 20;
    gp.sampling.temp = 0;
    int calls = 0;
    int32_t out[32];
    gl_gen_result res;
    gl_error err;
    cr_assert_eq(gl_generate(c, prompt, 5, &gp, stop_after_three, &calls, out, 32, &res, &err),
                 GL_OK, "%s", err.msg);
    cr_expect_eq(res.stop, GL_STOP_CALLBACK);
    cr_expect_eq(res.n_generated, 3);
    cr_expect_str_eq(gl_stop_reason_name(res.stop), "callback");
    cr_expect_str_eq(gl_stop_reason_name(GL_STOP_ERROR), "error");
    gl_ctx_free(c);
    gl_model_free(m);
}

/* ---- backend and repacking selection ------------------------------------ */

Test(api, backend_from_the_environment)
{
    const char *path = model_path("stories260K");
    gl_model *m;
    gl_error err;
    /* what gl_backend_default names is what loading uses, or refuses */
    setenv("GENLOOP_BACKEND", "no-such-isa", 1);
    cr_expect_str_eq(gl_backend_default(), "no-such-isa");
    cr_expect_eq(gl_model_load(&m, path, NULL, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "unknown backend 'no-such-isa'"), "%s", err.msg);
    cr_expect_eq(gl_backend_check(gl_backend_default(), NULL), GL_ERR_ARG);
    setenv("GENLOOP_BACKEND", "generic", 1);
    cr_expect_str_eq(gl_backend_default(), "generic");
    cr_assert_eq(gl_model_load(&m, path, NULL, &err), GL_OK, "%s", err.msg);
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    cr_expect_str_eq(mi.backend, "generic");
    gl_model_free(m);
    /* an explicit backend wins over the environment */
    const char *names[16];
    const int nb = gl_backend_list(names, 16);
    const char *best = names[0];
    for (int i = 0; i < nb; i++)
        if (gl_backend_check(names[i], NULL) == GL_OK)
            best = names[i];
    m = load("stories260K", best);
    gl_model_get_info(m, &mi);
    cr_expect_str_eq(mi.backend, best);
    gl_model_free(m);
    unsetenv("GENLOOP_BACKEND");
    cr_expect_eq(gl_backend_check(gl_backend_default(), NULL), GL_OK);

    /* end to end: the CLI reports and uses the variable's choice */
    run_out *r = malloc(sizeof *r);
    setenv("GENLOOP_BACKEND", "generic", 1);
    RUN(r, NULL, "info");
    cr_expect(strstr(r->out, "\nbackend: generic\n"), "%s", r->out);
    setenv("GENLOOP_BACKEND", "no-such-isa", 1);
    RUN(r, NULL, "run", "-m", path, "-p", "x", "-n", "1");
    cr_expect_eq(r->status, 1);
    cr_expect(strstr(r->err, "genloop: error:") && strstr(r->err, "no-such-isa"), "%s", r->err);
    unsetenv("GENLOOP_BACKEND");
    free(r);
}

/* GENLOOP_TUNE picks the decode tune (src/tune.h): every preset, with each
 * product width, gives the same logits bit for bit on every backend
 * and thread count (the tunes change prefetches, streams and layouts, never
 * arithmetic); a bad name fails the load naming the presets. */
Test(api, tune_from_the_environment)
{
    const char *tunes[] = { "default", "default+ymm", "zen",      "zen+ymm",
                            "zen+zmm", "zen4",        "zen4+zmm", "default+ymm-q4_0" };
    const int n_tunes = sizeof tunes / sizeof tunes[0];
    const char *models[] = { "stories260K-mixQ4_0", "stories260K-mixQ8_0" };
    const int32_t ids[8] = { 1, 403, 407, 261, 378, 432, 383, 286 };
    const char *names[16];
    const int nb = gl_backend_list(names, 16);
    for (int mi = 0; mi < 2; mi++)
        for (int b = 0; b < nb; b++) {
            if (gl_backend_check(names[b], NULL) != GL_OK)
                continue;
            float *ref = NULL;
            for (int t = 0; t < n_tunes; t++)
                for (int nth = 1; nth <= 2; nth++) {
                    setenv("GENLOOP_TUNE", tunes[t], 1);
                    cr_expect_str_eq(gl_tune_default(), tunes[t]);
                    gl_model *m = load(models[mi], names[b]);
                    const int V = gl_model_n_vocab(m);
                    gl_ctx_params cp = gl_ctx_default_params();
                    cp.n_ctx = 32;
                    cp.n_threads = nth;
                    gl_ctx *c;
                    gl_error err;
                    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
                    float *lg = malloc(sizeof *lg * (size_t)V * 8);
                    cr_assert_eq(gl_ctx_eval(c, ids, 8, lg, true, &err), GL_OK, "%s", err.msg);
                    if (!ref) {
                        ref = lg;
                    } else {
                        cr_expect_eq(memcmp(lg, ref, sizeof *lg * (size_t)V * 8), 0,
                                     "%s, backend %s, tune %s, %d threads: logits differ",
                                     models[mi], names[b], tunes[t], nth);
                        free(lg);
                    }
                    gl_ctx_free(c);
                    gl_model_free(m);
                }
            free(ref);
        }
    char desc[384];
    gl_error err;
    cr_expect_eq(gl_tune_describe("zen+ymm", desc, sizeof desc, &err), GL_OK, "%s", err.msg);
    cr_expect(strstr(desc, "zen+ymm"), "%s", desc);
#if defined(__x86_64__) || defined(__i386__)
    cr_expect(strstr(desc, "256-bit") && strstr(desc, "prefetcht0"), "%s", desc);
#endif
    cr_expect_eq(gl_tune_describe("zen4", desc, sizeof desc, &err), GL_OK, "%s", err.msg);
#if defined(__x86_64__) || defined(__i386__)
    cr_expect(strstr(desc, "Zen 4") && strstr(desc, "hardware prefetch alone") &&
                  strstr(desc, "1 stream per thread") && strstr(desc, "512-bit Q4_0/Q8_0") &&
                  strstr(desc, "prefill and batches prefetcht1 4096 B ahead (K-quants 8192 B), "
                               "each line once"),
              "%s", desc);
#endif
    cr_expect_eq(gl_tune_describe("zen+ymm-q4_0", desc, sizeof desc, &err), GL_OK, "%s", err.msg);
    cr_expect(strstr(desc, "zen+ymm-q4_0"), "%s", desc);
    setenv("GENLOOP_TUNE", "no-such-core", 1);
    gl_model *m;
    cr_expect_eq(gl_model_load(&m, model_path("stories260K"), NULL, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "GENLOOP_TUNE") && strstr(err.msg, "no-such-core") &&
                  strstr(err.msg, "zen"),
              "%s", err.msg);
    setenv("GENLOOP_TUNE", "zen+xmm", 1);
    cr_expect_eq(gl_model_load(&m, model_path("stories260K"), NULL, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "+xmm"), "%s", err.msg);
    cr_expect_eq(gl_tune_describe("zen+xmm", desc, sizeof desc, &err), GL_ERR_ARG);

    /* the CLI reports the tune and refuses a bad one */
    run_out *r = malloc(sizeof *r);
    setenv("GENLOOP_TUNE", "zen+ymm", 1);
    RUN(r, NULL, "info");
    cr_expect(strstr(r->out, "\ntune: zen+ymm (") && strstr(r->out, "\ncpu: "), "%s", r->out);
    setenv("GENLOOP_TUNE", "no-such-core", 1);
    RUN(r, NULL, "run", "-m", model_path("stories260K"), "-p", "x", "-n", "1");
    cr_expect_eq(r->status, 1);
    cr_expect(strstr(r->err, "genloop: error:") && strstr(r->err, "no-such-core"), "%s", r->err);
    unsetenv("GENLOOP_TUNE");
    RUN(r, NULL, "info");
    cr_expect(strstr(r->out, "\ntune: "), "%s", r->out);
    free(r);
}

/* GENLOOP_REPACK=0 / all / unset: the same logits, and repacking happens
 * exactly when asked (Q4_0 / Q8_0 matrices, backend with packed kernels or
 * "all"). */
Test(api, repack_from_the_environment)
{
    const char *backends[] = { "generic", NULL };
    const char *modes[] = { "0", "all", NULL };
    const int32_t ids[8] = { 1, 403, 407, 261, 378, 432, 383, 286 };
    float *ref = NULL;
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 3; k++) {
            if (modes[k])
                setenv("GENLOOP_REPACK", modes[k], 1);
            else
                unsetenv("GENLOOP_REPACK");
            gl_model *m = load("stories260K-mixQ4_0", backends[b]);
            const int V = gl_model_n_vocab(m);
            if (modes[k] && !strcmp(modes[k], "0"))
                cr_expect_eq(m->repack_bytes, 0, "GENLOOP_REPACK=0 repacked");
            if (modes[k] && !strcmp(modes[k], "all"))
                cr_expect_gt(m->repack_bytes, 0, "GENLOOP_REPACK=all did not repack");
            if (!modes[k] && backends[b] && !strcmp(backends[b], "generic"))
                cr_expect_eq(m->repack_bytes, 0, "generic repacked without being asked");
            gl_ctx *c = make_ctx(m, 1, 32);
            float *lg = malloc(sizeof *lg * (size_t)V * 8);
            gl_error err;
            cr_assert_eq(gl_ctx_eval(c, ids, 8, lg, true, &err), GL_OK, "%s", err.msg);
            if (!ref)
                ref = lg;
            else {
                cr_expect_eq(memcmp(lg, ref, sizeof *lg * (size_t)V * 8), 0,
                             "backend %s, GENLOOP_REPACK=%s: logits differ",
                             backends[b] ? backends[b] : "default", modes[k] ? modes[k] : "");
                free(lg);
            }
            gl_ctx_free(c);
            gl_model_free(m);
            if (b == 0 && k == 2) {
                free(ref); /* the default backend is compared with itself */
                ref = NULL;
            }
        }
    free(ref);
    unsetenv("GENLOOP_REPACK");
}

/* F32 matrices (no packed layout) move into the arena as they are, for the
 * huge pages: the same bytes, so the same logits as read from the file
 * (GENLOOP_REPACK=0), and nothing counted as repacked. */
Test(api, float_matrices_copied_bit_for_bit)
{
    const int32_t ids[8] = { 1, 403, 407, 261, 378, 432, 383, 286 };
    float *lg[2] = { NULL, NULL };
    for (int k = 0; k < 2; k++) {
        if (k)
            setenv("GENLOOP_REPACK", "0", 1);
        else
            unsetenv("GENLOOP_REPACK");
        gl_model *m = load("stories260K", NULL);
        const int V = gl_model_n_vocab(m);
        if (k == 0) {
            cr_expect_gt(m->copied_bytes, 0, "no F32 matrix copied");
            cr_expect_eq(m->repack_bytes, 0, "an F32 matrix counted as repacked");
        } else {
            cr_expect_eq(m->copied_bytes, 0, "GENLOOP_REPACK=0 copied");
        }
        lg[k] = logits_of_8(m, ids);
        if (k)
            cr_expect_eq(memcmp(lg[0], lg[1], sizeof *lg[0] * (size_t)V * 8), 0,
                         "copied F32 matrices changed the logits");
        gl_model_free(m);
    }
    free(lg[0]);
    free(lg[1]);
    unsetenv("GENLOOP_REPACK");
}

/* The token embedding's rows, wherever the lookups read them: a tied
 * output's packed copy (unpacked row by row) or plain copy (the same
 * bytes), an embedding's own copy, or the file. Every row equals the
 * file's, and the logits equal those of the model read from the file
 * (GENLOOP_REPACK=0). */
Test(api, embedding_rows_from_a_tied_copy)
{
    static const struct {
        const char *model, *backend, *repack;
        int from_output; /* 1: unpacked from the output's layout, 2: its plain copy */
    } cases[] = {
        { "synthetic-gemma2-Q8_0", NULL, NULL, 1 },
        { "synthetic-gemma2-Q8_0", "generic", "all", 1 },
        { "synthetic-gemma2-F16", NULL, NULL, 2 },
        { "stories260K-pad256-Q4_K_M", NULL, NULL, 0 }, /* an embedding of its own, copied */
    };
    const int32_t ids[8] = { 1, 403, 407, 261, 378, 432, 383, 286 };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float *lg[2] = { NULL, NULL };
        for (int k = 0; k < 2; k++) {
            if (k == 1)
                setenv("GENLOOP_REPACK", "0", 1);
            else if (cases[i].repack)
                setenv("GENLOOP_REPACK", cases[i].repack, 1);
            else
                unsetenv("GENLOOP_REPACK");
            gl_model *m = load(cases[i].model, cases[i].backend);
            const int V = gl_model_n_vocab(m), dim = m->cfg.dim;
            if (k == 0) {
                cr_expect_eq(m->output_tied, cases[i].from_output != 0, "%s", cases[i].model);
                cr_expect_eq(m->embd_from_output, cases[i].from_output == 1, "%s", cases[i].model);
                if (cases[i].from_output == 2)
                    cr_expect_eq(m->tok_embd.data, m->output.data,
                                 "%s: the embedding is not read from the output's copy",
                                 cases[i].model);
                const gguf_tensor *t = gguf_find_tensor(&m->gguf, "token_embd.weight");
                if (cases[i].from_output == 0)
                    cr_expect_neq(m->tok_embd.data, t->data,
                                  "%s: the embedding was not copied into huge pages",
                                  cases[i].model);
                float *x = malloc(sizeof *x * (size_t)dim), *want = malloc(sizeof *want * dim);
                void *scratch = malloc(m->tok_embd.row_bytes);
                int bad = -1;
                for (int tok = 0; tok < V && bad < 0; tok++) {
                    gl_model_embed_row(m, &m->k, tok, x, scratch);
                    m->k.dequant[t->type](
                        (const char *)t->data + (size_t)tok * m->tok_embd.row_bytes, want, dim);
                    if (memcmp(x, want, sizeof *x * (size_t)dim))
                        bad = tok;
                }
                cr_expect_eq(bad, -1, "%s: embedding row %d differs from the file's",
                             cases[i].model, bad);
                free(x);
                free(want);
                free(scratch);
            }
            lg[k] = logits_of_8(m, ids);
            if (k)
                cr_expect_eq(memcmp(lg[0], lg[1], sizeof *lg[0] * (size_t)V * 8), 0,
                             "%s: logits differ from the file-read model's", cases[i].model);
            gl_model_free(m);
        }
        free(lg[0]);
        free(lg[1]);
    }
    unsetenv("GENLOOP_REPACK");
}

/* Under AddressSanitizer a failed allocation returns NULL, as libc's
 * does, instead of ending the process: short_of_memory_runs_from_the_mapping
 * tests what the library does then. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

/* The address space this process maps now, in bytes (0: unknown). */
static size_t mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb << 10;
}

/* Short of memory for the arena of repacked and copied matrices (here an
 * address-space limit with room for the file's mapping but not for a copy
 * of its matrices), a model still loads: its matrices are read from the
 * mapping, the load warning says so, and the logits are the same. */
Test(api, short_of_memory_runs_from_the_mapping)
{
    const char *types[] = { "f32", "q8_0" };
    const int32_t ids[8] = { 1, 5, 17, 200, 42, 7, 99, 250 };
    for (int t = 0; t < 2; t++) {
        char path[96], cmd[512];
        snprintf(path, sizeof path, "/tmp/gl_api_short_%s_%ld.gguf", types[t], (long)getpid());
        /* ~130 MB as F32, ~34 MB as Q8_0, nearly all in products */
        snprintf(cmd, sizeof cmd,
                 "%s synth --shape custom --dim 1024 --layers 2 --heads 8 --kv-heads 8 "
                 "--ffn 4096 --vocab 300 --ctx 64 --type %s -o %s",
                 cli_bin(), types[t], path);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        struct stat sb;
        cr_assert_eq(stat(path, &sb), 0);
        float *lg[2];
        for (int k = 0; k < 2; k++) {
            struct rlimit was;
            cr_assert_eq(getrlimit(RLIMIT_AS, &was), 0);
            if (k) {
                /* 24 MB beyond the mapping: less than either arena */
                struct rlimit lim = was;
                lim.rlim_cur = mapped_bytes() + (size_t)sb.st_size + (24u << 20);
                cr_assert_gt(lim.rlim_cur, (size_t)sb.st_size);
                cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
            }
            gl_model *m;
            gl_error err;
            const gl_status st = gl_model_load(&m, path, NULL, &err);
            setrlimit(RLIMIT_AS, &was);
            cr_assert_eq(st, GL_OK, "%s (limited: %d): %s", types[t], k, err.msg);
            const char *w = gl_model_load_warning(m);
            gl_model_info mi;
            gl_model_get_info(m, &mi);
            cr_expect(mi.repacked_bytes == m->repack_bytes && mi.copied_bytes == m->copied_bytes,
                      "%s: gl_model_info's arena bytes", types[t]);
            if (k) {
                cr_expect(w && strstr(w, "not enough memory"), "%s: warning %s", types[t],
                          w ? w : "(none)");
                cr_expect_eq(m->repack_bytes + m->copied_bytes, 0, "%s: arena used", types[t]);
            } else {
                cr_expect(!w, "%s: %s", types[t], w);
                cr_expect_gt(m->repack_bytes + m->copied_bytes, 0, "%s: no arena", types[t]);
            }
            const int V = gl_model_n_vocab(m);
            lg[k] = logits_of_8(m, ids);
            if (k)
                cr_expect_eq(memcmp(lg[0], lg[1], sizeof *lg[0] * (size_t)V * 8), 0,
                             "%s: the mapping's logits differ from the arena's", types[t]);
            gl_model_free(m);
        }
        free(lg[0]);
        free(lg[1]);
        unlink(path);
    }
}

/* ---- CLI features ------------------------------------------------------- */

Test(api, cli_no_echo_and_cache_type)
{
    const char *path = model_path("stories260K");
    run_out *r = malloc(sizeof *r);
    RUN(r, NULL, "run", "-m", path, "-p", "Once upon a time", "-n", "6", "--temp", "0");
    cr_assert_eq(r->status, 0, "%s", r->err);
    cr_expect(!strncmp(r->out, "Once upon a time, there was", 27), "%s", r->out);
    char echoed[256];
    snprintf(echoed, sizeof echoed, "%s", r->out + strlen("Once upon a time"));
    RUN(r, NULL, "run", "-m", path, "-p", "Once upon a time", "-n", "6", "--temp", "0",
        "--no-echo");
    cr_assert_eq(r->status, 0, "%s", r->err);
    cr_expect_str_eq(r->out, echoed, "--no-echo must print only the generated text");
    const char *types[] = { "f16", "f32", "q8_0" };
    for (int i = 0; i < 3; i++) {
        RUN(r, NULL, "run", "-m", path, "-p", "Once upon a time", "-n", "6", "--temp", "0",
            "--no-echo", "--cache-type", types[i]);
        cr_expect_eq(r->status, 0, "--cache-type %s: %s", types[i], r->err);
        /* the greedy story does not hinge on the cache precision here */
        cr_expect_str_eq(r->out, echoed, "--cache-type %s", types[i]);
    }
    RUN(r, NULL, "run", "-m", path, "-p", "x", "--cache-type", "q4_0");
    cr_expect_eq(r->status, 2);
    cr_expect(strstr(r->err, "genloop: error: --cache-type"), "%s", r->err);
    free(r);
}

Test(api, cli_trained_context_warning)
{
    char path[64], cmd[512];
    snprintf(path, sizeof path, "/tmp/gl_api_ctx32_%ld.gguf", (long)getpid());
    snprintf(cmd, sizeof cmd,
             "%s synth --shape custom --dim 64 --layers 1 --heads 2 --kv-heads 2 --ffn 64 "
             "--vocab 300 --ctx 32 --type f32 -o %s",
             cli_bin(), path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    run_out *r = malloc(sizeof *r);
    /* 6 prompt tokens + 40: past the 32 trained positions (seed 1 draws no EOS) */
    RUN(r, NULL, "run", "-m", path, "-p", "hello", "-n", "40", "--temp", "1", "--top-k", "0",
        "--top-p", "1", "--min-p", "0", "--seed", "1", "-c", "16");
    cr_expect_eq(r->status, 0, "%s", r->err);
    const char *w = strstr(r->err, "genloop: warning: generation has passed the 32 positions");
    cr_expect(w, "%s", r->err);
    cr_expect(w && !strstr(w + 1, "genloop: warning"), "warned twice: %s", r->err);
    cr_expect(strstr(r->err, "stop length"), "%s", r->err);
    /* 6 + 20 stays within them: no warning */
    RUN(r, NULL, "run", "-m", path, "-p", "hello", "-n", "20", "--temp", "1", "--top-k", "0",
        "--top-p", "1", "--min-p", "0", "--seed", "1", "-c", "16");
    cr_expect_eq(r->status, 0, "%s", r->err);
    cr_expect(!strstr(r->err, "warning"), "%s", r->err);
    free(r);
    unlink(path);
}
