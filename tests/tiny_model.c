#include "tiny_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "half.h"

enum { TM_HEADS = 4, TM_KV_HEADS = 2, TM_CTX = 64, TM_ALIGN = 32 };

void tm_dims(uint32_t wtype, int *dim, int *ffn)
{
    /* every row length must hold whole blocks: K-quant rows are 256 long */
    const bool k = gguf_type_block_elems(wtype) == 256;
    *dim = k ? 256 : 32;
    *ffn = k ? 256 : 64;
}

static const char *const vocab[] = {
    "<unk>",
    "<s>",
    "</s>",
    "\xe2\x96\x81",
    "\xe2\x96\x81O",
    "\xe2\x96\x81Once",
    "\xe2\x96\x81up",
    "on",
    "\xe2\x96\x81\x61",
    "\xe2\x96\x81time",
    "n",
    "c",
    "e",
    "O",
    "u",
    "p",
    "o",
    "a",
    "t",
    "i",
    "m",
    "<0x0A>",
    "<0xC3>",
    "<0xA9>",
};
enum { TM_VOCAB = sizeof vocab / sizeof vocab[0] };

static const char *const per_layer[9] = { "attn_norm", "attn_q",      "attn_k",
                                          "attn_v",    "attn_output", "ffn_norm",
                                          "ffn_gate",  "ffn_up",      "ffn_down" };

typedef struct tdesc {
    char name[64];
    uint64_t ne[2];
    uint32_t n_dims, type;
} tdesc;

static int describe(const tm_opts *o, tdesc *t, int cap)
{
    int n = 0, layers = o->n_layers > 0 ? o->n_layers : 1, dim, ffn;
    const uint32_t w = o->wtype;
    tm_dims(w, &dim, &ffn);
#define ADD(nm, d0, d1, nd, ty)                                                                    \
    do {                                                                                           \
        if (n < cap) {                                                                             \
            snprintf(t[n].name, sizeof t[n].name, "%s", nm);                                       \
            t[n].ne[0] = (d0);                                                                     \
            t[n].ne[1] = (d1);                                                                     \
            t[n].n_dims = (nd);                                                                    \
            t[n].type = (ty);                                                                      \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)
    ADD("token_embd.weight", dim, TM_VOCAB, 2, w);
    ADD("output_norm.weight", dim, 1, 1, GGUF_T_F32);
    if (!o->tied)
        ADD("output.weight", dim, TM_VOCAB, 2, w);
    const int hd = dim / TM_HEADS, kv = TM_KV_HEADS * hd;
    for (int l = 0; l < layers; l++) {
        const uint64_t shape[9][2] = { { dim, 1 },   { dim, dim }, { dim, kv },
                                       { dim, kv },  { dim, dim }, { dim, 1 },
                                       { dim, ffn }, { dim, ffn }, { ffn, dim } };
        for (int i = 0; i < 9; i++) {
            char nm[64];
            snprintf(nm, sizeof nm, "blk.%d.%s.weight", l, per_layer[i]);
            bool vec = shape[i][1] == 1;
            ADD(nm, shape[i][0], shape[i][1], vec ? 1 : 2, vec ? GGUF_T_F32 : w);
        }
    }
#undef ADD
    return n;
}

const char *tm_tensor_name(int i)
{
    static tdesc t[TM_N_TENSORS];
    tm_opts o = { 0 };
    int n = describe(&o, t, TM_N_TENSORS);
    return i >= 0 && i < n ? t[i].name : NULL;
}

int tm_n_tensors(const tm_opts *o)
{
    return describe(o, NULL, 0);
}

static uint64_t tensor_bytes(const tdesc *t)
{
    size_t be = gguf_type_block_elems(t->type), bb = gguf_type_block_bytes(t->type);
    if (!be)
        return 0;
    return (t->ne[0] + be - 1) / be * bb * t->ne[1];
}

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Where a quantized block keeps its F16 scale d and its min (-1: none), and
 * the d that keeps |weights| below about 0.5 for random quants and scales. */
typedef struct scale_pos {
    uint32_t type;
    int d_at, m_at;
    float d;
} scale_pos;

static const scale_pos scale_table[] = {
    { GGUF_T_Q8_0, 0, -1, 0.01f },     { GGUF_T_Q4_0, 0, -1, 0.01f },
    { GGUF_T_Q4_1, 0, 2, 0.01f },      { GGUF_T_Q5_0, 0, -1, 0.01f },
    { GGUF_T_Q5_1, 0, 2, 0.01f },      { GGUF_T_IQ4_NL, 0, -1, 0.004f },
    { GGUF_T_Q2_K, 80, 82, 0.01f },    { GGUF_T_Q3_K, 108, -1, 0.004f },
    { GGUF_T_Q4_K, 0, 2, 0.0005f },    { GGUF_T_Q5_K, 0, 2, 0.00025f },
    { GGUF_T_Q6_K, 208, -1, 0.0001f }, { GGUF_T_IQ4_XS, 0, -1, 0.0001f },
};

static const scale_pos *find_scale(uint32_t type)
{
    for (size_t i = 0; i < sizeof scale_table / sizeof scale_table[0]; i++)
        if (scale_table[i].type == type)
            return &scale_table[i];
    return NULL;
}

static void put_u16_at(gw_buf *b, size_t at, uint16_t v)
{
    b->data[at] = (uint8_t)v;
    b->data[at + 1] = (uint8_t)(v >> 8);
}

/* Small, well-formed values for each type, so a forward pass is finite
 * (unless bad_scale asks for a NaN or inf scale). */
static void tensor_data(gw_buf *b, const tdesc *t, uint32_t seed, bool bad_scale, uint16_t bad_bits)
{
    uint64_t nb = tensor_bytes(t), w = 0;
    bool norm = strstr(t->name, "norm") != NULL;
    const scale_pos *sp = find_scale(t->type);
    while (w < nb) {
        float v = norm ? 1.0f : ((float)(lcg(&seed) % 1000) - 500.0f) / 2000.0f;
        if (sp) {
            /* random quants and sub-block scales, then d (and min) set */
            const size_t bb = gguf_type_block_bytes(t->type), start = b->len;
            const uint64_t blk = w / bb;
            if (t->type == GGUF_T_Q8_0 || t->type == GGUF_T_Q4_0) {
                gw_u16(b, gl_f32_to_f16(sp->d)); /* the bytes of the first tiny models */
                for (size_t i = 2; i < bb; i++)
                    gw_u8(b, (uint8_t)lcg(&seed));
            } else {
                /* layer matrices small next to the embedding, as in trained
                 * models: the logits then hardly move when a backend's float
                 * kernels round an activation quant the other way */
                const float d = strncmp(t->name, "blk.", 4) == 0 ? sp->d * 0.1f : sp->d;
                for (size_t i = 0; i < bb; i++)
                    gw_u8(b, (uint8_t)lcg(&seed));
                put_u16_at(b, start + (size_t)sp->d_at, gl_f32_to_f16(d));
                if (sp->m_at >= 0)
                    put_u16_at(b, start + (size_t)sp->m_at, gl_f32_to_f16(d * 0.5f));
            }
            if (bad_scale && blk == 0)
                put_u16_at(b, start + (size_t)sp->d_at, bad_bits);
            if (bad_scale && blk == 1 && sp->m_at >= 0)
                put_u16_at(b, start + (size_t)sp->m_at, bad_bits);
            w += bb;
            continue;
        }
        switch (t->type) {
        case GGUF_T_F32:
            gw_f32(b, v);
            w += 4;
            break;
        case GGUF_T_F16:
            gw_u16(b, gl_f32_to_f16(v));
            w += 2;
            break;
        case GGUF_T_BF16:
            gw_u16(b, (uint16_t)(gl_bits_from_f32(v) >> 16));
            w += 2;
            break;
        default: /* any other type: arbitrary bytes */
            gw_u8(b, (uint8_t)lcg(&seed));
            w += 1;
            break;
        }
    }
}

/* Records field f of another buffer, shifted by base, in b's field list. */
static void copy_field(gw_buf *b, const gw_field *f, size_t base)
{
    size_t save = b->len;
    if (f->width == 8)
        gw_field64(b, 0, (enum gw_kind)f->kind, f->what);
    else
        gw_field32(b, 0, (enum gw_kind)f->kind, f->what);
    b->len = save;
    b->fields[b->n_fields - 1].off = f->off + base;
}

static bool keep_key(const tm_opts *o, const char *key)
{
    return !o->drop_key || strcmp(o->drop_key, key) != 0;
}

static void kv_int(gw_buf *b, const tm_opts *o, const char *key, uint32_t v)
{
    if (!keep_key(o, key))
        return;
    if (o->wrong_type_key && strcmp(o->wrong_type_key, key) == 0)
        gw_kv_str(b, key, "32");
    else if (o->override_key && strcmp(o->override_key, key) == 0)
        gw_kv_i64(b, key, o->override_val);
    else
        gw_kv_u32(b, key, v);
}

static void kv_f32(gw_buf *b, const tm_opts *o, const char *key, float v)
{
    if (!keep_key(o, key))
        return;
    if (o->wrong_type_key && strcmp(o->wrong_type_key, key) == 0)
        gw_kv_str(b, key, "1");
    else if (o->override_key && strcmp(o->override_key, key) == 0)
        gw_kv_f32(b, key, (float)o->override_val);
    else
        gw_kv_f32(b, key, v);
}

void tm_build(gw_buf *b, const tm_opts *opts)
{
    tm_opts o = opts ? *opts : (tm_opts){ 0 };
    int layers = o.n_layers > 0 ? o.n_layers : 1, dim, ffn;
    tm_dims(o.wtype, &dim, &ffn);
    int n = describe(&o, NULL, 0);
    tdesc *t = calloc((size_t)n, sizeof *t);
    if (!t)
        abort();
    describe(&o, t, n);
    for (int i = 0; i < n; i++) {
        if (o.bad_shape_tensor == i + 1) /* one more block: the reader accepts it */
            t[i].ne[0] += gguf_type_block_elems(t[i].type);
        if (o.bad_type_tensor == i + 1)
            t[i].type = o.bad_type;
    }

    /* Count the kv pairs by writing them into a scratch buffer first. */
    gw_buf kvs;
    gw_init(&kvs);
    int n_kv = 0;
#define COUNTED(stmt)                                                                              \
    do {                                                                                           \
        size_t before = kvs.len;                                                                   \
        stmt;                                                                                      \
        n_kv += kvs.len != before;                                                                 \
    } while (0)
    float scores[TM_VOCAB];
    int32_t types[TM_VOCAB];
    for (int i = 0; i < TM_VOCAB; i++) {
        scores[i] = -(float)i;
        types[i] = i == 0 ? 2 : i < 3 ? 3 : strncmp(vocab[i], "<0x", 3) == 0 ? 6 : 1;
    }
    if (keep_key(&o, "general.architecture"))
        COUNTED(gw_kv_str(&kvs, "general.architecture", "llama"));
    COUNTED(gw_kv_str(&kvs, "general.name", "tiny"));
    COUNTED(kv_int(&kvs, &o, "llama.context_length", TM_CTX));
    COUNTED(kv_int(&kvs, &o, "llama.embedding_length", dim));
    COUNTED(kv_int(&kvs, &o, "llama.block_count", (uint32_t)layers));
    COUNTED(kv_int(&kvs, &o, "llama.feed_forward_length", ffn));
    COUNTED(kv_int(&kvs, &o, "llama.attention.head_count", TM_HEADS));
    COUNTED(kv_int(&kvs, &o, "llama.attention.head_count_kv", TM_KV_HEADS));
    COUNTED(kv_int(&kvs, &o, "llama.rope.dimension_count", dim / TM_HEADS));
    COUNTED(kv_f32(&kvs, &o, "llama.attention.layer_norm_rms_epsilon", 1e-5f));
    COUNTED(kv_f32(&kvs, &o, "llama.rope.freq_base", 10000.0f));
    if (keep_key(&o, "tokenizer.ggml.model"))
        COUNTED(gw_kv_str(&kvs, "tokenizer.ggml.model", "llama"));
    if (keep_key(&o, "tokenizer.ggml.tokens"))
        COUNTED(gw_kv_str_arr(&kvs, "tokenizer.ggml.tokens", vocab, TM_VOCAB));
    COUNTED(gw_kv_f32_arr(&kvs, "tokenizer.ggml.scores", scores, TM_VOCAB));
    COUNTED(gw_kv_i32_arr(&kvs, "tokenizer.ggml.token_type", types, TM_VOCAB));
    COUNTED(kv_int(&kvs, &o, "tokenizer.ggml.bos_token_id", 1));
    COUNTED(kv_int(&kvs, &o, "tokenizer.ggml.eos_token_id", 2));
    COUNTED(kv_int(&kvs, &o, "tokenizer.ggml.unknown_token_id", 0));
    COUNTED(gw_kv_bool(&kvs, "tokenizer.ggml.add_bos_token", true));
#undef COUNTED

    int n_written = 0;
    for (int i = 0; i < n; i++)
        n_written += o.drop_tensor != i + 1;
    gw_header(b, 3, (uint64_t)n_written, (uint64_t)n_kv);
    /* Append the kv bytes; field records of the scratch buffer shift by the header. */
    size_t base = b->len;
    gw_bytes(b, kvs.data, kvs.len);
    for (size_t i = 0; i < kvs.n_fields; i++)
        copy_field(b, &kvs.fields[i], base);
    gw_free(&kvs);

    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        if (o.drop_tensor == i + 1)
            continue;
        gw_tensor_info(b, t[i].name, t[i].n_dims, t[i].ne, t[i].type, off);
        off += (tensor_bytes(&t[i]) + TM_ALIGN - 1) / TM_ALIGN * TM_ALIGN;
    }
    gw_pad(b, TM_ALIGN);
    for (int i = 0; i < n; i++) {
        if (o.drop_tensor == i + 1)
            continue;
        tensor_data(b, &t[i], 0x9e3779b9u * (uint32_t)(i + 1), o.bad_scale_tensor == i + 1,
                    o.bad_scale_bits);
        gw_pad(b, TM_ALIGN);
    }
    free(t);
}
