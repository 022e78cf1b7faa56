/* HTTP/1.1 request parsing and response framing, just what the server needs:
 * a request line, headers, a Content-Length body; responses with a
 * Content-Length body or chunked (for Server-Sent Events). The parser works
 * on bytes as they arrive: it answers "incomplete" until a whole request is
 * in the buffer, and never reads past len. */
#ifndef GENLOOP_SERVE_HTTP_H
#define GENLOOP_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"

enum {
    HTTP_INCOMPLETE = 0,
    HTTP_BAD = -400,          /* malformed request                 */
    HTTP_HEADER_LARGE = -431, /* headers over the limit            */
    HTTP_BODY_LARGE = -413,   /* Content-Length over the limit     */
    HTTP_LENGTH_REQUIRED = -411,
    HTTP_NOT_IMPL = -501, /* a Transfer-Encoding we do not take */
    HTTP_VERSION = -505,
};

typedef struct http_req {
    char method[16];
    char path[512]; /* without the query string */
    int minor;      /* HTTP/1.minor */
    bool keep_alive;
    bool has_length;
    size_t content_length;
    size_t header_len;    /* bytes of request line and headers */
    char auth[256];       /* the Authorization value, truncated */
    bool expect_continue; /* "Expect: 100-continue": the client waits for
                           * a 100 before sending its body */
    const char *body;     /* into the parsed buffer */
} http_req;

/* Parses the request at the start of buf. Returns the request's total size
 * (headers and body) when it is complete, HTTP_INCOMPLETE when more bytes
 * are needed (r->header_len > 0 then: the headers are in, the body is
 * not), or a negative HTTP_* error. */
long http_parse(const char *buf, size_t len, size_t max_header, size_t max_body, http_req *r);

const char *http_reason(int status);
/* A whole response with a body; extra holds more header lines ("K: v\r\n"). */
void http_respond(sbuf *out, int status, const char *ctype, const char *body, size_t len,
                  bool keep_alive, const char *extra);
/* The head of a Server-Sent Events response: chunked for HTTP/1.1; for
 * HTTP/1.0 (no chunked encoding) the body ends when the connection closes. */
void http_sse_head(sbuf *out, bool chunked, bool keep_alive);
/* One piece of such a body (framed as a chunk when chunked); len 0 ends a
 * chunked body. */
void http_chunk(sbuf *out, bool chunked, const char *data, size_t len);

#endif
