#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "genloop.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("genloop: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_model_warnings(const gl_model *m)
{
    const char *w[2] = { gl_model_tokenizer_warning(m), gl_model_load_warning(m) };
    for (int i = 0; i < 2; i++)
        if (w[i])
            fprintf(stderr, "genloop: warning: %s\n", w[i]);
}

bool cli_int(const char *flag, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno == ERANGE) {
        cli_error("%s expects an integer, got '%s'", flag, s);
        return false;
    }
    if (v < lo || v > hi) {
        cli_error("%s %lld is out of range [%lld, %lld]", flag, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

bool cli_u64(const char *flag, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s == '-') {
        cli_error("%s expects a non-negative integer, got '%s'", flag, s);
        return false;
    }
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *end || errno == ERANGE) {
        cli_error("%s expects a non-negative integer, got '%s'", flag, s);
        return false;
    }
    *out = v;
    return true;
}

bool cli_float(const char *flag, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno == ERANGE || !isfinite(v)) {
        cli_error("%s expects a number, got '%s'", flag, s);
        return false;
    }
    if (v < lo || v > hi) {
        cli_error("%s %g is out of range [%g, %g]", flag, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

char *read_all(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}
