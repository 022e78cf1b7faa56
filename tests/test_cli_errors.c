/* The command line under hostile or mistaken input: invalid flags,
 * out-of-range values, missing, unreadable or odd files, empty and
 * oversized prompts, non-UTF-8 text, contexts larger than memory. Each must
 * end with exit status 2 (usage) or 1 (runtime) and one "genloop: error: "
 * line naming the problem, or be handled as documented (exit 0) -- never a
 * crash, a hang or a signal. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genloop.h"
#include "gguf.h"
#include "gguf_writer.h"
#include "cli_run.h"
#include "shared_data.h"
#include "tiny_model.h"

static const char *model(const char *name)
{
    static char path[4][1024];
    static int k;
    char rel[256];
    snprintf(rel, sizeof rel, "models/%s", name);
    td_need_path(path[k & 3], sizeof path[0], rel);
    return path[k++ & 3];
}

static void no_sanitizer_report(const run_out *r)
{
    cr_expect(!strstr(r->err, "Sanitizer") && !strstr(r->err, "runtime error"),
              "sanitizer report: %s", r->err);
}

/* Exit status code and exactly one "genloop: error: " line, first on
 * stderr, containing needle. Hint lines may follow ("(see ...)"). */
static void expect_error(const run_out *r, int code, const char *needle)
{
    cr_expect_eq(r->status, code, "exit %d, expected %d; stderr: %s", r->status, code, r->err);
    cr_expect(strncmp(r->err, "genloop: error: ", 16) == 0, "no error line first: %s", r->err);
    const char *second = strstr(r->err + 1, "genloop: error: ");
    cr_expect(second == NULL, "more than one error line: %s", r->err);
    const char *nl = strchr(r->err, '\n');
    cr_expect(nl != NULL, "error line not terminated: %s", r->err);
    if (needle && nl) {
        char line[2048];
        size_t n =
            (size_t)(nl - r->err) < sizeof line - 1 ? (size_t)(nl - r->err) : sizeof line - 1;
        memcpy(line, r->err, n);
        line[n] = '\0';
        cr_expect(strstr(line, needle) != NULL, "'%s' not in the error line: %s", needle, line);
    }
    no_sanitizer_report(r);
}

static void expect_ok(const run_out *r)
{
    cr_expect_eq(r->status, 0, "exit %d; stderr: %s", r->status, r->err);
    cr_expect(!strstr(r->err, "genloop: error: "), "error printed: %s", r->err);
    no_sanitizer_report(r);
}

static run_out r;

/* ---- flags --------------------------------------------------------------- */

Test(cli_errors, invalid_flags_exit_2)
{
    const char *m = "x.gguf";
    RUN(&r, NULL, "run", "-m", m, "-p", "x", "-x");
    expect_error(&r, 2, "-x");
    RUN(&r, NULL, "run", "-m", m, "-p", "x", "--");
    expect_error(&r, 2, "--");
    RUN(&r, NULL, "tokenize", "-m", m, "--json");
    expect_error(&r, 2, "--json");
    RUN(&r, NULL, "tokenize", "-m", m, "-n", "3");
    expect_error(&r, 2, "-n");
    RUN(&r, NULL, "info", "--no-ring");
    expect_error(&r, 2, "--no-ring");
    RUN(&r, NULL, "info", "a.gguf", "b.gguf");
    expect_error(&r, 2, "b.gguf");
    RUN(&r, NULL, "run", "-m", m, "-p", "x", "stray");
    expect_error(&r, 2, "stray");
    RUN(&r, NULL, "eval", "-m", m, "--ids", "1");
    expect_error(&r, 2, "--logits-out");
    RUN(&r, NULL, "eval", "-m", m, "--logits-out", "/tmp/x");
    expect_error(&r, 2, "--ids");
    RUN(&r, NULL, "tokenize");
    expect_error(&r, 2, "-m");
    RUN(&r, NULL, "run", "-m", m, "-p", "x", "-c");
    expect_error(&r, 2, "-c");
    RUN(&r, NULL, "run", "-m", m, "-p", "x", "--backend", "");
    expect_error(&r, 2, "backend");

    RUN(&r, NULL, "frobnicate");
    expect_error(&r, 2, "frobnicate");
    /* no command: the usage text, exit 2 */
    const char *const none[] = { NULL };
    cr_assert_eq(cli_run(&r, NULL, 0, none), 0);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "usage:"), "%s", r.err);
}

Test(cli_errors, out_of_range_values_exit_2)
{
    const char *m = "x.gguf";
    static const char *const bad[][2] = {
        { "-n", "-2" },
        { "-n", "-99999999999" },
        { "-n", "1e3" },
        { "-n", "" },
        { "-t", "0" },
        { "-t", "-1" },
        { "-t", "100000" },
        { "-c", "0" },
        { "-c", "-16" },
        { "-c", "16777217" },
        { "-c", "99999999999999999999999" },
        { "--top-p", "2" },
        { "--top-p", "0" },
        { "--top-p", "-0.5" },
        { "--top-p", "nan" },
        { "--min-p", "1.5" },
        { "--min-p", "-1" },
        { "--temp", "-1" },
        { "--temp", "inf" },
        { "--temp", "1e999" },
        { "--temp", "0x" },
        { "--top-k", "-1" },
        { "--repeat-penalty", "0" },
        { "--repeat-penalty", "-2" },
        { "--repeat-last-n", "-1" },
        { "--seed", "-1" },
        { "--seed", "99999999999999999999999" },
        { "--seed", "12abc" },
        { "--keep", "-1" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        RUN(&r, NULL, "run", "-m", m, "-p", "x", bad[i][0], bad[i][1]);
        expect_error(&r, 2, bad[i][0]);
    }
    RUN(&r, NULL, "run", "-m", m, "-p", "x", "--keep", "16", "-c", "16");
    expect_error(&r, 2, "--keep");
    RUN(&r, NULL, "eval", "-m", m, "--ids", "", "--logits-out", "/tmp/x");
    expect_error(&r, 2, "--ids");
    RUN(&r, NULL, "eval", "-m", m, "--ids", "-1", "--logits-out", "/tmp/x");
    expect_error(&r, 2, "--ids");
    RUN(&r, NULL, "eval", "-m", m, "--ids", "99999999999", "--logits-out", "/tmp/x");
    expect_error(&r, 2, "--ids");
}

/* ---- files --------------------------------------------------------------- */

Test(cli_errors, bad_model_files_exit_1)
{
    RUN(&r, NULL, "run", "-m", "", "-p", "x");
    expect_error(&r, 1, NULL);
    RUN(&r, NULL, "run", "-m", "/nonexistent/dir/model.gguf", "-p", "x");
    expect_error(&r, 1, "/nonexistent/dir/model.gguf");
    RUN(&r, NULL, "info", "/tmp");
    expect_error(&r, 1, "directory");
    RUN(&r, NULL, "tokenize", "-m", "/tmp", "-p", "x");
    expect_error(&r, 1, "directory");
    RUN(&r, NULL, "eval", "-m", "/tmp", "--ids", "1", "--logits-out", "/tmp/gl_clie_x");
    expect_error(&r, 1, "directory");
    RUN(&r, NULL, "info", "/dev/null");
    expect_error(&r, 1, "not a regular file");

    /* a FIFO: must not block waiting for a writer */
    char fifo[64];
    snprintf(fifo, sizeof fifo, "/tmp/gl_clie_fifo_%d", (int)getpid());
    unlink(fifo);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    RUN(&r, NULL, "info", fifo);
    expect_error(&r, 1, "not a regular file");
    unlink(fifo);

    char path[64];
    snprintf(path, sizeof path, "/tmp/gl_clie_empty_%d.gguf", (int)getpid());
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    fclose(f);
    RUN(&r, NULL, "info", path);
    expect_error(&r, 1, "empty");
    /* not a GGUF at all */
    f = fopen(path, "wb");
    fputs("#!/bin/sh\necho hello\n", f);
    fclose(f);
    RUN(&r, NULL, "run", "-m", path, "-p", "x");
    expect_error(&r, 1, "magic");
    /* unreadable (only meaningful when not root) */
    if (geteuid() != 0) {
        chmod(path, 0);
        RUN(&r, NULL, "info", path);
        expect_error(&r, 1, path);
    }
    unlink(path);

    /* --logits-out into a directory that does not exist */
    RUN(&r, NULL, "eval", "-m", model("stories260K.gguf"), "--ids", "1 2", "--logits-out",
        "/nonexistent/dir/out.f32");
    expect_error(&r, 1, "/nonexistent/dir/out.f32");
    /* --logits-out is a directory */
    RUN(&r, NULL, "eval", "-m", model("stories260K.gguf"), "--ids", "1 2", "--logits-out", "/tmp");
    expect_error(&r, 1, "/tmp");
}

/* ---- prompts ------------------------------------------------------------- */

static char tiny_path[64];

static const char *write_tiny(const tm_opts *o, const char *tag)
{
    snprintf(tiny_path, sizeof tiny_path, "/tmp/gl_clie_%s_%d.gguf", tag, (int)getpid());
    gw_buf b;
    gw_init(&b);
    tm_build(&b, o);
    FILE *f = fopen(tiny_path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(b.data, 1, b.len, f), b.len);
    cr_assert_eq(fclose(f), 0);
    gw_free(&b);
    return tiny_path;
}

Test(cli_errors, prompts)
{
    const char *m = model("stories260K.gguf");
    /* empty prompt: starts from BOS alone (documented) */
    RUN(&r, NULL, "run", "-m", m, "-p", "", "-n", "4", "--temp", "0");
    expect_ok(&r);
    /* empty prompt and no BOS: nothing to start from */
    const char *nobos = write_tiny(
        &(tm_opts){ .override_key = "tokenizer.ggml.bos_token_id", .override_val = -1 }, "nobos");
    RUN(&r, NULL, "run", "-m", nobos, "-p", "", "-n", "4");
    expect_error(&r, 2, "empty");
    unlink(nobos);

    /* a prompt longer than the context: an error without the ring ... */
    static char long_prompt[8192];
    long_prompt[0] = '\0';
    for (int i = 0; i < 40; i++)
        strcat(long_prompt, "Once upon a time there was a dog. ");
    RUN(&r, NULL, "run", "-m", m, "-p", long_prompt, "-c", "16", "-n", "4", "--no-ring");
    expect_error(&r, 2, "context");
    /* ... and slides through the ring with it (documented default) */
    RUN(&r, NULL, "run", "-m", m, "-p", long_prompt, "-c", "16", "-n", "4", "--temp", "0");
    expect_ok(&r);
    RUN(&r, NULL, "run", "-m", m, "-p", long_prompt, "-c", "16", "--keep", "4", "-n", "4");
    expect_ok(&r);

    /* non-UTF-8 prompts are text like any other; JSON output stays valid */
    RUN(&r, NULL, "run", "-m", m, "-p", "\xff\xfe\x80 abc \xc3", "-n", "8", "--json", "--temp",
        "0");
    expect_ok(&r);
    cr_expect(strstr(r.out, "\"tokens\""), "%s", r.out);
    for (const unsigned char *p = (const unsigned char *)r.out; *p; p++)
        cr_expect(*p < 0x80 || (*p >= 0xc2 && *p <= 0xf4) || (*p >= 0x80 && *p <= 0xbf),
                  "invalid byte %#x in JSON", *p);
    RUN(&r, NULL, "tokenize", "-m", m, "-p", "\xed\xa0\x80\xf4\x90\x80\x80");
    expect_ok(&r);
    /* stdin with NULs and invalid UTF-8 */
    RUN_IN(&r, "a\0b\xff\xc3(\n", 7, "tokenize", "-m", m, "--no-bos");
    expect_ok(&r);
    cr_expect(r.out[0] == '[', "%s", r.out);
    /* a megabyte on stdin */
    size_t big = 1 << 20;
    char *text = malloc(big);
    for (size_t i = 0; i < big; i++)
        text[i] = "Once upon a time \xc3\xa9\xff"[i % 20];
    RUN_IN(&r, text, big, "tokenize", "-m", m);
    expect_ok(&r);
    free(text);

    /* -n 0 generates nothing; -n -1 is unlimited (stopped here by the context) */
    RUN(&r, NULL, "run", "-m", m, "-p", "Once", "-n", "0");
    expect_ok(&r);
    RUN(&r, NULL, "run", "-m", m, "-p", "Once", "-n", "-1", "-c", "32", "--no-ring", "--json");
    expect_ok(&r);
    cr_expect(strstr(r.out, "\"stop\": \"context\"") || strstr(r.out, "\"stop\": \"eos\""), "%s",
              r.out);
}

/* ---- resources ----------------------------------------------------------- */

/* 512 layers of a tiny Q4_0 model: 3 MB on disk, but a full-size context
 * needs 2 * 512 * 2^24 * 32 bytes = 512 GiB of KV cache. */
Test(cli_errors, context_larger_than_memory, .timeout = 120)
{
    const char *m = write_tiny(&(tm_opts){ .wtype = GGUF_T_Q4_0, .n_layers = 512 }, "deep");
    RUN(&r, NULL, "run", "-m", m, "-p", "Once", "-c", "16777216", "-n", "2");
    expect_error(&r, 1, "bytes");
    cr_expect(strstr(r.err, "549755813888"), "KV bytes not named: %s", r.err);
    /* the library says the same */
    gl_model *mdl;
    gl_error err;
    cr_assert_eq(gl_model_load(&mdl, m, NULL, &err), GL_OK, "%s", err.msg);
    gl_ctx *c = NULL;
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = 1 << 24;
    cp.n_threads = 1;
    cr_expect_eq(gl_ctx_create(&c, mdl, &cp, &err), GL_ERR_NOMEM);
    cr_expect(c == NULL);
    cr_expect(strstr(err.msg, "bytes") && strstr(err.msg, "memory"), "%s", err.msg);
    /* a small context of the same model works */
    cp.n_ctx = 8;
    cr_expect_eq(gl_ctx_create(&c, mdl, &cp, &err), GL_OK, "%s", err.msg);
    gl_ctx_free(c);
    gl_model_free(mdl);
    RUN(&r, NULL, "run", "-m", m, "-p", "Once", "-c", "8", "-n", "2");
    expect_ok(&r);
    unlink(m);
}
