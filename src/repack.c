/* Load-time repacking of weight matrices into the layouts the kernel table
 * prefers (k.repack, src/kernels.h; layouts in src/quant.h).
 *
 * The repacked copy replaces the file's bytes rather than duplicating
 * them: every packed matrix lives in one owned arena, and as each thread
 * finishes its rows of a matrix the page-aligned interior of those file
 * rows is dropped with MADV_DONTNEED, so file and copy are never both
 * resident. The arena is in transparent huge pages (gl_alloc_huge): the
 * decode kernels stream it, and on 4 KiB pages their TLB misses cost
 * decode 8-10 % (bench/RESULTS.md, "End to end").
 * The mapping is private and read-only, so that only discards clean page
 * cache references; were those pages ever touched again they would be
 * read back from the file, unchanged.
 *
 * Which matrices: every gl_weight that goes through gl_matmul3, i.e. the
 * layer matrices and the output matrix; those without a packed layout here
 * (F32 / F16 / BF16 above all) are copied into the arena row for row, the
 * same bytes, for the huge pages. The token embedding is read by row
 * (dequant[type] of one row per token), so it keeps its GGUF layout; when
 * the output matrix is the embedding (tied), the output's copy is repacked
 * like any other (before, the tied product ran on the plain-row kernel: on
 * a 150k-256k vocabulary (Qwen2.5, Llama 3.2, Gemma 2) that one matrix is a
 * fifth to a quarter of the bytes per token, at the plain kernel's speed).
 *
 * Where the row lookups read: a file page first touched cost a page fault
 * that maps 64 KiB around it, 40-70 us on a Zen 5 VM, for most new token
 * ids (a decode step of TinyLlama is ~10 ms at 2 threads), and mapped
 * ahead (populate_pages) its 4 KiB pages still cost 20-70 us on most first
 * touches there (the hypervisor's own tables). So an embedding of its own
 * is copied into the arena as it is, huge pages like the products'
 * matrices; a tied one is read from the output's copy (the same bytes, or
 * unpacked from its layout: a few microseconds a row), and its file pages,
 * dropped with the repack, never come back. Short of memory, an embedding
 * left in the file is mapped whole at load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"
#include "hugemem.h"
#include "model.h"
#include "threadpool.h"

enum { MAX_PACK = 16 * GL_MAX_LAYERS + 2, ARENA_ALIGN = 4096, COPY_PIECE = 2 << 20 };

/* the file pages wholly inside [p, p + n) leave this process */
static void drop_pages(const void *p, size_t n)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = ((uintptr_t)p + page - 1) / page * page;
    const uintptr_t b = ((uintptr_t)p + n) / page * page;
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

/* The file pages under [p, p + n) mapped in one call before the repack
 * reads them: taken fault by fault (the kernel maps 64 KiB around each),
 * a TinyLlama-size model's 630 MB cost ~270 ms of thread time on a Zen 5
 * VM, ~20 ms this way. A hint: a kernel before 5.14 refuses it, and the
 * pages fault in as before. */
static void populate_pages(const void *p, size_t n)
{
#ifdef MADV_POPULATE_READ
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = (uintptr_t)p / page * page;
    if (n > 0)
        madvise((void *)a, (uintptr_t)p + n - a, MADV_POPULATE_READ);
#else
    (void)p;
    (void)n;
#endif
}

typedef struct pack_job {
    const gl_kernels *k;
    gl_weight **ws;
    void **dst;
    const bool *copy; /* [i]: a plain copy of matrix i, not a repack */
    int n;
} pack_job;

/* One parallel region for the whole model: each thread repacks its share
 * of the groups of every matrix (one barrier in all). */
static void pack_worker(void *arg, int ith, int nth)
{
    const pack_job *j = arg;
    for (int i = 0; i < j->n; i++) {
        const gl_weight *w = j->ws[i];
        const int rows = j->copy[i] ? 1 : j->k->repack[w->type].rows;
        int g0, g1;
        gl_split_range((w->n_out + rows - 1) / rows, 1, ith, nth, &g0, &g1);
        if (g0 >= g1)
            continue;
        if (j->copy[i]) {
            /* in pieces, each dropped as soon as it is copied: a tied
             * output (a quarter of a small model) would otherwise be
             * resident twice at once */
            const char *src = (const char *)w->data + (size_t)g0 * w->row_bytes;
            char *to = (char *)j->dst[i] + (size_t)g0 * w->row_bytes;
            const size_t len = (size_t)(g1 - g0) * w->row_bytes;
            for (size_t o = 0; o < len; o += COPY_PIECE) {
                const size_t n = len - o < COPY_PIECE ? len - o : COPY_PIECE;
                populate_pages(src + o, n);
                memcpy(to + o, src + o, n);
                drop_pages(src + o, n);
            }
            continue;
        }
        const size_t ra = (size_t)g0 * rows, rb = (size_t)g1 * rows < (size_t)w->n_out
                                                      ? (size_t)g1 * rows
                                                      : (size_t)w->n_out;
        const char *src = (const char *)w->data + ra * w->row_bytes;
        populate_pages(src, (rb - ra) * w->row_bytes);
        j->k->repack[w->type].fn(j->dst[i], w->data, w->row_bytes, w->n_in, w->n_out, g0, g1);
        /* this thread's source rows are done with: drop them now, so the
         * file and its copy are never both resident */
        drop_pages(src, (rb - ra) * w->row_bytes);
    }
}

static bool packable(const gl_model *m, const gl_weight *w, bool all)
{
    return w->data && w->layout == GL_LAYOUT_PLAIN && w->type < GGUF_T_COUNT &&
           m->k.repack[w->type].fn && (all || m->k.repack[w->type].use) && w->n_in % 32 == 0 &&
           w->n_out > 0;
}

/* A matrix the products read in its GGUF rows (float types, and any type
 * without a packed layout here) still streams every token: it moves into
 * the arena as it is, for the huge pages alone. Read through the file's
 * 4 KiB pages, F16 and F32 decode ran at a fraction of the bandwidth on a
 * Zen 5 VM (bench/RESULTS.md, 2026-12-05). */
static bool copyable(const gl_weight *w)
{
    return w->data && w->layout == GL_LAYOUT_PLAIN && w->type < GGUF_T_COUNT && w->n_out > 0;
}

/* w's bytes in the arena: whole row groups of its layout, or its rows */
static size_t arena_bytes(const gl_model *m, const gl_weight *w, bool copy)
{
    const size_t rows = copy ? 1 : (size_t)m->k.repack[w->type].rows;
    return ((size_t)w->n_out + rows - 1) / rows * rows * w->row_bytes;
}

/* The arena's bytes for ws[0 .. n): each matrix 64-byte aligned. */
static size_t arena_total(const gl_model *m, gl_weight *const *ws, const bool *copy, int n,
                          size_t *packed, size_t *copied)
{
    size_t total = 0;
    *packed = *copied = 0;
    for (int i = 0; i < n; i++) {
        const size_t bytes = arena_bytes(m, ws[i], copy[i]);
        total = (total + bytes + 63) / 64 * 64;
        *(copy[i] ? copied : packed) += bytes;
    }
    return (total + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
}

/* The arena for the *n matrices of ws, or, short of memory, for fewer:
 * the copies are for speed alone (the file mapping holds the same bytes),
 * so they go first, then the repacked layouts (every type's plain-row
 * kernels read the file's rows and give the same results, only slower).
 * Either step leaves m->load_warning saying so; NULL with *n = 0: the
 * model runs from its mapping. A machine short of memory (a strict
 * overcommit policy, ulimit -v) thus still runs any model it can map. */
static void *alloc_arena(gl_model *m, gl_weight **ws, bool *copy, int *n, size_t *packed,
                         size_t *copied)
{
    if (*n == 0)
        return NULL;
    const size_t want = arena_total(m, ws, copy, *n, packed, copied);
    void *arena = gl_alloc_huge(want);
    if (arena)
        return arena;
    const size_t want_copied = *copied;
    int k = 0;
    for (int i = 0; i < *n; i++)
        if (!copy[i])
            ws[k++] = ws[i];
    memset(copy, 0, (size_t)*n * sizeof *copy);
    *n = k;
    if (want_copied > 0 && k > 0 &&
        (arena = gl_alloc_huge(arena_total(m, ws, copy, k, packed, copied)))) {
        snprintf(m->load_warning, sizeof m->load_warning,
                 "not enough memory to copy %zu MB of matrices without a packed layout (float "
                 "types) into huge pages: they are read from the file mapping, decode is slower",
                 want_copied >> 20);
        return arena;
    }
    snprintf(m->load_warning, sizeof m->load_warning,
             "not enough memory (%zu MB) for the weights' fast layouts: they are read as the "
             "file stores them, decode and prefill are slower",
             want >> 20);
    *n = 0;
    *packed = *copied = 0;
    return NULL;
}

gl_status gl_model_repack(gl_model *m, gl_error *err)
{
    /* GENLOOP_REPACK=0: never (A/B measurements); =all: also where only
     * generic's packed kernels exist (tests of the packed path) */
    const char *env = getenv("GENLOOP_REPACK");
    if (env && !strcmp(env, "0"))
        return GL_OK;
    const bool all = env && !strcmp(env, "all");

    gl_weight **ws = malloc(MAX_PACK * sizeof *ws);
    void **dst = malloc(MAX_PACK * sizeof *dst);
    bool *copy = malloc(MAX_PACK * sizeof *copy);
    if (!ws || !dst || !copy) {
        free(ws);
        free(dst);
        free(copy);
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    }
    int nw = 0;
#define ADD(x)                                                                                     \
    do {                                                                                           \
        const bool pk = packable(m, &(x), all);                                                    \
        if (nw < MAX_PACK && (pk || copyable(&(x)))) {                                             \
            copy[nw] = !pk;                                                                        \
            ws[nw++] = &(x);                                                                       \
        }                                                                                          \
    } while (0)
    for (int l = 0; m->layers && l < m->cfg.n_layers; l++) {
        gl_layer *L = &m->layers[l];
        ADD(L->wq);
        ADD(L->wk);
        ADD(L->wv);
        ADD(L->wo);
        ADD(L->w_gate);
        ADD(L->w_up);
        ADD(L->w_down);
    }
    for (int l = 0; m->gpt2_layers && l < m->cfg.n_layers; l++) {
        gl_gpt2_layer *L = &m->gpt2_layers[l];
        ADD(L->wqkv);
        ADD(L->wo);
        ADD(L->w_up);
        ADD(L->w_down);
    }
    ADD(m->output);
#undef ADD
    if (!m->output_tied && copyable(&m->tok_embd) && nw < MAX_PACK) {
        copy[nw] = true; /* read by row, never repacked */
        ws[nw++] = &m->tok_embd;
    }
    size_t packed = 0, copied = 0;
    void *arena = alloc_arena(m, ws, copy, &nw, &packed, &copied);
    if (arena) {
        for (size_t i = 0, off = 0; i < (size_t)nw; i++) {
            dst[i] = (char *)arena + off;
            off = (off + arena_bytes(m, ws[i], copy[i]) + 63) / 64 * 64;
        }
        pack_job j = { .k = &m->k, .ws = ws, .dst = dst, .copy = copy, .n = nw };
        /* without the threads (short of memory for their stacks) too */
        gl_threadpool *pool = NULL;
        if (gl_threadpool_create(&pool, gl_physical_cores(), NULL) == GL_OK) {
            gl_threadpool_run(pool, pack_worker, &j);
            gl_threadpool_free(pool);
        } else {
            pack_worker(&j, 0, 1);
        }
        for (int i = 0; i < nw; i++) {
            gl_weight *w = ws[i];
            drop_pages(w->data, w->row_bytes * (size_t)w->n_out); /* pages split between threads */
            w->data = dst[i];
            if (!copy[i]) {
                w->group_bytes = (size_t)m->k.repack[w->type].rows * w->row_bytes;
                w->layout = m->k.repack[w->type].layout;
            }
        }
        m->repack_arena = arena;
        m->repack_bytes = packed;
        m->copied_bytes = copied;
    }
    gl_weight *e = &m->tok_embd, *o = &m->output;
    bool e_copied = false;
    for (int i = 0; i < nw; i++)
        e_copied |= ws[i] == e;
    if (m->output_tied && o->data != e->data) { /* the output's copy was made */
        if (o->layout == GL_LAYOUT_PLAIN)
            e->data = o->data;
        else
            m->embd_from_output = true;
    } else if (!m->output_tied && !e_copied && e->data) {
        populate_pages(e->data, e->row_bytes * (size_t)e->n_out);
    }
    free(ws);
    free(dst);
    free(copy);
    return GL_OK;
}
