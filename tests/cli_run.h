/* Running the genloop binary from tests: argv, stdin, exit status, captured
 * stdout and stderr. */
#ifndef GENLOOP_TESTS_CLI_RUN_H
#define GENLOOP_TESTS_CLI_RUN_H

#include <stddef.h>

typedef struct run_out {
    int status; /* exit status, or 128 + signal */
    char out[1 << 16];
    char err[8192];
} run_out;

/* The binary under test: $GENLOOP_BIN or build/genloop. */
const char *cli_bin(void);

/* Runs genloop with argv (NULL-terminated, without the program name) and
 * input_len bytes of input on stdin (input may be NULL); a run is killed
 * after 60 s so a hang fails instead of stalling. Returns 0, or -1 when the
 * run could not be set up. */
int cli_run(run_out *r, const char *input, size_t input_len, const char *const *argv);

/* RUN(&r, "stdin text" or NULL, "arg", ...) */
#define RUN(r, input, ...)                                                                         \
    do {                                                                                           \
        const char *const a_[] = { __VA_ARGS__, NULL };                                            \
        const char *in_ = (input);                                                                 \
        cr_assert_eq(cli_run(r, in_, in_ ? strlen(in_) : 0, a_), 0);                               \
    } while (0)
/* RUN_IN(&r, bytes, length, "arg", ...) for input with NULs */
#define RUN_IN(r, in, len, ...)                                                                    \
    do {                                                                                           \
        const char *const a_[] = { __VA_ARGS__, NULL };                                            \
        cr_assert_eq(cli_run(r, in, len, a_), 0);                                                  \
    } while (0)

#endif
