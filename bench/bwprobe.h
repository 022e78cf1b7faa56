/* Memory read bandwidth probe shared by `genloop bench`, membw and matvec:
 * every thread streams its slice of a buffer with 256-bit loads (AVX2 when
 * the CPU has it, chosen at run time; the file itself is built without -m
 * flags), as one plain stream per thread and as several prefetched streams
 * per thread; the best pass counts. */
#ifndef GENLOOP_BENCH_BWPROBE_H
#define GENLOOP_BENCH_BWPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "hugemem.h"
#include "threadpool.h"

/* the decode kernels' prefetch distances (GL_PREFETCH_L2 / _L1 in
 * arch/x86/avx2/util.h, which this portable file cannot include) */
enum { BW_PREFETCH_L2 = 4096, BW_PREFETCH_L1 = 1024 };

/* A buffer for the probe or for benchmark weights, in transparent huge
 * pages as genloop's repacked weights are (src/hugemem.c): a roofline read
 * through 4 KiB pages would be lower than what the weights get. */
static void *bw_alloc(size_t bytes)
{
    return gl_alloc_huge(bytes);
}

static double bw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* BW_STREAMS streams at once (the slice cut into that many parts), each
 * with software prefetches into L2 a few KiB ahead and into L1 closer. A
 * core reading one sequential stream leaves DRAM banks idle (measured
 * here: ~26 GB/s on 2 threads, against ~30-34 GB/s with 8 streams each),
 * and the decode kernels read several groups of rows at once and prefetch
 * this way, so the roofline is the best of both styles. */
enum { BW_STREAMS = 8 };

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

__attribute__((target("avx2"))) static uint64_t bw_read_avx2_streams(const void *p, size_t bytes)
{
    const size_t part = bytes / BW_STREAMS / 64 * 64;
    __m256i acc[BW_STREAMS];
    for (int s = 0; s < BW_STREAMS; s++)
        acc[s] = _mm256_setzero_si256();
    for (size_t i = 0; i < part; i += 64)
        for (int s = 0; s < BW_STREAMS; s++) {
            const char *c = (const char *)p + (size_t)s * part + i;
            _mm_prefetch(c + BW_PREFETCH_L2, _MM_HINT_T1);
            _mm_prefetch(c + BW_PREFETCH_L1, _MM_HINT_T0);
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

static uint64_t bw_read_scalar_streams(const void *p, size_t bytes)
{
    const size_t part = bytes / BW_STREAMS / 64 * 64;
    uint64_t acc[BW_STREAMS] = { 0 };
    for (size_t i = 0; i < part; i += 64)
        for (int s = 0; s < BW_STREAMS; s++) {
            const char *c = (const char *)p + (size_t)s * part + i;
            __builtin_prefetch(c + BW_PREFETCH_L2, 0, 2);
            __builtin_prefetch(c + BW_PREFETCH_L1, 0, 3);
            const uint64_t *v = (const uint64_t *)(const void *)c;
            for (int k = 0; k < 8; k++)
                acc[s] ^= v[k];
        }
    for (int s = 1; s < BW_STREAMS; s++)
        acc[0] ^= acc[s];
    return acc[0];
}

static uint64_t bw_read(const void *p, size_t bytes, int streams)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx2"))
        return streams ? bw_read_avx2_streams(p, bytes) : bw_read_avx2(p, bytes);
#endif
    return streams ? bw_read_scalar_streams(p, bytes) : bw_read_scalar(p, bytes);
}

typedef struct bw_task {
    const unsigned char *buf;
    size_t bytes;
    int streams; /* 0: one plain stream per thread; 1: BW_STREAMS prefetched */
    volatile uint64_t sink[64];
} bw_task;

/* each thread's slice, and the bytes a pass reads of it */
static size_t bw_slice(size_t bytes, int nth)
{
    return bytes / (size_t)nth / 4096 * 4096;
}
static size_t bw_used(size_t slice, int streams)
{
    return streams ? slice / BW_STREAMS / 64 * 64 * BW_STREAMS : slice / 128 * 128;
}

static void bw_worker(void *arg, int ith, int nth)
{
    bw_task *t = arg;
    const size_t per = bw_slice(t->bytes, nth);
    t->sink[ith & 63] = bw_read(t->buf + (size_t)ith * per, per, t->streams);
}

/* Best of `reps` full passes over buf per read style, in GB/s, with the
 * pool's threads: the roofline is what the machine can deliver, so the
 * probe reads the ways the kernels do and keeps the best. */
static double bw_measure(gl_threadpool *pool, const void *buf, size_t bytes, int reps)
{
    bw_task t = { .buf = buf, .bytes = bytes };
    const int nth = gl_threadpool_size(pool);
    gl_threadpool_run(pool, bw_worker, &t); /* warm up */
    double best = 0;
    for (int r = 0; r < 2 * reps; r++) {
        t.streams = r & 1;
        const size_t used = bw_used(bw_slice(bytes, nth), t.streams) * (size_t)nth;
        const double t0 = bw_now();
        gl_threadpool_run(pool, bw_worker, &t);
        const double gbs = (double)used / (bw_now() - t0) * 1e-9;
        if (gbs > best)
            best = gbs;
    }
    return best;
}

#endif
