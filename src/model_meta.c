/* Public queries about a loaded model's metadata and vocabulary that the
 * chat front ends need: GGUF string keys (tokenizer.chat_template), token
 * texts, end-of-generation ids and tokenizer warnings. */
#include <string.h>

#include "error.h"
#include "genloop.h"
#include "model.h"
#include "tokenizer.h"

int gl_model_meta_str(const gl_model *m, const char *key, char *out, size_t cap)
{
    gguf_str s;
    if (!m || !key || !gguf_find(&m->gguf, key) || !gguf_get_str(&m->gguf, key, &s))
        return -1;
    if (s.len > (uint64_t)INT32_MAX)
        return -1;
    if (out && cap > 0) {
        size_t k = s.len < cap - 1 ? (size_t)s.len : cap - 1;
        if (k)
            memcpy(out, s.ptr, k);
        out[k] = '\0';
    }
    return (int)s.len;
}

int gl_model_token_text(const gl_model *m, int32_t id, char *out, size_t cap)
{
    size_t len;
    const char *p = m ? gl_tokenizer_text(m->tok, id, &len) : NULL;
    if (!p)
        return -1;
    if (out && cap > 0) {
        size_t k = len < cap - 1 ? len : cap - 1;
        if (k)
            memcpy(out, p, k);
        out[k] = '\0';
    }
    return (int)len;
}

bool gl_model_is_eog(const gl_model *m, int32_t id)
{
    return m && gl_tokenizer_is_eog(m->tok, id);
}

const char *gl_model_tokenizer_warning(const gl_model *m)
{
    return m ? gl_tokenizer_warning(m->tok) : NULL;
}

const char *gl_model_load_warning(const gl_model *m)
{
    return m && m->load_warning[0] ? m->load_warning : NULL;
}

int gl_tokenize_ex(const gl_model *m, const char *text, size_t len, unsigned flags, int32_t *out,
                   int cap, gl_error *err)
{
    if (!m) {
        gl_fail(err, GL_ERR_ARG, "gl_tokenize_ex: NULL model");
        return -1;
    }
    return gl_tokenizer_encode_ex(m->tok, text, len, flags, out, cap, err);
}
