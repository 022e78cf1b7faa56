#include "synth_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "quant.h"

enum { ALIGN = 32 };

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

static uint64_t row_bytes(int type, int n)
{
    switch (type) {
    case SW_F32: return (uint64_t)n * 4;
    case SW_F16: return (uint64_t)n * 2;
    case SW_Q8_0: return (uint64_t)n / QK8_0 * sizeof(block_q8_0);
    default: return (uint64_t)n / QK4_0 * sizeof(block_q4_0);
    }
}

void sw_tensor_info(sw_writer *w, const char *name, int ne0, int ne1, int n_dims, int type)
{
    uint64_t n = strlen(name);
    TI(&n, 8);
    TI(name, n);
    uint32_t nd = (uint32_t)n_dims, ty = (uint32_t)type;
    TI(&nd, 4);
    uint64_t d0 = (uint64_t)ne0, d1 = (uint64_t)ne1;
    TI(&d0, 8);
    if (n_dims > 1)
        TI(&d1, 8);
    TI(&ty, 4);
    uint64_t off = w->data_size;
    TI(&off, 8);
    uint64_t bytes = row_bytes(type, ne0) * (uint64_t)ne1;
    w->data_size += (bytes + ALIGN - 1) / ALIGN * ALIGN;
    w->n_tensors++;
}

static bool out(sw_writer *w, const void *p, size_t n)
{
    if (fwrite(p, 1, n, w->f) != n)
        w->failed = true;
    return !w->failed;
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
    static const uint8_t zeros[ALIGN];
    out(w, zeros, (size_t)((ALIGN - at % ALIGN) % ALIGN));
    return !w->failed;
}

/* GGUF's reference quantizers (round half away from zero). */
static void q8_0_row(const float *x, block_q8_0 *y, int n)
{
    for (int b = 0; b < n / QK8_0; b++) {
        float amax = 0;
        for (int j = 0; j < QK8_0; j++)
            amax = fmaxf(amax, fabsf(x[b * QK8_0 + j]));
        const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        y[b].d = gl_f32_to_f16(d);
        for (int j = 0; j < QK8_0; j++)
            y[b].qs[j] = (int8_t)roundf(x[b * QK8_0 + j] * id);
    }
}

static void q4_0_row(const float *x, block_q4_0 *y, int n)
{
    for (int b = 0; b < n / QK4_0; b++) {
        const float *xb = x + b * QK4_0;
        float amax = 0, max = 0;
        for (int j = 0; j < QK4_0; j++)
            if (fabsf(xb[j]) > amax) {
                amax = fabsf(xb[j]);
                max = xb[j];
            }
        const float d = max / -8.0f, id = d ? 1.0f / d : 0.0f;
        y[b].d = gl_f32_to_f16(d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            int lo = (int)(xb[j] * id + 8.5f), hi = (int)(xb[j + QK4_0 / 2] * id + 8.5f);
            lo = lo > 15 ? 15 : lo;
            hi = hi > 15 ? 15 : hi;
            y[b].qs[j] = (uint8_t)(lo | (hi << 4));
        }
    }
}

bool sw_tensor_row(sw_writer *w, int type, const float *x, int n)
{
    uint8_t buf[65536];
    const size_t bytes = (size_t)row_bytes(type, n);
    uint8_t *dst = bytes <= sizeof buf ? buf : malloc(bytes);
    if (!dst)
        return w->failed = true, false;
    switch (type) {
    case SW_F32: memcpy(dst, x, bytes); break;
    case SW_F16:
        for (int i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = gl_f32_to_f16(x[i]);
        break;
    case SW_Q8_0: q8_0_row(x, (block_q8_0 *)dst, n); break;
    default: q4_0_row(x, (block_q4_0 *)dst, n); break;
    }
    out(w, dst, bytes);
    w->written += bytes;
    if (dst != buf)
        free(dst);
    return !w->failed;
}

bool sw_end_tensor(sw_writer *w)
{
    static const uint8_t zeros[ALIGN];
    out(w, zeros, (size_t)((ALIGN - w->written % ALIGN) % ALIGN));
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
