#include "gguf_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "gguf_writer: out of memory (%zu bytes)\n", n);
        abort();
    }
    return q;
}

void gw_init(gw_buf *b)
{
    memset(b, 0, sizeof *b);
}

void gw_free(gw_buf *b)
{
    free(b->data);
    free(b->fields);
    memset(b, 0, sizeof *b);
}

void gw_bytes(gw_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

void gw_zeros(gw_buf *b, size_t n)
{
    static const uint8_t z[64];
    while (n) {
        size_t k = n < sizeof z ? n : sizeof z;
        gw_bytes(b, z, k);
        n -= k;
    }
}

/* The host is little-endian, as GGUF is (the reader assumes the same). */
void gw_u8(gw_buf *b, uint8_t v)
{
    gw_bytes(b, &v, 1);
}
void gw_u16(gw_buf *b, uint16_t v)
{
    gw_bytes(b, &v, 2);
}
void gw_u32(gw_buf *b, uint32_t v)
{
    gw_bytes(b, &v, 4);
}
void gw_u64(gw_buf *b, uint64_t v)
{
    gw_bytes(b, &v, 8);
}
void gw_f32(gw_buf *b, float v)
{
    gw_bytes(b, &v, 4);
}
void gw_f64(gw_buf *b, double v)
{
    gw_bytes(b, &v, 8);
}

static void record(gw_buf *b, size_t off, int width, enum gw_kind kind, const char *what)
{
    if (b->n_fields == b->cap_fields) {
        b->cap_fields = b->cap_fields ? 2 * b->cap_fields : 32;
        b->fields = xrealloc(b->fields, b->cap_fields * sizeof *b->fields);
    }
    b->fields[b->n_fields++] = (gw_field){ off, (uint8_t)width, (uint8_t)kind, what };
}

void gw_field32(gw_buf *b, uint32_t v, enum gw_kind kind, const char *what)
{
    record(b, b->len, 4, kind, what);
    gw_u32(b, v);
}

void gw_field64(gw_buf *b, uint64_t v, enum gw_kind kind, const char *what)
{
    record(b, b->len, 8, kind, what);
    gw_u64(b, v);
}

void gw_header(gw_buf *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    record(b, b->len, 4, GW_F_MAGIC, "magic");
    gw_bytes(b, "GGUF", 4);
    gw_field32(b, version, GW_F_VERSION, "version");
    gw_field64(b, n_tensors, GW_F_COUNT, "n_tensors");
    gw_field64(b, n_kv, GW_F_COUNT, "n_kv");
}

void gw_strn(gw_buf *b, const void *s, uint64_t len)
{
    gw_field64(b, len, GW_F_LEN, "string length");
    gw_bytes(b, s, (size_t)len);
}

void gw_str(gw_buf *b, const char *s)
{
    gw_strn(b, s, strlen(s));
}

void gw_key(gw_buf *b, const char *key, uint32_t vtype)
{
    gw_strn(b, key, strlen(key));
    gw_field32(b, vtype, GW_F_VTYPE, "value type");
}

void gw_arr(gw_buf *b, uint32_t elem_type, uint64_t n)
{
    gw_field32(b, elem_type, GW_F_VTYPE, "array element type");
    gw_field64(b, n, GW_F_COUNT, "array count");
}

void gw_kv_u8(gw_buf *b, const char *key, uint8_t v)
{
    gw_key(b, key, GGUF_VT_U8);
    gw_u8(b, v);
}
void gw_kv_i8(gw_buf *b, const char *key, int8_t v)
{
    gw_key(b, key, GGUF_VT_I8);
    gw_u8(b, (uint8_t)v);
}
void gw_kv_u16(gw_buf *b, const char *key, uint16_t v)
{
    gw_key(b, key, GGUF_VT_U16);
    gw_u16(b, v);
}
void gw_kv_i16(gw_buf *b, const char *key, int16_t v)
{
    gw_key(b, key, GGUF_VT_I16);
    gw_u16(b, (uint16_t)v);
}
void gw_kv_u32(gw_buf *b, const char *key, uint32_t v)
{
    gw_key(b, key, GGUF_VT_U32);
    gw_field32(b, v, GW_F_VALUE, key);
}
void gw_kv_i32(gw_buf *b, const char *key, int32_t v)
{
    gw_key(b, key, GGUF_VT_I32);
    gw_u32(b, (uint32_t)v);
}
void gw_kv_u64(gw_buf *b, const char *key, uint64_t v)
{
    gw_key(b, key, GGUF_VT_U64);
    gw_field64(b, v, GW_F_VALUE, key);
}
void gw_kv_i64(gw_buf *b, const char *key, int64_t v)
{
    gw_key(b, key, GGUF_VT_I64);
    gw_u64(b, (uint64_t)v);
}
void gw_kv_f32(gw_buf *b, const char *key, float v)
{
    gw_key(b, key, GGUF_VT_F32);
    gw_f32(b, v);
}
void gw_kv_f64(gw_buf *b, const char *key, double v)
{
    gw_key(b, key, GGUF_VT_F64);
    gw_f64(b, v);
}
void gw_kv_bool(gw_buf *b, const char *key, bool v)
{
    gw_key(b, key, GGUF_VT_BOOL);
    gw_u8(b, v ? 1 : 0);
}
void gw_kv_str(gw_buf *b, const char *key, const char *v)
{
    gw_key(b, key, GGUF_VT_STR);
    gw_str(b, v);
}

void gw_kv_str_arr(gw_buf *b, const char *key, const char *const *v, uint64_t n)
{
    gw_key(b, key, GGUF_VT_ARR);
    gw_arr(b, GGUF_VT_STR, n);
    for (uint64_t i = 0; i < n; i++)
        gw_str(b, v[i]);
}

void gw_kv_f32_arr(gw_buf *b, const char *key, const float *v, uint64_t n)
{
    gw_key(b, key, GGUF_VT_ARR);
    gw_arr(b, GGUF_VT_F32, n);
    for (uint64_t i = 0; i < n; i++)
        gw_f32(b, v[i]);
}

void gw_kv_i32_arr(gw_buf *b, const char *key, const int32_t *v, uint64_t n)
{
    gw_key(b, key, GGUF_VT_ARR);
    gw_arr(b, GGUF_VT_I32, n);
    for (uint64_t i = 0; i < n; i++)
        gw_u32(b, (uint32_t)v[i]);
}

void gw_tensor_info(gw_buf *b, const char *name, uint32_t n_dims, const uint64_t *ne,
                    uint32_t ttype, uint64_t offset)
{
    gw_strn(b, name, strlen(name));
    gw_field32(b, n_dims, GW_F_NDIMS, "n_dims");
    for (uint32_t d = 0; d < n_dims; d++)
        gw_field64(b, ne[d], GW_F_DIM, "dimension");
    gw_field32(b, ttype, GW_F_TTYPE, "tensor type");
    gw_field64(b, offset, GW_F_OFFSET, "tensor offset");
}

void gw_pad(gw_buf *b, size_t align)
{
    if (align && b->len % align)
        gw_zeros(b, align - b->len % align);
}

void gw_patch_u8(gw_buf *b, size_t off, uint8_t v)
{
    if (off + 1 <= b->len)
        b->data[off] = v;
}

void gw_patch_u32(gw_buf *b, size_t off, uint32_t v)
{
    if (off + 4 <= b->len)
        memcpy(b->data + off, &v, 4);
}

void gw_patch_u64(gw_buf *b, size_t off, uint64_t v)
{
    if (off + 8 <= b->len)
        memcpy(b->data + off, &v, 8);
}

void gw_patch_field(gw_buf *b, const gw_field *f, uint64_t v)
{
    if (f->width == 8)
        gw_patch_u64(b, f->off, v);
    else
        gw_patch_u32(b, f->off, (uint32_t)v);
}

void gw_truncate(gw_buf *b, size_t len)
{
    if (len < b->len)
        b->len = len;
    /* Fields past the new end would patch nothing; drop them. */
    while (b->n_fields && b->fields[b->n_fields - 1].off + b->fields[b->n_fields - 1].width > len)
        b->n_fields--;
}

const gw_field *gw_find_field(const gw_buf *b, enum gw_kind kind, const char *what)
{
    for (size_t i = 0; i < b->n_fields; i++)
        if (b->fields[i].kind == kind && strcmp(b->fields[i].what, what) == 0)
            return &b->fields[i];
    return NULL;
}

uint8_t *gw_dup(const void *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    if (!q) {
        fprintf(stderr, "gguf_writer: out of memory (%zu bytes)\n", n);
        abort();
    }
    if (n)
        memcpy(q, p, n);
    return q;
}

void gw_build_sample(gw_buf *b, const gw_sample_opts *opts)
{
    static const char *const tokens[] = { "<unk>", "<s>", "</s>", "hello", "", "w\xc3\xb6rld" };
    static const float scores[] = { 0.0f, -1.0f, -2.0f, 3.5f, -4.25f, 5.0f };
    static const int32_t types[] = { 2, 3, 3, 1, 1, 1 };
    struct {
        const char *name;
        uint32_t n_dims;
        uint64_t ne[2];
        uint32_t type;
        uint64_t nbytes;
    } ts[] = {
        { "token_embd.weight", 2, { 4, 3 }, GGUF_T_F32, 4 * 3 * 4 },
        { "output_norm.weight", 1, { 8, 1 }, GGUF_T_F16, 8 * 2 },
        { "blk.0.attn_q.weight", 2, { 32, 2 }, GGUF_T_Q8_0, 2 * 34 },
    };
    uint32_t version = opts && opts->version ? opts->version : 3;
    uint32_t align = opts && opts->alignment ? opts->alignment : 32;
    bool has_align = opts && opts->alignment;
    uint64_t n_kv = 20 + (has_align ? 1 : 0), n_t = sizeof ts / sizeof ts[0];

    gw_header(b, version, n_t, n_kv);
    gw_kv_str(b, "general.architecture", "llama");
    gw_kv_str(b, "general.name", "sample");
    if (has_align)
        gw_kv_u32(b, "general.alignment", align);
    gw_kv_u8(b, "test.u8", 200);
    gw_kv_i8(b, "test.i8", -100);
    gw_kv_u16(b, "test.u16", 60000);
    gw_kv_i16(b, "test.i16", -30000);
    gw_kv_u32(b, "llama.embedding_length", 64);
    gw_kv_i32(b, "test.i32", -2000000000);
    gw_kv_u64(b, "test.u64", 0xfedcba9876543210ull);
    gw_kv_i64(b, "test.i64", -5000000000ll);
    gw_kv_f32(b, "test.f32", 1.5f);
    gw_kv_f64(b, "test.f64", 0.25);
    gw_kv_bool(b, "test.bool", true);
    gw_kv_str(b, "test.str", "h\xffi"); /* not UTF-8, which is allowed */
    gw_kv_str_arr(b, "tokenizer.ggml.tokens", tokens, 6);
    gw_kv_f32_arr(b, "tokenizer.ggml.scores", scores, 6);
    gw_kv_i32_arr(b, "tokenizer.ggml.token_type", types, 6);

    /* [[1, 2], [], [3]] as u16 arrays */
    gw_key(b, "test.nested", GGUF_VT_ARR);
    gw_arr(b, GGUF_VT_ARR, 3);
    gw_arr(b, GGUF_VT_U16, 2);
    gw_u16(b, 1);
    gw_u16(b, 2);
    gw_arr(b, GGUF_VT_U16, 0);
    gw_arr(b, GGUF_VT_U16, 1);
    gw_u16(b, 3);

    /* [[["a"]]] */
    gw_key(b, "test.nested3", GGUF_VT_ARR);
    gw_arr(b, GGUF_VT_ARR, 1);
    gw_arr(b, GGUF_VT_ARR, 1);
    gw_arr(b, GGUF_VT_STR, 1);
    gw_str(b, "a");

    gw_key(b, "test.bools", GGUF_VT_ARR);
    gw_arr(b, GGUF_VT_BOOL, 3);
    gw_u8(b, 1);
    gw_u8(b, 0);
    gw_u8(b, 1);

    uint64_t off = 0;
    for (uint64_t i = 0; i < n_t; i++) {
        gw_tensor_info(b, ts[i].name, ts[i].n_dims, ts[i].ne, ts[i].type, off);
        off += (ts[i].nbytes + align - 1) / align * align;
    }
    gw_pad(b, align);
    for (uint64_t i = 0; i < n_t; i++) {
        for (uint64_t j = 0; j < ts[i].nbytes; j++)
            gw_u8(b, (uint8_t)j);
        if (i + 1 < n_t)
            gw_pad(b, align);
    }
}
