/* A text file as a stream of fixed-size token windows, read and tokenized
 * in pieces so that memory follows the window and the piece size, never
 * the file size.
 *
 * Cutting text and tokenizing the pieces separately gives the tokens of
 * the whole text only when no token or pre-token can straddle a cut, and
 * when the tokenizer sees the same thing on both sides of it. Pieces are
 * cut before a space that sits between two non-spaces (a word boundary):
 * there the byte-level BPE pre-tokenizers (GPT-2, Llama 3 and kin) always
 * start a pre-token (" word"), and SentencePiece vocabularies hold no piece
 * that ends in a letter and goes on with a space. Runs of white space are
 * never cut (see find_cut). The piece after a cut is tokenized without BOS
 * and without SentencePiece's space prefix (gl_tokenizer_encode_more). Text
 * with no spaces is cut after a single line break between non-spaces; text
 * with neither makes the buffer grow (up to TS_MAX_PIECE). Every piece is
 * checked to be valid UTF-8, with the byte offset of the first bad byte in
 * the error. */
#ifndef GENLOOP_TOOLS_TEXT_STREAM_H
#define GENLOOP_TOOLS_TEXT_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "genloop.h"

#define TS_DEFAULT_PIECE (1u << 20)
#define TS_MAX_PIECE     (256u << 20)

typedef struct text_stream {
    const gl_model *m;
    FILE *f;
    char *buf; /* bytes read and not yet tokenized */
    size_t len, cap, piece;
    uint64_t file_off; /* file offset of buf[0] */
    bool eof, started;
    int32_t *toks; /* tokens not yet handed out: [head, n) */
    size_t n, head, toks_cap;
    uint64_t total_bytes, total_tokens;
    bool add_bos;
    int32_t bos;
} text_stream;

/* Opens path; piece_bytes 0: TS_DEFAULT_PIECE. */
gl_status ts_open(text_stream *ts, const gl_model *m, const char *path, size_t piece_bytes,
                  gl_error *err);
void ts_close(text_stream *ts);

/* Makes at least want tokens available (fewer only at the end of the text);
 * returns how many are available, or -1 with err set. */
long long ts_fill(text_stream *ts, size_t want, gl_error *err);
/* The available tokens; ts_take drops the first n of them. */
static inline const int32_t *ts_tokens(const text_stream *ts)
{
    return ts->toks + ts->head;
}
void ts_take(text_stream *ts, size_t n);

#endif
