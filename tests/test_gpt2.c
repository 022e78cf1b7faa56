/* GPT-2: the byte-level BPE tokenizer against the reference vectors, the
 * forward pass against the reference logits and greedy tokens, the crop
 * context policy against a recompute-everything oracle, and hostile BPE
 * vocabularies. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genloop.h"
#include "gguf.h"
#include "gguf_writer.h"
#include "kernels.h"
#include "cli_run.h"
#include "shared_data.h"
#include "tokenizer.h"
#include "tokenizer_bpe.h"

#define MODEL "synthetic-gpt2-tiny"
#define VOCAB "tokenizers/ggml-vocab-gpt-2.gguf"

static const char *shared_path(const char *rel)
{
    static char path[4][1024];
    static int k;
    td_need_shared();
    td_path(path[k & 3], sizeof path[0], rel);
    return path[k++ & 3];
}

static gl_model *load(const char *rel, const char *backend, bool vocab_only)
{
    gl_model_params mp = gl_model_default_params();
    mp.backend = backend;
    mp.vocab_only = vocab_only;
    gl_model *m = NULL;
    gl_error err;
    cr_assert_eq(gl_model_load(&m, shared_path(rel), &mp, &err), GL_OK, "%s", err.msg);
    return m;
}

static gl_ctx *make_ctx(gl_model *m, int n_ctx, int threads)
{
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = n_ctx;
    cp.n_threads = threads;
    gl_ctx *c = NULL;
    gl_error err;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    return c;
}

static int32_t argmax(const float *v, int n)
{
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return best;
}

/* Parses the integers of s up to the first ']' or newline. */
static int parse_ints(const char *s, int32_t *out, int cap)
{
    int n = 0;
    while (*s && *s != ']' && *s != '\n') {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) {
            s++;
            continue;
        }
        if (n < cap)
            out[n] = (int32_t)v;
        n++;
        s = end;
    }
    return n;
}

static run_out r;

/* ---- tokenizer ------------------------------------------------------------ */

typedef struct vectors {
    char *inp, *exp; /* owned buffers */
    char *text[128]; /* NUL-terminated inputs */
    size_t len[128];
    char *want[128]; /* expected id lines */
    int n;
} vectors;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)sz + 1);
    cr_assert_eq(fread(buf, 1, (size_t)sz, f), (size_t)sz);
    buf[sz] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)sz;
    return buf;
}

/* The reference vectors: inputs separated by "\n__ggml_vocab_test__\n",
 * expected ids one line each. */
static void read_vectors(vectors *v)
{
    char path[1200];
    snprintf(path, sizeof path, "%s.inp", shared_path(VOCAB));
    v->inp = read_file(path, NULL);
    snprintf(path, sizeof path, "%s.out", shared_path(VOCAB));
    v->exp = read_file(path, NULL);
    const char *sep = "\n__ggml_vocab_test__\n";
    char *s = v->inp, *e = v->exp;
    v->n = 0;
    for (char *end; (end = strstr(s, sep)) && v->n < 128; s = end + strlen(sep)) {
        *end = '\0';
        char *eol = strchr(e, '\n');
        cr_assert(eol, "fewer expected lines than inputs");
        *eol = '\0';
        v->text[v->n] = s;
        v->len[v->n] = (size_t)(end - s);
        v->want[v->n] = e;
        v->n++;
        e = eol + 1;
    }
    cr_assert_gt(v->n, 30, "only %d vectors", v->n);
}

/* Every reference vector through `genloop tokenize`, text on stdin. */
Test(gpt2_tokenizer, cli_reproduces_reference_vectors)
{
    td_need_shared();
    vectors v;
    read_vectors(&v);
    for (int i = 0; i < v.n; i++) {
        RUN(&r, v.text[i], "tokenize", "-m", shared_path(VOCAB), "--no-bos");
        cr_assert_eq(r.status, 0, "%s", r.err);
        static int32_t got[4096], want[4096];
        int ng = parse_ints(r.out, got, 4096), nw = parse_ints(v.want[i], want, 4096);
        cr_expect(ng == nw && memcmp(got, want, sizeof(int32_t) * (size_t)ng) == 0,
                  "vector %d '%s': got %d ids, want %d (%s)", i, v.text[i], ng, nw, v.want[i]);
    }
    /* without --no-bos the vocabulary decides: GPT-2 adds no BOS */
    RUN(&r, NULL, "tokenize", "-m", shared_path(VOCAB), "-p", "Hello world");
    cr_expect_str_eq(r.out, "[15496, 995]\n");
    free(v.inp);
    free(v.exp);
}

/* Tokenize then detokenize (streaming, one token at a time) gives the text
 * back byte for byte. */
Test(gpt2_tokenizer, detok_round_trip)
{
    td_need_shared();
    vectors v;
    read_vectors(&v);
    gl_model *m = load(VOCAB, NULL, true);
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    cr_expect(!mi.add_bos, "GPT-2 prompts start without BOS");
    cr_expect_eq(mi.bos_id, 50256);
    cr_expect_eq(mi.eos_id, 50256);
    for (int i = 0; i < v.n; i++) {
        gl_error err;
        static int32_t ids[8192];
        int n = gl_tokenize(m, v.text[i], v.len[i], false, ids, 8192, &err);
        cr_assert_geq(n, 0, "%s", err.msg);
        static char text[1 << 16];
        size_t len = 0;
        gl_detok d;
        gl_detok_init(&d);
        for (int k = 0; k < n; k++)
            len += (size_t)gl_detok_push(m, &d, ids[k], text + len, 64);
        len += (size_t)gl_detok_flush(&d, text + len, 64);
        cr_expect(len == v.len[i] && memcmp(text, v.text[i], len) == 0,
                  "vector %d: '%s' came back as '%.*s'", i, v.text[i], (int)len, text);
    }
    /* control tokens have no text */
    char buf[64];
    gl_detok d;
    gl_detok_init(&d);
    cr_expect_eq(gl_detok_push(m, &d, 50256, buf, sizeof buf), 0);
    gl_model_free(m);
    free(v.inp);
    free(v.exp);
}

/* Any bytes at all (invalid UTF-8, NULs) tokenize, and the tokens' raw
 * pieces concatenate back to exactly those bytes. */
Test(gpt2_tokenizer, arbitrary_bytes_round_trip)
{
    td_need_shared();
    gguf_file g;
    gl_mapping map;
    gl_error err;
    cr_assert_eq(gl_map_file(&map, shared_path(VOCAB), &err), GL_OK);
    cr_assert_eq(gguf_parse(&g, map.data, map.size, &err), GL_OK);
    gl_tokenizer *t;
    cr_assert_eq(gl_tokenizer_load(&t, &g, &err), GL_OK, "%s", err.msg);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int it = 0; it < 300; it++) {
        unsigned char text[257];
        const size_t len = (size_t)(it % 257);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* mostly ASCII letters/spaces, some high bytes */
            unsigned v = (unsigned)(x >> 24) & 0xFF;
            text[i] = (it & 1) || v >= 200 ? (unsigned char)v : (unsigned char)" aZ09'\n\t."[v % 9];
        }
        static int32_t ids[1024];
        int n = gl_tokenizer_encode(t, (const char *)text, len, false, ids, 1024, &err);
        cr_assert_geq(n, 0, "%s", err.msg);
        cr_assert_leq((size_t)n, len);
        unsigned char back[257];
        size_t w = 0;
        for (int k = 0; k < n; k++) {
            size_t pl;
            const char *p = gl_tokenizer_piece(t, ids[k], &pl);
            cr_assert(w + pl <= len, "pieces overrun the input");
            memcpy(back + w, p, pl);
            w += pl;
        }
        cr_assert(w == len && memcmp(back, text, len) == 0, "iteration %d: bytes differ", it);
    }
    gl_tokenizer_free(t);
    gguf_free(&g);
    gl_unmap_file(&map);
}

/* ---- hostile and hand-made BPE vocabularies ------------------------------ */

enum bpe_flaw {
    BPE_OK,
    BPE_NO_MERGES,
    BPE_MERGES_NOT_STR,
    BPE_PRE_UNKNOWN,
    BPE_PRE_NOT_STR,
};

/* "a" "b" "c" "Ġ" "ab" "Ġab" "abc" "<|endoftext|>", with three usable merges
 * and three that can never apply. */
static gl_status load_mini_bpe(enum bpe_flaw flaw, gl_tokenizer **t, int *counts, gl_error *err)
{
    static const char *const tokens[] = { "a",
                                          "b",
                                          "c",
                                          "\xC4\xA0",
                                          "ab",
                                          "\xC4\xA0"
                                          "ab",
                                          "abc",
                                          "<|endoftext|>" };
    static const char *const merges[] = { "a b", "\xC4\xA0 ab", "ab c", "x y", /* unknown tokens */
                                          "a",                                 /* no separator */
                                          "b a" }; /* "ba" is no token */
    static const int32_t types[] = { 1, 1, 1, 1, 1, 1, 1, 3 };
    gw_buf b;
    gw_init(&b);
    uint64_t n_kv =
        4 + (flaw != BPE_NO_MERGES) + (flaw == BPE_PRE_UNKNOWN || flaw == BPE_PRE_NOT_STR);
    gw_header(&b, 3, 0, n_kv);
    gw_kv_str(&b, "general.architecture", "gpt2");
    gw_kv_str(&b, "tokenizer.ggml.model", "gpt2");
    gw_kv_str_arr(&b, "tokenizer.ggml.tokens", tokens, 8);
    gw_kv_i32_arr(&b, "tokenizer.ggml.token_type", types, 8);
    if (flaw == BPE_MERGES_NOT_STR)
        gw_kv_i32_arr(&b, "tokenizer.ggml.merges", types, 8);
    else if (flaw != BPE_NO_MERGES)
        gw_kv_str_arr(&b, "tokenizer.ggml.merges", merges, 6);
    if (flaw == BPE_PRE_UNKNOWN)
        gw_kv_str(&b, "tokenizer.ggml.pre", "bogus-pre");
    if (flaw == BPE_PRE_NOT_STR)
        gw_kv_u32(&b, "tokenizer.ggml.pre", 7);
    gw_pad(&b, 32);
    gguf_file g;
    gl_status st = gguf_parse(&g, b.data, b.len, err);
    cr_assert_eq(st, GL_OK, "test GGUF does not parse: %s", err->msg);
    st = gl_tokenizer_load(t, &g, err);
    if (st == GL_OK && counts) {
        gl_bpe *bpe;
        cr_assert_eq(gl_bpe_load(&bpe, *t, &g, err), GL_OK, "%s", err->msg);
        gl_bpe_counts(bpe, &counts[0], &counts[1]);
        gl_bpe_free(bpe);
    }
    gguf_free(&g);
    gw_free(&b);
    return st;
}

Test(gpt2_tokenizer, mini_vocab_ranks_and_skipped_merges)
{
    gl_tokenizer *t = NULL;
    gl_error err = { 0 };
    int counts[2];
    cr_assert_eq(load_mini_bpe(BPE_OK, &t, counts, &err), GL_OK, "%s", err.msg);
    cr_expect(counts[0] == 3 && counts[1] == 3, "%d merges in use, %d skipped", counts[0],
              counts[1]);
    cr_expect_str_eq(gl_tokenizer_model(t), "gpt2");
    cr_expect_eq(gl_tokenizer_bos(t), 7, "<|endoftext|> is BOS by default");
    cr_expect(!gl_tokenizer_add_bos(t));
    int32_t ids[16];
    /* " abc": Ġ a b c -> Ġ ab c (rank 0) -> Ġab c (rank 1 beats ab+c, rank 2) */
    int n = gl_tokenizer_encode(t, " abc", 4, false, ids, 16, &err);
    cr_assert_eq(n, 2, "%s", err.msg);
    cr_expect(ids[0] == 5 && ids[1] == 2, "got %d %d", ids[0], ids[1]);
    /* "abc" alone: ab, then abc */
    n = gl_tokenizer_encode(t, "abc", 3, false, ids, 16, &err);
    cr_assert_eq(n, 1);
    cr_expect_eq(ids[0], 6);
    /* "ba" is not a token, so the skipped "b a" merge never applies */
    n = gl_tokenizer_encode(t, "ba", 2, true, ids, 16, &err);
    cr_assert_eq(n, 3);
    cr_expect(ids[0] == 7 && ids[1] == 1 && ids[2] == 0);
    /* a byte whose character is no token, and no unknown token: a clean error */
    n = gl_tokenizer_encode(t, "az", 2, false, ids, 16, &err);
    cr_expect_eq(n, -1);
    cr_expect(strstr(err.msg, "0x7A"), "%s", err.msg);
    /* detokenization maps Ġ back to a space */
    size_t len;
    const char *p = gl_tokenizer_piece(t, 5, &len);
    cr_expect(len == 3 && memcmp(p, " ab", 3) == 0);
    gl_tokenizer_free(t);
}

Test(gpt2_tokenizer, hostile_vocabularies)
{
    static const struct {
        enum bpe_flaw flaw;
        gl_status code;
        const char *msg;
    } cases[] = {
        { BPE_NO_MERGES, GL_ERR_FORMAT, "tokenizer.ggml.merges missing" },
        { BPE_MERGES_NOT_STR, GL_ERR_FORMAT, "tokenizer.ggml.merges is not a string array" },
        { BPE_PRE_NOT_STR, GL_ERR_FORMAT, "tokenizer.ggml.pre is not a string" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gl_tokenizer *t = (gl_tokenizer *)&t;
        gl_error err = { 0 };
        gl_status st = load_mini_bpe(cases[i].flaw, &t, NULL, &err);
        cr_expect_eq(st, cases[i].code, "flaw %d: status %d (%s)", cases[i].flaw, st, err.msg);
        cr_expect_null(t);
        cr_expect(strstr(err.msg, cases[i].msg), "flaw %d: '%s' lacks '%s'", cases[i].flaw, err.msg,
                  cases[i].msg);
    }
}

/* An unknown pre-tokenizer name is not fatal: the default split rules
 * apply and the tokenizer says so, naming it. */
Test(gpt2_tokenizer, unknown_pre_tokenizer_warns)
{
    gl_tokenizer *t = NULL;
    gl_error err = { 0 };
    gl_status st = load_mini_bpe(BPE_PRE_UNKNOWN, &t, NULL, &err);
    cr_assert_eq(st, GL_OK, "%s", err.msg);
    const char *w = gl_tokenizer_warning(t);
    cr_assert_not_null(w);
    cr_expect(strstr(w, "'bogus-pre'") && strstr(w, "default"), "%s", w);
    int32_t ids[16];
    cr_expect_gt(gl_tokenizer_encode(t, "ab", 2, false, ids, 16, &err), 0, "%s", err.msg);
    gl_tokenizer_free(t);
}

/* The split rules of each pre-tokenizer, on a vocabulary of byte tokens
 * that names it: pieces written as "a|b|c". The expected splits follow the
 * reference's regular expressions by hand. */
static void expect_split(const char *pre, const char *text, const char *want)
{
    static const char *const tokens[] = { "a", "<|endoftext|>" };
    static const char *const merges[] = { "a a" };
    static const int32_t types[] = { 1, 3 };
    gw_buf b;
    gw_init(&b);
    gw_header(&b, 3, 0, 6);
    gw_kv_str(&b, "general.architecture", "gpt2");
    gw_kv_str(&b, "tokenizer.ggml.model", "gpt2");
    gw_kv_str_arr(&b, "tokenizer.ggml.tokens", tokens, 2);
    gw_kv_i32_arr(&b, "tokenizer.ggml.token_type", types, 2);
    gw_kv_str_arr(&b, "tokenizer.ggml.merges", merges, 1);
    gw_kv_str(&b, "tokenizer.ggml.pre", pre);
    gw_pad(&b, 32);
    gl_error err;
    gguf_file g;
    cr_assert_eq(gguf_parse(&g, b.data, b.len, &err), GL_OK, "%s", err.msg);
    gl_tokenizer *t;
    cr_assert_eq(gl_tokenizer_load(&t, &g, &err), GL_OK, "%s", err.msg);
    cr_expect_null(gl_tokenizer_warning(t), "%s: %s", pre, gl_tokenizer_warning(t));
    gl_bpe *bpe;
    cr_assert_eq(gl_bpe_load(&bpe, t, &g, &err), GL_OK, "%s", err.msg);
    size_t ends[64];
    const size_t len = strlen(text);
    int n = gl_bpe_split(bpe, text, len, ends, 64);
    cr_assert(n >= 0 && n <= 64);
    char got[512];
    size_t w = 0, from = 0;
    for (int i = 0; i < n; i++) {
        if (i)
            got[w++] = '|';
        memcpy(got + w, text + from, ends[i] - from);
        w += ends[i] - from;
        from = ends[i];
    }
    got[w] = '\0';
    cr_expect_str_eq(got, want, "pre-tokenizer %s: got [%s] want [%s]", pre, got, want);
    gl_bpe_free(bpe);
    gl_tokenizer_free(t);
    gguf_free(&g);
    gw_free(&b);
}

Test(gpt2_tokenizer, pre_tokenizer_splits)
{
    expect_split("llama-bpe", "Hello world's 12345\n\n", "Hello| world|'s| |123|45|\n\n");
    expect_split("llama-bpe", "I'M  fine!!\n", "I|'M| | fine|!!\n");
    expect_split("llama-bpe", "a \n\n b", "a| \n\n| b");
    expect_split("llama-bpe", "DON'Tgo", "DON|'T|go"); /* contractions ignore case */
    expect_split("gpt-2", "DON'Tgo", "DON|'|Tgo");     /* ... here they do not */
    expect_split("qwen2", "x=12345", "x|=|1|2|3|4|5");
    expect_split("qwen2", "I'M  fine!!\n", "I|'M| | fine|!!\n");
    expect_split("gpt-2", "Hello world's 12345\n\n", "Hello| world|'s| 12345|\n\n");
    expect_split("mpt", "I'M fine", "I|'|M| fine");
    expect_split("starcoder", "a 123", "a| |1|2|3");
    expect_split("smollm", "v2.0", "v|2|.|0");
    expect_split("falcon", "x+=100;", "x|+=|100|;");
    expect_split("default", "1234", "123|4");
    expect_split("deepseek-coder", "ab12\n", "ab|1|2|\n");
    expect_split("tekken", "HELLO world HelloWorld", "HELLO| world| Hello|World");
    expect_split("tekken", "a/b x1/\n", "a|/b| x|1|/\n");
    expect_split("deepseek-v3", "x.y 12345", "x|.y| |123|45");
    expect_split("deepseek-llm", "Hi \xE4\xBD\xA0\xE5\xA5\xBD 99",
                 "Hi| |\xE4\xBD\xA0\xE5\xA5\xBD| |99");
}

/* ---- kernels --------------------------------------------------------------- */

/* Every backend's layernorm, GELU and bias add against double precision. */
Test(gpt2_kernels, match_double_reference)
{
    const char *names[8];
    const int nb = gl_backend_list(names, 8);
    static float x[1031], w[1031], bias[1031], out[1031];
    uint64_t s = 12345;
    for (int i = 0; i < 1031; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 8.0 - 3.0);
        w[i] = 0.5f + (float)(i % 7) * 0.1f;
        bias[i] = (float)(i % 5) * 0.2f - 0.4f;
    }
    for (int bi = 0; bi < nb; bi++) {
        if (gl_backend_check(names[bi], NULL) != GL_OK)
            continue;
        gl_kernels k;
        gl_error err;
        cr_assert_eq(gl_kernels_init(&k, names[bi], &err), GL_OK, "%s", err.msg);
        static const int sizes[] = { 1, 7, 16, 33, 128, 1031 };
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const int n = sizes[si];
            double mean = 0, var = 0;
            for (int i = 0; i < n; i++)
                mean += x[i];
            mean /= n;
            for (int i = 0; i < n; i++)
                var += (x[i] - mean) * (x[i] - mean);
            var /= n;
            k.layernorm(out, x, w, bias, n, 1e-5f);
            for (int i = 0; i < n; i++) {
                double want = (x[i] - mean) / sqrt(var + 1e-5) * w[i] + bias[i];
                cr_expect(fabs(out[i] - want) <= 1e-4 * (1 + fabs(want)),
                          "[%s] layernorm n=%d [%d]: %g != %g", names[bi], n, i, out[i], want);
            }
            k.gelu(out, x, n);
            for (int i = 0; i < n; i++) {
                double v = x[i];
                double want = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
                cr_expect(fabs(out[i] - want) <= 1e-5 * (1 + fabs(want)),
                          "[%s] gelu n=%d [%d]: %g != %g", names[bi], n, i, out[i], want);
            }
            memcpy(out, x, sizeof(float) * (size_t)n);
            k.add_bias(out, bias, n);
            for (int i = 0; i < n; i++)
                cr_expect_eq(out[i], x[i] + bias[i], "[%s] add_bias n=%d [%d]", names[bi], n, i);
        }
    }
}

/* ---- the forward pass against the reference -------------------------------- */

/* Largest error allowed: relative RMS of the logits over their std. A top-2
 * gap below it is a tie within tolerance: either token is a right answer. */
#define TOL 0.005

static double row_std(const float *v, int n)
{
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
        mean += v[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        var += (v[i] - mean) * (v[i] - mean);
    return sqrt(var / n);
}

/* Teacher-forces prompt + greedy[0 : n_greedy - 1]: all rows of logits. */
static float *teacher_force(gl_model *m, const td_ref *rf)
{
    const int n = rf->n_prompt + rf->n_greedy - 1;
    int32_t *ids = malloc(sizeof *ids * (size_t)n);
    memcpy(ids, rf->prompt_tokens, sizeof *ids * (size_t)rf->n_prompt);
    memcpy(ids + rf->n_prompt, rf->greedy, sizeof *ids * (size_t)(rf->n_greedy - 1));
    float *lg = malloc(sizeof *lg * (size_t)n * (size_t)rf->n_vocab);
    gl_ctx *c = make_ctx(m, 256, 1);
    gl_error err;
    cr_assert_eq(gl_ctx_eval(c, ids, n, lg, true, &err), GL_OK, "%s", err.msg);
    gl_ctx_free(c);
    free(ids);
    return lg;
}

/* Along the reference's greedy path, the first step whose argmax is not the
 * reference's token (n_greedy: none). Every step must agree or be a tie
 * within TOL. */
static int first_disagreement(const td_ref *rf, const float *lg, const char *tag, int p)
{
    int first = rf->n_greedy;
    for (int s = 0; s < rf->n_greedy; s++) {
        const float *row = lg + (size_t)(rf->n_prompt - 1 + s) * rf->n_vocab;
        const int32_t am = argmax(row, rf->n_vocab), want = rf->greedy[s];
        if (am == want)
            continue;
        const double gap = (row[am] - row[want]) / row_std(row, rf->n_vocab);
        cr_expect_leq(gap, TOL,
                      "[%s] p%d step %d: argmax %d, reference %d is %.4f%% of std "
                      "behind",
                      tag, p, s, am, want, 100 * gap);
        fprintf(stderr,
                "gpt2 [%s] p%d step %d: near-tie, reference token %d is %.4f%% of the "
                "logits' std behind our argmax %d\n",
                tag, p, s, want, 100 * gap, am);
        if (s < first)
            first = s;
    }
    return first;
}

/* Teacher-forced logits on every reference prompt, for every backend this
 * CPU runs: within 0.5% RMS of the logits' std at every step that has
 * reference logits, and the reference's greedy token on top (or tied within
 * 0.5%) at every step of its path. */
Test(gpt2_reference, teacher_forced_logits)
{
    td_need_shared();
    static td_ref refs[8];
    const int nr = td_read_refs(MODEL, refs, 8);
    cr_assert_gt(nr, 0, "cannot read reference/" MODEL ".jsonl");
    const char *names[8];
    const int nb = gl_backend_list(names, 8);
    for (int bi = 0; bi < nb; bi++) {
        if (gl_backend_check(names[bi], NULL) != GL_OK)
            continue;
        gl_model *m = load("models/" MODEL ".gguf", names[bi], false);
        double all_mean = 0, all_max = 0;
        int all_steps = 0;
        for (int p = 0; p < nr; p++) {
            const td_ref *rf = &refs[p];
            cr_assert_eq(rf->n_vocab, gl_model_n_vocab(m));
            size_t nf;
            float *ref = td_read_logits(MODEL, p, &nf);
            cr_assert(ref, "cannot read logits of p%d", p);
            const int steps = (int)(nf / (size_t)rf->n_vocab);
            cr_assert(steps > 0 && steps <= rf->n_greedy, "p%d: %d steps of logits", p, steps);
            float *lg = teacher_force(m, rf);
            double mean = 0, worst = 0;
            for (int s = 0; s < steps; s++) {
                const float *row = lg + (size_t)(rf->n_prompt - 1 + s) * rf->n_vocab;
                const double e = td_rel_rms(row, ref + (size_t)s * rf->n_vocab, rf->n_vocab);
                mean += e / steps;
                worst = e > worst ? e : worst;
                all_mean += e;
                all_steps++;
                cr_expect_leq(e, TOL, "[%s] p%d step %d: %.4f%% of std", names[bi], p, s, 100 * e);
            }
            all_max = worst > all_max ? worst : all_max;
            first_disagreement(rf, lg, names[bi], p);
            cr_log_info("gpt2 [%s] p%d: mean %.4f%%, worst %.4f%% over %d steps", names[bi], p,
                        100 * mean, 100 * worst, steps);
            fprintf(stderr, "gpt2 [%s] p%d: rel RMS mean %.4f%%, max %.4f%% over %d steps\n",
                    names[bi], p, 100 * mean, 100 * worst, steps);
            free(lg);
            free(ref);
        }
        fprintf(stderr, "gpt2 [%s] all prompts: rel RMS mean %.4f%%, max %.4f%%\n", names[bi],
                100 * all_mean / all_steps, 100 * all_max);
        gl_model_free(m);
    }
}

/* `genloop run` at temperature 0 reproduces the reference prompt tokens
 * (no BOS: the vocabulary says so) and its whole greedy continuation. */
Test(gpt2_reference, cli_greedy_tokens)
{
    td_need_shared();
    static td_ref refs[8];
    const int nr = td_read_refs(MODEL, refs, 8);
    cr_assert_gt(nr, 0);
    gl_model *m = load("models/" MODEL ".gguf", NULL, false);
    for (int p = 0; p < nr; p++) {
        const td_ref *rf = &refs[p];
        float *lg = teacher_force(m, rf);
        cr_expect_eq(first_disagreement(rf, lg, "default", p), rf->n_greedy,
                     "p%d: the reference's greedy path is not ours", p);
        char n_arg[16];
        snprintf(n_arg, sizeof n_arg, "%d", rf->n_greedy);
        RUN(&r, NULL, "run", "-m", shared_path("models/" MODEL ".gguf"), "-p", rf->prompt, "-n",
            n_arg, "--temp", "0", "--json", "-t", "2");
        cr_assert_eq(r.status, 0, "%s", r.err);
        static int32_t got[2048];
        const char *pt = strstr(r.out, "\"prompt_tokens\": [");
        const char *tk = strstr(r.out, "\"tokens\": [");
        cr_assert(pt && tk, "%s", r.out);
        int n = parse_ints(pt + 18, got, 2048);
        cr_assert_eq(n, rf->n_prompt, "p%d prompt: %d tokens, want %d", p, n, rf->n_prompt);
        cr_expect_arr_eq(got, rf->prompt_tokens, sizeof(int32_t) * (size_t)n);
        n = parse_ints(tk + 11, got, 2048);
        cr_assert_eq(n, rf->n_greedy, "p%d: %d tokens, want %d", p, n, rf->n_greedy);
        for (int i = 0; i < n; i++)
            cr_expect_eq(got[i], rf->greedy[i], "p%d token %d: %d != %d", p, i, got[i],
                         rf->greedy[i]);
        free(lg);
    }
    gl_model_free(m);
}

/* ---- context policy --------------------------------------------------------- */

/* 600 tokens from a 256-position model: past 256 the crop policy must give
 * exactly the tokens of an oracle that recomputes the last 256 tokens from
 * position 0 at every step (nanoGPT's generate). Under ASan (each cropped
 * step is a 256-token recompute, ~0.3 s there) 320 tokens, the oracle at
 * every eighth position and the last: ~60 cropped steps, each the same code
 * path over the same buffers. */
Test(gpt2_context, crop_matches_recompute_oracle, .timeout = 900)
{
    td_need_shared();
    static td_ref refs[1];
    cr_assert_gt(td_read_refs(MODEL, refs, 1), 0);
    gl_model *m = load("models/" MODEL ".gguf", NULL, false);
    gl_ctx *c = make_ctx(m, 0, 2);
    cr_assert_eq(gl_ctx_n_ctx(c), 256);
    enum { N_GEN_MAX = 600, BLOCK = 256 };
    const int n_gen = TD_SANITIZED ? 320 : N_GEN_MAX;
    const int np = refs[0].n_prompt, V = gl_model_n_vocab(m);
    static int32_t hist[N_GEN_MAX + 512];
    memcpy(hist, refs[0].prompt_tokens, sizeof(int32_t) * (size_t)np);

    gl_gen_params gp = gl_gen_default_params();
    gp.n_predict = n_gen;
    gp.sampling.temp = 0;
    cr_assert_eq(gp.context_policy, GL_CTX_POLICY_AUTO);
    gl_gen_result res;
    gl_error err;
    cr_assert_eq(gl_generate(c, hist, np, &gp, NULL, NULL, hist + np, n_gen, &res, &err), GL_OK,
                 "%s", err.msg);
    cr_assert_eq(res.n_generated, n_gen, "stopped early: %s", gl_stop_reason_name(res.stop));
    cr_assert_eq(res.stop, GL_STOP_LENGTH);
    for (int i = 0; i < refs[0].n_greedy; i++)
        cr_expect_eq(hist[np + i], refs[0].greedy[i], "token %d before the crop", i);

    /* the oracle: greedy, from scratch, on the BLOCK tokens before each
     * checked position; the first disagreement ends the test, so up to it
     * the generated history is the oracle's own */
    const int stride = TD_SANITIZED ? 8 : 1, end = np + n_gen;
    float *logits = malloc(sizeof(float) * (size_t)V);
    int checked = 0;
    for (int len = BLOCK; len < end; len++) {
        if ((len - BLOCK) % stride && len != end - 1)
            continue;
        const int lo = len > BLOCK ? len - BLOCK : 0;
        gl_ctx_reset(c);
        cr_assert_eq(gl_ctx_eval(c, hist + lo, len - lo, logits, false, &err), GL_OK, "%s",
                     err.msg);
        const int want = argmax(logits, V);
        cr_assert_eq(want, hist[len], "position %d: oracle %d, crop policy %d", len, want,
                     hist[len]);
        checked++;
    }
    cr_expect_geq(checked, (end - BLOCK) / stride);
    free(logits);
    gl_ctx_free(c);
    gl_model_free(m);
}

/* Learned positions are a hard limit: gl_ctx_eval refuses them, the ring
 * policy is refused, and the CLI says why with a usage error. */
Test(gpt2_context, learned_positions_are_enforced)
{
    td_need_shared();
    gl_model *m = load("models/" MODEL ".gguf", NULL, false);
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    cr_expect_str_eq(mi.arch, "gpt2");
    cr_expect_eq(mi.n_pos_learned, 256);
    cr_expect_eq(mi.n_ctx_train, 256);
    cr_expect_eq(mi.n_kv_heads, mi.n_heads);

    gl_ctx *c = make_ctx(m, 512, 1);
    static int32_t ids[300];
    for (int i = 0; i < 300; i++)
        ids[i] = (i * 7919) % 50000;
    gl_error err;
    cr_expect_eq(gl_ctx_eval(c, ids, 257, NULL, false, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "learned"), "%s", err.msg);
    cr_expect_eq(gl_ctx_pos(c), 0, "a refused eval must not advance the context");
    cr_expect_eq(gl_ctx_eval(c, ids, 256, NULL, false, &err), GL_OK, "%s", err.msg);
    cr_expect_eq(gl_ctx_eval(c, ids, 1, NULL, false, &err), GL_ERR_ARG);

    /* the ring policy is refused; crop with a 512-slot context stays in 256 */
    gl_gen_params gp = gl_gen_default_params();
    gp.n_predict = 20;
    gp.sampling.temp = 0;
    gp.context_policy = GL_CTX_POLICY_RING;
    gl_gen_result res;
    int32_t out[20];
    cr_expect_eq(gl_generate(c, ids, 10, &gp, NULL, NULL, out, 20, &res, &err), GL_ERR_ARG);
    cr_expect(strstr(err.msg, "learned"), "%s", err.msg);
    gp.context_policy = GL_CTX_POLICY_CROP;
    cr_expect_eq(gl_generate(c, ids, 300, &gp, NULL, NULL, out, 20, &res, &err), GL_OK, "%s",
                 err.msg);
    cr_expect_eq(res.n_generated, 20);
    /* without going past a full context, generation stops at 256 */
    gp.ring = false;
    gp.n_predict = 100;
    cr_expect_eq(gl_generate(c, ids, 250, &gp, NULL, NULL, out, 20, &res, &err), GL_OK, "%s",
                 err.msg);
    cr_expect_eq(res.stop, GL_STOP_CONTEXT);
    cr_expect_eq(res.n_generated, 7);
    cr_expect_eq(gl_generate(c, ids, 257, &gp, NULL, NULL, out, 20, &res, &err), GL_ERR_ARG);
    gl_ctx_free(c);
    gl_model_free(m);

    const char *mp = shared_path("models/" MODEL ".gguf");
    RUN(&r, NULL, "run", "-m", mp, "-p", "Hello", "-n", "4", "--context-policy", "ring");
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "genloop: error: ") && strstr(r.err, "learned"), "%s", r.err);
    RUN(&r, NULL, "run", "-m", mp, "-p", "Hello", "-n", "4", "--context-policy", "slide");
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "--context-policy"), "%s", r.err);
    RUN(&r, NULL, "run", "-m", mp, "-p", "Hello", "-n", "4", "--context-policy", "crop", "--temp",
        "0", "--json");
    cr_expect_eq(r.status, 0, "%s", r.err);
    /* llama models still take the ring */
    RUN(&r, NULL, "run", "-m", shared_path("models/stories260K.gguf"), "-p", "Once", "-n", "4",
        "--context-policy", "ring", "--json");
    cr_expect_eq(r.status, 0, "%s", r.err);
}
