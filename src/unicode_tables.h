/* Unicode classes the BPE pre-tokenizers split on. The table is generated
 * (tools/gen_unicode_tables.py writes src/unicode_tables.c, committed), so
 * the build needs no Unicode data and no generator. */
#ifndef GENLOOP_SRC_UNICODE_TABLES_H
#define GENLOOP_SRC_UNICODE_TABLES_H

#include <stdint.h>

enum {
    GL_UCD_LETTER = 1,  /* general category L*: \p{L}           */
    GL_UCD_NUMBER = 2,  /* general category N*: \p{N}           */
    GL_UCD_SPACE = 4,   /* White_Space property: \s             */
    GL_UCD_PUNCT = 8,   /* general category P*: \p{P}           */
    GL_UCD_SYMBOL = 16, /* general category S*: \p{S}          */
    GL_UCD_MARK = 32,   /* general category M*: \p{M}           */
};

typedef struct gl_ucd_range {
    uint32_t lo, hi; /* inclusive */
    uint8_t flags;   /* GL_UCD_* */
} gl_ucd_range;

/* Sorted, disjoint; code points outside every range have no class. */
extern const gl_ucd_range gl_ucd_ranges[];
extern const int gl_ucd_n_ranges;
extern const char gl_ucd_version[];

#endif
