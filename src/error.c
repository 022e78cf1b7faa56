#include "error.h"

#include <stdarg.h>
#include <stdio.h>

gl_status gl_fail(gl_error *err, gl_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}
