/* Tokenizer: vocabulary loading, SentencePiece-style encoding and the
 * streaming detokenizer.
 *
 * Encoding follows the reference implementation (llama.cpp's SPM session)
 * step for step, because token ids must match it exactly:
 *   1. every ' ' becomes "▁" (U+2581); "▁" is prepended when the vocabulary
 *      asks for a space prefix;
 *   2. the text is cut into symbols, one per UTF-8 character, the length
 *      taken from the lead byte alone (clamped to the end of the text), so
 *      stray continuation bytes are one-byte symbols;
 *   3. adjacent pairs whose concatenation is a token go into a max-heap by
 *      that token's score (ties: leftmost pair first); the best pair is
 *      merged and the pairs it forms with its neighbours are queued; queue
 *      entries whose symbols changed since are skipped;
 *   4. each final symbol is emitted as its token, or byte by byte as the
 *      <0xNN> tokens. A merged symbol is a token by construction (pairs are
 *      only queued when their concatenation is one), so only unmerged
 *      characters ever need the byte fallback: that is the whole of the
 *      reference's "resegment" step.
 * The heap makes this O(n log n) in the text length. */
#include "tokenizer.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tokenizer_bpe.h"

typedef enum vocab_kind {
    VOCAB_SPM = 1, /* "llama": score-ordered merges, byte fallback          */
    VOCAB_BPE = 2, /* "gpt2": byte-level BPE, ranked merges (tokenizer_bpe.c) */
} vocab_kind;

struct gl_tokenizer {
    vocab_kind kind;
    char model[16];
    int32_t n_vocab;
    char *text;        /* all token texts back to back                     */
    size_t *text_off;  /* n_vocab + 1: id i is text[text_off[i]..[i+1])    */
    char *piece;       /* decoded bytes of every token, back to back        */
    size_t *piece_off; /* n_vocab + 1                                       */
    float *scores;
    uint8_t *types;   /* enum gl_token_type                                */
    uint32_t *hashes; /* per id: low bits of the text's hash               */
    int32_t *slots;   /* open-addressing table of ids, -1 empty            */
    size_t slot_mask;
    size_t max_len; /* longest token text: longer strings cannot match   */
    int32_t bos, eos, unk;
    bool add_bos, add_space_prefix;
    int32_t byte_tok[256]; /* byte fallback id per byte value, -1 none       */
    gl_bpe *bpe;           /* VOCAB_BPE: merges and pre-tokenizer            */
    /* Tokens matched whole before the split (control, user-defined and
     * unknown ones with text), longest first as the reference. */
    int32_t *specials;
    int n_specials;
    uint8_t *strip; /* per id: STRIP_* white space eaten around a special */
    /* End-of-generation ids: EOS, EOT, EOM and the end-of-turn tokens. */
    int32_t eog[16];
    int n_eog;
    int32_t eot, eom;
};

enum { STRIP_LEFT = 1, STRIP_RIGHT = 2 };

/* ---- helpers ------------------------------------------------------------ */

/* Quoted-safe copy of an untrusted string for an error message. */
static const char *printable(gguf_str s, char *buf, size_t cap)
{
    size_t n = 0;
    for (uint64_t i = 0; i < s.len && n + 4 < cap; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        buf[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (s.len > n && n + 4 <= cap) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

/* A 64-bit multiply-xorshift hash. Vocabularies come from untrusted files,
 * so the mixing is strong enough that ordinary texts do not cluster. */
static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0x243F6A8885A308D3ull ^ ((uint64_t)n * 0x9E3779B97F4A7C15ull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    if (n)
        memcpy(&w, p, n);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h;
}

static int32_t vocab_find(const gl_tokenizer *t, const char *s, size_t n)
{
    if (n == 0 || n > t->max_len)
        return -1;
    uint64_t h = hash_bytes(s, n);
    for (size_t i = (size_t)h & t->slot_mask;; i = (i + 1) & t->slot_mask) {
        int32_t id = t->slots[i];
        if (id < 0)
            return -1;
        size_t off = t->text_off[id];
        if (t->hashes[id] == (uint32_t)h && t->text_off[id + 1] - off == n &&
            memcmp(t->text + off, s, n) == 0)
            return id;
    }
}

/* Later duplicates replace earlier ones, as in the reference. */
static void vocab_insert(gl_tokenizer *t, int32_t id, uint64_t h)
{
    size_t off = t->text_off[id], n = t->text_off[id + 1] - off;
    for (size_t i = (size_t)h & t->slot_mask;; i = (i + 1) & t->slot_mask) {
        int32_t o = t->slots[i];
        if (o < 0 || (t->hashes[o] == (uint32_t)h && t->text_off[o + 1] - t->text_off[o] == n &&
                      memcmp(t->text + t->text_off[o], t->text + off, n) == 0)) {
            t->slots[i] = id;
            return;
        }
    }
}

/* ---- loading ------------------------------------------------------------ */

static gl_status load_tokens(gl_tokenizer *t, const gguf_file *g, gl_error *err)
{
    const gguf_kv *kv = gguf_find(g, "tokenizer.ggml.tokens");
    if (!kv)
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.tokens missing");
    if (kv->type != GGUF_VT_ARR || kv->arr_type != GGUF_VT_STR)
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.tokens is not a string array");
    if (kv->arr_n == 0)
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.tokens is empty");
    if (kv->arr_n > GL_VOCAB_MAX)
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.tokens has %llu entries (limit %d)",
                       (unsigned long long)kv->arr_n, GL_VOCAB_MAX);
    t->n_vocab = (int32_t)kv->arr_n;

    /* First pass: sizes, so the texts land in one allocation. */
    uint64_t pos = 0, total = 0;
    const uint8_t *cur = NULL;
    gguf_str s;
    while (gguf_arr_next_str(kv, &pos, &cur, &s)) {
        if (s.len > GL_TOKEN_MAX_BYTES)
            return gl_fail(err, GL_ERR_FORMAT,
                           "tokenizer.ggml.tokens[%llu] is %llu bytes long "
                           "(limit %d)",
                           (unsigned long long)(pos - 1), (unsigned long long)s.len,
                           GL_TOKEN_MAX_BYTES);
        total += s.len;
        if (s.len > t->max_len)
            t->max_len = (size_t)s.len;
    }
    if (pos != kv->arr_n)
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.tokens: could not read entry %llu",
                       (unsigned long long)pos);

    size_t n = (size_t)t->n_vocab;
    t->text = malloc((size_t)total + 1);
    t->text_off = malloc((n + 1) * sizeof *t->text_off);
    t->hashes = malloc(n * sizeof *t->hashes);
    if (!t->text || !t->text_off || !t->hashes)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for a %d-token vocabulary", t->n_vocab);
    pos = 0;
    size_t off = 0;
    while (gguf_arr_next_str(kv, &pos, &cur, &s)) {
        t->text_off[pos - 1] = off;
        if (s.len)
            memcpy(t->text + off, s.ptr, (size_t)s.len);
        off += (size_t)s.len;
    }
    t->text_off[n] = off;

    /* At most half full, so probes stay short. */
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    t->slots = malloc(cap * sizeof *t->slots);
    if (!t->slots)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for a %d-token vocabulary", t->n_vocab);
    memset(t->slots, 0xff, cap * sizeof *t->slots);
    t->slot_mask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        size_t len = t->text_off[i + 1] - t->text_off[i];
        uint64_t h = hash_bytes(t->text + t->text_off[i], len);
        t->hashes[i] = (uint32_t)h;
        /* Empty texts can never match a lookup; the reference renames them. */
        if (len)
            vocab_insert(t, (int32_t)i, h);
    }
    return GL_OK;
}

static gl_status load_scores_types(gl_tokenizer *t, const gguf_file *g, gl_error *err)
{
    size_t n = (size_t)t->n_vocab;
    t->scores = calloc(n, sizeof *t->scores);
    t->types = malloc(n);
    if (!t->scores || !t->types)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for a %d-token vocabulary", t->n_vocab);
    memset(t->types, GL_TOKEN_NORMAL, n);

    const gguf_kv *kv = gguf_find(g, "tokenizer.ggml.scores");
    if (kv) {
        if (kv->type != GGUF_VT_ARR || kv->arr_n != n)
            return gl_fail(err, GL_ERR_FORMAT,
                           "tokenizer.ggml.scores must be an array of %d "
                           "numbers (one per token)",
                           t->n_vocab);
        for (size_t i = 0; i < n; i++) {
            double v;
            if (!gguf_arr_get_num(kv, i, &v))
                return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.scores is not numeric");
            if (v != v)
                return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.scores[%zu] is NaN", i);
            t->scores[i] = (float)v;
        }
    }
    kv = gguf_find(g, "tokenizer.ggml.token_type");
    if (kv) {
        if (kv->type != GGUF_VT_ARR || kv->arr_n != n)
            return gl_fail(err, GL_ERR_FORMAT,
                           "tokenizer.ggml.token_type must be an array of %d "
                           "integers (one per token)",
                           t->n_vocab);
        for (size_t i = 0; i < n; i++) {
            double v;
            if (!gguf_arr_get_num(kv, i, &v))
                return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.token_type is not numeric");
            if (!(v >= GL_TOKEN_UNDEFINED && v <= GL_TOKEN_BYTE) || v != (double)(int)v)
                return gl_fail(err, GL_ERR_FORMAT,
                               "tokenizer.ggml.token_type[%zu] = %g is not "
                               "a token type (0..6)",
                               i, v);
            t->types[i] = (uint8_t)v;
        }
    }
    return GL_OK;
}

/* A special id: absent -> dflt; -1 (also as u32) -> none; else in range. */
static gl_status load_id(const gl_tokenizer *t, const gguf_file *g, const char *key, int32_t dflt,
                         int32_t *out, gl_error *err)
{
    int64_t v;
    *out = dflt < t->n_vocab ? dflt : -1;
    if (!gguf_find(g, key))
        return GL_OK;
    if (!gguf_get_i64(g, key, &v))
        return gl_fail(err, GL_ERR_FORMAT, "%s is not an integer", key);
    if (v == -1 || v == 0xFFFFFFFFll) {
        *out = -1;
        return GL_OK;
    }
    if (v < 0 || v >= t->n_vocab)
        return gl_fail(err, GL_ERR_FORMAT, "%s = %lld is outside the vocabulary (%d tokens)", key,
                       (long long)v, t->n_vocab);
    *out = (int32_t)v;
    return GL_OK;
}

static gl_status load_bool(const gguf_file *g, const char *key, bool dflt, bool *out, gl_error *err)
{
    *out = dflt;
    if (gguf_find(g, key) && !gguf_get_bool(g, key, out))
        return gl_fail(err, GL_ERR_FORMAT, "%s is not a bool", key);
    return GL_OK;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decoded bytes of every token, so detokenizing is a table lookup. */
static gl_status spm_build_pieces(gl_tokenizer *t, gl_error *err)
{
    size_t n = (size_t)t->n_vocab;
    /* A piece is never longer than its text. */
    t->piece = malloc(t->text_off[n] + 1);
    t->piece_off = malloc((n + 1) * sizeof *t->piece_off);
    if (!t->piece || !t->piece_off)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for a %d-token vocabulary", t->n_vocab);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = t->text + t->text_off[i];
        size_t len = t->text_off[i + 1] - t->text_off[i];
        t->piece_off[i] = w;
        switch (t->types[i]) {
        case GL_TOKEN_NORMAL:
            for (size_t j = 0; j < len; j++) {
                if (j + 3 <= len && memcmp(s + j, "\xE2\x96\x81", 3) == 0) {
                    t->piece[w++] = ' ';
                    j += 2;
                } else {
                    t->piece[w++] = s[j];
                }
            }
            break;
        case GL_TOKEN_BYTE: {
            int hi = len == 6 ? hexval(s[3]) : -1, lo = len == 6 ? hexval(s[4]) : -1;
            if (len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>' || hi < 0 || lo < 0)
                return gl_fail(err, GL_ERR_FORMAT,
                               "token %zu is a byte token but its text is "
                               "not <0xNN>",
                               i);
            t->piece[w++] = (char)(hi * 16 + lo);
            break;
        }
        case GL_TOKEN_UNKNOWN:
        case GL_TOKEN_USER_DEFINED:
            memcpy(t->piece + w, s, len);
            w += len;
            break;
        default: /* control, unused, undefined: no text */ break;
        }
    }
    t->piece_off[n] = w;
    return GL_OK;
}

/* Byte-level pieces: each stand-in character back to its byte. Control and
 * unused tokens have no text; user-defined and unknown ones their own. */
static gl_status bpe_build_pieces(gl_tokenizer *t, gl_error *err)
{
    size_t n = (size_t)t->n_vocab;
    t->piece = malloc(t->text_off[n] + 1); /* unmapping never lengthens */
    t->piece_off = malloc((n + 1) * sizeof *t->piece_off);
    if (!t->piece || !t->piece_off)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for a %d-token vocabulary", t->n_vocab);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = t->text + t->text_off[i];
        size_t len = t->text_off[i + 1] - t->text_off[i];
        t->piece_off[i] = w;
        switch (t->types[i]) {
        case GL_TOKEN_CONTROL:
        case GL_TOKEN_UNUSED: break;
        case GL_TOKEN_UNKNOWN:
        case GL_TOKEN_USER_DEFINED:
            memcpy(t->piece + w, s, len);
            w += len;
            break;
        default: /* normal, byte, undefined */ w += gl_bpe_unmap(s, len, t->piece + w); break;
        }
    }
    t->piece_off[n] = w;
    return GL_OK;
}

static gl_status bpe_init(gl_tokenizer *t, const gguf_file *g, gl_error *err)
{
    /* GPT-2 vocabularies name no defaults: <|endoftext|> is BOS and EOS, and
     * prompts do not start with it unless the file says so. */
    const int32_t eot = vocab_find(t, "<|endoftext|>", 13);
    gl_status st;
    if ((st = load_id(t, g, "tokenizer.ggml.bos_token_id", eot, &t->bos, err)) ||
        (st = load_id(t, g, "tokenizer.ggml.eos_token_id", eot, &t->eos, err)) ||
        (st = load_id(t, g, "tokenizer.ggml.unknown_token_id", -1, &t->unk, err)))
        return st;
    t->add_space_prefix = false;
    for (int b = 0; b < 256; b++)
        t->byte_tok[b] = -1;
    if ((st = gl_bpe_load(&t->bpe, t, g, err)) ||
        (st = load_bool(g, "tokenizer.ggml.add_bos_token", gl_bpe_default_add_bos(t->bpe),
                        &t->add_bos, err)))
        return st;
    return bpe_build_pieces(t, err);
}

static gl_status spm_init(gl_tokenizer *t, const gguf_file *g, gl_error *err)
{
    gl_status st;
    if ((st = load_id(t, g, "tokenizer.ggml.bos_token_id", 1, &t->bos, err)) ||
        (st = load_id(t, g, "tokenizer.ggml.eos_token_id", 2, &t->eos, err)) ||
        (st = load_id(t, g, "tokenizer.ggml.unknown_token_id", 0, &t->unk, err)) ||
        (st = load_bool(g, "tokenizer.ggml.add_bos_token", true, &t->add_bos, err)) ||
        (st = load_bool(g, "tokenizer.ggml.add_space_prefix", true, &t->add_space_prefix, err)))
        return st;
    /* As the reference: <0xNN> by text, else the one-byte token, else unk. */
    for (int b = 0; b < 256; b++) {
        char buf[8];
        snprintf(buf, sizeof buf, "<0x%02X>", b);
        int32_t id = vocab_find(t, buf, 6);
        if (id < 0) {
            buf[0] = (char)b;
            id = vocab_find(t, buf, 1);
        }
        t->byte_tok[b] = id >= 0 ? id : t->unk;
    }
    return spm_build_pieces(t, err);
}

/* ---- special tokens and end of generation ---------------------------------- */

static bool is_special_type(int type)
{
    return type == GL_TOKEN_CONTROL || type == GL_TOKEN_USER_DEFINED || type == GL_TOKEN_UNKNOWN;
}

/* Sorts the specials: longest text first, then lower id. */
static void sort_specials(gl_tokenizer *t)
{
    /* shell sort: no qsort_r in C11 and the tokenizer must stay reentrant */
    int n = t->n_specials;
    for (int gap = n / 2; gap > 0; gap /= 2) {
        for (int i = gap; i < n; i++) {
            int32_t v = t->specials[i];
            size_t lv = t->text_off[v + 1] - t->text_off[v];
            int j = i;
            for (; j >= gap; j -= gap) {
                int32_t o = t->specials[j - gap];
                size_t lo = t->text_off[o + 1] - t->text_off[o];
                if (lo > lv || (lo == lv && o < v))
                    break;
                t->specials[j] = o;
            }
            t->specials[j] = v;
        }
    }
}

static void add_eog(gl_tokenizer *t, int32_t id)
{
    if (id < 0 || t->n_eog >= (int)(sizeof t->eog / sizeof t->eog[0]))
        return;
    for (int i = 0; i < t->n_eog; i++)
        if (t->eog[i] == id)
            return;
    t->eog[t->n_eog++] = id;
}

/* Whether general.name mentions Phi-3, whose special tokens eat the white
 * space after them (the reference sets these attributes by name). */
static bool name_is_phi3(const gguf_file *g)
{
    gguf_str s;
    if (!gguf_find(g, "general.name") || !gguf_get_str(g, "general.name", &s))
        return false;
    char low[256];
    size_t n = s.len < sizeof low - 1 ? (size_t)s.len : sizeof low - 1;
    for (size_t i = 0; i < n; i++) {
        char c = s.ptr[i];
        low[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    low[n] = '\0';
    return strstr(low, "phi-3") || strstr(low, "phi3");
}

static gl_status load_specials(gl_tokenizer *t, const gguf_file *g, gl_error *err)
{
    size_t n = (size_t)t->n_vocab;
    gl_status st;
    int n_sp = 0;
    for (size_t i = 0; i < n; i++)
        n_sp += is_special_type(t->types[i]) && t->text_off[i + 1] > t->text_off[i];
    t->specials = malloc(((size_t)n_sp + 1) * sizeof *t->specials);
    t->strip = calloc(n, 1);
    if (!t->specials || !t->strip)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for a %d-token vocabulary", t->n_vocab);
    for (size_t i = 0; i < n; i++)
        if (is_special_type(t->types[i]) && t->text_off[i + 1] > t->text_off[i])
            t->specials[t->n_specials++] = (int32_t)i;
    sort_specials(t);
    if (name_is_phi3(g)) {
        for (int i = 0; i < t->n_specials; i++)
            t->strip[t->specials[i]] |= STRIP_RIGHT;
        static const char *const keep[] = { "<unk>", "<s>", "<|endoftext|>" };
        for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
            int32_t id = vocab_find(t, keep[k], strlen(keep[k]));
            if (id >= 0)
                t->strip[id] = 0;
        }
        int32_t id = vocab_find(t, "</s>", 4);
        if (id >= 0)
            t->strip[id] |= STRIP_RIGHT;
    }

    /* End of generation: the ids the file names, and the tokens that end a
     * turn in the chat formats (found by text, as the reference does). */
    if ((st = load_id(t, g, "tokenizer.ggml.eot_token_id", -1, &t->eot, err)) ||
        (st = load_id(t, g, "tokenizer.ggml.eom_token_id", -1, &t->eom, err)))
        return st;
    /* The reference's list, plus the end-of-turn tokens of the DeepSeek
     * Coder and Command-R chat formats, which the reference leaves to the
     * file's eot id. */
    static const char *const turn_ends[] = {
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",         "<|endoftext|>",
        "<|eom_id|>", "<EOT>",      "<|EOT|>", "<|END_OF_TURN_TOKEN|>",
    };
    add_eog(t, t->eos);
    add_eog(t, t->eot);
    add_eog(t, t->eom);
    for (size_t k = 0; k < sizeof turn_ends / sizeof turn_ends[0]; k++) {
        int32_t id = vocab_find(t, turn_ends[k], strlen(turn_ends[k]));
        if (id >= 0) {
            add_eog(t, id);
            if (t->types[id] != GL_TOKEN_CONTROL && t->types[id] != GL_TOKEN_USER_DEFINED)
                t->types[id] = GL_TOKEN_CONTROL; /* never printed as text */
        }
    }
    return GL_OK;
}

gl_status gl_tokenizer_load(gl_tokenizer **out, const gguf_file *g, gl_error *err)
{
    if (!out || !g)
        return gl_fail(err, GL_ERR_ARG, "gl_tokenizer_load: NULL argument");
    *out = NULL;
    gguf_str model;
    char buf[48];
    if (!gguf_find(g, "tokenizer.ggml.model"))
        return gl_fail(err, GL_ERR_FORMAT, "no tokenizer: tokenizer.ggml.model missing");
    if (!gguf_get_str(g, "tokenizer.ggml.model", &model))
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.model is not a string");
    vocab_kind kind;
    if (gguf_str_eq(model, "llama"))
        kind = VOCAB_SPM;
    else if (gguf_str_eq(model, "gpt2"))
        kind = VOCAB_BPE;
    else
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "tokenizer model '%s' not supported "
                       "(supported: llama, gpt2)",
                       printable(model, buf, sizeof buf));

    gl_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for the tokenizer");
    t->kind = kind;
    snprintf(t->model, sizeof t->model, "%s", kind == VOCAB_SPM ? "llama" : "gpt2");
    gl_status st;
    if ((st = load_tokens(t, g, err)) || (st = load_scores_types(t, g, err)))
        goto fail;
    switch (t->kind) {
    case VOCAB_SPM: st = spm_init(t, g, err); break;
    case VOCAB_BPE: st = bpe_init(t, g, err); break;
    }
    if (st || (st = load_specials(t, g, err)))
        goto fail;
    *out = t;
    return GL_OK;
fail:
    gl_tokenizer_free(t);
    return st;
}

void gl_tokenizer_free(gl_tokenizer *t)
{
    if (!t)
        return;
    free(t->text);
    free(t->text_off);
    free(t->piece);
    free(t->piece_off);
    free(t->scores);
    free(t->types);
    free(t->hashes);
    free(t->slots);
    gl_bpe_free(t->bpe);
    free(t->specials);
    free(t->strip);
    free(t);
}

/* ---- accessors ---------------------------------------------------------- */

int gl_tokenizer_n_vocab(const gl_tokenizer *t)
{
    return t ? t->n_vocab : 0;
}

int32_t gl_tokenizer_bos(const gl_tokenizer *t)
{
    return t ? t->bos : -1;
}

int32_t gl_tokenizer_eos(const gl_tokenizer *t)
{
    return t ? t->eos : -1;
}

int32_t gl_tokenizer_unk(const gl_tokenizer *t)
{
    return t ? t->unk : -1;
}

bool gl_tokenizer_add_bos(const gl_tokenizer *t)
{
    return t && t->add_bos;
}

const char *gl_tokenizer_model(const gl_tokenizer *t)
{
    return t ? t->model : "";
}

const char *gl_tokenizer_text(const gl_tokenizer *t, int32_t id, size_t *len)
{
    if (!t || id < 0 || id >= t->n_vocab) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = t->text_off[id + 1] - t->text_off[id];
    return t->text + t->text_off[id];
}

int gl_tokenizer_type(const gl_tokenizer *t, int32_t id)
{
    return (t && id >= 0 && id < t->n_vocab) ? t->types[id] : -1;
}

const char *gl_tokenizer_piece(const gl_tokenizer *t, int32_t id, size_t *len)
{
    if (!t || id < 0 || id >= t->n_vocab) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = t->types[id] == GL_TOKEN_CONTROL ? 0 : t->piece_off[id + 1] - t->piece_off[id];
    return t->piece + t->piece_off[id];
}

int32_t gl_tokenizer_find(const gl_tokenizer *t, const char *text, size_t len)
{
    if (!t || (!text && len))
        return -1;
    return vocab_find(t, text, len);
}

/* ---- SPM encoding ------------------------------------------------------- */

typedef gl_tok_sink sink;

static void emit(sink *s, int32_t id)
{
    if (s->n < s->cap)
        s->out[s->n] = id;
    s->n++;
}

typedef struct spm_sym {
    int32_t off, n;     /* bytes of the escaped text; n == 0: merged away */
    int32_t prev, next; /* neighbours in the live chain, -1 at the ends    */
} spm_sym;

typedef struct spm_pair {
    float score;
    int32_t left, right;
    int32_t size; /* left.n + right.n when queued: detects stale entries */
} spm_pair;

typedef struct spm_heap {
    spm_pair *a;
    size_t n, cap;
} spm_heap;

/* Whether a pops before b: higher score, then the leftmost. */
static bool pair_first(const spm_pair *a, const spm_pair *b)
{
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static bool heap_push(spm_heap *h, spm_pair p)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        spm_pair *a = realloc(h->a, cap * sizeof *a);
        if (!a)
            return false;
        h->a = a;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!pair_first(&p, &h->a[parent]))
            break;
        h->a[i] = h->a[parent];
        i = parent;
    }
    h->a[i] = p;
    return true;
}

static spm_pair heap_pop(spm_heap *h)
{
    spm_pair top = h->a[0], last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && pair_first(&h->a[c + 1], &h->a[c]))
            c++;
        if (!pair_first(&h->a[c], &last))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = last;
    return top;
}

typedef struct spm_state {
    const gl_tokenizer *t;
    const char *text;
    spm_sym *sym;
    spm_heap heap;
} spm_state;

static bool try_pair(spm_state *s, int32_t left, int32_t right)
{
    if (left < 0 || right < 0)
        return true;
    const spm_sym *l = &s->sym[left], *r = &s->sym[right];
    int32_t id = vocab_find(s->t, s->text + l->off, (size_t)l->n + (size_t)r->n);
    if (id < 0)
        return true;
    spm_pair p = { s->t->scores[id], left, right, l->n + r->n };
    return heap_push(&s->heap, p);
}

static gl_status spm_encode(const gl_tokenizer *t, const char *text, size_t len, bool prefix,
                            sink *out, gl_error *err)
{
    static const uint8_t utf8_len[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    size_t spaces = 0;
    for (size_t i = 0; i < len; i++)
        spaces += text[i] == ' ';
    prefix = prefix && t->add_space_prefix;
    size_t n_esc = len + 2 * spaces + (prefix ? 3 : 0);
    gl_status st = GL_OK;
    spm_state s = { t, NULL, NULL, { NULL, 0, 0 } };
    char *esc = malloc(n_esc);
    s.sym = n_esc <= SIZE_MAX / sizeof *s.sym ? malloc(n_esc * sizeof *s.sym) : NULL;
    if (!esc || !s.sym) {
        st = gl_fail(err, GL_ERR_NOMEM, "out of memory tokenizing %zu bytes", len);
        goto done;
    }
    s.text = esc;
    size_t w = 0;
    if (prefix) {
        memcpy(esc, "\xE2\x96\x81", 3);
        w = 3;
    }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') {
            memcpy(esc + w, "\xE2\x96\x81", 3);
            w += 3;
        } else {
            esc[w++] = text[i];
        }
    }

    int32_t n_sym = 0;
    for (size_t off = 0; off < n_esc;) {
        size_t n = utf8_len[(unsigned char)esc[off] >> 4];
        if (n > n_esc - off)
            n = n_esc - off;
        spm_sym *y = &s.sym[n_sym];
        y->off = (int32_t)off;
        y->n = (int32_t)n;
        y->prev = n_sym - 1;
        off += n;
        y->next = off == n_esc ? -1 : n_sym + 1;
        n_sym++;
    }

    for (int32_t i = 1; i < n_sym; i++)
        if (!try_pair(&s, i - 1, i))
            goto nomem;
    while (s.heap.n) {
        spm_pair p = heap_pop(&s.heap);
        spm_sym *l = &s.sym[p.left], *r = &s.sym[p.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != p.size)
            continue;
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0)
            s.sym[r->next].prev = p.left;
        if (!try_pair(&s, l->prev, p.left) || !try_pair(&s, p.left, l->next))
            goto nomem;
    }

    for (int32_t i = 0; i >= 0; i = s.sym[i].next) {
        const spm_sym *y = &s.sym[i];
        int32_t id = vocab_find(t, esc + y->off, (size_t)y->n);
        if (id >= 0) {
            emit(out, id);
            continue;
        }
        for (int32_t j = 0; j < y->n; j++) {
            unsigned char b = (unsigned char)esc[y->off + j];
            if (t->byte_tok[b] < 0) {
                st = gl_fail(err, GL_ERR_UNSUPPORTED,
                             "byte 0x%02X has no token and the "
                             "vocabulary has no unknown token",
                             b);
                goto done;
            }
            emit(out, t->byte_tok[b]);
        }
    }
    goto done;
nomem:
    st = gl_fail(err, GL_ERR_NOMEM, "out of memory tokenizing %zu bytes", len);
done:
    free(esc);
    free(s.sym);
    free(s.heap.a);
    return st;
}

/* ---- special-token partition -------------------------------------------- */

/* A fragment of the text: raw bytes to tokenize, or one special token. */
typedef struct frag {
    size_t off, len;
    int32_t id; /* -1: text */
} frag;

/* First occurrence of needle (nl > 0 bytes) in hay, or NULL. */
static const char *find_bytes(const char *hay, size_t hl, const char *needle, size_t nl)
{
    while (hl >= nl) {
        const char *p = memchr(hay, needle[0], hl - nl + 1);
        if (!p)
            return NULL;
        if (memcmp(p, needle, nl) == 0)
            return p;
        hl -= (size_t)(p - hay) + 1;
        hay = p + 1;
    }
    return NULL;
}

static bool is_space_byte(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

typedef struct frag_list {
    frag *p;
    size_t n, cap;
} frag_list;

static bool frag_push(frag_list *l, frag x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        frag *p = realloc(l->p, cap * sizeof *p);
        if (!p)
            return false;
        l->p = p;
        l->cap = cap;
    }
    l->p[l->n++] = x;
    return true;
}

/* Cuts the text fragments at every occurrence of each special token, the
 * longest tokens first, as the reference does: a shorter special token
 * inside a longer one's text is never seen. Control and unknown tokens
 * count only when parse_special; user-defined ones always (the reference
 * pre-tokenizes them before everything else). Returns the fragment count
 * (at most 2 * len + 1) with the fragments in *out (heap), or -1 on
 * allocation failure. */
static int partition(const gl_tokenizer *t, const char *text, size_t len, bool parse_special,
                     frag **out)
{
    frag_list a = { 0 }, b = { 0 };
    bool present[256] = { false };
    for (size_t i = 0; i < len; i++)
        present[(unsigned char)text[i]] = true;
    bool ok = frag_push(&a, (frag){ 0, len, -1 });
    for (int k = 0; ok && k < t->n_specials; k++) {
        const int32_t id = t->specials[k];
        const int type = t->types[id];
        if (!parse_special && type != GL_TOKEN_USER_DEFINED)
            continue;
        const char *tx = t->text + t->text_off[id];
        const size_t tl = t->text_off[id + 1] - t->text_off[id];
        if (tl > len || !present[(unsigned char)tx[0]])
            continue;
        b.n = 0;
        for (size_t f = 0; ok && f < a.n; f++) {
            frag x = a.p[f];
            if (x.id >= 0 || x.len < tl) {
                ok = frag_push(&b, x);
                continue;
            }
            while (ok) {
                const char *hit = x.len >= tl ? find_bytes(text + x.off, x.len, tx, tl) : NULL;
                if (!hit) {
                    if (x.len)
                        ok = frag_push(&b, x);
                    break;
                }
                size_t at = (size_t)(hit - text), left = at - x.off;
                if (t->strip[id] & STRIP_LEFT)
                    while (left && is_space_byte((unsigned char)text[x.off + left - 1]))
                        left--;
                if (left)
                    ok = frag_push(&b, (frag){ x.off, left, -1 });
                ok = ok && frag_push(&b, (frag){ at, tl, id });
                size_t r = at + tl, rlen = x.off + x.len - r;
                if (t->strip[id] & STRIP_RIGHT)
                    while (rlen && is_space_byte((unsigned char)text[r])) {
                        r++;
                        rlen--;
                    }
                x = (frag){ r, rlen, -1 };
            }
        }
        frag_list tmp = a;
        a = b;
        b = tmp;
    }
    free(b.p);
    if (!ok) {
        free(a.p);
        return -1;
    }
    *out = a.p;
    return (int)a.n;
}

static gl_status encode_text(const gl_tokenizer *t, const char *text, size_t len, bool prefix,
                             sink *s, gl_error *err)
{
    switch (t->kind) {
    case VOCAB_SPM: return spm_encode(t, text, len, prefix, s, err);
    case VOCAB_BPE: return gl_bpe_encode(t->bpe, text, len, s, err);
    }
    return GL_OK;
}

int gl_tokenizer_encode_ex(const gl_tokenizer *t, const char *text, size_t len, unsigned flags,
                           int32_t *out, int cap, gl_error *err)
{
    const bool add_bos = flags & GL_TOKENIZE_BOS, parse_special = flags & GL_TOKENIZE_SPECIAL;
    /* Escaping can triple the text; ids and symbol indices are int. */
    const size_t max_len = ((size_t)INT_MAX - 16) / 3;
    if (!t || (!text && len) || cap < 0 || (!out && cap > 0)) {
        gl_fail(err, GL_ERR_ARG, "gl_tokenize: invalid argument");
        return -1;
    }
    if (len > max_len) {
        gl_fail(err, GL_ERR_ARG, "text of %zu bytes is too long to tokenize (limit %zu)", len,
                max_len);
        return -1;
    }
    sink s = { out, cap, 0 };
    if (add_bos && t->bos >= 0)
        emit(&s, t->bos);
    /* Empty text has no tokens: no space prefix either, as the reference. */
    if (len == 0)
        return s.n;
    frag *fr = NULL;
    int n_fr = partition(t, text, len, parse_special, &fr);
    if (n_fr < 0) {
        gl_fail(err, GL_ERR_NOMEM, "out of memory tokenizing %zu bytes", len);
        return -1;
    }
    gl_status st = GL_OK;
    for (int i = 0; i < n_fr && !st; i++) {
        if (fr[i].id >= 0) {
            emit(&s, fr[i].id);
            continue;
        }
        /* SentencePiece adds its space prefix to the text at the start and
         * after each special token, i.e. to every text fragment, except at
         * the start of a continuation. */
        const bool prefix = !(flags & GL_TOKENIZE_CONTINUE) || fr[i].off > 0;
        st = encode_text(t, text + fr[i].off, fr[i].len, prefix, &s, err);
    }
    free(fr);
    return st ? -1 : s.n;
}

int gl_tokenizer_encode(const gl_tokenizer *t, const char *text, size_t len, bool add_bos,
                        int32_t *out, int cap, gl_error *err)
{
    return gl_tokenizer_encode_ex(t, text, len, add_bos ? GL_TOKENIZE_BOS : 0, out, cap, err);
}

bool gl_tokenizer_is_eog(const gl_tokenizer *t, int32_t id)
{
    if (!t || id < 0)
        return false;
    for (int i = 0; i < t->n_eog; i++)
        if (t->eog[i] == id)
            return true;
    return false;
}

int gl_tokenizer_eog_ids(const gl_tokenizer *t, int32_t *ids, int cap)
{
    int n = t ? t->n_eog : 0;
    for (int i = 0; i < n && i < cap; i++)
        ids[i] = t->eog[i];
    return n;
}

const char *gl_tokenizer_warning(const gl_tokenizer *t)
{
    return t && t->bpe ? gl_bpe_warning(t->bpe) : NULL;
}

int gl_tokenizer_encode_more(const gl_tokenizer *t, const char *text, size_t len, int32_t *out,
                             int cap, gl_error *err)
{
    return gl_tokenizer_encode_ex(t, text, len, GL_TOKENIZE_CONTINUE, out, cap, err);
}

/* ---- streaming detokenizer ---------------------------------------------- */

/* Length of the UTF-8 sequence a lead byte starts; 0: cannot start one. */
static int utf8_need(unsigned char b)
{
    if (b < 0x80)
        return 1;
    if (b >= 0xC2 && b <= 0xDF)
        return 2;
    if (b >= 0xE0 && b <= 0xEF)
        return 3;
    if (b >= 0xF0 && b <= 0xF4)
        return 4;
    return 0;
}

/* Whether c may be byte idx (1..3) after lead: the second-byte ranges rule
 * out overlong forms, surrogates and code points above U+10FFFF. */
static bool utf8_cont_ok(unsigned char lead, int idx, unsigned char c)
{
    if ((c & 0xC0) != 0x80)
        return false;
    if (idx == 1) {
        if (lead == 0xE0)
            return c >= 0xA0;
        if (lead == 0xED)
            return c <= 0x9F;
        if (lead == 0xF0)
            return c >= 0x90;
        if (lead == 0xF4)
            return c <= 0x8F;
    }
    return true;
}

typedef struct obuf {
    char *p;
    size_t cap, n; /* cap > 0: one byte is kept for the NUL */
    bool full;
} obuf;

static bool put(obuf *o, const void *b, size_t n)
{
    if (o->full || o->n + n + 1 > o->cap) {
        o->full = true;
        return false;
    }
    memcpy(o->p + o->n, b, n);
    o->n += n;
    return true;
}

static bool put_fffd(obuf *o)
{
    return put(o, "\xEF\xBF\xBD", 3);
}

/* Feeds one byte through the UTF-8 assembler held in d. */
static bool feed(gl_detok *d, obuf *o, unsigned char b)
{
    if (d->n_pending > 0) {
        unsigned char lead = d->pending[0];
        if (utf8_cont_ok(lead, d->n_pending, b)) {
            d->pending[d->n_pending++] = b;
            if (d->n_pending == utf8_need(lead)) {
                d->n_pending = 0;
                return put(o, d->pending, (size_t)utf8_need(lead));
            }
            return true;
        }
        /* The held prefix can never complete: one U+FFFD for it, then b
         * starts afresh (the Unicode "maximal subpart" practice). */
        d->n_pending = 0;
        if (!put_fffd(o))
            return false;
    }
    int need = utf8_need(b);
    if (need == 1)
        return put(o, &b, 1);
    if (need == 0)
        return put_fffd(o);
    d->pending[0] = b;
    d->n_pending = 1;
    return true;
}

void gl_detok_init(gl_detok *d)
{
    if (d)
        memset(d, 0, sizeof *d);
}

int gl_tokenizer_detok_push(const gl_tokenizer *t, gl_detok *d, int32_t id, char *out, size_t cap)
{
    if (!out || cap == 0)
        return 0;
    out[0] = '\0';
    if (!t || !d || id < 0 || id >= t->n_vocab)
        return 0;
    /* A caller-corrupted count must not index outside pending[]. */
    if (d->n_pending < 0 || d->n_pending > 3)
        d->n_pending = 0;
    if (id == t->bos) {
        d->after_bos = true;
        return 0;
    }
    size_t len;
    const char *p = gl_tokenizer_piece(t, id, &len);
    if (len == 0)
        return 0;
    if (d->after_bos && t->add_space_prefix && t->types[id] == GL_TOKEN_NORMAL && p[0] == ' ') {
        p++;
        len--;
    }
    d->after_bos = false;
    obuf o = { out, cap, 0, false };
    for (size_t i = 0; i < len; i++) {
        if (!feed(d, &o, (unsigned char)p[i])) {
            d->n_pending = 0;
            break;
        }
    }
    out[o.n] = '\0';
    return (int)o.n;
}

int gl_detok_flush(gl_detok *d, char *out, size_t cap)
{
    if (!out || cap == 0)
        return 0;
    out[0] = '\0';
    if (!d)
        return 0;
    obuf o = { out, cap, 0, false };
    if (d->n_pending != 0)
        put_fffd(&o);
    d->n_pending = 0;
    out[o.n] = '\0';
    return (int)o.n;
}
