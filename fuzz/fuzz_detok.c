/* Detokenizer: arbitrary id streams (negative, out of range, control and
 * byte tokens, split UTF-8) with arbitrary output room. Byte 0 picks the
 * vocabulary, byte 1 the room; the rest are little-endian int32 ids, each
 * used as is or folded into the vocabulary. Output must stay inside the
 * room, NUL-terminated, and valid UTF-8. */
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gl_model **v;
    int nv = fz_vocabs(&v);
    if (size < 2)
        return 0;
    gl_model *m = v[data[0] % nv];
    const int n_vocab = gl_model_n_vocab(m);
    size_t room = (size_t)(data[1] % 80); /* 0..79: below and above the 64 promised */
    gl_detok d;
    gl_detok_init(&d);
    for (size_t i = 2; i + 4 <= size; i += 4) {
        int32_t id;
        memcpy(&id, data + i, 4);
        if (!(data[1] & 0x80)) /* mostly valid ids */
            id = (int32_t)((uint32_t)id % (uint32_t)n_vocab);
        char out[96];
        memset(out, 0x5a, sizeof out);
        int w = gl_detok_push(m, &d, id, room ? out : NULL, room);
        if (w < 0 || (room && (size_t)w >= room) || (!room && w != 0))
            fz_die("push wrote %d bytes into %zu of room", w, room);
        if (room && out[w] != '\0')
            fz_die("output not NUL-terminated");
        for (size_t k = room; k < sizeof out; k++)
            if (out[k] != 0x5a)
                fz_die("wrote past the room (%zu) at %zu", room, k);
        if (!fz_utf8_valid((unsigned char *)out, (size_t)w))
            fz_die("output is not valid UTF-8");
    }
    char out[64];
    int w = gl_detok_flush(&d, out, sizeof out);
    if (w < 0 || !fz_utf8_valid((unsigned char *)out, (size_t)w))
        fz_die("flush output invalid");
    return 0;
}
