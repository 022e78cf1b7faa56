/* Tokenizer: vocabulary from the GGUF tokenizer.ggml.* keys, text -> ids,
 * and ids -> text for streaming output.
 *
 * Supported tokenizer.ggml.model values: "llama" (SentencePiece-style:
 * score-ordered merges of UTF-8 characters, byte fallback) and "gpt2"
 * (byte-level BPE with ranked merges, src/tokenizer_bpe.c). The vocabulary
 * is copied out of the GGUF, so the tokenizer outlives the mapping. The file
 * is untrusted: every array, id and length is checked at load, and encoding
 * or decoding never reads outside the tables whatever the ids or bytes. */
#ifndef GENLOOP_SRC_TOKENIZER_H
#define GENLOOP_SRC_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "genloop.h"
#include "gguf.h"

typedef struct gl_tokenizer gl_tokenizer;

/* tokenizer.ggml.token_type values (0: undefined, as older files write). */
enum gl_token_type {
    GL_TOKEN_UNDEFINED = 0,
    GL_TOKEN_NORMAL = 1,
    GL_TOKEN_UNKNOWN = 2,
    GL_TOKEN_CONTROL = 3,
    GL_TOKEN_USER_DEFINED = 4,
    GL_TOKEN_UNUSED = 5,
    GL_TOKEN_BYTE = 6,
};

/* Longest token text accepted from a file, in bytes. */
#define GL_TOKEN_MAX_BYTES 4096
/* Largest vocabulary accepted from a file. */
#define GL_VOCAB_MAX 16777216

gl_status gl_tokenizer_load(gl_tokenizer **out, const gguf_file *g, gl_error *err);
/* NULL is fine. */
void gl_tokenizer_free(gl_tokenizer *t);

/* Tokenizes len bytes of text (any bytes: NULs and invalid UTF-8 included).
 * Writes at most cap ids to out and returns how many the text has (may
 * exceed cap), or -1 with err set. add_bos is ignored when the vocabulary
 * has no BOS. Control-token text in the input is plain text. */
int gl_tokenizer_encode(const gl_tokenizer *t, const char *text, size_t len, bool add_bos,
                        int32_t *out, int cap, gl_error *err);

/* The same with GL_TOKENIZE_* flags (include/genloop.h): BOS, control-token
 * text read as those tokens (user-defined tokens are always whole tokens),
 * no space prefix at the start of a continuation. */
int gl_tokenizer_encode_ex(const gl_tokenizer *t, const char *text, size_t len, unsigned flags,
                           int32_t *out, int cap, gl_error *err);

/* Whether id ends generation: EOS, EOT, EOM or an end-of-turn token. */
bool gl_tokenizer_is_eog(const gl_tokenizer *t, int32_t id);
/* Writes up to cap end-of-generation ids; returns how many there are. */
int gl_tokenizer_eog_ids(const gl_tokenizer *t, int32_t *ids, int cap);
/* Why tokens may differ from the model's (an unknown pre-tokenizer name),
 * or NULL. */
const char *gl_tokenizer_warning(const gl_tokenizer *t);
/* Tokenizes text that continues text already tokenized (a file read in
 * pieces): no BOS and no SentencePiece space prefix. Equals the tokens of
 * the whole text only when the cut falls where no token or pre-token can
 * straddle it (tools/perplexity_cmd.c cuts after a line break). */
int gl_tokenizer_encode_more(const gl_tokenizer *t, const char *text, size_t len, int32_t *out,
                             int cap, gl_error *err);

int gl_tokenizer_n_vocab(const gl_tokenizer *t);
/* Special ids, -1 when the vocabulary has none. */
int32_t gl_tokenizer_bos(const gl_tokenizer *t);
int32_t gl_tokenizer_eos(const gl_tokenizer *t);
int32_t gl_tokenizer_unk(const gl_tokenizer *t);
/* Whether prompts should start with BOS (tokenizer.ggml.add_bos_token). */
bool gl_tokenizer_add_bos(const gl_tokenizer *t);
/* tokenizer.ggml.model, e.g. "llama". */
const char *gl_tokenizer_model(const gl_tokenizer *t);

/* The vocabulary entry of id as stored (e.g. "▁the", "<0x0A>"); NULL when
 * id is out of range. Not NUL-terminated in general: use *len. */
const char *gl_tokenizer_text(const gl_tokenizer *t, int32_t id, size_t *len);
/* enum gl_token_type of id; -1 when out of range. */
int gl_tokenizer_type(const gl_tokenizer *t, int32_t id);
/* The bytes id stands for in decoded text: "▁" -> " " for normal tokens,
 * the raw byte for byte tokens, nothing for control/unused tokens, the
 * stored text for unknown and user-defined ones. Raw: may be a fragment of
 * a UTF-8 character. NULL (and *len 0) when id is out of range. */
const char *gl_tokenizer_piece(const gl_tokenizer *t, int32_t id, size_t *len);
/* Exact vocabulary lookup; -1 when text is not a token. */
int32_t gl_tokenizer_find(const gl_tokenizer *t, const char *text, size_t len);

/* Streaming decode of one token into out (cap bytes, always NUL-terminated
 * when cap > 0); returns the bytes written, excluding the NUL. Output is
 * always valid UTF-8: bytes of a character split over tokens are held in
 * d->pending until whole; a sequence that cannot complete becomes U+FFFD.
 * Pushing BOS sets d->after_bos; while it is set, the leading space of the
 * next normal piece is dropped (when the vocabulary adds a space prefix).
 * Out-of-range ids produce no text. 64 bytes of room suffice for every
 * token of real vocabularies; when a piece does not fit, the whole
 * characters that fit are written, the rest of the piece is dropped and any
 * held bytes are discarded. */
int gl_tokenizer_detok_push(const gl_tokenizer *t, gl_detok *d, int32_t id, char *out, size_t cap);

#endif
