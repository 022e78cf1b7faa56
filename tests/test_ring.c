/* The ring KV cache against a slow, obviously-correct oracle of its rule:
 * position p attends to the first `keep` positions and the latest
 * ctx - keep positions up to p. The oracle keeps the whole history and
 * filters positions; it shares no code with the runtime's forward pass. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "genloop.h"
#include "gguf.h"
#include "shared_data.h"

typedef struct oracle {
    gl_mapping map;
    gguf_file g;
    int dim, n_layers, n_heads, n_kv, hd, ffn, vocab;
    float eps, base;
} oracle;

static const float *T(const oracle *o, const char *fmt, int l)
{
    char name[96];
    snprintf(name, sizeof name, fmt, l);
    const gguf_tensor *t = gguf_find_tensor(&o->g, name);
    cr_assert(t && t->type == GGUF_T_F32, "oracle needs F32 tensor %s", name);
    return (const float *)t->data;
}

static void oracle_open(oracle *o, const char *path)
{
    gl_error err;
    cr_assert_eq(gl_map_file(&o->map, path, &err), GL_OK, "%s", err.msg);
    cr_assert_eq(gguf_parse(&o->g, o->map.data, o->map.size, &err), GL_OK, "%s", err.msg);
    int64_t v;
    gguf_get_i64(&o->g, "llama.embedding_length", &v), o->dim = (int)v;
    gguf_get_i64(&o->g, "llama.block_count", &v), o->n_layers = (int)v;
    gguf_get_i64(&o->g, "llama.attention.head_count", &v), o->n_heads = (int)v;
    gguf_get_i64(&o->g, "llama.attention.head_count_kv", &v), o->n_kv = (int)v;
    gguf_get_i64(&o->g, "llama.feed_forward_length", &v), o->ffn = (int)v;
    o->hd = o->dim / o->n_heads;
    o->vocab = (int)gguf_find_tensor(&o->g, "token_embd.weight")->ne[1];
    o->eps = 1e-5f;
    gguf_get_f32(&o->g, "llama.attention.layer_norm_rms_epsilon", &o->eps);
    o->base = 10000.0f;
    gguf_get_f32(&o->g, "llama.rope.freq_base", &o->base);
}

static void oracle_close(oracle *o)
{
    gguf_free(&o->g);
    gl_unmap_file(&o->map);
}

/* y[r] = sum_i W[r][i] x[i], W stored as rows of n_in */
static void mv(double *y, const float *W, const double *x, int n_in, int n_out)
{
    for (int r = 0; r < n_out; r++) {
        double s = 0;
        for (int i = 0; i < n_in; i++)
            s += (double)W[(size_t)r * n_in + i] * x[i];
        y[r] = s;
    }
}

static void rmsnorm(double *out, const double *x, const float *w, int n, float eps)
{
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += x[i] * x[i];
    double k = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++)
        out[i] = x[i] * k * w[i];
}

static void rope(double *v, int n_heads, int hd, int pos, double base)
{
    for (int h = 0; h < n_heads; h++)
        for (int i = 0; i < hd; i += 2) {
            double th = pos * pow(base, -(double)i / hd);
            double a = v[h * hd + i], b = v[h * hd + i + 1];
            v[h * hd + i] = a * cos(th) - b * sin(th);
            v[h * hd + i + 1] = a * sin(th) + b * cos(th);
        }
}

static bool attended(int j, int p, int ctx, int keep)
{
    return j <= p && (j < keep || j > p - (ctx - keep));
}

static void oracle_logits(const oracle *o, const int32_t *ids, int n, int ctx, int keep, float *out)
{
    const int D = o->dim, kvd = o->n_kv * o->hd, F = o->ffn;
    double *K = calloc((size_t)o->n_layers * n * kvd, sizeof *K);
    double *Vc = calloc((size_t)o->n_layers * n * kvd, sizeof *Vc);
    double *x = malloc(sizeof *x * D), *xb = malloc(sizeof *xb * D), *q = malloc(sizeof *q * D);
    double *att = malloc(sizeof *att * D), *h1 = malloc(sizeof *h1 * F),
           *h3 = malloc(sizeof *h3 * F), *sc = malloc(sizeof *sc * n),
           *lg = malloc(sizeof *lg * o->vocab);
    const float *emb = T(o, "token_embd.weight", 0);
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < D; i++)
            x[i] = emb[(size_t)ids[p] * D + i];
        for (int l = 0; l < o->n_layers; l++) {
            double *k = K + ((size_t)l * n + p) * kvd, *v = Vc + ((size_t)l * n + p) * kvd;
            rmsnorm(xb, x, T(o, "blk.%d.attn_norm.weight", l), D, o->eps);
            mv(q, T(o, "blk.%d.attn_q.weight", l), xb, D, D);
            mv(k, T(o, "blk.%d.attn_k.weight", l), xb, D, kvd);
            mv(v, T(o, "blk.%d.attn_v.weight", l), xb, D, kvd);
            rope(q, o->n_heads, o->hd, p, o->base);
            rope(k, o->n_kv, o->hd, p, o->base);
            for (int h = 0; h < o->n_heads; h++) {
                const int kh = h / (o->n_heads / o->n_kv);
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j <= p; j++) {
                    if (!attended(j, p, ctx, keep))
                        continue;
                    const double *kj = K + ((size_t)l * n + j) * kvd + kh * o->hd;
                    double s = 0;
                    for (int i = 0; i < o->hd; i++)
                        s += q[h * o->hd + i] * kj[i];
                    sc[j] = s / sqrt((double)o->hd);
                    mx = fmax(mx, sc[j]);
                }
                for (int j = 0; j <= p; j++)
                    if (attended(j, p, ctx, keep))
                        sum += exp(sc[j] - mx);
                for (int i = 0; i < o->hd; i++)
                    att[h * o->hd + i] = 0;
                for (int j = 0; j <= p; j++) {
                    if (!attended(j, p, ctx, keep))
                        continue;
                    const double w = exp(sc[j] - mx) / sum;
                    const double *vj = Vc + ((size_t)l * n + j) * kvd + kh * o->hd;
                    for (int i = 0; i < o->hd; i++)
                        att[h * o->hd + i] += w * vj[i];
                }
            }
            mv(xb, T(o, "blk.%d.attn_output.weight", l), att, D, D);
            for (int i = 0; i < D; i++)
                x[i] += xb[i];
            rmsnorm(xb, x, T(o, "blk.%d.ffn_norm.weight", l), D, o->eps);
            mv(h1, T(o, "blk.%d.ffn_gate.weight", l), xb, D, F);
            mv(h3, T(o, "blk.%d.ffn_up.weight", l), xb, D, F);
            for (int i = 0; i < F; i++)
                h1[i] = h1[i] / (1 + exp(-h1[i])) * h3[i];
            mv(xb, T(o, "blk.%d.ffn_down.weight", l), h1, F, D);
            for (int i = 0; i < D; i++)
                x[i] += xb[i];
        }
        rmsnorm(xb, x, T(o, "output_norm.weight", 0), D, o->eps);
        mv(lg, T(o, "output.weight", 0), xb, D, o->vocab);
        for (int i = 0; i < o->vocab; i++)
            out[(size_t)p * o->vocab + i] = (float)lg[i];
    }
    free(K), free(Vc), free(x), free(xb), free(q), free(att), free(h1), free(h3), free(sc),
        free(lg);
}

static int sequence(int32_t *ids, int cap)
{
    static td_ref refs[1];
    cr_assert_gt(td_read_refs("stories260K", refs, 1), 0);
    int n = 0;
    for (int i = 0; i < refs[0].n_prompt && n < cap; i++)
        ids[n++] = refs[0].prompt_tokens[i];
    for (int i = 0; i < refs[0].n_greedy && n < cap; i++)
        ids[n++] = refs[0].greedy[i];
    return n;
}

static int64_t g_start_pos; /* first position of runtime_logits_typed's sequence */
static int g_threads = 2;   /* and its threads */

static float *runtime_logits_typed(const char *path, const int32_t *ids, int n, int ctx, int keep,
                                   int chunk, const char *backend, int cache_type,
                                   uint64_t *kv_bytes)
{
    gl_model_params mp = gl_model_default_params();
    mp.backend = backend;
    gl_model *m;
    gl_error err;
    cr_assert_eq(gl_model_load(&m, path, &mp, &err), GL_OK, "%s", err.msg);
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = ctx;
    cp.n_keep = keep;
    cp.n_threads = g_threads;
    cp.cache_type = cache_type;
    gl_ctx *c;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    if (kv_bytes)
        *kv_bytes = gl_ctx_kv_bytes(c);
    c->seq_pos[0] = g_start_pos; /* as if that many tokens had gone before */
    const int V = gl_model_n_vocab(m);
    float *lg = malloc(sizeof *lg * (size_t)n * V);
    for (int i = 0; i < n; i += chunk) {
        int nb = n - i < chunk ? n - i : chunk;
        cr_assert_eq(gl_ctx_eval(c, ids + i, nb, lg + (size_t)i * V, true, &err), GL_OK, "%s",
                     err.msg);
    }
    gl_ctx_free(c);
    gl_model_free(m);
    return lg;
}

static float *runtime_logits(const char *path, const int32_t *ids, int n, int ctx, int keep,
                             int chunk, const char *backend)
{
    return runtime_logits_typed(path, ids, n, ctx, keep, chunk, backend, GL_CACHE_F16, NULL);
}

/* The runtime's logits of ids[0..n) on the model at path (ring of ctx
 * positions, keep pinned, fed in chunks) against the oracle's for a ring of
 * oracle_ctx: equal within 0.5 % (expect_equal) or clearly not. */
static void check_ring_path(const char *path, const int32_t *ids, int n, int ctx, int keep,
                            int chunk, int oracle_ctx, bool expect_equal)
{
    oracle o;
    oracle_open(&o, path);
    const int V = o.vocab;
    float *want = malloc(sizeof *want * (size_t)n * V);
    oracle_logits(&o, ids, n, oracle_ctx, keep, want);
    float *got = runtime_logits(path, ids, n, ctx, keep, chunk, NULL);
    double worst = 0;
    int worst_p = 0;
    for (int p = 0; p < n; p++) {
        double e = td_rel_rms(got + (size_t)p * V, want + (size_t)p * V, V);
        if (e > worst)
            worst = e, worst_p = p;
    }
    cr_log_info("ring ctx %d keep %d chunk %d: worst %.4f%% at position %d", ctx, keep, chunk,
                100 * worst, worst_p);
    if (expect_equal)
        cr_expect_leq(worst, 0.005, "ctx %d keep %d chunk %d: position %d off by %.4f%%", ctx, keep,
                      chunk, worst_p, 100 * worst);
    else
        cr_expect_gt(worst, 0.05, "the oracle cannot tell ctx %d from ctx %d", ctx, oracle_ctx);
    free(want);
    free(got);
    oracle_close(&o);
}

static void check_ring_vs(int ctx, int keep, int chunk, int oracle_ctx, bool expect_equal)
{
    char path[1024];
    td_need_path(path, sizeof path, "models/stories260K.gguf");
    int32_t ids[256];
    const int n = sequence(ids, 200);
    check_ring_path(path, ids, n, ctx, keep, chunk, oracle_ctx, expect_equal);
}

static void check_ring(int ctx, int keep, int chunk)
{
    check_ring_vs(ctx, keep, chunk, ctx, true);
}

/* A ring generates for ever: positions are 64-bit, and RoPE depends only on
 * distances, so a sequence that starts just below 2^31 (and crosses it)
 * gives the logits of the same sequence started at 0 -- once every layer's
 * window (16) holds only tokens it was fed: before that, the late start's
 * windows reach back over positions nobody wrote (a real context never
 * has such positions), and that reaches 16 positions further per layer. */
Test(ring, positions_past_int_max)
{
    char path[1024];
    td_need_path(path, sizeof path, "models/stories260K.gguf");
    int32_t ids[256];
    const int n = sequence(ids, 120);
    g_start_pos = 0;
    float *a = runtime_logits(path, ids, n, 16, 0, 1, NULL);
    g_start_pos = ((int64_t)1 << 31) - 60;
    float *b = runtime_logits(path, ids, n, 16, 0, 1, NULL);
    g_start_pos = 0;
    const int V = 512;
    double worst = 0;
    for (int p = 5 * 16; p < n; p++) {
        const double e = td_rel_rms(b + (size_t)p * V, a + (size_t)p * V, V);
        worst = e > worst ? e : worst;
    }
    cr_log_info("positions from 2^31 - 60 vs from 0: worst %.3e", worst);
    /* F16 keys and queries round differently at other angles: the ring
     * tests' tolerance */
    cr_expect_leq(worst, 0.005, "positions past 2^31 change the logits by %.4f%%", 100 * worst);
    free(a);
    free(b);
}

/* guards the guard: a window the runtime did not use must show */
Test(ring, oracle_is_sensitive)
{
    check_ring_vs(256, 0, 512, 32, false);
}

Test(ring, no_wrap_is_causal)
{
    check_ring(256, 0, 512);
}

Test(ring, sliding_window)
{
    check_ring(32, 0, 1);
}

Test(ring, sinks_decode)
{
    check_ring(64, 4, 1);
}

/* a prompt chunk longer than the window goes through the same rule */
Test(ring, sinks_long_prefill)
{
    check_ring(48, 3, 200);
}

Test(ring, odd_chunks)
{
    check_ring(40, 1, 7);
}

/* 8 query heads over 2 KV heads: keys in transposed blocks of 16 positions
 * (src/attention.c), so rings whose size, pinned positions and chunks cut
 * blocks anywhere. */
Test(ring, transposed_keys)
{
    const char *bin = getenv("GENLOOP_BIN") ? getenv("GENLOOP_BIN") : "build/genloop";
    char path[64];
    snprintf(path, sizeof path, "/tmp/gl_ring_kt_%ld.gguf", (long)getpid());
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s synth --shape custom --dim 256 --layers 2 --heads 8 "
             "--kv-heads 2 --ffn 512 --vocab 600 --ctx 256 --type f32 -o %s",
             bin, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    int32_t ids[120];
    for (int i = 0; i < 120; i++)
        ids[i] = 3 + (i * 7919) % 597;
    const int cases[][3] = {
        { 256, 0, 120 }, { 40, 4, 1 }, { 37, 0, 7 }, { 53, 5, 16 }, { 33, 17, 3 }
    }; /* ctx, keep, chunk */
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++)
        check_ring_path(path, ids, 120, cases[i][0], cases[i][1], cases[i][2], cases[i][0], true);
    check_ring_path(path, ids, 120, 40, 4, 1, 256, false); /* the oracle sees the wrap */
    remove(path);
}

/* The Q8_0 cache stays close to the F16 one and halves its memory (F32
 * doubles it), and gives the same bits however its tokens come (one at a
 * time or in chunks, on 1-3 threads). limit: mean relative RMS of the
 * logits. */
static void check_cache_types(const char *path, const int32_t *ids, int n, int V, double limit)
{
    uint64_t b16, b8, b32;
    float *f16 = runtime_logits_typed(path, ids, n, 64, 4, 1, NULL, GL_CACHE_F16, &b16);
    float *q8 = runtime_logits_typed(path, ids, n, 64, 4, 1, NULL, GL_CACHE_Q8_0, &b8);
    const int feeds[][2] = { { 7, 1 }, { 1, 3 }, { 16, 3 }, { n, 1 } }; /* chunk, threads */
    for (int i = 0; i < (int)(sizeof feeds / sizeof feeds[0]); i++) {
        g_threads = feeds[i][1];
        float *again =
            runtime_logits_typed(path, ids, n, 64, 4, feeds[i][0], NULL, GL_CACHE_Q8_0, NULL);
        g_threads = 2;
        cr_expect_eq(memcmp(again, q8, sizeof *q8 * (size_t)n * V), 0,
                     "Q8_0 cache, chunks of %d on %d threads: other logits than one at a time",
                     feeds[i][0], feeds[i][1]);
        free(again);
    }
    float *f32 = runtime_logits_typed(path, ids, n, 64, 4, 1, NULL, GL_CACHE_F32, &b32);
    double mean = 0, mean32 = 0;
    for (int p = 0; p < n; p++) {
        mean += td_rel_rms(q8 + (size_t)p * V, f16 + (size_t)p * V, V) / n;
        mean32 += td_rel_rms(f32 + (size_t)p * V, f16 + (size_t)p * V, V) / n;
    }
    cr_log_info("Q8_0 cache vs F16: mean %.4f%%; F32 vs F16 %.4f%%; bytes %llu / %llu / %llu",
                100 * mean, 100 * mean32, (unsigned long long)b8, (unsigned long long)b16,
                (unsigned long long)b32);
    cr_expect_leq(mean, limit, "Q8_0 cache: mean %.4f%% of std from F16", 100 * mean);
    cr_expect_leq((double)b8 / (double)b16, 0.55, "Q8_0 cache is %llu bytes vs F16 %llu",
                  (unsigned long long)b8, (unsigned long long)b16);
    cr_expect_eq(b32, 2 * b16);
    free(f16);
    free(q8);
    free(f32);
}

/* Real heads of 64+ elements: each Q8_0 block covers one head's slice. */
Test(ring, cache_types_wide_heads)
{
    const char *bin = getenv("GENLOOP_BIN") ? getenv("GENLOOP_BIN") : "build/genloop";
    char path[64]; /* one per test process: parallel runs never share it */
    snprintf(path, sizeof path, "/tmp/gl_ring_wide_%ld.gguf", (long)getpid());
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s synth --shape custom --dim 256 --layers 2 --heads 4 "
             "--kv-heads 2 --ffn 512 --vocab 600 --ctx 256 --type f32 -o %s",
             bin, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    int32_t ids[200];
    for (int i = 0; i < 200; i++)
        ids[i] = 3 + (i * 7919) % 597;
    check_cache_types(path, ids, 200, 600, 0.015);
    remove(path);
}

/* stories260K's heads have 8 elements, so one Q8_0 block spans all four KV
 * heads of a position and its scale follows the largest: the error is
 * larger than with real head sizes (measured 2.0%). */
Test(ring, cache_types_small_heads)
{
    char path[1024];
    td_need_path(path, sizeof path, "models/stories260K.gguf");
    int32_t ids[256];
    const int n = sequence(ids, 200);
    check_cache_types(path, ids, n, 512, 0.025);
}
