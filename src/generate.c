/* Generation parameters and model facts the loop needs. The loop itself
 * (gl_generate) runs through the batching engine, src/engine.c, so a
 * request alone and in a batch take the same path.
 *
 * Past a full context, one of two policies:
 *  - ring: the KV cache slides, each new position evicting the oldest (RoPE
 *    models: attention only sees relative positions, so this is exact);
 *  - crop (nanoGPT's generate): each step conditions on the last block_size
 *    tokens, position ids from 0. While the history fits, the cache decodes
 *    incrementally (identical); once it does not, the window is recomputed
 *    from scratch every step. Models with learned positions need this. */
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
    case GL_STOP_CANCELLED: return "cancelled";
    case GL_STOP_ERROR: return "error";
    default: return "none";
    }
}

gl_gen_params gl_gen_default_params(void)
{
    return (gl_gen_params){ .n_predict = 256,
                            .ring = true,
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
