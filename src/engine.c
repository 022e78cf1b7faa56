/* Continuous batching: many generation loops share one engine. Each step
 * admits waiting requests while cache slots are free, builds one batch from
 * every running sequence's next token plus chunks of pending prompts (up to
 * a per-step token budget, so a long prompt never stalls running decodes),
 * runs one forward pass over it — every weight block is read once per step,
 * not once per sequence — and samples each sequence with its own parameters
 * and RNG.
 *
 * A request's output depends only on its own inputs and seed: the kernels
 * compute each row independently with a fixed reduction order, attention
 * reads only the sequence's own cache, and each request owns its sampler.
 * gl_generate runs through this same code with one slot, so `genloop run`
 * and `genloop batch` agree token for token. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "error.h"
#include "tokenizer.h"

enum req_state { REQ_WAITING, REQ_PREFILL, REQ_DECODE, REQ_DONE };

typedef struct gl_req {
    int64_t id;
    enum req_state state;
    int slot;
    /* parameters */
    int n_predict;
    bool ring;
    bool crop; /* recompute the last `block` tokens once the history outgrows them */
    int block; /* positions the sequence may use                               */
    char **stops;
    int n_stops;
    size_t max_stop;
    gl_token_cb cb;
    void *user;
    /* tokens: the prompt, then generated ids */
    /* Indices below count from the first prompt token; the buffer holds
     * tokens base..n_toks-1 (base > 0 once a request that keeps no history
     * has dropped what neither sampling nor the context needs). */
    int32_t *toks;
    /* 64-bit where a streaming request's count grows for ever */
    int64_t base, n_toks;
    int n_prompt, cap_toks;
    int64_t win_start; /* index at cache position 0 (crop moves it)             */
    int64_t n_fed;     /* tokens before n_fed are in the cache                  */
    bool keep_history;
    int keep_toks; /* tokens a trimming request retains                         */
    int32_t *sink; /* gl_generate's output array                                */
    int sink_cap;
    gl_sampler *smp;
    /* text */
    gl_detok detok;
    char *text;
    size_t text_len, text_cap, emitted;
    gl_stop_reason stop;
    double t_submit, t_admit, t_first, t_done, prefill_ms, decode_ms;
    int n_reused; /* prompt tokens whose cache entries a slot already held */
} gl_req;

/* What a sequence slot's cache holds once its request is gone: the tokens at
 * positions 0..n-1 (n = 0: nothing usable), for prefix reuse. */
typedef struct slot_memo {
    int32_t *toks;
    int n, cap;
} slot_memo;

struct gl_engine {
    gl_model *m;
    gl_ctx *c;
    bool own_ctx;
    int max_seqs, budget, n_vocab;
    gl_req **reqs; /* live requests in submission order */
    int n_reqs, cap_reqs;
    int64_t next_id;
    bool *slot_busy;
    bool prefix_reuse;
    slot_memo *memo; /* [max_seqs] */
    /* one batch, allocated once */
    int32_t *b_tok;
    int *b_seq, *b_out;
    gl_req **b_out_req;
    float *b_logits;
    gl_engine_stats stats;
    char tmp[256];
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

gl_engine_params gl_engine_default_params(void)
{
    return (gl_engine_params){ .max_seqs = 8,
                               .n_ctx = 0,
                               .n_keep = 0,
                               .n_threads = 0,
                               .max_batch_tokens = 256,
                               .prefix_reuse = false };
}

gl_request gl_request_default(void)
{
    return (gl_request){ .n_predict = 256,
                         .ring = true,
                         .context_policy = GL_CTX_POLICY_AUTO,
                         .sampling = gl_sampler_default_params(),
                         .add_bos = -1,
                         .keep_history = true };
}

static gl_status engine_alloc(gl_engine *e, gl_error *err)
{
    const int rows = e->budget + e->max_seqs;
    e->slot_busy = calloc((size_t)e->max_seqs, sizeof *e->slot_busy);
    e->memo = calloc((size_t)e->max_seqs, sizeof *e->memo);
    e->b_tok = malloc(sizeof *e->b_tok * (size_t)rows);
    e->b_seq = malloc(sizeof *e->b_seq * (size_t)rows);
    e->b_out = malloc(sizeof *e->b_out * (size_t)rows);
    e->b_out_req = malloc(sizeof *e->b_out_req * (size_t)rows);
    e->b_logits = malloc(sizeof *e->b_logits * (size_t)e->max_seqs * (size_t)e->n_vocab);
    if (!e->slot_busy || !e->memo || !e->b_tok || !e->b_seq || !e->b_out || !e->b_out_req ||
        !e->b_logits)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory for the engine's batch");
    return GL_OK;
}

/* An engine over an existing context: its sequence slots are the engine's. */
static gl_status engine_on_ctx(gl_engine **out, gl_ctx *c, int budget, gl_error *err)
{
    gl_engine *e = calloc(1, sizeof *e);
    if (!e)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    e->m = c->m;
    e->c = c;
    e->max_seqs = c->n_seq;
    e->budget = budget < c->n_batch - c->n_seq ? budget : c->n_batch - c->n_seq;
    if (e->budget < 1)
        e->budget = 1;
    e->n_vocab = c->m->cfg.n_vocab;
    e->next_id = 1;
    gl_status st = engine_alloc(e, err);
    if (st) {
        gl_engine_free(e);
        return st;
    }
    *out = e;
    return GL_OK;
}

gl_status gl_engine_create(gl_engine **out, gl_model *m, const gl_engine_params *params,
                           gl_error *err)
{
    *out = NULL;
    gl_engine_params p = params ? *params : gl_engine_default_params();
    if (p.max_seqs < 1 || p.max_seqs > 4095)
        return gl_fail(err, GL_ERR_ARG, "max_seqs %d is out of range [1, 4095]", p.max_seqs);
    /* a step's rows (every decode plus the prompt budget) make one forward pass */
    if (p.max_batch_tokens < 1 || p.max_batch_tokens > 4096 - p.max_seqs)
        return gl_fail(err, GL_ERR_ARG,
                       "max_batch_tokens %d is out of range [1, %d] (with %d sequences: a step "
                       "is at most 4096 tokens)",
                       p.max_batch_tokens, 4096 - p.max_seqs, p.max_seqs);
    gl_ctx_params cp = gl_ctx_default_params();
    cp.n_ctx = p.n_ctx;
    cp.n_keep = p.n_keep;
    cp.n_threads = p.n_threads;
    cp.n_seq = p.max_seqs;
    cp.n_batch = p.max_batch_tokens + p.max_seqs;
    cp.cache_type = p.cache_type;
    gl_ctx *c;
    gl_status st = gl_ctx_create(&c, m, &cp, err);
    if (st)
        return st;
    if ((st = engine_on_ctx(out, c, p.max_batch_tokens, err))) {
        gl_ctx_free(c);
        return st;
    }
    (*out)->own_ctx = true;
    (*out)->prefix_reuse = p.prefix_reuse;
    return GL_OK;
}

static void req_free(gl_req *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_stops; i++)
        free(r->stops[i]);
    free(r->stops);
    free(r->toks);
    free(r->text);
    gl_sampler_free(r->smp);
    free(r);
}

void gl_engine_free(gl_engine *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->n_reqs; i++)
        req_free(e->reqs[i]);
    free(e->reqs);
    for (int s = 0; e->memo && s < e->max_seqs; s++)
        free(e->memo[s].toks);
    free(e->memo);
    free(e->slot_busy);
    free(e->b_tok);
    free(e->b_seq);
    free(e->b_out);
    free(e->b_out_req);
    free(e->b_logits);
    if (e->own_ctx)
        gl_ctx_free(e->c);
    free(e);
}

static gl_req *find(const gl_engine *e, int64_t id)
{
    for (int i = 0; i < e->n_reqs; i++)
        if (e->reqs[i]->id == id)
            return e->reqs[i];
    return NULL;
}

static bool append_tok(gl_req *r, int32_t t)
{
    if (!r->keep_history && r->n_toks - r->base >= 2 * r->keep_toks) {
        /* generate forever in fixed memory: keep only the tail (never a
         * token the model has not read yet) */
        int drop = (int)(r->n_toks - r->base - r->keep_toks);
        if (drop > r->n_fed - r->base)
            drop = r->n_fed - r->base;
        if (drop > 0) {
            memmove(r->toks, r->toks + drop,
                    sizeof *r->toks * (size_t)(r->n_toks - r->base - drop));
            r->base += drop;
        }
    }
    if (r->n_toks - r->base == r->cap_toks) {
        int nc = r->cap_toks ? r->cap_toks * 2 : 64;
        int32_t *nt = realloc(r->toks, sizeof *nt * (size_t)nc);
        if (!nt)
            return false;
        r->toks = nt;
        r->cap_toks = nc;
    }
    r->toks[r->n_toks++ - r->base] = t;
    return true;
}

static bool append_text(gl_req *r, const char *s, size_t n)
{
    if (r->text_len + n + 1 > r->text_cap) {
        size_t nc = (r->text_cap ? r->text_cap * 2 : 256) + n;
        char *nt = realloc(r->text, nc);
        if (!nt)
            return false;
        r->text = nt;
        r->text_cap = nc;
    }
    memcpy(r->text + r->text_len, s, n);
    r->text_len += n;
    r->text[r->text_len] = '\0';
    return true;
}

gl_status gl_engine_submit(gl_engine *e, const gl_request *rq, int64_t *id, gl_error *err)
{
    const gl_model *m = e->m;
    gl_req *r = calloc(1, sizeof *r);
    if (!r)
        return gl_fail(err, GL_ERR_NOMEM, "out of memory");
    gl_status st = GL_OK;
    r->slot = -1;
    r->n_predict = rq->n_predict;
    r->ring = rq->ring;
    r->cb = rq->on_token;
    r->user = rq->user;
    r->keep_history = rq->keep_history || rq->sampling.repeat_last_n < 0;
    r->t_submit = now_ms();
    gl_detok_init(&r->detok);

    /* Learned positions end at n_pos: the usable context is capped there. */
    const int n_pos = m->cfg.n_pos_learned, n_ctx = e->c->n_ctx;
    r->block = n_pos > 0 && n_pos < n_ctx ? n_pos : n_ctx;
    int policy = rq->context_policy;
    if (policy == GL_CTX_POLICY_AUTO)
        policy = n_pos > 0 ? GL_CTX_POLICY_CROP : GL_CTX_POLICY_RING;
    if (policy != GL_CTX_POLICY_RING && policy != GL_CTX_POLICY_CROP) {
        st = gl_fail(err, GL_ERR_ARG, "invalid context policy %d", rq->context_policy);
        goto fail;
    }
    if (policy == GL_CTX_POLICY_RING && n_pos > 0) {
        st = gl_fail(err, GL_ERR_ARG,
                     "the ring context policy cannot run '%s': its %d "
                     "positions are learned (position_embd), so a sliding window past them "
                     "is not exact; use the crop policy",
                     m->arch, n_pos);
        goto fail;
    }
    r->crop = r->ring && policy == GL_CTX_POLICY_CROP;

    if (rq->prompt_tokens) {
        for (int i = 0; i < rq->n_prompt_tokens; i++) {
            if (rq->prompt_tokens[i] < 0 || rq->prompt_tokens[i] >= e->n_vocab) {
                st = gl_fail(err, GL_ERR_ARG, "prompt token %d (#%d) is out of range [0, %d)",
                             rq->prompt_tokens[i], i, e->n_vocab);
                goto fail;
            }
            if (!append_tok(r, rq->prompt_tokens[i]))
                goto nomem;
        }
    } else {
        const char *text = rq->prompt ? rq->prompt : "";
        const size_t len = rq->prompt ? (rq->prompt_len ? rq->prompt_len : strlen(text)) : 0;
        const bool bos = rq->add_bos < 0 ? gl_tokenizer_add_bos(m->tok) : rq->add_bos != 0;
        int n = gl_tokenizer_encode(m->tok, text, len, bos, NULL, 0, err);
        if (n < 0) {
            st = err ? err->code : GL_ERR_ARG;
            goto fail;
        }
        r->toks = malloc(sizeof *r->toks * (size_t)(n > 0 ? n : 1));
        if (!r->toks)
            goto nomem;
        r->cap_toks = n > 0 ? n : 1;
        r->n_toks = gl_tokenizer_encode(m->tok, text, len, bos, r->toks, n, err);
    }
    r->n_prompt = r->n_toks;
    if (r->n_prompt < 1) {
        st = gl_fail(err, GL_ERR_ARG, "the prompt has no tokens (empty text and no BOS)");
        goto fail;
    }
    if (!r->ring && r->n_prompt > r->block) {
        st = gl_fail(err, GL_ERR_ARG, "the prompt has %d tokens but the context holds %d",
                     r->n_prompt, r->block);
        goto fail;
    }
    if (r->crop && r->n_prompt > r->block) {
        r->win_start = r->n_prompt - r->block; /* idx_cond = idx[-block:] */
        r->n_fed = r->win_start;
    }
    if ((st = gl_sampler_create(&r->smp, e->n_vocab, &rq->sampling, err)))
        goto fail;
    /* what sampling (the penalty window), the crop window and the next feed
     * need of the history */
    r->keep_toks =
        (rq->sampling.repeat_last_n > r->block ? rq->sampling.repeat_last_n : r->block) + 1;
    if (rq->n_stops > 0) {
        r->stops = calloc((size_t)rq->n_stops, sizeof *r->stops);
        if (!r->stops)
            goto nomem;
        for (int i = 0; i < rq->n_stops; i++) {
            size_t n = strlen(rq->stops[i]);
            if (n == 0)
                continue;
            if (!(r->stops[r->n_stops] = strdup(rq->stops[i])))
                goto nomem;
            r->n_stops++;
            r->max_stop = n > r->max_stop ? n : r->max_stop;
        }
    }
    if (!append_text(r, "", 0))
        goto nomem;
    if (e->n_reqs == e->cap_reqs) {
        int nc = e->cap_reqs ? e->cap_reqs * 2 : 16;
        gl_req **nr = realloc(e->reqs, sizeof *nr * (size_t)nc);
        if (!nr)
            goto nomem;
        e->reqs = nr;
        e->cap_reqs = nc;
    }
    r->id = e->next_id++;
    e->reqs[e->n_reqs++] = r;
    if (id)
        *id = r->id;
    return GL_OK;
nomem:
    st = gl_fail(err, GL_ERR_NOMEM, "out of memory");
fail:
    req_free(r);
    return st;
}

/* Notes which tokens slot r->slot holds as r gives it up, when they are all
 * still in the cache at their positions (no ring wrap, no crop, no trimmed
 * history); otherwise the slot holds nothing reusable. */
static void memo_slot(gl_engine *e, const gl_req *r)
{
    slot_memo *mm = &e->memo[r->slot];
    mm->n = 0;
    if (!e->prefix_reuse || r->base != 0 || r->win_start != 0)
        return;
    int64_t held = r->n_fed < e->c->seq_pos[r->slot] ? r->n_fed : e->c->seq_pos[r->slot];
    if (held > e->c->n_ctx || held > r->n_toks || held < 1)
        return;
    if (held > mm->cap) {
        int32_t *nt = realloc(mm->toks, sizeof *nt * (size_t)held);
        if (!nt)
            return;
        mm->toks = nt;
        mm->cap = (int)held;
    }
    memcpy(mm->toks, r->toks, sizeof *mm->toks * (size_t)held);
    mm->n = (int)held;
}

static void finish(gl_engine *e, gl_req *r, gl_stop_reason why)
{
    r->stop = why;
    r->state = REQ_DONE;
    r->t_done = now_ms();
    if (why != GL_STOP_STRING) {
        int n = gl_detok_flush(&r->detok, e->tmp, sizeof e->tmp);
        if (n > 0)
            append_text(r, e->tmp, (size_t)n);
    }
    if (r->cb && r->text_len > r->emitted)
        r->cb(r->user, -1, r->text + r->emitted, r->text_len - r->emitted);
    r->emitted = r->text_len;
    if (r->slot >= 0) {
        memo_slot(e, r);
        e->slot_busy[r->slot] = false;
    }
    r->slot = -1;
}

/* Longest suffix of the text that could still grow into a stop string. */
static size_t held_back(const gl_req *r)
{
    size_t keep = 0;
    for (int i = 0; i < r->n_stops; i++) {
        const size_t sl = strlen(r->stops[i]);
        for (size_t k = sl - 1; k > keep; k--)
            if (k <= r->text_len && memcmp(r->text + r->text_len - k, r->stops[i], k) == 0) {
                keep = k;
                break;
            }
    }
    return keep;
}

/* The stop-string check: the text never shows a stop string, and text that
 * might be the start of one is held back until it is decided. */
static bool check_stops(gl_engine *e, gl_req *r, int32_t tok)
{
    const size_t from = r->emitted > r->max_stop ? r->emitted - r->max_stop : 0;
    size_t cut = SIZE_MAX;
    for (int i = 0; i < r->n_stops; i++) {
        const char *hit = r->text_len > from ? strstr(r->text + from, r->stops[i]) : NULL;
        if (hit && (size_t)(hit - r->text) < cut)
            cut = (size_t)(hit - r->text);
    }
    if (cut != SIZE_MAX) {
        r->text_len = cut < r->emitted ? r->emitted : cut;
        r->text[r->text_len] = '\0';
        finish(e, r, GL_STOP_STRING);
        return true;
    }
    const size_t safe = r->text_len - held_back(r);
    if (safe > r->emitted || !r->n_stops) {
        bool go_on = !r->cb || r->cb(r->user, tok, r->text + r->emitted, safe - r->emitted);
        r->emitted = safe;
        if (!go_on) {
            finish(e, r, GL_STOP_CALLBACK);
            return true;
        }
    }
    return false;
}

/* Samples the next token of r from its logits and applies every stop rule,
 * in the order a single generation loop would. Fails only when the token or
 * its text cannot be stored: the request then ends with GL_STOP_ERROR. */
static gl_status advance(gl_engine *e, gl_req *r, float *logits, gl_error *err)
{
    const int64_t n_gen = r->n_toks - r->n_prompt;
    if (r->n_predict >= 0 && n_gen >= r->n_predict) {
        finish(e, r, GL_STOP_LENGTH);
        return GL_OK;
    }
    const int32_t tok = gl_sampler_sample(r->smp, logits, r->toks, (int)(r->n_toks - r->base));
    if (r->t_first == 0)
        r->t_first = now_ms();
    if (gl_tokenizer_is_eog(e->m->tok, tok)) {
        finish(e, r, GL_STOP_EOS);
        return GL_OK;
    }
    int len = gl_tokenizer_detok_push(e->m->tok, &r->detok, tok, e->tmp, sizeof e->tmp);
    if (!append_tok(r, tok) || !append_text(r, e->tmp, (size_t)len)) {
        finish(e, r, GL_STOP_ERROR);
        return gl_fail(err, GL_ERR_NOMEM,
                       "out of memory storing token %lld of request %lld: the request ended",
                       (long long)(r->n_toks - r->n_prompt), (long long)r->id);
    }
    const int64_t i_gen = r->n_toks - 1 - r->n_prompt;
    if (r->sink && i_gen < r->sink_cap)
        r->sink[i_gen] = tok;
    if (check_stops(e, r, tok))
        return GL_OK;
    if (!r->keep_history && r->emitted > 4096 + r->max_stop) {
        /* streamed text is the caller's now; keep what a stop string may
         * still straddle */
        const size_t drop = r->emitted - r->max_stop;
        memmove(r->text, r->text + drop, r->text_len - drop + 1);
        r->text_len -= drop;
        r->emitted -= drop;
    }
    if (r->n_predict >= 0 && r->n_toks - r->n_prompt >= r->n_predict) {
        finish(e, r, GL_STOP_LENGTH);
        return GL_OK;
    }
    if (!r->ring && r->n_toks - 1 >= r->block) {
        finish(e, r, GL_STOP_CONTEXT);
        return GL_OK;
    }
    r->state = REQ_DECODE;
    return GL_OK;
}

/* Prompt tokens of a waiting request that free slot s still holds at the
 * same positions; the last prompt token is always fed, for its logits. */
static int prefix_match(const gl_engine *e, const gl_req *r, int s)
{
    const slot_memo *mm = &e->memo[s];
    if (!e->prefix_reuse || r->base != 0 || r->n_fed != 0 || mm->n == 0)
        return 0;
    const int lim = mm->n < r->n_prompt - 1 ? mm->n : r->n_prompt - 1;
    int k = 0;
    while (k < lim && mm->toks[k] == r->toks[k])
        k++;
    return k;
}

gl_status gl_engine_step(gl_engine *e, gl_error *err)
{
    gl_ctx *c = e->c;
    /* admit in arrival order while slots are free */
    for (int i = 0; i < e->n_reqs; i++) {
        gl_req *r = e->reqs[i];
        if (r->state != REQ_WAITING)
            continue;
        int slot = -1, reuse = 0;
        for (int s = 0; s < e->max_seqs; s++) {
            if (e->slot_busy[s])
                continue;
            const int match = prefix_match(e, r, s);
            /* the longest reusable prefix; among equals, the slot holding
             * the least, so others' caches survive longer */
            if (slot < 0 || match > reuse || (match == reuse && e->memo[s].n < e->memo[slot].n)) {
                slot = s;
                reuse = match;
            }
        }
        if (slot < 0)
            break;
        e->slot_busy[slot] = true;
        r->slot = slot;
        r->state = REQ_PREFILL;
        r->t_admit = now_ms();
        e->memo[slot].n = 0; /* overwritten from here on */
        if (reuse > 0 && gl_ctx_seq_truncate(c, slot, reuse)) {
            r->n_fed = reuse;
            r->n_reused = reuse;
            e->stats.reused_tokens += (uint64_t)reuse;
        } else {
            gl_ctx_seq_reset(c, slot);
        }
    }

    /* decodes first, one row each; then prompt chunks within the budget */
    int n = 0, n_out = 0, budget = e->budget, n_decode = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < e->n_reqs; i++) {
            gl_req *r = e->reqs[i];
            if (r->state != (pass == 0 ? REQ_DECODE : REQ_PREFILL))
                continue;
            if (r->crop && r->n_toks - r->win_start > r->block) {
                /* idx_cond = idx[-block:]: recompute the window from position 0 */
                r->win_start = r->n_toks - r->block;
                r->n_fed = r->win_start;
                r->state = REQ_PREFILL;
                gl_ctx_seq_reset(c, r->slot);
                if (pass == 0)
                    continue; /* fed as a prompt chunk in the second pass */
            }
            int take = (int)(r->n_toks - r->n_fed); /* a prompt or window: fits */
            if (pass == 1) {
                if (budget <= 0)
                    break;
                take = take < budget ? take : budget;
                budget -= take;
            } else {
                n_decode += take;
            }
            for (int k = 0; k < take; k++) {
                e->b_tok[n] = r->toks[r->n_fed + k - r->base];
                e->b_seq[n] = r->slot;
                n++;
            }
            r->n_fed += take;
            if (r->n_fed == r->n_toks) {
                e->b_out[n_out] = n - 1;
                e->b_out_req[n_out++] = r;
            }
        }
    }
    if (n == 0)
        return GL_OK;
    double t0 = now_ms();
    gl_batch b = { .tokens = e->b_tok,
                   .seq = e->b_seq,
                   .n = n,
                   .out_rows = e->b_out,
                   .n_out = n_out,
                   .logits = e->b_logits };
    gl_status st = gl_ctx_forward(c, &b, err);
    if (st)
        return st;
    double dt = now_ms() - t0;
    e->stats.steps++;
    e->stats.decode_tokens += (uint64_t)n_decode;
    e->stats.prefill_tokens += (uint64_t)(n - n_decode);
    e->stats.decode_ms += dt * n_decode / n;
    e->stats.prefill_ms += dt * (n - n_decode) / n;
    /* every sequence advances; the first failure (one request ended) is
     * reported once all have */
    for (int i = 0; i < n_out; i++) {
        gl_req *r = e->b_out_req[i];
        if (r->state == REQ_PREFILL)
            r->prefill_ms += dt;
        else
            r->decode_ms += dt;
        gl_status sti = advance(e, r, e->b_logits + (size_t)i * e->n_vocab, st ? NULL : err);
        st = st ? st : sti;
    }
    return st;
}

void gl_engine_get_stats(const gl_engine *e, gl_engine_stats *st)
{
    *st = e->stats;
}

bool gl_engine_busy(const gl_engine *e)
{
    for (int i = 0; i < e->n_reqs; i++)
        if (e->reqs[i]->state != REQ_DONE)
            return true;
    return false;
}

gl_status gl_engine_cancel(gl_engine *e, int64_t id, gl_error *err)
{
    gl_req *r = find(e, id);
    if (!r)
        return gl_fail(err, GL_ERR_ARG, "no request %lld in this engine", (long long)id);
    if (r->state != REQ_DONE)
        finish(e, r, GL_STOP_CANCELLED);
    return GL_OK;
}

gl_status gl_engine_status(const gl_engine *e, int64_t id, gl_request_status *out, gl_error *err)
{
    const gl_req *r = find(e, id);
    if (!r)
        return gl_fail(err, GL_ERR_ARG, "no request %lld in this engine", (long long)id);
    const double now = now_ms();
    *out = (gl_request_status){
        .finished = r->state == REQ_DONE,
        .running = r->state == REQ_PREFILL || r->state == REQ_DECODE,
        .stop = r->stop,
        .prompt_tokens = r->base == 0 ? r->toks : NULL,
        .n_prompt = r->n_prompt,
        .tokens = r->base == 0 ? r->toks + r->n_prompt : NULL,
        .n_generated = r->n_toks - r->n_prompt < INT_MAX ? (int)(r->n_toks - r->n_prompt) : INT_MAX,
        .text = r->text,
        .text_len = r->text_len,
        .queue_ms = (r->t_admit > 0 ? r->t_admit : now) - r->t_submit,
        .prefill_ms = r->prefill_ms,
        .decode_ms = r->decode_ms,
        .latency_ms = (r->state == REQ_DONE ? r->t_done : now) - r->t_submit,
        .ttft_ms = r->t_first > 0 ? r->t_first - r->t_submit : 0,
        .n_reused = r->n_reused,
    };
    return GL_OK;
}

void gl_engine_release(gl_engine *e, int64_t id)
{
    for (int i = 0; i < e->n_reqs; i++) {
        if (e->reqs[i]->id != id)
            continue;
        gl_req *r = e->reqs[i];
        if (r->slot >= 0) {
            memo_slot(e, r);
            e->slot_busy[r->slot] = false;
        }
        req_free(r);
        memmove(e->reqs + i, e->reqs + i + 1, sizeof *e->reqs * (size_t)(e->n_reqs - i - 1));
        e->n_reqs--;
        return;
    }
}

/* ---- the single-sequence loop, through the same machinery ---------------- */

gl_status gl_generate(gl_ctx *c, const int32_t *prompt, int n_prompt, const gl_gen_params *p,
                      gl_token_cb cb, void *user, int32_t *out_tokens, int cap, gl_gen_result *res,
                      gl_error *err)
{
    gl_gen_params gp = p ? *p : gl_gen_default_params();
    *res = (gl_gen_result){ .n_prompt = n_prompt };
    if (n_prompt < 1)
        return gl_fail(err, GL_ERR_ARG, "the prompt has no tokens");
    gl_engine *e;
    gl_status st = engine_on_ctx(&e, c, c->n_batch - c->n_seq, err);
    if (st)
        return st;
    gl_request rq = gl_request_default();
    rq.prompt_tokens = prompt;
    rq.n_prompt_tokens = n_prompt;
    rq.n_predict = gp.n_predict;
    rq.ring = gp.ring;
    rq.context_policy = gp.context_policy;
    rq.sampling = gp.sampling;
    rq.stops = gp.stops;
    rq.n_stops = gp.n_stops;
    rq.on_token = cb;
    rq.user = user;
    rq.keep_history = false; /* ids go to out_tokens, text to the callback */
    int64_t id;
    if ((st = gl_engine_submit(e, &rq, &id, err)))
        goto out;
    e->reqs[e->n_reqs - 1]->sink = out_tokens;
    e->reqs[e->n_reqs - 1]->sink_cap = cap;
    while (gl_engine_busy(e))
        if ((st = gl_engine_step(e, err)))
            break; /* what was generated is still reported */
    gl_request_status rs;
    gl_engine_status(e, id, &rs, NULL);
    res->n_generated = rs.n_generated;
    res->stop = rs.stop;
    res->prefill_ms = rs.prefill_ms;
    res->decode_ms = rs.decode_ms;
out:
    gl_engine_free(e);
    return st;
}
