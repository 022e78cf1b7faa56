/* Helpers shared by the fuzz targets: the vocabularies the tokenizer
 * targets run against, a model loaded from bytes through a memfd, and a
 * UTF-8 validator for detokenizer output. */
#ifndef GENLOOP_FUZZ_COMMON_H
#define GENLOOP_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "genloop.h"

/* Loads bytes as a model file (through an anonymous memfd, so the real
 * mmap path runs). */
gl_status fz_load_bytes(gl_model **out, const uint8_t *data, size_t size, bool vocab_only,
                        gl_error *err);

/* The vocabularies: the tiny in-memory model's, then those of ../shared
 * (GENLOOP_SHARED overrides) that this build can load. At least one. */
int fz_vocabs(gl_model ***out);

bool fz_utf8_valid(const unsigned char *s, size_t n);

/* Aborts with a message: the fuzzer reports it as a crash. */
void fz_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
