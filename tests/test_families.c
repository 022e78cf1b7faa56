/* The decoder families (llama 3.x, qwen2, qwen3, gemma2, phi3) against the
 * reference implementation's logits on the shared synthetic files, on every
 * backend this CPU runs at 1 and 2 threads; qwen3 (no reference file)
 * against an independent double-precision forward pass written here
 * straight from the model's definition; and the loader's errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "genloop.h"
#include "gguf_writer.h"
#include "shared_data.h"

static gl_model *load_path(const char *path, const char *backend)
{
    gl_model_params mp = gl_model_default_params();
    mp.backend = backend;
    gl_model *m = NULL;
    gl_error err;
    cr_assert_eq(gl_model_load(&m, path, &mp, &err), GL_OK, "%s: %s", path, err.msg);
    return m;
}

static gl_model *load_shared(const char *name, const char *backend)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "models/%s.gguf", name);
    td_path(path, sizeof path, rel);
    return load_path(path, backend);
}

static gl_ctx *make_ctx(gl_model *m, int n_ctx, int threads, int cache_type)
{
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = n_ctx;
    cp.n_threads = threads;
    cp.cache_type = cache_type;
    gl_ctx *c = NULL;
    gl_error err;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    return c;
}

/* ||a - b|| / ||b|| */
static double rel_err(const float *a, const float *b, int n)
{
    double d = 0, r = 0;
    for (int i = 0; i < n; i++) {
        d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        r += (double)b[i] * b[i];
    }
    return sqrt(d / (r > 0 ? r : 1));
}

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

/* ---- reference logits ------------------------------------------------------ */

typedef struct tol {
    double max_step, mean;
} tol;

/* Teacher-forces prompt + greedy[0:steps-1] and returns the worst and mean
 * per-step error against the reference rows. */
static void compare_prompt(gl_model *m, const td_ref *r, const float *ref, int steps, int threads,
                           double *worst, double *mean, int *worst_s)
{
    const int n = r->n_prompt + steps - 1, V = r->n_vocab;
    int32_t *ids = malloc(sizeof *ids * (size_t)n);
    memcpy(ids, r->prompt_tokens, sizeof *ids * (size_t)r->n_prompt);
    memcpy(ids + r->n_prompt, r->greedy, sizeof *ids * (size_t)(steps - 1));
    gl_ctx *c = make_ctx(m, 512, threads, GL_CACHE_F16);
    float *lg = malloc(sizeof *lg * (size_t)n * (size_t)V);
    gl_error err;
    cr_assert_eq(gl_ctx_eval(c, ids, n, lg, true, &err), GL_OK, "%s", err.msg);
    *worst = *mean = 0;
    *worst_s = 0;
    for (int s = 0; s < steps; s++) {
        const double e = rel_err(lg + (size_t)(r->n_prompt - 1 + s) * V, ref + (size_t)s * V, V);
        *mean += e / steps;
        if (e > *worst) {
            *worst = e;
            *worst_s = s;
        }
    }
    gl_ctx_free(c);
    free(lg);
    free(ids);
}

/* Every prompt on the best backend at 1 thread; prompt 0 (up to 72 steps)
 * on every other (backend, threads) pair. */
static void check_file(const char *name, tol t)
{
    td_need_shared();
    static td_ref refs[4];
    const int nr = td_read_refs(name, refs, 4);
    cr_assert_gt(nr, 0, "cannot read reference/%s.jsonl", name);
    float *ref[4];
    int steps[4];
    for (int p = 0; p < nr; p++) {
        size_t nf;
        ref[p] = td_read_logits(name, p, &nf);
        cr_assert(ref[p], "cannot read logits of %s p%d", name, p);
        steps[p] = (int)(nf / (size_t)refs[p].n_vocab);
    }
    const char *backends[8];
    const int nb = gl_backend_list(backends, 8);
    int best = -1;
    for (int bi = 0; bi < nb; bi++)
        if (gl_backend_check(backends[bi], NULL) == GL_OK)
            best = bi; /* the list ends with the widest */
    cr_assert_geq(best, 0);
    for (int bi = 0; bi < nb; bi++) {
        if (gl_backend_check(backends[bi], NULL) != GL_OK)
            continue;
        gl_model *m = load_shared(name, backends[bi]);
        for (int threads = 1; threads <= 2; threads++) {
            /* the other pairs: one prompt, at most 72 steps (past gemma2's
             * 64-token window still) */
            const bool full = bi == best && threads == 1;
            const int n_prompts = full ? nr : 1;
            for (int p = 0; p < n_prompts; p++) {
                double worst, mean;
                int ws;
                const int n_steps = full || steps[p] < 72 ? steps[p] : 72;
                compare_prompt(m, &refs[p], ref[p], n_steps, threads, &worst, &mean, &ws);
                fprintf(stderr,
                        "families: %-24s %-8s -t %d p%d: max %.3f%% (step %d) mean %.3f%%\n", name,
                        backends[bi], threads, p, 100 * worst, ws, 100 * mean);
                cr_expect_leq(worst, t.max_step, "%s [%s -t %d] p%d step %d: %.3f%% > %.3f%%", name,
                              backends[bi], threads, p, ws, 100 * worst, 100 * t.max_step);
                cr_expect_leq(mean, t.mean, "%s [%s -t %d] p%d mean %.3f%% > %.3f%%", name,
                              backends[bi], threads, p, 100 * mean, 100 * t.mean);
            }
        }
        gl_model_free(m);
    }
    for (int p = 0; p < nr; p++)
        free(ref[p]);
}

static const tol F16 = { 0.01, 0.005 }, QUANT = { 0.075, 0.015 };

/* clang-format off */
Test(reference, llama3_f16) { check_file("synthetic-llama3-F16", F16); }
Test(reference, llama3_q8_0) { check_file("synthetic-llama3-Q8_0", QUANT); }
Test(reference, llama3_q4_k_m) { check_file("synthetic-llama3-Q4_K_M", QUANT); }
Test(reference, qwen2_f16) { check_file("synthetic-qwen2-F16", F16); }
Test(reference, qwen2_q8_0) { check_file("synthetic-qwen2-Q8_0", QUANT); }
Test(reference, qwen2_q4_k_m) { check_file("synthetic-qwen2-Q4_K_M", QUANT); }
Test(reference, phi3_f16) { check_file("synthetic-phi3-F16", F16); }
Test(reference, phi3_q8_0) { check_file("synthetic-phi3-Q8_0", QUANT); }
Test(reference, phi3_q4_k_m) { check_file("synthetic-phi3-Q4_K_M", QUANT); }
/* clang-format on */

/* The Gemma 2 file is 26 random layers deep and chaotic: rounding noise
 * grows along the sequence. Our own generic and AVX-512 kernels (same math,
 * other summation order) end 0.7 % mean / 2.5 % worst apart on it (Q8_0:
 * 4.4 % / 9 %), and the reference's own F16 and Q8_0 files differ by 10-20 %
 * from the first step on, so the F16 bound of the other families holds only
 * where the noise has not grown yet. The limits below still catch every
 * real error: without the sliding window the distance jumps to 50-130 %
 * past position 64, and a window one position too short or too long gives
 * 94-135 %. */
Test(reference, gemma2_f16)
{
    check_file("synthetic-gemma2-F16", (tol){ 0.06, 0.02 });
}
Test(reference, gemma2_q8_0)
{
    check_file("synthetic-gemma2-Q8_0", (tol){ 0.50, 0.25 });
}

/* Greedy decoding reproduces the reference tokens; a divergence is allowed
 * only where the reference's own top two logits are within 0.005 (after it,
 * the paths differ and comparing stops). */
static void check_greedy(const char *name, double tie)
{
    td_need_shared();
    static td_ref refs[4];
    const int nr = td_read_refs(name, refs, 4);
    cr_assert_gt(nr, 0);
    gl_model *m = load_shared(name, NULL);
    for (int p = 0; p < nr; p++) {
        const td_ref *r = &refs[p];
        const int V = r->n_vocab;
        size_t nf;
        float *ref = td_read_logits(name, p, &nf);
        const int steps = (int)(nf / (size_t)V);
        gl_ctx *c = make_ctx(m, 512, 1, GL_CACHE_F16);
        float *lg = malloc(sizeof *lg * (size_t)V);
        gl_error err;
        cr_assert_eq(gl_ctx_eval(c, r->prompt_tokens, r->n_prompt, lg, false, &err), GL_OK, "%s",
                     err.msg);
        int s = 0;
        for (; s < steps; s++) {
            const int32_t tok = argmax(lg, V);
            if (tok != r->greedy[s]) {
                const float *row = ref + (size_t)s * V;
                const int a = argmax(row, V);
                float second = -INFINITY;
                for (int i = 0; i < V; i++)
                    if (i != a && row[i] > second)
                        second = row[i];
                cr_expect_leq(row[a] - second, tie,
                              "%s p%d step %d: %d != reference %d, whose top-2 gap is %.4f", name,
                              p, s, tok, r->greedy[s], (double)(row[a] - second));
                break;
            }
            cr_assert_eq(gl_ctx_eval(c, &tok, 1, lg, false, &err), GL_OK, "%s", err.msg);
        }
        fprintf(stderr, "families: %s p%d greedy: %d of %d tokens equal\n", name, p, s, steps);
        free(lg);
        free(ref);
        gl_ctx_free(c);
    }
    gl_model_free(m);
}

/* clang-format off */
Test(greedy, llama3_f16) { check_greedy("synthetic-llama3-F16", 0.005); }
Test(greedy, qwen2_f16) { check_greedy("synthetic-qwen2-F16", 0.005); }
/* clang-format on */
/* phi3 p0 parts at step 58 of 64, where the reference's top two are 0.0070
 * apart: our logits are 0.05 % (about 0.002 per logit) from the reference's
 * there, enough to swap two so close. */
/* clang-format off */
Test(greedy, phi3_f16) { check_greedy("synthetic-phi3-F16", 0.01); }
/* clang-format on */
/* Gemma 2's chaos (see gemma2_f16 above) swaps gaps up to 0.055 (p2 step 24;
 * p0 parts at step 53 on a gap of 0.007, p1 at 34 on 0.022). */
/* clang-format off */
Test(greedy, gemma2_f16) { check_greedy("synthetic-gemma2-F16", 0.1); }
/* clang-format on */

/* ---- qwen3 against an independent oracle ------------------------------------
 * A tiny qwen3 GGUF written here: F32 weights, 2 layers, 4 query heads of
 * 32 sharing 2 KV heads (so heads * head_dim = 128 != dim = 64, as in the
 * real Qwen3 shapes), per-head Q/K RMSNorm, NEOX RoPE (base 1e6), SwiGLU,
 * output tied to the embedding. */

enum { QD = 64, QH = 4, QKV = 2, QHD = 32, QFFN = 96, QL = 2, QV = 32, QCTX = 64 };
#define QEPS  1e-6f
#define QBASE 1000000.0f

typedef struct qtensor {
    char name[64];
    int ne0, ne1; /* ne1 == 1: a vector */
    float *data;
} qtensor;

typedef struct qmodel {
    qtensor t[4 + 13 * QL];
    int n;
} qmodel;

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static void qadd(qmodel *q, const char *name, int ne0, int ne1, bool norm)
{
    qtensor *t = &q->t[q->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ne0 = ne0;
    t->ne1 = ne1;
    t->data = malloc(sizeof(float) * (size_t)ne0 * ne1);
    uint32_t s = 0x12345u;
    for (const char *c = name; *c; c++)
        s = s * 31u + (uint8_t)*c;
    for (int i = 0; i < ne0 * ne1; i++) {
        const float u = (float)(lcg(&s) % 20001) / 10000.0f - 1.0f; /* [-1, 1] */
        t->data[i] = norm ? 1.0f + 0.25f * u : u / sqrtf((float)ne0) * 1.5f;
    }
}

static void qmodel_init(qmodel *q)
{
    q->n = 0;
    qadd(q, "token_embd.weight", QD, QV, false);
    qadd(q, "output_norm.weight", QD, 1, true);
    for (int l = 0; l < QL; l++) {
        char n[64];
#define L(part, a, b, norm) (snprintf(n, sizeof n, "blk.%d.%s", l, part), qadd(q, n, a, b, norm))
        L("attn_norm.weight", QD, 1, true);
        L("attn_q.weight", QD, QH * QHD, false);
        L("attn_k.weight", QD, QKV * QHD, false);
        L("attn_v.weight", QD, QKV * QHD, false);
        L("attn_q_norm.weight", QHD, 1, true);
        L("attn_k_norm.weight", QHD, 1, true);
        L("attn_output.weight", QH * QHD, QD, false);
        L("ffn_norm.weight", QD, 1, true);
        L("ffn_gate.weight", QD, QFFN, false);
        L("ffn_up.weight", QD, QFFN, false);
        L("ffn_down.weight", QFFN, QD, false);
#undef L
    }
}

static void qmodel_free(qmodel *q)
{
    for (int i = 0; i < q->n; i++)
        free(q->t[i].data);
}

static const float *qget(const qmodel *q, const char *fmt, int l)
{
    char n[64];
    snprintf(n, sizeof n, fmt, l);
    for (int i = 0; i < q->n; i++)
        if (!strcmp(q->t[i].name, n))
            return q->t[i].data;
    cr_assert_fail("oracle: no tensor %s", n);
    return NULL;
}

typedef struct qopts {
    const char *arch;      /* NULL: "qwen3" */
    const char *drop;      /* leave this tensor out */
    const char *extra;     /* add this (F32 vector of QD) */
    const char *bad_shape; /* this tensor one element longer */
    int window;            /* qwen3.attention.sliding_window; 0: none */
    int rope_dim;          /* rope.dimension_count; 0: the head size */
} qopts;

/* Writes the model as GGUF to a temporary file; returns its path. */
static void qwrite(const qmodel *q, const qopts *o, char *path, size_t cap)
{
    const char *arch = o->arch ? o->arch : "qwen3";
    static const char *toks[QV];
    static char tok_text[QV][8];
    float scores[QV];
    int32_t types[QV];
    for (int i = 0; i < QV; i++) {
        snprintf(tok_text[i], sizeof tok_text[i], "%s",
                 i == 0   ? "<unk>"
                 : i == 1 ? "<s>"
                 : i == 2 ? "</s>"
                          : "");
        if (i > 2)
            snprintf(tok_text[i], sizeof tok_text[i], "t%d", i);
        toks[i] = tok_text[i];
        scores[i] = -(float)i;
        types[i] = i == 0 ? 2 : i < 3 ? 3 : 1;
    }
    gw_buf kv;
    gw_init(&kv);
    int n_kv = 0;
    char key[96];
#define KEY(suffix) (snprintf(key, sizeof key, "%s.%s", arch, suffix), n_kv++, key)
    gw_kv_str(&kv, "general.architecture", arch), n_kv++;
    gw_kv_u32(&kv, KEY("context_length"), QCTX);
    gw_kv_u32(&kv, KEY("embedding_length"), QD);
    gw_kv_u32(&kv, KEY("block_count"), QL);
    gw_kv_u32(&kv, KEY("feed_forward_length"), QFFN);
    gw_kv_u32(&kv, KEY("attention.head_count"), QH);
    gw_kv_u32(&kv, KEY("attention.head_count_kv"), QKV);
    gw_kv_u32(&kv, KEY("attention.key_length"), QHD);
    gw_kv_u32(&kv, KEY("attention.value_length"), QHD);
    gw_kv_f32(&kv, KEY("attention.layer_norm_rms_epsilon"), QEPS);
    gw_kv_f32(&kv, KEY("rope.freq_base"), QBASE);
    if (o->window)
        gw_kv_u32(&kv, KEY("attention.sliding_window"), (uint32_t)o->window);
    if (o->rope_dim)
        gw_kv_u32(&kv, KEY("rope.dimension_count"), (uint32_t)o->rope_dim);
#undef KEY
    gw_kv_str(&kv, "tokenizer.ggml.model", "llama"), n_kv++;
    gw_kv_str_arr(&kv, "tokenizer.ggml.tokens", toks, QV), n_kv++;
    gw_kv_f32_arr(&kv, "tokenizer.ggml.scores", scores, QV), n_kv++;
    gw_kv_i32_arr(&kv, "tokenizer.ggml.token_type", types, QV), n_kv++;

    qtensor extra = { .ne0 = QD, .ne1 = 1 };
    const qtensor *list[4 + 13 * QL + 1];
    int n = 0;
    for (int i = 0; i < q->n; i++)
        if (!o->drop || strcmp(o->drop, q->t[i].name) != 0)
            list[n++] = &q->t[i];
    if (o->extra) {
        snprintf(extra.name, sizeof extra.name, "%s", o->extra);
        extra.data = q->t[1].data; /* any QD floats */
        list[n++] = &extra;
    }
    gw_buf b;
    gw_init(&b);
    gw_header(&b, 3, (uint64_t)n, (uint64_t)n_kv);
    gw_bytes(&b, kv.data, kv.len);
    gw_free(&kv);
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        const bool bad = o->bad_shape && !strcmp(o->bad_shape, list[i]->name);
        const uint64_t ne[2] = { (uint64_t)list[i]->ne0 + bad, (uint64_t)list[i]->ne1 };
        gw_tensor_info(&b, list[i]->name, list[i]->ne1 > 1 ? 2 : 1, ne, 0 /* F32 */, off);
        off += ((ne[0] * ne[1] * 4) + 31) / 32 * 32;
    }
    gw_pad(&b, 32);
    for (int i = 0; i < n; i++) {
        const bool bad = o->bad_shape && !strcmp(o->bad_shape, list[i]->name);
        gw_bytes(&b, list[i]->data, sizeof(float) * (size_t)list[i]->ne0 * list[i]->ne1);
        if (bad)
            gw_f32(&b, 1.0f);
        gw_pad(&b, 32);
    }
    snprintf(path, cap, "/tmp/genloop-test-families-XXXXXX");
    const int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, b.data, b.len), (ssize_t)b.len);
    close(fd);
    gw_free(&b);
}

/* ---- the oracle: Qwen3's forward pass in double precision ------------------ */

static void o_matvec(double *y, const float *w, const double *x, int n_in, int n_out)
{
    for (int o = 0; o < n_out; o++) {
        double s = 0;
        for (int i = 0; i < n_in; i++)
            s += (double)w[(size_t)o * n_in + i] * x[i];
        y[o] = s;
    }
}

static void o_rmsnorm(double *y, const double *x, const float *w, int n)
{
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += x[i] * x[i];
    const double r = 1.0 / sqrt(ss / n + QEPS);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * r * w[i];
}

/* Rotary embedding of the first n_rot dims, theta_i = pos * base^(-2i/n_rot).
 * Qwen3 ("rotate_half", neox) pairs x[i] with x[i + n_rot/2]; Llama pairs
 * x[2i] with x[2i+1]. Dims past n_rot pass through. */
static void o_rope(double *x, int pos, int n_rot, bool neox)
{
    for (int i = 0; i < n_rot / 2; i++) {
        const double th = pos * pow((double)QBASE, -2.0 * i / n_rot);
        double *a = neox ? x + i : x + 2 * i, *b = neox ? x + i + n_rot / 2 : x + 2 * i + 1;
        const double a0 = *a, b0 = *b;
        *a = a0 * cos(th) - b0 * sin(th);
        *b = a0 * sin(th) + b0 * cos(th);
    }
}

/* Logits of every position of ids (n of them), attending to at most
 * `window` latest positions when window > 0. */
static double *oracle(const qmodel *q, const int32_t *ids, int n, int window, int n_rot, bool neox)
{
    double *logits = malloc(sizeof(double) * (size_t)n * QV);
    double *K = malloc(sizeof(double) * (size_t)QL * n * QKV * QHD);
    double *Vc = malloc(sizeof(double) * (size_t)QL * n * QKV * QHD);
    double x[QD], h[QD], qv[QH * QHD], att[QH * QHD], o[QD], g[QFFN], u[QFFN], sc[QCTX * 4];
    for (int p = 0; p < n; p++) {
        const float *e = qget(q, "token_embd.weight", 0) + (size_t)ids[p] * QD;
        for (int i = 0; i < QD; i++)
            x[i] = e[i];
        for (int l = 0; l < QL; l++) {
            double *k = K + ((size_t)l * n + p) * QKV * QHD;
            double *v = Vc + ((size_t)l * n + p) * QKV * QHD;
            o_rmsnorm(h, x, qget(q, "blk.%d.attn_norm.weight", l), QD);
            o_matvec(qv, qget(q, "blk.%d.attn_q.weight", l), h, QD, QH * QHD);
            o_matvec(k, qget(q, "blk.%d.attn_k.weight", l), h, QD, QKV * QHD);
            o_matvec(v, qget(q, "blk.%d.attn_v.weight", l), h, QD, QKV * QHD);
            for (int hh = 0; hh < QH; hh++) {
                o_rmsnorm(qv + hh * QHD, qv + hh * QHD, qget(q, "blk.%d.attn_q_norm.weight", l),
                          QHD);
                o_rope(qv + hh * QHD, p, n_rot, neox);
            }
            for (int hh = 0; hh < QKV; hh++) {
                o_rmsnorm(k + hh * QHD, k + hh * QHD, qget(q, "blk.%d.attn_k_norm.weight", l), QHD);
                o_rope(k + hh * QHD, p, n_rot, neox);
            }
            const int first = window > 0 && p - window + 1 > 0 ? p - window + 1 : 0;
            for (int hh = 0; hh < QH; hh++) {
                const int kvh = hh / (QH / QKV);
                double mx = -INFINITY, sum = 0;
                for (int j = first; j <= p; j++) {
                    const double *kj = K + ((size_t)l * n + j) * QKV * QHD + kvh * QHD;
                    double s = 0;
                    for (int i = 0; i < QHD; i++)
                        s += qv[hh * QHD + i] * kj[i];
                    sc[j - first] = s / sqrt((double)QHD);
                    mx = sc[j - first] > mx ? sc[j - first] : mx;
                }
                for (int j = first; j <= p; j++)
                    sum += sc[j - first] = exp(sc[j - first] - mx);
                for (int i = 0; i < QHD; i++) {
                    double a = 0;
                    for (int j = first; j <= p; j++)
                        a += sc[j - first] / sum *
                             Vc[((size_t)l * n + j) * QKV * QHD + kvh * QHD + i];
                    att[hh * QHD + i] = a;
                }
            }
            o_matvec(o, qget(q, "blk.%d.attn_output.weight", l), att, QH * QHD, QD);
            for (int i = 0; i < QD; i++)
                x[i] += o[i];
            o_rmsnorm(h, x, qget(q, "blk.%d.ffn_norm.weight", l), QD);
            o_matvec(g, qget(q, "blk.%d.ffn_gate.weight", l), h, QD, QFFN);
            o_matvec(u, qget(q, "blk.%d.ffn_up.weight", l), h, QD, QFFN);
            for (int i = 0; i < QFFN; i++)
                g[i] = g[i] / (1.0 + exp(-g[i])) * u[i];
            o_matvec(o, qget(q, "blk.%d.ffn_down.weight", l), g, QFFN, QD);
            for (int i = 0; i < QD; i++)
                x[i] += o[i];
        }
        o_rmsnorm(h, x, qget(q, "output_norm.weight", 0), QD);
        o_matvec(logits + (size_t)p * QV, qget(q, "token_embd.weight", 0), h, QD, QV);
    }
    free(K);
    free(Vc);
    return logits;
}

/* genloop's logits (F32 cache) vs the oracle's, every position: one pass
 * and token by token, on every backend. */
static void check_oracle(const qopts *o, int n_ctx, int n)
{
    const int window = o->window;
    const int n_rot = o->rope_dim ? o->rope_dim : QHD;
    const bool neox = !o->arch || strcmp(o->arch, "llama") != 0;
    qmodel q;
    qmodel_init(&q);
    char path[64];
    qwrite(&q, o, path, sizeof path);
    int32_t ids[QCTX];
    uint32_t s = 7;
    for (int i = 0; i < n; i++)
        ids[i] = i == 0 ? 1 : 3 + (int32_t)(lcg(&s) % (QV - 3));
    double *want = oracle(&q, ids, n, window > 0 && window < n_ctx ? window : n_ctx, n_rot, neox);
    const char *backends[8];
    const int nb = gl_backend_list(backends, 8);
    for (int bi = 0; bi < nb; bi++) {
        if (gl_backend_check(backends[bi], NULL) != GL_OK)
            continue;
        gl_model *m = load_path(path, backends[bi]);
        for (int pass = 0; pass < 2; pass++) {
            gl_ctx *c = make_ctx(m, n_ctx, 1 + pass, GL_CACHE_F32);
            float got[QCTX * QV];
            gl_error err;
            if (pass == 0)
                cr_assert_eq(gl_ctx_eval(c, ids, n, got, true, &err), GL_OK, "%s", err.msg);
            for (int i = 0; pass == 1 && i < n; i++)
                cr_assert_eq(gl_ctx_eval(c, ids + i, 1, got + (size_t)i * QV, true, &err), GL_OK,
                             "%s", err.msg);
            double worst = 0;
            for (int p = 0; p < n; p++) {
                float w[QV];
                for (int i = 0; i < QV; i++)
                    w[i] = (float)want[(size_t)p * QV + i];
                const double e = rel_err(got + (size_t)p * QV, w, QV);
                worst = e > worst ? e : worst;
            }
            fprintf(stderr, "families: %s oracle (window %d, rope %d, ctx %d) %s %s: worst %.2e\n",
                    o->arch ? o->arch : "qwen3", window, n_rot, n_ctx, backends[bi],
                    pass ? "token by token" : "one pass", worst);
            cr_expect_leq(worst, 1e-4, "%s vs oracle [%s, %s]: %.3e", o->arch ? o->arch : "qwen3",
                          backends[bi], pass ? "token by token" : "one pass", worst);
            gl_ctx_free(c);
        }
        gl_model_free(m);
    }
    free(want);
    unlink(path);
    qmodel_free(&q);
}

Test(qwen3, oracle)
{
    check_oracle(&(qopts){ 0 }, QCTX, 24);
}

/* A sliding window of 5 inside a ring of 8 that wraps twice: each position
 * sees exactly its 5 latest. */
Test(qwen3, oracle_sliding_window_in_ring)
{
    check_oracle(&(qopts){ .window = 5 }, 8, 24);
}

/* Partial rotary dims, in both pairings: neox (qwen3) and adjacent pairs
 * (the same tensors under `llama`, whose binder takes the optional Q/K
 * norms as they come). */
Test(qwen3, oracle_partial_rope)
{
    check_oracle(&(qopts){ .rope_dim = 16 }, QCTX, 24);
    check_oracle(&(qopts){ .rope_dim = 16, .arch = "llama" }, QCTX, 24);
}

/* ---- loader errors ---------------------------------------------------------- */

static void expect_load_error(const qopts *o, const char *const *needles, int n_needles)
{
    qmodel q;
    qmodel_init(&q);
    char path[64];
    qwrite(&q, o, path, sizeof path);
    gl_model *m = NULL;
    gl_error err;
    cr_assert_neq(gl_model_load(&m, path, NULL, &err), GL_OK, "the file loaded");
    for (int i = 0; i < n_needles; i++)
        cr_expect(strstr(err.msg, needles[i]), "error '%s' does not name '%s'", err.msg,
                  needles[i]);
    unlink(path);
    qmodel_free(&q);
}

Test(errors, unknown_architecture_lists_supported)
{
    static const char *const want[] = {
        "mamba", "llama", "qwen2", "qwen3", "gemma2", "phi3", "gpt2"
    };
    expect_load_error(&(qopts){ .arch = "mamba" }, want, 7);
}

Test(errors, missing_tensor_named)
{
    static const char *const want[] = { "blk.1.attn_k_norm.weight" };
    expect_load_error(&(qopts){ .drop = "blk.1.attn_k_norm.weight" }, want, 1);
}

Test(errors, misshaped_tensor_named)
{
    static const char *const want[] = { "blk.0.attn_q_norm.weight" };
    expect_load_error(&(qopts){ .bad_shape = "blk.0.attn_q_norm.weight" }, want, 1);
}

/* A tensor the decoder does not understand changes the math: refused. */
Test(errors, unknown_tensor_named)
{
    static const char *const want[] = { "blk.0.attn_output.bias" };
    expect_load_error(&(qopts){ .extra = "blk.0.attn_output.bias" }, want, 1);
}
