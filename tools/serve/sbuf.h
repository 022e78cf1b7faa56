/* A growable byte buffer for building HTTP responses and JSON bodies. An
 * allocation failure sets oom and turns later appends into no-ops, so callers
 * check once at the end instead of after every append. */
#ifndef GENLOOP_SERVE_SBUF_H
#define GENLOOP_SERVE_SBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

void sb_put(sbuf *b, const void *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string literal, quotes included; invalid UTF-8 becomes U+FFFD
 * so the output is always valid JSON. */
void sb_json_str(sbuf *b, const char *s, size_t n);
/* Drops the first n bytes (what was sent). */
void sb_consume(sbuf *b, size_t n);
void sb_free(sbuf *b);

#endif
