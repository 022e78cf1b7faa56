/* The genloop command line as a user drives it: exit codes, error lines,
 * JSON output, tokenize vectors and eval files. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"
#include "shared_data.h"

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

static const char *model(const char *name)
{
    static char path[4][1024];
    static int k;
    char rel[256];
    snprintf(rel, sizeof rel, "models/%s", name);
    td_need_path(path[k & 3], sizeof path[0], rel);
    return path[k++ & 3];
}

static void expect_error(const run_out *r, int code, const char *needle)
{
    cr_expect_eq(r->status, code, "exit %d, expected %d; stderr: %s", r->status, code, r->err);
    cr_expect(strstr(r->err, "genloop: error: ") != NULL, "no error line: %s", r->err);
    if (needle)
        cr_expect(strstr(r->err, needle) != NULL, "'%s' not in: %s", needle, r->err);
    /* one line, naming the problem */
    const char *nl = strchr(r->err, '\n');
    cr_expect(nl != NULL, "error line not terminated");
}

static run_out r;

Test(cli, usage_errors_exit_2)
{
    RUN(&r, NULL, "frobnicate");
    cr_expect_eq(r.status, 2);
    RUN(&r, NULL, "run", "-p", "x");
    expect_error(&r, 2, "missing -m");
    RUN(&r, NULL, "run", "-m", "x.gguf");
    expect_error(&r, 2, "missing -p");
    RUN(&r, NULL, "run", "-m", "x.gguf", "-p", "x", "--top-p", "2");
    expect_error(&r, 2, "--top-p");
    RUN(&r, NULL, "run", "-m", "x.gguf", "-p", "x", "-n", "-5");
    expect_error(&r, 2, "-n");
    RUN(&r, NULL, "run", "-m", "x.gguf", "-p", "x", "-t", "0");
    expect_error(&r, 2, "-t");
    RUN(&r, NULL, "run", "-m", "x.gguf", "-p", "x", "--temp", "hot");
    expect_error(&r, 2, "--temp");
    RUN(&r, NULL, "run", "-m", "x.gguf", "-p", "x", "--bogus");
    expect_error(&r, 2, "--bogus");
    RUN(&r, NULL, "run", "-m", "x.gguf", "-p", "x", "-c", "99999999999");
    expect_error(&r, 2, "-c");
    RUN(&r, NULL, "run", "-m", "x.gguf", "-p");
    expect_error(&r, 2, "needs a value");
    RUN(&r, NULL, "eval", "-m", "x.gguf", "--ids", "1 two", "--logits-out", "/tmp/x");
    expect_error(&r, 2, "--ids");
    RUN(&r, NULL, "run", "-m", "x.gguf", "-p", "x", "--backend", "sse9");
    expect_error(&r, 2, "unknown backend");
}

Test(cli, runtime_errors_exit_1)
{
    RUN(&r, NULL, "run", "-m", "/nonexistent/model.gguf", "-p", "x");
    expect_error(&r, 1, "/nonexistent/model.gguf");
    RUN(&r, NULL, "run", "-m", "/tmp", "-p", "x");
    expect_error(&r, 1, "directory");
    RUN(&r, NULL, "info", "/dev/null");
    expect_error(&r, 1, NULL);

    /* a truncated copy of a real model */
    const char *src = model("stories260K.gguf");
    FILE *f = fopen(src, "rb");
    cr_assert(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    char trunc[64];
    snprintf(trunc, sizeof trunc, "/tmp/gl_cli_trunc_%ld.gguf", (long)getpid());
    f = fopen(trunc, "wb");
    fwrite(buf, 1, n / 2, f);
    fclose(f);
    RUN(&r, NULL, "run", "-m", trunc, "-p", "x");
    expect_error(&r, 1, "past end of file");
    unlink(trunc);

    /* a vocabulary-only file cannot generate */
    RUN(&r, NULL, "run", "-m", model("../tokenizers/ggml-vocab-llama-spm.gguf"), "-p", "x");
    expect_error(&r, 1, NULL);
}

Test(cli, run_json_and_stream)
{
    const char *m = model("stories260K.gguf");
    RUN(&r, NULL, "run", "-m", m, "-p", "Once upon a time", "-n", "24", "--temp", "0", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"prompt_tokens\": [1, 403, 407, 261, 378]"), "%s", r.out);
    cr_expect(strstr(r.out, "\"tokens\": [432, 383, 286, 261, 376"), "%s", r.out);
    cr_expect(strstr(r.out, "\"text\": \", there was a little girl named Lily."), "%s", r.out);
    cr_expect(strstr(r.out, "\"stop\": \"length\""), "%s", r.out);
    cr_expect(strstr(r.out, "\"decode_tok_s\""), "%s", r.out);

    RUN(&r, NULL, "run", "-m", m, "-p", "Once upon a time", "-n", "40", "--temp", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "Once upon a time, there was a little girl named Lily. She loved to "
                            "play outside in the park."),
              "%s", r.out);
    cr_expect(strstr(r.err, "tok/s"), "no timing summary: %s", r.err);

    /* same seed, same text; sampling actually samples */
    run_out a;
    RUN(&a, NULL, "run", "-m", m, "-p", "Once", "-n", "48", "--temp", "1", "--seed", "7", "--json");
    RUN(&r, NULL, "run", "-m", m, "-p", "Once", "-n", "48", "--temp", "1", "--seed", "7", "--json");
    cr_assert_eq(a.status, 0);
    char *ta = strstr(a.out, "\"tokens\""), *tb = strstr(r.out, "\"tokens\"");
    cr_assert(ta && tb);
    *strstr(ta, "]") = '\0';
    *strstr(tb, "]") = '\0';
    cr_expect_str_eq(ta, tb);

    /* an empty prompt starts from BOS alone */
    RUN(&r, NULL, "run", "-m", m, "-p", "", "-n", "8", "--temp", "0", "--json");
    cr_expect_eq(r.status, 0, "%s", r.err);

    /* context full without the ring */
    RUN(&r, NULL, "run", "-m", m, "-p", "Once upon a time", "-n", "100", "--temp", "0", "-c", "16",
        "--no-ring", "--json");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"stop\": \"context\""), "%s", r.out);
}

/* Writes the integers of s separated by single spaces. */
static void normalize(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    dst[0] = '\0';
    while (*s && *s != '\n') {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) {
            s++;
            continue;
        }
        n += (size_t)snprintf(dst + n, cap - n, "%s%ld", n ? " " : "", v);
        s = end;
        if (n >= cap)
            break;
    }
}

/* Every vector of the reference tokenizer, through the CLI, text on stdin. */
Test(cli, tokenize_vectors)
{
    const char *vocab = model("../tokenizers/ggml-vocab-llama-spm.gguf");
    char inp_path[1100], out_path[1100];
    snprintf(inp_path, sizeof inp_path, "%s.inp", vocab);
    snprintf(out_path, sizeof out_path, "%s.out", vocab);
    static char inp[1 << 16], exp[1 << 16];
    slurp(inp_path, inp, sizeof inp);
    slurp(out_path, exp, sizeof exp);
    const char *sep = "\n__ggml_vocab_test__\n";
    char *s = inp, *e = exp;
    int n = 0;
    for (;;) {
        char *end = strstr(s, sep);
        if (!end)
            break;
        *end = '\0';
        char *eol = strchr(e, '\n');
        cr_assert(eol, "fewer expected lines than inputs");
        *eol = '\0';
        RUN(&r, s, "tokenize", "-m", vocab, "--no-bos");
        cr_assert_eq(r.status, 0, "%s", r.err);
        /* "[a, b, c]\n" vs " a b c" */
        char got[8192] = "", want[8192] = "";
        normalize(got, sizeof got, r.out);
        normalize(want, sizeof want, e);
        cr_expect_str_eq(got, want, "input %d '%s': got '%s', want '%s'", n, s, got, want);
        s = end + strlen(sep);
        e = eol + 1;
        n++;
    }
    cr_expect_gt(n, 10);

    RUN(&r, NULL, "tokenize", "-m", model("stories260K.gguf"), "-p", "Once upon a time");
    cr_expect_str_eq(r.out, "[1, 403, 407, 261, 378]\n");
}

Test(cli, eval_writes_rows)
{
    const char *m = model("stories260K.gguf");
    char out[64];
    snprintf(out, sizeof out, "/tmp/gl_cli_logits_%ld.f32", (long)getpid());
    RUN(&r, NULL, "eval", "-m", m, "--ids", "1 403 407 261 378", "--logits-out", out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    struct stat st;
    cr_assert_eq(stat(out, &st), 0);
    cr_expect_eq(st.st_size, 5 * 512 * 4);
    size_t nf;
    float *ref = td_read_logits("stories260K", 0, &nf);
    static float got[5 * 512];
    FILE *f = fopen(out, "rb");
    cr_assert_eq(fread(got, sizeof(float), 5 * 512, f), 5 * 512);
    fclose(f);
    cr_expect_lt(td_rel_rms(got + 4 * 512, ref, 512), 0.005);
    free(ref);
    unlink(out);

    RUN(&r, NULL, "eval", "-m", m, "--ids", "1 99999", "--logits-out", out);
    expect_error(&r, 2, "out of range");
}

Test(cli, info)
{
    RUN(&r, NULL, "info");
    cr_assert_eq(r.status, 0);
    cr_expect(strstr(r.out, "backend: "), "%s", r.out);
    cr_expect(strstr(r.out, "cpu features: "), "%s", r.out);
    RUN(&r, NULL, "info", model("stories260K-mixQ4_0.gguf"));
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "architecture: llama"), "%s", r.out);
    cr_expect(strstr(r.out, "Q4_0"), "%s", r.out);
    /* where the weights live: every product matrix in the huge-page arena */
    unsigned long long all = 0, repacked = 0, copied = 0;
    const char *mem = strstr(r.out, "memory: weights ");
    cr_assert(mem && sscanf(mem, "memory: weights %llu bytes (%llu repacked, %llu copied", &all,
                            &repacked, &copied) == 3,
              "%s", r.out);
    cr_expect(repacked + copied > 0 && repacked + copied <= all, "%s", mem);
    RUN(&r, NULL, "info", model("../tokenizers/ggml-vocab-llama-spm.gguf"));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "vocabulary only"), "%s", r.out);
}
