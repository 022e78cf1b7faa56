/* genloop serve's request path: arbitrary bytes through the HTTP/1.1 parser
 * (tools/serve/http.c) with limits picked by byte 0, then the body through
 * the JSON reader and the chat-messages parser, as the server
 * would. A complete request must lie inside the input, every prefix of it
 * must read as incomplete or an error (never as another complete request),
 * and nothing may read past the buffer (ASan) or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/json_in.h"
#include "../tools/serve/chat.h"
#include "../tools/serve/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* small limits reach the 413/431 paths; large ones the normal path */
    const size_t max_header = data[0] & 1 ? 64 + data[0] : 16384;
    const size_t max_body = data[0] & 2 ? data[0] : 1 << 20;
    /* a copy of exactly the input, so ASan sees any read past it */
    const size_t n = size - 1;
    char *buf = malloc(n ? n : 1);
    if (!buf)
        return 0;
    memcpy(buf, data + 1, n);
    http_req r;
    const long got = http_parse(buf, n, max_header, max_body, &r);
    if (got > 0) {
        if ((size_t)got > n || r.header_len > (size_t)got ||
            r.header_len + r.content_length != (size_t)got || r.body != buf + r.header_len ||
            r.path[0] != '/' || !memchr(r.method, '\0', sizeof r.method) ||
            !memchr(r.path, '\0', sizeof r.path) || !memchr(r.auth, '\0', sizeof r.auth))
            abort();
        /* a prefix of a complete request is never complete */
        http_req rp;
        const size_t cut = (size_t)got > 1 ? (size_t)data[0] % (size_t)got : 0;
        if (http_parse(buf, cut, max_header, max_body, &rp) > 0)
            abort();
        /* the body as the routes read it */
        json_object o;
        char msg[160];
        if (json_parse_object(r.body, r.content_length, &o, msg, sizeof msg)) {
            const json_value *v = json_get(&o, "messages");
            chat c;
            if (v && v->type == JV_OTHER && chat_parse(v->raw, v->raw_len, &c, msg, sizeof msg)) {
                sbuf out = { 0 }; /* the escaping the responses use */
                for (int i = 0; i < c.n; i++)
                    sb_json_str(&out, c.msgs[i].content, strlen(c.msgs[i].content));
                sb_free(&out);
                chat_free(&c);
            }
            json_object_free(&o);
        }
    } else if (got != HTTP_INCOMPLETE && got != HTTP_BAD && got != HTTP_HEADER_LARGE &&
               got != HTTP_BODY_LARGE && got != HTTP_LENGTH_REQUIRED && got != HTTP_NOT_IMPL &&
               got != HTTP_VERSION) {
        abort();
    }
    free(buf);
    return 0;
}
