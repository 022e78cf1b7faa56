/* Errors are values: every fallible internal call fills a gl_error. */
#ifndef GENLOOP_SRC_ERROR_H
#define GENLOOP_SRC_ERROR_H

#include "genloop.h"

#if defined(__GNUC__)
#define GL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GL_PRINTF(a, b)
#endif

/* Sets err (if non-NULL) and returns code, so callers can `return gl_fail(...)`. */
gl_status gl_fail(gl_error *err, gl_status code, const char *fmt, ...) GL_PRINTF(3, 4);

#endif
