/* Persistent worker threads, created once per context. A parallel region
 * costs one wake-up and one barrier: workers spin briefly on a generation
 * counter and only then sleep, so steady decoding never takes a lock. */
#ifndef GENLOOP_SRC_THREADPOOL_H
#define GENLOOP_SRC_THREADPOOL_H

#include <stdint.h>

#include "genloop.h"

typedef struct gl_threadpool gl_threadpool;

/* fn runs once on every thread, ith in [0, nth); the caller is thread 0. */
typedef void (*gl_task_fn)(void *arg, int ith, int nth);

gl_status gl_threadpool_create(gl_threadpool **out, int n_threads, gl_error *err);
void gl_threadpool_free(gl_threadpool *p);
int gl_threadpool_size(const gl_threadpool *p);
/* Runs fn on all threads and returns when every one has finished. */
void gl_threadpool_run(gl_threadpool *p, gl_task_fn fn, void *arg);
/* The same, but a region of less than GL_MIN_PARALLEL_WORK multiply-adds
 * runs on the caller alone: waking workers would cost more than it saves
 * (kernels give identical results for any split, so this changes nothing
 * but time). */
#define GL_MIN_PARALLEL_WORK 32768.0
void gl_threadpool_run_sized(gl_threadpool *p, gl_task_fn fn, void *arg, double work);

/* While thread ith waits, at the end of a region for the others or for the
 * next region, it prefetches [ptr, ptr + len) into L2: the matrix products
 * name each thread's first weights of the product that comes next, so the
 * memory bandwidth a waiting core would leave unused streams them ahead.
 * Set before gl_threadpool_run; it stays in force until set again.
 * gl_threadpool_push_prefetch puts `count` runs of len bytes, `stride`
 * apart, in front of what is set (what the thread needs sooner: a layer's
 * cached keys and values before the next product's weights). A thread holds
 * four ranges; a fifth push drops the one set earliest. */
void gl_threadpool_set_prefetch(gl_threadpool *p, int ith, const void *ptr, size_t len);
void gl_threadpool_push_prefetch(gl_threadpool *p, int ith, const void *ptr, size_t len,
                                 size_t stride, int count);
/* The runs thread ith would prefetch, in order (at most max): for tests. */
int gl_threadpool_prefetch_runs(const gl_threadpool *p, int ith, const char **ptr, size_t *len,
                                int max);

/* Where a decode step's time goes (genloop bench --breakdown): while a
 * trace is set, every region gl_threadpool_run{,_sized} runs adds to its
 * sums. No allocation, no locking; the clock is read only while tracing.
 * Regions tagged with gl_threadpool_tag are matrix products (their bytes:
 * the weights they stream); the others are attention and the like. */
enum { GL_TRACE_THREADS = 64 }; /* threads whose waits are counted */

/* What a product region computes: up to three products sharing an input
 * of n_in values (type -1: none), so the breakdown can name each kind of
 * product and time it apart. In a model, one kind (the FFN's down
 * projection, say) streaming slower than the rest is a kernel's or a
 * shape's problem, not the machine's; the sums over all products hide it. */
typedef struct gl_trace_kind {
    int32_t n_in;
    int32_t type[3]; /* GGUF tensor types */
    int32_t rows[3];
} gl_trace_kind;

/* Kinds told apart (a model has ~6-12; products of further kinds count in
 * the sums only), and each kind's regions whose GB/s are kept for its
 * percentiles (the rest count in its sums only). */
enum { GL_TRACE_KINDS = 16, GL_TRACE_KIND_SAMPLES = 8192 };
typedef struct gl_trace_kind_stats {
    gl_trace_kind kind;
    uint64_t regions, ns, bytes;
    uint32_t n_samples;
    float gbs[GL_TRACE_KIND_SAMPLES]; /* each region's weight bytes per ns */
} gl_trace_kind_stats;

typedef struct gl_region_trace {
    uint64_t regions;        /* regions run */
    uint64_t product_ns;     /* wall time inside product regions */
    uint64_t product_bytes;  /* weight bytes those regions streamed */
    uint64_t other_ns;       /* wall time inside other regions */
    uint64_t wait_ns;        /* thread time idle inside regions: every thread waiting for the
                                last one to finish (summed over threads) */
    uint64_t next_bytes;     /* gl_threadpool_tag's tag, for the next region */
    gl_trace_kind next_kind; /* and its kind */
    int n_kinds;
    gl_trace_kind_stats kinds[GL_TRACE_KINDS]; /* per kind, in order of first appearance */
    struct {
        _Alignas(64) uint64_t ns;
    } end[GL_TRACE_THREADS]; /* scratch: when each thread finished the current region */
} gl_region_trace;

/* Sets (or, with NULL, clears) the trace; set between regions only. */
void gl_threadpool_set_trace(gl_threadpool *p, gl_region_trace *t);
/* Marks the next region a product of kind `kind` streaming `bytes` of
 * weights (a no-op unless tracing). */
void gl_threadpool_tag(gl_threadpool *p, uint64_t bytes, const gl_trace_kind *kind);

/* Splits [0, n) into nth near-equal parts, each a multiple of `grain`
 * except the last; returns thread ith's part. */
static inline void gl_split_range(int n, int grain, int ith, int nth, int *lo, int *hi)
{
    int units = (n + grain - 1) / grain;
    int per = units / nth, extra = units % nth;
    int u0 = ith * per + (ith < extra ? ith : extra);
    int u1 = u0 + per + (ith < extra ? 1 : 0);
    *lo = u0 * grain < n ? u0 * grain : n;
    *hi = u1 * grain < n ? u1 * grain : n;
}

/* Physical cores (falls back to online CPUs). */
int gl_physical_cores(void);

#endif
