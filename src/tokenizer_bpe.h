/* Byte-level BPE (tokenizer.ggml.model = "gpt2"): the byte-to-unicode
 * mapping, ranked merges and the regex-style pre-tokenizers, internal to
 * the tokenizer (src/tokenizer.c owns the vocabulary and dispatches here). */
#ifndef GENLOOP_SRC_TOKENIZER_BPE_H
#define GENLOOP_SRC_TOKENIZER_BPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gguf.h"
#include "tokenizer.h"

typedef struct gl_bpe gl_bpe;

/* Where encoders write ids: at most cap of them, n counts them all. */
typedef struct gl_tok_sink {
    int32_t *out;
    int cap;
    int n;
} gl_tok_sink;

/* Reads tokenizer.ggml.merges and tokenizer.ggml.pre for the vocabulary of
 * t (already loaded). Merges naming text that is not a token, or whose
 * result is not one, are skipped: they could never apply. */
gl_status gl_bpe_load(gl_bpe **out, const gl_tokenizer *t, const gguf_file *g, gl_error *err);
void gl_bpe_free(gl_bpe *b);

/* Pre-tokenizes len bytes (any bytes) and appends the BPE ids of every
 * piece to s. A byte whose character is not a token becomes unk, or fails
 * when the vocabulary has none. */
gl_status gl_bpe_encode(const gl_bpe *b, const char *text, size_t len, gl_tok_sink *s,
                        gl_error *err);

/* The pre-tokenizer's pieces of text, for tests: writes the byte offset
 * where each piece ends (at most cap) and returns the piece count, or -1. */
int gl_bpe_split(const gl_bpe *b, const char *text, size_t len, size_t *ends, int cap);

/* The bytes a byte-level token text stands for: each mapped character
 * back to its byte; characters outside the mapping (and invalid UTF-8)
 * are copied as they are. Writes at most len bytes to out; returns how
 * many. */
size_t gl_bpe_unmap(const char *text, size_t len, char *out);

/* Number of merges in use and skipped as unusable. */
void gl_bpe_counts(const gl_bpe *b, int *n_merges, int *n_skipped);

/* Whether the pre-tokenizer's models start prompts with BOS when the file
 * does not say (Llama 3, Tekken). */
bool gl_bpe_default_add_bos(const gl_bpe *b);

/* Why the split rules in use are a fallback (an unknown tokenizer.ggml.pre),
 * or NULL. */
const char *gl_bpe_warning(const gl_bpe *b);

#endif
