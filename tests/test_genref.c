/* The generation loop against an independent oracle.
 *
 * The model is stories260K's vocabulary with its forward pass replaced (an
 * internal hook, model.h's gl_model.forward) by a fake whose logits are a
 * pure function of the token history: so the expected tokens follow from the
 * definitions alone. ref_generate below is that definition, written out
 * plainly: greedy argmax (lowest id on ties) after the repetition penalty
 * over the last N tokens of prompt + generated text, then EOS, stop strings
 * (the text is cut before the earliest match), length and context stops.
 * gl_generate and the batching engine must agree with it token for token and
 * byte for byte, penalty windows straddling the prompt, stop strings split
 * across tokens and multi-byte UTF-8 included. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "context.h"
#include "genloop.h"
#include "shared_data.h"

enum { MAX_SEQ = 8, MAX_POS = 1024, MAX_GEN = 256, MAX_TEXT = 8192 };

/* ---- the fake model ---------------------------------------------------- */

static int32_t g_hist[MAX_SEQ][MAX_POS]; /* tokens each sequence was fed, a
                                          * ring of the latest MAX_POS */
static int32_t g_cand[40];               /* tokens the fake model favours */
static int g_n_cand, g_eos, g_vocab;
static bool g_no_eos; /* EOS never wins */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 32);
}

/* Logits after the history h[0..n): a hash of the last four tokens and the
 * length decides a score in [0, 4) for each favoured token (scores on a
 * 1/64 grid, so penalties reorder them often and ties happen); EOS scores
 * lower; every other token -8. */
static void fake_logits_ring(const int32_t *h, int64_t n, int ring, float *out)
{
    uint64_t key = (uint64_t)n;
    for (int64_t i = n - 4 < 0 ? 0 : n - 4; i < n; i++)
        key = mix(key * 31 + (uint64_t)h[i % ring]);
    for (int v = 0; v < g_vocab; v++)
        out[v] = -8.0f;
    for (int i = 0; i < g_n_cand; i++)
        out[g_cand[i]] = (float)(mix(key + (uint64_t)i) % 256) / 64.0f;
    out[g_eos] = g_no_eos ? -100.0f : (float)(mix(key ^ 0xe05) % 256) / 64.0f - 3.0f;
}

static void fake_logits(const int32_t *h, int n, float *out)
{
    fake_logits_ring(h, n, n > 0 ? n : 1, out);
}

static gl_status fake_forward(gl_ctx *c, const gl_batch *b, gl_error *err)
{
    (void)err;
    for (int i = 0; i < b->n; i++)
        g_hist[c->row_seq[i]][c->row_pos[i] % MAX_POS] = b->tokens[i];
    for (int k = 0; k < b->n_out; k++) {
        const int row = b->out_rows[k], s = c->row_seq[row];
        fake_logits_ring(g_hist[s], c->row_pos[row] + 1, MAX_POS, b->logits + (size_t)k * g_vocab);
    }
    return GL_OK;
}

static gl_model *load_fake(void)
{
    char path[1024];
    td_need_path(path, sizeof path, "models/stories260K.gguf");
    gl_model *m;
    gl_error err;
    cr_assert_eq(gl_model_load(&m, path, NULL, &err), GL_OK, "%s", err.msg);
    m->forward = fake_forward;
    g_vocab = gl_model_n_vocab(m);
    g_eos = gl_model_eos(m);
    /* favoured: some word pieces, a space, and the bytes of "é" (C3 A9)
     * and "—" (E2 80 94), which the vocabulary only has as byte tokens */
    const char *text = " the cat sat, and Lily ran. é—";
    int32_t ids[64];
    int n = gl_tokenize(m, text, strlen(text), false, ids, 64, &err);
    cr_assert(n > 10 && n < 40, "%d tokens", n);
    g_n_cand = 0;
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int j = 0; j < g_n_cand; j++)
            dup |= g_cand[j] == ids[i];
        if (!dup)
            g_cand[g_n_cand++] = ids[i];
    }
    return m;
}

/* ---- the oracle -------------------------------------------------------- */

typedef struct outcome {
    int32_t tokens[MAX_GEN];
    int n;
    char text[MAX_TEXT];
    size_t text_len;
    gl_stop_reason stop;
} outcome;

typedef struct gen_case {
    int n_prompt;
    int n_predict;
    float penalty;
    int last_n; /* -1: the whole history */
    const char *stops[3];
    int n_stops;
    bool ring;
    int n_ctx;
} gen_case;

static void text_add(outcome *o, const char *s, size_t n)
{
    cr_assert_lt(o->text_len + n, (size_t)MAX_TEXT);
    memcpy(o->text + o->text_len, s, n);
    o->text_len += n;
    o->text[o->text_len] = '\0';
}

static void ref_generate(const gl_model *m, const int32_t *prompt, const gen_case *gc, outcome *o)
{
    int32_t h[MAX_POS];
    int n = gc->n_prompt;
    memcpy(h, prompt, sizeof *h * (size_t)n);
    memset(o, 0, sizeof *o);
    gl_detok d;
    gl_detok_init(&d);
    float *z = malloc(sizeof *z * (size_t)g_vocab);
    char piece[64];
    for (;;) {
        if (gc->n_predict >= 0 && o->n >= gc->n_predict) {
            o->stop = GL_STOP_LENGTH;
            break;
        }
        fake_logits(h, n, z);
        /* repetition penalty: each distinct token among the last N of the
         * history once; a positive logit is divided, a negative multiplied */
        const int win = gc->last_n < 0 || gc->last_n > n ? n : gc->last_n;
        for (int t = 0; t < g_vocab && gc->penalty != 1.0f; t++) {
            bool seen = false;
            for (int i = n - win; i < n && !seen; i++)
                seen = h[i] == t;
            if (seen)
                z[t] = z[t] > 0 ? z[t] / gc->penalty : z[t] * gc->penalty;
        }
        int32_t tok = 0;
        for (int t = 1; t < g_vocab; t++)
            if (z[t] > z[tok])
                tok = t;
        if (tok == g_eos) {
            o->stop = GL_STOP_EOS;
            break;
        }
        cr_assert_lt(n, MAX_POS);
        h[n++] = tok;
        o->tokens[o->n++] = tok;
        text_add(o, piece, (size_t)gl_detok_push(m, &d, tok, piece, sizeof piece));
        const char *cut = NULL;
        for (int i = 0; i < gc->n_stops; i++) {
            const char *hit = strstr(o->text, gc->stops[i]);
            if (hit && (!cut || hit < cut))
                cut = hit;
        }
        if (cut) {
            o->text_len = (size_t)(cut - o->text);
            o->text[o->text_len] = '\0';
            o->stop = GL_STOP_STRING;
            break;
        }
        if (gc->n_predict >= 0 && o->n >= gc->n_predict) {
            o->stop = GL_STOP_LENGTH;
            break;
        }
        /* the new token would be fed at position n - 1 */
        if (!gc->ring && n - 1 >= gc->n_ctx) {
            o->stop = GL_STOP_CONTEXT;
            break;
        }
    }
    if (o->stop != GL_STOP_STRING)
        text_add(o, piece, (size_t)gl_detok_flush(&d, piece, sizeof piece));
    free(z);
}

/* ---- the library's loops ----------------------------------------------- */

static bool collect_text(void *user, int32_t id, const char *text, size_t len)
{
    (void)id;
    text_add(user, text, len);
    return true;
}

static gl_gen_params gen_params(const gen_case *gc)
{
    gl_gen_params gp = gl_gen_default_params();
    gp.n_predict = gc->n_predict;
    gp.ring = gc->ring;
    gp.sampling.temp = 0;
    gp.sampling.repeat_penalty = gc->penalty;
    gp.sampling.repeat_last_n = gc->last_n;
    gp.stops = gc->stops;
    gp.n_stops = gc->n_stops;
    return gp;
}

static void lib_generate(gl_model *m, const int32_t *prompt, const gen_case *gc, outcome *o)
{
    memset(o, 0, sizeof *o);
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = gc->n_ctx;
    cp.n_threads = 1;
    gl_ctx *c;
    gl_error err;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    gl_gen_params gp = gen_params(gc);
    gl_gen_result res;
    cr_assert_eq(
        gl_generate(c, prompt, gc->n_prompt, &gp, collect_text, o, o->tokens, MAX_GEN, &res, &err),
        GL_OK, "%s", err.msg);
    o->n = res.n_generated;
    o->stop = res.stop;
    gl_ctx_free(c);
}

static void expect_same(const outcome *want, const outcome *got, const char *who, int ci)
{
    cr_expect_eq(got->stop, want->stop, "%s case %d: stop %s, want %s", who, ci,
                 gl_stop_reason_name(got->stop), gl_stop_reason_name(want->stop));
    cr_expect_eq(got->n, want->n, "%s case %d: %d tokens, want %d", who, ci, got->n, want->n);
    for (int i = 0; i < want->n && i < got->n; i++)
        if (got->tokens[i] != want->tokens[i]) {
            cr_expect_eq(got->tokens[i], want->tokens[i], "%s case %d: token %d", who, ci, i);
            break;
        }
    cr_expect(got->text_len == want->text_len && !memcmp(got->text, want->text, want->text_len),
              "%s case %d: text\n  '%s' (%zu bytes), want\n  '%s' (%zu bytes)", who, ci, got->text,
              got->text_len, want->text, want->text_len);
}

/* ---- the cases --------------------------------------------------------- */

static const int32_t *prompt_of(int n)
{
    static int32_t p[64];
    for (int i = 0; i < n; i++)
        p[i] = g_cand[(i * 7) % g_n_cand];
    return p;
}

/* A stop string made of the last byte of generated token k and the first
 * byte of token k + 1 of an unstopped run: it straddles the two. */
static void straddling_stop(const gl_model *m, const outcome *free_run, int k, char *out)
{
    char a[64], b[64];
    gl_detok d;
    gl_detok_init(&d);
    int la = 0;
    for (int i = 0; i <= k; i++)
        la = gl_detok_push(m, &d, free_run->tokens[i], a, sizeof a);
    int lb = gl_detok_push(m, &d, free_run->tokens[k + 1], b, sizeof b);
    cr_assert(la > 0 && lb > 0, "tokens %d and %d are partial characters", k, k + 1);
    out[0] = a[la - 1];
    out[1] = b[0];
    out[2] = '\0';
}

Test(genref, loop_matches_the_definitions)
{
    gl_model *m = load_fake();
    char straddle[3][4];
    gen_case cases[] = {
        /* penalty windows: shorter than the prompt, straddling it, longer
         * than everything, the whole history, off */
        { .n_prompt = 12, .n_predict = 60, .penalty = 1.7f, .last_n = 5, .ring = true },
        { .n_prompt = 12, .n_predict = 60, .penalty = 2.5f, .last_n = 16, .ring = true },
        { .n_prompt = 6, .n_predict = 60, .penalty = 1.3f, .last_n = 200, .ring = true },
        { .n_prompt = 9, .n_predict = 60, .penalty = 1.5f, .last_n = -1, .ring = true },
        { .n_prompt = 9, .n_predict = 60, .penalty = 1.0f, .last_n = 64, .ring = true },
        { .n_prompt = 20, .n_predict = 60, .penalty = 1.9f, .last_n = 21, .ring = true },
        /* the context fills with the ring off */
        { .n_prompt = 10, .n_predict = 100, .penalty = 1.4f, .last_n = 8, .n_ctx = 30 },
        /* stop strings (filled in below) */
        { .n_prompt = 12, .n_predict = 60, .penalty = 1.7f, .last_n = 5, .ring = true },
        { .n_prompt = 12, .n_predict = 60, .penalty = 2.5f, .last_n = 16, .ring = true },
        { .n_prompt = 9, .n_predict = 60, .penalty = 1.5f, .last_n = -1, .ring = true },
        { .n_prompt = 12,
          .n_predict = 60,
          .penalty = 1.7f,
          .last_n = 5,
          .ring = true,
          .stops = { "\xc3\xa9", "\xe2\x80\x94" },
          .n_stops = 2 },
        /* a heavy penalty over everything: the candidates wear out, EOS wins */
        { .n_prompt = 12, .n_predict = 250, .penalty = 4.0f, .last_n = -1, .ring = true },
    };
    const int n_cases = (int)(sizeof cases / sizeof cases[0]);
    outcome *want = malloc(sizeof *want), *got = malloc(sizeof *got);
    int seen_stop[8] = { 0 }, n_multibyte = 0;
    for (int ci = 0; ci < n_cases; ci++) {
        gen_case *gc = &cases[ci];
        if (!gc->n_ctx)
            gc->n_ctx = 256;
        if (ci >= 7 && ci < 10) {
            /* stop strings cut from the unstopped run of case ci - 7 */
            ref_generate(m, prompt_of(gc->n_prompt), gc, want);
            cr_assert_gt(want->n, 16, "case %d: the free run is too short", ci);
            straddling_stop(m, want, 4 + ci, straddle[ci - 7]);
            gc->stops[0] = "no such text";
            gc->stops[1] = straddle[ci - 7];
            gc->n_stops = 2;
        }
        ref_generate(m, prompt_of(gc->n_prompt), gc, want);
        seen_stop[want->stop]++;
        n_multibyte += strstr(want->text, "\xc3\xa9") != NULL;
        lib_generate(m, prompt_of(gc->n_prompt), gc, got);
        expect_same(want, got, "gl_generate", ci);
    }
    /* the cases exercise what they claim to */
    cr_expect_gt(seen_stop[GL_STOP_LENGTH], 0);
    cr_expect_gt(seen_stop[GL_STOP_EOS], 0);
    cr_expect_gt(seen_stop[GL_STOP_STRING], 3);
    cr_expect_gt(seen_stop[GL_STOP_CONTEXT], 0);
    cr_expect_gt(n_multibyte, 0, "no case generated a multi-byte character");
    free(want);
    free(got);
    gl_model_free(m);
}

/* The engine, every case at once in one batch, agrees with the oracle too. */
Test(genref, engine_matches_the_definitions)
{
    gl_model *m = load_fake();
    gen_case cases[] = {
        { .n_prompt = 12, .n_predict = 50, .penalty = 1.7f, .last_n = 5, .ring = true },
        { .n_prompt = 12, .n_predict = 40, .penalty = 2.5f, .last_n = 16, .ring = true },
        { .n_prompt = 9, .n_predict = 45, .penalty = 1.5f, .last_n = -1, .ring = true },
        { .n_prompt = 20,
          .n_predict = 60,
          .penalty = 1.9f,
          .last_n = 21,
          .ring = true,
          .stops = { "\xc3\xa9" },
          .n_stops = 1 },
        { .n_prompt = 10, .n_predict = 100, .penalty = 1.4f, .last_n = 8, .ring = false },
    };
    enum { N = sizeof cases / sizeof cases[0] };
    gl_engine_params ep = gl_engine_default_params();
    ep.max_seqs = 3; /* fewer slots than requests: some wait */
    ep.n_ctx = 30;
    ep.n_threads = 1;
    ep.max_batch_tokens = 7; /* prompts in chunks */
    gl_engine *e;
    gl_error err;
    cr_assert_eq(gl_engine_create(&e, m, &ep, &err), GL_OK, "%s", err.msg);
    int64_t ids[N];
    for (int ci = 0; ci < N; ci++) {
        cases[ci].n_ctx = 30;
        gl_gen_params gp = gen_params(&cases[ci]);
        gl_request r = gl_request_default();
        r.prompt_tokens = prompt_of(cases[ci].n_prompt);
        r.n_prompt_tokens = cases[ci].n_prompt;
        r.n_predict = gp.n_predict;
        r.ring = gp.ring;
        r.sampling = gp.sampling;
        r.stops = gp.stops;
        r.n_stops = gp.n_stops;
        cr_assert_eq(gl_engine_submit(e, &r, &ids[ci], &err), GL_OK, "%s", err.msg);
    }
    while (gl_engine_busy(e))
        cr_assert_eq(gl_engine_step(e, &err), GL_OK, "%s", err.msg);
    outcome *want = malloc(sizeof *want), *got = malloc(sizeof *got);
    for (int ci = 0; ci < N; ci++) {
        ref_generate(m, prompt_of(cases[ci].n_prompt), &cases[ci], want);
        gl_request_status st;
        cr_assert_eq(gl_engine_status(e, ids[ci], &st, &err), GL_OK, "%s", err.msg);
        memset(got, 0, sizeof *got);
        got->n = st.n_generated;
        memcpy(got->tokens, st.tokens, sizeof *st.tokens * (size_t)st.n_generated);
        text_add(got, st.text, st.text_len);
        got->stop = st.stop;
        expect_same(want, got, "engine", ci);
    }
    free(want);
    free(got);
    gl_engine_free(e);
    gl_model_free(m);
}

/* An allocation that fails while a generated token is stored ends that
 * request as GL_STOP_ERROR and makes the step return GL_ERR_NOMEM with a
 * message; it is never passed off as another stop reason. The address space
 * is capped at what the process has mapped, just before the token buffer
 * must grow. */
Test(genref, out_of_memory_ends_the_request)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("address sanitizer: an address-space limit breaks its shadow memory");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
    cr_skip_test("sanitizer: an address-space limit breaks its shadow memory");
#endif
#endif
    gl_model *m = load_fake();
    g_no_eos = true;
    gl_engine_params ep = gl_engine_default_params();
    ep.max_seqs = 1;
    ep.n_ctx = 64;
    ep.n_threads = 1;
    ep.max_batch_tokens = 4095;
    gl_engine *e;
    gl_error err;
    cr_assert_eq(gl_engine_create(&e, m, &ep, &err), GL_OK, "%s", err.msg);
    /* the request's token buffer doubles from 64: 131072 slots hold this
     * prompt and 3 generated tokens; the 4th needs a new megabyte */
    enum { N_PROMPT = 131072 - 3 };
    int32_t *prompt = malloc(sizeof *prompt * N_PROMPT);
    for (int i = 0; i < N_PROMPT; i++)
        prompt[i] = g_cand[i % g_n_cand];
    gl_request r = gl_request_default();
    r.prompt_tokens = prompt;
    r.n_prompt_tokens = N_PROMPT;
    r.n_predict = -1;
    r.sampling.temp = 0;
    int64_t id;
    cr_assert_eq(gl_engine_submit(e, &r, &id, &err), GL_OK, "%s", err.msg);
    free(prompt);

    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        cr_skip_test("no /proc/self/status to size the address-space limit");
    char line[256];
    unsigned long long vm_kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %llu kB", &vm_kb) == 1)
            break;
    fclose(f);
    cr_assert_gt(vm_kb, 0);
    struct rlimit old, lim;
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)(vm_kb + 256) * 1024; /* room for small heap growth only */
    cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
    gl_status st = GL_OK;
    int steps = 0;
    while (st == GL_OK && gl_engine_busy(e) && steps < 1000) {
        st = gl_engine_step(e, &err);
        steps++;
    }
    setrlimit(RLIMIT_AS, &old); /* before anything else allocates */
    cr_assert_eq(st, GL_ERR_NOMEM, "status %d after %d steps", st, steps);
    cr_expect(strstr(err.msg, "out of memory"), "%s", err.msg);
    gl_request_status rs;
    cr_assert_eq(gl_engine_status(e, id, &rs, &err), GL_OK);
    cr_expect(rs.finished);
    cr_expect_eq(rs.stop, GL_STOP_ERROR, "stop %s", gl_stop_reason_name(rs.stop));
    cr_expect_leq(rs.n_generated, 3);
    cr_expect(!gl_engine_busy(e));
    gl_engine_free(e);
    gl_model_free(m);
}
