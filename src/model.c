/* Loading: map the file, parse GGUF, bind the tokenizer, then hand the
 * hyperparameters and tensors to the architecture's binder (llama-like
 * decoders: src/model_decoder.c; gpt2: src/model_gpt2.c), which checks each
 * tensor's shape and type with the helpers here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "context.h"
#include "model.h"
#include "tokenizer.h"

gl_model_params gl_model_default_params(void)
{
    return (gl_model_params){ .backend = NULL, .vocab_only = false };
}

static void copy_str(char *dst, size_t cap, gguf_str s)
{
    size_t n = s.len < cap - 1 ? (size_t)s.len : cap - 1;
    memcpy(dst, s.ptr, n);
    dst[n] = '\0';
}

/* Reads "<arch>.<suffix>" as an integer in [lo, hi]. */
gl_status gl_meta_int(const gl_model *m, const char *suffix, bool required, int64_t def, int64_t lo,
                      int64_t hi, int *out, gl_error *err)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    int64_t v = def;
    if (!gguf_get_i64(&m->gguf, key, &v)) {
        if (gguf_find(&m->gguf, key))
            return gl_fail(err, GL_ERR_FORMAT, "metadata key '%s' has the wrong type", key);
        if (required)
            return gl_fail(err, GL_ERR_FORMAT, "missing metadata key '%s'", key);
    }
    if (v < lo || v > hi)
        return gl_fail(err, GL_ERR_FORMAT, "metadata '%s' = %lld is out of range [%lld, %lld]", key,
                       (long long)v, (long long)lo, (long long)hi);
    *out = (int)v;
    return GL_OK;
}

gl_status gl_meta_float(const gl_model *m, const char *suffix, float def, float lo, float hi,
                        float *out, gl_error *err)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    float v = def;
    if (!gguf_get_f32(&m->gguf, key, &v) && gguf_find(&m->gguf, key))
        return gl_fail(err, GL_ERR_FORMAT, "metadata key '%s' has the wrong type", key);
    if (!(v >= lo && v <= hi))
        return gl_fail(err, GL_ERR_FORMAT, "metadata '%s' = %g is out of range [%g, %g]", key,
                       (double)v, (double)lo, (double)hi);
    *out = v;
    return GL_OK;
}

/* Records that the binder understood tensor t (see gl_bind_decoder). */
static void mark_used(gl_model *m, const gguf_tensor *t)
{
    if (m->tensor_used)
        m->tensor_used[t - m->gguf.tensors] = 1;
}

gl_status gl_bind_weight(gl_model *m, gl_weight *w, const char *name, int n_in, int n_out,
                         bool optional, gl_error *err)
{
    const gguf_tensor *t = gguf_find_tensor(&m->gguf, name);
    memset(w, 0, sizeof *w);
    if (!t) {
        if (optional)
            return GL_OK;
        return gl_fail(err, GL_ERR_FORMAT, "missing tensor '%s'", name);
    }
    mark_used(m, t);
    const uint64_t want[4] = { (uint64_t)n_in, (uint64_t)n_out, 1, 1 };
    if (t->ne[0] != want[0] || t->ne[1] != want[1] || t->ne[2] != 1 || t->ne[3] != 1)
        return gl_fail(err, GL_ERR_FORMAT,
                       "tensor '%s' has shape [%llu, %llu, %llu, %llu], expected [%d, %d]", name,
                       (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                       (unsigned long long)t->ne[2], (unsigned long long)t->ne[3], n_in, n_out);
    if (t->type >= GGUF_T_COUNT || !m->k.matmul[t->type] || !m->k.dequant[t->type])
        return gl_fail(err, GL_ERR_UNSUPPORTED,
                       "tensor '%s' has type %s, which genloop cannot "
                       "compute with (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, "
                       "Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS)",
                       name, gguf_type_name(t->type));
    /* the reader checked that rows hold whole blocks of the tensor's type;
     * the activation format's blocks must tile the row too */
    const int act = m->k.act_type[t->type];
    const int act_block = act == GL_ACT_Q8_K ? QK_K : act == GL_ACT_F32 ? 1 : QK8_0;
    if (n_in % act_block != 0)
        return gl_fail(err, GL_ERR_FORMAT,
                       "tensor '%s' (%s): row length %d is not a multiple of %d", name,
                       gguf_type_name(t->type), n_in, act_block);
    m->act_mask |= 1u << act;
    /* float rows are read as floats: a file may set general.alignment to 1 */
    const size_t align = t->type == GGUF_T_F32 ? 4 : gguf_type_block_elems(t->type) > 1 ? 1 : 2;
    if (((uintptr_t)t->data & (align - 1)) != 0)
        return gl_fail(err, GL_ERR_FORMAT,
                       "tensor '%s' data is not aligned to its %zu-byte elements", name, align);
    w->data = t->data;
    w->type = t->type;
    w->n_in = n_in;
    w->n_out = n_out;
    w->row_bytes = (size_t)(t->nbytes / (uint64_t)n_out);
    return GL_OK;
}

void gl_model_embed_row(const gl_model *m, const gl_kernels *k, int token, float *x, void *scratch)
{
    const gl_weight *e = &m->tok_embd;
    const void *row = (const char *)e->data + (size_t)token * e->row_bytes;
    if (m->embd_from_output) {
        const gl_weight *o = &m->output;
        k->layouts[o->layout].unpack(scratch, o->data, o->group_bytes, e->n_in, token);
        row = scratch;
    }
    k->dequant[e->type](row, x, e->n_in);
}

gl_status gl_bind_vector(gl_model *m, const float **out, const char *name, int n, gl_error *err)
{
    const gguf_tensor *t = gguf_find_tensor(&m->gguf, name);
    if (!t)
        return gl_fail(err, GL_ERR_FORMAT, "missing tensor '%s'", name);
    mark_used(m, t);
    if (t->ne[0] != (uint64_t)n || t->ne[1] != 1 || t->ne[2] != 1 || t->ne[3] != 1)
        return gl_fail(err, GL_ERR_FORMAT, "tensor '%s' has shape [%llu, %llu], expected [%d]",
                       name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1], n);
    if (t->type != GGUF_T_F32)
        return gl_fail(err, GL_ERR_UNSUPPORTED, "tensor '%s' has type %s, expected F32", name,
                       gguf_type_name(t->type));
    if (((uintptr_t)t->data & 3) != 0)
        return gl_fail(err, GL_ERR_FORMAT, "tensor '%s' is not 4-byte aligned", name);
    *out = (const float *)t->data;
    return GL_OK;
}

gl_status gl_model_load(gl_model **out, const char *path, const gl_model_params *params,
                        gl_error *err)
{
    *out = NULL;
    gl_model_params p = params ? *params : gl_model_default_params();
    gl_model *m = calloc(1, sizeof *m);
    if (!m)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    gl_status st = gl_kernels_init(&m->k, p.backend, err);
    if (st)
        goto fail;
    if ((st = gl_map_file(&m->map, path, err)))
        goto fail;
    if ((st = gguf_parse(&m->gguf, m->map.data, m->map.size, err))) {
        if (err) {
            char msg[sizeof err->msg];
            memcpy(msg, err->msg, sizeof msg);
            int w = snprintf(err->msg, sizeof err->msg, "%.200s: ", path);
            if (w > 0 && (size_t)w < sizeof err->msg)
                snprintf(err->msg + w, sizeof err->msg - (size_t)w, "%s", msg);
        }
        goto fail;
    }
    gguf_str s;
    if (gguf_get_str(&m->gguf, "general.architecture", &s))
        copy_str(m->arch, sizeof m->arch, s);
    if (gguf_get_str(&m->gguf, "general.name", &s))
        copy_str(m->name, sizeof m->name, s);
    if ((st = gl_tokenizer_load(&m->tok, &m->gguf, err)))
        goto fail;
    m->cfg.n_vocab = gl_tokenizer_n_vocab(m->tok);
    if (p.vocab_only || m->gguf.n_tensors == 0)
        goto done; /* a vocabulary file: tokenizing only */
    if (!m->arch[0]) {
        st = gl_fail(err, GL_ERR_FORMAT, "%s: missing 'general.architecture'", path);
        goto fail;
    }
    if (strcmp(m->arch, "gpt2") == 0) {
        if ((st = gl_bind_gpt2(m, err)))
            goto fail;
    } else if ((st = gl_bind_decoder(m, err))) {
        goto fail;
    }
    if ((st = gl_model_repack(m, err)))
        goto fail;
done:
    *out = m;
    return GL_OK;
fail:
    gl_model_free(m);
    return st;
}

void gl_model_free(gl_model *m)
{
    if (!m)
        return;
    gl_tokenizer_free(m->tok);
    free(m->layers);
    free(m->gpt2_layers);
    free(m->tensor_used);
    gguf_free(&m->gguf);
    gl_unmap_file(&m->map);
    free(m->repack_arena);
    free(m);
}

const char *gl_type_name(int t)
{
    return gguf_type_name((uint32_t)t);
}

void gl_model_get_info(const gl_model *m, gl_model_info *info)
{
    memset(info, 0, sizeof *info);
    const gl_config *c = &m->cfg;
    info->arch = m->arch;
    info->name = m->name;
    info->backend = m->k.name;
    info->gguf_version = m->gguf.version;
    info->n_vocab = c->n_vocab;
    info->n_ctx_train = c->n_ctx_train;
    info->dim = c->dim;
    info->n_layers = c->n_layers;
    info->n_heads = c->n_heads;
    info->n_kv_heads = c->n_kv_heads;
    info->ffn_dim = c->ffn_dim;
    info->head_dim = c->head_dim;
    info->norm_eps = c->norm_eps;
    info->rope_freq_base = c->rope_freq_base;
    info->rope_scale = c->rope_freq_scale;
    info->n_tensors = m->gguf.n_tensors;
    info->file_bytes = m->map.size;
    info->has_weights = m->has_weights;
    for (uint64_t i = 0; i < m->gguf.n_tensors; i++) {
        const gguf_tensor *t = &m->gguf.tensors[i];
        info->weight_bytes += t->nbytes;
        if (t->type < 32) {
            info->type_counts[t->type]++;
            info->type_bytes[t->type] += t->nbytes;
        }
    }
    /* a decode step reads every weight once, but only one embedding row
     * (unless the output matrix is the embedding table) */
    info->weight_bytes_per_token = info->weight_bytes;
    const gguf_tensor *emb = gguf_find_tensor(&m->gguf, "token_embd.weight");
    if (emb && m->has_weights && !m->output_tied)
        info->weight_bytes_per_token -= emb->nbytes - m->tok_embd.row_bytes;
    info->bos_id = gl_tokenizer_bos(m->tok);
    info->eos_id = gl_tokenizer_eos(m->tok);
    info->add_bos = gl_tokenizer_add_bos(m->tok);
    info->n_pos_learned = c->n_pos_learned;
    info->repacked_bytes = m->repack_bytes;
    info->copied_bytes = m->copied_bytes;
}

uint64_t gl_model_kv_bytes(const gl_model *m, int n_ctx)
{
    const gl_config *c = &m->cfg;
    return 2ull * (uint64_t)c->n_layers * (uint64_t)n_ctx * (uint64_t)c->n_kv_heads *
           (uint64_t)c->head_dim * sizeof(uint16_t);
}

int gl_tokenize(const gl_model *m, const char *text, size_t len, bool add_bos, int32_t *out,
                int cap, gl_error *err)
{
    return gl_tokenizer_encode(m->tok, text, len, add_bos, out, cap, err);
}

int gl_detok_push(const gl_model *m, gl_detok *d, int32_t id, char *out, size_t cap)
{
    return gl_tokenizer_detok_push(m->tok, d, id, out, cap);
}
