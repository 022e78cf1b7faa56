/* genloop serve: an OpenAI-compatible HTTP server over one continuous-
 * batching engine. One thread runs a poll loop over every socket and steps
 * the engine between polls, so all running requests decode together in one
 * forward pass per step; a second thread only loads the model at start
 * (/health answers 503 until it is done).
 *
 *   server.c   options, sockets, the event loop, timeouts, shutdown
 *   routes.c   endpoints: request bodies in, JSON responses out
 *   http.c     HTTP/1.1 request parsing and response framing
 *   chat.c     the "messages" array (rendered by gl_chat_render)
 *   metrics.c  counters and histograms, Prometheus text
 *   sbuf.c     growable buffers and JSON string escaping */
#ifndef GENLOOP_SERVE_SERVE_H
#define GENLOOP_SERVE_SERVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "genloop.h"
#include "http.h"
#include "metrics.h"
#include "sbuf.h"

typedef struct serve_opts {
    const char *model, *host, *api_key, *alias, *backend;
    int port, max_batch, max_batch_tokens, n_ctx, threads, max_queue, max_conns, max_tokens;
    double timeout_s;
    size_t max_body, max_header;
} serve_opts;

/* One client connection. Slots are allocated once, so the engine's token
 * callback can hold a pointer to one. */
typedef struct conn {
    int fd; /* -1: slot free */
    sbuf in, out;
    double t_active; /* last read or write progress, ms */
    double t_req;    /* when the first byte of the request being read came */
    bool keep_alive, close_after;
    bool chunked;       /* the client speaks HTTP/1.1 (HTTP/1.0: no chunks) */
    bool sent_continue; /* 100 Continue sent for the request being read */
    bool lingering;     /* response sent, write side shut: draining what the
                         * client still sends so the close does not reset the
                         * connection before it has read the response */
    double t_linger;
    /* the completion in flight, if any */
    bool busy;
    int64_t eid;
    bool stream, chat, sent_role;
    char cid[48];
    long long created;
    uint64_t seed;
    int n_prompt, n_reused;
    double t_submit, t_first;
    sbuf pending; /* streamed text not yet framed into a chunk */
} conn;

typedef struct server {
    serve_opts o;
    int lfd;
    conn *conns;
    gl_model *m;
    gl_engine *e;
    _Atomic int state; /* 0 loading, 1 ready, -1 failed */
    char load_error[512];
    char *chat_template;   /* tokenizer.chat_template, or NULL (ChatML) */
    char bos[64], eos[64]; /* their texts, for templates that write them */
    int n_ctx;
    metrics met;
    uint64_t n_ids;
    bool draining;
} server;

double serve_now_ms(void);
/* Answers one parsed request on c (writes the response into c->out, or
 * submits a completion and marks c busy). */
void route(server *s, conn *c, const http_req *r);
/* After an engine step: frames streamed text and finishes completed requests. */
void completion_progress(server *s, conn *c);
/* A client went away mid-request: cancel and free its engine request. */
void completion_abort(server *s, conn *c);
/* Writes a JSON error response in the OpenAI shape and counts it. */
void respond_error(server *s, conn *c, int status, const char *type, const char *param,
                   const char *code, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

#endif
