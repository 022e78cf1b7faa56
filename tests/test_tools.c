/* genloop synth and genloop bench through the command line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *bin(void)
{
    const char *b = getenv("GENLOOP_BIN");
    return b ? b : "build/genloop";
}

/* Runs a shell command line with genloop as $G; returns its exit status
 * and its stdout in out. */
static int sh(char *out, size_t cap, const char *fmt, const char *a, const char *b)
{
    char cmd[2048], line[1024];
    snprintf(line, sizeof line, fmt, a, b);
    snprintf(cmd, sizeof cmd, "G='%s'; %s", bin(), line);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = out ? fread(out, 1, cap - 1, p) : 0;
    if (out)
        out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static bool same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    cr_assert(fa && fb);
    bool same = true;
    int ca, cb;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        same = ca == cb;
    } while (same && ca != EOF);
    fclose(fa);
    fclose(fb);
    return same;
}

static const char *shape = "--shape custom --dim 128 --layers 2 --heads 4 --kv-heads 2 "
                           "--ffn 256 --vocab 600 --ctx 128";

Test(synth, deterministic_and_valid)
{
    /* q4_k_m and iq4_xs on rows of 128: the mixes' 32-element fallbacks */
    const char *types[] = { "q4_0", "q8_0", "f16", "f32", "q4_k_m", "iq4_xs" };
    for (int i = 0; i < 6; i++) {
        char a[64], b[64], cmd[512];
        snprintf(a, sizeof a, "/tmp/gl_synth_a_%s.gguf", types[i]);
        snprintf(b, sizeof b, "/tmp/gl_synth_b_%s.gguf", types[i]);
        snprintf(cmd, sizeof cmd, "$G synth %s --type %s -o %%s", shape, types[i]);
        cr_assert_eq(sh(NULL, 0, cmd, a, NULL), 0);
        cr_assert_eq(sh(NULL, 0, cmd, b, NULL), 0);
        cr_expect(same_file(a, b), "synth %s is not deterministic", types[i]);
        static char out[1 << 14];
        cr_expect_eq(sh(out, sizeof out, "$G info %s", a, NULL), 0, "%s", out);
        cr_expect(strstr(out, "layers 2"), "%s", out);
        cr_expect_eq(
            sh(out, sizeof out, "$G run -m %s -p 'the cat' -n 8 --temp 0 2>/dev/null", a, NULL), 0);
        remove(a);
        remove(b);
    }
}

Test(synth, rejects_bad_shapes)
{
    cr_expect_eq(sh(NULL, 0, "$G synth --shape nope -o /tmp/x.gguf 2>/dev/null", NULL, NULL), 2);
    cr_expect_eq(sh(NULL, 0, "$G synth --shape stories15m --type q5_k -o /tmp/x.gguf 2>/dev/null",
                    NULL, NULL),
                 2);
    cr_expect_eq(sh(NULL, 0,
                    "$G synth --shape custom --dim 100 --heads 3 -o /tmp/x.gguf 2>/dev/null", NULL,
                    NULL),
                 2);
}

Test(bench, json_fields)
{
    const char *f = "/tmp/gl_bench_model.gguf";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "$G synth %s --type q4_0 -o %%s", shape);
    cr_assert_eq(sh(NULL, 0, cmd, f, NULL), 0);
    static char out[1 << 14];
    cr_assert_eq(
        sh(out, sizeof out, "$G bench -m %s -p 16 -n 8 -r 2 -t 2 --bw-mib 64 --json", f, NULL), 0,
        "%s", out);
    const char *keys[] = { "\"prefill_tok_s\"", "\"decode_tok_s\"",
                           "\"latency_ms\"",    "\"p50\"",
                           "\"p90\"",           "\"p99\"",
                           "\"ttft_ms\"",       "\"peak_rss_bytes\"",
                           "\"bandwidth_gbs\"", "\"weight_bytes_per_token\"",
                           "\"roofline_pct\"" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_expect(strstr(out, keys[i]), "missing %s in %s", keys[i], out);
    remove(f);
}
