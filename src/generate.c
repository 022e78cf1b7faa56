/* The generation loop: prefill the prompt in one batched pass, then sample
 * and decode one token per step until EOS, the token limit, a full
 * context (when the ring is off) or the callback says stop.
 *
 * Past a full context, one of two policies:
 *  - ring: the KV cache slides, each new position evicting the oldest (RoPE
 *    models: attention only sees relative positions, so this is exact);
 *  - crop (nanoGPT's generate): each step conditions on the last block_size
 *    tokens, position ids from 0. While the history fits, the cache decodes
 *    incrementally (identical); once it does not, the window is recomputed
 *    from scratch every step. Models with learned positions need this. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "error.h"
#include "tokenizer.h"

const char *gl_stop_reason_name(gl_stop_reason r)
{
    switch (r) {
    case GL_STOP_EOS: return "eos";
    case GL_STOP_LENGTH: return "length";
    case GL_STOP_CONTEXT: return "context";
    case GL_STOP_STRING: return "stop";
    case GL_STOP_CALLBACK: return "callback";
    default: return "none";
    }
}

gl_gen_params gl_gen_default_params(void)
{
    return (gl_gen_params){ .n_predict = 256, .ring = true,
                            .context_policy = GL_CTX_POLICY_AUTO,
                            .sampling = gl_sampler_default_params() };
}

int gl_model_n_vocab(const gl_model *m)
{
    return m->cfg.n_vocab;
}

int gl_model_eos(const gl_model *m)
{
    return gl_tokenizer_eos(m->tok);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

gl_status gl_generate(gl_ctx *c, const int32_t *prompt, int n_prompt, const gl_gen_params *p,
                      gl_token_cb cb, void *user, int32_t *out_tokens, int cap,
                      gl_gen_result *res, gl_error *err)
{
    const gl_model *m = c->m;
    const int n_vocab = m->cfg.n_vocab;
    gl_gen_params gp = p ? *p : gl_gen_default_params();
    *res = (gl_gen_result){ .n_prompt = n_prompt };
    if (n_prompt < 1)
        return gl_fail(err, GL_ERR_ARG, "the prompt has no tokens");

    /* Learned positions end at n_pos: the usable context is capped there. */
    const int n_pos = m->cfg.n_pos_learned;
    const int block = n_pos > 0 && n_pos < c->n_ctx ? n_pos : c->n_ctx;
    int policy = gp.context_policy;
    if (policy == GL_CTX_POLICY_AUTO)
        policy = n_pos > 0 ? GL_CTX_POLICY_CROP : GL_CTX_POLICY_RING;
    if (policy != GL_CTX_POLICY_RING && policy != GL_CTX_POLICY_CROP)
        return gl_fail(err, GL_ERR_ARG, "invalid context policy %d", gp.context_policy);
    if (policy == GL_CTX_POLICY_RING && n_pos > 0)
        return gl_fail(err, GL_ERR_ARG, "the ring context policy cannot run '%s': its %d "
                       "positions are learned (position_embd), so a sliding window past them "
                       "is not exact; use the crop policy", m->arch, n_pos);
    if (!gp.ring && n_prompt > block)
        return gl_fail(err, GL_ERR_ARG, "the prompt has %d tokens but the context holds %d",
                       n_prompt, block);
    const bool crop = gp.ring && policy == GL_CTX_POLICY_CROP;

    /* The repetition penalty looks back over prompt and output together. */
    const int hist_cap = gp.sampling.repeat_last_n > 0 ? gp.sampling.repeat_last_n : 1;
    int32_t *hist = malloc((size_t)hist_cap * sizeof *hist);
    float *logits = malloc((size_t)n_vocab * sizeof *logits);
    /* crop: the last block tokens of the history, the model's whole input */
    int32_t *win = crop ? malloc((size_t)block * sizeof *win) : NULL;
    int n_win = 0;
    gl_sampler *s = NULL;
    gl_status st = GL_OK;
    if (!hist || !logits || (crop && !win)) {
        st = gl_fail(err, GL_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((st = gl_sampler_create(&s, n_vocab, &gp.sampling, err)))
        goto out;
    int n_hist = 0;
    for (int i = n_prompt > hist_cap ? n_prompt - hist_cap : 0; i < n_prompt; i++)
        hist[n_hist++] = prompt[i];

    gl_ctx_reset(c);
    double t0 = now_ms();
    if (crop) {
        n_win = n_prompt < block ? n_prompt : block;
        memcpy(win, prompt + (n_prompt - n_win), (size_t)n_win * sizeof *win);
        st = gl_ctx_eval(c, win, n_win, logits, false, err);
    } else {
        st = gl_ctx_eval(c, prompt, n_prompt, logits, false, err);
    }
    if (st)
        goto out;
    double t1 = now_ms();
    res->prefill_ms = t1 - t0;

    gl_detok d;
    gl_detok_init(&d);
    const int eos = gl_tokenizer_eos(m->tok);
    char text[256];
    for (;;) {
        if (gp.n_predict >= 0 && res->n_generated >= gp.n_predict) {
            res->stop = GL_STOP_LENGTH;
            break;
        }
        const int32_t tok = gl_sampler_sample(s, logits, hist, n_hist);
        if (tok == eos) {
            res->stop = GL_STOP_EOS;
            break;
        }
        if (res->n_generated < cap)
            out_tokens[res->n_generated] = tok;
        res->n_generated++;
        if (n_hist == hist_cap) {
            for (int i = 1; i < n_hist; i++)
                hist[i - 1] = hist[i];
            n_hist--;
        }
        hist[n_hist++] = tok;
        int len = gl_tokenizer_detok_push(m->tok, &d, tok, text, sizeof text);
        if (cb && !cb(user, tok, text, (size_t)len)) {
            res->stop = GL_STOP_CALLBACK;
            break;
        }
        if (gp.n_predict >= 0 && res->n_generated >= gp.n_predict) {
            res->stop = GL_STOP_LENGTH;
            break;
        }
        if (!gp.ring && c->pos >= block) {
            res->stop = GL_STOP_CONTEXT;
            break;
        }
        if (crop && n_win == block) {
            /* idx_cond = idx[-block:]: recompute the window from position 0 */
            memmove(win, win + 1, (size_t)(block - 1) * sizeof *win);
            win[block - 1] = tok;
            gl_ctx_reset(c);
            st = gl_ctx_eval(c, win, block, logits, false, err);
        } else {
            if (crop)
                win[n_win++] = tok; /* still fits: the cache holds win[0..n_win) */
            st = gl_ctx_eval(c, &tok, 1, logits, false, err);
        }
        if (st)
            goto out;
    }
    int len = gl_detok_flush(&d, text, sizeof text);
    if (cb && len > 0)
        cb(user, -1, text, (size_t)len);
    res->decode_ms = now_ms() - t1;
out:
    gl_sampler_free(s);
    free(win);
    free(logits);
    free(hist);
    return st;
}
