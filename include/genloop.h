/* genloop — a CPU runtime for quantized language models stored as GGUF.
 *
 * This is the only public header. Every call that can fail takes a
 * gl_error * (may be NULL) and returns a status code; on failure the error
 * holds a one-line message naming what went wrong and where. The library
 * never aborts on bad input and never prints on its own. */
#ifndef GENLOOP_H
#define GENLOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GENLOOP_BUILD) && defined(__GNUC__)
#define GL_API __attribute__((visibility("default")))
#else
#define GL_API
#endif

#define GENLOOP_VERSION "0.1.0"

/* ---- errors ------------------------------------------------------------ */

typedef enum gl_status {
    GL_OK = 0,
    GL_ERR_IO = 1,          /* file missing, unreadable, not a regular file  */
    GL_ERR_FORMAT = 2,      /* malformed or hostile GGUF                      */
    GL_ERR_UNSUPPORTED = 3, /* valid file, but something we cannot run        */
    GL_ERR_NOMEM = 4,       /* an allocation failed or would be too large     */
    GL_ERR_ARG = 5,         /* a caller passed an invalid argument            */
    GL_ERR_CPU = 6,         /* the requested backend cannot run on this CPU   */
} gl_status;

typedef struct gl_error {
    gl_status code;
    char msg[512];
} gl_error;

/* ---- CPU features and kernel backends --------------------------------- */

/* Names the backends this build knows, best last: "generic", "avx2", ...
 * Returns the number written (at most cap). */
GL_API int gl_backend_list(const char **names, int cap);
/* The backend a model loaded without one uses: GENLOOP_BACKEND when set
 * (verbatim, even a name that loading will refuse; gl_backend_check tells),
 * else the best this build and CPU run. */
GL_API const char *gl_backend_default(void);
/* Whether this build has the backend and this CPU can run it. */
GL_API gl_status gl_backend_check(const char *name, gl_error *err);
/* Space-separated list of the CPU features detected, e.g. "sse4.2 avx avx2 fma f16c". */
GL_API const char *gl_cpu_features(void);
/* The CPU's identity as the tune is chosen by: "AuthenticAMD family 1Ah
 * model 02h" (x86: CPUID vendor, display family and model). */
GL_API const char *gl_cpu_model(void);
/* The decode tune a model loaded now uses (prefetch distances and hints,
 * streams per thread, 256- or 512-bit products: speed only, never
 * results): GENLOOP_TUNE when set (verbatim: "zen", "default+ymm", ...),
 * else the preset for this CPU's vendor, family and model. */
GL_API const char *gl_tune_default(void);
/* One line on the named tune (what it is for, its numbers) into buf;
 * fails naming the presets for an unknown name. */
GL_API gl_status gl_tune_describe(const char *name, char *buf, size_t cap, gl_error *err);

/* ---- models ------------------------------------------------------------ */

typedef struct gl_model gl_model;

typedef struct gl_model_params {
    const char *backend; /* NULL: best for this CPU (or GENLOOP_BACKEND)  */
    bool vocab_only;     /* load just the tokenizer (vocabulary GGUFs)    */
} gl_model_params;

GL_API gl_model_params gl_model_default_params(void);
GL_API gl_status gl_model_load(gl_model **out, const char *path, const gl_model_params *params,
                               gl_error *err);
GL_API void gl_model_free(gl_model *m);

typedef struct gl_model_info {
    const char *arch;    /* general.architecture                          */
    const char *name;    /* general.name or ""                            */
    const char *backend; /* kernel backend in use                          */
    uint32_t gguf_version;
    int n_vocab, n_ctx_train, dim, n_layers, n_heads, n_kv_heads, ffn_dim, head_dim;
    float norm_eps, rope_freq_base, rope_scale;
    uint64_t n_tensors;
    uint64_t weight_bytes;           /* bytes of all tensors as stored            */
    uint64_t weight_bytes_per_token; /* bytes one decode step reads      */
    uint64_t file_bytes;
    uint64_t type_counts[32]; /* tensors per GGUF type id (0..31)         */
    uint64_t type_bytes[32];
    bool has_weights;
    int bos_id, eos_id;
    bool add_bos;      /* prompts start with BOS, as the vocabulary asks */
    int n_pos_learned; /* learned absolute positions (gpt2's position_embd
                        * rows): no position may reach it. 0: none (RoPE) */
    /* weight bytes moved at load into owned huge-page memory: repacked into
     * the kernels' layouts, or copied as stored; the rest is read from the
     * file mapping (see gl_model_load_warning when short of memory) */
    uint64_t repacked_bytes, copied_bytes;
} gl_model_info;

GL_API void gl_model_get_info(const gl_model *m, gl_model_info *info);
GL_API const char *gl_type_name(int gguf_type);
/* Bytes of F16 KV cache one sequence of n_ctx positions needs. */
GL_API uint64_t gl_model_kv_bytes(const gl_model *m, int n_ctx);

/* ---- tokenizer --------------------------------------------------------- */

/* Tokenizes len bytes of text; add_bos prepends BOS (pass
 * gl_model_info.add_bos to follow the vocabulary). Writes at most cap ids to out; returns the
 * number of tokens the text has (may exceed cap: call again with more room)
 * or -1 on error. */
GL_API int gl_tokenize(const gl_model *m, const char *text, size_t len, bool add_bos, int32_t *out,
                       int cap, gl_error *err);

/* gl_tokenize with options (GL_TOKENIZE_* flags):
 * - BOS: prepend BOS (pass it when gl_model_info.add_bos asks);
 * - SPECIAL: read the text of control tokens (e.g. "<|im_start|>",
 *   "<|eot_id|>") as those single tokens, as rendered chat templates need;
 *   without it plain text never yields a control token (user-defined tokens
 *   are single tokens either way);
 * - CONTINUE: the text continues text already fed (e.g. the next turn of a
 *   chat after the answer): no SentencePiece space prefix at its start. */
enum { GL_TOKENIZE_BOS = 1, GL_TOKENIZE_SPECIAL = 2, GL_TOKENIZE_CONTINUE = 4 };
GL_API int gl_tokenize_ex(const gl_model *m, const char *text, size_t len, unsigned flags,
                          int32_t *out, int cap, gl_error *err);

/* Whether id ends generation: EOS (tokenizer.ggml.eos_token_id), EOT, EOM
 * and the end-of-turn tokens (<|im_end|>, <|eot_id|>, <|end|>,
 * <end_of_turn>, ...). */
GL_API bool gl_model_is_eog(const gl_model *m, int32_t id);

/* A warning about the vocabulary (e.g. an unknown tokenizer.ggml.pre, for
 * which the default split rules are used), or NULL. Front ends print it. */
GL_API const char *gl_model_tokenizer_warning(const gl_model *m);

/* What loading left slower than it could be (e.g. too little memory for
 * the weights' repacked layouts, so they are read as the file stores them:
 * same results, slower), or NULL. Front ends print it. */
GL_API const char *gl_model_load_warning(const gl_model *m);

/* The GGUF string value of key (e.g. "tokenizer.chat_template") copied to
 * out (cap bytes, NUL-terminated, may be NULL to ask the length); returns
 * its length, or -1 when the key is missing or not a string. */
GL_API int gl_model_meta_str(const gl_model *m, const char *key, char *out, size_t cap);
/* The vocabulary text of token id (e.g. "<s>"), like gl_model_meta_str;
 * -1 when id is out of range. */
GL_API int gl_model_token_text(const gl_model *m, int32_t id, char *out, size_t cap);

/* Streams token text safely: bytes of a UTF-8 character split over several
 * tokens come out once the character is whole. */
typedef struct gl_detok {
    unsigned char pending[8];
    int n_pending;
    bool after_bos; /* strip the leading space SentencePiece adds */
} gl_detok;

GL_API void gl_detok_init(gl_detok *d);
/* Appends the text of token id to out (cap bytes, NUL-terminated); returns
 * the number of bytes written, excluding the NUL. 64 bytes of room always
 * suffice for one token. */
GL_API int gl_detok_push(const gl_model *m, gl_detok *d, int32_t id, char *out, size_t cap);
/* Flushes an incomplete trailing sequence (as U+FFFD). */
GL_API int gl_detok_flush(gl_detok *d, char *out, size_t cap);

/* ---- chat templates ---------------------------------------------------- */

/* One message of a conversation: role "system", "user", "assistant", ... */
typedef struct gl_chat_message {
    const char *role;
    const char *content;
} gl_chat_message;

/* The chat format family of a template: tmpl is the Jinja source a GGUF
 * stores in tokenizer.chat_template, or a family name ("chatml", "llama2",
 * "llama3", "gemma", "phi3", "mistral-v7", ...). Returns the family name,
 * or NULL when the template is not recognised. */
GL_API const char *gl_chat_template_family(const char *tmpl);
/* Lists the family names (at most cap); returns how many there are. */
GL_API int gl_chat_template_names(const char **names, int cap);
/* Renders the conversation as the template's family formats it, byte for
 * byte; an unrecognised template (or NULL) renders as ChatML. bos / eos
 * are the texts the format writes for BOS / EOS where it writes them (NULL
 * or "": "<s>" and the family's usual end text). add_generation_prompt
 * appends the header that opens the assistant's answer. Writes at most cap
 * bytes (NUL-terminated) to out and returns the full length (call again
 * with more room when it is >= cap), or -1 with err set. */
GL_API int gl_chat_render(const char *tmpl, const gl_chat_message *msgs, int n_msgs,
                          bool add_generation_prompt, const char *bos, const char *eos, char *out,
                          size_t cap, gl_error *err);

/* ---- contexts: KV cache and forward pass ------------------------------- */

typedef struct gl_ctx gl_ctx;

typedef struct gl_ctx_params {
    int n_ctx;      /* KV slots per sequence; 0: the model's context length */
    int n_threads;  /* 0: physical cores                                   */
    int n_batch;    /* most tokens per forward pass, at most 4096; 0: 512   */
    int n_keep;     /* leading positions the ring never evicts; 0: none    */
    int n_seq;      /* sequence slots, each with its own ring and position
                     * (gl_ctx_eval_seq); 0: 1                            */
    int cache_type; /* enum gl_cache_type                                 */
} gl_ctx_params;

/* KV cache storage. Q8_0 halves the memory of F16 (it needs the KV width,
 * heads x head size, to be a multiple of 32); F32 is for debugging. */
typedef enum gl_cache_type { GL_CACHE_F16 = 0, GL_CACHE_F32 = 1, GL_CACHE_Q8_0 = 2 } gl_cache_type;
/* "f16", "f32", "q8_0" -> the type, or -1. */
GL_API int gl_cache_type_from_name(const char *name);

GL_API gl_ctx_params gl_ctx_default_params(void);
GL_API gl_status gl_ctx_create(gl_ctx **out, gl_model *m, const gl_ctx_params *p, gl_error *err);
GL_API void gl_ctx_free(gl_ctx *c);
GL_API int gl_ctx_n_ctx(const gl_ctx *c);
GL_API int gl_ctx_n_threads(const gl_ctx *c);
/* Bytes of KV cache the context holds (all sequences, K and V). */
GL_API uint64_t gl_ctx_kv_bytes(const gl_ctx *c);
/* Positions consumed so far (by sequence 0). */
GL_API int64_t gl_ctx_pos(const gl_ctx *c);
/* Forgets every position of every sequence. */
GL_API void gl_ctx_reset(gl_ctx *c);

/* Feeds n tokens at the next positions of sequence 0. When logits is
 * non-NULL it receives n_vocab floats per fed token if all_logits, else for
 * the last one only. Models with learned positions
 * (gl_model_info.n_pos_learned) refuse, with GL_ERR_ARG and nothing fed, any
 * position at or past their last one. */
GL_API gl_status gl_ctx_eval(gl_ctx *c, const int32_t *tokens, int n, float *logits,
                             bool all_logits, gl_error *err);

/* The same for sequence seq (0 <= seq < n_seq): each sequence has its own
 * positions and ring, and its logits do not depend on the others'. */
GL_API int gl_ctx_n_seq(const gl_ctx *c);
GL_API gl_status gl_ctx_eval_seq(gl_ctx *c, int seq, const int32_t *tokens, int n, float *logits,
                                 bool all_logits, gl_error *err);
/* Positions sequence seq has consumed; -1 for a sequence out of range. */
GL_API int64_t gl_ctx_seq_pos(const gl_ctx *c, int seq);
/* Forgets the positions of sequence seq. */
GL_API gl_status gl_ctx_reset_seq(gl_ctx *c, int seq, gl_error *err);

/* ---- sampling ---------------------------------------------------------- */

typedef struct gl_sampler_params {
    float temp;           /* 0: greedy                                     */
    int top_k;            /* 0: off                                        */
    float top_p;          /* 1: off                                        */
    float min_p;          /* 0: off                                        */
    float repeat_penalty; /* 1: off                                        */
    int repeat_last_n;    /* window of the repetition penalty              */
    uint64_t seed;
} gl_sampler_params;

typedef struct gl_sampler gl_sampler;

GL_API gl_sampler_params gl_sampler_default_params(void);
GL_API gl_status gl_sampler_create(gl_sampler **out, int n_vocab, const gl_sampler_params *p,
                                   gl_error *err);
GL_API void gl_sampler_free(gl_sampler *s);
/* Picks the next token from logits (n_vocab floats, modified in place);
 * history holds the tokens so far, for the repetition penalty. */
GL_API int32_t gl_sampler_sample(gl_sampler *s, float *logits, const int32_t *history,
                                 int n_history);
/* The probabilities the sampler would draw from (after penalties, top-k,
 * top-p, min-p and temperature), for tests and tools. probs has n_vocab
 * entries; filtered-out tokens get 0. */
GL_API void gl_sampler_probs(gl_sampler *s, const float *logits, const int32_t *history,
                             int n_history, float *probs);

/* ---- generation loop --------------------------------------------------- */

typedef enum gl_stop_reason {
    GL_STOP_NONE = 0,
    GL_STOP_EOS,       /* the model emitted end-of-sequence         */
    GL_STOP_LENGTH,    /* n_predict tokens were generated           */
    GL_STOP_CONTEXT,   /* the context is full and the ring is off   */
    GL_STOP_STRING,    /* a stop string appeared in the text        */
    GL_STOP_CALLBACK,  /* the token callback asked to stop         */
    GL_STOP_CANCELLED, /* gl_engine_cancel                         */
    GL_STOP_ERROR      /* the request could not go on (gl_engine_step
                        * or gl_generate returned the error)       */
} gl_stop_reason;

GL_API const char *gl_stop_reason_name(gl_stop_reason r); /* "eos", "length", ... */

/* How generation goes on once the history no longer fits the context. */
typedef enum gl_ctx_policy {
    GL_CTX_POLICY_AUTO = 0, /* crop for models with learned positions, else ring   */
    GL_CTX_POLICY_RING,     /* slide: the ring KV cache keeps the latest n_ctx
                             * positions (exact for RoPE models, refused for
                             * learned positions)                               */
    GL_CTX_POLICY_CROP,     /* nanoGPT: condition each step on the last block_size
                             * tokens (the context size, capped at the model's
                             * learned positions), recomputed from position 0:
                             * exact, but a prefill of block_size per token      */
} gl_ctx_policy;

typedef struct gl_gen_params {
    int n_predict;      /* most tokens to generate; < 0: unlimited      */
    bool ring;          /* keep going past a full context (by context_policy);
                         * false: stop (GL_STOP_CONTEXT)                 */
    int context_policy; /* enum gl_ctx_policy                            */
    gl_sampler_params sampling;
    const char *const *stops; /* stop strings: generation ends when the text
                               * contains one; it is cut off before it       */
    int n_stops;
} gl_gen_params;

GL_API gl_gen_params gl_gen_default_params(void);

/* Called with each generated token and the text it completes (possibly
 * empty while a UTF-8 character is incomplete or text that may start a stop
 * string is held back; id -1 for the final flush); return false to stop. */
typedef bool (*gl_token_cb)(void *user, int32_t id, const char *text, size_t len);

typedef struct gl_gen_result {
    int n_prompt;
    int n_generated;
    gl_stop_reason stop;
    double prefill_ms, decode_ms;
} gl_gen_result;

/* Prefills prompt (n_prompt ids) into a fresh context, then samples and
 * decodes until a stop. Generated ids go to out_tokens (cap entries; more
 * are generated than fit only when cap < n_predict). */
GL_API gl_status gl_generate(gl_ctx *c, const int32_t *prompt, int n_prompt, const gl_gen_params *p,
                             gl_token_cb cb, void *user, int32_t *out_tokens, int cap,
                             gl_gen_result *res, gl_error *err);

GL_API int gl_model_n_vocab(const gl_model *m);
GL_API int gl_model_eos(const gl_model *m);

/* ---- continuous batching ----------------------------------------------- */

/* An engine runs many generation loops at once over one model: each step
 * feeds every running sequence's next token plus chunks of waiting prompts
 * through one forward pass. A request's output depends only on its own
 * prompt, parameters and seed — never on what else is in the batch, the
 * batch order or the thread count. */
typedef struct gl_engine gl_engine;

typedef struct gl_engine_params {
    int max_seqs;         /* sequences decoded at once (each owns a ring) */
    int n_ctx;            /* KV slots per sequence; 0: model's context    */
    int n_keep;           /* pinned positions per sequence                */
    int n_threads;        /* 0: physical cores                            */
    int max_batch_tokens; /* prompt tokens per step (chunked prefill); with
                           * max_seqs at most 4096 (one forward pass)     */
    int cache_type;       /* enum gl_cache_type                           */
    bool prefix_reuse;    /* a new request whose prompt starts with tokens
                           * a free slot still holds (from an earlier
                           * request) keeps their cache entries instead of
                           * recomputing them (gl_request_status.n_reused,
                           * stats.reused_tokens: not counted as prefill);
                           * outputs are unchanged. Default false         */
} gl_engine_params;

typedef struct gl_request {
    const char *prompt;           /* text, tokenized by the model...        */
    size_t prompt_len;            /* (0: strlen)                            */
    int add_bos;                  /* -1: as the vocabulary asks, 0/1        */
    const int32_t *prompt_tokens; /* ...or token ids (takes precedence)     */
    int n_prompt_tokens;
    int n_predict;      /* < 0: unlimited                         */
    bool ring;          /* false: stop when the context is full   */
    int context_policy; /* enum gl_ctx_policy                     */
    gl_sampler_params sampling;
    const char *const *stops; /* copied at submit                       */
    int n_stops;
    gl_token_cb on_token; /* streaming, may be NULL                 */
    void *user;
    bool keep_history; /* true (default): status keeps every id and
                        * all text; false: only what sampling and
                        * the context need, so a request streaming
                        * forever runs in fixed memory            */
} gl_request;

typedef struct gl_request_status {
    bool running, finished;
    gl_stop_reason stop;
    const int32_t *prompt_tokens; /* valid until the request is released;
                                   * NULL once a request that keeps no
                                   * history has dropped its head            */
    int n_prompt;
    const int32_t *tokens; /* generated ids                         */
    int n_generated;
    const char *text; /* generated text, NUL-terminated        */
    size_t text_len;
    double queue_ms; /* submit to admission (so far, while waiting)    */
    double prefill_ms, decode_ms, latency_ms, ttft_ms;
    int n_reused; /* prompt tokens taken from a slot's cache (prefix reuse) */
} gl_request_status;

GL_API gl_engine_params gl_engine_default_params(void);
GL_API gl_request gl_request_default(void);
GL_API gl_status gl_engine_create(gl_engine **out, gl_model *m, const gl_engine_params *p,
                                  gl_error *err);
GL_API void gl_engine_free(gl_engine *e);
/* Queues a request; its id identifies it until gl_engine_release. */
GL_API gl_status gl_engine_submit(gl_engine *e, const gl_request *r, int64_t *id, gl_error *err);
/* One scheduling round: admit, batch, forward, sample, stop. A request
 * whose token cannot be stored ends (GL_STOP_ERROR) and the step returns
 * GL_ERR_NOMEM once every other sequence has advanced. */
GL_API gl_status gl_engine_step(gl_engine *e, gl_error *err);
/* Whether any request is waiting or running. */
GL_API bool gl_engine_busy(const gl_engine *e);
/* Both fail (GL_ERR_ARG) only for an id the engine does not hold. */
GL_API gl_status gl_engine_cancel(gl_engine *e, int64_t id, gl_error *err);
GL_API gl_status gl_engine_status(const gl_engine *e, int64_t id, gl_request_status *st,
                                  gl_error *err);
/* Forgets a request (finished or not) and frees what it holds. */
GL_API void gl_engine_release(gl_engine *e, int64_t id);

/* Totals since creation; a step's time is split between prompt and decode
 * rows in proportion to their counts. */
typedef struct gl_engine_stats {
    uint64_t steps, prefill_tokens, decode_tokens;
    uint64_t reused_tokens; /* prompt tokens served from a slot's cache */
    double prefill_ms, decode_ms;
} gl_engine_stats;
GL_API void gl_engine_get_stats(const gl_engine *e, gl_engine_stats *st);

#ifdef __cplusplus
}
#endif
#endif
