#include "chat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../json_in.h"

/* End of the JSON value starting at s[i] that is an object: index past its
 * closing brace, or 0 when unbalanced. Strings are skipped whole. */
static size_t object_end(const char *s, size_t len, size_t i)
{
    int depth = 0;
    bool in_str = false;
    for (; i < len; i++) {
        const char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > 64)
                return 0;
        } else if (c == '}' || c == ']') {
            if (--depth == 0)
                return i + 1;
        }
    }
    return 0;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* "content" as an array of parts, [{"type": "text", "text": "..."}, ...]:
 * the texts joined, malloc'd; NULL when a part is not text or malformed. */
static char *content_parts(const char *raw, size_t len)
{
    size_t i = 0, n = 0;
    char *out = calloc(1, 1);
    while (i < len && raw[i] != '[')
        i++;
    i++;
    while (out) {
        while (i < len && (is_ws(raw[i]) || raw[i] == ','))
            i++;
        if (i < len && raw[i] == ']')
            return out;
        const size_t end = i < len && raw[i] == '{' ? object_end(raw, len, i) : 0;
        json_object o;
        char jmsg[64];
        if (!end || !json_parse_object(raw + i, end - i, &o, jmsg, sizeof jmsg))
            break;
        const json_value *type = json_get(&o, "type"), *text = json_get(&o, "text");
        char *grown = NULL;
        if (type && type->type == JV_STR && !strcmp(type->str, "text") && text &&
            text->type == JV_STR && (grown = realloc(out, n + text->str_len + 1))) {
            memcpy(grown + n, text->str, text->str_len);
            n += text->str_len;
            grown[n] = '\0';
            out = grown;
        }
        json_object_free(&o);
        if (!grown)
            break;
        i = end;
    }
    free(out);
    return NULL;
}

bool chat_parse(const char *raw, size_t len, chat *c, char *msg, size_t msg_cap)
{
    memset(c, 0, sizeof *c);
    size_t i = 0;
    while (i < len && is_ws(raw[i]))
        i++;
    if (i >= len || raw[i] != '[') {
        snprintf(msg, msg_cap, "'messages' must be an array of message objects");
        return false;
    }
    i++;
    for (;;) {
        while (i < len && is_ws(raw[i]))
            i++;
        if (i < len && raw[i] == ']' && c->n == 0)
            break;
        if (i >= len || raw[i] != '{') {
            snprintf(msg, msg_cap, "'messages' must be an array of message objects");
            goto fail;
        }
        const size_t end = object_end(raw, len, i);
        if (!end) {
            snprintf(msg, msg_cap, "'messages' holds an unbalanced object");
            goto fail;
        }
        json_object o;
        char jmsg[128];
        if (!json_parse_object(raw + i, end - i, &o, jmsg, sizeof jmsg)) {
            snprintf(msg, msg_cap, "messages[%d]: %s", c->n, jmsg);
            goto fail;
        }
        const json_value *role = json_get(&o, "role"), *content = json_get(&o, "content");
        char *parts = content && content->type == JV_OTHER
                          ? content_parts(content->raw, content->raw_len)
                          : NULL;
        if (!role || role->type != JV_STR ||
            (content && content->type != JV_STR && content->type != JV_NULL && !parts) ||
            (!content && strcmp(role->str, "assistant"))) {
            snprintf(msg, msg_cap,
                     "messages[%d] needs a string 'role' and a 'content' string or array of "
                     "text parts",
                     c->n);
            json_object_free(&o);
            goto fail;
        }
        chat_msg *nm = realloc(c->msgs, sizeof *nm * (size_t)(c->n + 1));
        if (!nm) {
            free(parts);
            json_object_free(&o);
            snprintf(msg, msg_cap, "out of memory");
            goto fail;
        }
        c->msgs = nm;
        const bool has = content && content->type == JV_STR;
        c->msgs[c->n].role = strdup(role->str);
        c->msgs[c->n].content = parts ? parts : strdup(has ? content->str : "");
        c->n++;
        json_object_free(&o);
        if (!c->msgs[c->n - 1].role || !c->msgs[c->n - 1].content) {
            snprintf(msg, msg_cap, "out of memory");
            goto fail;
        }
        i = end;
        while (i < len && is_ws(raw[i]))
            i++;
        if (i < len && raw[i] == ',') {
            i++;
            continue;
        }
        if (i < len && raw[i] == ']')
            break;
        snprintf(msg, msg_cap, "'messages': expected ',' or ']'");
        goto fail;
    }
    if (c->n == 0) {
        snprintf(msg, msg_cap, "'messages' must hold at least one message");
        return false;
    }
    return true;
fail:
    chat_free(c);
    return false;
}

void chat_free(chat *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->msgs[i].role);
        free(c->msgs[i].content);
    }
    free(c->msgs);
    memset(c, 0, sizeof *c);
}
