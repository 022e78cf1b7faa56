/* Streaming tokenization of a text file (see text_stream.h for where the
 * pieces are cut and why that keeps the tokens of the whole text). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "model.h"
#include "text_stream.h"
#include "tokenizer.h"

/* Offset of the first byte that is not part of well-formed UTF-8 (no
 * overlong forms, no surrogates, nothing past U+10FFFF), or n. */
static size_t utf8_valid_prefix(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        const unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            need = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else
            return i;
        if (n - i <= (size_t)need)
            return i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (int k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        i += (size_t)need + 1;
    }
    return n;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
}

gl_status ts_open(text_stream *ts, const gl_model *m, const char *path, size_t piece_bytes,
                  gl_error *err)
{
    memset(ts, 0, sizeof *ts);
    ts->m = m;
    ts->piece = piece_bytes ? piece_bytes : TS_DEFAULT_PIECE;
    ts->cap = ts->piece;
    ts->f = fopen(path, "rb");
    if (!ts->f)
        return gl_fail(err, GL_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    ts->buf = malloc(ts->cap);
    if (!ts->buf) {
        ts_close(ts);
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    }
    gl_model_info mi;
    gl_model_get_info(m, &mi);
    ts->add_bos = mi.add_bos && mi.bos_id >= 0;
    ts->bos = mi.bos_id;
    return GL_OK;
}

void ts_close(text_stream *ts)
{
    if (ts->f)
        fclose(ts->f);
    free(ts->buf);
    free(ts->toks);
    memset(ts, 0, sizeof *ts);
}

/* Where to cut the buffer: before a space that sits between two
 * non-spaces (a word boundary), else after a line break that does; 0 when
 * neither exists. Runs of white space are never cut: byte-level BPE
 * pre-tokenizers split a run differently when it ends the text (GPT-2's
 * \s+(?!\S) takes "\n\n" whole there, but "\n" + "\n" before a letter). */
static size_t find_cut(const char *b, size_t len)
{
    for (size_t i = len - 2; i > 0 && len >= 3; i--)
        if (b[i] == ' ' && !is_space(b[i - 1]) && !is_space(b[i + 1]))
            return i;
    for (size_t i = len - 1; i > 1; i--)
        if (b[i - 1] == '\n' && !is_space(b[i - 2]) && !is_space(b[i]))
            return i;
    return 0;
}

/* Reads and tokenizes the next piece; false at the end of the text. */
static gl_status next_piece(text_stream *ts, bool *more, gl_error *err)
{
    size_t cut;
    for (;;) {
        while (ts->len < ts->cap && !ts->eof) {
            const size_t got = fread(ts->buf + ts->len, 1, ts->cap - ts->len, ts->f);
            if (got == 0) {
                if (ferror(ts->f))
                    return gl_fail(err, GL_ERR_IO, "reading the text failed: %s", strerror(errno));
                ts->eof = true;
            }
            ts->len += got;
        }
        if (ts->eof) {
            cut = ts->len;
            break;
        }
        if ((cut = find_cut(ts->buf, ts->len)) > 0)
            break;
        /* one word longer than the buffer: grow, within reason */
        if (ts->cap >= TS_MAX_PIECE)
            return gl_fail(err, GL_ERR_UNSUPPORTED,
                           "the text has a run of more than %u bytes without a space or line "
                           "break (at byte %llu): it cannot be cut into pieces to tokenize",
                           TS_MAX_PIECE, (unsigned long long)ts->file_off);
        char *nb = realloc(ts->buf, ts->cap * 2);
        if (!nb)
            return gl_fail(err, GL_ERR_NOMEM, "out of memory");
        ts->buf = nb;
        ts->cap *= 2;
    }
    *more = cut > 0;
    if (!cut)
        return GL_OK;
    const size_t ok = utf8_valid_prefix((const unsigned char *)ts->buf, cut);
    if (ok < cut)
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "the text is not valid UTF-8 (byte 0x%02X at offset %llu)",
                       (unsigned char)ts->buf[ok], (unsigned long long)(ts->file_off + ok));
    /* tokens <= bytes + 2 (BOS, a space prefix): one call almost always */
    if (ts->head > 0) {
        memmove(ts->toks, ts->toks + ts->head, (ts->n - ts->head) * sizeof *ts->toks);
        ts->n -= ts->head;
        ts->head = 0;
    }
    const gl_tokenizer *tok = ts->m->tok;
    size_t room = cut + 2;
    for (;;) {
        if (ts->n + room > ts->toks_cap) {
            int32_t *nt = realloc(ts->toks, (ts->n + room) * sizeof *nt);
            if (!nt)
                return gl_fail(err, GL_ERR_NOMEM, "out of memory");
            ts->toks = nt;
            ts->toks_cap = ts->n + room;
        }
        const int cap = room > (size_t)INT32_MAX ? INT32_MAX : (int)room;
        const int got =
            ts->started
                ? gl_tokenizer_encode_more(tok, ts->buf, cut, ts->toks + ts->n, cap, err)
                : gl_tokenizer_encode(tok, ts->buf, cut, ts->add_bos, ts->toks + ts->n, cap, err);
        if (got < 0)
            return err ? err->code : GL_ERR_ARG;
        if (got <= cap) {
            ts->n += (size_t)got;
            ts->total_tokens += (uint64_t)got;
            break;
        }
        room = (size_t)got;
    }
    ts->started = true;
    ts->total_bytes += cut;
    ts->file_off += cut;
    memmove(ts->buf, ts->buf + cut, ts->len - cut);
    ts->len -= cut;
    return GL_OK;
}

long long ts_fill(text_stream *ts, size_t want, gl_error *err)
{
    while (ts->n - ts->head < want) {
        bool more;
        gl_status st = next_piece(ts, &more, err);
        if (st)
            return -1;
        if (!more)
            break;
    }
    return (long long)(ts->n - ts->head);
}

void ts_take(text_stream *ts, size_t n)
{
    ts->head += n <= ts->n - ts->head ? n : ts->n - ts->head;
}
