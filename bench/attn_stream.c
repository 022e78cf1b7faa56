/* Decode attention from a cache in DRAM: the grouped-query score and
 * accumulation kernels of each backend over head-major F16 K / V (the
 * engine's cache layout: keys transposed in blocks from GL_KT_MIN_GROUP
 * query heads per KV head on, rows below), one thread, one query token, many (layer, KV head)
 * items in turn as decode visits them, the whole cache larger than the
 * last-level cache. Prints GB/s of K and V read, and that as a share of the
 * one-thread read bandwidth measured in the same run.
 *
 *   attn_stream [--mb SIZE] [--ctx T] [--alloc A] [--head-dim D] [--group G]
 *               [--backend NAME] [--prefetch BYTES]
 *
 * --alloc: positions each item's region holds (default T), as the engine
 * holds n_ctx per KV head: a short context's items are then far apart, as
 * in decode, instead of one stream. --prefetch: each item's first BYTES of
 * K and of V asked for before its kernels run, as src/attention.c does
 * (ATTN_PF_BYTES); default 0.
 * (defaults: 1024 MiB of cache, T = 1024 cached positions, D = 128, G = 2
 * query heads per KV head: a Qwen3-0.6B layer's shape) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwprobe.h"
#include "genloop.h"
#include "half.h"
#include "kernels.h"

/* key blocks of ctx positions */
static int ctx_blocks(int ctx)
{
    return (ctx + GL_KT_BLOCK - 1) / GL_KT_BLOCK;
}

typedef struct as_shape {
    int ctx, hd, group;
    int alloc;    /* positions each item's region holds (>= ctx): the engine's n_ctx */
    int prefetch; /* --prefetch BYTES */
    size_t items; /* (layer, KV head) pairs the arena holds */
} as_shape;

/* One decode step's attention over every item: scores, fixed weights in
 * place of the softmax (its cost is not the memory's), accumulation. K is
 * laid out as the engine lays it out for this group size (src/attention.c):
 * transposed blocks from GL_KT_MIN_GROUP query heads on, rows below; V in
 * rows. Seconds. */
static double as_pass(const gl_kernels *k, const as_shape *s, const uint16_t *kc,
                      const uint16_t *vc, const float *q, float *scores, float *out)
{
    const size_t per = (size_t)s->alloc * s->hd;
    const size_t per_k = (size_t)ctx_blocks(s->alloc) * GL_KT_BLOCK * s->hd;
    const double t0 = bw_now();
    for (size_t it = 0; it < s->items; it++) {
        if (s->prefetch) {
            const char *kp = (const char *)(kc + it * per_k), *vp = (const char *)(vc + it * per);
            const size_t cap = (size_t)s->prefetch;
            for (size_t o = 0; o < per_k * 2 && o < cap; o += 64)
                __builtin_prefetch(kp + o, 0, 3);
            for (size_t o = 0; o < per * 2 && o < cap; o += 64)
                __builtin_prefetch(vp + o, 0, 3);
        }
        if (s->group >= GL_KT_MIN_GROUP)
            k->attn_scores_t[GL_KV_F16](scores, (size_t)s->ctx, q, (size_t)s->hd, s->group,
                                        kc + it * per_k, 0, s->ctx, s->hd, 0.088f);
        else
            k->attn_scores_g[GL_KV_F16](scores, (size_t)s->ctx, q, (size_t)s->hd, s->group,
                                        kc + it * per_k, (size_t)s->hd * 2, s->ctx, s->hd, 0.088f);
        for (int i = 0; i < s->group * s->ctx; i++)
            scores[i] = 1.0f / (float)s->ctx;
        memset(out, 0, sizeof *out * (size_t)(s->group * s->hd));
        k->attn_accum_g[GL_KV_F16](out, (size_t)s->hd, scores, (size_t)s->ctx, s->group,
                                   vc + it * per, (size_t)s->hd * 2, s->ctx, s->hd);
    }
    return bw_now() - t0;
}

int main(int argc, char **argv)
{
    size_t mb = 1024;
    as_shape s = { .ctx = 1024, .hd = 128, .group = 2 };
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ctx") && i + 1 < argc)
            s.ctx = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--alloc") && i + 1 < argc)
            s.alloc = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--head-dim") && i + 1 < argc)
            s.hd = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--group") && i + 1 < argc)
            s.group = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--prefetch") && i + 1 < argc)
            s.prefetch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: attn_stream [--mb SIZE] [--ctx T] [--head-dim D] [--group G] "
                   "[--backend NAME] [--prefetch BYTES]\n");
            return 0;
        } else {
            fprintf(stderr, "usage: attn_stream [--mb SIZE] [--ctx T] [--head-dim D] [--group G] "
                            "[--backend NAME] [--prefetch BYTES]\n");
            return 2;
        }
    }
    if (s.alloc < s.ctx)
        s.alloc = s.ctx;
    if (s.ctx < 1 || s.ctx > (1 << 24) || s.alloc > (1 << 24) || s.hd < 1 || s.hd > 1024 ||
        s.group < 1 || s.group > 64 || mb < 1 || mb > (1 << 20)) {
        fprintf(stderr, "attn_stream: out of range: --mb 1..1048576, --ctx 1..16777216, "
                        "--head-dim 1..1024, --group 1..64\n");
        return 2;
    }
    /* each item's region, V and K (whole blocks) */
    const size_t per_item = (size_t)s.alloc * s.hd * sizeof(uint16_t);
    const size_t per_k = (size_t)ctx_blocks(s.alloc) * GL_KT_BLOCK * s.hd * sizeof(uint16_t);
    s.items = (mb << 20) / 2 / per_k;
    if (s.items < 1) {
        fprintf(stderr, "attn_stream: --mb too small for one item\n");
        return 2;
    }
    uint16_t *kc = bw_alloc(s.items * per_k), *vc = bw_alloc(s.items * per_item);
    float *q = malloc(sizeof *q * (size_t)(s.group * s.hd));
    float *scores = malloc(sizeof *scores * (size_t)s.group * (size_t)s.ctx);
    float *out = malloc(sizeof *out * (size_t)(s.group * s.hd));
    if (!kc || !vc || !q || !scores || !out) {
        fprintf(stderr, "attn_stream: cannot allocate %zu MiB of cache\n", mb);
        return 1;
    }
    /* values in [-1, 1) as F16 */
    uint64_t r = 88172645463325252ull;
    for (size_t i = 0; i < s.items * per_k / 2; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        kc[i] = gl_f32_to_f16((float)(int)(r & 0xffff) / 32768.0f - 1.0f);
        if (i < s.items * per_item / 2)
            vc[i] = gl_f32_to_f16((float)(int)(r >> 16 & 0xffff) / 32768.0f - 1.0f);
    }
    for (int i = 0; i < s.group * s.hd; i++)
        q[i] = (float)(i % 7) / 7.0f - 0.5f;

    gl_threadpool *pool;
    if (gl_threadpool_create(&pool, 1, NULL) != GL_OK)
        return 1;
    const double bw = bw_measure(pool, kc, s.items * per_item, 3);
    gl_threadpool_free(pool);
    const double bytes = (double)s.items * (double)s.hd * sizeof(uint16_t) *
                         (double)(ctx_blocks(s.ctx) * GL_KT_BLOCK + s.ctx);
    printf("read bandwidth, 1 thread: %.1f GB/s; %.0f MiB read a pass: %zu items of %d positions "
           "(of %d) x %d dims, %d query heads each\n",
           bw, bytes / (1 << 20), s.items, s.ctx, s.alloc, s.hd, s.group);
    printf("%-13s %9s %8s %7s\n", "backend", "ms/pass", "GB/s", "of bw");

    const char *names[16];
    const int nb = gl_backend_list(names, 16);
    for (int bi = 0; bi < nb; bi++) {
        gl_kernels k;
        if ((only && strcmp(only, names[bi])) || gl_kernels_init(&k, names[bi], NULL) != GL_OK)
            continue;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            const double t = as_pass(&k, &s, kc, vc, q, scores, out);
            best = t < best ? t : best;
        }
        printf("%-13s %9.2f %8.1f %6.0f%%\n", names[bi], best * 1e3, bytes / best / 1e9,
               100.0 * bytes / best / 1e9 / bw);
    }
    free(kc);
    free(vc);
    free(q);
    free(scores);
    free(out);
    return 0;
}
