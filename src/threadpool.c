#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield")
#else
#define cpu_relax() ((void)0)
#endif

/* About a millisecond of spinning before a worker sleeps: long enough to
 * cover the gap between two parallel regions of one token. */
enum { SPIN_ITERS = 1 << 16 };

typedef struct worker {
    gl_threadpool *pool;
    pthread_t thread;
    int ith;
} worker;

/* What one thread prefetches while it waits (gl_threadpool_set_prefetch,
 * gl_threadpool_push_prefetch): up to IDLE_RANGES ranges, walked in order,
 * each `count` runs of `len` bytes `stride` apart. Its own cache lines, so
 * that setting them never disturbs a spinning core. */
enum { IDLE_RANGES = 4 };
typedef struct idle_range {
    const char *ptr;
    size_t len, stride;
    int count;
} idle_range;
typedef struct idle_prefetch {
    _Alignas(64) idle_range r[IDLE_RANGES];
    int n;
} idle_prefetch;

/* A waiting thread's walk over its own copy of the ranges, taken before the
 * caller may set the next ones. */
typedef struct idle_walk {
    idle_prefetch list;
    int k, run;            /* range, run of it */
    const char *cur, *end; /* the run's next line and end */
} idle_walk;

/* Points the walk at run `run` of range k. */
static void walk_at(idle_walk *w)
{
    const idle_range *r = &w->list.r[w->k];
    w->cur = r->ptr + (size_t)w->run * r->stride;
    w->end = w->cur + r->len;
}

static void walk_start(idle_walk *w, const idle_prefetch *ip)
{
    w->list = *ip;
    w->k = 0;
    w->run = 0;
    w->cur = w->end = NULL;
    if (w->list.n)
        walk_at(w);
}

/* Moves the walk to its next run, of this range or the next; false at the
 * end of the list. */
static bool walk_next_run(idle_walk *w)
{
    if (w->k >= w->list.n)
        return false;
    if (++w->run >= w->list.r[w->k].count) {
        w->run = 0;
        if (++w->k >= w->list.n)
            return false;
    }
    walk_at(w);
    return true;
}

/* Prefetches the walk's next cache line; false once there is none left
 * (then the waiter relaxes instead). */
static inline bool prefetch_step(idle_walk *w)
{
    while (w->cur >= w->end)
        if (!walk_next_run(w))
            return false;
    __builtin_prefetch(w->cur, 0, 2);
    w->cur += 64;
    return true;
}

struct gl_threadpool {
    int n;
    int spin; /* wait iterations before yielding (caller) or sleeping (workers) */
    worker *workers;
    idle_prefetch *idle; /* [n] */
    gl_task_fn fn;
    void *arg;
    _Atomic unsigned gen;
    _Atomic int done;
    _Atomic int sleepers;
    _Atomic int stop;
    gl_region_trace *trace; /* gl_threadpool_set_trace; NULL: not tracing */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static uint64_t trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Thread ith finished the region (tracing only). */
static void trace_end(gl_region_trace *t, int ith)
{
    if (t && ith < GL_TRACE_THREADS)
        t->end[ith].ns = trace_now();
}

/* A product region of ns nanoseconds into its kind's sums. */
static void trace_kind(gl_region_trace *t, uint64_t ns)
{
    int i = 0;
    while (i < t->n_kinds && memcmp(&t->kinds[i].kind, &t->next_kind, sizeof t->next_kind))
        i++;
    if (i == GL_TRACE_KINDS)
        return;
    gl_trace_kind_stats *k = &t->kinds[i];
    if (i == t->n_kinds) {
        t->n_kinds++;
        k->kind = t->next_kind;
    }
    k->regions++;
    k->ns += ns;
    k->bytes += t->next_bytes;
    if (k->n_samples < GL_TRACE_KIND_SAMPLES)
        k->gbs[k->n_samples++] = ns ? (float)((double)t->next_bytes / (double)ns) : 0.0f;
}

/* The region began at t0 and ended now, run by nth threads: into the sums.
 * The workers' end times were written before their `done` increment, which
 * the caller has seen. */
static void trace_region(gl_region_trace *t, uint64_t t0, int nth)
{
    const uint64_t t1 = trace_now();
    t->regions++;
    if (t->next_bytes) {
        t->product_ns += t1 - t0;
        t->product_bytes += t->next_bytes;
        trace_kind(t, t1 - t0);
    } else {
        t->other_ns += t1 - t0;
    }
    t->next_bytes = 0;
    /* each thread idles from its own end to the last one's */
    const int n = nth < GL_TRACE_THREADS ? nth : GL_TRACE_THREADS;
    uint64_t last = 0;
    for (int i = 0; i < n; i++)
        last = t->end[i].ns > last ? t->end[i].ns : last;
    for (int i = 0; i < n; i++)
        t->wait_ns += last - t->end[i].ns;
}

static void *worker_main(void *p)
{
    worker *w = p;
    gl_threadpool *pool = w->pool;
    unsigned seen = 0;
    idle_walk pf = { .list.n = 0 };
    for (;;) {
        for (int i = 0; i < pool->spin && atomic_load(&pool->gen) == seen; i++)
            if (!prefetch_step(&pf))
                cpu_relax();
        if (atomic_load(&pool->gen) == seen) {
            pthread_mutex_lock(&pool->mu);
            atomic_fetch_add(&pool->sleepers, 1);
            while (atomic_load(&pool->gen) == seen)
                pthread_cond_wait(&pool->cv, &pool->mu);
            atomic_fetch_sub(&pool->sleepers, 1);
            pthread_mutex_unlock(&pool->mu);
        }
        seen = atomic_load(&pool->gen);
        if (atomic_load(&pool->stop))
            return NULL;
        pool->fn(pool->arg, w->ith, pool->n);
        trace_end(pool->trace, w->ith);
        /* read before done: the caller sets the next ranges only after it */
        walk_start(&pf, &pool->idle[w->ith]);
        atomic_fetch_add(&pool->done, 1);
    }
}

static void publish(gl_threadpool *p)
{
    atomic_fetch_add(&p->gen, 1);
    /* A worker increments sleepers before it re-checks gen under the lock,
     * so either it sees the new gen or we see it asleep and wake it. */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

/* CPUs this process may run on (its affinity mask, else all online). */
static int usable_cpus(void)
{
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

gl_status gl_threadpool_create(gl_threadpool **out, int n_threads, gl_error *err)
{
    *out = NULL;
    if (n_threads < 1 || n_threads > 1024)
        return gl_fail(err, GL_ERR_ARG, "thread count %d is out of range [1, 1024]", n_threads);
    gl_threadpool *p = calloc(1, sizeof *p);
    if (!p)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    p->n = n_threads;
    /* More threads than CPUs: a spinning thread would hold the CPU a thread
     * it waits for needs (decode -t 4 on 2 CPUs: ~5 tok/s spinning), so
     * waiters yield and sleep at once. */
    p->spin = n_threads > usable_cpus() ? 0 : SPIN_ITERS;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->workers = calloc((size_t)n_threads, sizeof *p->workers);
    p->idle = aligned_alloc(64, (size_t)n_threads * sizeof *p->idle);
    if (p->idle)
        memset(p->idle, 0, (size_t)n_threads * sizeof *p->idle);
    if (!p->workers || !p->idle) {
        gl_threadpool_free(p);
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    }
    for (int i = 1; i < n_threads; i++) {
        p->workers[i].pool = p;
        p->workers[i].ith = i;
        int rc = pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
        if (rc != 0) {
            p->n = i; /* join only those started */
            gl_threadpool_free(p);
            return gl_fail(err, GL_ERR_NOMEM, "cannot start thread %d: %s", i, strerror(rc));
        }
    }
    *out = p;
    return GL_OK;
}

void gl_threadpool_free(gl_threadpool *p)
{
    if (!p)
        return;
    if (p->workers) {
        atomic_store(&p->stop, 1);
        pthread_mutex_lock(&p->mu);
        atomic_fetch_add(&p->gen, 1);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        for (int i = 1; i < p->n; i++)
            pthread_join(p->workers[i].thread, NULL);
        free(p->workers);
    }
    free(p->idle);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

int gl_threadpool_size(const gl_threadpool *p)
{
    return p->n;
}

/* fn on the caller alone */
static void run_alone(gl_threadpool *p, gl_task_fn fn, void *arg)
{
    gl_region_trace *t = p->trace;
    const uint64_t t0 = t ? trace_now() : 0;
    fn(arg, 0, 1);
    if (t) {
        trace_end(t, 0);
        trace_region(t, t0, 1);
    }
}

void gl_threadpool_run(gl_threadpool *p, gl_task_fn fn, void *arg)
{
    if (p->n == 1) {
        run_alone(p, fn, arg);
        return;
    }
    gl_region_trace *t = p->trace;
    const uint64_t t0 = t ? trace_now() : 0;
    p->fn = fn;
    p->arg = arg;
    atomic_store(&p->done, 0);
    publish(p);
    fn(arg, 0, p->n);
    trace_end(t, 0);
    /* Spin for the common case; yield when the workers are descheduled
     * (an oversubscribed machine), or spinning would steal their core. */
    idle_walk pf;
    walk_start(&pf, &p->idle[0]);
    for (int i = 0; atomic_load(&p->done) != p->n - 1; i++) {
        if (prefetch_step(&pf))
            continue;
        if (i < p->spin)
            cpu_relax();
        else
            sched_yield();
    }
    if (t)
        trace_region(t, t0, p->n);
}

void gl_threadpool_set_trace(gl_threadpool *p, gl_region_trace *t)
{
    p->trace = t;
}

void gl_threadpool_tag(gl_threadpool *p, uint64_t bytes, const gl_trace_kind *kind)
{
    if (p->trace) {
        p->trace->next_bytes = bytes;
        p->trace->next_kind = *kind;
    }
}

void gl_threadpool_set_prefetch(gl_threadpool *p, int ith, const void *ptr, size_t len)
{
    p->idle[ith].n = 0;
    gl_threadpool_push_prefetch(p, ith, ptr, len, 0, 1);
}

void gl_threadpool_push_prefetch(gl_threadpool *p, int ith, const void *ptr, size_t len,
                                 size_t stride, int count)
{
    idle_prefetch *ip = &p->idle[ith];
    if (!ptr || !len || count < 1)
        return;
    const int n = ip->n < IDLE_RANGES ? ip->n + 1 : IDLE_RANGES; /* the last one drops off */
    for (int i = n - 1; i > 0; i--)
        ip->r[i] = ip->r[i - 1];
    ip->r[0] = (idle_range){ .ptr = ptr, .len = len, .stride = stride, .count = count };
    ip->n = n;
}

int gl_threadpool_prefetch_runs(const gl_threadpool *p, int ith, const char **ptr, size_t *len,
                                int max)
{
    idle_walk w;
    walk_start(&w, &p->idle[ith]);
    int n = 0;
    for (bool more = w.list.n > 0; more && n < max; more = walk_next_run(&w)) {
        ptr[n] = w.cur;
        len[n++] = (size_t)(w.end - w.cur);
    }
    return n;
}

void gl_threadpool_run_sized(gl_threadpool *p, gl_task_fn fn, void *arg, double work)
{
    if (work < GL_MIN_PARALLEL_WORK)
        run_alone(p, fn, arg);
    else
        gl_threadpool_run(p, fn, arg);
}

int gl_physical_cores(void)
{
    /* Count distinct (package, core) pairs; SMT siblings share a core. */
    int seen[1024][2];
    int n_seen = 0;
    long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (n_cpu < 1)
        n_cpu = 1;
    for (long cpu = 0; cpu < n_cpu && cpu < 1024; cpu++) {
        char path[128];
        int ids[2] = { -1, -1 };
        const char *names[2] = { "physical_package_id", "core_id" };
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/%s", cpu,
                     names[k]);
            FILE *f = fopen(path, "r");
            if (!f)
                return (int)n_cpu;
            if (fscanf(f, "%d", &ids[k]) != 1)
                ids[k] = -1;
            fclose(f);
        }
        int dup = 0;
        for (int i = 0; i < n_seen; i++)
            dup |= seen[i][0] == ids[0] && seen[i][1] == ids[1];
        if (!dup) {
            seen[n_seen][0] = ids[0];
            seen[n_seen][1] = ids[1];
            n_seen++;
        }
    }
    return n_seen > 0 ? n_seen : (int)n_cpu;
}
