#include "shared_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *td_shared_dir(void)
{
    static const char *cands[] = { NULL, "../shared", "../../shared", "../../../shared" };
    cands[0] = getenv("GENLOOP_SHARED");
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        struct stat st;
        char probe[1024];
        if (!cands[i])
            continue;
        snprintf(probe, sizeof probe, "%s/models", cands[i]);
        if (stat(probe, &st) == 0 && S_ISDIR(st.st_mode))
            return cands[i];
    }
    return NULL;
}

bool td_path(char *buf, size_t cap, const char *rel)
{
    const char *d = td_shared_dir();
    if (!d)
        return false;
    snprintf(buf, cap, "%s/%s", d, rel);
    return true;
}

/* Points just past "key": and any spaces, or NULL. */
static const char *find_value(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(line, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (*p == ' ' || *p == ':')
        p++;
    return p;
}

/* Parses the integer array after "key": [ in line; -1 when it is missing,
 * malformed or longer than cap (never a silent truncation). */
static int int_array(const char *line, const char *key, int32_t *out, int cap)
{
    const char *p = find_value(line, key);
    if (!p || *p != '[')
        return -1;
    p++;
    int n = 0;
    while (*p && *p != ']') {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            return -1;
        if (n == cap) {
            fprintf(stderr, "shared_data: \"%s\" has more than %d entries\n", key, cap);
            return -1;
        }
        out[n++] = (int32_t)v;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return *p == ']' ? n : -1;
}

int td_read_refs(const char *model, td_ref *refs, int cap)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "reference/%s.jsonl", model);
    if (!td_path(path, sizeof path, rel))
        return -1;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "shared_data: cannot open %s\n", path);
        return -1;
    }
    static char line[1 << 16];
    int n = 0;
    while (n < cap && fgets(line, sizeof line, f)) {
        const size_t len = strlen(line);
        if (len + 1 == sizeof line && line[len - 1] != '\n') {
            fprintf(stderr, "shared_data: %s line %d is longer than %zu bytes\n", path, n + 1,
                    sizeof line - 1);
            fclose(f);
            return -1;
        }
        td_ref *r = &refs[n];
        memset(r, 0, sizeof *r);
        r->n_prompt = int_array(line, "prompt_tokens", r->prompt_tokens, 512);
        r->n_greedy = int_array(line, "greedy", r->greedy, 1024);
        const char *v = find_value(line, "n_vocab");
        r->n_vocab = v ? atoi(v) : 0;
        const char *p = find_value(line, "prompt");
        if (p && *p == '"') {
            p++;
            size_t k = 0;
            while (*p && *p != '"' && k + 1 < sizeof r->prompt) {
                if (*p == '\\' && p[1])
                    p++;
                r->prompt[k++] = *p++;
            }
            if (*p != '"') {
                fprintf(stderr, "shared_data: %s line %d: prompt longer than %zu bytes\n", path,
                        n + 1, sizeof r->prompt - 1);
                fclose(f);
                return -1;
            }
        }
        if (r->n_prompt < 0 || r->n_greedy < 0 || r->n_vocab <= 0) {
            fprintf(stderr,
                    "shared_data: %s line %d: bad or missing prompt_tokens, greedy or "
                    "n_vocab\n",
                    path, n + 1);
            fclose(f);
            return -1;
        }
        n++;
    }
    fclose(f);
    return n;
}

float *td_read_logits(const char *model, int i, size_t *n_floats)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "reference/%s.p%d.logits.f32", model, i);
    if (!td_path(path, sizeof path, rel))
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (sz <= 0 || sz % (long)sizeof(float) != 0) {
        fprintf(stderr, "shared_data: %s: size %ld is not a whole number of floats\n", path, sz);
        fclose(f);
        return NULL;
    }
    float *buf = malloc((size_t)sz);
    if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        fprintf(stderr, "shared_data: %s: short read\n", path);
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n_floats = (size_t)sz / sizeof(float);
    return buf;
}

double td_rel_rms(const float *a, const float *ref, int n)
{
    double mean = 0, var = 0, d2 = 0;
    for (int i = 0; i < n; i++)
        mean += ref[i];
    mean /= n;
    for (int i = 0; i < n; i++) {
        var += (ref[i] - mean) * (ref[i] - mean);
        d2 += ((double)a[i] - ref[i]) * ((double)a[i] - ref[i]);
    }
    return sqrt(d2 / n) / sqrt(var / n);
}
