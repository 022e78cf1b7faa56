/* Matrix products over the thread pool: rows split in multiples of
 * ROW_GRAIN, activations quantized once per input and shared by the
 * products that read it. */
#include "context.h"

/* ---- matrix products, split by output rows over the thread pool -------- */

typedef struct act {
    const float *x; /* nb rows of n floats, x_stride floats apart */
    size_t x_stride;
    void *q; /* the same rows quantized to Q8_0, made on first use */
    bool q_ready;
    int n, nb;
} act;

typedef struct mm_job {
    const gl_weight *w;
    const void *x;
    size_t x_stride; /* bytes */
    float *y;
    size_t y_stride; /* floats */
    int nb;
} mm_job;

typedef struct mm_task {
    const gl_kernels *k;
    mm_job jobs[3];
    int n_jobs;
} mm_task;

/* Rows are handed out in multiples of 16 so threads never share a cache
 * line of output and SIMD kernels see whole row groups (a multiple of the
 * 8-row groups of the repacked layouts, so no group is computed twice). */
enum { ROW_GRAIN = 16 };
static_assert(ROW_GRAIN % GL_X8_ROWS == 0, "thread splits keep repacked row groups whole");

static void mm_worker(void *arg, int ith, int nth)
{
    const mm_task *t = arg;
    for (int j = 0; j < t->n_jobs; j++) {
        const mm_job *jb = &t->jobs[j];
        int r0, r1;
        gl_split_range(jb->w->n_out, ROW_GRAIN, ith, nth, &r0, &r1);
        if (r0 >= r1)
            continue;
        const gl_weight *w = jb->w;
        if (w->layout != GL_LAYOUT_PLAIN) /* repacked at load: groups of 8 rows */
            t->k->matmul_packed[w->layout](w->data, w->group_bytes, jb->x, jb->x_stride, jb->y,
                                           jb->y_stride, w->n_in, r0, r1, jb->nb);
        else
            t->k->matmul[w->type](w->data, w->row_bytes, jb->x, jb->x_stride, jb->y, jb->y_stride,
                                  w->n_in, r0, r1, jb->nb);
    }
}

static mm_job make_job(gl_ctx *c, act *a, const gl_weight *w, float *y, size_t y_stride)
{
    mm_job j = { .w = w, .y = y, .y_stride = y_stride, .nb = a->nb };
    if (c->k->act_type[w->type] == GGUF_T_Q8_0) {
        if (!a->q_ready) {
            for (int b = 0; b < a->nb; b++)
                c->k->quantize_q8_0(a->x + b * a->x_stride, (char *)a->q + b * c->xq_stride, a->n);
            a->q_ready = true;
        }
        j.x = a->q;
        j.x_stride = c->xq_stride;
    } else {
        j.x = a->x;
        j.x_stride = a->x_stride * sizeof(float);
    }
    return j;
}

/* Up to three products sharing one input, in one parallel region. */
void gl_matmul3(gl_ctx *c, const float *x, int n, int nb, const gl_weight *w0, float *y0,
                const gl_weight *w1, float *y1, const gl_weight *w2, float *y2)
{
    act a = { .x = x, .x_stride = (size_t)n, .q = c->xq, .n = n, .nb = nb };
    mm_task t = { .k = c->k };
    const gl_weight *ws[3] = { w0, w1, w2 };
    float *ys[3] = { y0, y1, y2 };
    for (int i = 0; i < 3; i++)
        if (ws[i])
            t.jobs[t.n_jobs++] = make_job(c, &a, ws[i], ys[i], (size_t)ws[i]->n_out);
    double work = 0;
    for (int j = 0; j < t.n_jobs; j++)
        work += (double)t.jobs[j].w->n_in * t.jobs[j].w->n_out * nb;
    gl_threadpool_run_sized(c->pool, mm_worker, &t, work);
}
