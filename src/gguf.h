/* GGUF reader (versions 2 and 3) over a read-only memory map.
 *
 * The file is untrusted: gguf_parse validates every count, length, offset,
 * type and dimension product before anything points into the buffer, so
 * after a successful parse every pointer below is in bounds. Nothing is
 * copied: strings and tensor data point into the mapping. */
#ifndef GENLOOP_SRC_GGUF_H
#define GENLOOP_SRC_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "genloop.h"

enum gguf_vtype {
    GGUF_VT_U8 = 0,
    GGUF_VT_I8 = 1,
    GGUF_VT_U16 = 2,
    GGUF_VT_I16 = 3,
    GGUF_VT_U32 = 4,
    GGUF_VT_I32 = 5,
    GGUF_VT_F32 = 6,
    GGUF_VT_BOOL = 7,
    GGUF_VT_STR = 8,
    GGUF_VT_ARR = 9,
    GGUF_VT_U64 = 10,
    GGUF_VT_I64 = 11,
    GGUF_VT_F64 = 12,
    GGUF_VT_COUNT
};

/* Tensor types (ggml numbering); the ones genloop computes with. */
enum gguf_ttype {
    GGUF_T_F32 = 0,
    GGUF_T_F16 = 1,
    GGUF_T_Q4_0 = 2,
    GGUF_T_Q4_1 = 3,
    GGUF_T_Q5_0 = 6,
    GGUF_T_Q5_1 = 7,
    GGUF_T_Q8_0 = 8,
    GGUF_T_Q8_1 = 9,
    GGUF_T_Q2_K = 10,
    GGUF_T_Q3_K = 11,
    GGUF_T_Q4_K = 12,
    GGUF_T_Q5_K = 13,
    GGUF_T_Q6_K = 14,
    GGUF_T_Q8_K = 15,
    GGUF_T_IQ4_NL = 20,
    GGUF_T_IQ4_XS = 23,
    GGUF_T_BF16 = 30,
    GGUF_T_COUNT = 40
};

#define GGUF_MAX_DIMS 4
/* Deepest nesting of arrays of arrays that parse accepts (a plain array is 1). */
#define GGUF_MAX_ARR_DEPTH 8

/* A length-counted string inside the file (not NUL-terminated). */
typedef struct gguf_str {
    const char *ptr;
    uint64_t len;
} gguf_str;

typedef struct gguf_kv {
    gguf_str key;
    uint32_t type;       /* enum gguf_vtype                                    */
    uint32_t arr_type;   /* element type when type == GGUF_VT_ARR              */
    uint64_t arr_n;      /* element count when type == GGUF_VT_ARR             */
    const uint8_t *data; /* the value; for arrays the first element          */
    uint64_t offset;     /* file offset of the value, for error messages      */
} gguf_kv;

typedef struct gguf_tensor {
    gguf_str name;
    uint32_t n_dims;
    uint64_t ne[GGUF_MAX_DIMS]; /* ne[0] is the contiguous (row) dimension; unused = 1 */
    uint32_t type;              /* enum gguf_ttype                               */
    uint64_t offset;            /* relative to the data section                  */
    uint64_t nbytes;
    const uint8_t *data; /* in the mapping, in bounds                     */
} gguf_tensor;

typedef struct gguf_file {
    const uint8_t *base;
    size_t size;
    uint32_t version;
    uint64_t n_kv;
    gguf_kv *kv;
    uint64_t n_tensors;
    gguf_tensor *tensors;
    uint64_t alignment;
    uint64_t data_offset;
} gguf_file;

/* Element size and block size of a tensor type; 0 when genloop does not
 * know the type. */
size_t gguf_type_block_bytes(uint32_t ttype);
size_t gguf_type_block_elems(uint32_t ttype);
const char *gguf_type_name(uint32_t ttype);
/* "u8", "string", "array", ...; "invalid" for ids >= GGUF_VT_COUNT. */
const char *gguf_vtype_name(uint32_t vtype);
/* Encoded size of a scalar value type; 0 for strings, arrays and invalid ids. */
size_t gguf_vtype_size(uint32_t vtype);

/* Parses buf (size bytes). On failure fills err with what and where (the
 * byte offset) and leaves g empty. g's arrays are heap-allocated. */
gl_status gguf_parse(gguf_file *g, const uint8_t *buf, size_t size, gl_error *err);
void gguf_free(gguf_file *g);

const gguf_kv *gguf_find(const gguf_file *g, const char *key);
const gguf_tensor *gguf_find_tensor(const gguf_file *g, const char *name);

/* Typed getters: return false when the key is missing or has another type.
 * Integer getters accept any integer type whose value fits. */
bool gguf_get_i64(const gguf_file *g, const char *key, int64_t *out);
bool gguf_get_f32(const gguf_file *g, const char *key, float *out);
bool gguf_get_bool(const gguf_file *g, const char *key, bool *out);
bool gguf_get_str(const gguf_file *g, const char *key, gguf_str *out);

bool gguf_str_eq(gguf_str s, const char *cstr);

/* Iterates the elements of a string array kv: *pos starts at 0 and is
 * advanced; returns false at the end. The array was validated by parse. */
bool gguf_arr_next_str(const gguf_kv *kv, uint64_t *pos, const uint8_t **cursor, gguf_str *out);
/* Reads element i of a numeric array kv as double (false if out of range). */
bool gguf_arr_get_num(const gguf_kv *kv, uint64_t i, double *out);

/* Maps a file read-only. Fails with a message for missing, unreadable,
 * directory or empty files. */
typedef struct gl_mapping {
    const uint8_t *data;
    size_t size;
} gl_mapping;

gl_status gl_map_file(gl_mapping *m, const char *path, gl_error *err);
void gl_unmap_file(gl_mapping *m);

#endif
