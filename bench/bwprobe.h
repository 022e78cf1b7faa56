/* Memory read bandwidth probe shared by membw and matvec: every thread
 * streams its slice of a buffer with 256-bit loads (AVX2 when the CPU has
 * it, chosen at run time; the file itself is built without -m flags). */
#ifndef GENLOOP_BENCH_BWPROBE_H
#define GENLOOP_BENCH_BWPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "threadpool.h"

static double bw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
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

static uint64_t bw_read(const void *p, size_t bytes)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx2"))
        return bw_read_avx2(p, bytes);
#endif
    return bw_read_scalar(p, bytes);
}

typedef struct bw_task {
    const unsigned char *buf;
    size_t bytes;
    volatile uint64_t sink[64];
} bw_task;

static void bw_worker(void *arg, int ith, int nth)
{
    bw_task *t = arg;
    const size_t per = t->bytes / (size_t)nth / 4096 * 4096;
    t->sink[ith & 63] = bw_read(t->buf + (size_t)ith * per, per);
}

/* best of `reps` full passes over buf, GB/s, with the pool's threads */
static double bw_measure(gl_threadpool *pool, const void *buf, size_t bytes, int reps)
{
    bw_task t = { .buf = buf, .bytes = bytes };
    const int nth = gl_threadpool_size(pool);
    const size_t used = bytes / (size_t)nth / 4096 * 4096 * (size_t)nth;
    gl_threadpool_run(pool, bw_worker, &t); /* warm up */
    double best = 0;
    for (int r = 0; r < reps; r++) {
        const double t0 = bw_now();
        gl_threadpool_run(pool, bw_worker, &t);
        const double gbs = (double)used / (bw_now() - t0) * 1e-9;
        if (gbs > best)
            best = gbs;
    }
    return best;
}

#endif
