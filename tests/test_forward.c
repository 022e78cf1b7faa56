/* The forward pass against the reference implementation's logits and
 * greedy tokens in ../shared/reference, for every backend this CPU runs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genloop.h"
#include "shared_data.h"

/* Worst single step allowed for the Q8_0/Q4_0 files, as the issue asks. */
#define GL_TEST_Q_MAX_STEP 0.05

/* Backends against generic, worst step of 120 (relative RMS of a logit
 * row), about 1.5x what was measured: the integer products are bit-exact
 * (checkkernels), but the float kernels (F32/F16 products, rmsnorm,
 * softmax, attention) round differently per vector width; through the
 * Q8_0 rounding of the next layer's activations a last-bit difference can
 * grow: 1.46% measured on mixQ8_0 (0.10% on the F32 model, 0.06% on F16,
 * 0 on mixQ4_0's reference prompt). README "Backends" quotes these. Since
 * F16 products take their input rounded to F16, as the reference's do
 * (src/forward_llama.c round_input), that rounding is one more place for a
 * last bit to flip: mixQ4_0 (F16 ffn_down) measures 2.43%, mixQ8_0 0. */
#define GL_TEST_XBACKEND_FLOAT 0.0015
#define GL_TEST_XBACKEND_Q     0.035

static gl_model *load(const char *name, const char *backend)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "models/%s.gguf", name);
    td_path(path, sizeof path, rel);
    gl_model_params mp = gl_model_default_params();
    mp.backend = backend;
    gl_model *m = NULL;
    gl_error err;
    cr_assert_eq(gl_model_load(&m, path, &mp, &err), GL_OK, "%s", err.msg);
    return m;
}

static gl_ctx *make_ctx(gl_model *m, int n_ctx, int threads, int keep)
{
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = n_ctx;
    cp.n_threads = threads;
    cp.n_keep = keep;
    gl_ctx *c = NULL;
    gl_error err;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    return c;
}

/* Teacher-forces prompt + greedy[0:steps-1]; returns all rows of logits. */
static float *teacher_force(gl_model *m, const td_ref *r, int steps, int *n_out, int threads)
{
    int n = r->n_prompt + steps - 1;
    int32_t *ids = malloc(sizeof *ids * (size_t)n);
    memcpy(ids, r->prompt_tokens, sizeof *ids * (size_t)r->n_prompt);
    memcpy(ids + r->n_prompt, r->greedy, sizeof *ids * (size_t)(steps - 1));
    gl_ctx *c = make_ctx(m, 512, threads, 0);
    float *lg = malloc(sizeof *lg * (size_t)n * (size_t)r->n_vocab);
    gl_error err;
    cr_assert_eq(gl_ctx_eval(c, ids, n, lg, true, &err), GL_OK, "%s", err.msg);
    gl_ctx_free(c);
    free(ids);
    *n_out = n;
    return lg;
}

/* Checks every prompt of one model; limits are relative RMS / std. */
static void check_model(const char *name, double max_step, double max_mean)
{
    td_need_shared();
    static td_ref refs[8];
    int nr = td_read_refs(name, refs, 8);
    cr_assert_gt(nr, 0, "cannot read reference/%s.jsonl", name);
    const char *backends[8];
    int nb = gl_backend_list(backends, 8);
    for (int bi = 0; bi < nb; bi++) {
        if (gl_backend_check(backends[bi], NULL) != GL_OK)
            continue;
        gl_model *m = load(name, backends[bi]);
        for (int p = 0; p < nr; p++) {
            const td_ref *r = &refs[p];
            size_t nf;
            float *ref = td_read_logits(name, p, &nf);
            cr_assert(ref, "cannot read logits of %s p%d", name, p);
            const int steps = (int)(nf / (size_t)r->n_vocab);
            int n;
            float *lg = teacher_force(m, r, steps, &n, 1);
            double worst = 0, mean = 0;
            int worst_s = 0;
            for (int s = 0; s < steps; s++) {
                double e = td_rel_rms(lg + (size_t)(r->n_prompt - 1 + s) * r->n_vocab,
                                      ref + (size_t)s * r->n_vocab, r->n_vocab);
                mean += e / steps;
                if (e > worst) {
                    worst = e;
                    worst_s = s;
                }
            }
            cr_log_info("%s [%s] p%d: mean %.4f%%, worst %.4f%% at step %d", name, backends[bi], p,
                        100 * mean, 100 * worst, worst_s);
            cr_expect_leq(worst, max_step, "%s [%s] p%d step %d: %.4f%% > %.4f%%", name,
                          backends[bi], p, worst_s, 100 * worst, 100 * max_step);
            cr_expect_leq(mean, max_mean, "%s [%s] p%d mean %.4f%% > %.4f%%", name, backends[bi], p,
                          100 * mean, 100 * max_mean);
            free(lg);
            free(ref);
        }
        gl_model_free(m);
    }
}

Test(reference, logits_f32)
{
    check_model("stories260K", 0.005, 0.005);
}

Test(reference, logits_f16)
{
    check_model("stories260K-F16", 0.005, 0.005);
}

Test(reference, logits_q8_0)
{
    check_model("stories260K-mixQ8_0", GL_TEST_Q_MAX_STEP, 0.015);
}

Test(reference, logits_q4_0)
{
    check_model("stories260K-mixQ4_0", GL_TEST_Q_MAX_STEP, 0.015);
}

typedef struct collect {
    char text[8192];
    size_t len;
} collect;

static bool on_token(void *user, int32_t id, const char *text, size_t len)
{
    collect *c = user;
    (void)id;
    if (c->len + len < sizeof c->text) {
        memcpy(c->text + c->len, text, len);
        c->len += len;
        c->text[c->len] = '\0';
    }
    return true;
}

Test(reference, greedy_tokens_and_story)
{
    td_need_shared();
    static td_ref refs[8];
    int nr = td_read_refs("stories260K", refs, 8);
    cr_assert_gt(nr, 0);
    gl_model *m = load("stories260K", NULL);
    gl_ctx *c = make_ctx(m, 512, 1, 0);
    for (int p = 0; p < nr; p++) {
        gl_gen_params gp = gl_gen_default_params();
        gp.n_predict = 32;
        gp.sampling.temp = 0;
        int32_t out[32];
        gl_gen_result res;
        collect col = { .len = 0 };
        gl_error err;
        cr_assert_eq(gl_generate(c, refs[p].prompt_tokens, refs[p].n_prompt, &gp, on_token, &col,
                                 out, 32, &res, &err),
                     GL_OK, "%s", err.msg);
        cr_assert_eq(res.n_generated, 32);
        for (int i = 0; i < 32; i++)
            cr_assert_eq(out[i], refs[p].greedy[i], "prompt %d token %d: %d != %d", p, i, out[i],
                         refs[p].greedy[i]);
        if (strcmp(refs[p].prompt, "Once upon a time") == 0)
            cr_assert(strstr(col.text, ", there was a little girl named Lily. She loved to play "
                                       "outside in the park."),
                      "story text: %s", col.text);
    }
    gl_ctx_free(c);
    gl_model_free(m);
}

/* Thread and chunking invariance: tests/test_invariance.c. */

/* Every backend's teacher-forced logits agree with the generic backend's at
 * least as tightly as each agrees with the reference. */
static void check_backends_agree(const char *name, double max_step)
{
    td_need_shared();
    static td_ref refs[1];
    cr_assert_gt(td_read_refs(name, refs, 1), 0);
    gl_model *g = load(name, "generic");
    int n;
    const int steps = 120, V = refs[0].n_vocab;
    float *ref = teacher_force(g, &refs[0], steps, &n, 1);
    const char *backends[8];
    const int nb = gl_backend_list(backends, 8);
    for (int bi = 0; bi < nb; bi++) {
        if (!strcmp(backends[bi], "generic") || gl_backend_check(backends[bi], NULL) != GL_OK)
            continue;
        gl_model *m = load(name, backends[bi]);
        float *lg = teacher_force(m, &refs[0], steps, &n, 2);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double e = td_rel_rms(lg + (size_t)i * V, ref + (size_t)i * V, V);
            worst = e > worst ? e : worst;
        }
        cr_log_info("%s: %s vs generic: worst %.5f%%", name, backends[bi], 100 * worst);
        cr_expect_leq(worst, max_step, "%s: %s vs generic %.4f%%", name, backends[bi], 100 * worst);
        free(lg);
        gl_model_free(m);
    }
    free(ref);
    gl_model_free(g);
}

Test(backends, agree_with_generic)
{
    check_backends_agree("stories260K", GL_TEST_XBACKEND_FLOAT);
    check_backends_agree("stories260K-F16", GL_TEST_XBACKEND_FLOAT);
    check_backends_agree("stories260K-mixQ8_0", GL_TEST_XBACKEND_Q);
    check_backends_agree("stories260K-mixQ4_0", GL_TEST_XBACKEND_Q);
}
