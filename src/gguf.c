/* GGUF reader. The input is hostile: every length, count, offset and
 * product is checked against the bytes that remain before it is used, and
 * allocations are capped by what the file could possibly hold. */
#include "gguf.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Smallest encodings, used to reject counts before allocating for them:
 * a kv is a key length, a non-empty key, a value type and a 1-byte value;
 * a tensor info is a name length, n_dims, one dimension, a type and an
 * offset. */
#define KV_MIN_BYTES      (8u + 1u + 4u + 1u)
#define TENSOR_MIN_BYTES  (8u + 4u + 8u + 4u + 8u)
#define HEADER_BYTES      (4u + 4u + 8u + 8u)
#define DEFAULT_ALIGNMENT 32u
/* Longest key or tensor name accepted. Values may be as long as the file
 * (nothing is copied), but names are identifiers: ggml itself keeps tensor
 * names under 64 bytes. */
#define MAX_NAME_BYTES 65535u

/* ---- type tables ---------------------------------------------------- */

typedef struct ttype_info {
    const char *name;
    uint16_t block_elems;
    uint16_t block_bytes;
} ttype_info;

/* ggml numbering; holes are ids ggml retired, which no valid file uses. */
static const ttype_info ttypes[GGUF_T_COUNT] = {
    [0] = { "F32", 1, 4 },         [1] = { "F16", 1, 2 },         [2] = { "Q4_0", 32, 18 },
    [3] = { "Q4_1", 32, 20 },      [6] = { "Q5_0", 32, 22 },      [7] = { "Q5_1", 32, 24 },
    [8] = { "Q8_0", 32, 34 },      [9] = { "Q8_1", 32, 36 },      [10] = { "Q2_K", 256, 84 },
    [11] = { "Q3_K", 256, 110 },   [12] = { "Q4_K", 256, 144 },   [13] = { "Q5_K", 256, 176 },
    [14] = { "Q6_K", 256, 210 },   [15] = { "Q8_K", 256, 292 },   [16] = { "IQ2_XXS", 256, 66 },
    [17] = { "IQ2_XS", 256, 74 },  [18] = { "IQ3_XXS", 256, 98 }, [19] = { "IQ1_S", 256, 50 },
    [20] = { "IQ4_NL", 32, 18 },   [21] = { "IQ3_S", 256, 110 },  [22] = { "IQ2_S", 256, 82 },
    [23] = { "IQ4_XS", 256, 136 }, [24] = { "I8", 1, 1 },         [25] = { "I16", 1, 2 },
    [26] = { "I32", 1, 4 },        [27] = { "I64", 1, 8 },        [28] = { "F64", 1, 8 },
    [29] = { "IQ1_M", 256, 56 },   [30] = { "BF16", 1, 2 },       [34] = { "TQ1_0", 256, 54 },
    [35] = { "TQ2_0", 256, 66 },   [39] = { "MXFP4", 32, 17 },
};

size_t gguf_type_block_bytes(uint32_t ttype)
{
    return ttype < GGUF_T_COUNT ? ttypes[ttype].block_bytes : 0;
}

size_t gguf_type_block_elems(uint32_t ttype)
{
    return ttype < GGUF_T_COUNT ? ttypes[ttype].block_elems : 0;
}

const char *gguf_type_name(uint32_t ttype)
{
    if (ttype < GGUF_T_COUNT && ttypes[ttype].name)
        return ttypes[ttype].name;
    return "unknown";
}

static const char *const vtype_names[GGUF_VT_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};

/* Encoded size of a scalar value; 0 for strings and arrays. */
static const uint8_t vtype_size[GGUF_VT_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

const char *gguf_vtype_name(uint32_t vtype)
{
    return vtype < GGUF_VT_COUNT ? vtype_names[vtype] : "invalid";
}

size_t gguf_vtype_size(uint32_t vtype)
{
    return vtype < GGUF_VT_COUNT ? vtype_size[vtype] : 0;
}

/* ---- reader --------------------------------------------------------- */

typedef struct reader {
    const uint8_t *buf;
    size_t size;
    size_t pos; /* invariant: pos <= size */
    gl_error *err;
    const char *ctx; /* what is being read, appended to errors */
} reader;

/* Names from the file may hold any bytes; quote them so an error message
 * stays one printable line. */
static const char *quote(char *out, size_t cap, const uint8_t *p, uint64_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    uint64_t i;
    for (i = 0; i < len && o + 8 < cap; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    if (i < len) {
        out[o++] = '.';
        out[o++] = '.';
        out[o++] = '.';
    }
    out[o] = '\0';
    return out;
}

static gl_status fail(reader *r, const char *fmt, ...) GL_PRINTF(2, 3);

static gl_status fail(reader *r, const char *fmt, ...)
{
    if (r->err) {
        va_list ap;
        int n;
        r->err->code = GL_ERR_FORMAT;
        n = snprintf(r->err->msg, sizeof r->err->msg, "gguf: ");
        va_start(ap, fmt);
        vsnprintf(r->err->msg + n, sizeof r->err->msg - (size_t)n, fmt, ap);
        va_end(ap);
        if (r->ctx) {
            size_t used = strlen(r->err->msg);
            snprintf(r->err->msg + used, sizeof r->err->msg - used, " (in %s)", r->ctx);
        }
    }
    return GL_ERR_FORMAT;
}

static size_t left(const reader *r)
{
    return r->size - r->pos;
}

static gl_status need(reader *r, uint64_t n, const char *what)
{
    if (n > left(r))
        return fail(r, "%s at offset %zu (%" PRIu64 " bytes) runs past end of file (size %zu)",
                    what, r->pos, n, r->size);
    return GL_OK;
}

static gl_status rd_u32(reader *r, uint32_t *v, const char *what)
{
    if (need(r, 4, what))
        return GL_ERR_FORMAT;
    memcpy(v, r->buf + r->pos, 4);
    r->pos += 4;
    return GL_OK;
}

static gl_status rd_u64(reader *r, uint64_t *v, const char *what)
{
    if (need(r, 8, what))
        return GL_ERR_FORMAT;
    memcpy(v, r->buf + r->pos, 8);
    r->pos += 8;
    return GL_OK;
}

static gl_status rd_str(reader *r, gguf_str *s, const char *what)
{
    size_t at = r->pos;
    uint64_t len;
    if (left(r) < 8)
        return fail(r, "%s length field at offset %zu runs past end of file (size %zu)", what, at,
                    r->size);
    memcpy(&len, r->buf + r->pos, 8);
    r->pos += 8;
    if (len > left(r))
        return fail(r, "%s length %" PRIu64 " at offset %zu runs past end of file (size %zu)", what,
                    len, at, r->size);
    s->ptr = (const char *)(r->buf + r->pos);
    s->len = len;
    r->pos += (size_t)len;
    return GL_OK;
}

static gl_status check_bools(reader *r, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint8_t b = r->buf[r->pos + i];
        if (b > 1)
            return fail(r, "invalid bool value %u at offset %zu (must be 0 or 1)", b,
                        r->pos + (size_t)i);
    }
    return GL_OK;
}

static gl_status skip_value(reader *r, uint32_t type, int depth);

/* Validates n elements of type et starting at r->pos and steps over them. */
static gl_status skip_array_body(reader *r, uint32_t et, uint64_t n, size_t hdr_at, int depth)
{
    size_t esz = gguf_vtype_size(et);
    if (esz) {
        uint64_t bytes;
        if (__builtin_mul_overflow(n, (uint64_t)esz, &bytes) || bytes > left(r))
            return fail(r, "array of %" PRIu64 " %s at offset %zu runs past end of file (size %zu)",
                        n, gguf_vtype_name(et), hdr_at, r->size);
        if (et == GGUF_VT_BOOL && check_bools(r, n))
            return GL_ERR_FORMAT;
        r->pos += (size_t)bytes;
        return GL_OK;
    }
    /* Strings take at least their 8-byte length, arrays their 12-byte
     * header: reject absurd counts before walking them. */
    uint64_t min = et == GGUF_VT_STR ? 8 : 12;
    if (n > left(r) / min)
        return fail(r,
                    "array count %" PRIu64 " of %s at offset %zu cannot fit in the %zu bytes "
                    "left (file size %zu)",
                    n, gguf_vtype_name(et), hdr_at, left(r), r->size);
    for (uint64_t i = 0; i < n; i++)
        if (skip_value(r, et, depth))
            return GL_ERR_FORMAT;
    return GL_OK;
}

/* Reads an array header and checks its element type and nesting depth. */
static gl_status rd_array_header(reader *r, int depth, uint32_t *et, uint64_t *n)
{
    size_t at = r->pos;
    if (depth >= GGUF_MAX_ARR_DEPTH)
        return fail(r, "array at offset %zu nested deeper than %d levels", at, GGUF_MAX_ARR_DEPTH);
    if (rd_u32(r, et, "array element type") || rd_u64(r, n, "array count"))
        return GL_ERR_FORMAT;
    if (*et >= GGUF_VT_COUNT)
        return fail(r, "invalid array element type %" PRIu32 " at offset %zu", *et, at);
    return GL_OK;
}

/* depth counts the arrays enclosing this value. */
static gl_status skip_value(reader *r, uint32_t type, int depth)
{
    if (type == GGUF_VT_STR) {
        gguf_str s;
        return rd_str(r, &s, "string");
    }
    if (type == GGUF_VT_ARR) {
        size_t at = r->pos;
        uint32_t et = 0;
        uint64_t n = 0;
        if (rd_array_header(r, depth, &et, &n))
            return GL_ERR_FORMAT;
        return skip_array_body(r, et, n, at, depth + 1);
    }
    size_t sz = gguf_vtype_size(type);
    if (!sz)
        return fail(r, "invalid value type %" PRIu32 " at offset %zu", type, r->pos);
    if (need(r, sz, gguf_vtype_name(type)))
        return GL_ERR_FORMAT;
    if (type == GGUF_VT_BOOL && check_bools(r, 1))
        return GL_ERR_FORMAT;
    r->pos += sz;
    return GL_OK;
}

static gl_status parse_kv(reader *r, gguf_kv *kv, uint64_t idx, char *ctx, size_t ctx_cap)
{
    char q[96];
    size_t key_at = r->pos;

    snprintf(ctx, ctx_cap, "kv #%" PRIu64, idx);
    r->ctx = ctx;
    if (rd_str(r, &kv->key, "key"))
        return GL_ERR_FORMAT;
    if (kv->key.len == 0)
        return fail(r, "empty key at offset %zu", key_at);
    if (kv->key.len > MAX_NAME_BYTES)
        return fail(r, "key length %" PRIu64 " at offset %zu exceeds the limit of %u bytes",
                    kv->key.len, key_at, MAX_NAME_BYTES);
    snprintf(ctx, ctx_cap, "kv #%" PRIu64 " '%s'", idx,
             quote(q, sizeof q, (const uint8_t *)kv->key.ptr, kv->key.len));

    size_t type_at = r->pos;
    if (rd_u32(r, &kv->type, "value type"))
        return GL_ERR_FORMAT;
    if (kv->type >= GGUF_VT_COUNT)
        return fail(r, "invalid value type %" PRIu32 " at offset %zu", kv->type, type_at);
    kv->offset = r->pos;
    if (kv->type == GGUF_VT_ARR) {
        if (rd_array_header(r, 0, &kv->arr_type, &kv->arr_n))
            return GL_ERR_FORMAT;
        kv->data = r->buf + r->pos;
        return skip_array_body(r, kv->arr_type, kv->arr_n, (size_t)kv->offset, 1);
    }
    kv->data = r->buf + r->pos;
    return skip_value(r, kv->type, 0);
}

static int cmp_str(const void *a, const void *b)
{
    const gguf_str *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->ptr, y->ptr, (size_t)x->len);
}

/* Sorting keeps the check O(n log n): a hostile file can hold millions of
 * keys. Returns one of two equal names, or NULL. */
static const gguf_str *find_duplicate(gguf_str *names, uint64_t n)
{
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (uint64_t i = 1; i < n; i++)
        if (cmp_str(&names[i - 1], &names[i]) == 0)
            return &names[i];
    return NULL;
}

static gl_status check_unique(reader *r, const void *items, size_t stride, size_t name_off,
                              uint64_t n, const char *what)
{
    const gguf_str *dup;
    char q[96];
    if (n < 2)
        return GL_OK;
    size_t bytes;
    gguf_str *names = NULL;
    if (!__builtin_mul_overflow((size_t)n, sizeof *names, &bytes))
        names = malloc(bytes);
    if (!names)
        return gl_fail(r->err, GL_ERR_NOMEM, "gguf: out of memory checking %" PRIu64 " %ss", n,
                       what);
    for (uint64_t i = 0; i < n; i++)
        memcpy(&names[i], (const uint8_t *)items + i * stride + name_off, sizeof names[i]);
    dup = find_duplicate(names, n);
    if (dup) {
        size_t at = (size_t)((const uint8_t *)dup->ptr - r->buf);
        quote(q, sizeof q, (const uint8_t *)dup->ptr, dup->len);
        free(names);
        r->ctx = NULL;
        return fail(r, "duplicate %s '%s' (one copy at offset %zu)", what, q, at);
    }
    free(names);
    return GL_OK;
}

static gl_status apply_alignment(reader *r, const gguf_kv *kv, uint64_t *alignment)
{
    uint32_t a;
    if (kv->type != GGUF_VT_U32)
        return fail(r, "general.alignment at offset %" PRIu64 " has type %s, expected u32",
                    kv->offset, gguf_vtype_name(kv->type));
    memcpy(&a, kv->data, 4);
    if (a == 0 || (a & (a - 1)) != 0)
        return fail(
            r, "general.alignment %" PRIu32 " at offset %" PRIu64 " is not a nonzero power of two",
            a, kv->offset);
    *alignment = a;
    return GL_OK;
}

static gl_status parse_tensor_info(reader *r, gguf_tensor *t, uint64_t idx, uint64_t alignment,
                                   char *ctx, size_t ctx_cap)
{
    char q[96];
    size_t at;

    snprintf(ctx, ctx_cap, "tensor info #%" PRIu64, idx);
    r->ctx = ctx;
    at = r->pos;
    if (rd_str(r, &t->name, "tensor name"))
        return GL_ERR_FORMAT;
    if (t->name.len == 0)
        return fail(r, "empty tensor name at offset %zu", at);
    if (t->name.len > MAX_NAME_BYTES)
        return fail(r,
                    "tensor name length %" PRIu64 " at offset %zu exceeds the limit of %u "
                    "bytes",
                    t->name.len, at, MAX_NAME_BYTES);
    quote(q, sizeof q, (const uint8_t *)t->name.ptr, t->name.len);
    snprintf(ctx, ctx_cap, "tensor '%s' (#%" PRIu64 ")", q, idx);

    at = r->pos;
    if (rd_u32(r, &t->n_dims, "n_dims"))
        return GL_ERR_FORMAT;
    if (t->n_dims == 0 || t->n_dims > GGUF_MAX_DIMS)
        return fail(r, "n_dims %" PRIu32 " at offset %zu out of range 1..%d", t->n_dims, at,
                    GGUF_MAX_DIMS);
    size_t dims_at = r->pos;
    for (int d = 0; d < GGUF_MAX_DIMS; d++)
        t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        at = r->pos;
        if (rd_u64(r, &t->ne[d], "dimension"))
            return GL_ERR_FORMAT;
        /* ggml holds dimensions as int64_t: larger values are negative there. */
        if (t->ne[d] > (uint64_t)INT64_MAX)
            return fail(r, "dimension %" PRIu32 " = %" PRIu64 " at offset %zu is too large", d,
                        t->ne[d], at);
    }
    at = r->pos;
    if (rd_u32(r, &t->type, "tensor type"))
        return GL_ERR_FORMAT;
    size_t bb = gguf_type_block_bytes(t->type), be = gguf_type_block_elems(t->type);
    if (!bb)
        return fail(r, "tensor '%s' has unknown type %" PRIu32 " at offset %zu", q, t->type, at);
    at = r->pos;
    if (rd_u64(r, &t->offset, "tensor offset"))
        return GL_ERR_FORMAT;
    if (t->offset % alignment)
        return fail(r,
                    "tensor data offset %" PRIu64 " at offset %zu is not a multiple of the "
                    "alignment %" PRIu64,
                    t->offset, at, alignment);

    if (t->ne[0] % be)
        return fail(r,
                    "row length %" PRIu64 " is not a multiple of the %s block size %zu "
                    "(dimension 0 at offset %zu)",
                    t->ne[0], gguf_type_name(t->type), be, dims_at);
    /* The element and byte counts must fit int64 too: loaders multiply
     * dimensions. (ne[0] / be) * bb can wrap on its own: ne[0] may be
     * close to 2^63 and bb is up to 292. */
    uint64_t nel = 1, nbytes;
    bool ovf = __builtin_mul_overflow(t->ne[0] / be, (uint64_t)bb, &nbytes);
    for (int d = 0; d < GGUF_MAX_DIMS; d++)
        ovf |= __builtin_mul_overflow(nel, t->ne[d], &nel);
    for (int d = 1; d < GGUF_MAX_DIMS; d++)
        ovf |= __builtin_mul_overflow(nbytes, t->ne[d], &nbytes);
    if (ovf || nel > (uint64_t)INT64_MAX || nbytes > (uint64_t)INT64_MAX)
        return fail(r,
                    "dimensions [%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
                    "] at offset %zu overflow the element or byte count of type %s",
                    t->ne[0], t->ne[1], t->ne[2], t->ne[3], dims_at, gguf_type_name(t->type));
    t->nbytes = nbytes;
    return GL_OK;
}

static int cmp_tensor_data(const void *a, const void *b)
{
    const gguf_tensor *x = *(const gguf_tensor *const *)a, *y = *(const gguf_tensor *const *)b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

/* Tensor data may not overlap: with every tensor inside the file, this
 * also bounds the total the tensors claim by the file size. */
static gl_status check_overlap(reader *r, const gguf_file *g)
{
    char q1[96], q2[96];
    if (g->n_tensors < 2)
        return GL_OK;
    const gguf_tensor **by_off = malloc((size_t)g->n_tensors * sizeof *by_off);
    if (!by_off)
        return gl_fail(r->err, GL_ERR_NOMEM, "gguf: out of memory checking %" PRIu64 " tensors",
                       g->n_tensors);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        by_off[i] = &g->tensors[i];
    qsort(by_off, (size_t)g->n_tensors, sizeof *by_off, cmp_tensor_data);
    /* a: the tensor whose data reaches furthest so far (empty ones never overlap) */
    const gguf_tensor *a = NULL;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const gguf_tensor *b = by_off[i];
        if (!b->nbytes)
            continue;
        /* in bounds of the file already: no overflow */
        if (a && b->offset < a->offset + a->nbytes) {
            size_t b_at = (size_t)((const uint8_t *)b->name.ptr - r->buf) - 8;
            quote(q1, sizeof q1, (const uint8_t *)a->name.ptr, a->name.len);
            quote(q2, sizeof q2, (const uint8_t *)b->name.ptr, b->name.len);
            free(by_off);
            r->ctx = NULL;
            return fail(r,
                        "tensor '%s' (info at offset %zu) data [offset %" PRIu64 ", %" PRIu64
                        " bytes] overlaps tensor '%s' data [offset %" PRIu64 ", %" PRIu64 " bytes]",
                        q2, b_at, b->offset, b->nbytes, q1, a->offset, a->nbytes);
        }
        if (!a || b->offset + b->nbytes > a->offset + a->nbytes)
            a = b;
    }
    free(by_off);
    return GL_OK;
}

gl_status gguf_parse(gguf_file *g, const uint8_t *buf, size_t size, gl_error *err)
{
    char ctx[160], q[96];
    reader r = { buf, size, 0, err, NULL };
    uint32_t version;
    uint64_t n_tensors, n_kv, alignment = DEFAULT_ALIGNMENT;
    gl_status st = GL_ERR_FORMAT;

    if (!g)
        return gl_fail(err, GL_ERR_ARG, "gguf: no output struct given");
    memset(g, 0, sizeof *g);
    if (!buf && size)
        return gl_fail(err, GL_ERR_ARG, "gguf: NULL buffer of size %zu", size);

    if (size < 4 || memcmp(buf, "GGUF", 4) != 0) {
        if (size < 4)
            return fail(&r, "file is %zu bytes, too short for the 4-byte GGUF magic at offset 0",
                        size);
        return fail(&r, "bad magic '%s' at offset 0 (expected 'GGUF'): not a GGUF file",
                    quote(q, sizeof q, buf, 4));
    }
    if (size < HEADER_BYTES)
        return fail(&r,
                    "file is %zu bytes, too short for the %u-byte GGUF header at offset 0 "
                    "(magic, version, tensor count, kv count)",
                    size, HEADER_BYTES);
    r.pos = 4;
    rd_u32(&r, &version, "version");
    if (version != 2 && version != 3) {
        uint32_t swapped = __builtin_bswap32(version);
        if (swapped == 2 || swapped == 3)
            return fail(&r,
                        "version field at offset 4 reads %" PRIu32 ": a big-endian GGUF, "
                        "which is not supported",
                        version);
        return fail(&r, "unsupported version %" PRIu32 " at offset 4 (supported: 2 and 3)",
                    version);
    }
    rd_u64(&r, &n_tensors, "tensor count");
    rd_u64(&r, &n_kv, "kv count");

    /* Cap both counts by the bytes left before allocating anything. */
    if (n_kv > left(&r) / KV_MIN_BYTES)
        return fail(&r,
                    "kv count %" PRIu64 " at offset 16 cannot fit in the %zu bytes left "
                    "(each kv takes at least %u; file size %zu): truncated or corrupt",
                    n_kv, left(&r), KV_MIN_BYTES, size);
    if (n_tensors > (left(&r) - n_kv * KV_MIN_BYTES) / TENSOR_MIN_BYTES)
        return fail(&r,
                    "tensor count %" PRIu64 " at offset 8 cannot fit with %" PRIu64 " kv pairs "
                    "in the %zu bytes left (each kv takes at least %u, each tensor info %u; "
                    "file size %zu): truncated or corrupt",
                    n_tensors, n_kv, left(&r), KV_MIN_BYTES, TENSOR_MIN_BYTES, size);

    g->base = buf;
    g->size = size;
    g->version = version;
    if (n_kv) {
        g->kv = calloc((size_t)n_kv, sizeof *g->kv);
        if (!g->kv) {
            gguf_free(g);
            return gl_fail(err, GL_ERR_NOMEM, "gguf: out of memory for %" PRIu64 " kv pairs", n_kv);
        }
    }
    g->n_kv = n_kv;
    for (uint64_t i = 0; i < n_kv; i++) {
        gguf_kv *kv = &g->kv[i];
        if (parse_kv(&r, kv, i, ctx, sizeof ctx))
            goto fail;
        if (gguf_str_eq(kv->key, "general.alignment") && apply_alignment(&r, kv, &alignment))
            goto fail;
    }
    r.ctx = NULL;
    st = check_unique(&r, g->kv, sizeof *g->kv, offsetof(gguf_kv, key), n_kv, "key");
    if (st)
        goto fail;
    st = GL_ERR_FORMAT;

    if (n_tensors > left(&r) / TENSOR_MIN_BYTES) {
        fail(&r,
             "tensor count %" PRIu64 " at offset 8 cannot fit in the %zu bytes left after "
             "the kv pairs (at offset %zu; file size %zu)",
             n_tensors, left(&r), r.pos, size);
        goto fail;
    }
    if (n_tensors) {
        g->tensors = calloc((size_t)n_tensors, sizeof *g->tensors);
        if (!g->tensors) {
            gguf_free(g);
            return gl_fail(err, GL_ERR_NOMEM, "gguf: out of memory for %" PRIu64 " tensor infos",
                           n_tensors);
        }
    }
    g->n_tensors = n_tensors;
    for (uint64_t i = 0; i < n_tensors; i++)
        if (parse_tensor_info(&r, &g->tensors[i], i, alignment, ctx, sizeof ctx))
            goto fail;
    r.ctx = NULL;
    st = check_unique(&r, g->tensors, sizeof *g->tensors, offsetof(gguf_tensor, name), n_tensors,
                      "tensor name");
    if (st)
        goto fail;
    st = GL_ERR_FORMAT;

    uint64_t data_offset = r.pos, rem = r.pos % alignment;
    if (rem && __builtin_add_overflow(data_offset, alignment - rem, &data_offset)) {
        fail(&r,
             "data section offset (tensor infos end at offset %zu, alignment %" PRIu64
             ") overflows",
             r.pos, alignment);
        goto fail;
    }
    if (data_offset > size) {
        /* Vocabulary-only files may end without padding; with no tensors
         * the empty data section is simply the end of the file. */
        if (n_tensors) {
            fail(&r,
                 "data section at offset %" PRIu64 " (after tensor infos ending at %zu, "
                 "alignment %" PRIu64 ") starts past end of file (size %zu)",
                 data_offset, r.pos, alignment, size);
            goto fail;
        }
        data_offset = size;
    }
    g->alignment = alignment;
    g->data_offset = data_offset;

    for (uint64_t i = 0; i < n_tensors; i++) {
        gguf_tensor *t = &g->tensors[i];
        uint64_t start, end;
        if (__builtin_add_overflow(data_offset, t->offset, &start) ||
            __builtin_add_overflow(start, t->nbytes, &end) || end > size) {
            /* The info starts 8 bytes (the name length) before the name. */
            size_t info_at = (size_t)((const uint8_t *)t->name.ptr - buf) - 8;
            fail(&r,
                 "tensor '%s' (#%" PRIu64 ") data [offset %" PRIu64 ", %" PRIu64 " bytes] "
                 "runs past end of file (tensor info at offset %zu, data section at %" PRIu64
                 ", file size %zu)",
                 quote(q, sizeof q, (const uint8_t *)t->name.ptr, t->name.len), i, t->offset,
                 t->nbytes, info_at, data_offset, size);
            goto fail;
        }
        t->data = buf + start;
    }
    if ((st = check_overlap(&r, g)))
        goto fail;
    return GL_OK;

fail:
    gguf_free(g);
    return st;
}

void gguf_free(gguf_file *g)
{
    if (!g)
        return;
    free(g->kv);
    free(g->tensors);
    memset(g, 0, sizeof *g);
}

/* ---- lookups -------------------------------------------------------- */

bool gguf_str_eq(gguf_str s, const char *cstr)
{
    size_t n = strlen(cstr);
    return s.len == n && memcmp(s.ptr, cstr, n) == 0;
}

const gguf_kv *gguf_find(const gguf_file *g, const char *key)
{
    for (uint64_t i = 0; i < g->n_kv; i++)
        if (gguf_str_eq(g->kv[i].key, key))
            return &g->kv[i];
    return NULL;
}

const gguf_tensor *gguf_find_tensor(const gguf_file *g, const char *name)
{
    for (uint64_t i = 0; i < g->n_tensors; i++)
        if (gguf_str_eq(g->tensors[i].name, name))
            return &g->tensors[i];
    return NULL;
}

/* Reads one numeric value of type t at p; false for non-numeric types.
 * Integers come back exactly in *i (with *is_int set) and as double. */
static bool read_num(uint32_t t, const uint8_t *p, double *d, int64_t *i, bool *is_int,
                     bool *fits_i64)
{
    *is_int = true;
    *fits_i64 = true;
    switch (t) {
    case GGUF_VT_U8: {
        uint8_t v;
        memcpy(&v, p, 1);
        *i = v;
        break;
    }
    case GGUF_VT_I8: {
        int8_t v;
        memcpy(&v, p, 1);
        *i = v;
        break;
    }
    case GGUF_VT_U16: {
        uint16_t v;
        memcpy(&v, p, 2);
        *i = v;
        break;
    }
    case GGUF_VT_I16: {
        int16_t v;
        memcpy(&v, p, 2);
        *i = v;
        break;
    }
    case GGUF_VT_U32: {
        uint32_t v;
        memcpy(&v, p, 4);
        *i = v;
        break;
    }
    case GGUF_VT_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        *i = v;
        break;
    }
    case GGUF_VT_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        *i = v;
        break;
    }
    case GGUF_VT_U64: {
        uint64_t v;
        memcpy(&v, p, 8);
        *fits_i64 = v <= (uint64_t)INT64_MAX;
        *i = *fits_i64 ? (int64_t)v : 0;
        *d = (double)v;
        return true;
    }
    case GGUF_VT_F32: {
        float v;
        memcpy(&v, p, 4);
        *d = v;
        *is_int = false;
        return true;
    }
    case GGUF_VT_F64: {
        double v;
        memcpy(&v, p, 8);
        *d = v;
        *is_int = false;
        return true;
    }
    default: return false;
    }
    *d = (double)*i;
    return true;
}

bool gguf_get_i64(const gguf_file *g, const char *key, int64_t *out)
{
    const gguf_kv *kv = gguf_find(g, key);
    double d;
    int64_t i;
    bool is_int, fits;
    if (!kv || !read_num(kv->type, kv->data, &d, &i, &is_int, &fits) || !is_int || !fits)
        return false;
    *out = i;
    return true;
}

bool gguf_get_f32(const gguf_file *g, const char *key, float *out)
{
    const gguf_kv *kv = gguf_find(g, key);
    if (!kv)
        return false;
    if (kv->type == GGUF_VT_F32) {
        memcpy(out, kv->data, 4);
        return true;
    }
    if (kv->type == GGUF_VT_F64) {
        double v;
        memcpy(&v, kv->data, 8);
        *out = (float)v;
        return true;
    }
    return false;
}

bool gguf_get_bool(const gguf_file *g, const char *key, bool *out)
{
    const gguf_kv *kv = gguf_find(g, key);
    if (!kv || kv->type != GGUF_VT_BOOL)
        return false;
    *out = kv->data[0] != 0;
    return true;
}

bool gguf_get_str(const gguf_file *g, const char *key, gguf_str *out)
{
    const gguf_kv *kv = gguf_find(g, key);
    uint64_t len;
    if (!kv || kv->type != GGUF_VT_STR)
        return false;
    memcpy(&len, kv->data, 8);
    out->ptr = (const char *)kv->data + 8;
    out->len = len;
    return true;
}

bool gguf_arr_next_str(const gguf_kv *kv, uint64_t *pos, const uint8_t **cursor, gguf_str *out)
{
    uint64_t len;
    if (kv->type != GGUF_VT_ARR || kv->arr_type != GGUF_VT_STR || *pos >= kv->arr_n)
        return false;
    if (*pos == 0)
        *cursor = kv->data;
    memcpy(&len, *cursor, 8);
    out->ptr = (const char *)*cursor + 8;
    out->len = len;
    *cursor += 8 + (size_t)len;
    (*pos)++;
    return true;
}

bool gguf_arr_get_num(const gguf_kv *kv, uint64_t i, double *out)
{
    double d;
    int64_t iv;
    bool is_int, fits;
    if (kv->type != GGUF_VT_ARR || i >= kv->arr_n || kv->arr_type == GGUF_VT_BOOL)
        return false;
    size_t esz = gguf_vtype_size(kv->arr_type);
    if (!esz || !read_num(kv->arr_type, kv->data + i * esz, &d, &iv, &is_int, &fits))
        return false;
    *out = d;
    return true;
}
