/* genloop quantize against the reference quantizer's files in ../shared:
 * the same type for every tensor of each standard mix, Q8_0 bit-exact, and
 * per-tensor error no worse than the reference's by more than 1 %. Plus the
 * command's guards (own input, unknown types, requantizing) and thread-count
 * invariance. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "gguf.h"
#include "quantize_rows.h"
#include "shared_data.h"

static run_out r; /* 72 KiB: static, one test per process */

static const char *shared(const char *rel)
{
    static char buf[16][1024]; /* a ring: callers keep a few paths at once */
    static int k;
    char *p = buf[k++ & 15];
    if (!td_path(p, sizeof buf[0], rel))
        cr_skip_test("SKIP: ../shared not found (set GENLOOP_SHARED); quantize tests need "
                     "the reference files");
    if (access(p, R_OK) != 0)
        cr_skip_test("SKIP: %s missing from ../shared", p);
    return p;
}

static const char *tmp(const char *tag)
{
    static char buf[16][256]; /* a ring, as in shared() */
    static int k;
    char *p = buf[k++ & 15];
    snprintf(p, sizeof buf[0], "/tmp/gl_quantize_%d_%s.gguf", (int)getpid(), tag);
    return p;
}

typedef struct gfile {
    gl_mapping map;
    gguf_file g;
} gfile;

static void gopen(gfile *f, const char *path)
{
    gl_error err = { 0 };
    cr_assert_eq(gl_map_file(&f->map, path, &err), GL_OK, "%s: %s", path, err.msg);
    cr_assert_eq(gguf_parse(&f->g, f->map.data, f->map.size, &err), GL_OK, "%s: %s", path, err.msg);
}

static void gclose(gfile *f)
{
    gguf_free(&f->g);
    gl_unmap_file(&f->map);
}

static const gguf_tensor *find(const gfile *f, gguf_str name)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)name.len, name.ptr);
    return gguf_find_tensor(&f->g, buf);
}

static void quantize(const char *in, const char *out, const char *type, const char *extra)
{
    if (extra)
        RUN(&r, NULL, "quantize", "-m", in, "-o", out, "--type", type, "-t", "2", extra);
    else
        RUN(&r, NULL, "quantize", "-m", in, "-o", out, "--type", type, "-t", "2");
    cr_assert_eq(r.status, 0, "quantize --type %s: %s", type, r.err);
}

/* Every tensor of ref exists in ours with the same shape and type. */
static void expect_same_types(const gfile *ours, const gfile *ref, const char *what)
{
    cr_expect_eq(ours->g.n_tensors, ref->g.n_tensors, "%s: tensor count", what);
    for (uint64_t i = 0; i < ref->g.n_tensors; i++) {
        const gguf_tensor *t = &ref->g.tensors[i], *o = find(ours, t->name);
        cr_assert(o, "%s: tensor %.*s missing", what, (int)t->name.len, t->name.ptr);
        cr_expect_eq(o->type, t->type, "%s: %.*s is %s, the reference has %s", what,
                     (int)t->name.len, t->name.ptr, gguf_type_name(o->type),
                     gguf_type_name(t->type));
        for (int d = 0; d < GGUF_MAX_DIMS; d++)
            cr_expect_eq(o->ne[d], t->ne[d]);
    }
}

static const char *const mixes[] = { "Q4_K_M", "Q3_K_M", "Q5_K_M", "Q6_K", "Q2_K", "IQ4_XS" };
static const int mix_ftypes[] = { 15, 12, 17, 18, 10, 30 };

Test(quantize, mixes_match_reference_types)
{
    char src[1024];
    snprintf(src, sizeof src, "%s", shared("models/stories260K-pad256-F32.gguf"));
    for (size_t i = 0; i < sizeof mixes / sizeof mixes[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "models/stories260K-pad256-%s.gguf", mixes[i]);
        const char *ref_path = shared(rel), *out = tmp(mixes[i]);
        quantize(src, out, mixes[i], NULL);
        gfile ours, ref;
        gopen(&ours, out);
        gopen(&ref, ref_path);
        expect_same_types(&ours, &ref, mixes[i]);
        /* not required (the RMSE bound is), but the rules are the reference's */
        const bool identical =
            ours.map.size == ref.map.size && !memcmp(ours.map.data, ref.map.data, ref.map.size);
        cr_log_info("%s: %s", mixes[i],
                    identical ? "byte-identical to the reference file" : "differs in bytes");
        int64_t ft = -1;
        cr_expect(gguf_get_i64(&ours.g, "general.file_type", &ft));
        cr_expect_eq(ft, mix_ftypes[i], "%s: general.file_type %lld", mixes[i], (long long)ft);
        /* every metadata key of the source is kept */
        gfile in;
        gopen(&in, src);
        for (uint64_t k = 0; k < in.g.n_kv; k++) {
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)in.g.kv[k].key.len, in.g.kv[k].key.ptr);
            cr_expect(gguf_find(&ours.g, key), "%s: key %s dropped", mixes[i], key);
        }
        gclose(&in);
        gclose(&ours);
        gclose(&ref);
        remove(out);
    }
}

Test(quantize, q8_0_byte_identical)
{
    const char *src = shared("models/stories260K.gguf");
    const char *ref_path = shared("models/stories260K-mixQ8_0.gguf"), *out = tmp("q8_0");
    quantize(src, out, "q8_0", NULL);
    gfile ours, ref;
    gopen(&ours, out);
    gopen(&ref, ref_path);
    expect_same_types(&ours, &ref, "Q8_0");
    int n_q8 = 0;
    for (uint64_t i = 0; i < ref.g.n_tensors; i++) {
        const gguf_tensor *t = &ref.g.tensors[i], *o = find(&ours, t->name);
        if (t->type != GGUF_T_Q8_0)
            continue;
        n_q8++;
        cr_assert_eq(o->nbytes, t->nbytes);
        cr_expect(!memcmp(o->data, t->data, (size_t)t->nbytes), "Q8_0 tensor %.*s differs",
                  (int)t->name.len, t->name.ptr);
    }
    cr_expect_gt(n_q8, 30, "the reference file has %d Q8_0 tensors", n_q8);
    gclose(&ours);
    gclose(&ref);
    remove(out);
}

/* RMS error of a tensor of f against the F32 source tensor s. */
static double tensor_rmse(const gguf_tensor *t, const gguf_tensor *s)
{
    const int64_t n = (int64_t)t->ne[0], rows = (int64_t)(t->ne[1] * t->ne[2] * t->ne[3]);
    const size_t rb = gl_quant_row_bytes(t->type, n);
    cr_assert(rb, "cannot decode %s", gguf_type_name(t->type));
    float *y = malloc(sizeof *y * (size_t)n);
    double e = 0;
    for (int64_t i = 0; i < rows; i++) {
        cr_assert(gl_dequantize_row(t->type, t->data + (size_t)i * rb, y, n));
        const float *x = (const float *)s->data + i * n;
        for (int64_t j = 0; j < n; j++)
            e += ((double)y[j] - x[j]) * ((double)y[j] - x[j]);
    }
    free(y);
    return sqrt(e / (double)(n * rows));
}

/* ours <= 1.01 x theirs on every quantized tensor of ref_rel. */
static void check_rmse(const char *ref_rel, const char *type, bool pure)
{
    const char *src = shared("models/stories260K-pad256-F32.gguf"), *ref_path = shared(ref_rel);
    const char *out = tmp(type);
    quantize(src, out, type, pure ? "--pure" : NULL);
    gfile ours, ref, f32;
    gopen(&ours, out);
    gopen(&ref, ref_path);
    gopen(&f32, src);
    double worst = 0;
    for (uint64_t i = 0; i < ref.g.n_tensors; i++) {
        const gguf_tensor *t = &ref.g.tensors[i], *o = find(&ours, t->name),
                          *s = find(&f32, t->name);
        cr_assert(o && s);
        if (t->type == GGUF_T_F32)
            continue;
        cr_assert_eq(o->type, t->type, "%s: %.*s type", ref_rel, (int)t->name.len, t->name.ptr);
        const double eo = tensor_rmse(o, s), er = tensor_rmse(t, s);
        cr_expect_leq(eo, 1.01 * er + 1e-12, "%s: %.*s RMSE %g, reference %g", ref_rel,
                      (int)t->name.len, t->name.ptr, eo, er);
        if (er > 0 && eo / er > worst)
            worst = eo / er;
    }
    cr_log_info("%s: worst RMSE ratio ours/reference %.4f", ref_rel, worst);
    gclose(&ours);
    gclose(&ref);
    gclose(&f32);
    remove(out);
}

Test(quantize, rmse_pure_q4_k)
{
    check_rmse("models/stories260K-pad256-Q4_K-pure.gguf", "q4_k_m", true);
}
Test(quantize, rmse_pure_q5_k)
{
    check_rmse("models/stories260K-pad256-Q5_K-pure.gguf", "q5_k_m", true);
}
Test(quantize, rmse_pure_q4_1)
{
    check_rmse("models/stories260K-pad256-Q4_1-pure.gguf", "q4_1", true);
}
Test(quantize, rmse_pure_q5_0)
{
    check_rmse("models/stories260K-pad256-Q5_0-pure.gguf", "q5_0", true);
}
Test(quantize, rmse_pure_q5_1)
{
    check_rmse("models/stories260K-pad256-Q5_1-pure.gguf", "q5_1", true);
}
Test(quantize, rmse_pure_iq4_nl)
{
    check_rmse("models/stories260K-pad256-IQ4_NL-pure.gguf", "iq4_nl", true);
}
/* Q2_K, Q3_K, Q6_K and IQ4_XS have no pure file: the mixes hold them. */
Test(quantize, rmse_mixes)
{
    for (size_t i = 0; i < sizeof mixes / sizeof mixes[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "models/stories260K-pad256-%s.gguf", mixes[i]);
        check_rmse(rel, mixes[i], false);
    }
}

/* Q4_0 has no pad256 file; the Q4_0 tensors of mixQ4_0 (the same rule). */
Test(quantize, q4_0_byte_identical)
{
    const char *src = shared("models/stories260K.gguf");
    const char *ref_path = shared("models/stories260K-mixQ4_0.gguf"), *out = tmp("q4_0");
    quantize(src, out, "q4_0", "--pure");
    gfile ours, ref;
    gopen(&ours, out);
    gopen(&ref, ref_path);
    for (uint64_t i = 0; i < ref.g.n_tensors; i++) {
        const gguf_tensor *t = &ref.g.tensors[i], *o = find(&ours, t->name);
        cr_assert(o);
        if (t->type != GGUF_T_Q4_0)
            continue;
        cr_assert_eq(o->type, GGUF_T_Q4_0);
        cr_expect(!memcmp(o->data, t->data, (size_t)t->nbytes), "Q4_0 tensor %.*s differs",
                  (int)t->name.len, t->name.ptr);
    }
    gclose(&ours);
    gclose(&ref);
    remove(out);
}

/* A small F32 model from genloop synth (rows of 256 and 512), so the
 * command's own tests need no shared data. */
static const char *synth_f32(const char *tag)
{
    const char *p = tmp(tag);
    RUN(&r, NULL, "synth", "--shape", "custom", "--dim", "256", "--layers", "2", "--heads", "4",
        "--kv-heads", "2", "--ffn", "512", "--vocab", "600", "--ctx", "128", "--type", "f32", "-o",
        p);
    cr_assert_eq(r.status, 0, "%s", r.err);
    return p;
}

static bool same_bytes(const char *a, const char *b)
{
    gl_mapping ma, mb;
    gl_error err;
    cr_assert_eq(gl_map_file(&ma, a, &err), GL_OK);
    cr_assert_eq(gl_map_file(&mb, b, &err), GL_OK);
    const bool same = ma.size == mb.size && !memcmp(ma.data, mb.data, ma.size);
    gl_unmap_file(&ma);
    gl_unmap_file(&mb);
    return same;
}

Test(quantize, thread_count_invariant)
{
    const char *src = synth_f32("tsrc");
    const char *types[] = { "q4_k_m", "iq4_xs", "q3_k_l" };
    const char *a = tmp("t1"), *b = tmp("t2");
    for (int i = 0; i < 3; i++) {
        RUN(&r, NULL, "quantize", "-m", src, "-o", a, "--type", types[i], "-t", "1");
        cr_assert_eq(r.status, 0, "%s", r.err);
        RUN(&r, NULL, "quantize", "-m", src, "-o", b, "--type", types[i], "-t", "3");
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(same_bytes(a, b), "--type %s: -t 1 and -t 3 differ", types[i]);
        remove(a);
        remove(b);
    }
    remove(src);
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    cr_assert(a && b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        cr_assert_eq(fwrite(buf, 1, n, b), n);
    fclose(a);
    cr_assert_eq(fclose(b), 0);
}

Test(quantize, refuses_to_overwrite_input)
{
    const char *src = synth_f32("own_src");
    const char *in = tmp("own_in"), *link = tmp("own_link");
    copy_file(src, in);
    remove(link);
    cr_assert_eq(symlink(in, link), 0);
    RUN(&r, NULL, "quantize", "-m", in, "-o", in, "--type", "q8_0");
    cr_expect_eq(r.status, 2, "same path: %s", r.err);
    cr_expect(strstr(r.err, "overwrite"), "%s", r.err);
    RUN(&r, NULL, "quantize", "-m", in, "-o", link, "--type", "q8_0");
    cr_expect_eq(r.status, 2, "same inode: %s", r.err);
    cr_expect(same_bytes(in, src), "the input was modified");
    remove(link);
    remove(in);
    remove(src);
}

Test(quantize, usage_errors)
{
    const char *src = synth_f32("usage_src"), *out = tmp("usage");
    RUN(&r, NULL, "quantize", "-m", src, "-o", out, "--type", "q9_k");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "q9_k") && strstr(r.err, "q4_k_m"), "%s", r.err);
    RUN(&r, NULL, "quantize", "-m", src, "-o", out, "--type", "Q4_K_M", "--output-type", "q7");
    cr_expect_eq(r.status, 2);
    RUN(&r, NULL, "quantize", "-m", src, "-o", out);
    cr_expect_eq(r.status, 2);
    RUN(&r, NULL, "quantize", "-m", src, "-o", out, "--type", "q8_0", "--bogus");
    cr_expect_eq(r.status, 2);
    RUN(&r, NULL, "quantize", "-m", "/nonexistent.gguf", "-o", out, "--type", "q8_0");
    cr_expect_eq(r.status, 1);
    cr_expect(access(out, F_OK) != 0, "no output after a failed run");
    remove(src);
}

Test(quantize, requantize_needs_flag)
{
    const char *src = shared("models/stories260K-mixQ4_0.gguf"), *out = tmp("requant");
    remove(out);
    RUN(&r, NULL, "quantize", "-m", src, "-o", out, "--type", "q8_0");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "--allow-requantize"), "%s", r.err);
    cr_expect(access(out, F_OK) != 0, "no output after a refused run");
    RUN(&r, NULL, "quantize", "-m", src, "-o", out, "--type", "q8_0", "--allow-requantize");
    cr_expect_eq(r.status, 0, "%s", r.err);
    RUN(&r, NULL, "run", "-m", out, "-p", "Once upon a time", "-n", "8", "--temp", "0");
    cr_expect_eq(r.status, 0, "%s", r.err);
    remove(out);
}

/* F16 input, the 32-element fallback for rows of 64 and 172, output and
 * token_embd overrides. */
Test(quantize, f16_input_and_overrides)
{
    const char *src = shared("models/stories260K-F16.gguf"), *out = tmp("f16in");
    quantize(src, out, "q4_k_s", NULL);
    gfile f;
    gopen(&f, out);
    const gguf_tensor *t = gguf_find_tensor(&f.g, "blk.0.attn_q.weight"),
                      *d = gguf_find_tensor(&f.g, "blk.0.ffn_down.weight"),
                      *o = gguf_find_tensor(&f.g, "output.weight"),
                      *n = gguf_find_tensor(&f.g, "blk.0.attn_norm.weight");
    cr_expect_eq(t->type, GGUF_T_Q5_0, "Q4_K on rows of 64 falls back to Q5_0");
    cr_expect_eq(d->type, GGUF_T_F16, "rows of 172 fit no block type");
    cr_expect_eq(o->type, GGUF_T_Q8_0);
    cr_expect_eq(n->type, GGUF_T_F32);
    gclose(&f);
    RUN(&r, NULL, "quantize", "-m", src, "-o", out, "--type", "q8_0", "--output-type", "f16",
        "--token-embedding-type", "Q4_0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    gopen(&f, out);
    cr_expect_eq(gguf_find_tensor(&f.g, "output.weight")->type, GGUF_T_F16);
    cr_expect_eq(gguf_find_tensor(&f.g, "token_embd.weight")->type, GGUF_T_Q4_0);
    cr_expect_eq(gguf_find_tensor(&f.g, "blk.0.attn_q.weight")->type, GGUF_T_Q8_0);
    gclose(&f);
    RUN(&r, NULL, "run", "-m", out, "-p", "Once upon a time", "-n", "8", "--temp", "0");
    cr_expect_eq(r.status, 0, "%s", r.err);
    remove(out);
}

/* genloop synth --type q4_k_m equals synth f32 followed by quantize: same
 * type and bytes for every tensor; and the mix's layer pattern. */
Test(quantize, synth_mix_matches_quantize)
{
    const char *shape[] = { "synth", "--shape", "custom", "--dim",      "256", "--layers",
                            "8",     "--heads", "4",      "--kv-heads", "2",   "--ffn",
                            "512",   "--vocab", "600",    "--ctx",      "128" };
    const char *f32 = tmp("sm_f32"), *direct = tmp("sm_direct"), *via = tmp("sm_via");
    const char *args[32];
    int n = 0;
    for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++)
        args[n++] = shape[i];
    args[n++] = "-o";
    const int at_out = n++, at_type = n + 1;
    args[n++] = "--type";
    n++;
    args[n] = NULL;
    args[at_out] = f32;
    args[at_type] = "f32";
    cr_assert_eq(cli_run(&r, NULL, 0, args), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    args[at_out] = direct;
    args[at_type] = "Q4_K_M";
    cr_assert_eq(cli_run(&r, NULL, 0, args), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    quantize(f32, via, "q4_k_m", NULL);
    gfile a, b;
    gopen(&a, direct);
    gopen(&b, via);
    for (uint64_t i = 0; i < a.g.n_tensors; i++) {
        const gguf_tensor *t = &a.g.tensors[i], *o = find(&b, t->name);
        cr_assert(o);
        cr_expect_eq(t->type, o->type, "%.*s", (int)t->name.len, t->name.ptr);
        cr_expect(t->nbytes == o->nbytes && !memcmp(t->data, o->data, (size_t)t->nbytes),
                  "%.*s differs", (int)t->name.len, t->name.ptr);
    }
    /* 8 layers: more bits for layers 0, 3, 6, 7 */
    static const uint32_t want[8] = { GGUF_T_Q6_K, GGUF_T_Q4_K, GGUF_T_Q4_K, GGUF_T_Q6_K,
                                      GGUF_T_Q4_K, GGUF_T_Q4_K, GGUF_T_Q6_K, GGUF_T_Q6_K };
    for (int l = 0; l < 8; l++) {
        char nm[64];
        snprintf(nm, sizeof nm, "blk.%d.attn_v.weight", l);
        cr_expect_eq(gguf_find_tensor(&a.g, nm)->type, want[l], "%s", nm);
        snprintf(nm, sizeof nm, "blk.%d.ffn_down.weight", l);
        cr_expect_eq(gguf_find_tensor(&a.g, nm)->type, want[l], "%s", nm);
        snprintf(nm, sizeof nm, "blk.%d.attn_q.weight", l);
        cr_expect_eq(gguf_find_tensor(&a.g, nm)->type, GGUF_T_Q4_K, "%s", nm);
    }
    cr_expect_eq(gguf_find_tensor(&a.g, "output.weight")->type, GGUF_T_Q6_K);
    cr_expect_eq(gguf_find_tensor(&a.g, "token_embd.weight")->type, GGUF_T_Q4_K);
    gclose(&a);
    gclose(&b);
    RUN(&r, NULL, "run", "-m", direct, "-p", "the cat", "-n", "8", "--temp", "0");
    cr_expect_eq(r.status, 0, "%s", r.err);
    remove(f32);
    remove(direct);
    remove(via);
}
