/* Byte-level BPE, as GPT-2 defined it:
 *
 *   1. Pre-tokenize: cut the text into pieces with the model's split rules
 *      (GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|
 *      \s+(?!\S)|\s+), matched by hand over Unicode classes: at each
 *      position the first rule that matches takes its longest match, as the
 *      regex alternation does. Rules are data (split_rule tables), so other
 *      pre-tokenizers are new tables, not new code paths.
 *   2. Map every byte of a piece to its printable stand-in character
 *      (bytes_to_unicode: printable Latin-1 bytes stand for themselves, the
 *      other 68 bytes for U+0100...U+0143 in byte order); each byte starts
 *      as the token of its character.
 *   3. Repeatedly merge the adjacent pair whose merge has the lowest rank
 *      in tokenizer.ggml.merges (ties: leftmost), with a heap, as the
 *      reference implementation does.
 * Merges are keyed on (left id, right id) -> (rank, merged id), so symbols
 * are token ids throughout and a merge can never produce a non-token. */
#include "tokenizer_bpe.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "unicode_tables.h"

/* ---- code point classes -------------------------------------------------- */

/* Unit flags: the Unicode classes plus single characters rules name. */
enum {
    C_LETTER = GL_UCD_LETTER,
    C_NUMBER = GL_UCD_NUMBER,
    C_SPACE = GL_UCD_SPACE, /* \s */
    C_SP = 8,               /* U+0020 itself */
    C_CR = 16,
    C_LF = 32,
};

static unsigned ucd_flags(uint32_t cp)
{
    int lo = 0, hi = gl_ucd_n_ranges - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        if (cp < gl_ucd_ranges[mid].lo)
            hi = mid - 1;
        else if (cp > gl_ucd_ranges[mid].hi)
            lo = mid + 1;
        else
            return gl_ucd_ranges[mid].flags;
    }
    return 0;
}

static unsigned char_flags(uint32_t cp)
{
    unsigned f = ucd_flags(cp);
    if (cp == ' ')
        f |= C_SP;
    else if (cp == '\r')
        f |= C_CR;
    else if (cp == '\n')
        f |= C_LF;
    return f;
}

/* Decodes the UTF-8 character at s (n > 0 bytes left); returns its length
 * and sets *cp, or returns 1 with *cp = UINT32_MAX for an invalid byte. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    const unsigned char b = s[0];
    size_t need;
    uint32_t v, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
        need = 2, v = b & 0x1F, min = 0x80;
    } else if (b >= 0xE0 && b <= 0xEF) {
        need = 3, v = b & 0x0F, min = 0x800;
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 4, v = b & 0x07, min = 0x10000;
    } else {
        *cp = UINT32_MAX;
        return 1;
    }
    if (need > n)
        goto bad;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            goto bad;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        goto bad;
    *cp = v;
    return need;
bad:
    *cp = UINT32_MAX;
    return 1;
}

/* ---- pre-tokenizer rules -------------------------------------------------- */

/* A class of code points: those with any of `flags`, or with none of them
 * when negated. An invalid byte has no flags. */
typedef struct char_class {
    uint8_t flags;
    bool neg;
} char_class;

typedef enum split_op {
    SPLIT_END = 0,
    /* an apostrophe and one of `suffixes`: 's|'t|'re|... */
    SPLIT_CONTRACTION,
    /* optionally one code point of `prefix`, then 1..max_run of `run`
     * (0: unbounded): ` ?\p{L}+`, `\p{N}{1,3}`, `\s+` */
    SPLIT_RUN,
    /* white space not followed by a non-space: `\s+(?!\S)` */
    SPLIT_SPACE_NOT_BEFORE_TEXT,
} split_op;

typedef struct split_rule {
    split_op op;
    char_class prefix; /* flags 0: no prefix */
    char_class run;
    int max_run;
    const char *const *suffixes; /* SPLIT_CONTRACTION: NULL-terminated */
    bool ignore_case;
} split_rule;

typedef struct pretokenizer {
    const char *names[4]; /* tokenizer.ggml.pre values, NULL-terminated */
    split_rule rules[8];  /* tried in order; ends at SPLIT_END */
} pretokenizer;

static const char *const english_contractions[] = { "s", "t", "re", "ve", "m", "ll", "d", NULL };

static const pretokenizer pretokenizers[] = {
    {
        .names = { "gpt-2", "gpt2", "default", NULL },
        .rules = {
            { .op = SPLIT_CONTRACTION, .suffixes = english_contractions },
            { .op = SPLIT_RUN, .prefix = { C_SP, false }, .run = { C_LETTER, false } },
            { .op = SPLIT_RUN, .prefix = { C_SP, false }, .run = { C_NUMBER, false } },
            { .op = SPLIT_RUN, .prefix = { C_SP, false },
              .run = { C_SPACE | C_LETTER | C_NUMBER, true } },
            { .op = SPLIT_SPACE_NOT_BEFORE_TEXT },
            { .op = SPLIT_RUN, .run = { C_SPACE, false } },
            { .op = SPLIT_END },
        },
    },
};

/* One code point (or invalid byte) of the text being split. */
typedef struct unit {
    uint32_t off; /* byte offset; the unit ends where the next begins */
    uint8_t flags;
} unit;

static bool in_class(char_class c, unsigned flags)
{
    return ((flags & c.flags) != 0) != c.neg;
}

static int lower_ascii(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* Length in units of the longest match of r at unit i of n, 0 for none. */
static size_t match_rule(const split_rule *r, const unit *u, size_t i, size_t n, const char *text)
{
    switch (r->op) {
    case SPLIT_CONTRACTION: {
        if (text[u[i].off] != '\'')
            return 0;
        size_t best = 0;
        for (const char *const *s = r->suffixes; *s; s++) {
            size_t k = strlen(*s), j = 0;
            for (; j < k && i + 1 + j < n; j++) {
                /* ASCII suffixes: a unit matches when it is that one byte */
                const unit *x = &u[i + 1 + j];
                if (x[1].off - x->off != 1)
                    break;
                int c = (unsigned char)text[x->off];
                if ((r->ignore_case ? lower_ascii(c) : c) != (*s)[j])
                    break;
            }
            if (j == k && k + 1 > best)
                best = k + 1;
        }
        return best;
    }
    case SPLIT_RUN: {
        size_t start = i;
        if (r->prefix.flags && in_class(r->prefix, u[i].flags) && i + 1 < n &&
            in_class(r->run, u[i + 1].flags))
            start = i + 1;
        size_t j = start;
        while (j < n && in_class(r->run, u[j].flags) &&
               (r->max_run <= 0 || j - start < (size_t)r->max_run))
            j++;
        return j > start ? j - i : 0;
    }
    case SPLIT_SPACE_NOT_BEFORE_TEXT: {
        size_t j = i;
        while (j < n && (u[j].flags & C_SPACE))
            j++;
        if (j == i)
            return 0;
        if (j == n)
            return j - i;
        /* backtrack one so the last space is not followed by \S */
        return j - i >= 2 ? j - i - 1 : 0;
    }
    case SPLIT_END: break;
    }
    return 0;
}

/* ---- the merge table ------------------------------------------------------ */

typedef struct merge_slot {
    uint64_t key; /* left id << 32 | right id; UINT64_MAX: empty */
    int32_t rank, id;
} merge_slot;

struct gl_bpe {
    const gl_tokenizer *t;
    const pretokenizer *pre;
    merge_slot *merges;
    size_t merge_mask;
    int n_merges, n_skipped;
    int32_t byte_tok[256]; /* the token of each byte's character, -1 none */
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    x ^= x >> 33;
    return x;
}

static const merge_slot *merge_find(const gl_bpe *b, int32_t left, int32_t right)
{
    const uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    for (size_t i = mix64(key) & b->merge_mask;; i = (i + 1) & b->merge_mask) {
        if (b->merges[i].key == key)
            return &b->merges[i];
        if (b->merges[i].key == UINT64_MAX)
            return NULL;
    }
}

/* The first (lowest-ranked) occurrence of a pair wins, as in the reference. */
static void merge_insert(gl_bpe *b, int32_t left, int32_t right, int32_t rank, int32_t id)
{
    const uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    for (size_t i = mix64(key) & b->merge_mask;; i = (i + 1) & b->merge_mask) {
        if (b->merges[i].key == key) {
            b->n_skipped++;
            return;
        }
        if (b->merges[i].key == UINT64_MAX) {
            b->merges[i] = (merge_slot){ key, rank, id };
            b->n_merges++;
            return;
        }
    }
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xC0 | cp >> 6); /* stand-ins are below U+0800 */
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

/* bytes_to_unicode: the 188 printable Latin-1 bytes stand for themselves;
 * the other 68 (0x00-0x20, 0x7F-0xA0, 0xAD), in byte order, for
 * U+0100...U+0143. */
static bool byte_printable(unsigned c)
{
    return (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
}

static uint32_t byte_stand_in(unsigned c)
{
    if (byte_printable(c))
        return c;
    if (c <= 0x20)
        return 0x100 + c;
    if (c >= 0x7F && c <= 0xA0)
        return 0x100 + 33 + (c - 0x7F);
    return 0x143; /* 0xAD */
}

/* The byte a stand-in code point means, or -1. */
static int stand_in_byte(uint32_t cp)
{
    if (cp < 0x100)
        return byte_printable(cp) ? (int)cp : -1;
    if (cp < 0x100 + 33)
        return (int)(cp - 0x100);
    if (cp < 0x100 + 67)
        return (int)(0x7F + cp - (0x100 + 33));
    return cp == 0x143 ? 0xAD : -1;
}

gl_status gl_bpe_load(gl_bpe **out, const gl_tokenizer *t, const gguf_file *g, gl_error *err)
{
    *out = NULL;
    const pretokenizer *pre = &pretokenizers[0];
    if (gguf_find(g, "tokenizer.ggml.pre")) {
        gguf_str s;
        if (!gguf_get_str(g, "tokenizer.ggml.pre", &s))
            return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.pre is not a string");
        pre = NULL;
        for (size_t i = 0; !pre && i < sizeof pretokenizers / sizeof pretokenizers[0]; i++)
            for (const char *const *nm = pretokenizers[i].names; *nm; nm++)
                if (gguf_str_eq(s, *nm))
                    pre = &pretokenizers[i];
        if (!pre) {
            char name[40];
            size_t k = 0;
            for (uint64_t i = 0; i < s.len && k + 1 < sizeof name; i++)
                name[k++] = s.ptr[i] >= 0x20 && s.ptr[i] < 0x7f ? s.ptr[i] : '?';
            name[k] = '\0';
            return gl_fail(err, GL_ERR_UNSUPPORTED,
                           "BPE pre-tokenizer '%s' "
                           "(tokenizer.ggml.pre) not supported (supported: gpt-2)",
                           name);
        }
    }
    const gguf_kv *kv = gguf_find(g, "tokenizer.ggml.merges");
    if (!kv)
        return gl_fail(err, GL_ERR_FORMAT,
                       "tokenizer.ggml.merges missing (a BPE vocabulary "
                       "needs its merges)");
    if (kv->type != GGUF_VT_ARR || kv->arr_type != GGUF_VT_STR)
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.merges is not a string array");
    if (kv->arr_n > (uint64_t)GL_VOCAB_MAX)
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.merges has %llu entries (limit %d)",
                       (unsigned long long)kv->arr_n, GL_VOCAB_MAX);

    gl_bpe *b = calloc(1, sizeof *b);
    if (!b)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for the BPE merges");
    b->t = t;
    b->pre = pre;
    size_t cap = 16;
    while (cap < 2 * (size_t)kv->arr_n)
        cap *= 2;
    b->merges = malloc(cap * sizeof *b->merges);
    if (!b->merges) {
        gl_bpe_free(b);
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for %llu BPE merges",
                       (unsigned long long)kv->arr_n);
    }
    memset(b->merges, 0xff, cap * sizeof *b->merges);
    b->merge_mask = cap - 1;

    char buf[GL_TOKEN_MAX_BYTES];
    uint64_t pos = 0;
    const uint8_t *cur = NULL;
    gguf_str s;
    while (gguf_arr_next_str(kv, &pos, &cur, &s)) {
        /* "left right": split at the first space after the first byte */
        const char *sp = s.len > 1 ? memchr(s.ptr + 1, ' ', (size_t)s.len - 1) : NULL;
        if (!sp || s.len - 1 > sizeof buf) { /* longer merges cannot make a token */
            b->n_skipped++;
            continue;
        }
        const size_t nl = (size_t)(sp - s.ptr), nr = (size_t)s.len - nl - 1;
        const int32_t l = gl_tokenizer_find(t, s.ptr, nl), r = gl_tokenizer_find(t, sp + 1, nr);
        memcpy(buf, s.ptr, nl);
        memcpy(buf + nl, sp + 1, nr);
        const int32_t id = gl_tokenizer_find(t, buf, nl + nr);
        if (l < 0 || r < 0 || id < 0) {
            b->n_skipped++;
            continue;
        }
        merge_insert(b, l, r, (int32_t)(pos - 1), id);
    }
    if (pos != kv->arr_n) {
        gl_bpe_free(b);
        return gl_fail(err, GL_ERR_FORMAT, "tokenizer.ggml.merges: could not read entry %llu",
                       (unsigned long long)pos);
    }

    for (unsigned c = 0; c < 256; c++) {
        char ch[2];
        b->byte_tok[c] = gl_tokenizer_find(t, ch, put_utf8(ch, byte_stand_in(c)));
    }
    *out = b;
    return GL_OK;
}

void gl_bpe_free(gl_bpe *b)
{
    if (!b)
        return;
    free(b->merges);
    free(b);
}

void gl_bpe_counts(const gl_bpe *b, int *n_merges, int *n_skipped)
{
    *n_merges = b ? b->n_merges : 0;
    *n_skipped = b ? b->n_skipped : 0;
}

size_t gl_bpe_unmap(const char *text, size_t len, char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        const size_t k = utf8_decode((const unsigned char *)text + i, len - i, &cp);
        const int byte = cp == UINT32_MAX ? -1 : stand_in_byte(cp);
        if (byte >= 0) {
            out[w++] = (char)byte;
        } else {
            memcpy(out + w, text + i, k);
            w += k;
        }
        i += k;
    }
    return w;
}

/* ---- merging one piece ---------------------------------------------------- */

typedef struct sym {
    int32_t id;         /* token id; -1: a byte whose character is no token */
    int32_t prev, next; /* live neighbours, -1 at the ends                  */
} sym;

typedef struct cand {
    int32_t rank, left, right;
    int32_t left_id, right_id; /* the ids when queued: detects stale entries */
} cand;

typedef struct work {
    const gl_bpe *b;
    sym *sym;
    cand *heap;
    size_t n_heap, cap_heap;
} work;

static bool cand_first(const cand *a, const cand *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static bool push_pair(work *w, int32_t left, int32_t right)
{
    if (left < 0 || right < 0)
        return true;
    const int32_t li = w->sym[left].id, ri = w->sym[right].id;
    if (li < 0 || ri < 0)
        return true;
    const merge_slot *m = merge_find(w->b, li, ri);
    if (!m)
        return true;
    if (w->n_heap == w->cap_heap) {
        size_t cap = w->cap_heap ? 2 * w->cap_heap : 64;
        cand *h = realloc(w->heap, cap * sizeof *h);
        if (!h)
            return false;
        w->heap = h;
        w->cap_heap = cap;
    }
    cand c = { m->rank, left, right, li, ri };
    size_t i = w->n_heap++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!cand_first(&c, &w->heap[parent]))
            break;
        w->heap[i] = w->heap[parent];
        i = parent;
    }
    w->heap[i] = c;
    return true;
}

static cand pop_pair(work *w)
{
    cand top = w->heap[0], last = w->heap[--w->n_heap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= w->n_heap)
            break;
        if (c + 1 < w->n_heap && cand_first(&w->heap[c + 1], &w->heap[c]))
            c++;
        if (!cand_first(&w->heap[c], &last))
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (w->n_heap)
        w->heap[i] = last;
    return top;
}

/* BPE of one piece of n bytes; appends its ids to s. */
static gl_status encode_piece(work *w, const unsigned char *p, size_t n, gl_tok_sink *s,
                              gl_error *err)
{
    const gl_bpe *b = w->b;
    for (size_t i = 0; i < n; i++)
        w->sym[i] = (sym){ b->byte_tok[p[i]], (int32_t)i - 1, i + 1 < n ? (int32_t)i + 1 : -1 };
    w->n_heap = 0;
    for (size_t i = 1; i < n; i++)
        if (!push_pair(w, (int32_t)i - 1, (int32_t)i))
            goto nomem;
    while (w->n_heap) {
        const cand c = pop_pair(w);
        sym *l = &w->sym[c.left], *r = &w->sym[c.right];
        if (l->next != c.right || l->id != c.left_id || r->id != c.right_id)
            continue; /* stale: a neighbour merged since */
        l->id = merge_find(b, c.left_id, c.right_id)->id;
        l->next = r->next;
        if (r->next >= 0)
            w->sym[r->next].prev = c.left;
        r->id = -2; /* merged away */
        r->next = r->prev = -1;
        if (!push_pair(w, l->prev, c.left) || !push_pair(w, c.left, l->next))
            goto nomem;
    }
    for (int32_t i = 0; i >= 0; i = w->sym[i].next) {
        int32_t id = w->sym[i].id;
        if (id < 0)
            id = gl_tokenizer_unk(b->t);
        if (id < 0)
            return gl_fail(err, GL_ERR_UNSUPPORTED,
                           "byte 0x%02X has no token and the "
                           "vocabulary has no unknown token",
                           p[i]);
        if (s->n < s->cap)
            s->out[s->n] = id;
        s->n++;
    }
    return GL_OK;
nomem:
    return gl_fail(err, GL_ERR_NOMEM, "out of memory tokenizing a %zu-byte word", n);
}

gl_status gl_bpe_encode(const gl_bpe *b, const char *text, size_t len, gl_tok_sink *s,
                        gl_error *err)
{
    if (len >= UINT32_MAX)
        return gl_fail(err, GL_ERR_ARG, "text of %zu bytes is too long to tokenize", len);
    gl_status st = GL_OK;
    unit *u = malloc((len + 1) * sizeof *u);
    work w = { .b = b, .sym = malloc((len + 1) * sizeof *w.sym) };
    if (!u || !w.sym) {
        st = gl_fail(err, GL_ERR_NOMEM, "out of memory tokenizing %zu bytes", len);
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        const size_t k = utf8_decode((const unsigned char *)text + i, len - i, &cp);
        u[n++] = (unit){ (uint32_t)i, (uint8_t)(cp == UINT32_MAX ? 0 : char_flags(cp)) };
        i += k;
    }
    u[n] = (unit){ (uint32_t)len, 0 }; /* sentinel: where the last unit ends */

    for (size_t i = 0; i < n;) {
        size_t k = 0;
        for (const split_rule *r = b->pre->rules; !k && r->op != SPLIT_END; r++)
            k = match_rule(r, u, i, n, text);
        if (!k)
            k = 1; /* nothing matches: the code point alone */
        const size_t off = u[i].off;
        if ((st = encode_piece(&w, (const unsigned char *)text + off, u[i + k].off - off, s, err)))
            goto done;
        i += k;
    }
done:
    free(u);
    free(w.sym);
    free(w.heap);
    return st;
}
