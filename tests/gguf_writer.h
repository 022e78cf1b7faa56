/* A tiny in-memory GGUF writer for tests and fuzz corpora.
 *
 * It writes bytes exactly as told, so it builds malformed files as easily as
 * valid ones. Every structural field it writes (magic, version, counts,
 * lengths, types, dimensions, offsets) is recorded in b->fields with its
 * offset and width, so a corpus generator can walk the fields of a valid
 * file and patch each one with hostile values. Allocation failure aborts:
 * this is test code. */
#ifndef GENLOOP_TESTS_GGUF_WRITER_H
#define GENLOOP_TESTS_GGUF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gw_kind {
    GW_F_MAGIC, /* 4 bytes "GGUF"                                   */
    GW_F_VERSION,
    GW_F_COUNT, /* n_tensors, n_kv, array element count             */
    GW_F_LEN,   /* string / key / tensor name length                */
    GW_F_VTYPE, /* kv value type or array element type              */
    GW_F_NDIMS,
    GW_F_DIM,
    GW_F_TTYPE,  /* tensor type                                      */
    GW_F_OFFSET, /* tensor data offset                               */
    GW_F_VALUE,  /* a scalar kv value (e.g. general.alignment)       */
};

typedef struct gw_field {
    size_t off;
    uint8_t width; /* 4 or 8 (the magic: 4) */
    uint8_t kind;  /* enum gw_kind */
    const char *what;
} gw_field;

typedef struct gw_buf {
    uint8_t *data;
    size_t len, cap;
    gw_field *fields;
    size_t n_fields, cap_fields;
} gw_buf;

void gw_init(gw_buf *b);
void gw_free(gw_buf *b);

/* Raw little-endian appends. */
void gw_bytes(gw_buf *b, const void *p, size_t n);
void gw_zeros(gw_buf *b, size_t n);
void gw_u8(gw_buf *b, uint8_t v);
void gw_u16(gw_buf *b, uint16_t v);
void gw_u32(gw_buf *b, uint32_t v);
void gw_u64(gw_buf *b, uint64_t v);
void gw_f32(gw_buf *b, float v);
void gw_f64(gw_buf *b, double v);
/* Appends and records a structural field. */
void gw_field32(gw_buf *b, uint32_t v, enum gw_kind kind, const char *what);
void gw_field64(gw_buf *b, uint64_t v, enum gw_kind kind, const char *what);

/* GGUF building blocks. */
void gw_header(gw_buf *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv);
void gw_str(gw_buf *b, const char *s);
void gw_strn(gw_buf *b, const void *s, uint64_t len); /* writes len, then len bytes of s */
void gw_key(gw_buf *b, const char *key, uint32_t vtype);
/* Array header after a key of type ARR, or as an element of an outer array. */
void gw_arr(gw_buf *b, uint32_t elem_type, uint64_t n);
void gw_kv_u8(gw_buf *b, const char *key, uint8_t v);
void gw_kv_i8(gw_buf *b, const char *key, int8_t v);
void gw_kv_u16(gw_buf *b, const char *key, uint16_t v);
void gw_kv_i16(gw_buf *b, const char *key, int16_t v);
void gw_kv_u32(gw_buf *b, const char *key, uint32_t v);
void gw_kv_i32(gw_buf *b, const char *key, int32_t v);
void gw_kv_u64(gw_buf *b, const char *key, uint64_t v);
void gw_kv_i64(gw_buf *b, const char *key, int64_t v);
void gw_kv_f32(gw_buf *b, const char *key, float v);
void gw_kv_f64(gw_buf *b, const char *key, double v);
void gw_kv_bool(gw_buf *b, const char *key, bool v);
void gw_kv_str(gw_buf *b, const char *key, const char *v);
void gw_kv_str_arr(gw_buf *b, const char *key, const char *const *v, uint64_t n);
void gw_kv_f32_arr(gw_buf *b, const char *key, const float *v, uint64_t n);
void gw_kv_i32_arr(gw_buf *b, const char *key, const int32_t *v, uint64_t n);
/* ne has n_dims entries. */
void gw_tensor_info(gw_buf *b, const char *name, uint32_t n_dims, const uint64_t *ne,
                    uint32_t ttype, uint64_t offset);
/* Zero-pads to the next multiple of align (from the start of the file). */
void gw_pad(gw_buf *b, size_t align);

/* Editing. */
void gw_patch_u8(gw_buf *b, size_t off, uint8_t v);
void gw_patch_u32(gw_buf *b, size_t off, uint32_t v);
void gw_patch_u64(gw_buf *b, size_t off, uint64_t v);
/* Patches a recorded field with v (truncated to its width). */
void gw_patch_field(gw_buf *b, const gw_field *f, uint64_t v);
void gw_truncate(gw_buf *b, size_t len);
/* The first field of this kind whose label equals what, or NULL. */
const gw_field *gw_find_field(const gw_buf *b, enum gw_kind kind, const char *what);

/* An exact-size heap copy of n bytes of p, so AddressSanitizer catches any
 * read past its end. Free with free(). Never NULL (returns a 1-byte block
 * for n == 0, still flagged by ASan if read). */
uint8_t *gw_dup(const void *p, size_t n);

/* A small valid file exercising everything the reader handles: every value
 * type, string/numeric/nested arrays, general.alignment and three tensors
 * (F32 [4,3], F16 [8], Q8_0 [32,2]) whose data ends exactly at end of file,
 * so every strict prefix is invalid. Tensor data bytes are i & 0xff where i
 * is the byte index within that tensor. */
typedef struct gw_sample_opts {
    uint32_t version;   /* 0: 3 */
    uint32_t alignment; /* 0: no general.alignment key (reader uses 32) */
} gw_sample_opts;

void gw_build_sample(gw_buf *b, const gw_sample_opts *opts);

#endif
