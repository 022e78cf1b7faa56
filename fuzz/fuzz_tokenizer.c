/* Tokenizer: arbitrary bytes (NULs, invalid UTF-8, long runs) against every
 * vocabulary. Byte 0 picks the vocabulary and add_bos; the rest is text.
 * Checks: a count that does not depend on the room given, ids in range,
 * and a detokenized result that is valid UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gl_model **v;
    int nv = fz_vocabs(&v);
    if (size < 1)
        return 0;
    gl_model *m = v[data[0] % nv];
    bool bos = data[0] & 0x80;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    gl_error err;
    int n = gl_tokenize(m, text, len, bos, NULL, 0, &err);
    if (n < 0)
        fz_die("tokenize failed: %s", err.msg);
    int32_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids)
        return 0;
    /* too little room: same count, only cap ids written */
    int half = n / 2;
    if (gl_tokenize(m, text, len, bos, ids, half, &err) != n)
        fz_die("count changed with the room given");
    if (gl_tokenize(m, text, len, bos, ids, n, &err) != n)
        fz_die("second count differs");
    const int n_vocab = gl_model_n_vocab(m);
    gl_detok d;
    gl_detok_init(&d);
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= n_vocab)
            fz_die("id %d out of range", ids[i]);
        char out[64];
        int w = gl_detok_push(m, &d, ids[i], out, sizeof out);
        if (w < 0 || (size_t)w >= sizeof out || out[w] != '\0' ||
            !fz_utf8_valid((unsigned char *)out, (size_t)w))
            fz_die("detok output invalid");
    }
    char out[64];
    int w = gl_detok_flush(&d, out, sizeof out);
    if (w < 0 || !fz_utf8_valid((unsigned char *)out, (size_t)w))
        fz_die("flush output invalid");
    free(ids);
    return 0;
}
