/* Batch invariance at the logit level: a sequence's logits are bit-identical
 * whether its tokens go through one forward pass or any chunking of them,
 * alone or among up to 15 other sequences in mixed batches, on 1 or 2
 * threads — for the float models (F32, F16: every float kernel's tiling is
 * on the path), a quantized one and one whose KV heads serve 4 query heads
 * each (keys in transposed blocks, src/attention.c), on every backend this
 * CPU runs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "context.h"
#include "genloop.h"
#include "shared_data.h"

enum { T = 40, N_SEQ = 16, T_SEQ = 12 };

static gl_model *load_path(const char *path, const char *backend)
{
    gl_model_params mp = gl_model_default_params();
    mp.backend = backend;
    gl_model *m;
    gl_error err;
    cr_assert_eq(gl_model_load(&m, path, &mp, &err), GL_OK, "%s", err.msg);
    return m;
}

/* A model of ../shared/models by name */
static gl_model *load(const char *name, const char *backend)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "models/%s.gguf", name);
    td_need_path(path, sizeof path, rel);
    return load_path(path, backend);
}

static gl_ctx *make_ctx_n(gl_model *m, int threads, int n_seq, int n_batch, int n_ctx)
{
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = n_ctx;
    cp.n_threads = threads;
    cp.n_seq = n_seq;
    cp.n_batch = n_batch;
    gl_ctx *c;
    gl_error err;
    cr_assert_eq(gl_ctx_create(&c, m, &cp, &err), GL_OK, "%s", err.msg);
    return c;
}

static gl_ctx *make_ctx(gl_model *m, int threads, int n_seq, int n_batch)
{
    return make_ctx_n(m, threads, n_seq, n_batch, 64);
}

/* Token i of sequence s: any ids will do, every sequence different. */
static int32_t tok(int s, int i, int V)
{
    return (int32_t)((1 + s * 131 + i * 37 + (i * i) % 11) % V);
}

/* Feeds toks[0..n) in chunks of the given lengths (cycled), all logits. */
static void eval_chunked(gl_ctx *c, const int32_t *toks, int n, const int *lens, int n_lens,
                         float *out, int V)
{
    gl_error err;
    gl_ctx_reset(c);
    for (int i = 0, k = 0; i < n; k++) {
        int take = lens[k % n_lens] < n - i ? lens[k % n_lens] : n - i;
        cr_assert_eq(gl_ctx_eval(c, toks + i, take, out + (size_t)i * V, true, &err), GL_OK, "%s",
                     err.msg);
        i += take;
    }
}

static void check_model(const char *name, const char *backend)
{
    gl_model *m = load(name, backend);
    const int V = gl_model_n_vocab(m);
    const size_t row = sizeof(float) * (size_t)V;
    int32_t toks[T];
    for (int i = 0; i < T; i++)
        toks[i] = tok(0, i, V);
    float *ref = malloc(row * T), *got = malloc(row * T);

    /* one pass, one thread: the reference */
    gl_ctx *c1 = make_ctx(m, 1, 1, T), *c2 = make_ctx(m, 2, 1, T);
    const int all[1] = { T };
    eval_chunked(c1, toks, T, all, 1, ref, V);

    /* chunks of every length up to twice the widest tile (16 columns),
     * longer ones, and irregular ones (on 2 threads: the pool spins, so
     * few passes there) */
    const int lens[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 15, 16, 17, 33 };
    for (int li = 0; li < (int)(sizeof lens / sizeof lens[0]); li++) {
        const int len = lens[li];
        eval_chunked(c1, toks, T, &len, 1, got, V);
        for (int i = 0; i < T; i++)
            cr_assert_eq(memcmp(got + (size_t)i * V, ref + (size_t)i * V, row), 0,
                         "%s/%s: chunks of %d: position %d differs from one pass", name, backend,
                         len, i);
    }
    const int odd[] = { 3, 1, 7, 2, 5, 1, 1, 6 };
    eval_chunked(c2, toks, T, odd, 8, got, V);
    cr_assert_eq(memcmp(got, ref, row * T), 0, "%s/%s: irregular chunks differ", name, backend);
    eval_chunked(c2, toks, T, all, 1, got, V);
    cr_assert_eq(memcmp(got, ref, row * T), 0, "%s/%s: -t 2 differs", name, backend);
    gl_ctx_free(c2);
    /* more threads than this machine has CPUs: the pool yields, same logits */
    gl_ctx *c5 = make_ctx(m, 5, 1, T);
    eval_chunked(c5, toks, T, all, 1, got, V);
    cr_assert_eq(memcmp(got, ref, row * T), 0, "%s/%s: -t 5 differs", name, backend);
    gl_ctx_free(c5);

    /* N_SEQ sequences, each alone in one pass, then all together in mixed
     * batches: each step feeds every unfinished sequence 1 to 4 tokens */
    float *alone = malloc(row * N_SEQ * T_SEQ), *mixed = malloc(row * N_SEQ * T_SEQ);
    int32_t seq_toks[N_SEQ][T_SEQ];
    for (int s = 0; s < N_SEQ; s++) {
        for (int i = 0; i < T_SEQ; i++)
            seq_toks[s][i] = tok(s, i, V);
        const int one[1] = { T_SEQ };
        eval_chunked(c1, seq_toks[s], T_SEQ, one, 1, alone + (size_t)s * T_SEQ * V, V);
    }
    for (int threads = 2; threads >= 1; threads--) {
        gl_ctx *cm = make_ctx(m, threads, N_SEQ, N_SEQ * 4);
        int fed[N_SEQ] = { 0 }, b_seq[N_SEQ * 4], b_out[N_SEQ * 4], b_src[N_SEQ * 4];
        int32_t b_tok[N_SEQ * 4];
        float *b_logits = malloc(row * N_SEQ * 4);
        for (int step = 0;; step++) {
            int n = 0;
            /* a rotating subset of sequences, in a rotating order */
            for (int k = 0; k < N_SEQ; k++) {
                const int s = (k + step * 5) % N_SEQ;
                if (fed[s] == T_SEQ || (s + step) % 3 == 0)
                    continue;
                int take = 1 + (s * 7 + step) % 4;
                take = take < T_SEQ - fed[s] ? take : T_SEQ - fed[s];
                for (int j = 0; j < take; j++, n++) {
                    b_tok[n] = seq_toks[s][fed[s] + j];
                    b_seq[n] = s;
                    b_out[n] = n;
                    b_src[n] = s * T_SEQ + fed[s] + j;
                }
                fed[s] += take;
            }
            if (n == 0) {
                bool done = true;
                for (int s = 0; s < N_SEQ; s++)
                    done &= fed[s] == T_SEQ;
                if (done)
                    break;
                continue;
            }
            gl_batch b = { .tokens = b_tok,
                           .seq = b_seq,
                           .n = n,
                           .out_rows = b_out,
                           .n_out = n,
                           .logits = b_logits };
            gl_error err;
            cr_assert_eq(gl_ctx_forward(cm, &b, &err), GL_OK, "%s", err.msg);
            for (int r = 0; r < n; r++)
                memcpy(mixed + (size_t)b_src[r] * V, b_logits + (size_t)r * V, row);
        }
        for (int s = 0; s < N_SEQ; s++)
            for (int i = 0; i < T_SEQ; i++) {
                const size_t at = ((size_t)s * T_SEQ + (size_t)i) * V;
                cr_assert_eq(memcmp(mixed + at, alone + at, row), 0,
                             "%s/%s -t %d: sequence %d position %d differs in a mixed batch", name,
                             backend, threads, s, i);
            }
        free(b_logits);
        gl_ctx_free(cm);
    }
    free(alone);
    free(mixed);
    free(ref);
    free(got);
    gl_ctx_free(c1);
    gl_model_free(m);
}

static void check_every_backend(const char *name)
{
    const char *names[16];
    const int nb = gl_backend_list(names, 16);
    int ran = 0;
    for (int i = 0; i < nb; i++) {
        if (gl_backend_check(names[i], NULL) != GL_OK) {
            /* info, not warn: Criterion 2.4.1 exits with status 1 after any
             * warning, which failed the suite on every CPU without one of
             * the built backends (a Zen 4 has no AVX-VNNI) */
            cr_log_info("%s: backend %s cannot run on this CPU: not checked", name, names[i]);
            continue;
        }
        check_model(name, names[i]);
        ran++;
    }
    cr_assert_gt(ran, 0);
}

Test(invariance, f32)
{
    check_every_backend("stories260K");
}
Test(invariance, f16)
{
    check_every_backend("stories260K-F16");
}
Test(invariance, q4_0)
{
    check_every_backend("stories260K-mixQ4_0");
}
/* 8 query heads over 2 KV heads: the cache keeps keys in transposed blocks */
Test(invariance, transposed_keys)
{
    check_every_backend("synthetic-llama3-F16");
}

/* A prompt of n tokens of m (whose context holds them) on 2 threads, in
 * two chunks (first, n - first) and one token at a time: the same logits
 * as one pass on 1 thread. */
static void check_rows_split(gl_model *m, const char *what, int n, int first)
{
    const int V = gl_model_n_vocab(m);
    const size_t row = sizeof(float) * (size_t)V;
    int32_t *toks = malloc(sizeof *toks * (size_t)n);
    for (int i = 0; i < n; i++)
        toks[i] = tok(0, i, V);
    float *ref = malloc(row * n), *got = malloc(row * n);
    const int n_ctx = n > 64 ? n : 64;
    gl_ctx *c1 = make_ctx_n(m, 1, 1, n, n_ctx), *c2 = make_ctx_n(m, 2, 1, n, n_ctx);
    const int all[1] = { n }, one[1] = { 1 }, two_parts[2] = { first, n - first };
    eval_chunked(c1, toks, n, all, 1, ref, V);
    eval_chunked(c2, toks, n, all, 1, got, V);
    cr_assert_eq(memcmp(got, ref, row * n), 0, "%s: -t 2 differs from -t 1", what);
    eval_chunked(c2, toks, n, two_parts, 2, got, V);
    cr_assert_eq(memcmp(got, ref, row * n), 0, "%s: chunks of %d and %d differ", what, first,
                 n - first);
    eval_chunked(c1, toks, n, one, 1, got, V);
    cr_assert_eq(memcmp(got, ref, row * n), 0, "%s: one token at a time differs", what);
    free(toks);
    free(ref);
    free(got);
    gl_ctx_free(c1);
    gl_ctx_free(c2);
}

/* A prompt's rows are wide enough here (40 x 1024) for the steps between
 * the products (norms, RoPE, SwiGLU, the activations' quantization) to be
 * split over the pool, which the small shared models never are: the same
 * bits as one thread, and as one token at a time. A K-quant mix, so both
 * activation formats (8-bit 32- and 256-element blocks) are made. */
Test(invariance, rows_split_over_threads)
{
    char path[96], cmd[512];
    snprintf(path, sizeof path, "/tmp/gl_inv_rows_%ld.gguf", (long)getpid());
    snprintf(cmd, sizeof cmd,
             "%s synth --shape custom --dim 1024 --layers 2 --heads 8 --kv-heads 2 --ffn 2816 "
             "--vocab 300 --ctx 64 --type q4_k_m -o %s",
             cli_bin(), path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    const char *names[16];
    const int n_backends = gl_backend_list(names, 16);
    for (int bi = 0; bi < n_backends; bi++) {
        if (gl_backend_check(names[bi], NULL) != GL_OK)
            continue;
        gl_model *m = load_path(path, names[bi]);
        check_rows_split(m, names[bi], T, 33);
        gl_model_free(m);
    }
    unlink(path);
}

/* GPT-2's steps between the products (LayerNorm, the fused QKV's bias,
 * GELU, the residuals) split over the pool as well: a prompt of the shared
 * gpt2 file's whole learned context (256 rows of 128 floats reach the
 * split). */
Test(invariance, gpt2_rows_split_over_threads)
{
    const char *names[16];
    const int n_backends = gl_backend_list(names, 16);
    for (int bi = 0; bi < n_backends; bi++) {
        if (gl_backend_check(names[bi], NULL) != GL_OK)
            continue;
        gl_model *m = load("synthetic-gpt2-tiny", names[bi]);
        check_rows_split(m, names[bi], 256, 201);
        gl_model_free(m);
    }
}
