/* Model binding: a whole file through gl_model_load (from a memfd, so the
 * real map path runs). Seeds are small valid llama models; the fuzzer
 * mutates their metadata and tensor infos into wrong shapes, types,
 * hyperparameters and missing tensors. Whatever loads must also create a
 * context and evaluate a few tokens without touching memory it should not. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gl_model *m = NULL;
    gl_error err = { 0 };
    gl_status st = fz_load_bytes(&m, data, size, false, &err);
    if (st != GL_OK) {
        if (m)
            fz_die("failed load returned a model");
        if (!err.msg[0] || strchr(err.msg, '\n'))
            fz_die("bad message: '%s'", err.msg);
        return 0;
    }
    gl_model_info info;
    gl_model_get_info(m, &info);
    int32_t ids[16];
    int n = gl_tokenize(m, "Once upon a time \xff\xc3", 19, true, ids, 16, &err);
    if (n < 0)
        fz_die("tokenize failed on a loaded model: %s", err.msg);
    if (n > 16)
        n = 16;
    gl_detok d;
    gl_detok_init(&d);
    for (int i = 0; i < n; i++) {
        char out[64];
        gl_detok_push(m, &d, ids[i], out, sizeof out);
    }
    if (info.has_weights && n > 0) {
        gl_ctx *c = NULL;
        gl_ctx_params cp = gl_ctx_default_params();
        cp.n_ctx = 8;
        cp.n_threads = 1;
        cp.n_batch = 4;
        if (gl_ctx_create(&c, m, &cp, &err) == GL_OK) {
            const int nv = gl_model_n_vocab(m);
            float *logits = malloc((size_t)(n < 8 ? n : 8) * (size_t)nv * sizeof *logits);
            if (logits) {
                if (gl_ctx_eval(c, ids, n < 8 ? n : 8, logits, true, &err) != GL_OK &&
                    (!err.msg[0] || strchr(err.msg, '\n')))
                    fz_die("bad eval message");
                free(logits);
            }
            gl_ctx_free(c);
        }
    }
    gl_model_free(m);
    return 0;
}
