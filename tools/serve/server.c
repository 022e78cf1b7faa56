/* genloop serve: options, the listening socket, the event loop. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../cli.h"
#include "serve.h"

#ifndef GENLOOP_SOURCE_ROOT
#define GENLOOP_SOURCE_ROOT "."
#endif
#define DEFAULT_MODEL "models/stories260K.gguf"
/* Response bytes a client may leave unread (a stream it does not consume)
 * before it is dropped and its request cancelled. */
#define MAX_UNSENT (16u << 20)

static volatile sig_atomic_t g_stop; /* set by SIGTERM / SIGINT */

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

double serve_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char usage[] =
    "usage: genloop serve [-m MODEL] [--host 127.0.0.1] [--port 8080] [--max-batch B] [-c CTX]\n"
    "                     [-t N] [--api-key KEY] [--max-queue N] [--timeout S] [--alias NAME]\n"
    "                     [--max-body BYTES] [--max-conns N] [--max-tokens N] [--backend NAME]\n"
    "                     [--max-batch-tokens N]\n"
    "An OpenAI-compatible HTTP server: POST /v1/completions, /v1/chat/completions,\n"
    "/tokenize, /detokenize; GET /v1/models, /health, /metrics. Without -m it serves\n"
    "models/stories260K.gguf from the genloop source tree. --port 0 picks a free port.\n";

/* models/stories260K.gguf next to the executable (build/genloop -> ../models),
 * in an installed share folder, or in the source tree this was built from. */
static const char *find_default_model(char *buf, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        const char *rel[] = { "/../" DEFAULT_MODEL, "/" DEFAULT_MODEL,
                              "/../share/genloop/stories260K.gguf" };
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            snprintf(buf, cap, "%s%s", exe, rel[i]);
            if (access(buf, R_OK) == 0)
                return buf;
        }
    }
    snprintf(buf, cap, "%s/%s", GENLOOP_SOURCE_ROOT, DEFAULT_MODEL);
    if (access(buf, R_OK) == 0)
        return buf;
    if (access(DEFAULT_MODEL, R_OK) == 0)
        return DEFAULT_MODEL;
    return NULL;
}

static int parse_opts(int argc, char **argv, serve_opts *o)
{
    *o = (serve_opts){ .host = "127.0.0.1",
                       .port = 8080,
                       .max_batch = 8,
                       .max_queue = 64,
                       .max_conns = 256,
                       .timeout_s = 60,
                       .max_body = 1 << 20,
                       .max_header = 16 << 10 };
    long long max_tokens = 0;
    for (int i = 0; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return -1;
        }
        if (!v) {
            cli_error("serve: option '%s' needs a value (see 'genloop serve --help')", a);
            return EXIT_USAGE;
        }
        long long iv = 0;
        bool ok = true;
        if (!strcmp(a, "-m"))
            o->model = v;
        else if (!strcmp(a, "--host"))
            o->host = v;
        else if (!strcmp(a, "--api-key"))
            o->api_key = v;
        else if (!strcmp(a, "--alias"))
            o->alias = v;
        else if (!strcmp(a, "--backend"))
            o->backend = v;
        else if (!strcmp(a, "--port"))
            ok = cli_int(a, v, 0, 65535, &iv), o->port = (int)iv;
        else if (!strcmp(a, "--max-batch"))
            ok = cli_int(a, v, 1, 4096, &iv), o->max_batch = (int)iv;
        else if (!strcmp(a, "--max-batch-tokens"))
            ok = cli_int(a, v, 1, 4095, &iv), o->max_batch_tokens = (int)iv;
        else if (!strcmp(a, "-c"))
            ok = cli_int(a, v, 1, 1 << 24, &iv), o->n_ctx = (int)iv;
        else if (!strcmp(a, "-t"))
            ok = cli_int(a, v, 1, 1024, &iv), o->threads = (int)iv;
        else if (!strcmp(a, "--max-queue"))
            ok = cli_int(a, v, 0, 1 << 20, &iv), o->max_queue = (int)iv;
        else if (!strcmp(a, "--max-conns"))
            ok = cli_int(a, v, 1, 65536, &iv), o->max_conns = (int)iv;
        else if (!strcmp(a, "--max-body"))
            ok = cli_int(a, v, 1024, 1LL << 30, &iv), o->max_body = (size_t)iv;
        else if (!strcmp(a, "--max-tokens"))
            ok = cli_int(a, v, 1, 1 << 24, &max_tokens);
        else if (!strcmp(a, "--timeout"))
            ok = cli_float(a, v, 0.01, 86400, &o->timeout_s);
        else {
            cli_error("serve: unknown option '%s' (see 'genloop serve --help')", a);
            return EXIT_USAGE;
        }
        if (!ok)
            return EXIT_USAGE;
    }
    o->max_tokens = (int)max_tokens; /* 0: the context size, known once loaded */
    return 0;
}

/* ---- model loading, on its own thread so /health can answer meanwhile ---- */

static void *load_thread(void *arg)
{
    server *s = arg;
    gl_error err;
    gl_model_params mp = gl_model_default_params();
    mp.backend = s->o.backend;
    if (gl_model_load(&s->m, s->o.model, &mp, &err)) {
        snprintf(s->load_error, sizeof s->load_error, "%s", err.msg);
        atomic_store(&s->state, -1);
        return NULL;
    }
    cli_model_warnings(s->m);
    gl_model_info mi;
    gl_model_get_info(s->m, &mi);
    /* -c, else the model's context capped at 4096: every slot holds a whole
     * context of KV cache, and a 128k-context model times 8 slots would not
     * fit most machines */
    s->n_ctx = s->o.n_ctx                                    ? s->o.n_ctx
               : mi.n_ctx_train > 0 && mi.n_ctx_train < 4096 ? mi.n_ctx_train
                                                             : 4096;
    gl_engine_params ep = gl_engine_default_params();
    ep.max_seqs = s->o.max_batch;
    if (s->o.max_batch_tokens) /* prompt tokens per step: smaller = shorter stalls of running
                                  streams */
        ep.max_batch_tokens = s->o.max_batch_tokens;
    ep.n_ctx = s->n_ctx;
    ep.n_threads = s->o.threads;
    ep.prefix_reuse = true; /* chat turns resend the conversation so far */
    if (gl_engine_create(&s->e, s->m, &ep, &err)) {
        snprintf(s->load_error, sizeof s->load_error, "%s", err.msg);
        atomic_store(&s->state, -1);
        return NULL;
    }
    if (mi.n_pos_learned > 0 && mi.n_pos_learned < s->n_ctx)
        s->n_ctx = mi.n_pos_learned;
    if (s->o.max_tokens == 0)
        s->o.max_tokens = s->n_ctx;
    const int tl = gl_model_meta_str(s->m, "tokenizer.chat_template", NULL, 0);
    if (tl >= 0 && (s->chat_template = malloc((size_t)tl + 1)))
        gl_model_meta_str(s->m, "tokenizer.chat_template", s->chat_template, (size_t)tl + 1);
    if (mi.bos_id < 0 || gl_model_token_text(s->m, mi.bos_id, s->bos, sizeof s->bos) < 0)
        s->bos[0] = '\0';
    if (mi.eos_id < 0 || gl_model_token_text(s->m, mi.eos_id, s->eos, sizeof s->eos) < 0)
        s->eos[0] = '\0';
    atomic_store(&s->state, 1);
    return NULL;
}

/* ---- sockets ------------------------------------------------------------------ */

static int listen_on(const char *host, int port, int *bound_port)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV },
                    *res;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc) {
        cli_error("serve: cannot resolve host '%s': %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        cli_error("serve: cannot listen on %s:%d: %s", host, port, strerror(errno));
        return -1;
    }
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    *bound_port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                                 : ((struct sockaddr_in *)&sa)->sin_port);
    return fd;
}

static void conn_close(server *s, conn *c)
{
    completion_abort(s, c);
    close(c->fd);
    c->fd = -1;
    sb_free(&c->in);
    sb_free(&c->out);
    sb_free(&c->pending);
}

static void accept_all(server *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        conn *c = NULL;
        for (int i = 0; i < s->o.max_conns && !c; i++)
            if (s->conns[i].fd < 0)
                c = &s->conns[i];
        if (!c) {
            static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
                                       "Content-Length: 0\r\nConnection: close\r\n\r\n";
            ssize_t w = write(fd, busy, sizeof busy - 1);
            (void)w;
            close(fd);
            metrics_count_status(&s->met, 503);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        *c = (conn){ .fd = fd, .t_active = serve_now_ms(), .keep_alive = true };
    }
}

/* Reads what the socket has; false when the peer closed or failed. */
static bool conn_read(server *s, conn *c)
{
    const size_t limit = s->o.max_header + s->o.max_body + 4096;
    char buf[16384];
    for (;;) {
        if (c->in.len >= limit)
            return true; /* the parser will refuse it */
        size_t want = limit - c->in.len < sizeof buf ? limit - c->in.len : sizeof buf;
        ssize_t n = read(c->fd, buf, want);
        if (n > 0) {
            if (c->lingering)
                continue; /* discarded */
            if (c->in.len == 0)
                c->t_req = serve_now_ms();
            sb_put(&c->in, buf, (size_t)n);
            c->t_active = serve_now_ms();
            if (c->in.oom)
                return false;
            continue;
        }
        if (n == 0)
            return false;
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
}

static bool conn_write(conn *c)
{
    while (c->out.len > 0) {
        ssize_t n = send(c->fd, c->out.p, c->out.len, MSG_NOSIGNAL);
        if (n > 0) {
            sb_consume(&c->out, (size_t)n);
            c->t_active = serve_now_ms();
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return true;
        return false;
    }
    if (c->out.oom)
        return false;
    return true;
}

/* Parses and answers the requests waiting in c->in (one at a time: a
 * completion holds the connection until it is done). */
static void conn_serve(server *s, conn *c)
{
    while (!c->busy && !c->close_after && c->in.len > 0) {
        http_req r;
        long n = http_parse(c->in.p, c->in.len, s->o.max_header, s->o.max_body, &r);
        if (n == HTTP_INCOMPLETE) {
            if (r.header_len > 0 && r.expect_continue && !c->sent_continue) {
                sb_puts(&c->out, "HTTP/1.1 100 Continue\r\n\r\n");
                c->sent_continue = true;
            }
            return;
        }
        if (n < 0) {
            c->keep_alive = false;
            respond_error(s, c, (int)-n, "invalid_request_error", NULL, NULL, "%s",
                          n == HTTP_HEADER_LARGE ? "the request headers are too large"
                          : n == HTTP_BODY_LARGE ? "the request body is too large (--max-body)"
                          : n == HTTP_NOT_IMPL   ? "chunked request bodies are not supported"
                          : n == HTTP_VERSION    ? "only HTTP/1.x is supported"
                                                 : "malformed HTTP request");
            c->in.len = 0;
            return;
        }
        c->keep_alive = r.keep_alive;
        c->chunked = r.minor >= 1;
        c->sent_continue = false;
        route(s, c, &r);
        sb_consume(&c->in, (size_t)n);
        c->t_req = serve_now_ms(); /* a pipelined request starts now */
    }
}

/* ---- the loop -------------------------------------------------------------------- */

static int run_loop(server *s)
{
    const double timeout_ms = s->o.timeout_s * 1e3;
    struct pollfd *pfd = malloc(sizeof *pfd * (size_t)(s->o.max_conns + 1));
    conn **pc = malloc(sizeof *pc * (size_t)(s->o.max_conns + 1));
    if (!pfd || !pc) {
        free(pfd);
        free(pc);
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    double t_drain = 0;
    int rc = 0;
    bool announced = false;
    for (;;) {
        const int state = atomic_load(&s->state);
        if (state != 0 && !announced) {
            announced = true;
            if (state < 0) {
                cli_error("%s", s->load_error);
                rc = EXIT_RUNTIME;
                break;
            }
            fprintf(stderr, "genloop serve: model ready (%s, context %d, %d slots)\n", s->o.alias,
                    s->n_ctx, s->o.max_batch);
        }
        if (g_stop && !s->draining) {
            s->draining = true;
            t_drain = serve_now_ms();
            close(s->lfd);
            s->lfd = -1;
            fprintf(stderr, "genloop serve: shutting down, finishing running requests\n");
        }
        const double now = serve_now_ms();
        bool any_busy = false;
        for (int i = 0; i < s->o.max_conns; i++)
            any_busy |= s->conns[i].fd >= 0 && s->conns[i].busy;
        if (s->draining) {
            bool pending_out = false;
            for (int i = 0; i < s->o.max_conns; i++)
                pending_out |= s->conns[i].fd >= 0 && s->conns[i].out.len > 0;
            if ((!any_busy && !pending_out) || now - t_drain > timeout_ms)
                break;
        }
        int n = 0;
        if (s->lfd >= 0) {
            pfd[n] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
            pc[n++] = NULL;
        }
        for (int i = 0; i < s->o.max_conns; i++) {
            conn *c = &s->conns[i];
            if (c->fd < 0)
                continue;
            pfd[n] = (struct pollfd){ .fd = c->fd,
                                      .events = (short)(POLLIN | (c->out.len ? POLLOUT : 0)) };
            pc[n++] = c;
        }
        const bool stepping = state == 1 && gl_engine_busy(s->e);
        int pr = poll(pfd, (nfds_t)n, stepping ? 0 : 50);
        if (pr < 0 && errno != EINTR) {
            cli_error("serve: poll: %s", strerror(errno));
            rc = EXIT_RUNTIME;
            break;
        }
        for (int k = 0; pr > 0 && k < n; k++) {
            if (!pfd[k].revents)
                continue;
            conn *c = pc[k];
            if (!c) {
                accept_all(s);
                continue;
            }
            bool ok = true;
            if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
                ok = conn_read(s, c);
            if (ok && (pfd[k].revents & POLLOUT))
                ok = conn_write(c);
            if (!ok)
                conn_close(s, c);
        }
        for (int i = 0; i < s->o.max_conns; i++) {
            conn *c = &s->conns[i];
            if (c->fd < 0)
                continue;
            conn_serve(s, c);
            if (!conn_write(c)) {
                conn_close(s, c);
                continue;
            }
            const double t = serve_now_ms(), idle = t - c->t_active;
            /* a request must arrive whole within --timeout, however slowly
             * its bytes trickle in */
            const bool late = c->in.len > 0 && t - c->t_req > timeout_ms;
            if (c->lingering) {
                if (t - c->t_linger > 1000 || s->draining)
                    conn_close(s, c);
            } else if (c->close_after && c->out.len == 0) {
                shutdown(c->fd, SHUT_WR);
                c->lingering = true;
                c->t_linger = t;
                c->in.len = 0;
            } else if (!c->busy && c->out.len == 0 && (s->draining || idle > timeout_ms || late)) {
                if (c->in.len > 0 && !s->draining) {
                    c->keep_alive = false;
                    respond_error(s, c, 408, "invalid_request_error", NULL, "timeout",
                                  "the request did not arrive within --timeout");
                    c->in.len = 0;
                    conn_write(c);
                }
                conn_close(s, c);
            } else if ((c->out.len > 0 && idle > timeout_ms) || c->out.len > MAX_UNSENT) {
                conn_close(s, c); /* a client that stopped reading */
            }
        }
        if (state == 1 && gl_engine_busy(s->e)) {
            gl_error err;
            if (gl_engine_step(s->e, &err)) {
                cli_error("serve: %s", err.msg);
                rc = EXIT_RUNTIME;
                break;
            }
            for (int i = 0; i < s->o.max_conns; i++) {
                conn *c = &s->conns[i];
                if (c->fd >= 0 && c->busy) {
                    completion_progress(s, c);
                    if (!conn_write(c))
                        conn_close(s, c);
                }
            }
        }
    }
    if (s->draining && rc == 0)
        fprintf(stderr, "genloop serve: stopped\n");
    free(pfd);
    free(pc);
    return rc;
}

int cmd_serve(int argc, char **argv)
{
    static server srv;
    server *s = &srv;
    memset(s, 0, sizeof *s);
    int rc = parse_opts(argc, argv, &s->o);
    if (rc)
        return rc < 0 ? 0 : rc;
    char path[PATH_MAX];
    if (!s->o.model && !(s->o.model = find_default_model(path, sizeof path))) {
        cli_error("serve: no -m MODEL given and %s was not found next to the executable or in "
                  "the source tree",
                  DEFAULT_MODEL);
        return EXIT_USAGE;
    }
    if (access(s->o.model, R_OK) != 0) {
        cli_error("cannot open '%s': %s", s->o.model, strerror(errno));
        return EXIT_RUNTIME;
    }
    if (!s->o.alias) {
        const char *base = strrchr(s->o.model, '/');
        s->o.alias = base ? base + 1 : s->o.model;
    }
    gl_error err;
    if (s->o.backend && gl_backend_check(s->o.backend, &err)) {
        cli_error("%s", err.msg);
        return err.code == GL_ERR_ARG ? EXIT_USAGE : EXIT_RUNTIME;
    }
    int port = 0;
    s->lfd = listen_on(s->o.host, s->o.port, &port);
    if (s->lfd < 0)
        return EXIT_RUNTIME;
    s->conns = calloc((size_t)s->o.max_conns, sizeof *s->conns);
    if (!s->conns) {
        close(s->lfd);
        cli_error("out of memory");
        return EXIT_RUNTIME;
    }
    for (int i = 0; i < s->o.max_conns; i++)
        s->conns[i].fd = -1;
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "genloop serve: listening on http://%s:%d (model %s)\n", s->o.host, port,
            s->o.model);
    pthread_t th;
    if (pthread_create(&th, NULL, load_thread, s)) {
        cli_error("serve: cannot start the loader thread");
        close(s->lfd);
        free(s->conns);
        return EXIT_RUNTIME;
    }
    rc = run_loop(s);
    pthread_join(th, NULL);
    for (int i = 0; i < s->o.max_conns; i++)
        if (s->conns[i].fd >= 0)
            conn_close(s, &s->conns[i]);
    if (s->lfd >= 0)
        close(s->lfd);
    free(s->conns);
    free(s->chat_template);
    gl_engine_free(s->e);
    gl_model_free(s->m);
    return rc;
}
