/* genloop quantize: rewrites a GGUF model with its weights in a quantized
 * type or one of the standard mixes (Q4_K_M, ...), as the reference
 * quantizer does without an importance matrix. Metadata is copied verbatim
 * (general.file_type and general.quantization_version updated); the output
 * is written under a temporary name next to OUT and renamed at the end. */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gguf.h"
#include "quant_mix.h"
#include "quantize_rows.h"
#include "synth_writer.h"

static const char usage[] =
    "usage: genloop quantize -m IN.gguf -o OUT.gguf --type TYPE [--pure] [--output-type T]\n"
    "       [--token-embedding-type T] [-t THREADS] [--allow-requantize]\n"
    "\n"
    "TYPE (case-insensitive):\n"
    "  q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl    32-element blocks\n"
    "  q2_k q6_k iq4_xs                   256-element blocks, standard mix\n"
    "  q3_k_s q3_k_m q3_k_l               Q3_K mixes (small, medium, large)\n"
    "  q4_k_s q4_k_m q5_k_s q5_k_m        Q4_K / Q5_K mixes\n"
    "  f16 bf16 f32                       plain conversion\n"
    "Mixes give output.weight Q6_K and, per the reference's rules, some layers'\n"
    "attn_v / ffn_down / attn_output a higher type; rows that are not a multiple\n"
    "of 256 fall back to a 32-element type (F16 if even that does not fit);\n"
    "norms and 1-D tensors are copied. --pure: every matrix in the one type.\n"
    "--output-type / --token-embedding-type T: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0\n"
    "q5_1 q2_k q3_k q4_k q5_k q6_k iq4_nl iq4_xs. Input: F32, F16 or BF16\n"
    "weights; quantized weights only with --allow-requantize (dequantized, then\n"
    "quantized again). Output is identical for any -t.\n";

/* The temporary file, removed if a signal ends the run. */
static char tmp_path[4096];

static void on_signal(int sig)
{
    if (tmp_path[0])
        unlink(tmp_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Bytes of n array elements of type at p (the file was validated). */
static size_t elems_bytes(uint32_t type, uint64_t n, const uint8_t *p)
{
    if (type != GGUF_VT_STR && type != GGUF_VT_ARR)
        return (size_t)(n * gguf_vtype_size(type));
    size_t at = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len;
        if (type == GGUF_VT_STR) {
            memcpy(&len, p + at, 8);
            at += 8 + (size_t)len;
        } else {
            uint32_t t;
            memcpy(&t, p + at, 4);
            memcpy(&len, p + at + 4, 8);
            at += 12 + elems_bytes(t, len, p + at + 12);
        }
    }
    return at;
}

/* Copies one key-value pair of the input verbatim into w. */
static bool copy_kv(sw_writer *w, const gguf_kv *kv)
{
    size_t vlen = kv->type == GGUF_VT_ARR ? elems_bytes(kv->arr_type, kv->arr_n, kv->data)
                                          : elems_bytes(kv->type, 1, kv->data);
    const size_t n = 8 + (size_t)kv->key.len + 4 + (kv->type == GGUF_VT_ARR ? 12 : 0) + vlen;
    uint8_t *buf = malloc(n);
    if (!buf)
        return false;
    uint8_t *p = buf;
    memcpy(p, &kv->key.len, 8);
    memcpy(p + 8, kv->key.ptr, (size_t)kv->key.len);
    p += 8 + kv->key.len;
    memcpy(p, &kv->type, 4);
    p += 4;
    if (kv->type == GGUF_VT_ARR) {
        memcpy(p, &kv->arr_type, 4);
        memcpy(p + 4, &kv->arr_n, 8);
        p += 12;
    }
    memcpy(p, kv->data, vlen);
    sw_kv_raw(w, buf, n);
    free(buf);
    return true;
}

/* An integer hyperparameter "<arch>.<key>"; arrays give their first element. */
static int arch_int(const gguf_file *g, const char *arch, const char *key, int dflt)
{
    char full[256];
    snprintf(full, sizeof full, "%s.%s", arch, key);
    int64_t v;
    if (gguf_get_i64(g, full, &v))
        return (int)v;
    const gguf_kv *kv = gguf_find(g, full);
    double d;
    if (kv && kv->type == GGUF_VT_ARR && gguf_arr_get_num(kv, 0, &d))
        return (int)d;
    return dflt;
}

typedef struct plan {
    char *name;
    const gguf_tensor *t;
    uint32_t type; /* output type */
    int64_t ne0, rows;
} plan;

static int by_reference_order(const void *a, const void *b)
{
    return gl_qmix_order(((const plan *)a)->name, ((const plan *)b)->name);
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, b))
        return true;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Converts and writes one tensor: rows decoded to float in chunks, the
 * chunk's rows quantized over the threads. */
static bool write_converted(sw_writer *w, const plan *p, int threads)
{
    const size_t in_rb = gguf_type_block_bytes(p->t->type) *
                         (size_t)(p->ne0 / (int64_t)gguf_type_block_elems(p->t->type));
    const size_t out_rb = gl_quant_row_bytes(p->type, p->ne0);
    int64_t chunk = ((int64_t)1 << 22) / p->ne0;
    chunk = chunk < 1 ? 1 : chunk > p->rows ? p->rows : chunk;
    float *x = malloc(sizeof *x * (size_t)(chunk * p->ne0));
    uint8_t *q = malloc(out_rb * (size_t)chunk);
    bool ok = x && q;
    for (int64_t r0 = 0; ok && r0 < p->rows; r0 += chunk) {
        const int64_t nr = p->rows - r0 < chunk ? p->rows - r0 : chunk;
        for (int64_t r = 0; r < nr; r++)
            gl_dequantize_row(p->t->type, p->t->data + (size_t)(r0 + r) * in_rb, x + r * p->ne0,
                              p->ne0);
        ok = gl_quantize_rows(p->type, x, q, nr, p->ne0, threads) &&
             sw_tensor_bytes(w, q, out_rb * (size_t)nr);
    }
    free(x);
    free(q);
    return ok;
}

int cmd_quantize(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *type_name = NULL, *out_type = NULL, *tok_type = NULL;
    bool pure = false, requant = false;
    long long threads = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--pure")) {
            pure = true;
            continue;
        } else if (!strcmp(a, "--allow-requantize")) {
            requant = true;
            continue;
        }
        const char **dst = !strcmp(a, "-m") || !strcmp(a, "--model")    ? &in
                           : !strcmp(a, "-o") || !strcmp(a, "--output") ? &out
                           : !strcmp(a, "--type")                       ? &type_name
                           : !strcmp(a, "--output-type")                ? &out_type
                           : !strcmp(a, "--token-embedding-type")       ? &tok_type
                                                                        : NULL;
        const bool is_threads = !strcmp(a, "-t") || !strcmp(a, "--threads");
        if (!dst && !is_threads) {
            cli_error("quantize: unknown option '%s' (see 'genloop quantize --help')", a);
            return EXIT_USAGE;
        }
        if (!v) {
            cli_error("quantize: option '%s' needs a value", a);
            return EXIT_USAGE;
        }
        if (is_threads && !cli_int(a, v, 1, 256, &threads))
            return EXIT_USAGE;
        if (dst)
            *dst = v;
        i++;
    }
    if (!in || !out || !type_name) {
        cli_error("quantize: -m IN.gguf, -o OUT.gguf and --type TYPE are required (see "
                  "'genloop quantize --help')");
        return EXIT_USAGE;
    }
    const gl_qmix *mix = gl_qmix_find(type_name);
    if (!mix) {
        cli_error("quantize: unknown --type '%s'; one of: %s", type_name, gl_qmix_names());
        return EXIT_USAGE;
    }
    gl_qmix_opts o = { pure, -1, -1 };
    if (out_type && (o.output_type = gl_qmix_tensor_type_by_name(out_type)) < 0) {
        cli_error("quantize: unknown --output-type '%s'", out_type);
        return EXIT_USAGE;
    }
    if (tok_type && (o.token_embd_type = gl_qmix_tensor_type_by_name(tok_type)) < 0) {
        cli_error("quantize: unknown --token-embedding-type '%s'", tok_type);
        return EXIT_USAGE;
    }
    if (same_file(in, out)) {
        cli_error("quantize: refusing to overwrite the input '%s'", in);
        return EXIT_USAGE;
    }
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : n > 256 ? 256 : n;
    }

    gl_mapping map;
    gl_error err = { 0 };
    gguf_file g;
    if (gl_map_file(&map, in, &err) != GL_OK) {
        cli_error("quantize: %s", err.msg);
        return EXIT_RUNTIME;
    }
    if (gguf_parse(&g, map.data, map.size, &err) != GL_OK) {
        cli_error("quantize: %s: %s", in, err.msg);
        gl_unmap_file(&map);
        return EXIT_RUNTIME;
    }

    int rc = EXIT_RUNTIME;
    plan *pl = calloc(g.n_tensors ? g.n_tensors : 1, sizeof *pl);
    sw_writer w;
    bool opened = false;
    gguf_str arch_s = { "", 0 };
    gguf_get_str(&g, "general.architecture", &arch_s);
    char arch[64];
    snprintf(arch, sizeof arch, "%.*s", (int)(arch_s.len < 63 ? arch_s.len : 63), arch_s.ptr);
    gl_qmix_model m = { arch,
                        arch_int(&g, arch, "block_count", 0),
                        arch_int(&g, arch, "attention.head_count", 0),
                        arch_int(&g, arch, "attention.head_count_kv", 0),
                        arch_int(&g, arch, "expert_count", 0),
                        0,
                        false };
    if (!pl)
        goto done;
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const gguf_tensor *t = &g.tensors[i];
        pl[i].t = t;
        pl[i].name = malloc((size_t)t->name.len + 1);
        if (!pl[i].name)
            goto done;
        memcpy(pl[i].name, t->name.ptr, (size_t)t->name.len);
        pl[i].name[t->name.len] = '\0';
        if (strstr(pl[i].name, "attn_v.weight") || strstr(pl[i].name, "attn_qkv.weight") ||
            strstr(pl[i].name, "attn_kv_b.weight"))
            m.n_attention_wv++;
        else if (!strcmp(pl[i].name, "output.weight"))
            m.has_output = true;
    }
    qsort(pl, (size_t)g.n_tensors, sizeof *pl, by_reference_order);

    /* Types first: the header precedes the data. */
    gl_qmix_state st = { 0 };
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const gguf_tensor *t = pl[i].t;
        int n_dims = 1;
        for (int d = 0; d < GGUF_MAX_DIMS; d++)
            if (t->ne[d] > 1)
                n_dims = d + 1;
        pl[i].ne0 = (int64_t)t->ne[0];
        pl[i].rows = (int64_t)(t->ne[1] * t->ne[2] * t->ne[3]);
        pl[i].type = t->type;
        if (gl_qmix_quantizable(pl[i].name, n_dims))
            pl[i].type = gl_qmix_tensor_type(mix, &o, &m, &st, pl[i].name, pl[i].ne0);
        if (pl[i].type == t->type)
            continue;
        if (!gl_quant_can_read(t->type)) {
            cli_error("quantize: tensor '%s' has type %s, which genloop cannot convert", pl[i].name,
                      gguf_type_name(t->type));
            goto done;
        }
        if (gguf_type_block_elems(t->type) > 1 && !requant) {
            cli_error("quantize: tensor '%s' is already quantized (%s); requantizing loses "
                      "quality, pass --allow-requantize to do it anyway",
                      pl[i].name, gguf_type_name(t->type));
            goto done;
        }
    }

    /* The temporary output, next to OUT. */
    char *dup1 = strdup(out), *dup2 = strdup(out);
    if (!dup1 || !dup2) {
        free(dup1);
        free(dup2);
        goto done;
    }
    snprintf(tmp_path, sizeof tmp_path, "%s/.%s.tmp-XXXXXX", dirname(dup1), basename(dup2));
    free(dup1);
    free(dup2);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    int fd = mkstemp(tmp_path);
    if (fd < 0) {
        cli_error("quantize: cannot create a file next to '%s': %s", out, strerror(errno));
        tmp_path[0] = '\0';
        goto done;
    }
    const mode_t um = umask(0); /* mkstemp's 0600 would outlive the rename */
    umask(um);
    fchmod(fd, 0666 & ~um);
    close(fd);
    if (!sw_open(&w, tmp_path)) {
        cli_error("quantize: cannot write '%s': %s", tmp_path, strerror(errno));
        goto done;
    }
    opened = true;
    int64_t align = 32;
    if (gguf_get_i64(&g, "general.alignment", &align) && (align <= 0 || (align & (align - 1)))) {
        cli_error("quantize: general.alignment %lld is not a power of 2", (long long)align);
        goto done;
    }
    w.align = (uint32_t)align;
    for (uint64_t i = 0; i < g.n_kv; i++) {
        const gguf_kv *kv = &g.kv[i];
        if (gguf_str_eq(kv->key, "general.file_type") ||
            gguf_str_eq(kv->key, "general.quantization_version") ||
            gguf_str_eq(kv->key, "split.no") || gguf_str_eq(kv->key, "split.count") ||
            gguf_str_eq(kv->key, "split.tensors.count"))
            continue;
        if (!copy_kv(&w, kv))
            goto done;
    }
    sw_kv_u32(&w, "general.quantization_version", 2);
    sw_kv_u32(&w, "general.file_type", (uint32_t)mix->ftype);
    for (uint64_t i = 0; i < g.n_tensors; i++)
        sw_tensor_info_nd(&w, pl[i].name, strlen(pl[i].name), pl[i].t->n_dims, pl[i].t->ne,
                          pl[i].type);
    bool ok = sw_begin_data(&w);
    uint64_t bytes_in = 0, bytes_out = 0;
    for (uint64_t i = 0; ok && i < g.n_tensors; i++) {
        const plan *p = &pl[i];
        fprintf(stderr, "[%4llu/%4llu] %-32s %-7s -> %s\n", (unsigned long long)i + 1,
                (unsigned long long)g.n_tensors, p->name, gguf_type_name(p->t->type),
                gguf_type_name(p->type));
        const uint64_t before = w.written;
        if (p->type == p->t->type)
            ok = sw_tensor_bytes(&w, p->t->data, (size_t)p->t->nbytes);
        else
            ok = write_converted(&w, p, (int)threads);
        bytes_in += p->t->nbytes;
        bytes_out += w.written - before;
        ok = ok && sw_end_tensor(&w);
    }
    ok = ok && fflush(w.f) == 0 && fsync(fileno(w.f)) == 0;
    opened = false;
    ok = sw_close(&w) && ok;
    if (!ok) {
        cli_error("quantize: writing '%s' failed: %s", out, strerror(errno));
        goto done;
    }
    if (rename(tmp_path, out) != 0) {
        cli_error("quantize: cannot rename the output to '%s': %s", out, strerror(errno));
        goto done;
    }
    tmp_path[0] = '\0';
    fprintf(stderr, "quantize: %s: %.2f MiB -> %.2f MiB (%s, file type %d)\n", out,
            (double)bytes_in / 1048576.0, (double)bytes_out / 1048576.0, mix->name, mix->ftype);
    rc = 0;
done:
    if (opened)
        sw_close(&w);
    if (tmp_path[0]) {
        unlink(tmp_path);
        tmp_path[0] = '\0';
    }
    if (pl)
        for (uint64_t i = 0; i < g.n_tensors; i++)
            free(pl[i].name);
    free(pl);
    gguf_free(&g);
    gl_unmap_file(&map);
    return rc;
}
