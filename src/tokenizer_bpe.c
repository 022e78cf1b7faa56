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
#include <stdio.h>
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
    C_PUNCT = GL_UCD_PUNCT,
    C_SYMBOL = GL_UCD_SYMBOL,
    C_MARK = GL_UCD_MARK,
    C_SP = 64, /* U+0020 itself */
    C_CR = 128,
    C_LF = 256,
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
    else if (cp == '~')
        f &= ~(unsigned)C_SYMBOL; /* the reference's \p{S} leaves out '~' (Sm) */
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

/* Explicit code point sets of the DeepSeek expressions, sorted. The
 * reference matches them after replacing non-ASCII white space by U+000B,
 * so a white-space code point is never in them (see in_ranges). */
typedef struct cp_range {
    uint32_t lo, hi;
} cp_range;

/* DeepSeek LLM's letter set (cased scripts: Latin, Greek, Cyrillic, ...) */
static const cp_range dsllm_letters[] = {
    { 0x0041, 0x005A },   { 0x0061, 0x007A },   { 0x00B5, 0x00B5 },   { 0x00C0, 0x00D6 },
    { 0x00D8, 0x00F6 },   { 0x00F8, 0x01BA },   { 0x01BC, 0x01BF },   { 0x01C4, 0x0293 },
    { 0x0295, 0x02AF },   { 0x0370, 0x0373 },   { 0x0376, 0x0377 },   { 0x037B, 0x037D },
    { 0x037F, 0x037F },   { 0x0386, 0x0386 },   { 0x0388, 0x038A },   { 0x038C, 0x038C },
    { 0x038E, 0x03A1 },   { 0x03A3, 0x03F5 },   { 0x03F7, 0x0481 },   { 0x048A, 0x052F },
    { 0x0531, 0x0556 },   { 0x10A0, 0x10C5 },   { 0x13A0, 0x13F5 },   { 0x13F8, 0x13FD },
    { 0x1C90, 0x1CBA },   { 0x1CBD, 0x1CBF },   { 0x1D00, 0x1D2B },   { 0x1D6B, 0x1D77 },
    { 0x1D79, 0x1D9A },   { 0x1E00, 0x1F15 },   { 0x1F18, 0x1F1D },   { 0x1F20, 0x1F45 },
    { 0x1F48, 0x1F4D },   { 0x1F50, 0x1F57 },   { 0x1F59, 0x1F59 },   { 0x1F5B, 0x1F5B },
    { 0x1F5D, 0x1F5D },   { 0x1F5F, 0x1F7D },   { 0x1F80, 0x1FB4 },   { 0x1FB6, 0x1FBC },
    { 0x1FBE, 0x1FBE },   { 0x1FC2, 0x1FC4 },   { 0x1FC6, 0x1FCC },   { 0x1FD0, 0x1FD3 },
    { 0x1FD6, 0x1FDB },   { 0x1FE0, 0x1FEC },   { 0x1FF2, 0x1FF4 },   { 0x1FF6, 0x1FFC },
    { 0x2102, 0x2102 },   { 0x2107, 0x2107 },   { 0x210A, 0x2113 },   { 0x2115, 0x2115 },
    { 0x2119, 0x211D },   { 0x2124, 0x2124 },   { 0x2126, 0x2126 },   { 0x2128, 0x2128 },
    { 0x212A, 0x212D },   { 0x212F, 0x2134 },   { 0x2139, 0x2139 },   { 0x213C, 0x213F },
    { 0x2145, 0x2149 },   { 0x214E, 0x214E },   { 0x2183, 0x2184 },   { 0x2C00, 0x2C7B },
    { 0x2C7E, 0x2CE4 },   { 0x2CEB, 0x2CEE },   { 0x2CF2, 0x2CF3 },   { 0xA640, 0xA66D },
    { 0xA680, 0xA69B },   { 0xA722, 0xA76F },   { 0xA771, 0xA787 },   { 0xA78B, 0xA78E },
    { 0xAB70, 0xABBF },   { 0xFB00, 0xFB06 },   { 0xFB13, 0xFB17 },   { 0xFF21, 0xFF3A },
    { 0xFF41, 0xFF5A },   { 0x10400, 0x1044F }, { 0x104B0, 0x104D3 }, { 0x104D8, 0x104FB },
    { 0x10C80, 0x10CB2 }, { 0x10CC0, 0x10CF2 }, { 0x118A0, 0x118DF }, { 0x1E900, 0x1E943 },
};
/* [!-/:-~！-／：-～‘-‟　-。] (note ':'-'~' spans the ASCII letters) */
static const cp_range dsllm_punct[] = {
    { 0x0021, 0x002F }, { 0x003A, 0x007E }, { 0x2018, 0x201F },
    { 0x3000, 0x3002 }, { 0xFF01, 0xFF0F }, { 0xFF1A, 0xFF5E },
};
/* [一-龥ࠀ-一가-퟿] */
static const cp_range cjk_hangul[] = {
    { 0x0800, 0x9FA5 },
    { 0xAC00, 0xD7FF },
};
/* [一-龥぀-ゟ゠-ヿ] */
static const cp_range cjk_kana[] = {
    { 0x3040, 0x30FF },
    { 0x4E00, 0x9FA5 },
};
/* ASCII symbols Falcon's first expression adds to \p{P}: [$+<=>^~|`] */
static const cp_range falcon_symbols[] = {
    { '$', '$' }, { '+', '+' }, { '<', '>' }, { '^', '^' },
    { '`', '`' }, { '|', '|' }, { '~', '~' },
};
/* The default expression's set: the same without '`' */
static const cp_range default_symbols[] = {
    { '$', '$' }, { '+', '+' }, { '<', '>' }, { '^', '^' }, { '|', '|' }, { '~', '~' },
};
static const cp_range ascii_digits[] = { { '0', '9' } };
static const cp_range slash[] = { { '/', '/' } };
static const cp_range ascii_letters[] = { { 'A', 'Z' }, { 'a', 'z' } };
/* DeepSeek V3's [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]: all ASCII punctuation */
static const cp_range ascii_punct[] = {
    { 0x21, 0x2F },
    { 0x3A, 0x40 },
    { 0x5B, 0x60 },
    { 0x7B, 0x7E },
};

#define RANGES(r) .ranges = (r), .n_ranges = (int)(sizeof(r) / sizeof((r)[0]))

/* A class of code points: those with any of `flags` or in `ranges`, or
 * with none of them when negated. An invalid byte has no flags. */
typedef struct char_class {
    uint16_t flags;
    bool neg;
    const cp_range *ranges;
    int n_ranges;
} char_class;

typedef enum split_op {
    SPLIT_END = 0,
    /* an apostrophe and one of `suffixes`: 's|'t|'re|... */
    SPLIT_CONTRACTION,
    /* optionally (or necessarily) one code point of `prefix`, then
     * min_run..max_run of `run` (max 0: unbounded), then any number of
     * `suffix`: ` ?\p{L}+`, `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n]*` */
    SPLIT_RUN,
    /* white space not followed by a non-space: `\s+(?!\S)` */
    SPLIT_SPACE_NOT_BEFORE_TEXT,
    /* white space up to and including its last line break: `\s*[\r\n]+` */
    SPLIT_SPACE_TO_NEWLINE,
    /* white space that runs to the end of the piece: `\s+$` */
    SPLIT_SPACE_AT_END,
    /* Tekken's cased words: an optional `prefix`, then
     * (?=\p{L})[^a-z])*((?=\p{L})[^A-Z])+ or, failing that,
     * ((?=\p{L})[^a-z])+((?=\p{L})[^A-Z])*: "Hello", "HELLO", "World" */
    SPLIT_CASED_WORD,
} split_op;

typedef struct split_rule {
    split_op op;
    char_class prefix; /* empty: no prefix */
    bool prefix_required;
    char_class run;
    int min_run, max_run;        /* min 0 means 1 */
    char_class suffix;           /* empty: none */
    const char *const *suffixes; /* SPLIT_CONTRACTION: NULL-terminated */
    bool ignore_case;
} split_rule;

/* One regular expression of the reference: an alternation of rules. Each
 * expression refines the pieces of the one before: within every piece, at
 * each position the first rule that matches takes its match (as a regex
 * alternation with greedy quantifiers does here), and the code points no
 * rule matches between two matches stay together as one piece. */
typedef struct split_stage {
    split_rule rules[8]; /* tried in order; ends at SPLIT_END */
} split_stage;

typedef struct pretokenizer {
    const char *names[8];  /* tokenizer.ggml.pre values, NULL-terminated */
    split_stage stages[6]; /* applied in order; ends at an empty stage */
    bool ignore_merges;    /* a piece that is a token is taken whole */
    bool add_bos;          /* prompts start with BOS unless the file says */
} pretokenizer;

static const char *const english_contractions[] = { "s", "t", "re", "ve", "m", "ll", "d", NULL };

#define CLS(f)                                                                                     \
    {                                                                                              \
        .flags = (f)                                                                               \
    }
#define NOT(f)                                                                                     \
    {                                                                                              \
        .flags = (f), .neg = true                                                                  \
    }

/* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
#define GPT2_STAGE                                                                                 \
    {                                                                                              \
        .rules = {                                                                                 \
            { .op = SPLIT_CONTRACTION, .suffixes = english_contractions },                         \
            { .op = SPLIT_RUN, .prefix = CLS(C_SP), .run = CLS(C_LETTER) },                        \
            { .op = SPLIT_RUN, .prefix = CLS(C_SP), .run = CLS(C_NUMBER) },                        \
            { .op = SPLIT_RUN, .prefix = CLS(C_SP), .run = NOT(C_SPACE | C_LETTER | C_NUMBER) },   \
            { .op = SPLIT_SPACE_NOT_BEFORE_TEXT },                                                 \
            { .op = SPLIT_RUN, .run = CLS(C_SPACE) },                                              \
        }                                                                                          \
    }

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,MAXN}|
 * ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
#define LLAMA3_STAGE(maxn)                                                                         \
    {                                                                                              \
        .rules = {                                                                                 \
            { .op = SPLIT_CONTRACTION, .suffixes = english_contractions, .ignore_case = true },    \
            { .op = SPLIT_RUN,                                                                     \
              .prefix = NOT(C_CR | C_LF | C_LETTER | C_NUMBER),                                    \
              .run = CLS(C_LETTER) },                                                              \
            { .op = SPLIT_RUN, .run = CLS(C_NUMBER), .max_run = (maxn) },                          \
            { .op = SPLIT_RUN,                                                                     \
              .prefix = CLS(C_SP),                                                                 \
              .run = NOT(C_SPACE | C_LETTER | C_NUMBER),                                           \
              .suffix = CLS(C_CR | C_LF) },                                                        \
            { .op = SPLIT_SPACE_TO_NEWLINE },                                                      \
            { .op = SPLIT_SPACE_NOT_BEFORE_TEXT },                                                 \
            { .op = SPLIT_RUN, .run = CLS(C_SPACE) },                                              \
        }                                                                                          \
    }

#define ONE_RUN(...)                                                                               \
    {                                                                                              \
        .rules = { { .op = SPLIT_RUN, __VA_ARGS__ } }                                              \
    }

/* The split rules of each tokenizer.ggml.pre value, from the regular
 * expressions the reference implementation uses for it. The first entry is
 * the default (key absent, "default", or a name we do not know). */
static const pretokenizer pretokenizers[] = {
    {
        .names = { "default", NULL },
        .stages = {
            ONE_RUN(.run = { .flags = C_PUNCT, RANGES(default_symbols) }),
            GPT2_STAGE,
            ONE_RUN(.run = CLS(C_NUMBER)),
            ONE_RUN(.run = { RANGES(ascii_digits) }, .min_run = 3, .max_run = 3),
        },
    },
    {
        .names = { "gpt-2", "gpt2", "mpt", "olmo", "jais", "phi-2", "roberta-bpe", NULL },
        .stages = { GPT2_STAGE },
    },
    {
        .names = { "llama-bpe", "llama3", "llama-v3", "falcon3", NULL },
        .stages = { LLAMA3_STAGE(3) },
        .ignore_merges = true,
        .add_bos = true,
    },
    {
        .names = { "dbrx", "smaug-bpe", "chatglm-bpe", NULL },
        .stages = { LLAMA3_STAGE(3) },
    },
    {
        .names = { "qwen2", "deepseek-r1-qwen", "megrez", "stablelm2", NULL },
        .stages = { LLAMA3_STAGE(1) },
    },
    {
        .names = { "starcoder", "refact", "smollm", "command-r", "codeshell", "exaone",
                   "minerva-7b", NULL },
        .stages = { ONE_RUN(.run = CLS(C_NUMBER), .max_run = 1), GPT2_STAGE },
    },
    {
        .names = { "falcon", NULL },
        .stages = {
            ONE_RUN(.run = { .flags = C_PUNCT, RANGES(falcon_symbols) }),
            GPT2_STAGE,
            ONE_RUN(.run = { RANGES(ascii_digits) }, .min_run = 3, .max_run = 3),
        },
    },
    {
        .names = { "deepseek-llm", NULL },
        .stages = {
            ONE_RUN(.run = CLS(C_CR | C_LF), .max_run = 1),
            ONE_RUN(.prefix = CLS(C_SPACE), .run = { RANGES(dsllm_letters) }),
            ONE_RUN(.prefix = CLS(C_SPACE), .run = { RANGES(dsllm_punct) }),
            { .rules = { { .op = SPLIT_SPACE_AT_END } } },
            ONE_RUN(.run = { RANGES(cjk_hangul) }),
            ONE_RUN(.run = CLS(C_NUMBER)),
        },
    },
    {
        .names = { "deepseek-coder", NULL },
        .stages = {
            ONE_RUN(.run = CLS(C_CR | C_LF), .max_run = 1),
            ONE_RUN(.prefix = CLS(C_SPACE), .run = CLS(C_LETTER)),
            ONE_RUN(.prefix = CLS(C_SPACE), .run = CLS(C_PUNCT)),
            ONE_RUN(.run = { RANGES(cjk_hangul) }),
            ONE_RUN(.run = CLS(C_NUMBER), .max_run = 1),
        },
    },
    {
        .names = { "deepseek-v3", NULL },
        .stages = {
            ONE_RUN(.run = CLS(C_NUMBER), .max_run = 3),
            ONE_RUN(.run = { RANGES(cjk_kana) }),
            { .rules = {
                { .op = SPLIT_RUN, .prefix = { RANGES(ascii_punct) }, .prefix_required = true,
                  .run = { RANGES(ascii_letters) } },
                { .op = SPLIT_RUN, .prefix = NOT(C_CR | C_LF | C_LETTER | C_PUNCT | C_SYMBOL),
                  .run = CLS(C_LETTER | C_MARK) },
                { .op = SPLIT_RUN, .prefix = CLS(C_SP), .run = CLS(C_PUNCT | C_SYMBOL),
                  .suffix = CLS(C_CR | C_LF) },
                { .op = SPLIT_SPACE_TO_NEWLINE },
                { .op = SPLIT_SPACE_NOT_BEFORE_TEXT },
                { .op = SPLIT_RUN, .run = CLS(C_SPACE) },
            } },
        },
    },
    {
        /* Mistral Nemo: [^\r\n\p{L}\p{N}]?<cased word>|\p{N}|
         *  ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
        .names = { "tekken", NULL },
        .stages = { { .rules = {
            { .op = SPLIT_CASED_WORD, .prefix = NOT(C_CR | C_LF | C_LETTER | C_NUMBER) },
            { .op = SPLIT_RUN, .run = CLS(C_NUMBER), .max_run = 1 },
            { .op = SPLIT_RUN, .prefix = CLS(C_SP), .run = NOT(C_SPACE | C_LETTER | C_NUMBER),
              .suffix = { .flags = C_CR | C_LF, RANGES(slash) } },
            { .op = SPLIT_SPACE_TO_NEWLINE },
            { .op = SPLIT_SPACE_NOT_BEFORE_TEXT },
            { .op = SPLIT_RUN, .run = CLS(C_SPACE) },
        } } },
        .ignore_merges = true,
        .add_bos = true,
    },
};

/* One code point (or invalid byte) of the text being split. */
typedef struct unit {
    uint32_t off; /* byte offset; the unit ends where the next begins */
    uint32_t cp;  /* UINT32_MAX: an invalid byte */
    uint16_t flags;
} unit;

static bool in_ranges(const char_class *c, const unit *u)
{
    /* std::wregex in the reference sees non-ASCII white space as U+000B */
    const uint32_t cp = (u->flags & C_SPACE) && u->cp > 0x7F ? 0x0B : u->cp;
    int lo = 0, hi = c->n_ranges - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        if (cp < c->ranges[mid].lo)
            hi = mid - 1;
        else if (cp > c->ranges[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

static bool in_class(const char_class *c, const unit *u)
{
    bool in = (u->flags & c->flags) != 0 || (c->n_ranges && in_ranges(c, u));
    return in != c->neg;
}

static bool class_empty(const char_class *c)
{
    return !c->flags && !c->n_ranges;
}

static int lower_ascii(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* Length in units of the match of r at unit i of a piece ending at unit n,
 * 0 for none. */
static size_t match_rule(const split_rule *r, const unit *u, size_t i, size_t n, const char *text)
{
    switch (r->op) {
    case SPLIT_CONTRACTION: {
        if (u[i].cp != '\'')
            return 0;
        for (const char *const *s = r->suffixes; *s; s++) {
            size_t k = strlen(*s), j = 0;
            for (; j < k && i + 1 + j < n; j++) {
                const uint32_t cp = u[i + 1 + j].cp;
                int c = cp < 0x80 ? (int)cp : -1;
                if ((r->ignore_case ? lower_ascii(c) : c) != (*s)[j])
                    break;
            }
            if (j == k)
                return k + 1; /* alternation order: the first suffix that fits */
        }
        return 0;
    }
    case SPLIT_RUN: {
        size_t start = i;
        if (!class_empty(&r->prefix) && in_class(&r->prefix, &u[i]) && i + 1 < n &&
            in_class(&r->run, &u[i + 1]))
            start = i + 1;
        else if (r->prefix_required)
            return 0;
        size_t j = start;
        while (j < n && in_class(&r->run, &u[j]) &&
               (r->max_run <= 0 || j - start < (size_t)r->max_run))
            j++;
        if (j - start < (size_t)(r->min_run > 0 ? r->min_run : 1))
            return 0;
        if (!class_empty(&r->suffix))
            while (j < n && in_class(&r->suffix, &u[j]))
                j++;
        return j - i;
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
    case SPLIT_SPACE_TO_NEWLINE: {
        size_t j = i, end = 0;
        for (; j < n && (u[j].flags & C_SPACE); j++)
            if (u[j].flags & (C_CR | C_LF))
                end = j + 1;
        return end ? end - i : 0;
    }
    case SPLIT_CASED_WORD: {
        size_t st = i;
        if (in_class(&r->prefix, &u[i]) && i + 1 < n && (u[i + 1].flags & C_LETTER))
            st = i + 1;
            /* upper: letters but a-z; lower: letters but A-Z (non-ASCII letters
             * are both) */
#define UPPERISH(x) (((x).flags & C_LETTER) && !((x).cp >= 'a' && (x).cp <= 'z'))
#define LOWERISH(x) (((x).flags & C_LETTER) && !((x).cp >= 'A' && (x).cp <= 'Z'))
        size_t a = 0;
        while (st + a < n && UPPERISH(u[st + a]))
            a++;
        /* upper* lower+: the longest upper run that a lower run can follow */
        for (size_t k = a + 1; k-- > 0;) {
            if (st + k < n && LOWERISH(u[st + k])) {
                size_t j = st + k;
                while (j < n && LOWERISH(u[j]))
                    j++;
                return j - i;
            }
        }
        if (a == 0)
            return 0;
        /* upper+ lower* */
        size_t j = st + a;
        while (j < n && LOWERISH(u[j]))
            j++;
        return j - i;
#undef UPPERISH
#undef LOWERISH
    }
    case SPLIT_SPACE_AT_END: {
        size_t j = i;
        while (j < n && (u[j].flags & C_SPACE))
            j++;
        return j > i && j == n ? j - i : 0;
    }
    case SPLIT_END: break;
    }
    (void)text;
    return 0;
}

/* Refines the pieces (unit boundaries cut[0..*n_cut], cut[0] = 0) by one
 * stage, into out; returns the new count of pieces. */
static size_t split_stage_apply(const split_stage *st, const unit *u, const uint32_t *cut,
                                size_t n_piece, uint32_t *out, const char *text)
{
    size_t m = 0;
    out[0] = 0;
    for (size_t p = 0; p < n_piece; p++) {
        const size_t end = cut[p + 1];
        size_t i = cut[p], gap = i;
        while (i < end) {
            size_t k = 0;
            for (const split_rule *r = st->rules; !k && r->op != SPLIT_END; r++)
                k = match_rule(r, u, i, end, text);
            if (!k) {
                i++;
                continue;
            }
            if (gap < i)
                out[++m] = (uint32_t)i;
            i += k;
            out[++m] = (uint32_t)i;
            gap = i;
        }
        if (gap < end)
            out[++m] = (uint32_t)end;
    }
    return m;
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
    char warning[200];     /* "" or why the split rules are a fallback */
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
    char warning[200] = "";
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
            /* Tokenizing with the wrong rules degrades the text quietly, so
             * say so; the default rules are the reference's choice too. */
            char name[48];
            size_t k = 0;
            for (uint64_t i = 0; i < s.len && k + 1 < sizeof name; i++)
                name[k++] = s.ptr[i] >= 0x20 && s.ptr[i] < 0x7f ? s.ptr[i] : '?';
            name[k] = '\0';
            snprintf(warning, sizeof warning,
                     "unknown BPE pre-tokenizer '%s' (tokenizer.ggml.pre): using the default "
                     "split rules, tokens may differ from the model's",
                     name);
            pre = &pretokenizers[0];
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
    memcpy(b->warning, warning, sizeof warning);
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

bool gl_bpe_default_add_bos(const gl_bpe *b)
{
    return b && b->pre->add_bos;
}

const char *gl_bpe_warning(const gl_bpe *b)
{
    return b && b->warning[0] ? b->warning : NULL;
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

/* The whole piece as one token when the vocabulary has it (pre-tokenizers
 * with ignore_merges), else -1. map holds room for 2 bytes per byte. */
static int32_t whole_piece(const gl_bpe *b, const unsigned char *p, size_t n, char *map)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += put_utf8(map + w, byte_stand_in(p[i]));
    return gl_tokenizer_find(b->t, map, w);
}

/* Decodes text into units (u: len + 1 entries) and cuts it into pieces by
 * every stage of pre; the piece boundaries (unit indices, count + 1 of
 * them) end up in *cut (*cut and *cut2 hold len + 2 entries and may be
 * swapped). Returns the number of pieces. */
static size_t split_text(const pretokenizer *pre, const char *text, size_t len, unit *u,
                         uint32_t **cut, uint32_t **cut2)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        const size_t k = utf8_decode((const unsigned char *)text + i, len - i, &cp);
        u[n++] = (unit){ (uint32_t)i, cp, (uint16_t)(cp == UINT32_MAX ? 0 : char_flags(cp)) };
        i += k;
    }
    u[n] = (unit){ (uint32_t)len, UINT32_MAX, 0 }; /* sentinel: where the last unit ends */
    (*cut)[0] = 0;
    (*cut)[1] = (uint32_t)n;
    size_t n_piece = n ? 1 : 0;
    const size_t n_stages = sizeof pre->stages / sizeof pre->stages[0];
    for (size_t k = 0; k < n_stages && pre->stages[k].rules[0].op != SPLIT_END; k++) {
        n_piece = split_stage_apply(&pre->stages[k], u, *cut, n_piece, *cut2, text);
        uint32_t *t = *cut;
        *cut = *cut2;
        *cut2 = t;
    }
    return n_piece;
}

int gl_bpe_split(const gl_bpe *b, const char *text, size_t len, size_t *ends, int cap)
{
    if (!b || len >= UINT32_MAX / 2)
        return -1;
    unit *u = malloc((len + 1) * sizeof *u);
    uint32_t *cut = malloc((len + 2) * sizeof *cut), *cut2 = malloc((len + 2) * sizeof *cut2);
    int n = -1;
    if (u && cut && cut2) {
        const size_t n_piece = split_text(b->pre, text, len, u, &cut, &cut2);
        for (size_t p = 0; p < n_piece && (int)p < cap; p++)
            ends[p] = u[cut[p + 1]].off;
        n = (int)n_piece;
    }
    free(u);
    free(cut);
    free(cut2);
    return n;
}

gl_status gl_bpe_encode(const gl_bpe *b, const char *text, size_t len, gl_tok_sink *s,
                        gl_error *err)
{
    if (len >= UINT32_MAX / 2)
        return gl_fail(err, GL_ERR_ARG, "text of %zu bytes is too long to tokenize", len);
    gl_status st = GL_OK;
    unit *u = malloc((len + 1) * sizeof *u);
    uint32_t *cut = malloc((len + 2) * sizeof *cut), *cut2 = malloc((len + 2) * sizeof *cut2);
    char *map = b->pre->ignore_merges ? malloc(2 * len + 1) : NULL;
    work w = { .b = b, .sym = malloc((len + 1) * sizeof *w.sym) };
    if (!u || !w.sym || !cut || !cut2 || (b->pre->ignore_merges && !map)) {
        st = gl_fail(err, GL_ERR_NOMEM, "out of memory tokenizing %zu bytes", len);
        goto done;
    }
    const size_t n_piece = split_text(b->pre, text, len, u, &cut, &cut2);
    for (size_t p = 0; p < n_piece; p++) {
        const size_t off = u[cut[p]].off, nb = u[cut[p + 1]].off - off;
        const unsigned char *piece = (const unsigned char *)text + off;
        if (map) {
            const int32_t id = whole_piece(b, piece, nb, map);
            if (id >= 0) {
                if (s->n < s->cap)
                    s->out[s->n] = id;
                s->n++;
                continue;
            }
        }
        if ((st = encode_piece(&w, piece, nb, s, err)))
            goto done;
    }
done:
    free(u);
    free(cut);
    free(cut2);
    free(map);
    free(w.sym);
    free(w.heap);
    return st;
}
