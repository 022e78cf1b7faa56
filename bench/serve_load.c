/* serve_load: a load generator for an OpenAI-compatible completions server
 * on loopback (genloop serve, or any peer server that speaks the same API).
 *
 * N client threads share a schedule of M requests with mixed prompt and
 * output lengths; request i becomes due at a Poisson arrival time (or all at
 * once with --rate 0) and is sent by the first free client. Every request
 * streams (SSE); the client timestamps each event as it arrives.
 *
 * Reports: requests ok / failed, completion tokens, aggregate tok/s over the
 * whole run (first send to last [DONE]), time to first token p50/p99 (from
 * the send), per-token latency p50/p99 (gaps between events of a request).
 * --write-batch FILE writes the same requests as `genloop batch` input, so
 * the engine's own throughput on the identical work can be measured.
 *
 * Bounded: every socket has a receive timeout, the whole run a deadline;
 * only numeric loopback-style hosts (no resolver). */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef struct request {
    char *prompt;
    int max_tokens;
    uint64_t seed;
    double due_s; /* arrival time from the start of the run */
    /* results */
    bool ok;
    char error[160];
    int n_events;                   /* events that carried text */
    int completion_tokens;          /* from usage when the server sends it, else n_events */
    double t_send, t_first, t_last; /* seconds from the start of the run */
    double *gaps;                   /* n_events - 1 inter-event gaps, seconds */
} request;

typedef struct options {
    const char *host, *model, *path, *write_batch;
    int port, clients, requests;
    double rate, temp, timeout_s, deadline_s, wait_ready_s;
    bool write_only;
    int prompt_lo, prompt_hi, gen_lo, gen_hi;
    uint64_t seed;
} options;

typedef struct run_state {
    const options *o;
    request *rq;
    int next;
    pthread_mutex_t lock;
    double t0;
} run_state;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64: a fixed, documented sequence for a given --seed */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
    return (rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static int rng_range(uint64_t *s, int lo, int hi)
{
    return lo + (int)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static const char *const words[] = {
    "the",    "little", "dog",    "ran",    "to",    "a",     "big",   "park",   "and",
    "saw",    "bird",   "in",     "tree",   "she",   "was",   "happy", "they",   "played",
    "with",   "ball",   "all",    "day",    "long",  "then",  "went",  "home",   "for",
    "lunch",  "mom",    "said",   "it",     "is",    "time",  "sleep", "sun",    "shining",
    "over",   "hill",   "river",  "boat",   "found", "shiny", "stone", "friend", "cat",
    "jumped", "very",   "fast",   "after",  "rain",  "came",  "red",   "blue",   "box",
    "open",   "door",   "garden", "flower", "small", "house", "near",  "road",   "quiet",
};

static char *make_prompt(uint64_t *s, int n_words)
{
    size_t cap = (size_t)n_words * 8 + 1, len = 0;
    char *p = malloc(cap);
    if (!p)
        return NULL;
    for (int i = 0; i < n_words; i++) {
        const char *w = words[rng_next(s) % (sizeof words / sizeof words[0])];
        len += (size_t)snprintf(p + len, cap - len, "%s%s", i ? " " : "", w);
    }
    if (n_words > 0)
        p[0] = (char)(p[0] - 'a' + 'A');
    return p;
}

/* ---- a minimal streaming HTTP/1.1 client --------------------------------- */

typedef struct stream_parse {
    /* transfer layer */
    bool in_body, chunked;
    long chunk_left; /* bytes left in the current chunk; -1: reading a size line */
    char line[256];
    size_t line_len;
    int status;
    /* SSE layer: the current event's bytes */
    char *ev;
    size_t ev_len, ev_cap;
    bool done;
} stream_parse;

static bool ev_push(stream_parse *p, const char *b, size_t n)
{
    if (p->ev_len + n + 1 > p->ev_cap) {
        size_t cap = p->ev_cap ? p->ev_cap : 1024;
        while (cap < p->ev_len + n + 1)
            cap *= 2;
        char *e = realloc(p->ev, cap);
        if (!e)
            return false;
        p->ev = e;
        p->ev_cap = cap;
    }
    memcpy(p->ev + p->ev_len, b, n);
    p->ev_len += n;
    p->ev[p->ev_len] = 0;
    return true;
}

/* One complete SSE event in p->ev: counts it when it carries text. */
static void on_event(request *r, const char *ev, double t)
{
    if (strncmp(ev, "data: ", 6))
        return;
    const char *d = ev + 6;
    if (!strncmp(d, "[DONE]", 6))
        return;
    if (strstr(d, "\"error\"")) {
        snprintf(r->error, sizeof r->error, "error event: %.120s", d);
        return;
    }
    const char *u = strstr(d, "\"completion_tokens\":");
    if (u)
        r->completion_tokens = atoi(u + 20);
    static const char key_text[] = "\"text\":\"", key_content[] = "\"content\":\"";
    const char *tx = strstr(d, key_text);
    if (tx)
        tx += sizeof key_text - 1;
    else if ((tx = strstr(d, key_content)))
        tx += sizeof key_content - 1;
    if (!tx || *tx == '"')
        return; /* no text in this event (role, finish or usage only) */
    if (r->n_events == 0)
        r->t_first = t;
    else
        r->gaps[r->n_events - 1] = t - r->t_last;
    r->t_last = t;
    if (r->n_events < r->max_tokens + 8)
        r->n_events++;
}

/* Feeds body bytes into the SSE splitter. */
static bool sse_feed(stream_parse *p, request *r, const char *b, size_t n, double t)
{
    for (size_t i = 0; i < n; i++) {
        if (!ev_push(p, b + i, 1))
            return false;
        if (p->ev_len >= 2 && p->ev[p->ev_len - 1] == '\n' && p->ev[p->ev_len - 2] == '\n') {
            on_event(r, p->ev, t);
            if (!strncmp(p->ev, "data: [DONE]", 12))
                p->done = true;
            p->ev_len = 0;
        }
    }
    return true;
}

/* Feeds raw socket bytes: status line and headers, then the (chunked) body. */
static bool http_feed(stream_parse *p, request *r, const char *b, size_t n, double t)
{
    size_t i = 0;
    while (i < n) {
        if (!p->in_body || (p->chunked && p->chunk_left < 0)) {
            char c = b[i++];
            if (c != '\n') {
                if (p->line_len + 1 < sizeof p->line)
                    p->line[p->line_len++] = c;
                continue;
            }
            if (p->line_len && p->line[p->line_len - 1] == '\r')
                p->line_len--;
            p->line[p->line_len] = 0;
            const size_t len = p->line_len;
            p->line_len = 0;
            if (!p->in_body) {
                if (!p->status) {
                    if (sscanf(p->line, "HTTP/1.%*d %d", &p->status) != 1)
                        return false;
                } else if (len == 0) {
                    p->in_body = true;
                    p->chunk_left = p->chunked ? -1 : 0;
                } else if (!strncasecmp(p->line, "transfer-encoding:", 18) &&
                           strstr(p->line + 18, "chunked")) {
                    p->chunked = true;
                }
            } else if (len > 0) { /* a chunk-size line (the blank one after data is skipped) */
                p->chunk_left = strtol(p->line, NULL, 16);
                if (p->chunk_left == 0)
                    p->done = true;
            }
            continue;
        }
        size_t take = n - i;
        if (p->chunked && (long)take > p->chunk_left)
            take = (size_t)p->chunk_left;
        if (!sse_feed(p, r, b + i, take, t))
            return false;
        i += take;
        if (p->chunked && (p->chunk_left -= (long)take) == 0)
            p->chunk_left = -1;
    }
    return true;
}

static int connect_to(const options *o)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
    if (inet_pton(AF_INET, o->host, &a.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = { .tv_sec = (time_t)o->timeout_s,
                          .tv_usec = (suseconds_t)((o->timeout_s - (time_t)o->timeout_s) * 1e6) };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool send_all(int fd, const char *b, size_t n)
{
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        b += k;
        n -= (size_t)k;
    }
    return true;
}

static void do_request(const options *o, request *r, double t0)
{
    char body[8192], model[160] = "";
    if (o->model) /* without --model the field is left out: each server picks its own */
        snprintf(model, sizeof model, "\"model\":\"%s\",", o->model);
    int bl = snprintf(body, sizeof body,
                      "{%s\"prompt\":\"%s\",\"max_tokens\":%d,\"temperature\":%g,"
                      "\"seed\":%llu,\"stream\":true}",
                      model, r->prompt, r->max_tokens, o->temp, (unsigned long long)r->seed);
    char head[512];
    int hl =
        snprintf(head, sizeof head,
                 "POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                 "Accept: text/event-stream\r\nConnection: close\r\nContent-Length: %d\r\n\r\n",
                 o->path, o->host, o->port, bl);
    if (bl >= (int)sizeof body || hl >= (int)sizeof head) {
        snprintf(r->error, sizeof r->error, "request too large");
        return;
    }
    int fd = connect_to(o);
    if (fd < 0) {
        snprintf(r->error, sizeof r->error, "connect: %s", strerror(errno));
        return;
    }
    r->t_send = now_s() - t0;
    stream_parse p = { 0 };
    if (!send_all(fd, head, (size_t)hl) || !send_all(fd, body, (size_t)bl)) {
        snprintf(r->error, sizeof r->error, "send: %s", strerror(errno));
        goto out;
    }
    char buf[16384];
    while (!p.done) {
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            snprintf(r->error, sizeof r->error, "recv: %s", strerror(errno));
            goto out;
        }
        if (k == 0)
            break;
        if (!http_feed(&p, r, buf, (size_t)k, now_s() - t0)) {
            snprintf(r->error, sizeof r->error, "malformed response");
            goto out;
        }
        if (now_s() - t0 > o->deadline_s) {
            snprintf(r->error, sizeof r->error, "run deadline passed");
            goto out;
        }
    }
    if (p.status != 200 && !r->error[0])
        snprintf(r->error, sizeof r->error, "HTTP status %d: %.100s", p.status, p.ev ? p.ev : "");
    else if (!p.done && !r->error[0])
        snprintf(r->error, sizeof r->error, "stream ended before [DONE]");
    else if (r->n_events == 0 && !r->error[0])
        snprintf(r->error, sizeof r->error, "no tokens streamed");
    r->ok = !r->error[0];
    if (!r->completion_tokens)
        r->completion_tokens = r->n_events;
out:
    free(p.ev);
    close(fd);
}

/* GET /health until the server answers 200 (a loading server answers 503 or
 * refuses the connection). */
static bool wait_ready(const options *o)
{
    const double until = now_s() + o->wait_ready_s;
    char req[256], buf[64];
    const int n = snprintf(req, sizeof req,
                           "GET /health HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n",
                           o->host, o->port);
    do {
        int fd = connect_to(o);
        if (fd >= 0) {
            int status = 0;
            if (send_all(fd, req, (size_t)n)) {
                ssize_t k = recv(fd, buf, sizeof buf - 1, 0);
                if (k > 0) {
                    buf[k] = 0;
                    sscanf(buf, "HTTP/1.%*d %d", &status);
                }
            }
            close(fd);
            if (status == 200)
                return true;
        }
        usleep(100 * 1000);
    } while (now_s() < until);
    return false;
}

static void *client(void *arg)
{
    run_state *st = arg;
    for (;;) {
        pthread_mutex_lock(&st->lock);
        const int i = st->next < st->o->requests ? st->next++ : -1;
        pthread_mutex_unlock(&st->lock);
        if (i < 0)
            return NULL;
        request *r = &st->rq[i];
        const double wait = st->t0 + r->due_s - now_s();
        if (wait > 0) {
            struct timespec ts = { (time_t)wait, (long)((wait - (time_t)wait) * 1e9) };
            while (nanosleep(&ts, &ts) && errno == EINTR)
                ;
        }
        if (now_s() - st->t0 > st->o->deadline_s) {
            snprintf(r->error, sizeof r->error, "not sent: run deadline passed");
            continue;
        }
        do_request(st->o, r, st->t0);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *v, int n, double q)
{
    return n ? v[(int)(q * (n - 1) + 0.5)] : NAN;
}

static bool parse_range(const char *s, int *lo, int *hi)
{
    char *e;
    long a = strtol(s, &e, 10), b = a;
    if (*e == ':')
        b = strtol(e + 1, &e, 10);
    if (*e || a < 1 || b < a || b > 100000)
        return false;
    *lo = (int)a;
    *hi = (int)b;
    return true;
}

static const char usage[] =
    "usage: serve_load --port P [--host 127.0.0.1] [--clients N=8] [--requests M=32]\n"
    "                  [--rate R (arrivals/s, Poisson; 0 = all at once)] [--seed S=1]\n"
    "                  [--prompt-words LO:HI=8:96] [--max-tokens LO:HI=32:128] [--temp T=0]\n"
    "                  [--model NAME] [--path /v1/completions] [--timeout S=120 per read]\n"
    "                  [--deadline S=900 whole run] [--write-batch FILE.jsonl [--write-only]]\n"
    "                  [--wait-ready S (poll GET /health until 200, at most S seconds)]\n";

static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){ .host = "127.0.0.1",
                    .path = "/v1/completions",
                    .clients = 8,
                    .requests = 32,
                    .timeout_s = 120,
                    .deadline_s = 900,
                    .prompt_lo = 8,
                    .prompt_hi = 96,
                    .gen_lo = 32,
                    .gen_hi = 128,
                    .seed = 1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            exit(0);
        }
        if (!strcmp(a, "--write-only")) {
            o->write_only = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "serve_load: %s needs a value\n%s", a, usage);
            return -1;
        }
        i++;
        bool ok = true;
        if (!strcmp(a, "--host"))
            o->host = v;
        else if (!strcmp(a, "--port"))
            ok = (o->port = atoi(v)) > 0 && o->port < 65536;
        else if (!strcmp(a, "--clients"))
            ok = (o->clients = atoi(v)) >= 1 && o->clients <= 1024;
        else if (!strcmp(a, "--requests"))
            ok = (o->requests = atoi(v)) >= 1 && o->requests <= 100000;
        else if (!strcmp(a, "--rate"))
            ok = (o->rate = atof(v)) >= 0;
        else if (!strcmp(a, "--seed"))
            o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--prompt-words"))
            ok = parse_range(v, &o->prompt_lo, &o->prompt_hi) && o->prompt_hi <= 900;
        else if (!strcmp(a, "--max-tokens"))
            ok = parse_range(v, &o->gen_lo, &o->gen_hi);
        else if (!strcmp(a, "--temp"))
            ok = (o->temp = atof(v)) >= 0;
        else if (!strcmp(a, "--model"))
            ok = strlen(v) < 128 && !strpbrk(v, "\"\\");
        else if (!strcmp(a, "--path"))
            ok = v[0] == '/' && strlen(v) < 128;
        else if (!strcmp(a, "--timeout"))
            ok = (o->timeout_s = atof(v)) > 0;
        else if (!strcmp(a, "--deadline"))
            ok = (o->deadline_s = atof(v)) > 0;
        else if (!strcmp(a, "--wait-ready"))
            ok = (o->wait_ready_s = atof(v)) > 0;
        else if (!strcmp(a, "--write-batch"))
            o->write_batch = v;
        else {
            fprintf(stderr, "serve_load: unknown option '%s'\n%s", a, usage);
            return -1;
        }
        if (!strcmp(a, "--model"))
            o->model = v;
        if (!strcmp(a, "--path"))
            o->path = v;
        if (!ok) {
            fprintf(stderr, "serve_load: bad value '%s' for %s\n", v, a);
            return -1;
        }
    }
    if (!o->port && !o->write_only) {
        fprintf(stderr, "serve_load: --port is required\n%s", usage);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o))
        return 2;
    request *rq = calloc((size_t)o.requests, sizeof *rq);
    if (!rq)
        return 1;
    uint64_t s = o.seed;
    double t = 0;
    for (int i = 0; i < o.requests; i++) {
        request *r = &rq[i];
        r->prompt = make_prompt(&s, rng_range(&s, o.prompt_lo, o.prompt_hi));
        r->max_tokens = rng_range(&s, o.gen_lo, o.gen_hi);
        r->seed = rng_next(&s) >> 1;
        if (o.rate > 0)
            t += -log(1.0 - rng_unit(&s)) / o.rate;
        r->due_s = t;
        r->gaps = calloc((size_t)r->max_tokens + 8, sizeof *r->gaps);
        if (!r->prompt || !r->gaps)
            return 1;
    }
    if (o.write_batch) {
        FILE *f = fopen(o.write_batch, "w");
        if (!f) {
            fprintf(stderr, "serve_load: cannot write '%s'\n", o.write_batch);
            return 1;
        }
        for (int i = 0; i < o.requests; i++)
            fprintf(f,
                    "{\"id\": %d, \"prompt\": \"%s\", \"n\": %d, \"temp\": %g, \"seed\": %llu}\n",
                    i, rq[i].prompt, rq[i].max_tokens, o.temp, (unsigned long long)rq[i].seed);
        fclose(f);
    }

    if (o.write_only)
        return 0;
    if (o.wait_ready_s > 0 && !wait_ready(&o)) {
        fprintf(stderr, "serve_load: %s:%d not ready (GET /health) within %g s\n", o.host, o.port,
                o.wait_ready_s);
        return 1;
    }

    run_state st = { .o = &o, .rq = rq, .t0 = now_s() };
    pthread_mutex_init(&st.lock, NULL);
    const int nc = o.clients < o.requests ? o.clients : o.requests;
    pthread_t *th = calloc((size_t)nc, sizeof *th);
    for (int i = 0; i < nc; i++)
        if (pthread_create(&th[i], NULL, client, &st)) {
            fprintf(stderr, "serve_load: cannot start client threads\n");
            return 1;
        }
    for (int i = 0; i < nc; i++)
        pthread_join(th[i], NULL);

    int ok = 0, n_gaps = 0;
    long long tokens = 0;
    double first = INFINITY, last = 0;
    for (int i = 0; i < o.requests; i++)
        n_gaps += rq[i].n_events > 1 ? rq[i].n_events - 1 : 0;
    double *ttft = calloc((size_t)o.requests, sizeof *ttft);
    double *gaps = calloc((size_t)n_gaps + 1, sizeof *gaps);
    int n_ttft = 0, g = 0;
    for (int i = 0; i < o.requests; i++) {
        request *r = &rq[i];
        if (!r->ok) {
            fprintf(stderr, "serve_load: request %d failed: %s\n", i, r->error);
            continue;
        }
        ok++;
        tokens += r->completion_tokens;
        first = r->t_send < first ? r->t_send : first;
        last = r->t_last > last ? r->t_last : last;
        ttft[n_ttft++] = r->t_first - r->t_send;
        for (int k = 0; k + 1 < r->n_events; k++)
            gaps[g++] = r->gaps[k];
    }
    qsort(ttft, (size_t)n_ttft, sizeof *ttft, cmp_double);
    qsort(gaps, (size_t)g, sizeof *gaps, cmp_double);
    const double wall = ok ? last - first : 0;
    printf("serve_load: %d requests, %d clients, rate %g/s | ok %d failed %d | %lld tokens in "
           "%.2f s = %.1f tok/s | TTFT p50 %.1f ms p99 %.1f ms | per-token p50 %.1f ms p99 %.1f "
           "ms\n",
           o.requests, nc, o.rate, ok, o.requests - ok, tokens, wall, wall > 0 ? tokens / wall : 0,
           pct(ttft, n_ttft, 0.5) * 1e3, pct(ttft, n_ttft, 0.99) * 1e3, pct(gaps, g, 0.5) * 1e3,
           pct(gaps, g, 0.99) * 1e3);
    printf(
        "RESULT {\"requests\": %d, \"ok\": %d, \"failed\": %d, \"tokens\": %lld, \"wall_s\": %.3f, "
        "\"tok_s\": %.2f, \"ttft_p50_ms\": %.2f, \"ttft_p99_ms\": %.2f, \"tpot_p50_ms\": %.2f, "
        "\"tpot_p99_ms\": %.2f}\n",
        o.requests, ok, o.requests - ok, tokens, wall, wall > 0 ? tokens / wall : 0,
        pct(ttft, n_ttft, 0.5) * 1e3, pct(ttft, n_ttft, 0.99) * 1e3, pct(gaps, g, 0.5) * 1e3,
        pct(gaps, g, 0.99) * 1e3);
    for (int i = 0; i < o.requests; i++) {
        free(rq[i].prompt);
        free(rq[i].gaps);
    }
    free(rq);
    free(th);
    free(ttft);
    free(gaps);
    return ok == o.requests ? 0 : 1;
}
