#include "json_in.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *s;
    size_t len, i;
    char *msg;
    size_t msg_cap;
} parser;

static bool fail(parser *p, const char *what)
{
    snprintf(p->msg, p->msg_cap, "%s at column %zu", what, p->i + 1);
    return false;
}

/* does the input continue with the literal word (never reads past len: the
 * input need not be NUL-terminated) */
static bool at_word(const parser *p, const char *word)
{
    const size_t n = strlen(word);
    return p->len - p->i >= n && !memcmp(p->s + p->i, word, n);
}

static void ws(parser *p)
{
    while (p->i < p->len && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i])
        p->i++;
}

static bool put_utf8(char **buf, size_t *n, size_t *cap, unsigned cp)
{
    if (*n + 5 > *cap) {
        size_t nc = *cap * 2 + 16;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return false;
        *buf = nb;
        *cap = nc;
    }
    char *o = *buf + *n;
    if (cp < 0x80) {
        o[0] = (char)cp;
        *n += 1;
    } else if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        *n += 2;
    } else if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        *n += 3;
    } else {
        o[0] = (char)(0xf0 | cp >> 18);
        o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[3] = (char)(0x80 | (cp & 0x3f));
        *n += 4;
    }
    return true;
}

static bool hex4(parser *p, unsigned *out)
{
    if (p->i + 4 > p->len)
        return fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(p, "bad \\u escape");
    }
    *out = v;
    return true;
}

static bool string(parser *p, char **out, size_t *out_len)
{
    if (p->i >= p->len || p->s[p->i] != '"')
        return fail(p, "expected a string");
    p->i++;
    size_t n = 0, cap = 32;
    char *buf = malloc(cap);
    if (!buf)
        return fail(p, "out of memory");
    for (;;) {
        if (p->i >= p->len) {
            free(buf);
            return fail(p, "unterminated string");
        }
        unsigned char c = (unsigned char)p->s[p->i++];
        unsigned cp = c;
        if (c == '"')
            break;
        if (c < 0x20) {
            free(buf);
            return fail(p, "control character in string");
        }
        if (c == '\\') {
            if (p->i >= p->len) {
                free(buf);
                return fail(p, "unterminated escape");
            }
            char e = p->s[p->i++];
            switch (e) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
                if (!hex4(p, &cp)) {
                    free(buf);
                    return false;
                }
                if (cp >= 0xd800 && cp < 0xdc00 && p->i + 6 <= p->len && p->s[p->i] == '\\' &&
                    p->s[p->i + 1] == 'u') {
                    unsigned lo;
                    p->i += 2;
                    if (!hex4(p, &lo)) {
                        free(buf);
                        return false;
                    }
                    cp = lo >= 0xdc00 && lo < 0xe000
                             ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
                             : 0xfffd;
                } else if (cp >= 0xd800 && cp < 0xe000) {
                    cp = 0xfffd;
                }
                break;
            default: free(buf); return fail(p, "bad escape");
            }
            if (!put_utf8(&buf, &n, &cap, cp)) {
                free(buf);
                return fail(p, "out of memory");
            }
            continue;
        }
        /* raw bytes (UTF-8 or not) pass through */
        if (n + 2 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return fail(p, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return true;
}

static bool value(parser *p, json_value *v);

/* Steps over any JSON value (for raw ids), nesting at most 32 deep. */
static bool skip_value(parser *p, int depth)
{
    ws(p);
    if (depth > 32)
        return fail(p, "nested too deep");
    if (p->i >= p->len)
        return fail(p, "expected a value");
    char c = p->s[p->i];
    if (c == '"') {
        char *str;
        size_t n;
        if (!string(p, &str, &n))
            return false;
        free(str);
        return true;
    }
    if (c == '[' || c == '{') {
        const char close = c == '[' ? ']' : '}';
        p->i++;
        ws(p);
        if (p->i < p->len && p->s[p->i] == close) {
            p->i++;
            return true;
        }
        for (;;) {
            if (c == '{') {
                ws(p);
                char *key;
                size_t kl;
                if (!string(p, &key, &kl))
                    return false;
                free(key);
                ws(p);
                if (p->i >= p->len || p->s[p->i] != ':')
                    return fail(p, "expected ':'");
                p->i++;
            }
            if (!skip_value(p, depth + 1))
                return false;
            ws(p);
            if (p->i < p->len && p->s[p->i] == ',') {
                p->i++;
                continue;
            }
            if (p->i < p->len && p->s[p->i] == close) {
                p->i++;
                return true;
            }
            return fail(p, "expected ',' or a closing bracket");
        }
    }
    json_value tmp;
    memset(&tmp, 0, sizeof tmp);
    bool ok = value(p, &tmp);
    free(tmp.str);
    return ok;
}

static bool skip_value(parser *p, int depth);

/* Whether the array at p->i holds only strings (a stop list). */
static bool all_strings(parser *p)
{
    parser q = *p;
    char msg[8];
    q.msg = msg;
    q.msg_cap = sizeof msg;
    q.i++;
    for (;;) {
        ws(&q);
        if (q.i < q.len && q.s[q.i] == ']')
            return true;
        if (q.i >= q.len || q.s[q.i] != '"' || !skip_value(&q, 1))
            return false;
        ws(&q);
        if (q.i < q.len && q.s[q.i] == ',')
            q.i++;
    }
}

static bool value(parser *p, json_value *v)
{
    ws(p);
    const size_t start = p->i;
    if (p->i >= p->len)
        return fail(p, "expected a value");
    char c = p->s[p->i];
    if (c == '"') {
        v->type = JV_STR;
        if (!string(p, &v->str, &v->str_len))
            return false;
    } else if (c == '{' || (c == '[' && !all_strings(p))) {
        v->type = JV_OTHER;
        if (!skip_value(p, 0))
            return false;
    } else if (c == '[') {
        v->type = JV_STR_ARRAY;
        p->i++;
        ws(p);
        if (p->i < p->len && p->s[p->i] == ']') {
            p->i++;
        } else {
            for (;;) {
                ws(p);
                char *str;
                size_t sl;
                if (!string(p, &str, &sl))
                    return false;
                char **na = realloc(v->arr, sizeof *na * (size_t)(v->n_arr + 1));
                if (!na) {
                    free(str);
                    return fail(p, "out of memory");
                }
                v->arr = na;
                v->arr[v->n_arr++] = str;
                ws(p);
                if (p->i < p->len && p->s[p->i] == ',') {
                    p->i++;
                    continue;
                }
                if (p->i < p->len && p->s[p->i] == ']') {
                    p->i++;
                    break;
                }
                return fail(p, "expected ',' or ']' in an array of strings");
            }
        }
    } else if (at_word(p, "true") || at_word(p, "false")) {
        v->type = JV_BOOL;
        v->b = c == 't';
        p->i += v->b ? 4 : 5;
    } else if (at_word(p, "null")) {
        v->type = JV_NULL;
        p->i += 4;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        char tmp[64];
        size_t k = 0;
        while (p->i < p->len && k < sizeof tmp - 1 && strchr("+-.eE0123456789", p->s[p->i]) &&
               p->s[p->i])
            tmp[k++] = p->s[p->i++];
        tmp[k] = '\0';
        char *end;
        v->num = strtod(tmp, &end);
        if (*end)
            return fail(p, "bad number");
        v->type = JV_NUM;
    } else {
        return fail(p, "unexpected character");
    }
    v->raw = p->s + start;
    v->raw_len = p->i - start;
    return true;
}

bool json_parse_object(const char *s, size_t len, json_object *o, char *msg, size_t msg_cap)
{
    parser p = { s, len, 0, msg, msg_cap };
    memset(o, 0, sizeof *o);
    ws(&p);
    if (p.i >= len || s[p.i] != '{')
        return fail(&p, "expected '{'");
    p.i++;
    ws(&p);
    if (p.i < len && s[p.i] == '}') {
        p.i++;
        goto end;
    }
    for (;;) {
        ws(&p);
        char *key;
        size_t kl;
        if (!string(&p, &key, &kl))
            goto bad;
        json_value *nv = realloc(o->v, sizeof *nv * (size_t)(o->n + 1));
        if (!nv) {
            free(key);
            fail(&p, "out of memory");
            goto bad;
        }
        o->v = nv;
        json_value *v = &o->v[o->n++];
        memset(v, 0, sizeof *v);
        snprintf(v->key, sizeof v->key, "%s", key);
        free(key);
        ws(&p);
        if (p.i >= len || s[p.i] != ':') {
            fail(&p, "expected ':'");
            goto bad;
        }
        p.i++;
        if (!value(&p, v))
            goto bad;
        ws(&p);
        if (p.i < len && s[p.i] == ',') {
            p.i++;
            continue;
        }
        if (p.i < len && s[p.i] == '}') {
            p.i++;
            break;
        }
        fail(&p, "expected ',' or '}'");
        goto bad;
    }
end:
    ws(&p);
    if (p.i != len) {
        fail(&p, "trailing characters after the object");
        goto bad;
    }
    return true;
bad:
    json_object_free(o);
    return false;
}

void json_object_free(json_object *o)
{
    for (int i = 0; i < o->n; i++) {
        free(o->v[i].str);
        for (int k = 0; k < o->v[i].n_arr; k++)
            free(o->v[i].arr[k]);
        free(o->v[i].arr);
    }
    free(o->v);
    memset(o, 0, sizeof *o);
}

const json_value *json_get(const json_object *o, const char *key)
{
    for (int i = o->n - 1; i >= 0; i--)
        if (!strcmp(o->v[i].key, key))
            return &o->v[i];
    return NULL;
}
