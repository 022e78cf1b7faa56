/* Reading and writing the KL-divergence base file (layout in kld_file.h).
 * The file is untrusted on reading: every count is bounded and the file
 * length must match the header exactly. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "half.h"
#include "kld_file.h"

#define HEADER_WORDS 8

static size_t elem_size(uint32_t row_type)
{
    return row_type == KLD_ROW_F16 ? 2 : 4;
}

float kld_round(uint32_t row_type, float x)
{
    return row_type == KLD_ROW_F16 ? gl_f16_to_f32(gl_f32_to_f16(x)) : x;
}

static uint64_t header_bytes(size_t name_len)
{
    return 8 + 4 * HEADER_WORDS + (name_len + 3) / 4 * 4;
}

static gl_status io_fail(gl_error *err, const char *what)
{
    return gl_fail(err, GL_ERR_IO, "%s the KL-divergence base file failed: %s", what,
                   strerror(errno));
}

static gl_status write_header(kld_file *k, gl_error *err)
{
    const size_t name_len = strlen(k->name);
    const uint32_t w[HEADER_WORDS] = { KLD_VERSION, k->row_type, k->n_vocab,   k->n_ctx,
                                       k->first,    k->n_scored, k->n_windows, (uint32_t)name_len };
    char name[sizeof k->name + 4] = { 0 };
    memcpy(name, k->name, name_len);
    if (fseeko(k->f, 0, SEEK_SET) || fwrite(KLD_MAGIC, 1, 8, k->f) != 8 ||
        fwrite(w, 4, HEADER_WORDS, k->f) != HEADER_WORDS ||
        fwrite(name, 1, (name_len + 3) / 4 * 4, k->f) != (name_len + 3) / 4 * 4)
        return io_fail(err, "writing");
    return GL_OK;
}

gl_status kld_create(kld_file *k, const char *path, uint32_t row_type, uint32_t n_vocab,
                     uint32_t n_ctx, uint32_t first, uint32_t n_scored, const char *name,
                     gl_error *err)
{
    memset(k, 0, sizeof *k);
    k->row_type = row_type;
    k->n_vocab = n_vocab;
    k->n_ctx = n_ctx;
    k->first = first;
    k->n_scored = n_scored;
    snprintf(k->name, sizeof k->name, "%s", name ? name : "");
    k->ids_off = header_bytes(strlen(k->name));
    k->row_buf = malloc((size_t)n_vocab * elem_size(row_type));
    if (!k->row_buf)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    k->f = fopen(path, "wb");
    if (!k->f) {
        free(k->row_buf);
        k->row_buf = NULL;
        return gl_fail(err, GL_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
    }
    return write_header(k, err);
}

gl_status kld_write_ids(kld_file *k, const int32_t *ids, gl_error *err)
{
    if (fwrite(ids, sizeof *ids, k->n_ctx, k->f) != k->n_ctx)
        return io_fail(err, "writing");
    k->n_windows++;
    return GL_OK;
}

gl_status kld_finish_ids(kld_file *k, gl_error *err)
{
    k->rows_off = k->ids_off + (uint64_t)k->n_windows * k->n_ctx * 4;
    gl_status st = write_header(k, err);
    if (!st && fseeko(k->f, (off_t)k->rows_off, SEEK_SET))
        st = io_fail(err, "writing");
    return st;
}

gl_status kld_write_row(kld_file *k, const float *logp, gl_error *err)
{
    const void *src = logp;
    if (k->row_type == KLD_ROW_F16) {
        uint16_t *h = k->row_buf;
        for (uint32_t i = 0; i < k->n_vocab; i++)
            h[i] = gl_f32_to_f16(logp[i]);
        src = h;
    }
    if (fwrite(src, elem_size(k->row_type), k->n_vocab, k->f) != k->n_vocab)
        return io_fail(err, "writing");
    return GL_OK;
}

gl_status kld_close_written(kld_file *k, gl_error *err)
{
    gl_status st = GL_OK;
    if (k->f && fclose(k->f))
        st = io_fail(err, "writing");
    k->f = NULL;
    kld_close(k);
    return st;
}

gl_status kld_open(kld_file *k, const char *path, gl_error *err)
{
    memset(k, 0, sizeof *k);
    k->f = fopen(path, "rb");
    if (!k->f)
        return gl_fail(err, GL_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    char magic[8];
    uint32_t w[HEADER_WORDS];
    struct stat sb;
    if (fstat(fileno(k->f), &sb) || !S_ISREG(sb.st_mode)) {
        kld_close(k);
        return gl_fail(err, GL_ERR_IO, "'%s' is not a regular file", path);
    }
    if (fread(magic, 1, 8, k->f) != 8 || memcmp(magic, KLD_MAGIC, 8)) {
        kld_close(k);
        return gl_fail(err, GL_ERR_FORMAT,
                       "'%s' is not a genloop KL-divergence base file (bad magic; write one with "
                       "--kl-divergence-base)",
                       path);
    }
    if (fread(w, 4, HEADER_WORDS, k->f) != HEADER_WORDS) {
        kld_close(k);
        return gl_fail(err, GL_ERR_FORMAT, "'%s' is truncated (in its header)", path);
    }
    if (w[0] != KLD_VERSION) {
        kld_close(k);
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "'%s' is a version %u KL-divergence base file; this genloop reads "
                       "version %u",
                       path, w[0], KLD_VERSION);
    }
    k->row_type = w[1];
    k->n_vocab = w[2];
    k->n_ctx = w[3];
    k->first = w[4];
    k->n_scored = w[5];
    k->n_windows = w[6];
    const uint32_t name_len = w[7];
    if ((k->row_type != KLD_ROW_F32 && k->row_type != KLD_ROW_F16) || k->n_vocab == 0 ||
        k->n_vocab > (1u << 24) || k->n_ctx < 2 || k->n_ctx > (1u << 24) || k->first >= k->n_ctx ||
        k->n_scored == 0 || k->n_scored > k->n_ctx - 1 - k->first || name_len >= sizeof k->name) {
        kld_close(k);
        return gl_fail(err, GL_ERR_FORMAT, "'%s' has an invalid header", path);
    }
    if (fread(k->name, 1, name_len, k->f) != name_len) {
        kld_close(k);
        return gl_fail(err, GL_ERR_FORMAT, "'%s' is truncated (in its header)", path);
    }
    k->name[name_len] = '\0';
    k->ids_off = header_bytes(name_len);
    k->rows_off = k->ids_off + (uint64_t)k->n_windows * k->n_ctx * 4;
    /* all factors < 2^32 and the product of the row terms < 2^(24+24+32+2) would
     * overflow: bound it through division instead */
    const uint64_t row_bytes = (uint64_t)k->n_vocab * elem_size(k->row_type);
    const uint64_t rows = (uint64_t)k->n_windows * k->n_scored;
    if (rows && row_bytes > (UINT64_MAX - k->rows_off) / rows) {
        kld_close(k);
        return gl_fail(err, GL_ERR_FORMAT, "'%s' has an invalid header", path);
    }
    const uint64_t want = k->rows_off + rows * row_bytes;
    if ((uint64_t)sb.st_size != want) {
        kld_close(k);
        return gl_fail(err, GL_ERR_FORMAT,
                       "'%s' is %s: its header promises %llu bytes (%u windows of %u tokens, "
                       "vocabulary %u), the file has %llu",
                       path, (uint64_t)sb.st_size < want ? "truncated" : "longer than it should be",
                       (unsigned long long)want, k->n_windows, k->n_ctx, k->n_vocab,
                       (unsigned long long)sb.st_size);
    }
    k->row_buf = malloc(row_bytes);
    if (!k->row_buf) {
        kld_close(k);
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    }
    return GL_OK;
}

gl_status kld_read_ids(kld_file *k, uint32_t w, int32_t *ids, gl_error *err)
{
    if (fseeko(k->f, (off_t)(k->ids_off + (uint64_t)w * k->n_ctx * 4), SEEK_SET) ||
        fread(ids, 4, k->n_ctx, k->f) != k->n_ctx)
        return io_fail(err, "reading");
    return GL_OK;
}

gl_status kld_read_row(kld_file *k, uint32_t w, uint32_t j, float *logp, gl_error *err)
{
    const size_t es = elem_size(k->row_type);
    const uint64_t off = k->rows_off + ((uint64_t)w * k->n_scored + j) * (uint64_t)k->n_vocab * es;
    if (fseeko(k->f, (off_t)off, SEEK_SET) || fread(k->row_buf, es, k->n_vocab, k->f) != k->n_vocab)
        return io_fail(err, "reading");
    if (k->row_type == KLD_ROW_F16) {
        const uint16_t *h = k->row_buf;
        for (uint32_t i = 0; i < k->n_vocab; i++)
            logp[i] = gl_f16_to_f32(h[i]);
    } else {
        memcpy(logp, k->row_buf, (size_t)k->n_vocab * 4);
    }
    return GL_OK;
}

void kld_close(kld_file *k)
{
    if (k->f)
        fclose(k->f);
    free(k->row_buf);
    k->f = NULL;
    k->row_buf = NULL;
}
