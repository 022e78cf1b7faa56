/* Matrix products over the thread pool: rows split in multiples of
 * ROW_GRAIN, activations quantized once per input and shared by the
 * products that read it. */
#include <stdatomic.h>

#include "context.h"

/* ---- matrix products, split by output rows over the thread pool -------- */

typedef struct act {
    const float *x; /* nb rows of n floats, x_stride floats apart */
    size_t x_stride;
    int n, nb;
} act;

typedef struct mm_job {
    const gl_weight *w;
    const void *x;
    size_t x_stride; /* bytes */
    float *y;
    size_t y_stride; /* floats */
    int nb;
    gl_epilogue ep;
} mm_job;

typedef struct mm_task {
    const gl_kernels *k;
    gl_row_range *ranges; /* [nth]: each thread's contiguous share of the units */
    mm_job jobs[3];
    int n_jobs;
    int unit_end[3]; /* units of jobs 0..j together */
    int own_units;   /* piece an owner claims from its own share */
} mm_task;

/* Rows are handed out in units of 16 so threads never share a cache line
 * of output and SIMD kernels see whole row groups (a multiple of the 8- and
 * 16-row groups of the repacked layouts, so no group is computed twice). */
enum { ROW_GRAIN = 16 };
static_assert(ROW_GRAIN % GL_X8_ROWS == 0 && ROW_GRAIN % GL_X16_ROWS == 0,
              "thread splits keep repacked row groups whole");

static int units_of(const gl_weight *w)
{
    return (w->n_out + ROW_GRAIN - 1) / ROW_GRAIN;
}

/* Rows [*r0, *r1) of w in units [u0, u1), w's units counted from `first`. */
static void unit_rows(const gl_weight *w, int first, int u0, int u1, int *r0, int *r1)
{
    *r0 = (u0 - first) * ROW_GRAIN;
    *r1 = (u1 - first) * ROW_GRAIN < w->n_out ? (u1 - first) * ROW_GRAIN : w->n_out;
}

/* Scheduling: every thread owns a contiguous share of the rows (one long
 * stream for the prefetchers) and claims it piece by piece from the front;
 * a thread that runs out takes the back half of what another has left
 * (at least one unit), which it reads as one forward stream. A static
 * split alone left one core idle whenever the other's memory stream ran
 * slower (perf: ~8 % of decode time waiting at the ends of regions);
 * stealing single units from the back instead read them backwards, one
 * cold 16-row stream each (decode ~0.7 % slower). Which thread computes a
 * row never changes its value.
 *
 * A decode piece is about DECODE_PIECE_BYTES of weights: every kernel call
 * pays a start (the activation's per-block sums and scales, streams that
 * begin cold), which pieces of one 64-row lockstep set (4 units) paid
 * every ~20-200 KB; pieces of ~320 KB took 2-thread decode 1-6 % faster
 * (bench/RESULTS.md, 2026-12-03 second sitting) while the stealing keeps
 * the ends of regions even. Pieces stay whole multiples of the tune's
 * x8_streams units: the row groups the decode kernels read side by side
 * (a 16-row group is a unit; 8-row groups make whole sets of it too); a
 * piece with a partial set reads its last groups as single streams
 * (TinyLlama Q4_0 with pieces of 14 and 5 units: 4-6 % slower than with 4,
 * the set of the tunes with 4 streams). */
enum { DECODE_PIECE_BYTES = 320 << 10 };

static int decode_piece_units(const mm_task *t)
{
    const int set = gl_tunes[t->k->tune.id].x8_streams > 0 ? gl_tunes[t->k->tune.id].x8_streams : 1;
    size_t row_bytes = 0;
    for (int j = 0; j < t->n_jobs; j++)
        row_bytes = t->jobs[j].w->row_bytes > row_bytes ? t->jobs[j].w->row_bytes : row_bytes;
    const size_t set_bytes = row_bytes * ROW_GRAIN * (size_t)set;
    const size_t sets = set_bytes ? DECODE_PIECE_BYTES / set_bytes : 1;
    return set * (sets > 1 ? (int)sets : 1);
}

/* Claims n units from the front of r, or (from_back) the back half of what
 * is left, at least one unit. A range emptied by its owner only changes
 * again by its owner's store of a stolen range. */
static bool mm_claim(gl_row_range *r, uint32_t n, bool from_back, int *u0, int *u1)
{
    uint64_t v = atomic_load_explicit(&r->front_back, memory_order_relaxed);
    for (;;) {
        const uint32_t f = (uint32_t)v, b = (uint32_t)(v >> 32);
        if (f >= b)
            return false;
        if (from_back)
            n = (b - f) / 2 > 1 ? (b - f) / 2 : 1;
        const uint32_t nf = from_back ? f : (b - f > n ? f + n : b);
        const uint32_t nb = from_back ? (b - f > n ? b - n : f) : b;
        if (atomic_compare_exchange_weak_explicit(&r->front_back, &v, (uint64_t)nb << 32 | nf,
                                                  memory_order_relaxed, memory_order_relaxed)) {
            *u0 = (int)(from_back ? nb : f);
            *u1 = (int)(from_back ? b : nf);
            return true;
        }
    }
}

/* The epilogue of rows [r0, r1) of a job's nb output rows, right after the
 * thread computed them (they are still in its cache). Element by element,
 * so a value never depends on where a thread's rows start or end. */
static void mm_epilogue(const gl_kernels *k, const mm_job *jb, int r0, int r1)
{
    for (int b = 0; b < jb->nb; b++) {
        float *y = jb->y + (size_t)b * jb->y_stride + r0;
        if (jb->ep.softcap > 0.0f)
            k->softcap(y, r1 - r0, jb->ep.softcap);
        if (jb->ep.add_to)
            k->add_bias(jb->ep.add_to + (size_t)b * jb->ep.add_stride + r0, y, r1 - r0);
    }
}

/* Units [u0, u1) of the concatenated jobs. */
static void mm_units(const mm_task *t, int u0, int u1)
{
    for (int j = 0; j < t->n_jobs && u0 < u1; j++) {
        const int first = j ? t->unit_end[j - 1] : 0;
        if (u0 >= t->unit_end[j])
            continue;
        const int e = u1 < t->unit_end[j] ? u1 : t->unit_end[j];
        const mm_job *jb = &t->jobs[j];
        const gl_weight *w = jb->w;
        int r0, r1;
        unit_rows(w, first, u0, e, &r0, &r1);
        if (w->layout != GL_LAYOUT_PLAIN) /* repacked at load: groups of 8 or 16 rows */
            t->k->matmul_packed[w->layout](w->data, w->group_bytes, jb->x, jb->x_stride, jb->y,
                                           jb->y_stride, w->n_in, r0, r1, jb->nb);
        else
            t->k->matmul[w->type](w->data, w->row_bytes, jb->x, jb->x_stride, jb->y, jb->y_stride,
                                  w->n_in, r0, r1, jb->nb);
        if (jb->ep.softcap > 0.0f || jb->ep.add_to)
            mm_epilogue(t->k, jb, r0, r1);
        u0 = e;
    }
}

static void mm_worker(void *arg, int ith, int nth)
{
    mm_task *t = arg;
    int u0 = 0, u1 = 0;
    if (nth == 1) { /* run alone (small region or one thread): no claiming */
        mm_units(t, 0, t->unit_end[t->n_jobs - 1]);
        return;
    }
    gl_row_range *own = &t->ranges[ith];
    for (;;) {
        while (mm_claim(own, (uint32_t)t->own_units, false, &u0, &u1))
            mm_units(t, u0, u1);
        /* a stolen range becomes this thread's share, claimed (and open to
         * thieves) piece by piece as its own was */
        int k = 1;
        while (k < nth && !mm_claim(&t->ranges[(ith + k) % nth], 0, true, &u0, &u1))
            k++;
        if (k == nth)
            return;
        atomic_store_explicit(&own->front_back, (uint64_t)u1 << 32 | (uint32_t)u0,
                              memory_order_relaxed);
    }
}

/* ---- the activations, quantized once per format ------------------------ */

typedef struct quant_task {
    const gl_ctx *c;
    const act *a;
    bool want[GL_ACT_COUNT];
} quant_task;

/* Rows of the input, split over the threads: every row is quantized the
 * same way whichever thread takes it. */
static void quant_worker(void *arg, int ith, int nth)
{
    const quant_task *t = arg;
    const gl_ctx *c = t->c;
    int b0, b1;
    gl_split_range(t->a->nb, 1, ith, nth, &b0, &b1);
    for (int f = 0; f < GL_ACT_COUNT; f++)
        for (int b = b0; t->want[f] && b < b1; b++)
            c->k->quantize_act[f](t->a->x + b * t->a->x_stride,
                                  (char *)c->xq_act[f] + b * c->xq_stride[f], t->a->n);
}

/* Quantizes the input once to each format the products w[0..n) read (the
 * copies in ctx xq_act[]), in one region: a prompt's rows are tens to hundreds
 * of microseconds of work that one thread did alone while the others
 * waited; a decode step's single row stays on the caller (below
 * GL_MIN_PARALLEL_WORK, a region costs more than it saves). */
static void quantize_inputs(gl_ctx *c, const act *a, const gl_weight *const *w, int n)
{
    quant_task t = { .c = c, .a = a };
    int formats = 0;
    for (int i = 0; i < n; i++) {
        const int f = w[i] ? c->k->act_type[w[i]->type] : GL_ACT_F32;
        if (f != GL_ACT_F32 && !t.want[f]) {
            t.want[f] = true;
            formats++;
        }
    }
    const double work = (double)formats * a->nb * a->n;
    if (work >= GL_MIN_PARALLEL_WORK)
        gl_threadpool_run(c->pool, quant_worker, &t);
    else if (formats)
        quant_worker(&t, 0, 1);
}

static mm_job make_job(gl_ctx *c, const act *a, const gl_weight *w, float *y, size_t y_stride,
                       const gl_epilogue *ep)
{
    mm_job j = { .w = w, .y = y, .y_stride = y_stride, .nb = a->nb };
    if (ep)
        j.ep = *ep;
    const int f = c->k->act_type[w->type];
    if (f != GL_ACT_F32) {
        j.x = c->xq_act[f];
        j.x_stride = c->xq_stride[f];
    } else {
        j.x = a->x;
        j.x_stride = a->x_stride * sizeof(float);
    }
    return j;
}

/* Up to three products sharing one input, in one parallel region; ep:
 * the first product's epilogue, or NULL. */
static void matmul_jobs(gl_ctx *c, const float *x, int n, int nb, const gl_weight *const ws[3],
                        float *const ys[3], const gl_epilogue *ep)
{
    act a = { .x = x, .x_stride = (size_t)n, .n = n, .nb = nb };
    mm_task t = { .k = c->k };
    quantize_inputs(c, &a, ws, 3);
    for (int i = 0; i < 3; i++)
        if (ws[i])
            t.jobs[t.n_jobs++] =
                make_job(c, &a, ws[i], ys[i], (size_t)ws[i]->n_out, i == 0 ? ep : NULL);
    double work = 0;
    for (int j = 0; j < t.n_jobs; j++) {
        const int rows = t.jobs[j].w->n_out;
        work += (double)t.jobs[j].w->n_in * rows * nb;
        t.unit_end[j] = (j ? t.unit_end[j - 1] : 0) + units_of(t.jobs[j].w);
    }
    const int nth = gl_threadpool_size(c->pool), units = t.unit_end[t.n_jobs - 1];
    t.ranges = c->mm_ranges;
    for (int i = 0; i < nth; i++) {
        int u0, u1;
        gl_split_range(units, 1, i, nth, &u0, &u1);
        atomic_store_explicit(&t.ranges[i].front_back, (uint64_t)u1 << 32 | (uint32_t)u0,
                              memory_order_relaxed);
    }
    /* decode streams in pieces so a thief finds work left; prefill takes
     * its whole share at once (compute-bound, so an even split stays even,
     * and every call repeats per-column setup) */
    t.own_units = nb > 2 ? units : decode_piece_units(&t);
    uint64_t bytes = 0; /* for a traced run's breakdown (gl_threadpool_tag) */
    gl_trace_kind kind = { .n_in = n, .type = { -1, -1, -1 } };
    for (int j = 0; j < t.n_jobs; j++) {
        bytes += (uint64_t)t.jobs[j].w->n_out * t.jobs[j].w->row_bytes;
        kind.type[j] = (int32_t)t.jobs[j].w->type;
        kind.rows[j] = t.jobs[j].w->n_out;
    }
    gl_threadpool_tag(c->pool, bytes, &kind);
    gl_threadpool_run_sized(c->pool, mm_worker, &t, work);
}

void gl_matmul3(gl_ctx *c, const float *x, int n, int nb, const gl_weight *w0, float *y0,
                const gl_weight *w1, float *y1, const gl_weight *w2, float *y2)
{
    const gl_weight *const ws[3] = { w0, w1, w2 };
    float *const ys[3] = { y0, y1, y2 };
    matmul_jobs(c, x, n, nb, ws, ys, NULL);
}

void gl_matmul_ep(gl_ctx *c, const float *x, int n, int nb, const gl_weight *w, float *y,
                  const gl_epilogue *ep)
{
    const gl_weight *const ws[3] = { w, NULL, NULL };
    float *const ys[3] = { y, NULL, NULL };
    matmul_jobs(c, x, n, nb, ws, ys, ep);
}

/* The first bytes of each thread's share that a waiting thread prefetches:
 * enough for the waits between two products (a few to tens of
 * microseconds at ~16 GB/s per core), well inside L2. */
enum { IDLE_PREFETCH_MAX = 256 << 10 };

void gl_matmul_next(gl_ctx *c, const gl_weight *w0, const gl_weight *w1, const gl_weight *w2)
{
    const gl_weight *ws[3] = { w0, w1, w2 };
    int units = 0;
    for (int j = 0; j < 3; j++)
        units += ws[j] ? units_of(ws[j]) : 0;
    const int nth = gl_threadpool_size(c->pool);
    for (int i = 0; i < nth; i++) {
        int u0, u1; /* the share gl_matmul3 will give thread i first */
        gl_split_range(units, 1, i, nth, &u0, &u1);
        const char *p = NULL;
        size_t len = 0;
        for (int j = 0, first = 0; j < 3 && !p && u0 < u1; j++) {
            if (!ws[j])
                continue;
            const int ju = units_of(ws[j]);
            if (u0 < first + ju) {
                /* rows [r0, r1) of this matrix; in every layout rows that
                 * start a group sit r * row_bytes from its start */
                int r0, r1;
                unit_rows(ws[j], first, u0, u1, &r0, &r1);
                p = (const char *)ws[j]->data + (size_t)r0 * ws[j]->row_bytes;
                len = (size_t)(r1 - r0) * ws[j]->row_bytes;
                len = len < IDLE_PREFETCH_MAX ? len : IDLE_PREFETCH_MAX;
            }
            first += ju;
        }
        gl_threadpool_set_prefetch(c->pool, i, p, len);
    }
}
