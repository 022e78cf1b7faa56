/* genloop perplexity through the command line: agreement with the
 * reference tool's figures (../shared/perplexity/reference.json),
 * independence from -b / -t / the tokenization piece size, KL divergence
 * (zero against itself, ordered by bit width) and refused inputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "shared_data.h"

static run_out r;

static const char *sp(const char *rel)
{
    static char bufs[8][1024];
    static int next;
    char *b = bufs[next++ % 8];
    td_path(b, 1024, rel);
    return b;
}

/* The number after "key": in a JSON text; NAN when absent. */
static double jnum(const char *json, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* reference.json's [PPL, err] of a model stem. */
static void reference(const char *stem, double *ppl, double *err)
{
    FILE *f = fopen(sp("perplexity/reference.json"), "rb");
    cr_assert(f, "cannot open reference.json");
    static char buf[1 << 14];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": [", stem);
    const char *p = strstr(buf, pat);
    cr_assert(p, "reference.json has no %s", stem);
    cr_assert_eq(sscanf(p + strlen(pat), "%lf , %lf", ppl, err), 2);
}

static void check_reference(const char *stem, double tol)
{
    td_need_shared();
    char model[256];
    snprintf(model, sizeof model, "models/%s.gguf", stem);
    RUN(&r, NULL, "perplexity", "-m", sp(model), "-f", sp("perplexity/stories.txt"), "-c", "128",
        "--json");
    cr_assert_eq(r.status, 0, "%s: %s", stem, r.err);
    double ref, ref_err;
    reference(stem, &ref, &ref_err);
    const double ppl = jnum(r.out, "ppl"), err = jnum(r.out, "ppl_stderr");
    cr_expect_eq(jnum(r.out, "chunks"), 8);
    cr_expect_eq(jnum(r.out, "tokens_scored"), 8 * 63);
    cr_expect(fabs(ppl - ref) <= tol * ref, "%s: PPL %.4f, reference %.4f (tolerance %.1f %%)",
              stem, ppl, ref, tol * 100);
    cr_expect(fabs(err - ref_err) <= tol * ref_err, "%s: error %.5f, reference %.5f", stem, err,
              ref_err);
    cr_expect(fabs(jnum(r.out, "nll_mean") - log(ppl)) < 1e-5);
}

Test(perplexity, reference_f32)
{
    check_reference("stories260K", 0.005);
}
Test(perplexity, reference_f16)
{
    check_reference("stories260K-F16", 0.01);
}
Test(perplexity, reference_mix_q8_0)
{
    check_reference("stories260K-mixQ8_0", 0.01);
}
Test(perplexity, reference_mix_q4_0)
{
    check_reference("stories260K-mixQ4_0", 0.01);
}
Test(perplexity, reference_pad256_q4_k_m)
{
    check_reference("stories260K-pad256-Q4_K_M", 0.01);
}
Test(perplexity, reference_pad256_q6_k)
{
    check_reference("stories260K-pad256-Q6_K", 0.01);
}

/* The same figures whatever the batch composition, thread count and the
 * size of the pieces the text is tokenized in. */
Test(perplexity, independent_of_batch_threads_pieces)
{
    td_need_shared();
    const char *m = sp("models/stories260K-mixQ4_0.gguf"), *t = sp("perplexity/stories.txt");
    static char first[sizeof r.out];
    const char *const variants[][6] = {
        { "-b", "2048", "-t", "1", "--piece-bytes", "1048576" },
        { "-b", "128", "-t", "2", "--piece-bytes", "16" },
        { "-b", "48", "-t", "1", "--piece-bytes", "100" },
        { "-b", "384", "-t", "2", "--piece-bytes", "4096" },
    };
    for (int v = 0; v < 4; v++) {
        RUN(&r, NULL, "perplexity", "-m", m, "-f", t, "-c", "128", "--json", variants[v][0],
            variants[v][1], variants[v][2], variants[v][3], variants[v][4], variants[v][5]);
        cr_assert_eq(r.status, 0, "%s", r.err);
        /* compare everything up to the run-dependent fields */
        char *cut = strstr(r.out, "\"threads\"");
        cr_assert(cut);
        *cut = '\0';
        if (v == 0)
            snprintf(first, sizeof first, "%s", r.out);
        else
            cr_expect_str_eq(r.out, first, "-b %s -t %s pieces of %s bytes", variants[v][1],
                             variants[v][3], variants[v][5]);
    }
}

static bool same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    cr_assert(fa && fb);
    int ca, cb;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
    } while (ca == cb && ca != EOF);
    fclose(fa);
    fclose(fb);
    return ca == cb;
}

static void tmp_name(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "/tmp/gl_ppl_%ld_%s", (long)getpid(), tag);
}

Test(perplexity, kld_against_itself_is_zero)
{
    td_need_shared();
    const char *m = sp("models/stories260K.gguf"), *t = sp("perplexity/stories.txt");
    const char *types[] = { "f32", "f16" };
    for (int i = 0; i < 2; i++) {
        char base[256], base2[256];
        tmp_name(base, sizeof base, types[i]);
        tmp_name(base2, sizeof base2, "pieces");
        RUN(&r, NULL, "perplexity", "-m", m, "-f", t, "-c", "128", "--kl-divergence-base", base,
            "--kl-divergence-type", types[i]);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.out, "PPL = 4.31"), "%s", r.out);
        /* tokenized in 16-byte pieces and 4 threads: the same bytes */
        RUN(&r, NULL, "perplexity", "-m", m, "-f", t, "-c", "128", "--kl-divergence-base", base2,
            "--kl-divergence-type", types[i], "--piece-bytes", "16", "-b", "256", "-t", "1");
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(same_file(base, base2), "base files differ with pieces / batch / threads");
        RUN(&r, NULL, "perplexity", "-m", m, "-f", t, "--kl-divergence", base, "--json");
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect_eq(jnum(r.out, "mean"), 0.0, "%s", r.out);
        cr_expect_eq(jnum(r.out, "max"), 0.0, "%s", r.out);
        cr_expect_eq(jnum(r.out, "same_top_pct"), 100.0, "%s", r.out);
        cr_expect_eq(jnum(r.out, "mean_delta_p_pct"), 0.0, "%s", r.out);
        cr_expect_eq(jnum(r.out, "ctx"), 128, "the base's context is the default");
        cr_expect(fabs(jnum(r.out, "base_ppl") - jnum(r.out, "ppl")) < 1e-3 * jnum(r.out, "ppl"));
        unlink(base);
        unlink(base2);
    }
}

/* Mean KLD of each model against base, in the order given. */
static void kld_ordered(const char *base_model, const char *const *models, int n,
                        const char *chunks)
{
    td_need_shared();
    const char *t = sp("perplexity/stories.txt");
    char base[256], rel[256];
    tmp_name(base, sizeof base, "order");
    snprintf(rel, sizeof rel, "models/%s.gguf", base_model);
    RUN(&r, NULL, "perplexity", "-m", sp(rel), "-f", t, "-c", "128", "--chunks", chunks,
        "--kl-divergence-base", base);
    cr_assert_eq(r.status, 0, "%s", r.err);
    double prev = 0;
    for (int i = 0; i < n; i++) {
        snprintf(rel, sizeof rel, "models/%s.gguf", models[i]);
        RUN(&r, NULL, "perplexity", "-m", sp(rel), "-f", t, "--kl-divergence", base, "--json");
        cr_assert_eq(r.status, 0, "%s: %s", models[i], r.err);
        const double kld = jnum(r.out, "mean");
        cr_expect(kld > prev, "%s: mean KLD %g is not above the previous file's %g", models[i], kld,
                  prev);
        cr_expect(jnum(r.out, "same_top_pct") < 100.0);
        cr_expect(jnum(r.out, "p99") <= jnum(r.out, "max"));
        cr_expect(jnum(r.out, "median") <= jnum(r.out, "p90"));
        prev = kld;
    }
    unlink(base);
}

Test(perplexity, kld_ordered_mix_q8_0_q4_0)
{
    const char *const m[] = { "stories260K-mixQ8_0", "stories260K-mixQ4_0" };
    kld_ordered("stories260K", m, 2, "8");
}

Test(perplexity, kld_ordered_k_quants)
{
    const char *const m[] = { "stories260K-pad256-Q6_K", "stories260K-pad256-Q4_K_M",
                              "stories260K-pad256-Q3_K_M", "stories260K-pad256-Q2_K" };
    kld_ordered("stories260K-pad256-F32", m, 4, "2");
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void expect_refused(const char *what, const char *needle, const char *const *argv)
{
    cr_assert_eq(cli_run(&r, NULL, 0, argv), 0);
    cr_expect_eq(r.status, 1, "%s: exit %d", what, r.status);
    cr_expect(strstr(r.err, "genloop: error: ") && strstr(r.err, needle),
              "%s: stderr lacks '%s': %s", what, needle, r.err);
    cr_expect(!strstr(r.out, "Final estimate"), "%s: printed a result", what);
}

Test(perplexity, bad_text_refused)
{
    td_need_shared();
    const char *m = sp("models/stories260K.gguf");
    char path[256];
    tmp_name(path, sizeof path, "text");
    write_file(path, "", 0);
    const char *const a1[] = { "perplexity", "-m", m, "-f", path, "-c", "128", NULL };
    expect_refused("empty text", "is empty", a1);
    write_file(path, "Once upon a time there was a dog.\n", 34);
    expect_refused("short text", "needs at least 256", a1);
    /* valid UTF-8 but for one byte deep inside a long text */
    static char big[20000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = "The cat sat on the mat.\n"[i % 24];
    big[15001] = (char)0xC3; /* lead byte followed by ASCII */
    write_file(path, big, sizeof big);
    expect_refused("invalid UTF-8", "not valid UTF-8", a1);
    const char *const a2[] = { "perplexity", "-m", m, "-f", "/nonexistent/text", NULL };
    expect_refused("missing file", "cannot open", a2);
    unlink(path);
}

Test(perplexity, bad_kld_base_refused)
{
    td_need_shared();
    const char *m = sp("models/stories260K.gguf"), *t = sp("perplexity/stories.txt");
    char base[256], bad[256], other[256];
    tmp_name(base, sizeof base, "kbase");
    tmp_name(bad, sizeof bad, "kbad");
    tmp_name(other, sizeof other, "kother.txt");
    RUN(&r, NULL, "perplexity", "-m", m, "-f", t, "-c", "128", "--chunks", "3",
        "--kl-divergence-base", base);
    cr_assert_eq(r.status, 0, "%s", r.err);
    FILE *f = fopen(base, "rb");
    cr_assert(f);
    static char buf[1 << 21];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cr_assert(n > 4096 && n < sizeof buf);

    write_file(bad, buf, n - 1);
    const char *const a_bad[] = { "perplexity", "-m", m, "-f", t, "--kl-divergence", bad, NULL };
    expect_refused("truncated base", "truncated", a_bad);
    write_file(bad, buf, 100);
    expect_refused("base cut in its ids", "truncated", a_bad);
    write_file(bad, buf, 20);
    expect_refused("base cut in its header", "truncated", a_bad);
    const char *const a_foreign[] = { "perplexity", "-m", m, "-f", t, "--kl-divergence", m, NULL };
    expect_refused("foreign file", "not a genloop KL-divergence base", a_foreign);
    buf[8] = 7; /* version */
    write_file(bad, buf, n);
    expect_refused("other version", "version 7", a_bad);

    const char *const a_ctx[] = { "perplexity",      "-m", m,    "-f", t,
                                  "--kl-divergence", base, "-c", "64", NULL };
    expect_refused("other context", "context of 128", a_ctx);
    /* the same text with one word changed in its second window */
    f = fopen(t, "rb");
    cr_assert(f);
    static char text[1 << 16];
    size_t tn = fread(text, 1, sizeof text, f);
    fclose(f);
    char *w = strstr(text + 700, " the ");
    cr_assert(w);
    memcpy(w, " a   ", 5);
    write_file(other, text, tn);
    const char *const a_text[] = {
        "perplexity", "-m", m, "-f", other, "--kl-divergence", base, NULL
    };
    expect_refused("other text", "different text", a_text);
    const char *const a_vocab[] = { "perplexity", "-m", sp("models/synthetic-gpt2-tiny.gguf"),
                                    "-f",         t,    "--kl-divergence",
                                    base,         NULL };
    expect_refused("other vocabulary", "vocabulary", a_vocab);
    unlink(base);
    unlink(bad);
    unlink(other);
}

Test(perplexity, usage_errors)
{
    const char *const a1[] = { "perplexity", "-f", "x.txt", NULL };
    cr_assert_eq(cli_run(&r, NULL, 0, a1), 0);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "missing -m MODEL"));
    const char *const a2[] = { "perplexity", "-m", "m.gguf", "-f", "x.txt", "-c", "2", NULL };
    cr_assert_eq(cli_run(&r, NULL, 0, a2), 0);
    cr_expect_eq(r.status, 2);
    const char *const a3[] = {
        "perplexity",           "-m", "m.gguf", "-f", "x", "--kl-divergence", "a",
        "--kl-divergence-base", "b",  NULL
    };
    cr_assert_eq(cli_run(&r, NULL, 0, a3), 0);
    cr_expect_eq(r.status, 2);
}
