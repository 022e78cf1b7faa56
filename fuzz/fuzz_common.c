#include "fuzz_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "shared_data.h"
#include "tiny_model.h"

void fz_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

gl_status fz_load_bytes(gl_model **out, const uint8_t *data, size_t size, bool vocab_only,
                        gl_error *err)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("genloop-fuzz", MFD_CLOEXEC);
        if (fd < 0)
            fz_die("memfd_create failed");
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0)
        fz_die("ftruncate failed");
    for (size_t w = 0; w < size;) {
        ssize_t n = pwrite(fd, data + w, size - w, (off_t)w);
        if (n <= 0)
            fz_die("pwrite failed");
        w += (size_t)n;
    }
    gl_model_params mp = gl_model_default_params();
    mp.vocab_only = vocab_only;
    return gl_model_load(out, path, &mp, err);
}

int fz_vocabs(gl_model ***out)
{
    static gl_model *v[8];
    static int n = -1;
    if (n >= 0) {
        *out = v;
        return n;
    }
    n = 0;
    gl_error err;
    gw_buf b;
    gw_init(&b);
    tm_build(&b, NULL);
    if (fz_load_bytes(&v[n], b.data, b.len, true, &err))
        fz_die("tiny vocabulary: %s", err.msg);
    n++;
    gw_free(&b);
    static const char *const files[] = { "models/stories260K.gguf",
                                         "tokenizers/ggml-vocab-llama-spm.gguf",
                                         "tokenizers/ggml-vocab-gpt-2.gguf" };
    gl_model_params mp = gl_model_default_params();
    mp.vocab_only = true;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        if (!td_path(path, sizeof path, files[i])) {
            fprintf(stderr, "fuzz: ../shared not found (set GENLOOP_SHARED): tiny vocabulary "
                            "only\n");
            break;
        }
        if (gl_model_load(&v[n], path, &mp, &err) == GL_OK)
            n++;
        else
            fprintf(stderr, "fuzz: skipping %s: %s\n", files[i], err.msg);
    }
    *out = v;
    return n;
}

bool fz_utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k = c < 0x80             ? 1
                   : (c & 0xe0) == 0xc0 ? 2
                   : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4
                                        : 0;
        if (!k || i + k > n || (k == 2 && c < 0xc2) || (k == 4 && c > 0xf4))
            return false;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
        if (k == 3 && ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] > 0x9f)))
            return false;
        if (k == 4 && ((c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] > 0x8f)))
            return false;
        i += k;
    }
    return true;
}
