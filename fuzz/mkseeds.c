/* Writes the seed corpora of the fuzz targets into OUTDIR/<target>/:
 *   gguf:      the gguf_writer sample (v2, v3, aligned), the tiny models, a
 *              handful of hostile edits of them, and every ../shared GGUF
 *              shrunk to a few KB (its metadata with arrays cut to 64
 *              entries, its tensor infos with one block of data each);
 *   model:     the tiny llama model in every weight type (Q8_0, Q4_0 and the
 *              other 32-element types tied and untied, one and two layers;
 *              the K-quants 256 wide, also with a NaN scale), plus the
 *              shrunk ../shared models (K-quant and IQ4 mixes included);
 *   tokenizer: the reference tokenizer test strings of ../shared, for every
 *              vocabulary, plus invalid UTF-8;
 *   detok:     the reference token ids of ../shared, plus odd ids.
 * Nothing is kept in the repository: CI and tools/test-hardening.sh
 * generate the seeds before fuzzing.
 *
 * usage: mkseeds OUTDIR */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gguf.h"
#include "gguf_writer.h"
#include "shared_data.h"
#include "tiny_model.h"

static const char *outdir;
static int n_written;

static void put(const char *target, const char *name, const void *data, size_t n)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", outdir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    n_written++;
}

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(sz > 0 ? (size_t)sz + 1 : 1);
    if (!p || fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        fclose(f);
        free(p);
        return NULL;
    }
    fclose(f);
    p[sz] = 0;
    *n = (size_t)sz;
    return p;
}

/* Where kv i's bytes end: the next kv, the tensor infos, or the end. */
static const uint8_t *kv_end(const gguf_file *g, uint64_t i)
{
    if (i + 1 < g->n_kv)
        return (const uint8_t *)g->kv[i + 1].key.ptr - 8;
    if (g->n_tensors)
        return (const uint8_t *)g->tensors[0].name.ptr - 8;
    return g->base + g->size;
}

/* A real file cut down to a few KB: same keys and types, arrays cut to
 * their first 64 elements, every tensor one block of data. */
static void shrink(const uint8_t *p, size_t n, gw_buf *b)
{
    gguf_file g;
    gl_error err;
    if (gguf_parse(&g, p, n, &err)) {
        fprintf(stderr, "mkseeds: %s\n", err.msg);
        return;
    }
    gw_header(b, g.version, g.n_tensors, g.n_kv);
    for (uint64_t i = 0; i < g.n_kv; i++) {
        const gguf_kv *kv = &g.kv[i];
        const uint8_t *start = (const uint8_t *)kv->key.ptr - 8, *end = kv_end(&g, i);
        size_t esz = gguf_vtype_size(kv->arr_type);
        if (kv->type == GGUF_VT_ARR && kv->arr_n > 64 && (esz || kv->arr_type == GGUF_VT_STR)) {
            gw_strn(b, kv->key.ptr, kv->key.len);
            gw_field32(b, GGUF_VT_ARR, GW_F_VTYPE, "value type");
            gw_arr(b, kv->arr_type, 64);
            if (esz) {
                gw_bytes(b, kv->data, 64 * esz);
            } else {
                uint64_t pos = 0;
                const uint8_t *cur = NULL;
                gguf_str s;
                while (pos < 64 && gguf_arr_next_str(kv, &pos, &cur, &s))
                    gw_strn(b, s.ptr, s.len);
            }
        } else {
            gw_bytes(b, start, (size_t)(end - start));
        }
    }
    uint64_t off = 0;
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const gguf_tensor *t = &g.tensors[i];
        /* names are not NUL-terminated: written by hand, not gw_tensor_info */
        uint64_t ne[1] = { gguf_type_block_elems(t->type) };
        gw_strn(b, t->name.ptr, t->name.len);
        gw_field32(b, 1, GW_F_NDIMS, "n_dims");
        gw_field64(b, ne[0], GW_F_DIM, "dimension");
        gw_field32(b, t->type, GW_F_TTYPE, "tensor type");
        gw_field64(b, off, GW_F_OFFSET, "tensor offset");
        off += (gguf_type_block_bytes(t->type) + g.alignment - 1) / g.alignment * g.alignment;
    }
    gw_pad(b, (size_t)g.alignment);
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        for (size_t k = 0; k < gguf_type_block_bytes(g.tensors[i].type); k++)
            gw_u8(b, (uint8_t)(k * 7));
        gw_pad(b, (size_t)g.alignment);
    }
    gguf_free(&g);
}

static const char *const shared_ggufs[] = {
    "models/stories260K.gguf",
    "models/stories260K-F16.gguf",
    "models/stories260K-mixQ8_0.gguf",
    "models/stories260K-mixQ4_0.gguf",
    "models/synthetic-gpt2-tiny.gguf",
    "tokenizers/ggml-vocab-llama-spm.gguf",
    "tokenizers/ggml-vocab-gpt-2.gguf",
    /* the K-quant, IQ4 and legacy 4/5-bit mixes */
    "models/stories260K-pad256-Q4_K_M.gguf",
    "models/stories260K-pad256-Q3_K_M.gguf",
    "models/stories260K-pad256-Q2_K.gguf",
    "models/stories260K-pad256-IQ4_XS.gguf",
    "models/ktiny-Q5_K_M.gguf",
    "models/ktiny-Q6_K.gguf",
    "models/ktiny-Q5_1-pure.gguf",
    "models/ktiny-IQ4_NL-pure.gguf",
};

static void gguf_and_model_seeds(void)
{
    char name[256];
    gw_buf b;
    for (int v = 0; v < 3; v++) {
        gw_sample_opts o = { .version = v == 2 ? 2 : 3, .alignment = v == 1 ? 64 : 0 };
        gw_init(&b);
        gw_build_sample(&b, &o);
        snprintf(name, sizeof name, "sample-%d.gguf", v);
        put("gguf", name, b.data, b.len);
        /* a few hostile edits: each field of one kind patched */
        for (size_t i = 0; i < b.n_fields && v == 0; i += 7) {
            uint8_t *d = gw_dup(b.data, b.len);
            gw_buf p = b;
            p.data = d;
            gw_patch_field(&p, &b.fields[i], b.fields[i].width == 8 ? UINT64_MAX : 0xffffffffu);
            snprintf(name, sizeof name, "sample-patched-%zu.gguf", i);
            put("gguf", name, d, b.len);
            free(d);
        }
        gw_free(&b);
    }
    static const uint32_t wtypes[] = { GGUF_T_F32,  GGUF_T_F16,    GGUF_T_BF16,  GGUF_T_Q8_0,
                                       GGUF_T_Q4_0, GGUF_T_Q4_1,   GGUF_T_Q5_0,  GGUF_T_Q5_1,
                                       GGUF_T_Q2_K, GGUF_T_Q3_K,   GGUF_T_Q4_K,  GGUF_T_Q5_K,
                                       GGUF_T_Q6_K, GGUF_T_IQ4_NL, GGUF_T_IQ4_XS };
    for (size_t i = 0; i < sizeof wtypes / sizeof wtypes[0]; i++) {
        /* the unquantized ones are big, the 256-wide K-quant models too: one
         * variant each (K-quants: plus one with a NaN scale in attn_q) */
        bool quant = gguf_type_block_elems(wtypes[i]) == 32;
        for (int k = 0; k < (quant ? 3 : 1); k++) {
            gw_init(&b);
            tm_build(&b,
                     &(tm_opts){ .wtype = wtypes[i], .tied = k == 1, .n_layers = k == 2 ? 2 : 1 });
            snprintf(name, sizeof name, "tiny-%s-%d.gguf", gguf_type_name(wtypes[i]), k);
            put("model", name, b.data, b.len);
            if (k == 0)
                put("gguf", name, b.data, b.len);
            gw_free(&b);
        }
        if (gguf_type_block_elems(wtypes[i]) == 256) {
            gw_init(&b);
            tm_build(&b, &(tm_opts){ .wtype = wtypes[i],
                                     .bad_scale_tensor = 5 /* attn_q */,
                                     .bad_scale_bits = 0x7e00 /* NaN */ });
            snprintf(name, sizeof name, "tiny-%s-nanscale.gguf", gguf_type_name(wtypes[i]));
            put("model", name, b.data, b.len);
            gw_free(&b);
        }
    }
    for (size_t i = 0; i < sizeof shared_ggufs / sizeof shared_ggufs[0]; i++) {
        char path[1024];
        size_t n;
        if (!td_path(path, sizeof path, shared_ggufs[i])) {
            fprintf(stderr, "mkseeds: ../shared not found (set GENLOOP_SHARED): no shared seeds\n");
            return;
        }
        uint8_t *p = read_file(path, &n);
        if (!p) {
            fprintf(stderr, "mkseeds: cannot read %s\n", path);
            continue;
        }
        gw_init(&b);
        shrink(p, n, &b);
        const char *base = strrchr(shared_ggufs[i], '/') + 1;
        snprintf(name, sizeof name, "shrunk-%s", base);
        if (b.len) {
            put("gguf", name, b.data, b.len);
            if (strncmp(shared_ggufs[i], "models/", 7) == 0)
                put("model", name, b.data, b.len);
        }
        /* the first KB of the real file: a truncation */
        snprintf(name, sizeof name, "head-%s", base);
        put("gguf", name, p, n < 1024 ? n : 1024);
        gw_free(&b);
        free(p);
    }
}

/* Selector bytes: vocabulary index (mod the number loaded) and add_bos. */
static void text_seed(const char *name, uint8_t sel, const char *s, size_t n)
{
    char *buf = malloc(n + 1);
    buf[0] = (char)sel;
    memcpy(buf + 1, s, n);
    put("tokenizer", name, buf, n + 1);
    free(buf);
}

static void tokenizer_seeds(void)
{
    static const char *const extra[] = {
        "Once upon a time",
        "",
        " ",
        "\n\n\t  x",
        "\xff\xfe\xfd",
        "\xc3",
        "\xc3\xa9\xe2\x96",
        "\xed\xa0\x80 surrogate",
        "\xf4\x90\x80\x80 too big",
        "a\0b",
        "<s></s><unk>",
        "\xe2\x96\x81\xe2\x96\x81",
        "Hello, world! 123 'll 've",
    };
    char name[64];
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        for (uint8_t v = 0; v < 4; v++) {
            snprintf(name, sizeof name, "extra-%zu-%u", i, v);
            text_seed(name, (uint8_t)(v | (i & 1 ? 0x80 : 0)), extra[i],
                      i == 9 ? 3 : strlen(extra[i]));
        }
    static const char *const inps[] = { "tokenizers/ggml-vocab-llama-spm.gguf.inp",
                                        "tokenizers/ggml-vocab-gpt-2.gguf.inp" };
    for (size_t f = 0; f < 2; f++) {
        char path[1024];
        size_t n;
        if (!td_path(path, sizeof path, inps[f]))
            return;
        char *p = (char *)read_file(path, &n);
        if (!p)
            continue;
        const char *sep = "\n__ggml_vocab_test__\n";
        char *s = p;
        for (int k = 0;; k++) {
            char *end = strstr(s, sep);
            if (!end)
                break;
            snprintf(name, sizeof name, "ref%zu-%d", f, k);
            text_seed(name, (uint8_t)(f ? 3 : 2), s, (size_t)(end - s));
            s = end + strlen(sep);
        }
        free(p);
    }
}

static void detok_seeds(void)
{
    static const char *const outs[] = { "tokenizers/ggml-vocab-llama-spm.gguf.out",
                                        "tokenizers/ggml-vocab-gpt-2.gguf.out" };
    char name[64];
    uint8_t buf[4096];
    /* odd ids: negative, huge, BOS in the middle, byte tokens */
    const int32_t odd[] = { 1, -1, 21, 22, 23, 2, 5, INT32_MIN, INT32_MAX, 1, 3, 22, 22, 9 };
    buf[0] = 0;
    buf[1] = 0x80 | 63;
    memcpy(buf + 2, odd, sizeof odd);
    put("detok", "odd", buf, 2 + sizeof odd);
    for (size_t f = 0; f < 2; f++) {
        char path[1024];
        size_t n;
        if (!td_path(path, sizeof path, outs[f]))
            return;
        char *p = (char *)read_file(path, &n);
        if (!p)
            continue;
        int k = 0;
        for (char *line = strtok(p, "\n"); line; line = strtok(NULL, "\n"), k++) {
            size_t len = 2;
            buf[0] = (uint8_t)(f ? 3 : 2);
            buf[1] = (uint8_t)(k % 2 ? 5 + k % 60 : 64);
            for (char *s = line; *s && len + 4 <= sizeof buf;) {
                char *e;
                long v = strtol(s, &e, 10);
                if (e == s) {
                    s++;
                    continue;
                }
                int32_t id = (int32_t)v;
                memcpy(buf + len, &id, 4);
                len += 4;
                s = e;
            }
            snprintf(name, sizeof name, "ref%zu-%d", f, k);
            put("detok", name, buf, len);
        }
        free(p);
    }
}

/* fuzz_http: byte 0 picks the limits, the rest is what a client sends. */
static void http_seeds(void)
{
    static const char *const reqs[] = {
        "GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /v1/completions HTTP/1.1\r\nContent-Length: 49\r\n\r\n"
        "{\"prompt\":\"Once\",\"max_tokens\":4,\"stream\":true}",
        "POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer k\r\nConnection: close\r\n"
        "Content-Length: 80\r\n\r\n{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief\"},"
        "{\"role\":\"user\",\"content\":\"hi\"}]}",
        "POST /tokenize HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "\r\nGET /v1/models?x=1 HTTP/1.1\n\n",
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        char name[32], buf[512];
        const size_t n = strlen(reqs[i]);
        for (int sel = 0; sel < 8; sel += 4) {
            buf[0] = (char)sel;
            memcpy(buf + 1, reqs[i], n);
            snprintf(name, sizeof name, "req%zu-%d", i, sel);
            put("http", name, buf, n + 1);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkseeds OUTDIR\n");
        return 2;
    }
    outdir = argv[1];
    if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
        perror(outdir);
        return 1;
    }
    gguf_and_model_seeds();
    tokenizer_seeds();
    detok_seeds();
    http_seeds();
    printf("mkseeds: wrote %d seeds under %s\n", n_written, outdir);
    return 0;
}
