/* Tokenizer tests: the reference tokenizer's vectors for the Llama SPM
 * vocabulary, the stories260K prompts, streaming detokenization, hostile
 * input and hostile vocabularies (built in memory). */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gguf.h"
#include "shared_data.h"
#include "tokenizer.h"

/* ---- shared data -------------------------------------------------------- */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    cr_assert(b);
    size_t r;
    while ((r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            b = realloc(b, cap + 1);
            cr_assert(b);
        }
    }
    fclose(f);
    b[n] = '\0';
    *len = n;
    return b;
}

/* Loads a tokenizer and drops the mapping at once: the tokenizer must not
 * point into the file. */
static gl_tokenizer *load_path(const char *path)
{
    gl_mapping map;
    gguf_file g;
    gl_error err = { 0 };
    gl_tokenizer *t = NULL;
    cr_assert_eq(gl_map_file(&map, path, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(gguf_parse(&g, map.data, map.size, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(gl_tokenizer_load(&t, &g, &err), GL_OK, "%s", err.msg);
    gguf_free(&g);
    gl_unmap_file(&map);
    return t;
}

static gl_tokenizer *load_shared(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", td_need_shared(), rel);
    return load_path(path);
}

/* Encodes and returns a heap array (count in *n), sized by a first call. */
static int32_t *encode(const gl_tokenizer *t, const char *s, size_t len, bool bos, int *n)
{
    gl_error err = { 0 };
    int k = gl_tokenizer_encode(t, s, len, bos, NULL, 0, &err);
    cr_assert_geq(k, 0, "encode failed: %s", err.msg);
    int32_t *ids = malloc(((size_t)k + 1) * sizeof *ids);
    cr_assert(ids);
    int k2 = gl_tokenizer_encode(t, s, len, bos, ids, k, &err);
    cr_assert_eq(k2, k);
    *n = k;
    return ids;
}

/* Streams ids through the detokenizer, one at a time, with 64 bytes of
 * room each as the API promises suffices. */
static char *detok_all(const gl_tokenizer *t, const int32_t *ids, int n, size_t *len)
{
    gl_detok d;
    gl_detok_init(&d);
    size_t cap = 64 * ((size_t)n + 1), w = 0;
    char *s = malloc(cap + 1);
    cr_assert(s);
    for (int i = 0; i < n; i++) {
        char buf[64];
        memset(buf, 0x55, sizeof buf);
        int k = gl_tokenizer_detok_push(t, &d, ids[i], buf, sizeof buf);
        cr_assert(k >= 0 && k < 64);
        cr_assert_eq(buf[k], '\0');
        memcpy(s + w, buf, (size_t)k);
        w += (size_t)k;
    }
    char buf[64];
    int k = gl_detok_flush(&d, buf, sizeof buf);
    cr_assert(k >= 0 && k < 64);
    memcpy(s + w, buf, (size_t)k);
    w += (size_t)k;
    s[w] = '\0';
    *len = w;
    return s;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (s[i + j] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += k + 1;
    }
    return true;
}

/* The reference's test strings: each is followed by "\n__ggml_vocab_test__\n". */
typedef struct vectors {
    char *inp, *out;
    const char *str[256];
    size_t len[256];
    const char *ids[256];
    int n;
} vectors;

static void load_vectors(vectors *v, const char *name)
{
    static const char sep[] = "\n__ggml_vocab_test__\n";
    char path[4096];
    size_t n_inp, n_out;
    const char *dir = td_need_shared();
    snprintf(path, sizeof path, "%s/tokenizers/%s.inp", dir, name);
    v->inp = read_all(path, &n_inp);
    snprintf(path, sizeof path, "%s/tokenizers/%s.out", dir, name);
    v->out = read_all(path, &n_out);
    v->n = 0;
    char *p = v->inp, *end = v->inp + n_inp;
    while (p < end) {
        char *q = strstr(p, sep);
        cr_assert(q, "input %d of %s is not followed by a separator", v->n, name);
        cr_assert_lt(v->n, 256);
        v->str[v->n] = p;
        v->len[v->n] = (size_t)(q - p);
        *q = '\0';
        v->n++;
        p = q + sizeof sep - 1;
    }
    int lines = 0;
    for (char *l = v->out; l < v->out + n_out; lines++) {
        char *nl = strchr(l, '\n');
        cr_assert(nl, "%s.out: line %d has no newline", name, lines);
        *nl = '\0';
        cr_assert_lt(lines, v->n, "%s.out has more lines than inputs", name);
        v->ids[lines] = l;
        l = nl + 1;
    }
    cr_assert_eq(lines, v->n, "%s: %d inputs but %d output lines", name, v->n, lines);
}

static void free_vectors(vectors *v)
{
    free(v->inp);
    free(v->out);
}

/* ---- reference vectors --------------------------------------------------- */

Test(tokenizer, llama_spm_vectors)
{
    vectors v;
    load_vectors(&v, "ggml-vocab-llama-spm.gguf");
    cr_assert_eq(v.n, 46);
    gl_tokenizer *t = load_shared("tokenizers/ggml-vocab-llama-spm.gguf");
    int failed = 0;
    for (int i = 0; i < v.n; i++) {
        int32_t want[2048];
        int n_want = 0;
        const char *p = v.ids[i];
        char *e;
        for (long x; (x = strtol(p, &e, 10)), e != p; p = e) {
            cr_assert_lt(n_want, 2048);
            want[n_want++] = (int32_t)x;
        }
        int n;
        int32_t *got = encode(t, v.str[i], v.len[i], false, &n);
        bool same = n == n_want;
        for (int j = 0; same && j < n; j++)
            same = got[j] == want[j];
        if (!same) {
            failed++;
            int j = 0;
            while (j < n && j < n_want && got[j] == want[j])
                j++;
            cr_log_error("vector %d (%zu bytes): %d ids, want %d; first difference at %d: "
                         "got %d want %d",
                         i, v.len[i], n, n_want, j, j < n ? got[j] : -1, j < n_want ? want[j] : -1);
        }
        free(got);
    }
    cr_expect_eq(failed, 0, "%d of %d llama-spm vectors differ", failed, v.n);
    gl_tokenizer_free(t);
    free_vectors(&v);
}

/* Every vocabulary in ../shared/tokenizers with test vectors: all its
 * vectors must match the reference ids, and detokenizing them must give the
 * test string back byte for byte. Pass counts go to stderr. */
static void check_vocab_vectors(const char *stem)
{
    char rel[256];
    snprintf(rel, sizeof rel, "ggml-vocab-%s.gguf", stem);
    vectors v;
    load_vectors(&v, rel);
    snprintf(rel, sizeof rel, "tokenizers/ggml-vocab-%s.gguf", stem);
    gl_tokenizer *t = load_shared(rel);
    cr_expect_null(gl_tokenizer_warning(t), "%s: unexpected warning: %s", stem,
                   gl_tokenizer_warning(t));
    int failed = 0, trip_failed = 0;
    for (int i = 0; i < v.n; i++) {
        int32_t want[2048];
        int n_want = 0;
        const char *p = v.ids[i];
        char *e;
        for (long x; (x = strtol(p, &e, 10)), e != p; p = e) {
            cr_assert_lt(n_want, 2048);
            want[n_want++] = (int32_t)x;
        }
        int n;
        int32_t *got = encode(t, v.str[i], v.len[i], false, &n);
        bool same = n == n_want;
        for (int j = 0; same && j < n; j++)
            same = got[j] == want[j];
        if (!same) {
            failed++;
            int j = 0;
            while (j < n && j < n_want && got[j] == want[j])
                j++;
            cr_log_error("%s vector %d '%.*s': %d ids, want %d; first difference at %d: "
                         "got %d want %d",
                         stem, i, (int)v.len[i], v.str[i], n, n_want, j, j < n ? got[j] : -1,
                         j < n_want ? want[j] : -1);
        }
        /* With BOS, as prompts start: SentencePiece drops its space prefix
         * after it. */
        int n_bos;
        int32_t *with_bos = encode(t, v.str[i], v.len[i], true, &n_bos);
        size_t dlen;
        char *back = detok_all(t, with_bos, n_bos, &dlen);
        free(with_bos);
        if (dlen != v.len[i] || memcmp(back, v.str[i], dlen) != 0) {
            trip_failed++;
            cr_log_error("%s vector %d: round trip of '%.*s' gave '%s'", stem, i, (int)v.len[i],
                         v.str[i], back);
        }
        free(back);
        free(got);
    }
    fprintf(stderr, "tokenizer vectors %-15s %d/%d match, %d/%d round-trip\n", stem, v.n - failed,
            v.n, v.n - trip_failed, v.n);
    cr_expect_eq(failed, 0, "%d of %d %s vectors differ", failed, v.n, stem);
    cr_expect_eq(trip_failed, 0, "%d of %d %s vectors do not round-trip", trip_failed, v.n, stem);
    gl_tokenizer_free(t);
    free_vectors(&v);
}

Test(tokenizer_vectors, llama_spm)
{
    check_vocab_vectors("llama-spm");
}
Test(tokenizer_vectors, phi_3)
{
    check_vocab_vectors("phi-3");
}
Test(tokenizer_vectors, gpt_2)
{
    check_vocab_vectors("gpt-2");
}
Test(tokenizer_vectors, deepseek_llm)
{
    check_vocab_vectors("deepseek-llm");
}
Test(tokenizer_vectors, deepseek_coder)
{
    check_vocab_vectors("deepseek-coder");
}
Test(tokenizer_vectors, falcon)
{
    check_vocab_vectors("falcon");
}
Test(tokenizer_vectors, starcoder)
{
    check_vocab_vectors("starcoder");
}
Test(tokenizer_vectors, mpt)
{
    check_vocab_vectors("mpt");
}
Test(tokenizer_vectors, refact)
{
    check_vocab_vectors("refact");
}

/* gpt-neox names no pre-tokenizer (the default rules, no warning) and has
 * no vectors: every test string of the other vocabularies round-trips. */
Test(tokenizer_vectors, gpt_neox_default_roundtrip)
{
    vectors v;
    load_vectors(&v, "ggml-vocab-gpt-2.gguf");
    gl_tokenizer *t = load_shared("tokenizers/ggml-vocab-gpt-neox.gguf");
    cr_expect_null(gl_tokenizer_warning(t));
    for (int i = 0; i < v.n; i++) {
        int n;
        int32_t *ids = encode(t, v.str[i], v.len[i], false, &n);
        size_t dlen;
        char *back = detok_all(t, ids, n, &dlen);
        cr_expect(dlen == v.len[i] && memcmp(back, v.str[i], dlen) == 0,
                  "gpt-neox: round trip of '%s' gave '%s'", v.str[i], back);
        free(back);
        free(ids);
    }
    gl_tokenizer_free(t);
    free_vectors(&v);
}

/* Control tokens are single tokens only when the text is parsed with
 * specials; every end-of-turn token ends generation. */
Test(tokenizer_vectors, special_tokens_and_eog)
{
    gl_tokenizer *t = load_shared("tokenizers/ggml-vocab-phi-3.gguf");
    const char *text = "<|user|>\nHi<|end|>\n<|assistant|>\n";
    int32_t ids[64];
    gl_error err;
    int n = gl_tokenizer_encode_ex(t, text, strlen(text), GL_TOKENIZE_SPECIAL, ids, 64, &err);
    cr_assert_gt(n, 3, "%s", err.msg);
    cr_expect_eq(ids[0], gl_tokenizer_find(t, "<|user|>", 8));
    bool has_end = false;
    for (int i = 0; i < n; i++)
        has_end |= ids[i] == gl_tokenizer_find(t, "<|end|>", 7);
    cr_expect(has_end);
    /* as plain text: no control token at all */
    n = gl_tokenizer_encode_ex(t, text, strlen(text), 0, ids, 64, &err);
    for (int i = 0; i < n; i++)
        cr_expect_neq(gl_tokenizer_type(t, ids[i]), GL_TOKEN_CONTROL, "id %d", ids[i]);
    cr_expect(gl_tokenizer_is_eog(t, gl_tokenizer_eos(t)));
    cr_expect(gl_tokenizer_is_eog(t, gl_tokenizer_find(t, "<|end|>", 7)));
    cr_expect(gl_tokenizer_is_eog(t, gl_tokenizer_find(t, "<|endoftext|>", 13)));
    cr_expect(!gl_tokenizer_is_eog(t, gl_tokenizer_find(t, "<|user|>", 8)));
    cr_expect(!gl_tokenizer_is_eog(t, gl_tokenizer_bos(t)));
    /* control tokens print nothing */
    size_t len;
    gl_tokenizer_piece(t, gl_tokenizer_find(t, "<|end|>", 7), &len);
    cr_expect_eq(len, 0);

    /* a continuation gets no SentencePiece space prefix */
    n = gl_tokenizer_encode_ex(t, "Hello", 5, GL_TOKENIZE_CONTINUE, ids, 64, &err);
    cr_assert_gt(n, 0);
    const char *p = gl_tokenizer_piece(t, ids[0], &len);
    cr_expect(len > 0 && p[0] == 'H', "continuation starts with '%.*s'", (int)len, p);
    n = gl_tokenizer_encode_ex(t, "Hello", 5, 0, ids, 64, &err);
    p = gl_tokenizer_piece(t, ids[0], &len);
    cr_expect(len > 0 && p[0] == ' ', "a fresh text starts with '%.*s'", (int)len, p);
    gl_tokenizer_free(t);

    /* user-defined tokens are whole tokens even in plain text */
    t = load_shared("tokenizers/ggml-vocab-deepseek-coder.gguf");
    n = gl_tokenizer_encode_ex(t, "<|EOT|>", 7, 0, ids, 64, &err);
    cr_expect(n == 1 && ids[0] == gl_tokenizer_find(t, "<|EOT|>", 7), "%d ids", n);
    cr_expect(gl_tokenizer_is_eog(t, ids[0]));
    gl_tokenizer_free(t);
}

/* The prompts and prompt_tokens of the reference runs on stories260K. */
Test(tokenizer, stories260k_prompts)
{
    char path[4096];
    size_t n;
    snprintf(path, sizeof path, "%s/reference/stories260K.jsonl", td_need_shared());
    char *all = read_all(path, &n);
    gl_tokenizer *t = load_shared("models/stories260K.gguf");
    cr_assert(gl_tokenizer_add_bos(t));
    int prompts = 0;
    for (char *line = all; *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *p = strstr(line, "\"prompt\":\"");
        cr_assert(p, "no prompt in line %d", prompts);
        p += strlen("\"prompt\":\"");
        char prompt[1024];
        size_t plen = 0;
        for (; *p != '"'; p++) {
            cr_assert(*p && *p != '\\' && plen < sizeof prompt, "unexpected prompt escape");
            prompt[plen++] = *p;
        }
        char *q = strstr(line, "\"prompt_tokens\":[");
        cr_assert(q);
        q += strlen("\"prompt_tokens\":[");
        int32_t want[256];
        int n_want = 0;
        while (*q != ']') {
            char *e;
            want[n_want++] = (int32_t)strtol(q, &e, 10);
            cr_assert(e != q);
            q = *e == ',' ? e + 1 : e;
        }
        int k;
        int32_t *got = encode(t, prompt, plen, true, &k);
        cr_expect_eq(k, n_want, "prompt '%.*s': %d tokens, want %d", (int)plen, prompt, k, n_want);
        for (int j = 0; j < k && j < n_want; j++)
            cr_expect_eq(got[j], want[j], "prompt '%.*s' token %d: %d, want %d", (int)plen, prompt,
                         j, got[j], want[j]);
        free(got);
        prompts++;
        if (!nl)
            break;
        line = nl + 1;
    }
    cr_assert_eq(prompts, 5);
    gl_tokenizer_free(t);
    free(all);
}

Test(tokenizer, once_upon_a_time)
{
    gl_tokenizer *t = load_shared("models/stories260K.gguf");
    int n;
    int32_t *ids = encode(t, "Once upon a time", 16, true, &n);
    int32_t want[] = { 1, 403, 407, 261, 378 };
    cr_assert_eq(n, 5);
    cr_assert_arr_eq(ids, want, sizeof want);
    /* A short buffer still reports the full count and writes only cap. */
    int32_t small[3] = { -7, -7, -7 };
    cr_assert_eq(gl_tokenizer_encode(t, "Once upon a time", 16, true, small, 2, NULL), 5);
    cr_assert(small[0] == 1 && small[1] == 403 && small[2] == -7);
    free(ids);
    gl_tokenizer_free(t);
}

/* ---- vocabulary-only file and accessors ---------------------------------- */

Test(tokenizer, vocab_only_file)
{
    gl_tokenizer *t = load_shared("tokenizers/ggml-vocab-llama-spm.gguf");
    cr_assert_eq(gl_tokenizer_n_vocab(t), 32000);
    cr_assert_eq(gl_tokenizer_bos(t), 1);
    cr_assert_eq(gl_tokenizer_eos(t), 2);
    cr_assert_eq(gl_tokenizer_unk(t), 0);
    cr_assert(gl_tokenizer_add_bos(t));
    cr_assert_str_eq(gl_tokenizer_model(t), "llama");
    cr_assert_eq(gl_tokenizer_type(t, 1), GL_TOKEN_CONTROL);
    cr_assert_eq(gl_tokenizer_type(t, 3), GL_TOKEN_BYTE);
    cr_assert_eq(gl_tokenizer_type(t, 32000), -1);
    cr_assert_eq(gl_tokenizer_find(t, "\xE2\x96\x81Hello", 8), 15043);
    cr_assert_eq(gl_tokenizer_find(t, "no such token at all", 20), -1);
    size_t len;
    const char *p = gl_tokenizer_piece(t, 15043, &len);
    cr_assert(len == 6 && memcmp(p, " Hello", 6) == 0);
    p = gl_tokenizer_piece(t, 13, &len); /* <0x0A> */
    cr_assert(len == 1 && p[0] == '\n');
    gl_tokenizer_piece(t, 2, &len);
    cr_assert_eq(len, 0);
    cr_assert_null(gl_tokenizer_piece(t, -1, &len));
    cr_assert_null(gl_tokenizer_text(t, 1 << 30, &len));
    /* Control-token text is plain text. */
    int n;
    int32_t *ids = encode(t, "<s>", 3, false, &n);
    for (int i = 0; i < n; i++)
        cr_assert_neq(ids[i], 1);
    free(ids);
    gl_tokenizer_free(t);
}

/* ---- detokenizer ---------------------------------------------------------- */

static void roundtrip(const gl_tokenizer *t, const char *s, size_t len, const char *what)
{
    int n;
    int32_t *ids = encode(t, s, len, true, &n);
    size_t dlen;
    char *back = detok_all(t, ids, n, &dlen);
    cr_expect(dlen == len && memcmp(back, s, len) == 0, "%s: round trip of '%.*s' gave '%s'", what,
              (int)len, s, back);
    free(back);
    free(ids);
}

Test(tokenizer, detok_roundtrip)
{
    vectors v;
    load_vectors(&v, "ggml-vocab-llama-spm.gguf");
    gl_tokenizer *t = load_shared("tokenizers/ggml-vocab-llama-spm.gguf");
    for (int i = 0; i < v.n; i++)
        roundtrip(t, v.str[i], v.len[i], "llama-spm");
    gl_tokenizer_free(t);
    t = load_shared("models/stories260K.gguf");
    for (int i = 0; i < v.n; i++)
        roundtrip(t, v.str[i], v.len[i], "stories260K");
    const char *extra[] = {
        "Once upon a time", "Lily and Ben went to the park", "", "  two leading spaces",
        "tail space ",      "日本語 🦙 emoji"
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        roundtrip(t, extra[i], strlen(extra[i]), "stories260K");
    gl_tokenizer_free(t);
    free_vectors(&v);
}

static int32_t byte_id(const gl_tokenizer *t, unsigned b)
{
    char name[8];
    snprintf(name, sizeof name, "<0x%02X>", b);
    int32_t id = gl_tokenizer_find(t, name, 6);
    cr_assert_geq(id, 0);
    return id;
}

Test(tokenizer, detok_split_utf8)
{
    gl_tokenizer *t = load_shared("models/stories260K.gguf");
    const unsigned char llama[] = { 0xF0, 0x9F, 0xA6, 0x99 }; /* 🦙 */
    gl_detok d;
    char out[64];
    gl_detok_init(&d);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(gl_tokenizer_detok_push(t, &d, byte_id(t, llama[i]), out, sizeof out), 0);
        cr_assert_eq(out[0], '\0');
    }
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, byte_id(t, llama[3]), out, sizeof out), 4);
    cr_assert_str_eq(out, "\xF0\x9F\xA6\x99");
    cr_assert_eq(gl_detok_flush(&d, out, sizeof out), 0);

    /* The encoder produces the same byte tokens for an emoji the vocabulary
     * lacks; streamed one by one they come out whole. */
    int n;
    int32_t *ids = encode(t, "\xF0\x9F\xA6\x99", 4, false, &n);
    size_t len;
    char *s = detok_all(t, ids, n, &len);
    cr_assert_str_eq(s, " \xF0\x9F\xA6\x99");
    free(s);
    free(ids);

    /* An incomplete character followed by ASCII: U+FFFD, then the text. */
    gl_detok_init(&d);
    gl_tokenizer_detok_push(t, &d, byte_id(t, 0xF0), out, sizeof out);
    int k = gl_tokenizer_detok_push(t, &d, byte_id(t, 0x9F), out, sizeof out);
    cr_assert_eq(k, 0);
    k = gl_tokenizer_detok_push(t, &d, byte_id(t, 'A'), out, sizeof out);
    cr_assert_str_eq(out, "\xEF\xBF\xBD"
                          "A");
    cr_assert_eq(k, 4);
    /* A lone continuation byte and an impossible lead byte: U+FFFD each. */
    k = gl_tokenizer_detok_push(t, &d, byte_id(t, 0x80), out, sizeof out);
    cr_assert_str_eq(out, "\xEF\xBF\xBD");
    k = gl_tokenizer_detok_push(t, &d, byte_id(t, 0xFF), out, sizeof out);
    cr_assert_str_eq(out, "\xEF\xBF\xBD");
    /* Overlong and surrogate starts are rejected at the second byte. */
    gl_tokenizer_detok_push(t, &d, byte_id(t, 0xE0), out, sizeof out);
    k = gl_tokenizer_detok_push(t, &d, byte_id(t, 0x80), out, sizeof out);
    cr_assert_str_eq(out, "\xEF\xBF\xBD\xEF\xBF\xBD");
    gl_tokenizer_detok_push(t, &d, byte_id(t, 0xED), out, sizeof out);
    k = gl_tokenizer_detok_push(t, &d, byte_id(t, 0xA0), out, sizeof out);
    cr_assert_str_eq(out, "\xEF\xBF\xBD\xEF\xBF\xBD");
    /* A tail left at the end is flushed as U+FFFD. */
    gl_tokenizer_detok_push(t, &d, byte_id(t, 0xE6), out, sizeof out);
    gl_tokenizer_detok_push(t, &d, byte_id(t, 0x97), out, sizeof out);
    cr_assert_eq(gl_detok_flush(&d, out, sizeof out), 3);
    cr_assert_str_eq(out, "\xEF\xBF\xBD");
    cr_assert_eq(gl_detok_flush(&d, out, sizeof out), 0);
    gl_tokenizer_free(t);
}

Test(tokenizer, detok_leading_space)
{
    gl_tokenizer *t = load_shared("models/stories260K.gguf");
    int32_t once = 403; /* "▁Once" */
    gl_detok d;
    char out[64];
    gl_detok_init(&d);
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, once, out, sizeof out), 5);
    cr_assert_str_eq(out, " Once");
    gl_tokenizer_detok_push(t, &d, 1, out, sizeof out);
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, once, out, sizeof out), 4);
    cr_assert_str_eq(out, "Once");
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, once, out, sizeof out), 5);
    gl_detok_init(&d);
    d.after_bos = true;
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, once, out, sizeof out), 4);
    /* EOS and out-of-range ids write nothing. */
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, 2, out, sizeof out), 0);
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, 512, out, sizeof out), 0);
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, -5, out, sizeof out), 0);
    cr_assert_eq(out[0], '\0');
    gl_tokenizer_free(t);
}

Test(tokenizer, detok_small_buffer)
{
    gl_tokenizer *t = load_shared("models/stories260K.gguf");
    gl_detok d;
    char out[8];
    gl_detok_init(&d);
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, 403, out, 0), 0);
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, 403, out, 1), 0);
    cr_assert_eq(out[0], '\0');
    /* " Once" in 4 bytes: what fits, NUL-terminated. */
    memset(out, 'x', sizeof out);
    cr_assert_eq(gl_tokenizer_detok_push(t, &d, 403, out, 4), 3);
    cr_assert_str_eq(out, " On");
    cr_assert_eq(out[4], 'x');
    /* A character is never cut: U+FFFD needs 3 bytes plus the NUL. */
    gl_tokenizer_detok_push(t, &d, byte_id(t, 0x80), out, 3);
    cr_assert_str_eq(out, "");
    cr_assert_eq(d.n_pending, 0);
    gl_tokenizer_free(t);
}

/* ---- hostile input ------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Every ' ' as "▁", the form the encoder works on. */
static size_t escape_spaces(const char *s, size_t n, char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ') {
            memcpy(out + w, "\xE2\x96\x81", 3);
            w += 3;
        } else {
            out[w++] = s[i];
        }
    }
    return w;
}

/* The raw pieces of the ids give back the (space-prefixed) input, up to
 * spaces vs "▁": like the reference, a symbol cut by an invalid lead byte
 * can swallow the escaped "▁" of a following space, which then comes back
 * as its three bytes. */
static void check_bytes_back(const gl_tokenizer *t, const char *s, size_t len, const char *what)
{
    int n;
    int32_t *ids = encode(t, s, len, false, &n);
    char *back = malloc(4 * len + 8), *want = malloc(3 * len + 8), *got = malloc(12 * len + 8);
    cr_assert(back && want && got);
    size_t w = 0;
    for (int i = 0; i < n; i++) {
        size_t pl;
        const char *p = gl_tokenizer_piece(t, ids[i], &pl);
        cr_assert(p && w + pl <= 4 * len + 4, "%s: ids decode to too many bytes", what);
        memcpy(back + w, p, pl);
        w += pl;
    }
    size_t n_got = escape_spaces(back, w, got), n_want = 0;
    if (len) {
        n_want = escape_spaces(" ", 1, want);
        n_want += escape_spaces(s, len, want + n_want);
    }
    cr_assert(n_got == n_want && memcmp(got, want, n_got) == 0, "%s does not round-trip", what);
    size_t dlen;
    char *d = detok_all(t, ids, n, &dlen);
    cr_assert(valid_utf8((const unsigned char *)d, dlen), "%s: invalid UTF-8 out", what);
    free(d);
    free(back);
    free(want);
    free(got);
    free(ids);
}

Test(tokenizer, invalid_utf8_byte_fallback)
{
    gl_tokenizer *t = load_shared("tokenizers/ggml-vocab-llama-spm.gguf");
    const char *cases[] = { "\xFF\xFE",
                            "\x80",
                            "a\xC3",
                            "\xC3(",
                            "\xE2\x82",
                            "\xF0\x9F\x98",
                            "x\xF8\x88\x80\x80\x80y",
                            "\xED\xA0\x80",
                            "\xC0\xAF",
                            "\xF0 a b" };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char what[32];
        snprintf(what, sizeof what, "case %zu", c);
        check_bytes_back(t, cases[c], strlen(cases[c]), what);
    }
    /* Embedded NULs count as text. */
    int n;
    int32_t *ids = encode(t, "a\0b", 3, false, &n);
    cr_assert_geq(n, 3);
    free(ids);
    /* Random bytes, NULs included (no 0xE2 or '<', so no literal "▁" or
     * control-token text changes the picture). */
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (int round = 0; round < 300; round++) {
        char buf[300];
        size_t len = (size_t)(rng_next(&seed) % sizeof buf);
        for (size_t i = 0; i < len; i++) {
            char c;
            do
                c = (char)rng_next(&seed);
            while ((unsigned char)c == 0xE2 || c == '<');
            buf[i] = c;
        }
        char what[32];
        snprintf(what, sizeof what, "random round %d", round);
        check_bytes_back(t, buf, len, what);
    }
    gl_tokenizer_free(t);
}

Test(tokenizer, bad_arguments)
{
    gl_tokenizer *t = load_shared("models/stories260K.gguf");
    gl_error err = { 0 };
    int32_t ids[4];
    cr_assert_eq(gl_tokenizer_encode(t, NULL, 3, false, ids, 4, &err), -1);
    cr_assert_eq(err.code, GL_ERR_ARG);
    cr_assert_eq(gl_tokenizer_encode(t, "abc", 3, false, NULL, 4, &err), -1);
    cr_assert_eq(gl_tokenizer_encode(t, "abc", 3, false, ids, -1, &err), -1);
    cr_assert_eq(gl_tokenizer_encode(NULL, "abc", 3, false, ids, 4, &err), -1);
    cr_assert_eq(gl_tokenizer_encode(t, NULL, 0, true, ids, 4, &err), 1);
    cr_assert_eq(gl_tokenizer_encode(t, "", 0, false, ids, 4, &err), 0);
    gl_tokenizer_free(t);
    gl_tokenizer_free(NULL);
}

Test(tokenizer, one_megabyte_fast)
{
    gl_tokenizer *t = load_shared("tokenizers/ggml-vocab-llama-spm.gguf");
    vectors v;
    load_vectors(&v, "ggml-vocab-llama-spm.gguf");
    size_t cap = 1 << 20, n = 0;
    char *text = malloc(cap);
    for (int i = 0; n < cap; i = (i + 1) % v.n) {
        size_t k = v.len[i] < cap - n ? v.len[i] : cap - n;
        memcpy(text + n, v.str[i], k);
        n += k;
    }
    const char *kinds[] = { "mixed", "one letter", "spaces" };
    for (int kind = 0; kind < 3; kind++) {
        if (kind == 1)
            memset(text, 'a', cap);
        if (kind == 2)
            memset(text, ' ', cap);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int k = gl_tokenizer_encode(t, text, cap, true, NULL, 0, NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        cr_log_info("1 MiB %s: %d tokens in %.3f s", kinds[kind], k, s);
        cr_assert_gt(k, 1);
        /* No timing assert (the machine's load decides it): an O(n^2) merge
         * takes minutes here and runs into meson's timeout instead. */
    }
    free(text);
    free_vectors(&v);
    gl_tokenizer_free(t);
}

/* ---- hostile vocabularies, written in memory ----------------------------- */

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
} wbuf;

static void wb_put(wbuf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        cr_assert(b->p);
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void wb_u32(wbuf *b, uint32_t v)
{
    wb_put(b, &v, 4);
}

static void wb_u64(wbuf *b, uint64_t v)
{
    wb_put(b, &v, 8);
}

static void wb_str(wbuf *b, const char *s)
{
    wb_u64(b, strlen(s));
    wb_put(b, s, strlen(s));
}

static void kv_str(wbuf *b, const char *key, const char *val)
{
    wb_str(b, key);
    wb_u32(b, GGUF_VT_STR);
    wb_str(b, val);
}

static void kv_u32(wbuf *b, const char *key, uint32_t val)
{
    wb_str(b, key);
    wb_u32(b, GGUF_VT_U32);
    wb_u32(b, val);
}

static void kv_strs(wbuf *b, const char *key, const char *const *v, int n)
{
    wb_str(b, key);
    wb_u32(b, GGUF_VT_ARR);
    wb_u32(b, GGUF_VT_STR);
    wb_u64(b, (uint64_t)n);
    for (int i = 0; i < n; i++)
        wb_str(b, v[i]);
}

static void kv_f32s(wbuf *b, const char *key, const float *v, int n)
{
    wb_str(b, key);
    wb_u32(b, GGUF_VT_ARR);
    wb_u32(b, GGUF_VT_F32);
    wb_u64(b, (uint64_t)n);
    wb_put(b, v, 4 * (size_t)n);
}

static void kv_i32s(wbuf *b, const char *key, const int32_t *v, int n)
{
    wb_str(b, key);
    wb_u32(b, GGUF_VT_ARR);
    wb_u32(b, GGUF_VT_I32);
    wb_u64(b, (uint64_t)n);
    wb_put(b, v, 4 * (size_t)n);
}

/* A small SPM vocabulary; `flaw` breaks one thing about it. */
enum flaw {
    FLAW_NONE,
    FLAW_MODEL,
    FLAW_SCORES_LEN,
    FLAW_TYPES_LEN,
    FLAW_BOS_RANGE,
    FLAW_NO_TOKENS,
    FLAW_EMPTY,
    FLAW_BAD_TYPE,
    FLAW_BAD_BYTE,
    FLAW_MODEL_TYPE,
    FLAW_NAN,
    FLAW_LONG,
    FLAW_COUNT
};

static const char *const mini_tokens[] = {
    "<unk>",
    "<s>",
    "</s>",
    "\xE2\x96\x81",
    "a",
    "b",
    "ab",
    ("\xE2\x96\x81"
     "a"),
    "ba",
    "<0x41>",
};
static const float mini_scores[] = { 0, 0, 0, -1, -2, -2, -3, -4, -3, 0 };
static const int32_t mini_types[] = { 2, 3, 3, 1, 1, 1, 1, 1, 1, 6 };
#define MINI_N 10

static gl_status load_mini(enum flaw flaw, gl_tokenizer **t, gl_error *err)
{
    wbuf b = { 0 };
    const char *tokens[MINI_N];
    float scores[MINI_N];
    int32_t types[MINI_N];
    memcpy(tokens, mini_tokens, sizeof tokens);
    memcpy(scores, mini_scores, sizeof scores);
    memcpy(types, mini_types, sizeof types);
    char *long_tok = NULL;
    if (flaw == FLAW_BAD_TYPE)
        types[4] = 9;
    if (flaw == FLAW_BAD_BYTE)
        types[5] = 6;
    if (flaw == FLAW_NAN)
        scores[6] = 0.0f / 0.0f;
    if (flaw == FLAW_LONG) {
        long_tok = malloc(GL_TOKEN_MAX_BYTES + 2);
        memset(long_tok, 'z', GL_TOKEN_MAX_BYTES + 1);
        long_tok[GL_TOKEN_MAX_BYTES + 1] = '\0';
        tokens[8] = long_tok;
    }
    int n_tok = flaw == FLAW_EMPTY ? 0 : MINI_N;
    wb_put(&b, "GGUF", 4);
    wb_u32(&b, 3);
    wb_u64(&b, 0);
    wb_u64(&b, flaw == FLAW_NO_TOKENS ? 5 : 6);
    if (flaw == FLAW_MODEL_TYPE)
        kv_u32(&b, "tokenizer.ggml.model", 7);
    else
        kv_str(&b, "tokenizer.ggml.model", flaw == FLAW_MODEL ? "bert" : "llama");
    if (flaw != FLAW_NO_TOKENS)
        kv_strs(&b, "tokenizer.ggml.tokens", tokens, n_tok);
    kv_f32s(&b, "tokenizer.ggml.scores", scores, flaw == FLAW_SCORES_LEN ? MINI_N - 1 : n_tok);
    kv_i32s(&b, "tokenizer.ggml.token_type", types, flaw == FLAW_TYPES_LEN ? MINI_N - 2 : n_tok);
    kv_u32(&b, "tokenizer.ggml.bos_token_id", flaw == FLAW_BOS_RANGE ? MINI_N : 1);
    kv_u32(&b, "tokenizer.ggml.padding_token_id", 0xFFFFFFFFu);
    while (b.n % 32)
        wb_put(&b, "", 1);
    gguf_file g;
    gl_status st = gguf_parse(&g, b.p, b.n, err);
    cr_assert_eq(st, GL_OK, "test GGUF does not parse: %s", err->msg);
    st = gl_tokenizer_load(t, &g, err);
    gguf_free(&g);
    free(b.p);
    free(long_tok);
    return st;
}

Test(tokenizer, mini_vocab)
{
    gl_tokenizer *t = NULL;
    gl_error err = { 0 };
    cr_assert_eq(load_mini(FLAW_NONE, &t, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(gl_tokenizer_unk(t), 0);
    cr_assert_eq(gl_tokenizer_eos(t), 2);
    /* "▁" "a" "b" "a": ▁a (-4) ab (-3) ba (-3): ab wins the tie at the left,
     * then nothing joins "▁" + "ab" or "ab" + "a". */
    int n;
    int32_t *ids = encode(t, "aba", 3, false, &n);
    int32_t want[] = { 3, 6, 4 };
    cr_assert_eq(n, 3);
    cr_assert_arr_eq(ids, want, sizeof want);
    free(ids);
    /* "A" has a byte token; "C" has none, nor a one-byte token: unk. */
    ids = encode(t, "AC", 2, true, &n);
    int32_t want2[] = { 1, 3, 9, 0 };
    cr_assert_eq(n, 4);
    cr_assert_arr_eq(ids, want2, sizeof want2);
    free(ids);
    gl_tokenizer_free(t);
}

Test(tokenizer, hostile_vocabularies)
{
    static const struct {
        enum flaw flaw;
        gl_status code;
        const char *msg;
    } cases[] = {
        { FLAW_MODEL, GL_ERR_UNSUPPORTED, "tokenizer model 'bert' not supported" },
        { FLAW_MODEL_TYPE, GL_ERR_FORMAT, "tokenizer.ggml.model" },
        { FLAW_SCORES_LEN, GL_ERR_FORMAT, "tokenizer.ggml.scores" },
        { FLAW_TYPES_LEN, GL_ERR_FORMAT, "tokenizer.ggml.token_type" },
        { FLAW_BOS_RANGE, GL_ERR_FORMAT, "bos_token_id" },
        { FLAW_NO_TOKENS, GL_ERR_FORMAT, "tokenizer.ggml.tokens" },
        { FLAW_EMPTY, GL_ERR_FORMAT, "empty" },
        { FLAW_BAD_TYPE, GL_ERR_FORMAT, "token_type[4]" },
        { FLAW_BAD_BYTE, GL_ERR_FORMAT, "token 5 is a byte token" },
        { FLAW_NAN, GL_ERR_FORMAT, "NaN" },
        { FLAW_LONG, GL_ERR_FORMAT, "bytes long" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gl_tokenizer *t = (gl_tokenizer *)&t;
        gl_error err = { 0 };
        gl_status st = load_mini(cases[i].flaw, &t, &err);
        cr_expect_eq(st, cases[i].code, "flaw %d: status %d (%s)", cases[i].flaw, st, err.msg);
        cr_expect_eq(err.code, cases[i].code);
        cr_expect_null(t, "flaw %d left a tokenizer behind", cases[i].flaw);
        cr_expect(strstr(err.msg, cases[i].msg), "flaw %d: message '%s' lacks '%s'", cases[i].flaw,
                  err.msg, cases[i].msg);
    }
}
