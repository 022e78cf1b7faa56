/* The thread pool: every thread runs each region once, and what a waiting
 * thread is told to prefetch (any mix of plain and strided ranges, more
 * than the list holds, empty ones) changes nothing but timing. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "threadpool.h"

typedef struct sum_task {
    const int *v;
    int n;
    _Atomic long total;
    _Atomic int runs;
} sum_task;

static void sum_part(void *arg, int ith, int nth)
{
    sum_task *t = arg;
    int lo, hi;
    gl_split_range(t->n, 1, ith, nth, &lo, &hi);
    long s = 0;
    for (int i = lo; i < hi; i++)
        s += t->v[i];
    atomic_fetch_add(&t->total, s);
    atomic_fetch_add(&t->runs, 1);
}

Test(threadpool, prefetch_lists_change_nothing)
{
    enum { N = 1 << 16, BUF = 1 << 20 };
    int *v = malloc(sizeof *v * N);
    char *buf = malloc(BUF);
    cr_assert(v && buf);
    long want = 0;
    for (int i = 0; i < N; i++)
        want += v[i] = i % 1000 - 500;
    for (int nth = 1; nth <= 3; nth++) {
        gl_threadpool *p;
        cr_assert_eq(gl_threadpool_create(&p, nth, NULL), GL_OK);
        for (int round = 0; round < 200; round++) {
            for (int i = 0; i < nth; i++) {
                /* a plain range, then pushed ones: strided, empty, and more
                 * than the list holds */
                gl_threadpool_set_prefetch(p, i, buf + (size_t)(round % 7) * 4096, 64 << 10);
                for (int k = 0; k < round % 7; k++)
                    gl_threadpool_push_prefetch(p, i, buf + (size_t)k * 8192, (size_t)(k * 1000),
                                                (size_t)(k + 1) * 65536, k % 4 + 1);
                if (round % 5 == 0)
                    gl_threadpool_set_prefetch(p, i, NULL, 0);
            }
            sum_task t = { .v = v, .n = N };
            gl_threadpool_run(p, sum_part, &t);
            cr_assert_eq(atomic_load(&t.total), want);
            cr_assert_eq(atomic_load(&t.runs), nth);
        }
        gl_threadpool_free(p);
    }
    free(v);
    free(buf);
}

/* What a waiting thread walks: pushed ranges first, the last pushed at the
 * front; a strided range run by run; past four ranges the earliest drop. */
Test(threadpool, prefetch_order)
{
    static char buf[1 << 16];
    gl_threadpool *p;
    cr_assert_eq(gl_threadpool_create(&p, 2, NULL), GL_OK);
    const char *ptr[16];
    size_t len[16];
    gl_threadpool_set_prefetch(p, 1, buf, 1000);
    gl_threadpool_push_prefetch(p, 1, buf + 4096, 100, 1024, 3);
    gl_threadpool_push_prefetch(p, 1, buf + 8192, 0, 0, 1); /* empty: ignored */
    gl_threadpool_push_prefetch(p, 1, buf + 16384, 200, 0, 1);
    cr_assert_eq(gl_threadpool_prefetch_runs(p, 1, ptr, len, 16), 5);
    const char *want_ptr[] = { buf + 16384, buf + 4096, buf + 5120, buf + 6144, buf };
    const size_t want_len[] = { 200, 100, 100, 100, 1000 };
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(ptr[i], want_ptr[i], "run %d", i);
        cr_assert_eq(len[i], want_len[i], "run %d", i);
    }
    cr_assert_eq(gl_threadpool_prefetch_runs(p, 0, ptr, len, 16), 0, "thread 0: nothing set");
    for (int k = 0; k < 6; k++)
        gl_threadpool_push_prefetch(p, 0, buf + k * 64, 64, 0, 1);
    cr_assert_eq(gl_threadpool_prefetch_runs(p, 0, ptr, len, 16), 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(ptr[i], buf + (5 - i) * 64, "the last four pushed, newest first");
    gl_threadpool_set_prefetch(p, 0, NULL, 0);
    cr_assert_eq(gl_threadpool_prefetch_runs(p, 0, ptr, len, 16), 0);
    gl_threadpool_free(p);
}
