/* genloop serve: each test starts the server on an ephemeral loopback port
 * with stories260K and talks HTTP/1.1 to it over plain sockets. Completions
 * must be byte-identical to `genloop run --json` with the same seed, alone or
 * under concurrent load; a disconnect cancels; limits and errors answer with
 * the right status and the OpenAI error object; SIGTERM drains. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tools/json_in.h"
#include "cli_run.h"
#include "shared_data.h"

typedef struct server {
    pid_t pid;
    int port;
    int err_fd; /* the server's stderr */
} server;

static char g_model[1024];

static bool find_model(void)
{
    if (td_path(g_model, sizeof g_model, "models/stories260K.gguf") && access(g_model, R_OK) == 0)
        return true;
    snprintf(g_model, sizeof g_model, "models/stories260K.gguf"); /* shipped with the repo */
    return access(g_model, R_OK) == 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- a tiny HTTP client --------------------------------------------------- */

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct timeval tv = { .tv_sec = 20 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

typedef struct response {
    int status;
    char head[4096];
    char *body; /* de-chunked, NUL-terminated */
    size_t body_len;
} response;

static void response_free(response *r)
{
    free(r->body);
    r->body = NULL;
}

/* Reads one response from fd: headers, then a Content-Length or chunked
 * body. Returns false on a timeout or a closed connection before the end. */
static bool read_response(int fd, response *r)
{
    static char buf[1 << 22];
    size_t n = 0;
    memset(r, 0, sizeof *r);
    char *end = NULL;
    for (;;) {
        buf[n] = '\0';
        if (!end && (end = strstr(buf, "\r\n\r\n"))) {
            size_t hl = (size_t)(end - buf) + 4;
            memcpy(r->head, buf, hl < sizeof r->head ? hl : sizeof r->head - 1);
            sscanf(buf, "HTTP/1.1 %d", &r->status);
        }
        if (end) {
            const char *body = end + 4;
            const size_t have = n - (size_t)(body - buf);
            const char *cl = strcasestr(r->head, "Content-Length:");
            if (cl) {
                size_t want = strtoul(cl + 15, NULL, 10);
                if (have >= want) {
                    r->body = malloc(want + 1);
                    memcpy(r->body, body, want);
                    r->body[want] = '\0';
                    r->body_len = want;
                    return true;
                }
            } else if (strcasestr(r->head, "chunked") && strstr(body, "\r\n0\r\n\r\n")) {
                r->body = malloc(have + 1);
                const char *p = body;
                for (;;) {
                    size_t len = strtoul(p, NULL, 16);
                    p = strstr(p, "\r\n") + 2;
                    if (len == 0)
                        break;
                    memcpy(r->body + r->body_len, p, len);
                    r->body_len += len;
                    p += len + 2;
                }
                r->body[r->body_len] = '\0';
                return true;
            }
        }
        if (n + 1 >= sizeof buf)
            return false;
        ssize_t k = recv(fd, buf + n, sizeof buf - 1 - n, 0);
        if (k <= 0)
            return false;
        n += (size_t)k;
    }
}

/* One request on a fresh connection. */
static response http(int port, const char *method, const char *path, const char *body,
                     const char *extra_headers)
{
    response r = { 0 };
    int fd = connect_to(port);
    cr_assert_geq(fd, 0, "cannot connect to the server");
    char head[2048];
    int hl = snprintf(head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Length: %zu\r\n\r\n", method,
                      path, extra_headers ? extra_headers : "", body ? strlen(body) : 0);
    send_all(fd, head, (size_t)hl);
    if (body)
        send_all(fd, body, strlen(body));
    cr_assert(read_response(fd, &r), "no complete response to %s %s", method, path);
    close(fd);
    return r;
}

/* ---- server lifecycle -------------------------------------------------------- */

static server start_server(const char *const *extra)
{
    server s = { .pid = -1 };
    if (!find_model())
        cr_skip_test("SKIPPED: stories260K.gguf is in neither ../shared/models (set "
                     "GENLOOP_SHARED) nor models/: the serve tests need it");
    int errp[2];
    cr_assert_eq(pipe(errp), 0);
    const char *args[40] = { cli_bin(), "serve", "-m", g_model, "--port", "0", "-t", "1" };
    int n = 8;
    for (int i = 0; extra && extra[i] && n < 39; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    s.pid = fork();
    cr_assert_geq(s.pid, 0);
    if (s.pid == 0) {
        dup2(errp[1], 2);
        close(errp[0]);
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        dup2(devnull, 1);
        alarm(120); /* never outlive a stuck test */
        execv(cli_bin(), (char *const *)args);
        _exit(127);
    }
    close(errp[1]);
    s.err_fd = errp[0];
    /* "genloop serve: listening on http://127.0.0.1:PORT ..." */
    char line[1024];
    size_t len = 0;
    const double t0 = now_s();
    while (now_s() - t0 < 20 && len < sizeof line - 1) {
        struct pollfd p = { .fd = s.err_fd, .events = POLLIN };
        if (poll(&p, 1, 200) <= 0)
            continue;
        ssize_t k = read(s.err_fd, line + len, 1);
        if (k <= 0)
            break;
        if (line[len++] == '\n')
            break;
    }
    line[len] = '\0';
    const char *at = strstr(line, "127.0.0.1:");
    cr_assert(at, "the server did not say where it listens: '%s'", line);
    s.port = atoi(at + 10);
    /* ready: /health turns 200 */
    for (int i = 0; i < 200; i++) {
        response r = http(s.port, "GET", "/health", NULL, NULL);
        int st = r.status;
        response_free(&r);
        if (st == 200)
            return s;
        cr_assert_eq(st, 503, "/health answered %d while loading", st);
        usleep(20000);
    }
    cr_assert_fail("the server never became ready");
    return s;
}

/* SIGTERM, then the exit status (bounded wait; -1 on a hang). */
static int stop_server(server *s)
{
    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    int st = 0;
    for (int i = 0; i < 500; i++) {
        if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
            s->pid = -1;
            close(s->err_fd);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        usleep(20000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &st, 0);
    s->pid = -1;
    close(s->err_fd);
    return -1;
}

/* ---- JSON helpers ---------------------------------------------------------------- */

/* The first choice object of a completion body, parsed. */
static void first_choice(const char *body, json_object *choice)
{
    json_object o;
    char msg[128];
    cr_assert(json_parse_object(body, strlen(body), &o, msg, sizeof msg), "bad JSON (%s): %s", msg,
              body);
    const json_value *ch = json_get(&o, "choices");
    cr_assert(ch && ch->type == JV_OTHER && ch->raw_len > 2, "no choices in %s", body);
    cr_assert(json_parse_object(ch->raw + 1, ch->raw_len - 2, choice, msg, sizeof msg),
              "bad choice (%s): %.*s", msg, (int)ch->raw_len, ch->raw);
    json_object_free(&o);
}

/* The "text" of `genloop run --json` with these arguments, malloc'd. */
static char *run_text(const char *prompt, const char *n, const char *seed, const char *temp)
{
    static run_out r;
    if (!find_model())
        cr_skip_test("SKIPPED: stories260K.gguf is in neither ../shared/models (set "
                     "GENLOOP_SHARED) nor models/: the serve tests need it");
    RUN(&r, NULL, "run", "-m", g_model, "-p", prompt, "-n", n, "--seed", seed, "--temp", temp, "-t",
        "1", "--json");
    cr_assert_eq(r.status, 0, "genloop run failed: %s", r.err);
    json_object o;
    char msg[128];
    cr_assert(json_parse_object(r.out, strlen(r.out), &o, msg, sizeof msg));
    const json_value *t = json_get(&o, "text");
    cr_assert(t && t->type == JV_STR);
    char *s = strdup(t->str);
    json_object_free(&o);
    return s;
}

static char *completion_body(const char *prompt, const char *n, const char *seed, const char *temp,
                             bool stream)
{
    char *b = malloc(1024);
    snprintf(b, 1024,
             "{\"model\":\"stories260K.gguf\",\"prompt\":\"%s\",\"max_tokens\":%s,\"seed\":%s,"
             "\"temperature\":%s,\"stream\":%s}",
             prompt, n, seed, temp, stream ? "true" : "false");
    return b;
}

/* The concatenated "text" (or delta content) of an SSE body; checks the
 * stream ends with [DONE] and reports the last finish_reason. */
static char *sse_text(const char *body, char *finish, size_t fcap)
{
    size_t cap = strlen(body) + 1, len = 0;
    char *out = calloc(1, cap);
    const char *p = body;
    bool done = false;
    while ((p = strstr(p, "data: "))) {
        p += 6;
        const char *e = strstr(p, "\n\n");
        cr_assert(e, "an SSE event without its blank line");
        if (!strncmp(p, "[DONE]", 6)) {
            done = true;
            break;
        }
        json_object ch;
        char *ev = strndup(p, (size_t)(e - p));
        first_choice(ev, &ch); /* raw values point into ev */
        const json_value *t = json_get(&ch, "text"), *d = json_get(&ch, "delta"),
                         *f = json_get(&ch, "finish_reason");
        json_object delta = { 0 };
        char msg[64];
        if (d && d->type == JV_OTHER) {
            cr_assert(json_parse_object(d->raw, d->raw_len, &delta, msg, sizeof msg));
            t = json_get(&delta, "content");
        }
        if (t && t->type == JV_STR) {
            memcpy(out + len, t->str, t->str_len);
            len += t->str_len;
        }
        if (f && f->type == JV_STR)
            snprintf(finish, fcap, "%s", f->str);
        json_object_free(&delta);
        json_object_free(&ch);
        free(ev);
        p = e;
    }
    cr_assert(done, "the stream did not end with data: [DONE]");
    return out;
}

/* ---- tests --------------------------------------------------------------------------- */

Test(serve, endpoints)
{
    server s = start_server(NULL);
    response r = http(s.port, "GET", "/v1/models", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "\"object\":\"list\"") && strstr(r.body, "\"stories260K.gguf\""), "%s",
              r.body);
    response_free(&r);
    r = http(s.port, "POST", "/tokenize", "{\"content\":\"Once upon a time\"}", NULL);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "{\"tokens\":[1,403,407,261,378]}");
    response_free(&r);
    r = http(s.port, "POST", "/detokenize", "{\"tokens\":[1,403,407,261,378]}", NULL);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "{\"content\":\"Once upon a time\"}");
    response_free(&r);
    char *b = completion_body("Once upon a time", "8", "1", "0", false);
    r = http(s.port, "POST", "/v1/completions", b, NULL);
    free(b);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "\"object\":\"text_completion\"") &&
                  strstr(r.body, "\"finish_reason\":\"length\"") &&
                  strstr(r.body, "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":8,"
                                 "\"total_tokens\":13,"),
              "%s", r.body);
    response_free(&r);
    r = http(s.port, "POST", "/v1/chat/completions",
             "{\"messages\":[{\"role\":\"system\",\"content\":\"Tell a story.\"},{\"role\":"
             "\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":6,\"seed\":3}",
             NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "\"object\":\"chat.completion\"") &&
                  strstr(r.body, "\"message\":{\"role\":\"assistant\",\"content\":"),
              "%s", r.body);
    response_free(&r);
    /* content as text parts reads as their joined text (the previous
     * request was freed: ask again with a string for comparison) */
    const char *as_str = "{\"messages\":[{\"role\":\"system\",\"content\":\"Tell a story.\"},"
                         "{\"role\":\"user\",\"content\":\"Once upon a time\"}],"
                         "\"max_tokens\":6,\"seed\":3}";
    const char *as_parts =
        "{\"messages\":[{\"role\":\"system\",\"content\":\"Tell a story.\"},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Once upon\"},"
        "{\"type\":\"text\",\"text\":\" a time\"}]}],\"max_tokens\":6,\"seed\":3}";
    response r1 = http(s.port, "POST", "/v1/chat/completions", as_str, NULL);
    response r2 = http(s.port, "POST", "/v1/chat/completions", as_parts, NULL);
    cr_assert_eq(r2.status, 200, "%s", r2.body);
    const char *m1 = strstr(r1.body, "\"message\":"), *m2 = strstr(r2.body, "\"message\":");
    cr_assert(m1 && m2 && !strncmp(m1, m2, (size_t)(strstr(m1, "}") - m1)),
              "parts and string differ:\n%s\n%s", r1.body, r2.body);
    response_free(&r1);
    response_free(&r2);
    r = http(s.port, "GET", "/metrics", NULL, NULL);
    cr_assert_eq(r.status, 200);
    const char *names[] = { "genloop_requests_total{status=\"2xx\"}",
                            "genloop_tokens_prefilled_total",
                            "genloop_tokens_decoded_total ",
                            "genloop_tokens_generated_total 26",
                            "genloop_queue_depth 0",
                            "genloop_running_sequences 0",
                            "genloop_time_to_first_token_seconds_bucket{le=\"+Inf\"} 4",
                            "genloop_time_per_output_token_seconds_count 4" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        cr_assert(strstr(r.body, names[i]), "/metrics lacks '%s':\n%s", names[i], r.body);
    response_free(&r);
    cr_assert_eq(stop_server(&s), 0);
}

/* Sixteen requests at once, on separate connections, more than the batch
 * holds (the rest queue), each byte-identical to `genloop run` alone with the
 * same seed; then the same again streamed. Twice: with the default prompt
 * budget per step, and with --max-batch-tokens 3, where every prompt is read
 * in pieces between other sequences' decode steps. */
Test(serve, concurrent_match_run)
{
    enum { N = 16 };
    const char *base[] = { "Once upon a time",
                           "Lily and Ben went to the park",
                           "The little dog was",
                           "One day, a bird",
                           "Sara",
                           "The sun was shining and" };
    const char *seed_list[] = { "1", "22", "333", "4444", "55555", "18446744073709551615", "7" };
    const char *temp_list[] = { "0", "0.8", "1.2", "0.8", "0", "0.7", "1.0", "0.5", "0.9" };
    const char *n_list[] = { "24", "40", "17", "33", "9", "28", "12", "45", "3", "20", "31" };
    const char *prompts[N], *seeds[N], *temps[N], *ns[N];
    for (int i = 0; i < N; i++) {
        prompts[i] = base[i % 6];
        seeds[i] = seed_list[i % 7];
        temps[i] = temp_list[i % 9];
        ns[i] = n_list[i % 11];
    }
    char *want[N];
    for (int i = 0; i < N; i++)
        want[i] = run_text(prompts[i], ns[i], seeds[i], temps[i]);
    const char *const *configs[] = {
        (const char *const[]){ "--max-batch", "8", NULL },
        (const char *const[]){ "--max-batch", "8", "--max-batch-tokens", "3", NULL },
    };
    for (int cfg = 0; cfg < 2; cfg++) {
        server s = start_server(configs[cfg]);
        for (int stream = 0; stream < 2; stream++) {
            int fds[N];
            for (int i = 0; i < N; i++) {
                fds[i] = connect_to(s.port);
                cr_assert_geq(fds[i], 0);
                char *b = completion_body(prompts[i], ns[i], seeds[i], temps[i], stream);
                char head[256];
                int hl = snprintf(head, sizeof head,
                                  "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: "
                                  "%zu\r\n\r\n",
                                  strlen(b));
                send_all(fds[i], head, (size_t)hl);
                send_all(fds[i], b, strlen(b));
                free(b);
            }
            for (int i = 0; i < N; i++) {
                response r;
                cr_assert(read_response(fds[i], &r), "request %d got no response", i);
                close(fds[i]);
                cr_assert_eq(r.status, 200, "%s", r.body);
                char *got;
                if (stream) {
                    char fin[16] = "";
                    got = sse_text(r.body, fin, sizeof fin);
                    cr_assert(!strcmp(fin, "length") || !strcmp(fin, "stop"));
                } else {
                    json_object ch;
                    first_choice(r.body, &ch);
                    got = strdup(json_get(&ch, "text")->str);
                    json_object_free(&ch);
                }
                cr_assert_str_eq(got, want[i],
                                 "request %d (stream %d, config %d) differs from genloop run", i,
                                 stream, cfg);
                free(got);
                response_free(&r);
            }
        }
        cr_assert_eq(stop_server(&s), 0);
    }
    for (int i = 0; i < N; i++)
        free(want[i]);
}

/* Keep-alive: several requests on one connection, chat streaming among them. */
Test(serve, keep_alive_and_chat_stream)
{
    server s = start_server(NULL);
    int fd = connect_to(s.port);
    const char *chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":7,"
                       "\"seed\":9,\"stream\":true,\"stop\":[\"zzz\"]}";
    for (int k = 0; k < 3; k++) {
        char req[1024];
        int n = snprintf(req, sizeof req,
                         "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: "
                         "%zu\r\n\r\n%s",
                         strlen(chat), chat);
        send_all(fd, req, (size_t)n);
        response r;
        cr_assert(read_response(fd, &r), "no response #%d on a kept-alive connection", k);
        cr_assert_eq(r.status, 200);
        cr_assert(strstr(r.head, "text/event-stream"));
        cr_assert(strstr(r.body, "\"delta\":{\"role\":\"assistant\""), "%s", r.body);
        char fin[16] = "";
        char *t = sse_text(r.body, fin, sizeof fin);
        cr_assert_str_eq(fin, "length");
        free(t);
        response_free(&r);
    }
    close(fd);
    cr_assert_eq(stop_server(&s), 0);
}

/* A client that goes away mid-stream cancels its request and frees its slot. */
Test(serve, disconnect_cancels)
{
    server s =
        start_server((const char *const[]){ "--max-batch", "1", "--max-tokens", "10000000", NULL });
    int fd = connect_to(s.port);
    const char *b = "{\"prompt\":\"Once upon a time\",\"max_tokens\":10000000,\"stream\":true}";
    char req[512];
    int n = snprintf(req, sizeof req,
                     "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
                     strlen(b), b);
    send_all(fd, req, (size_t)n);
    char buf[4096];
    cr_assert_gt(recv(fd, buf, sizeof buf, 0), 0, "no stream started");
    close(fd);
    bool cancelled = false;
    for (int i = 0; i < 250 && !cancelled; i++) {
        response r = http(s.port, "GET", "/metrics", NULL, NULL);
        cancelled = strstr(r.body, "genloop_cancelled_total 1") &&
                    strstr(r.body, "genloop_running_sequences 0");
        response_free(&r);
        if (!cancelled)
            usleep(20000);
    }
    cr_assert(cancelled, "the disconnected request still runs");
    /* the only slot is free again */
    char *c = completion_body("Sara", "4", "1", "0", false);
    response r = http(s.port, "POST", "/v1/completions", c, NULL);
    free(c);
    cr_assert_eq(r.status, 200, "%s", r.body);
    response_free(&r);
    cr_assert_eq(stop_server(&s), 0);
}

static void expect_error(int port, const char *method, const char *path, const char *body,
                         const char *headers, int status, const char *param)
{
    response r = http(port, method, path, body, headers);
    cr_assert_eq(r.status, status, "%s %s %s: %d, not %d: %s", method, path, body ? body : "",
                 r.status, status, r.body);
    cr_assert(strstr(r.body, "{\"error\":{\"message\":") && strstr(r.body, "\"type\":") &&
                  strstr(r.body, "\"param\":") && strstr(r.body, "\"code\":"),
              "not an OpenAI error object: %s", r.body);
    if (param) {
        char want[64];
        snprintf(want, sizeof want, "\"param\":\"%s\"", param);
        cr_assert(strstr(r.body, want), "%s: expected %s", r.body, want);
    }
    response_free(&r);
}

Test(serve, errors)
{
    server s = start_server((const char *const[]){ "-c", "64", "--max-body", "4096", NULL });
    const int p = s.port;
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":", NULL, 400, NULL);
    expect_error(p, "POST", "/v1/completions", "[1,2]", NULL, 400, NULL);
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":42}", NULL, 400, "prompt");
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":\"9\"}", NULL, 400,
                 "max_tokens");
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":65}", NULL, 400,
                 "max_tokens");
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":\"a\",\"temperature\":-1}", NULL, 400,
                 "temperature");
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":\"a\",\"stream\":1}", NULL, 400,
                 "stream");
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":\"a\",\"stop\":7}", NULL, 400, "stop");
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":\"a\",\"seed\":-3}", NULL, 400, "seed");
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":\"a\",\"n\":2}", NULL, 400, "n");
    expect_error(p, "POST", "/v1/completions", "{\"prompt\":\"a\",\"model\":\"gpt-4\"}", NULL, 400,
                 "model");
    expect_error(p, "POST", "/v1/chat/completions", "{\"messages\":\"hi\"}", NULL, 400, "messages");
    expect_error(p, "POST", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\"}]}", NULL,
                 400, "messages");
    expect_error(p, "POST", "/v1/chat/completions",
                 "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}",
                 NULL, 400, "messages");
    /* 70 words: more tokens than the 64 positions of -c 64 */
    char big[1024] = "{\"prompt\":\"";
    for (int i = 0; i < 70; i++)
        strcat(big, "dog ");
    strcat(big, "\"}");
    expect_error(p, "POST", "/v1/completions", big, NULL, 400, "prompt");
    expect_error(p, "GET", "/v1/completions", NULL, NULL, 405, NULL);
    expect_error(p, "POST", "/v1/models", "{}", NULL, 405, NULL);
    expect_error(p, "GET", "/v2/nothing", NULL, NULL, 404, NULL);
    /* body over --max-body */
    char *huge = malloc(8192);
    memset(huge, ' ', 8191);
    huge[0] = '{';
    huge[8190] = '}';
    huge[8191] = '\0';
    expect_error(p, "POST", "/v1/completions", huge, NULL, 413, NULL);
    free(huge);
    /* malformed HTTP, headers over 16 KiB */
    const char *raw[] = { "GARBAGE\r\n\r\n", "GET /health HTTP/1.1\r\nBad Header\r\n\r\n",
                          "GET /health HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                          "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                          "Content-Length: 3\r\n\r\nabc" };
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        int fd = connect_to(p);
        send_all(fd, raw[i], strlen(raw[i]));
        response r;
        cr_assert(read_response(fd, &r), "no answer to malformed request %zu", i);
        cr_assert_eq(r.status, 400, "malformed request %zu: %d", i, r.status);
        response_free(&r);
        close(fd);
    }
    char *hdr = malloc(20000);
    strcpy(hdr, "GET /health HTTP/1.1\r\nX-Big: ");
    size_t hl = strlen(hdr);
    memset(hdr + hl, 'a', 18000);
    strcpy(hdr + hl + 18000, "\r\n\r\n");
    int fd = connect_to(p);
    send_all(fd, hdr, strlen(hdr));
    response r;
    cr_assert(read_response(fd, &r));
    cr_assert_eq(r.status, 431);
    response_free(&r);
    close(fd);
    free(hdr);
    /* still serving after all that */
    r = http(p, "POST", "/v1/completions", "{\"prompt\":\"Sara\",\"max_tokens\":3}", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    response_free(&r);
    cr_assert_eq(stop_server(&s), 0);
}

Test(serve, api_key)
{
    server s = start_server((const char *const[]){ "--api-key", "sekrit", NULL });
    const char *b = "{\"prompt\":\"Sara\",\"max_tokens\":2}";
    expect_error(s.port, "POST", "/v1/completions", b, NULL, 401, NULL);
    expect_error(s.port, "POST", "/v1/completions", b, "Authorization: Bearer wrong\r\n", 401,
                 NULL);
    expect_error(s.port, "GET", "/v1/models", NULL, "Authorization: Bearer sekri\r\n", 401, NULL);
    response r = http(s.port, "POST", "/v1/completions", b, "Authorization: Bearer sekrit\r\n");
    cr_assert_eq(r.status, 200, "%s", r.body);
    response_free(&r);
    r = http(s.port, "GET", "/health", NULL, NULL); /* probes need no key */
    cr_assert_eq(r.status, 200);
    response_free(&r);
    cr_assert_eq(stop_server(&s), 0);
}

/* --max-queue: with every slot and queue place taken, 503 and Retry-After. */
Test(serve, queue_limit)
{
    server s = start_server((const char *const[]){ "--max-batch", "1", "--max-queue", "0",
                                                   "--max-tokens", "10000000", NULL });
    int fd = connect_to(s.port);
    const char *b = "{\"prompt\":\"Once\",\"max_tokens\":10000000,\"stream\":true}";
    char req[512];
    int n = snprintf(req, sizeof req,
                     "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
                     strlen(b), b);
    send_all(fd, req, (size_t)n);
    char buf[1024];
    cr_assert_gt(recv(fd, buf, sizeof buf, 0), 0);
    response r = http(s.port, "POST", "/v1/completions", "{\"prompt\":\"Sara\"}", NULL);
    cr_assert_eq(r.status, 503, "%s", r.body);
    cr_assert(strcasestr(r.head, "Retry-After:"), "%s", r.head);
    response_free(&r);
    close(fd);
    cr_assert_eq(stop_server(&s), 0);
}

/* SIGTERM: the running request completes, then the server exits 0. */
Test(serve, sigterm_drains)
{
    char *want = run_text("Once upon a time", "400", "5", "0.8");
    server s = start_server(NULL);
    int fd = connect_to(s.port);
    char *b = completion_body("Once upon a time", "400", "5", "0.8", true);
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
                     strlen(b), b);
    free(b);
    send_all(fd, req, (size_t)n);
    /* the stream has started: the request runs */
    struct pollfd p = { .fd = fd, .events = POLLIN };
    cr_assert_eq(poll(&p, 1, 20000), 1, "the stream did not start");
    kill(s.pid, SIGTERM);
    response r;
    cr_assert(read_response(fd, &r), "the running request was dropped");
    cr_assert_eq(r.status, 200);
    char fin[16] = "";
    char *got = sse_text(r.body, fin, sizeof fin);
    cr_assert_str_eq(got, want);
    free(got);
    response_free(&r);
    close(fd);
    free(want);
    int st = 0;
    bool exited = false;
    for (int i = 0; i < 500 && !exited; i++) {
        exited = waitpid(s.pid, &st, WNOHANG) == s.pid;
        if (!exited)
            usleep(20000);
    }
    cr_assert(exited, "the server did not exit after SIGTERM");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status %d", st);
    s.pid = -1;
    close(s.err_fd);
    cr_assert_lt(connect_to(s.port), 0, "still accepting after shutdown");
}

/* A prompt that extends an earlier one reuses its cache entries
 * (usage.prompt_tokens_details.cached_tokens) and still matches genloop run. */
Test(serve, prefix_reuse)
{
    const char *p1 = "Once upon a time, there was a little girl named Lily.";
    const char *p2 = "Once upon a time, there was a little girl named Lily. She loved";
    char *want = run_text(p2, "16", "11", "0.8");
    server s = start_server((const char *const[]){ "--max-batch", "2", NULL });
    char *b = completion_body(p1, "4", "1", "0", false);
    response r = http(s.port, "POST", "/v1/completions", b, NULL);
    free(b);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "\"cached_tokens\":0"), "%s", r.body);
    response_free(&r);
    b = completion_body(p2, "16", "11", "0.8", false);
    r = http(s.port, "POST", "/v1/completions", b, NULL);
    free(b);
    cr_assert_eq(r.status, 200);
    const char *ct = strstr(r.body, "\"cached_tokens\":");
    cr_assert(ct && atoi(ct + 16) > 10, "no prefix reuse: %s", r.body);
    json_object ch;
    first_choice(r.body, &ch);
    cr_assert_str_eq(json_get(&ch, "text")->str, want);
    json_object_free(&ch);
    response_free(&r);
    r = http(s.port, "GET", "/metrics", NULL, NULL);
    cr_assert(!strstr(r.body, "genloop_prompt_tokens_reused_total 0\n"), "%s", r.body);
    response_free(&r);
    free(want);
    cr_assert_eq(stop_server(&s), 0);
}

/* A client that stalls mid-request (or trickles bytes) gets 408 after
 * --timeout, and others are served meanwhile. */
Test(serve, stalled_client_times_out)
{
    server s = start_server((const char *const[]){ "--timeout", "0.5", NULL });
    int slow = connect_to(s.port);
    send_all(slow, "POST /v1/completions HTTP/1.1\r\nContent-Le", 40);
    response r = http(s.port, "GET", "/v1/models", NULL, NULL);
    cr_assert_eq(r.status, 200);
    response_free(&r);
    const double t0 = now_s();
    for (int i = 0; i < 6; i++) { /* a byte every 0.2 s does not keep it alive */
        struct pollfd p = { .fd = slow, .events = POLLIN };
        if (poll(&p, 1, 200) > 0)
            break;
        send_all(slow, "n", 1);
    }
    cr_assert(read_response(slow, &r), "the stalled client got no answer");
    cr_assert_eq(r.status, 408);
    cr_assert_lt(now_s() - t0, 5.0);
    response_free(&r);
    close(slow);
    cr_assert_eq(stop_server(&s), 0);
}

/* Truncated literals in an exactly-sized, unterminated body: a clean error,
 * no read past the end (the ASan stage runs this with strict string checks;
 * fuzz_http found the overread). */
Test(serve, json_truncated_literals)
{
    const char *cases[] = { "{\"a\":tru", "{\"a\":fals",     "{\"a\":nul",
                            "{\"a\":[t",  "{\"a\":{\"b\":f", "{\"a\":n" };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const size_t n = strlen(cases[i]);
        char *b = malloc(n);
        cr_assert(b);
        memcpy(b, cases[i], n);
        json_object o;
        char msg[160];
        cr_assert(!json_parse_object(b, n, &o, msg, sizeof msg), "'%s' parsed", cases[i]);
        free(b);
    }
}
