#include "http.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The end of the header block ("\r\n\r\n", or bare "\n\n" from lax
 * clients): offset just past it, or 0 when not in buf yet. */
static size_t header_end(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 < len && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Trims spaces and tabs from both ends of [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static bool token_has(const char *v, size_t n, const char *word)
{
    const size_t wl = strlen(word);
    for (size_t i = 0; i + wl <= n; i++)
        if (!strncasecmp(v + i, word, wl) && (i == 0 || v[i - 1] == ' ' || v[i - 1] == ',') &&
            (i + wl == n || v[i + wl] == ' ' || v[i + wl] == ','))
            return true;
    return false;
}

static int parse_request_line(const char *s, size_t n, http_req *r)
{
    size_t i = 0, k = 0;
    while (i < n && is_tchar((unsigned char)s[i])) {
        if (k + 1 >= sizeof r->method)
            return HTTP_BAD;
        r->method[k++] = s[i++];
    }
    r->method[k] = '\0';
    if (k == 0 || i >= n || s[i] != ' ')
        return HTTP_BAD;
    i++;
    k = 0;
    bool in_query = false;
    while (i < n && s[i] != ' ') {
        unsigned char c = (unsigned char)s[i++];
        if (c <= 0x20 || c >= 0x7f)
            return HTTP_BAD;
        if (c == '?')
            in_query = true;
        if (in_query)
            continue;
        if (k + 1 >= sizeof r->path)
            return HTTP_HEADER_LARGE;
        r->path[k++] = (char)c;
    }
    r->path[k] = '\0';
    if (k == 0 || r->path[0] != '/' || i >= n)
        return HTTP_BAD;
    i++;
    if (n - i != 8 || memcmp(s + i, "HTTP/", 5) || s[i + 5] < '0' || s[i + 5] > '9' ||
        s[i + 6] != '.' || s[i + 7] < '0' || s[i + 7] > '9')
        return HTTP_BAD;
    if (s[i + 5] != '1')
        return HTTP_VERSION;
    r->minor = s[i + 7] - '0';
    r->keep_alive = r->minor >= 1;
    return 0;
}

long http_parse(const char *buf, size_t len, size_t max_header, size_t max_body, http_req *r)
{
    memset(r, 0, sizeof *r);
    /* tolerate blank lines before a request (RFC 9112 2.2) */
    size_t start = 0;
    while (start < len && start < 8 && (buf[start] == '\r' || buf[start] == '\n'))
        start++;
    const size_t end = header_end(buf + start, len - start);
    if (end == 0)
        return len > max_header ? HTTP_HEADER_LARGE : HTTP_INCOMPLETE;
    if (start + end > max_header)
        return HTTP_HEADER_LARGE;
    r->header_len = start + end;
    const char *s = buf + start, *lim = buf + start + end;
    bool first = true, te = false;
    while (s < lim) {
        const char *nl = memchr(s, '\n', (size_t)(lim - s));
        if (!nl)
            return HTTP_BAD;
        size_t n = (size_t)(nl - s);
        if (n && s[n - 1] == '\r')
            n--;
        const char *line = s;
        s = nl + 1;
        if (memchr(line, '\0', n) || (n && memchr(line, '\r', n)))
            return HTTP_BAD;
        if (first) {
            int rc = parse_request_line(line, n, r);
            if (rc)
                return rc;
            first = false;
            continue;
        }
        if (n == 0)
            break; /* the blank line */
        const char *colon = memchr(line, ':', n);
        if (!colon || colon == line)
            return HTTP_BAD;
        for (const char *p = line; p < colon; p++)
            if (!is_tchar((unsigned char)*p))
                return HTTP_BAD; /* also refuses obsolete line folding */
        const size_t nl_name = (size_t)(colon - line);
        const char *v = colon + 1;
        size_t vn = n - nl_name - 1;
        trim(&v, &vn);
        if (nl_name == 14 && !strncasecmp(line, "Content-Length", 14)) {
            if (vn == 0 || vn > 18)
                return vn > 18 ? HTTP_BODY_LARGE : HTTP_BAD;
            size_t cl = 0;
            for (size_t i = 0; i < vn; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return HTTP_BAD;
                cl = cl * 10 + (size_t)(v[i] - '0');
            }
            if (r->has_length && cl != r->content_length)
                return HTTP_BAD; /* conflicting lengths: request smuggling */
            r->has_length = true;
            r->content_length = cl;
        } else if (nl_name == 17 && !strncasecmp(line, "Transfer-Encoding", 17)) {
            te = true;
        } else if (nl_name == 10 && !strncasecmp(line, "Connection", 10)) {
            if (token_has(v, vn, "close"))
                r->keep_alive = false;
            else if (token_has(v, vn, "keep-alive"))
                r->keep_alive = true;
        } else if (nl_name == 6 && !strncasecmp(line, "Expect", 6)) {
            r->expect_continue = vn == 12 && !strncasecmp(v, "100-continue", 12);
        } else if (nl_name == 13 && !strncasecmp(line, "Authorization", 13)) {
            size_t k = vn < sizeof r->auth - 1 ? vn : sizeof r->auth - 1;
            memcpy(r->auth, v, k);
            r->auth[k] = '\0';
        }
    }
    if (first)
        return HTTP_BAD;
    if (te)
        return r->has_length ? HTTP_BAD : HTTP_NOT_IMPL;
    if (r->content_length > max_body)
        return HTTP_BODY_LARGE;
    if (len - r->header_len < r->content_length)
        return HTTP_INCOMPLETE;
    r->body = buf + r->header_len;
    return (long)(r->header_len + r->content_length);
}

const char *http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

void http_respond(sbuf *out, int status, const char *ctype, const char *body, size_t len,
                  bool keep_alive, const char *extra)
{
    sb_printf(out,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: %s\r\n"
              "%s\r\n",
              status, http_reason(status), ctype, len, keep_alive ? "keep-alive" : "close",
              extra ? extra : "");
    sb_put(out, body, len);
}

void http_sse_head(sbuf *out, bool chunked, bool keep_alive)
{
    sb_printf(out,
              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
              "%sConnection: %s\r\n\r\n",
              chunked ? "Transfer-Encoding: chunked\r\n" : "",
              chunked && keep_alive ? "keep-alive" : "close");
}

void http_chunk(sbuf *out, bool chunked, const char *data, size_t len)
{
    if (!chunked) {
        sb_put(out, data, len);
        return;
    }
    sb_printf(out, "%zx\r\n", len);
    sb_put(out, data, len);
    sb_put(out, "\r\n", 2);
}
