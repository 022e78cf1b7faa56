/* The endpoints. Completion requests become engine requests here; their
 * responses are written as the engine produces tokens (completion_progress). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../json_in.h"
#include "chat.h"
#include "serve.h"

static void respond(server *s, conn *c, int status, const char *ctype, const sbuf *body,
                    const char *extra)
{
    metrics_count_status(&s->met, status);
    http_respond(&c->out, status, ctype, body->p ? body->p : "", body->len, c->keep_alive, extra);
    if (!c->keep_alive)
        c->close_after = true;
}

static void respond_json(server *s, conn *c, int status, const sbuf *body)
{
    respond(s, c, status, "application/json", body, NULL);
}

static void error_body(sbuf *b, const char *type, const char *param, const char *code,
                       const char *msg)
{
    sb_puts(b, "{\"error\":{\"message\":");
    sb_json_str(b, msg, strlen(msg));
    sb_puts(b, ",\"type\":");
    sb_json_str(b, type, strlen(type));
    sb_puts(b, ",\"param\":");
    if (param)
        sb_json_str(b, param, strlen(param));
    else
        sb_puts(b, "null");
    sb_puts(b, ",\"code\":");
    if (code)
        sb_json_str(b, code, strlen(code));
    else
        sb_puts(b, "null");
    sb_puts(b, "}}");
}

void respond_error(server *s, conn *c, int status, const char *type, const char *param,
                   const char *code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sbuf b = { 0 };
    error_body(&b, type, param, code, msg);
    const char *extra = status == 401   ? "WWW-Authenticate: Bearer\r\n"
                        : status == 503 ? "Retry-After: 1\r\n"
                                        : NULL;
    respond(s, c, status, "application/json", &b, extra);
    sb_free(&b);
}

static void bad_request(server *s, conn *c, const char *param, const char *fmt, const char *arg)
{
    respond_error(s, c, 400, "invalid_request_error", param, NULL, fmt, arg);
}

/* ---- small endpoints ------------------------------------------------------ */

static void get_health(server *s, conn *c)
{
    const int st = atomic_load(&s->state);
    sbuf b = { 0 };
    if (st == 1) {
        sb_puts(&b, "{\"status\":\"ok\"}");
        respond_json(s, c, 200, &b);
    } else {
        sb_puts(&b, st == 0 ? "{\"status\":\"loading\"}" : "{\"status\":\"error\"}");
        respond(s, c, 503, "application/json", &b, "Retry-After: 1\r\n");
    }
    sb_free(&b);
}

static void get_models(server *s, conn *c)
{
    sbuf b = { 0 };
    sb_puts(&b, "{\"object\":\"list\",\"data\":[{\"id\":");
    sb_json_str(&b, s->o.alias, strlen(s->o.alias));
    sb_printf(&b,
              ",\"object\":\"model\",\"created\":0,\"owned_by\":\"genloop\",\"meta\":"
              "{\"n_ctx\":%d,\"n_vocab\":%d}}]}",
              s->n_ctx, gl_model_n_vocab(s->m));
    respond_json(s, c, 200, &b);
    sb_free(&b);
}

static int count_busy(const server *s, int *running)
{
    int busy = 0, run = 0;
    for (int i = 0; i < s->o.max_conns; i++) {
        const conn *c = &s->conns[i];
        if (c->fd < 0 || !c->busy)
            continue;
        busy++;
        gl_request_status st;
        if (!gl_engine_status(s->e, c->eid, &st, NULL) && st.running)
            run++;
    }
    *running = run;
    return busy;
}

static void get_metrics(server *s, conn *c)
{
    gl_engine_stats es = { 0 };
    int running = 0, busy = 0, open = 0;
    if (atomic_load(&s->state) == 1) {
        gl_engine_get_stats(s->e, &es);
        s->met.prefix_reused_tokens = es.reused_tokens;
        busy = count_busy(s, &running);
    }
    for (int i = 0; i < s->o.max_conns; i++)
        open += s->conns[i].fd >= 0;
    sbuf b = { 0 };
    metrics_render(&s->met, &b, es.prefill_tokens, es.decode_tokens, busy - running, running, open);
    respond(s, c, 200, "text/plain; version=0.0.4", &b, NULL);
    sb_free(&b);
}

static bool parse_body(server *s, conn *c, const http_req *r, json_object *o)
{
    char msg[160];
    if (!json_parse_object(r->body, r->content_length, o, msg, sizeof msg)) {
        bad_request(s, c, NULL, "the body is not a valid JSON object: %s", msg);
        return false;
    }
    return true;
}

static void post_tokenize(server *s, conn *c, const http_req *r)
{
    json_object o;
    if (!parse_body(s, c, r, &o))
        return;
    const json_value *content = json_get(&o, "content"), *ab = json_get(&o, "add_special");
    if (!content || content->type != JV_STR) {
        bad_request(s, c, "content", "%s", "'content' (a string) is required");
        goto out;
    }
    if (ab && ab->type != JV_BOOL && ab->type != JV_NULL) {
        bad_request(s, c, "add_special", "%s", "'add_special' must be a boolean");
        goto out;
    }
    gl_model_info mi;
    gl_model_get_info(s->m, &mi);
    const bool bos = ab && ab->type == JV_BOOL ? ab->b : mi.add_bos;
    gl_error err;
    int n = gl_tokenize(s->m, content->str, content->str_len, bos, NULL, 0, &err);
    int32_t *ids = n > 0 ? malloc(sizeof *ids * (size_t)n) : NULL;
    if (n < 0 || (n > 0 && (!ids || gl_tokenize(s->m, content->str, content->str_len, bos, ids, n,
                                                &err) != n))) {
        bad_request(s, c, "content", "cannot tokenize: %s", n < 0 ? err.msg : "out of memory");
        free(ids);
        goto out;
    }
    sbuf b = { 0 };
    sb_puts(&b, "{\"tokens\":[");
    for (int i = 0; i < n; i++)
        sb_printf(&b, "%s%d", i ? "," : "", ids[i]);
    sb_puts(&b, "]}");
    respond_json(s, c, 200, &b);
    sb_free(&b);
    free(ids);
out:
    json_object_free(&o);
}

/* "tokens": [1, 2, 3] as raw text (json_in keeps number arrays raw). */
static int parse_ids(const char *raw, size_t len, int32_t *out, int cap, int n_vocab)
{
    size_t i = 0;
    int n = 0;
    while (i < len && raw[i] != '[')
        i++;
    if (i++ >= len)
        return -1;
    for (;;) {
        while (i < len && strchr(" \t\r\n", raw[i]))
            i++;
        if (i < len && raw[i] == ']' && n == 0)
            return 0;
        long v = 0;
        size_t d = 0;
        while (i < len && raw[i] >= '0' && raw[i] <= '9' && d < 10)
            v = v * 10 + (raw[i++] - '0'), d++;
        if (d == 0 || v >= n_vocab || n == cap)
            return -1;
        out[n++] = (int32_t)v;
        while (i < len && strchr(" \t\r\n", raw[i]))
            i++;
        if (i < len && raw[i] == ',') {
            i++;
            continue;
        }
        return i < len && raw[i] == ']' ? n : -1;
    }
}

static void post_detokenize(server *s, conn *c, const http_req *r)
{
    json_object o;
    if (!parse_body(s, c, r, &o))
        return;
    const json_value *t = json_get(&o, "tokens");
    const int cap = (int)(r->content_length / 2 + 1);
    int32_t *ids = malloc(sizeof *ids * (size_t)cap);
    int n = -1;
    if (t && ids && t->type == JV_OTHER)
        n = parse_ids(t->raw, t->raw_len, ids, cap, gl_model_n_vocab(s->m));
    else if (t && t->type == JV_STR_ARRAY && t->n_arr == 0)
        n = 0;
    if (n < 0) {
        bad_request(s, c, "tokens", "%s",
                    "'tokens' must be an array of token ids within the vocabulary");
    } else {
        sbuf text = { 0 }, b = { 0 };
        gl_detok d;
        gl_detok_init(&d);
        char tmp[256];
        for (int i = 0; i < n; i++)
            sb_put(&text, tmp, (size_t)gl_detok_push(s->m, &d, ids[i], tmp, sizeof tmp));
        sb_put(&text, tmp, (size_t)gl_detok_flush(&d, tmp, sizeof tmp));
        sb_puts(&b, "{\"content\":");
        sb_json_str(&b, text.p ? text.p : "", text.len);
        sb_puts(&b, "}");
        respond_json(s, c, 200, &b);
        sb_free(&b);
        sb_free(&text);
    }
    free(ids);
    json_object_free(&o);
}

/* ---- completions ----------------------------------------------------------- */

/* A numeric field within [lo, hi] (integral when integer); absent or null
 * leaves *out. False after answering 400. */
static bool num_field(server *s, conn *c, const json_object *o, const char *key, double lo,
                      double hi, bool integer, double *out)
{
    const json_value *v = json_get(o, key);
    if (!v || v->type == JV_NULL)
        return true;
    if (v->type != JV_NUM || !(v->num >= lo && v->num <= hi) ||
        (integer && v->num != (double)(long long)v->num)) {
        respond_error(s, c, 400, "invalid_request_error", key, NULL, "'%s' must be %s in [%g, %g]",
                      key, integer ? "an integer" : "a number", lo, hi);
        return false;
    }
    *out = v->num;
    return true;
}

static bool engine_full(server *s)
{
    int running;
    const int busy = count_busy(s, &running);
    return busy >= s->o.max_batch + s->o.max_queue;
}

static bool on_token(void *user, int32_t id, const char *text, size_t len)
{
    conn *c = user;
    if (c->t_first == 0 && id >= 0)
        c->t_first = serve_now_ms();
    if (c->stream)
        sb_put(&c->pending, text, len);
    return true;
}

/* The conversation as the model's chat template writes it (ChatML when the
 * model has none or one the library does not know), ending with the header
 * of the assistant's answer. False after answering with an error. */
static bool render_chat(server *s, conn *c, const chat *ch, sbuf *out)
{
    gl_chat_message *msgs = malloc(sizeof *msgs * (size_t)ch->n);
    char *text = NULL;
    gl_error err = { .msg = "out of memory" };
    int n = -1;
    if (msgs) {
        for (int i = 0; i < ch->n; i++)
            msgs[i] = (gl_chat_message){ .role = ch->msgs[i].role, .content = ch->msgs[i].content };
        n = gl_chat_render(s->chat_template, msgs, ch->n, true, s->bos, s->eos, NULL, 0, &err);
        if (n >= 0 && (text = malloc((size_t)n + 1)) &&
            gl_chat_render(s->chat_template, msgs, ch->n, true, s->bos, s->eos, text, (size_t)n + 1,
                           &err) == n)
            sb_put(out, text, (size_t)n);
        else if (n >= 0)
            n = -1;
    }
    free(text);
    free(msgs);
    if (n < 0)
        respond_error(s, c, 400, "invalid_request_error", "messages", NULL,
                      "cannot render the conversation: %s", err.msg);
    return n >= 0;
}

static void post_completion(server *s, conn *c, const http_req *r, bool chat_api)
{
    json_object o;
    if (!parse_body(s, c, r, &o))
        return;
    sbuf prompt = { 0 };
    chat ch = { 0 };
    int32_t *ids = NULL;
    const json_value *v;
    if ((v = json_get(&o, "model")) && v->type != JV_NULL &&
        (v->type != JV_STR || (strcmp(v->str, s->o.alias) && v->str[0]))) {
        respond_error(s, c, 400, "invalid_request_error", "model", "model_not_found",
                      "the model '%s' does not exist; this server has '%s'",
                      v->type == JV_STR ? v->str : "(not a string)", s->o.alias);
        goto out;
    }
    if ((v = json_get(&o, "n")) && v->type != JV_NULL && (v->type != JV_NUM || v->num != 1)) {
        bad_request(s, c, "n", "%s", "only 'n': 1 is supported");
        goto out;
    }
    if (chat_api) {
        v = json_get(&o, "messages");
        if (!v || v->type != JV_OTHER) {
            bad_request(s, c, "messages", "%s", "'messages' (an array of messages) is required");
            goto out;
        }
        char msg[200];
        if (!chat_parse(v->raw, v->raw_len, &ch, msg, sizeof msg)) {
            bad_request(s, c, "messages", "%s", msg);
            goto out;
        }
        if (!render_chat(s, c, &ch, &prompt))
            goto out;
    } else {
        v = json_get(&o, "prompt");
        if (v && v->type == JV_STR)
            sb_put(&prompt, v->str, v->str_len);
        else if (v && v->type == JV_STR_ARRAY && v->n_arr == 1)
            sb_puts(&prompt, v->arr[0]);
        else {
            bad_request(s, c, "prompt", "%s",
                        "'prompt' (a string, or an array of one string) is required");
            goto out;
        }
    }
    double max_tokens = 256, temp = 0.8, top_k = 40, top_p = 0.95, min_p = 0.05, rp = 1.0;
    double rln = 64;
    const json_value *mt = json_get(&o, "max_tokens");
    if (!mt || mt->type == JV_NULL)
        mt = json_get(&o, "max_completion_tokens");
    if ((mt && !num_field(s, c, &o, mt->key, 0, s->o.max_tokens, true, &max_tokens)) ||
        !num_field(s, c, &o, "temperature", 0, 1000, false, &temp) ||
        !num_field(s, c, &o, "top_k", 0, 1 << 30, true, &top_k) ||
        !num_field(s, c, &o, "top_p", 1e-9, 1, false, &top_p) ||
        !num_field(s, c, &o, "min_p", 0, 1, false, &min_p) ||
        !num_field(s, c, &o, "repeat_penalty", 1e-6, 1000, false, &rp) ||
        !num_field(s, c, &o, "repeat_last_n", 0, 1 << 20, true, &rln))
        goto out;
    uint64_t seed = 0;
    bool have_seed = false;
    if ((v = json_get(&o, "seed")) && v->type != JV_NULL) {
        char tmp[32], *end;
        const size_t n = v->raw_len < sizeof tmp - 1 ? v->raw_len : sizeof tmp - 1;
        memcpy(tmp, v->raw, n);
        tmp[n] = '\0';
        if (v->type != JV_NUM || tmp[0] == '-' || (seed = strtoull(tmp, &end, 10), *end)) {
            bad_request(s, c, "seed", "%s", "'seed' must be an integer in [0, 2^64)");
            goto out;
        }
        have_seed = true;
    }
    bool stream = false;
    if ((v = json_get(&o, "stream")) && v->type != JV_NULL) {
        if (v->type != JV_BOOL) {
            bad_request(s, c, "stream", "%s", "'stream' must be a boolean");
            goto out;
        }
        stream = v->b;
    }
    const json_value *stop = json_get(&o, "stop");
    if (stop && stop->type != JV_NULL && stop->type != JV_STR &&
        !(stop->type == JV_STR_ARRAY && stop->n_arr <= 16)) {
        bad_request(s, c, "stop", "%s",
                    "'stop' must be a string or an array of at most 16 strings");
        goto out;
    }
    if (prompt.oom) {
        respond_error(s, c, 500, "server_error", NULL, NULL, "out of memory");
        goto out;
    }
    /* tokenize here, as `genloop run` does, to check the length first */
    gl_model_info mi;
    gl_model_get_info(s->m, &mi);
    gl_error err;
    const char *ptext = prompt.p ? prompt.p : "";
    /* chat text holds the template's control tokens ("<|im_start|>"...) */
    const unsigned flags =
        (mi.add_bos ? GL_TOKENIZE_BOS : 0u) | (chat_api ? GL_TOKENIZE_SPECIAL : 0u);
    int n = gl_tokenize_ex(s->m, ptext, prompt.len, flags, NULL, 0, &err);
    if (n < 0 || n == 0) {
        bad_request(s, c, chat_api ? "messages" : "prompt", "%s",
                    n < 0 ? err.msg : "the prompt has no tokens");
        goto out;
    }
    if (n > s->n_ctx) {
        respond_error(s, c, 400, "invalid_request_error", chat_api ? "messages" : "prompt",
                      "context_length_exceeded",
                      "the prompt has %d tokens but the context holds %d", n, s->n_ctx);
        goto out;
    }
    ids = malloc(sizeof *ids * (size_t)n);
    if (!ids || gl_tokenize_ex(s->m, ptext, prompt.len, flags, ids, n, &err) != n) {
        respond_error(s, c, 500, "server_error", NULL, NULL, "tokenizing the prompt failed");
        goto out;
    }
    if (engine_full(s)) {
        respond_error(s, c, 503, "server_error", NULL, "server_busy",
                      "the server is at its queue limit (--max-queue %d); retry later",
                      s->o.max_queue);
        goto out;
    }
    gl_request rq = gl_request_default();
    rq.prompt_tokens = ids;
    rq.n_prompt_tokens = n;
    rq.n_predict = (int)max_tokens;
    rq.sampling.temp = (float)temp;
    rq.sampling.top_k = (int)top_k;
    rq.sampling.top_p = (float)top_p;
    rq.sampling.min_p = (float)min_p;
    rq.sampling.repeat_penalty = (float)rp;
    rq.sampling.repeat_last_n = (int)rln;
    c->seed = have_seed ? seed : (uint64_t)time(NULL) + s->met.completions * 7919 + s->n_ids;
    rq.sampling.seed = c->seed;
    if (stop && stop->type == JV_STR) {
        rq.stops = (const char *const *)&stop->str;
        rq.n_stops = 1;
    } else if (stop && stop->type == JV_STR_ARRAY) {
        rq.stops = (const char *const *)stop->arr;
        rq.n_stops = stop->n_arr;
    }
    rq.on_token = on_token;
    rq.user = c;
    if (gl_engine_submit(s->e, &rq, &c->eid, &err)) {
        respond_error(s, c, err.code == GL_ERR_ARG ? 400 : 500,
                      err.code == GL_ERR_ARG ? "invalid_request_error" : "server_error", NULL, NULL,
                      "%s", err.msg);
        goto out;
    }
    c->busy = true;
    c->stream = stream;
    c->chat = chat_api;
    c->sent_role = false;
    c->created = (long long)time(NULL);
    c->n_prompt = n;
    c->t_submit = serve_now_ms();
    c->t_first = 0;
    c->pending.len = 0;
    snprintf(c->cid, sizeof c->cid, "%s-%016" PRIx64 "%08" PRIx64, chat_api ? "chatcmpl" : "cmpl",
             (uint64_t)c->created, ++s->n_ids);
    if (stream) {
        metrics_count_status(&s->met, 200);
        if (!c->chunked)
            c->keep_alive = false; /* the body ends with the connection */
        http_sse_head(&c->out, c->chunked, c->keep_alive);
    }
out:
    free(ids);
    chat_free(&ch);
    sb_free(&prompt);
    json_object_free(&o);
}

static const char *finish_reason(gl_stop_reason r)
{
    return r == GL_STOP_LENGTH || r == GL_STOP_CONTEXT ? "length" : "stop";
}

/* The fields every completion body and chunk starts with. */
static void head_fields(server *s, conn *c, sbuf *b, bool chunk)
{
    sb_puts(b, "{\"id\":");
    sb_json_str(b, c->cid, strlen(c->cid));
    sb_printf(b, ",\"object\":\"%s\",\"created\":%lld,\"model\":",
              c->chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion",
              c->created);
    sb_json_str(b, s->o.alias, strlen(s->o.alias));
    sb_printf(b, ",\"system_fingerprint\":\"genloop-%s\"", GENLOOP_VERSION);
}

static void usage_fields(sbuf *b, const conn *c, const gl_request_status *st)
{
    sb_printf(b,
              "\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"
              "\"prompt_tokens_details\":{\"cached_tokens\":%d}}",
              c->n_prompt, st->n_generated, c->n_prompt + st->n_generated, st->n_reused);
}

/* One SSE event: data: {chunk}\n\n, as one HTTP chunk. */
static void sse_chunk(server *s, conn *c, const char *text, size_t len, const char *finish,
                      const gl_request_status *st)
{
    sbuf b = { 0 };
    sb_puts(&b, "data: ");
    head_fields(s, c, &b, true);
    sb_puts(&b, ",\"choices\":[{\"index\":0,");
    if (c->chat) {
        sb_puts(&b, "\"delta\":{");
        if (!c->sent_role)
            sb_puts(&b, "\"role\":\"assistant\"");
        if (text) {
            sb_puts(&b, c->sent_role ? "\"content\":" : ",\"content\":");
            sb_json_str(&b, text, len);
        }
        sb_puts(&b, "}");
        c->sent_role = true;
    } else {
        sb_puts(&b, "\"text\":");
        sb_json_str(&b, text ? text : "", text ? len : 0);
        sb_puts(&b, ",\"logprobs\":null");
    }
    sb_puts(&b, ",\"finish_reason\":");
    if (finish)
        sb_printf(&b, "\"%s\"", finish);
    else
        sb_puts(&b, "null");
    sb_puts(&b, "}]");
    if (finish) {
        sb_puts(&b, ",");
        usage_fields(&b, c, st);
    }
    sb_puts(&b, "}\n\n");
    http_chunk(&c->out, c->chunked, b.p, b.len);
    sb_free(&b);
}

void completion_progress(server *s, conn *c)
{
    gl_request_status st;
    if (gl_engine_status(s->e, c->eid, &st, NULL))
        return;
    if (c->stream && c->pending.len > 0) {
        sse_chunk(s, c, c->pending.p, c->pending.len, NULL, &st);
        c->pending.len = 0;
    }
    if (!st.finished)
        return;
    const char *fr = finish_reason(st.stop);
    if (c->stream) {
        sse_chunk(s, c, NULL, 0, fr, &st);
        static const char done[] = "data: [DONE]\n\n";
        http_chunk(&c->out, c->chunked, done, sizeof done - 1);
        if (c->chunked)
            http_chunk(&c->out, true, "", 0);
        if (!c->keep_alive)
            c->close_after = true;
    } else {
        sbuf b = { 0 };
        head_fields(s, c, &b, false);
        sb_puts(&b, ",\"choices\":[{\"index\":0,");
        if (c->chat) {
            sb_puts(&b, "\"message\":{\"role\":\"assistant\",\"content\":");
            sb_json_str(&b, st.text, st.text_len);
            sb_puts(&b, "}");
        } else {
            sb_puts(&b, "\"text\":");
            sb_json_str(&b, st.text, st.text_len);
            sb_puts(&b, ",\"logprobs\":null");
        }
        sb_printf(&b, ",\"finish_reason\":\"%s\"}],", fr);
        usage_fields(&b, c, &st);
        sb_printf(&b, ",\"seed\":%llu}", (unsigned long long)c->seed);
        respond_json(s, c, 200, &b);
        sb_free(&b);
    }
    /* latency: first token since arrival; per token after it */
    const double t_done = serve_now_ms();
    if (c->t_first > 0) {
        metrics_observe(&s->met.ttft, (c->t_first - c->t_submit) / 1e3);
        if (st.n_generated > 1)
            metrics_observe(&s->met.per_token, (t_done - c->t_first) / 1e3 / (st.n_generated - 1));
    }
    s->met.completions++;
    s->met.generated += (uint64_t)st.n_generated;
    gl_engine_release(s->e, c->eid);
    c->busy = false;
    c->t_active = t_done;
}

void completion_abort(server *s, conn *c)
{
    if (!c->busy)
        return;
    gl_engine_cancel(s->e, c->eid, NULL);
    gl_engine_release(s->e, c->eid);
    c->busy = false;
    s->met.cancelled++;
}

/* ---- routing ----------------------------------------------------------------- */

static bool authorized(const server *s, const http_req *r)
{
    if (!s->o.api_key)
        return true;
    if (strncmp(r->auth, "Bearer ", 7))
        return false;
    /* constant-time over the key's length */
    const char *got = r->auth + 7;
    const size_t kl = strlen(s->o.api_key), gl = strlen(got);
    unsigned diff = kl != gl;
    for (size_t i = 0; i < kl; i++)
        diff |= (unsigned char)s->o.api_key[i] ^ (unsigned char)(i < gl ? got[i] : 0);
    return diff == 0;
}

void route(server *s, conn *c, const http_req *r)
{
    static const struct {
        const char *path, *method;
    } paths[] = { { "/health", "GET" },
                  { "/v1/models", "GET" },
                  { "/metrics", "GET" },
                  { "/v1/completions", "POST" },
                  { "/v1/chat/completions", "POST" },
                  { "/tokenize", "POST" },
                  { "/detokenize", "POST" },
                  { "/models", "GET" },
                  { "/completions", "POST" },
                  { "/chat/completions", "POST" } };
    int k = -1;
    for (int i = 0; i < (int)(sizeof paths / sizeof paths[0]) && k < 0; i++)
        if (!strcmp(r->path, paths[i].path))
            k = i;
    if (k < 0) {
        respond_error(s, c, 404, "invalid_request_error", NULL, "not_found", "no endpoint at '%s'",
                      r->path);
        return;
    }
    if (strcmp(r->method, paths[k].method)) {
        char allow[64];
        snprintf(allow, sizeof allow, "Allow: %s\r\n", paths[k].method);
        sbuf b = { 0 };
        char msg[128];
        snprintf(msg, sizeof msg, "'%s' takes %s, not %s", paths[k].path, paths[k].method,
                 r->method);
        error_body(&b, "invalid_request_error", NULL, "method_not_allowed", msg);
        respond(s, c, 405, "application/json", &b, allow);
        sb_free(&b);
        return;
    }
    if (k == 0) {
        get_health(s, c);
        return;
    }
    if (!authorized(s, r)) {
        respond_error(s, c, 401, "invalid_request_error", NULL, "invalid_api_key",
                      "a valid API key is required: 'Authorization: Bearer KEY'");
        return;
    }
    if (k == 2) {
        get_metrics(s, c);
        return;
    }
    if (atomic_load(&s->state) != 1) {
        respond_error(s, c, 503, "server_error", NULL, "loading", "%s",
                      atomic_load(&s->state) == 0 ? "the model is still loading"
                                                  : "the model failed to load");
        return;
    }
    if (s->draining) {
        respond_error(s, c, 503, "server_error", NULL, "shutting_down",
                      "the server is shutting down");
        return;
    }
    switch (k) {
    case 1:
    case 7: get_models(s, c); break;
    case 3:
    case 8: post_completion(s, c, r, false); break;
    case 4:
    case 9: post_completion(s, c, r, true); break;
    case 5: post_tokenize(s, c, r); break;
    case 6: post_detokenize(s, c, r); break;
    }
}
