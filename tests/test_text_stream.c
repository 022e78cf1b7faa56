/* The streaming tokenizer of genloop perplexity (tools/text_stream.c): a
 * text read in small pieces gives exactly the tokens of the whole text, for
 * every shared vocabulary (SentencePiece and the byte-level BPE
 * pre-tokenizers), on the shared story text and on the reference
 * tokenizer's test strings (odd white space, digits, CJK, emoji). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared_data.h"
#include "tools/text_stream.h"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    cr_assert(b);
    cr_assert_eq(fread(b, 1, (size_t)len, f), (size_t)len);
    b[len] = '\0';
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* Tokens of the file at path read in pieces of piece bytes. */
static int32_t *stream_tokens(const gl_model *m, const char *path, size_t piece, size_t *n)
{
    text_stream ts;
    gl_error err;
    cr_assert_eq(ts_open(&ts, m, path, piece, &err), GL_OK, "%s", err.msg);
    const long long got = ts_fill(&ts, (size_t)1 << 30, &err);
    cr_assert(got >= 0, "%s", err.msg);
    int32_t *t = malloc(((size_t)got + 1) * sizeof *t);
    cr_assert(t);
    memcpy(t, ts_tokens(&ts), (size_t)got * sizeof *t);
    *n = (size_t)got;
    ts_close(&ts);
    return t;
}

static void check_vocab(const char *vocab, const char *text_rel)
{
    char mpath[1024], tpath[1024];
    if (!td_path(mpath, sizeof mpath, vocab) || !td_path(tpath, sizeof tpath, text_rel))
        cr_skip_test("SKIP: ../shared not found (set GENLOOP_SHARED)");
    gl_model *m;
    gl_error err;
    gl_model_params mp = gl_model_default_params();
    mp.vocab_only = true;
    const gl_status st = gl_model_load(&m, mpath, &mp, &err);
    if (st == GL_ERR_UNSUPPORTED)
        cr_skip_test("SKIP: %s: %s", vocab, err.msg);
    cr_assert_eq(st, GL_OK, "%s", err.msg);
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    size_t len;
    char *text = slurp(tpath, &len);
    cr_assert(text, "cannot read %s", tpath);
    /* the streamer refuses invalid UTF-8; the test files are valid */
    const int n = gl_tokenize(m, text, len, mi.add_bos && mi.bos_id >= 0, NULL, 0, &err);
    cr_assert(n > 0, "%s", err.msg);
    int32_t *whole = malloc((size_t)n * sizeof *whole);
    cr_assert_eq(gl_tokenize(m, text, len, mi.add_bos && mi.bos_id >= 0, whole, n, &err), n);
    const size_t pieces[] = { 16, 17, 23, 40, 64, 257, 4096 };
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
        size_t ns;
        int32_t *s = stream_tokens(m, tpath, pieces[k], &ns);
        size_t i = 0;
        while (i < ns && i < (size_t)n && s[i] == whole[i])
            i++;
        cr_expect(ns == (size_t)n && i == ns,
                  "%s on %s in %zu-byte pieces: %zu tokens, whole text %d; first difference at "
                  "token %zu",
                  vocab, text_rel, pieces[k], ns, n, i);
        free(s);
    }
    free(whole);
    free(text);
    gl_model_free(m);
}

#define VOCAB_TEST(name, file)                                                                     \
    Test(text_stream, name)                                                                        \
    {                                                                                              \
        check_vocab("tokenizers/" file, "perplexity/stories.txt");                                 \
        check_vocab("tokenizers/" file, "tokenizers/" file ".inp");                                \
    }

VOCAB_TEST(llama_spm, "ggml-vocab-llama-spm.gguf")
VOCAB_TEST(phi3_spm, "ggml-vocab-phi-3.gguf")
VOCAB_TEST(gpt2, "ggml-vocab-gpt-2.gguf")
VOCAB_TEST(deepseek_llm, "ggml-vocab-deepseek-llm.gguf")
VOCAB_TEST(deepseek_coder, "ggml-vocab-deepseek-coder.gguf")
VOCAB_TEST(falcon, "ggml-vocab-falcon.gguf")
VOCAB_TEST(starcoder, "ggml-vocab-starcoder.gguf")
VOCAB_TEST(mpt, "ggml-vocab-mpt.gguf")
VOCAB_TEST(refact, "ggml-vocab-refact.gguf")

Test(text_stream, stories_model)
{
    check_vocab("models/stories260K.gguf", "perplexity/stories.txt");
}

/* A text with no space and no line break: the buffer grows instead. */
Test(text_stream, unbreakable_text_grows)
{
    char mpath[1024];
    if (!td_path(mpath, sizeof mpath, "models/stories260K.gguf"))
        cr_skip_test("SKIP: ../shared not found (set GENLOOP_SHARED)");
    char path[128];
    snprintf(path, sizeof path, "/tmp/gl_ts_%ld.txt", (long)getpid());
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    for (int i = 0; i < 3000; i++)
        fputc("abcdefg"[i % 7], f);
    fclose(f);
    gl_model *m;
    gl_error err;
    gl_model_params mp = gl_model_default_params();
    mp.vocab_only = true;
    cr_assert_eq(gl_model_load(&m, mpath, &mp, &err), GL_OK, "%s", err.msg);
    size_t ns, len;
    int32_t *s = stream_tokens(m, path, 16, &ns);
    char *text = slurp(path, &len);
    const int n = gl_tokenize(m, text, len, true, NULL, 0, &err);
    cr_expect_eq(ns, (size_t)n);
    free(s);
    free(text);
    gl_model_free(m);
    unlink(path);
}
