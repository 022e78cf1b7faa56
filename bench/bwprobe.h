/* Memory read bandwidth probe shared by `genloop bench`, membw and matvec:
 * every thread streams its slice of a buffer with 256-bit loads (AVX2 when
 * the CPU has it, chosen at run time; the file itself is built without -m
 * flags), as one plain stream per thread and as several prefetched streams
 * per thread, prefetched the way each decode tune's kernels prefetch
 * (src/tune.h); the best pass counts. */
#ifndef GENLOOP_BENCH_BWPROBE_H
#define GENLOOP_BENCH_BWPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "hugemem.h"
#include "threadpool.h"
#include "tune.h"

/* A buffer for the probe or for benchmark weights, in transparent huge
 * pages as genloop's repacked weights are (src/hugemem.c): a roofline read
 * through 4 KiB pages would be lower than what the weights get. Always
 * 64-byte aligned. */
static void *bw_alloc(size_t bytes)
{
    /* below a huge page gl_alloc_huge is malloc, 16-byte aligned: the
     * probe's aligned 256-bit loads need lines */
    if (bytes < (2u << 20))
        return aligned_alloc(64, (bytes + 63) / 64 * 64);
    return gl_alloc_huge(bytes);
}

static double bw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Up to BW_STREAMS streams at once (the slice cut into that many parts),
 * each with the software prefetches of a decode tune (src/tune.h): far
 * ahead and into L1 closer. A core reading one sequential stream leaves
 * DRAM banks idle (measured on Sapphire Rapids: ~26 GB/s on 2 threads,
 * against ~30-34 GB/s with 8 streams each), and the decode kernels read
 * several groups of rows at once and prefetch this way: eight streams
 * (the Q8_0 pairs of the default tune) and each tune's x8_streams (four:
 * on a Zen 5, 1 thread, four prefetcht0 streams read ~40 GB/s where eight
 * read ~30 and one plain stream ~33), so the roofline is the best of
 * them all. (zen4's decode reads one unprefetched stream per thread: the
 * plain pass, the fastest on a Zen 4.) */
enum { BW_STREAMS = 8, BW_STYLES = 1 + 2 * GL_TUNE_COUNT };

/* Read style s: 0 one plain stream; else streams prefetched as *tune does,
 * BW_STREAMS of them or the tune's x8_streams. */
static inline int bw_style(int s, int *tune)
{
    *tune = (s - 1) / 2;
    if (s == 0)
        return 0;
    const int n = (s - 1) % 2 ? gl_tunes[*tune].x8_streams : BW_STREAMS;
    return n < 1 ? 1 : n > BW_STREAMS ? BW_STREAMS : n;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
__attribute__((target("avx2"))) static uint64_t bw_read_avx2(const void *p, size_t bytes)
{
    const __m256i *v = p;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 4 <= bytes / 32; i += 4) {
        a0 = _mm256_xor_si256(a0, _mm256_load_si256(v + i));
        a1 = _mm256_xor_si256(a1, _mm256_load_si256(v + i + 1));
        a2 = _mm256_xor_si256(a2, _mm256_load_si256(v + i + 2));
        a3 = _mm256_xor_si256(a3, _mm256_load_si256(v + i + 3));
    }
    a0 = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
    return (uint64_t)_mm256_extract_epi64(a0, 0) ^ (uint64_t)_mm256_extract_epi64(a0, 3);
}

/* The decode kernels' prefetches (arch/x86/avx2/util.h gl_prefetch_streams)
 * for the given tune: far (prefetcht1, or prefetcht0 with far_t0) and near. */
__attribute__((target("avx2"), always_inline)) static inline void bw_prefetch(const char *c,
                                                                              int tune)
{
    if (gl_tunes[tune].far_t0)
        _mm_prefetch(c + gl_tunes[tune].pf_far, _MM_HINT_T0);
    else
        _mm_prefetch(c + gl_tunes[tune].pf_far, _MM_HINT_T1);
    _mm_prefetch(c + gl_tunes[tune].pf_near, _MM_HINT_T0);
}

__attribute__((target("avx2"))) static uint64_t bw_read_avx2_streams(const void *p, size_t bytes,
                                                                     int tune, int ns)
{
    const size_t part = bytes / (size_t)ns / 64 * 64;
    __m256i acc[BW_STREAMS];
    for (int s = 0; s < BW_STREAMS; s++)
        acc[s] = _mm256_setzero_si256();
    for (size_t i = 0; i < part; i += 64)
        for (int s = 0; s < ns; s++) {
            const char *c = (const char *)p + (size_t)s * part + i;
            bw_prefetch(c, tune);
            acc[s] = _mm256_xor_si256(acc[s], _mm256_load_si256((const __m256i *)c));
            acc[s] = _mm256_xor_si256(acc[s], _mm256_load_si256((const __m256i *)(c + 32)));
        }
    for (int s = 1; s < BW_STREAMS; s++)
        acc[0] = _mm256_xor_si256(acc[0], acc[s]);
    return (uint64_t)_mm256_extract_epi64(acc[0], 0) ^ (uint64_t)_mm256_extract_epi64(acc[0], 3);
}
#endif

static uint64_t bw_read_scalar(const void *p, size_t bytes)
{
    const uint64_t *v = p;
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (size_t i = 0; i + 4 <= bytes / 8; i += 4) {
        a0 ^= v[i];
        a1 ^= v[i + 1];
        a2 ^= v[i + 2];
        a3 ^= v[i + 3];
    }
    return a0 ^ a1 ^ a2 ^ a3;
}

static uint64_t bw_read_scalar_streams(const void *p, size_t bytes, int tune, int ns)
{
    const size_t part = bytes / (size_t)ns / 64 * 64;
    uint64_t acc[BW_STREAMS] = { 0 };
    for (size_t i = 0; i < part; i += 64)
        for (int s = 0; s < ns; s++) {
            const char *c = (const char *)p + (size_t)s * part + i;
            if (gl_tunes[tune].far_t0)
                __builtin_prefetch(c + gl_tunes[tune].pf_far, 0, 3);
            else
                __builtin_prefetch(c + gl_tunes[tune].pf_far, 0, 2);
            __builtin_prefetch(c + gl_tunes[tune].pf_near, 0, 3);
            const uint64_t *v = (const uint64_t *)(const void *)c;
            for (int k = 0; k < 8; k++)
                acc[s] ^= v[k];
        }
    for (int s = 1; s < BW_STREAMS; s++)
        acc[0] ^= acc[s];
    return acc[0];
}

/* one pass of read style `style` (bw_style) */
static uint64_t bw_read(const void *p, size_t bytes, int style)
{
    int tune;
    const int ns = bw_style(style, &tune);
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx2"))
        return ns ? bw_read_avx2_streams(p, bytes, tune, ns) : bw_read_avx2(p, bytes);
#endif
    return ns ? bw_read_scalar_streams(p, bytes, tune, ns) : bw_read_scalar(p, bytes);
}

typedef struct bw_task {
    const unsigned char *buf;
    size_t bytes;
    int style; /* bw_style */
    volatile uint64_t sink[64];
} bw_task;

/* each thread's slice, and the bytes a pass reads of it */
static size_t bw_slice(size_t bytes, int nth)
{
    return bytes / (size_t)nth / 4096 * 4096;
}
static size_t bw_used(size_t slice, int style)
{
    int tune;
    const size_t ns = (size_t)bw_style(style, &tune);
    return ns ? slice / ns / 64 * 64 * ns : slice / 128 * 128;
}

static void bw_worker(void *arg, int ith, int nth)
{
    bw_task *t = arg;
    const size_t per = bw_slice(t->bytes, nth);
    t->sink[ith & 63] = bw_read(t->buf + (size_t)ith * per, per, t->style);
}

/* Best of `reps` full passes over buf per read style (bw_style), in GB/s,
 * with the pool's threads, into best[style]. Styles are interleaved pass
 * by pass. */
static inline void bw_measure_styles(gl_threadpool *pool, const void *buf, size_t bytes, int reps,
                                     double best[BW_STYLES])
{
    bw_task t = { .buf = buf, .bytes = bytes };
    const int nth = gl_threadpool_size(pool);
    gl_threadpool_run(pool, bw_worker, &t); /* warm up */
    for (int i = 0; i < BW_STYLES; i++)
        best[i] = 0;
    for (int r = 0; r < BW_STYLES * reps; r++) {
        t.style = r % BW_STYLES;
        const size_t used = bw_used(bw_slice(bytes, nth), t.style) * (size_t)nth;
        const double t0 = bw_now();
        gl_threadpool_run(pool, bw_worker, &t);
        const double gbs = (double)used / (bw_now() - t0) * 1e-9;
        if (gbs > best[t.style])
            best[t.style] = gbs;
    }
}

/* The roofline is what the machine can deliver, so the probe reads every
 * way the kernels do, whichever tune this CPU gets (on a Zen 5 the default
 * tune's prefetcht1 streams read slower than prefetcht0 ones), and keeps
 * the best. */
static inline double bw_measure(gl_threadpool *pool, const void *buf, size_t bytes, int reps)
{
    double best[BW_STYLES], top = 0;
    bw_measure_styles(pool, buf, bytes, reps, best);
    for (int i = 0; i < BW_STYLES; i++)
        top = best[i] > top ? best[i] : top;
    return top;
}

#endif
