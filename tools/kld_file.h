/* The KL-divergence base file of genloop perplexity: the log-probabilities
 * of every scored token, as one model computed them on one text.
 *
 * Layout, little-endian:
 *   magic "GLKLDBAS", then uint32 version (1), row type (0: F32, 1: F16),
 *   n_vocab, n_ctx (window), first (index of the first scored logit row in
 *   a window), n_scored (rows scored per window), n_windows, name_len; the
 *   base model's general.name (name_len bytes, zero-padded to 4);
 *   the token ids of every window as evaluated (BOS in front where the
 *   vocabulary asks), n_windows x n_ctx int32;
 *   then for window w, row j the full log-softmax of the logits at window
 *   position first + j (the prediction of token first + j + 1):
 *   n_windows x n_scored x n_vocab values of the row type.
 * A reader checks the size is exactly what the header implies, so a
 * truncated or extended file is refused before anything is compared. */
#ifndef GENLOOP_TOOLS_KLD_FILE_H
#define GENLOOP_TOOLS_KLD_FILE_H

#include <stdint.h>
#include <stdio.h>

#include "genloop.h"

#define KLD_MAGIC   "GLKLDBAS"
#define KLD_VERSION 1
enum { KLD_ROW_F32 = 0, KLD_ROW_F16 = 1 };

typedef struct kld_file {
    FILE *f;
    uint32_t row_type, n_vocab, n_ctx, first, n_scored, n_windows;
    char name[256];
    uint64_t ids_off, rows_off; /* file offsets */
    void *row_buf;              /* one stored row */
} kld_file;

/* Writing: the header (n_windows patched by kld_finish_ids), the ids of
 * each window, then every row in order. */
gl_status kld_create(kld_file *k, const char *path, uint32_t row_type, uint32_t n_vocab,
                     uint32_t n_ctx, uint32_t first, uint32_t n_scored, const char *name,
                     gl_error *err);
gl_status kld_write_ids(kld_file *k, const int32_t *ids, gl_error *err);
gl_status kld_finish_ids(kld_file *k, gl_error *err);
gl_status kld_write_row(kld_file *k, const float *logp, gl_error *err);
gl_status kld_close_written(kld_file *k, gl_error *err);

/* Reading: checks magic, version, sizes and the file length. */
gl_status kld_open(kld_file *k, const char *path, gl_error *err);
gl_status kld_read_ids(kld_file *k, uint32_t w, int32_t *ids, gl_error *err);
gl_status kld_read_row(kld_file *k, uint32_t w, uint32_t j, float *logp, gl_error *err);
void kld_close(kld_file *k);

/* The value a stored row gives back for x (identity for F32). */
float kld_round(uint32_t row_type, float x);

#endif
