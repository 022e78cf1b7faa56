/* Memory read bandwidth probe shared by `genloop bench`, membw and matvec:
 * every thread streams its slice of a buffer with 256-bit loads (AVX2 when
 * the CPU has it, chosen at run time; the file itself is built without -m
 * flags), with and without software prefetch; the best pass counts. */
#ifndef GENLOOP_BENCH_BWPROBE_H
#define GENLOOP_BENCH_BWPROBE_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>

#include "threadpool.h"

/* the decode kernels' prefetch distances (arch/x86/avx2/x8_tmpl.h) */
enum { BW_PREFETCH_L2 = 4096, BW_PREFETCH_L1 = 1024 };

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

/* The same stream with software prefetches into L2 a few KiB ahead and
 * into L1 closer: on some machines (VMs especially) the hardware
 * prefetchers alone leave a core short of what it can pull, and the decode
 * kernels prefetch this way, so the roofline is the better of the two. */
__attribute__((target("avx2"))) static uint64_t bw_read_avx2_pf(const void *p, size_t bytes)
{
    const __m256i *v = p;
    const char *c = p;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 4 <= bytes / 32; i += 4) {
        _mm_prefetch(c + i * 32 + BW_PREFETCH_L2, _MM_HINT_T1);
        _mm_prefetch(c + i * 32 + BW_PREFETCH_L2 + 64, _MM_HINT_T1);
        _mm_prefetch(c + i * 32 + BW_PREFETCH_L1, _MM_HINT_T0);
        _mm_prefetch(c + i * 32 + BW_PREFETCH_L1 + 64, _MM_HINT_T0);
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

static uint64_t bw_read(const void *p, size_t bytes, int prefetch)
{
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx2"))
        return prefetch ? bw_read_avx2_pf(p, bytes) : bw_read_avx2(p, bytes);
#endif
    (void)prefetch;
    return bw_read_scalar(p, bytes);
}

typedef struct bw_task {
    const unsigned char *buf;
    size_t bytes;
    int style; /* bit 0: software prefetch; bit 1: threads interleave segments */
    volatile uint64_t sink[64];
} bw_task;

/* Segment of the interleaved style: threads read neighbouring segments at
 * the same time, as the row shares of one matrix are read, which some
 * memory systems serve faster than streams far apart. */
enum { BW_SEGMENT = 1 << 20 };

static void bw_worker(void *arg, int ith, int nth)
{
    bw_task *t = arg;
    const int prefetch = t->style & 1;
    if (t->style & 2) {
        const size_t n_seg = t->bytes / BW_SEGMENT;
        uint64_t sink = 0;
        for (size_t s = (size_t)ith; s < n_seg / (size_t)nth * (size_t)nth; s += (size_t)nth)
            sink ^= bw_read(t->buf + s * BW_SEGMENT, BW_SEGMENT, prefetch);
        t->sink[ith & 63] = sink;
        return;
    }
    const size_t per = t->bytes / (size_t)nth / 4096 * 4096;
    t->sink[ith & 63] = bw_read(t->buf + (size_t)ith * per, per, prefetch);
}

/* Best of `reps` full passes over buf per read style (plain loads or with
 * software prefetch; each thread one half, or neighbouring segments), in
 * GB/s, with the pool's threads: the roofline is what the machine can
 * deliver, so the probe tries the ways a kernel might read. */
static double bw_measure(gl_threadpool *pool, const void *buf, size_t bytes, int reps)
{
    bw_task t = { .buf = buf, .bytes = bytes };
    const int nth = gl_threadpool_size(pool);
    gl_threadpool_run(pool, bw_worker, &t); /* warm up */
    double best = 0;
    for (int r = 0; r < 4 * reps; r++) {
        t.style = r & 3;
        const size_t used = t.style & 2
                                ? bytes / BW_SEGMENT / (size_t)nth * (size_t)nth * BW_SEGMENT
                                : bytes / (size_t)nth / 4096 * 4096 * (size_t)nth;
        const double t0 = bw_now();
        gl_threadpool_run(pool, bw_worker, &t);
        const double gbs = (double)used / (bw_now() - t0) * 1e-9;
        if (gbs > best)
            best = gbs;
    }
    return best;
}

#endif
