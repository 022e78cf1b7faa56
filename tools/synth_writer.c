#include "synth_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantize_rows.h"

static void put(uint8_t **buf, size_t *len, size_t *cap, bool *failed, const void *p, size_t n)
{
    if (*len + n > *cap) {
        size_t nc = (*cap ? *cap * 2 : 4096) + n;
        uint8_t *nb = realloc(*buf, nc);
        if (!nb) {
            *failed = true;
            return;
        }
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
}

#define KV(p, n) put(&w->kv, &w->kv_len, &w->kv_cap, &w->failed, p, n)
#define TI(p, n) put(&w->ti, &w->ti_len, &w->ti_cap, &w->failed, p, n)

static void kv_string(sw_writer *w, const char *s)
{
    uint64_t n = strlen(s);
    KV(&n, 8);
    KV(s, n);
}

static void kv_key(sw_writer *w, const char *key, uint32_t type)
{
    kv_string(w, key);
    KV(&type, 4);
    w->n_kv++;
}

bool sw_open(sw_writer *w, const char *path)
{
    memset(w, 0, sizeof *w);
    w->align = 32;
    w->f = fopen(path, "wb");
    return w->f != NULL;
}

void sw_kv_str(sw_writer *w, const char *key, const char *v)
{
    kv_key(w, key, 8);
    kv_string(w, v);
}

void sw_kv_u32(sw_writer *w, const char *key, uint32_t v)
{
    kv_key(w, key, 4);
    KV(&v, 4);
}

void sw_kv_f32(sw_writer *w, const char *key, float v)
{
    kv_key(w, key, 6);
    KV(&v, 4);
}

void sw_kv_bool(sw_writer *w, const char *key, bool v)
{
    uint8_t b = v;
    kv_key(w, key, 7);
    KV(&b, 1);
}

static void arr_head(sw_writer *w, const char *key, uint32_t elem, int n)
{
    uint64_t count = (uint64_t)n;
    kv_key(w, key, 9);
    KV(&elem, 4);
    KV(&count, 8);
}

void sw_kv_str_array(sw_writer *w, const char *key, const char *const *v, int n)
{
    arr_head(w, key, 8, n);
    for (int i = 0; i < n; i++)
        kv_string(w, v[i]);
}

void sw_kv_f32_array(sw_writer *w, const char *key, const float *v, int n)
{
    arr_head(w, key, 6, n);
    KV(v, (size_t)n * 4);
}

void sw_kv_i32_array(sw_writer *w, const char *key, const int32_t *v, int n)
{
    arr_head(w, key, 5, n);
    KV(v, (size_t)n * 4);
}

void sw_kv_raw(sw_writer *w, const void *kv, size_t n)
{
    KV(kv, n);
    w->n_kv++;
}

void sw_tensor_info_nd(sw_writer *w, const char *name, size_t name_len, uint32_t n_dims,
                       const uint64_t *ne, uint32_t type)
{
    uint64_t n = name_len, rows = 1;
    TI(&n, 8);
    TI(name, n);
    TI(&n_dims, 4);
    for (uint32_t d = 0; d < n_dims; d++) {
        TI(&ne[d], 8);
        rows *= d ? ne[d] : 1;
    }
    TI(&type, 4);
    uint64_t off = w->data_size;
    TI(&off, 8);
    const uint64_t bytes = gl_quant_row_bytes(type, (int64_t)ne[0]) * rows;
    w->data_size += (bytes + w->align - 1) / w->align * w->align;
    w->n_tensors++;
}

void sw_tensor_info(sw_writer *w, const char *name, int ne0, int ne1, int n_dims, int type)
{
    const uint64_t ne[2] = { (uint64_t)ne0, (uint64_t)ne1 };
    sw_tensor_info_nd(w, name, strlen(name), (uint32_t)n_dims, ne, (uint32_t)type);
}

static bool out(sw_writer *w, const void *p, size_t n)
{
    if (fwrite(p, 1, n, w->f) != n)
        w->failed = true;
    return !w->failed;
}

static void pad(sw_writer *w, uint64_t at)
{
    static const uint8_t zeros[64];
    for (uint64_t n = (w->align - at % w->align) % w->align; n > 0;) {
        const size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        out(w, zeros, k);
        n -= k;
    }
}

bool sw_begin_data(sw_writer *w)
{
    const uint32_t version = 3;
    out(w, "GGUF", 4);
    out(w, &version, 4);
    out(w, &w->n_tensors, 8);
    out(w, &w->n_kv, 8);
    out(w, w->kv, w->kv_len);
    out(w, w->ti, w->ti_len);
    uint64_t at = 24 + w->kv_len + w->ti_len;
    pad(w, at);
    return !w->failed;
}

bool sw_tensor_row(sw_writer *w, int type, const float *x, int n)
{
    uint8_t buf[65536];
    const size_t bytes = gl_quant_row_bytes((uint32_t)type, n);
    uint8_t *dst = bytes <= sizeof buf ? buf : malloc(bytes);
    if (!dst || !bytes)
        return w->failed = true, false;
    gl_quantize_row((uint32_t)type, x, dst, n);
    sw_tensor_bytes(w, dst, bytes);
    if (dst != buf)
        free(dst);
    return !w->failed;
}

bool sw_tensor_bytes(sw_writer *w, const void *p, size_t n)
{
    out(w, p, n);
    w->written += n;
    return !w->failed;
}

bool sw_end_tensor(sw_writer *w)
{
    pad(w, w->written);
    w->written = 0;
    return !w->failed;
}

bool sw_close(sw_writer *w)
{
    bool ok = !w->failed;
    if (w->f && fclose(w->f) != 0)
        ok = false;
    free(w->kv);
    free(w->ti);
    memset(w, 0, sizeof *w);
    return ok;
}
