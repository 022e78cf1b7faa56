/* GGUF reader: any bytes. Whatever parse accepts must be safe to walk with
 * every accessor; whatever it rejects must come with a one-line message
 * naming an offset, and leave nothing allocated. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so ASan sees any read past the end. */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    gguf_file g;
    gl_error err = { 0 };
    gl_status st = gguf_parse(&g, buf, size, &err);
    if (st != GL_OK) {
        if (g.kv || g.tensors || g.n_kv || g.n_tensors)
            fz_die("failed parse left state behind");
        if (strncmp(err.msg, "gguf: ", 6) != 0 || strchr(err.msg, '\n'))
            fz_die("bad message: %s", err.msg);
        if (st == GL_ERR_FORMAT && !strstr(err.msg, "offset"))
            fz_die("message names no offset: %s", err.msg);
        free(buf);
        return 0;
    }
    for (uint64_t i = 0; i < g.n_kv; i++) {
        const gguf_kv *kv = &g.kv[i];
        char key[256];
        size_t kl = kv->key.len < sizeof key - 1 ? (size_t)kv->key.len : sizeof key - 1;
        memcpy(key, kv->key.ptr, kl);
        key[kl] = '\0';
        int64_t iv;
        float fv;
        bool bv;
        gguf_str sv;
        gguf_get_i64(&g, key, &iv);
        gguf_get_f32(&g, key, &fv);
        gguf_get_bool(&g, key, &bv);
        if (gguf_get_str(&g, key, &sv) && sv.len)
            sink ^= (uint8_t)(sv.ptr[0] ^ sv.ptr[sv.len - 1]);
        if (kv->type == GGUF_VT_ARR && kv->arr_type == GGUF_VT_STR) {
            uint64_t pos = 0;
            const uint8_t *cur = NULL;
            while (gguf_arr_next_str(kv, &pos, &cur, &sv))
                if (sv.len)
                    sink ^= (uint8_t)(sv.ptr[0] ^ sv.ptr[sv.len - 1]);
            if (pos != kv->arr_n)
                fz_die("string array walk stopped at %llu of %llu", (unsigned long long)pos,
                       (unsigned long long)kv->arr_n);
        } else if (kv->type == GGUF_VT_ARR) {
            double d;
            for (uint64_t j = 0; j < kv->arr_n; j++)
                gguf_arr_get_num(kv, j, &d);
        }
    }
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const gguf_tensor *t = &g.tensors[i];
        if (t->data < buf || t->nbytes > size || t->data + t->nbytes > buf + size)
            fz_die("tensor %llu out of bounds", (unsigned long long)i);
        if (t->nbytes)
            sink ^= (uint8_t)(t->data[0] ^ t->data[t->nbytes - 1]);
        gguf_find_tensor(&g, "token_embd.weight");
    }
    gguf_free(&g);
    free(buf);
    return 0;
}
