#include "genloop.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const float Z5[5] = { 1, 3, 0, 2, -1 };

/* Plain softmax unless a test is about a stage: each test turns its own on. */
static gl_sampler_params plain(void)
{
    gl_sampler_params p = gl_sampler_default_params();
    p.temp = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.repeat_penalty = 1.0f;
    return p;
}

static gl_sampler *make(int n_vocab, const gl_sampler_params *p)
{
    gl_sampler *s = NULL;
    gl_error err = { 0 };
    gl_status st = gl_sampler_create(&s, n_vocab, p, &err);
    cr_assert_eq(st, GL_OK, "create failed: %s", err.msg);
    cr_assert_not_null(s);
    return s;
}

static void probs_of(const gl_sampler_params *p, const float *z, int n, const int32_t *hist,
                     int n_hist, float *out)
{
    gl_sampler *s = make(n, p);
    gl_sampler_probs(s, z, hist, n_hist, out);
    gl_sampler_free(s);
}

static void expect_probs(const float *got, const double *want, int n, double tol)
{
    for (int i = 0; i < n; i++)
        cr_expect(fabs(got[i] - want[i]) <= tol, "token %d: got %.6f want %.6f", i, (double)got[i],
                  want[i]);
}

/* softmax(z / t) over the tokens with keep[i] set, in double. */
static void ref_softmax(const float *z, const int *keep, int n, double t, double *out)
{
    double m = -INFINITY, sum = 0;
    for (int i = 0; i < n; i++)
        if (keep[i] && z[i] > m)
            m = z[i];
    for (int i = 0; i < n; i++) {
        out[i] = keep[i] ? exp((z[i] - m) / t) : 0.0;
        sum += out[i];
    }
    for (int i = 0; i < n; i++)
        out[i] /= sum;
}

Test(sampler, softmax_of_known_logits)
{
    gl_sampler_params p = plain();
    float pr[5];
    probs_of(&p, Z5, 5, NULL, 0, pr);
    const double want[5] = { 0.086, 0.636, 0.032, 0.234, 0.012 };
    expect_probs(pr, want, 5, 1e-3);
    double sum = 0;
    for (int i = 0; i < 5; i++)
        sum += pr[i];
    cr_expect(fabs(sum - 1.0) < 1e-6);
}

Test(sampler, greedy_picks_argmax)
{
    gl_sampler_params p = plain();
    p.temp = 0.0f;
    p.top_k = 3; /* greedy ignores the truncation stages */
    p.top_p = 0.1f;
    p.min_p = 0.9f;
    gl_sampler *s = make(5, &p);
    float z[5];
    memcpy(z, Z5, sizeof z);
    cr_expect_eq(gl_sampler_sample(s, z, NULL, 0), 1);
    float pr[5];
    gl_sampler_probs(s, Z5, NULL, 0, pr);
    const double want[5] = { 0, 1, 0, 0, 0 };
    expect_probs(pr, want, 5, 0);
    gl_sampler_free(s);
}

Test(sampler, greedy_ties_go_to_lowest_id)
{
    gl_sampler_params p = plain();
    p.temp = 0.0f;
    gl_sampler *s = make(4, &p);
    float z[4] = { 0, 5, 5, 5 };
    cr_expect_eq(gl_sampler_sample(s, z, NULL, 0), 1);
    gl_sampler_free(s);
}

/* Greedy over vocabularies wider than the argmax's lanes and blocks, with
 * tails: the first id of the largest value wherever it sits, NaN never,
 * +inf first. */
Test(sampler, greedy_wide_vocab_first_max)
{
    gl_sampler_params p = plain();
    p.temp = 0.0f;
    const int sizes[] = { 16, 1000, 1037, 2048, 2049, 6151, 151936 };
    unsigned r = 12345u;
    for (int si = 0; si < (int)(sizeof sizes / sizeof sizes[0]); si++) {
        const int n = sizes[si];
        gl_sampler *s = make(n, &p);
        float *z = malloc(sizeof *z * (size_t)n);
        cr_assert_not_null(z);
        for (int trial = 0; trial < 200; trial++) {
            for (int i = 0; i < n; i++) {
                r = r * 1664525u + 1013904223u;
                z[i] = (float)(int)(r >> 28) - 8.0f; /* few values: many ties */
            }
            r = r * 1664525u + 1013904223u;
            const int a = (int)(r % (unsigned)n), b = (int)((r >> 12) % (unsigned)n);
            if (trial % 4 == 1)
                z[a] = NAN;
            if (trial % 4 == 2) {
                z[a] = INFINITY;
                z[b] = INFINITY;
            }
            if (trial % 4 == 3) {
                z[a] = 100.0f; /* one clear winner, maybe in the tail */
                z[n - 1] = 100.0f;
            }
            int want = -1;
            for (int i = 0; i < n; i++)
                if (z[i] == z[i] && (want < 0 || z[i] > z[want]))
                    want = i;
            cr_assert_eq(gl_sampler_sample(s, z, NULL, 0), want, "n %d trial %d", n, trial);
        }
        free(z);
        gl_sampler_free(s);
    }
}

Test(sampler, temperature_sharpens)
{
    gl_sampler_params p = plain();
    p.temp = 0.5f;
    float pr[5];
    probs_of(&p, Z5, 5, NULL, 0, pr);
    const double want[5] = { 0.016, 0.865, 0.002, 0.117, 0.0003 };
    expect_probs(pr, want, 5, 1e-3);
}

Test(sampler, top_k_keeps_the_k_best)
{
    gl_sampler_params p = plain();
    p.top_k = 2;
    float pr[5];
    probs_of(&p, Z5, 5, NULL, 0, pr);
    const double want[5] = { 0, 0.731, 0, 0.269, 0 };
    expect_probs(pr, want, 5, 1e-3);
    cr_expect_eq(pr[0], 0.0f);
    cr_expect_eq(pr[2], 0.0f);
    cr_expect_eq(pr[4], 0.0f);
}

Test(sampler, top_k_ties_keep_lower_ids)
{
    gl_sampler_params p = plain();
    p.top_k = 2;
    float z[5] = { 1, 1, 1, 1, 1 };
    float pr[5];
    probs_of(&p, z, 5, NULL, 0, pr);
    const double want[5] = { 0.5, 0.5, 0, 0, 0 };
    expect_probs(pr, want, 5, 1e-6);
}

Test(sampler, top_p_cuts_the_tail)
{
    /* sorted probabilities: 0.636 (1), 0.234 (3), 0.086 (0), 0.032, 0.012 */
    gl_sampler_params p = plain();
    float pr[5];
    int keep[5] = { 1, 1, 0, 1, 0 };
    double want[5];

    p.top_p = 0.9f; /* 0.870 < 0.9, so token 0 is needed too */
    probs_of(&p, Z5, 5, NULL, 0, pr);
    ref_softmax(Z5, keep, 5, 1.0, want);
    expect_probs(pr, want, 5, 1e-6);

    p.top_p = 0.8f; /* 0.636 + 0.234 reach it */
    probs_of(&p, Z5, 5, NULL, 0, pr);
    keep[0] = 0;
    ref_softmax(Z5, keep, 5, 1.0, want);
    expect_probs(pr, want, 5, 1e-6);
    cr_expect(fabs(pr[1] - 0.731) < 1e-3);

    p.top_p = 0.5f; /* the best token alone */
    probs_of(&p, Z5, 5, NULL, 0, pr);
    const double one[5] = { 0, 1, 0, 0, 0 };
    expect_probs(pr, one, 5, 0);
}

Test(sampler, top_p_after_top_k_uses_renormalised_probs)
{
    /* With top-k 3 the survivors have 0.665, 0.245, 0.090: 0.8 needs two. */
    gl_sampler_params p = plain();
    p.top_k = 3;
    p.top_p = 0.8f;
    float pr[5];
    probs_of(&p, Z5, 5, NULL, 0, pr);
    const double want[5] = { 0, 0.731, 0, 0.269, 0 };
    expect_probs(pr, want, 5, 1e-3);
}

Test(sampler, min_p_drops_unlikely_tokens)
{
    /* p / p_max = exp(z - 3): 0.135, 1, 0.050, 0.368, 0.018 */
    gl_sampler_params p = plain();
    float pr[5];
    double want[5];

    p.min_p = 0.1f;
    probs_of(&p, Z5, 5, NULL, 0, pr);
    int keep[5] = { 1, 1, 0, 1, 0 };
    ref_softmax(Z5, keep, 5, 1.0, want);
    expect_probs(pr, want, 5, 1e-6);

    p.min_p = 0.2f;
    probs_of(&p, Z5, 5, NULL, 0, pr);
    keep[0] = 0;
    ref_softmax(Z5, keep, 5, 1.0, want);
    expect_probs(pr, want, 5, 1e-6);

    p.min_p = 1.0f;
    probs_of(&p, Z5, 5, NULL, 0, pr);
    const double one[5] = { 0, 1, 0, 0, 0 };
    expect_probs(pr, one, 5, 0);
}

Test(sampler, stages_judge_untempered_probs)
{
    /* At T = 0.5 token 0 has 0.016 < 0.05 x 0.865, but min-p runs first. */
    gl_sampler_params p = plain();
    p.temp = 0.5f;
    p.min_p = 0.1f;
    float pr[5];
    probs_of(&p, Z5, 5, NULL, 0, pr);
    int keep[5] = { 1, 1, 0, 1, 0 };
    double want[5];
    ref_softmax(Z5, keep, 5, 0.5, want);
    expect_probs(pr, want, 5, 1e-6);
    cr_expect(pr[0] > 0.0f);
}

Test(sampler, repetition_penalty)
{
    gl_sampler_params p = plain();
    p.repeat_penalty = 2.0f;
    gl_sampler *s = make(5, &p);
    float pr[5];
    double want[5];
    int all[5] = { 1, 1, 1, 1, 1 };

    /* token 1 twice still divides once; negative token 4 is multiplied;
     * out-of-range ids are ignored */
    const int32_t hist[] = { 1, 4, 1, 99, -3 };
    gl_sampler_probs(s, Z5, hist, 5, pr);
    const float penalised[5] = { 1, 1.5f, 0, 2, -2 };
    ref_softmax(penalised, all, 5, 1.0, want);
    expect_probs(pr, want, 5, 1e-6);

    /* the sampler's dedup state does not leak into the next call */
    gl_sampler_probs(s, Z5, NULL, 0, pr);
    ref_softmax(Z5, all, 5, 1.0, want);
    expect_probs(pr, want, 5, 1e-6);

    /* sample applies it in place */
    float z[5];
    memcpy(z, Z5, sizeof z);
    gl_sampler_sample(s, z, hist, 3);
    cr_expect_eq(z[1], 1.5f);
    cr_expect_eq(z[4], -2.0f);
    cr_expect_eq(z[3], 2.0f);
    gl_sampler_free(s);

    /* only the last repeat_last_n tokens count */
    p.repeat_last_n = 1;
    const int32_t hist2[] = { 4, 1 };
    probs_of(&p, Z5, 5, hist2, 2, pr);
    const float last_only[5] = { 1, 1.5f, 0, 2, -1 };
    ref_softmax(last_only, all, 5, 1.0, want);
    expect_probs(pr, want, 5, 1e-6);

    /* a penalty can change the greedy choice */
    p.temp = 0.0f;
    p.repeat_last_n = 64;
    gl_sampler *g = make(5, &p);
    memcpy(z, Z5, sizeof z);
    const int32_t hist3[] = { 1 };
    cr_expect_eq(gl_sampler_sample(g, z, hist3, 1), 3);
    gl_sampler_free(g);
}

static void draw_seq(uint64_t seed, int32_t *out, int n)
{
    gl_sampler_params p = plain();
    p.seed = seed;
    gl_sampler *s = make(5, &p);
    for (int i = 0; i < n; i++) {
        float z[5];
        memcpy(z, Z5, sizeof z);
        out[i] = gl_sampler_sample(s, z, NULL, 0);
        cr_assert(out[i] >= 0 && out[i] < 5);
    }
    gl_sampler_free(s);
}

Test(sampler, same_seed_same_sequence)
{
    int32_t a[1000], b[1000];
    draw_seq(42, a, 1000);
    draw_seq(42, b, 1000);
    cr_expect_arr_eq(a, b, sizeof a);
}

Test(sampler, different_seed_different_sequence)
{
    int32_t a[1000], b[1000];
    draw_seq(42, a, 1000);
    draw_seq(43, b, 1000);
    int differ = 0;
    for (int i = 0; i < 1000; i++)
        differ += a[i] != b[i];
    cr_expect(differ > 100, "only %d of 1000 draws differ", differ);
}

Test(sampler, probs_does_not_consume_randomness)
{
    int32_t a[200], b[200];
    draw_seq(7, a, 200);
    gl_sampler_params p = plain();
    p.seed = 7;
    gl_sampler *s = make(5, &p);
    float pr[5];
    for (int i = 0; i < 200; i++) {
        gl_sampler_probs(s, Z5, NULL, 0, pr);
        float z[5];
        memcpy(z, Z5, sizeof z);
        b[i] = gl_sampler_sample(s, z, NULL, 0);
    }
    gl_sampler_free(s);
    cr_expect_arr_eq(a, b, sizeof a);
}

static void check_frequencies(const gl_sampler_params *p)
{
    enum { N = 100000 };
    gl_sampler *s = make(5, p);
    float pr[5];
    gl_sampler_probs(s, Z5, NULL, 0, pr);
    long count[5] = { 0 };
    for (int i = 0; i < N; i++) {
        float z[5];
        memcpy(z, Z5, sizeof z);
        int32_t t = gl_sampler_sample(s, z, NULL, 0);
        cr_assert(t >= 0 && t < 5);
        count[t]++;
    }
    for (int i = 0; i < 5; i++) {
        double mean = N * (double)pr[i];
        double sigma = sqrt(N * (double)pr[i] * (1.0 - pr[i]));
        if (pr[i] == 0.0f)
            cr_expect_eq(count[i], 0, "token %d was filtered out but drawn", i);
        else
            cr_expect(fabs(count[i] - mean) <= 5 * sigma, "token %d: %ld draws, expected %.0f", i,
                      count[i], mean);
    }
    gl_sampler_free(s);
}

Test(sampler, empirical_frequencies_match_probs)
{
    gl_sampler_params p = plain();
    check_frequencies(&p);
    /* the defaults: top-p 0.95 keeps three tokens, temp 0.8 */
    p = gl_sampler_default_params();
    check_frequencies(&p);
}

Test(sampler, nan_and_inf_logits)
{
    gl_sampler_params p = plain();
    gl_sampler *s = make(4, &p);
    const float zn[4] = { NAN, 1, NAN, 2 };
    float pr[4];
    gl_sampler_probs(s, zn, NULL, 0, pr);
    cr_expect_eq(pr[0], 0.0f);
    cr_expect_eq(pr[2], 0.0f);
    cr_expect(fabs(pr[3] - 1.0 / (1.0 + exp(-1.0))) < 1e-6);
    for (int i = 0; i < 1000; i++) {
        float z[4];
        memcpy(z, zn, sizeof z);
        int32_t t = gl_sampler_sample(s, z, NULL, 0);
        cr_assert(t == 1 || t == 3, "drew %d", t);
    }

    /* nothing usable: still a valid token, and a proper distribution */
    const float all_nan[4] = { NAN, NAN, NAN, NAN };
    gl_sampler_probs(s, all_nan, NULL, 0, pr);
    double sum = 0;
    for (int i = 0; i < 4; i++) {
        cr_expect(pr[i] == pr[i]);
        sum += pr[i];
    }
    cr_expect(fabs(sum - 1.0) < 1e-6);
    float z[4];
    memcpy(z, all_nan, sizeof z);
    int32_t t = gl_sampler_sample(s, z, NULL, 0);
    cr_expect(t >= 0 && t < 4);

    /* +inf wins outright instead of turning everything into NaN */
    const float zi[4] = { 0, INFINITY, 1, -INFINITY };
    gl_sampler_probs(s, zi, NULL, 0, pr);
    const double one[4] = { 0, 1, 0, 0 };
    expect_probs(pr, one, 4, 0);
    gl_sampler_free(s);

    p.temp = 0.0f;
    gl_sampler *g = make(4, &p);
    memcpy(z, zn, sizeof z);
    cr_expect_eq(gl_sampler_sample(g, z, NULL, 0), 3);
    memcpy(z, all_nan, sizeof z);
    cr_expect_eq(gl_sampler_sample(g, z, NULL, 0), 0);
    gl_sampler_free(g);
}

static void expect_arg_error(int n_vocab, const gl_sampler_params *p, const char *name)
{
    gl_sampler *s = (gl_sampler *)&s; /* must be reset to NULL */
    gl_error err = { 0 };
    gl_status st = gl_sampler_create(&s, n_vocab, p, &err);
    cr_expect_eq(st, GL_ERR_ARG, "%s: status %d", name, (int)st);
    cr_expect_eq(err.code, GL_ERR_ARG);
    cr_expect_null(s);
    cr_expect(strstr(err.msg, name) != NULL, "message '%s' does not name %s", err.msg, name);
}

Test(sampler, invalid_params)
{
    gl_sampler_params p;
    expect_arg_error(0, NULL, "n_vocab");
    expect_arg_error(-5, NULL, "n_vocab");

    p = plain(), p.temp = -0.1f;
    expect_arg_error(5, &p, "temp");
    p = plain(), p.temp = NAN;
    expect_arg_error(5, &p, "temp");
    p = plain(), p.temp = INFINITY;
    expect_arg_error(5, &p, "temp");
    p = plain(), p.top_k = -1;
    expect_arg_error(5, &p, "top_k");
    p = plain(), p.top_p = 0.0f;
    expect_arg_error(5, &p, "top_p");
    p = plain(), p.top_p = -1.0f;
    expect_arg_error(5, &p, "top_p");
    p = plain(), p.top_p = 1.5f;
    expect_arg_error(5, &p, "top_p");
    p = plain(), p.min_p = -0.01f;
    expect_arg_error(5, &p, "min_p");
    p = plain(), p.min_p = 1.01f;
    expect_arg_error(5, &p, "min_p");
    p = plain(), p.repeat_penalty = 0.0f;
    expect_arg_error(5, &p, "repeat_penalty");
    p = plain(), p.repeat_penalty = NAN;
    expect_arg_error(5, &p, "repeat_penalty");
    p = plain(), p.repeat_last_n = -2;
    expect_arg_error(5, &p, "repeat_last_n");

    gl_error err = { 0 };
    cr_expect_eq(gl_sampler_create(NULL, 5, NULL, &err), GL_ERR_ARG);
    cr_expect_eq(gl_sampler_create(NULL, 5, NULL, NULL), GL_ERR_ARG);

    /* the boundaries are valid */
    p = plain(), p.temp = 0.0f, p.top_p = 1.0f, p.min_p = 1.0f, p.repeat_last_n = -1;
    gl_sampler *s = make(5, &p);
    gl_sampler_free(s);
    gl_sampler_free(NULL);
    s = NULL;
    cr_expect_eq(gl_sampler_create(&s, 5, NULL, NULL), GL_OK);
    cr_expect_eq(gl_sampler_sample(s, NULL, NULL, 0), -1);
    gl_sampler_free(s);
}

/* ---- large vocabularies against a straightforward reference ------------ */

static uint64_t lcg_state;

static float lcg_normal(void)
{
    /* Irwin-Hall: good enough for plausible, tie-prone-free logits */
    double acc = 0;
    for (int i = 0; i < 12; i++) {
        lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
        acc += (double)(lcg_state >> 11) * 0x1p-53;
    }
    return (float)(acc - 6.0);
}

typedef struct {
    double z;
    int id;
} ref_cand;

static int ref_cmp(const void *a, const void *b)
{
    const ref_cand *x = a, *y = b;
    if (x->z != y->z)
        return x->z > y->z ? -1 : 1;
    return x->id - y->id;
}

/* The pipeline written the obvious way: full sort, double precision. */
static void ref_probs(const gl_sampler_params *p, const float *z, int n, double *out)
{
    ref_cand *c = malloc((size_t)n * sizeof *c);
    cr_assert_not_null(c);
    for (int i = 0; i < n; i++)
        c[i] = (ref_cand){ z[i], i };
    qsort(c, (size_t)n, sizeof *c, ref_cmp);
    int k = (p->top_k > 0 && p->top_k < n) ? p->top_k : n;
    double m = c[0].z, sum = 0;
    for (int i = 0; i < k; i++)
        sum += exp(c[i].z - m);
    if (p->top_p < 1.0f) {
        double cum = 0;
        for (int i = 0; i < k; i++) {
            cum += exp(c[i].z - m) / sum;
            if (cum >= p->top_p) {
                k = i + 1;
                break;
            }
        }
    }
    int kept = 0;
    for (int i = 0; i < k; i++)
        if (exp(c[i].z - m) >= p->min_p)
            kept = i + 1;
    for (int i = 0; i < n; i++)
        out[i] = 0;
    sum = 0;
    for (int i = 0; i < kept; i++)
        sum += exp((c[i].z - m) / p->temp);
    for (int i = 0; i < kept; i++)
        out[c[i].id] = exp((c[i].z - m) / p->temp) / sum;
    free(c);
}

static void compare_with_ref(const gl_sampler_params *p, const float *z, int n)
{
    float *pr = malloc((size_t)n * sizeof *pr);
    double *want = malloc((size_t)n * sizeof *want);
    cr_assert(pr && want);
    probs_of(p, z, n, NULL, 0, pr);
    ref_probs(p, z, n, want);
    int support = 0, bad = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        support += want[i] > 0;
        sum += pr[i];
        if ((pr[i] > 0) != (want[i] > 0) || fabs(pr[i] - want[i]) > 1e-5 + 1e-4 * want[i])
            bad++;
    }
    cr_expect_eq(bad, 0, "k=%d p=%g min_p=%g T=%g: %d of %d tokens differ (support %d)", p->top_k,
                 (double)p->top_p, (double)p->min_p, (double)p->temp, bad, n, support);
    cr_expect(fabs(sum - 1.0) < 1e-4, "sum %g", sum);
    free(pr);
    free(want);
}

Test(sampler, matches_reference_on_random_logits)
{
    enum { N = 5000 };
    static float z[N];
    lcg_state = 12345;
    for (int i = 0; i < N; i++)
        z[i] = 3.0f * lcg_normal();

    const int ks[] = { 0, 1, 40, 1000 };
    const float ps[] = { 1.0f, 0.95f, 0.5f };
    const float mps[] = { 0.0f, 0.05f };
    for (size_t a = 0; a < sizeof ks / sizeof *ks; a++)
        for (size_t b = 0; b < sizeof ps / sizeof *ps; b++)
            for (size_t c = 0; c < sizeof mps / sizeof *mps; c++) {
                gl_sampler_params p = plain();
                p.top_k = ks[a];
                p.top_p = ps[b];
                p.min_p = mps[c];
                p.temp = 0.7f;
                compare_with_ref(&p, z, N);
            }
}

Test(sampler, large_vocab)
{
    enum { V = 128256 };
    float *z = malloc(V * sizeof *z), *zc = malloc(V * sizeof *zc), *pr = malloc(V * sizeof *pr);
    cr_assert(z && zc && pr);
    lcg_state = 999;
    for (int i = 0; i < V; i++)
        z[i] = 2.0f * lcg_normal();

    gl_sampler_params p = gl_sampler_default_params();
    p.repeat_penalty = 1.1f;
    gl_sampler *s = make(V, &p);
    int32_t hist[64];
    for (int i = 0; i < 64; i++)
        hist[i] = (int32_t)(i * 2003 % V);
    gl_sampler_probs(s, z, hist, 64, pr);
    int support = 0;
    double sum = 0;
    for (int i = 0; i < V; i++) {
        support += pr[i] > 0;
        sum += pr[i];
    }
    cr_expect(support >= 1 && support <= 40, "support %d", support);
    cr_expect(fabs(sum - 1.0) < 1e-5);
    for (int r = 0; r < 200; r++) {
        memcpy(zc, z, V * sizeof *z);
        int32_t t = gl_sampler_sample(s, zc, hist, 64);
        cr_assert(t >= 0 && t < V);
        cr_expect(pr[t] > 0.0f, "drew filtered token %d", t);
    }
    gl_sampler_free(s);

    /* no top-k: the top-p prefilter and partial heap pop on the full vocabulary */
    p = plain();
    p.top_p = 0.9f;
    compare_with_ref(&p, z, V);
    p.top_p = 1.0f;
    compare_with_ref(&p, z, V);
    p.min_p = 0.05f;
    compare_with_ref(&p, z, V);

    free(z);
    free(zc);
    free(pr);
}
