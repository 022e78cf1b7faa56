/* Shared helpers of the genloop command-line program. */
#ifndef GENLOOP_TOOLS_CLI_H
#define GENLOOP_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* Strict number parsing: the whole string must be a number in [lo, hi].
 * On failure prints "genloop: error: <flag> ..." and returns false. */
bool cli_int(const char *flag, const char *s, long long lo, long long hi, long long *out);
bool cli_float(const char *flag, const char *s, double lo, double hi, double *out);
bool cli_u64(const char *flag, const char *s, uint64_t *out);

/* Prints "genloop: error: ..." to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints a loaded model's warnings (tokenizer, load) as "genloop: warning:
 * ..." to stderr. */
struct gl_model;
void cli_model_warnings(const struct gl_model *m);

/* Writes s as a JSON string literal (quotes included). Invalid UTF-8 bytes
 * become U+FFFD so the output is always valid JSON. */
void json_write_str(FILE *f, const char *s, size_t len);

/* Subcommands in their own files. */
int cmd_synth(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_template(int argc, char **argv);
int cmd_chat(int argc, char **argv);

/* Ctrl-C: the handler only sets a flag that generation loops poll. */
void cli_sigint_install(void);
bool cli_sigint_pending(void);
void cli_sigint_clear(void);
int cmd_perplexity(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_serve(int argc, char **argv); /* tools/serve/ */

/* Reads a whole stream into a NUL-terminated heap buffer. */
char *read_all(FILE *f, size_t *len);

#endif
