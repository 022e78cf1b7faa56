/* A streaming GGUF v3 writer for genloop synth and genloop quantize:
 * metadata and tensor infos are buffered, tensor data is streamed row by
 * row, so multi-gigabyte files need only one row of memory. */
#ifndef GENLOOP_TOOLS_SYNTH_WRITER_H
#define GENLOOP_TOOLS_SYNTH_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Tensor types are GGUF type ids (enum gguf_ttype); these are shorthands. */
enum { SW_F32 = 0, SW_F16 = 1, SW_Q4_0 = 2, SW_Q8_0 = 8 };

typedef struct sw_writer {
    FILE *f;
    uint8_t *kv;
    size_t kv_len, kv_cap;
    uint64_t n_kv;
    uint8_t *ti;
    size_t ti_len, ti_cap;
    uint64_t n_tensors;
    uint64_t data_size; /* bytes of tensor data so far (planned) */
    uint64_t written;   /* bytes of the current tensor written */
    uint32_t align;     /* data alignment, 32 unless set before sw_begin_data */
    bool failed;
} sw_writer;

bool sw_open(sw_writer *w, const char *path);
void sw_kv_str(sw_writer *w, const char *key, const char *v);
void sw_kv_u32(sw_writer *w, const char *key, uint32_t v);
void sw_kv_f32(sw_writer *w, const char *key, float v);
void sw_kv_bool(sw_writer *w, const char *key, bool v);
void sw_kv_str_array(sw_writer *w, const char *key, const char *const *v, int n);
void sw_kv_f32_array(sw_writer *w, const char *key, const float *v, int n);
void sw_kv_i32_array(sw_writer *w, const char *key, const int32_t *v, int n);
/* Appends one encoded key-value pair (key, value type, value) verbatim. */
void sw_kv_raw(sw_writer *w, const void *kv, size_t n);
/* Declares a tensor of ne0 x ne1 elements (n_dims 1 or 2). */
void sw_tensor_info(sw_writer *w, const char *name, int ne0, int ne1, int n_dims, int type);
/* Declares a tensor of any shape (ne[0..n_dims-1]); name need not end in NUL. */
void sw_tensor_info_nd(sw_writer *w, const char *name, size_t name_len, uint32_t n_dims,
                       const uint64_t *ne, uint32_t type);
/* Writes the header; tensors' data follows in declaration order. */
bool sw_begin_data(sw_writer *w);
/* Converts one row of n floats to type and appends it. */
bool sw_tensor_row(sw_writer *w, int type, const float *x, int n);
/* Appends n bytes of already encoded tensor data. */
bool sw_tensor_bytes(sw_writer *w, const void *p, size_t n);
/* Pads the current tensor to the alignment. */
bool sw_end_tensor(sw_writer *w);
bool sw_close(sw_writer *w);

#endif
