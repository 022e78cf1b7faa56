/* The "messages" array of a chat completion request; the library's
 * gl_chat_render turns it into prompt text with the model's template. */
#ifndef GENLOOP_SERVE_CHAT_H
#define GENLOOP_SERVE_CHAT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct chat_msg {
    char *role, *content;
} chat_msg;

typedef struct chat {
    chat_msg *msgs;
    int n;
} chat;

/* Parses the JSON text of a "messages" array (raw, len bytes): objects with
 * "role" (system, user, assistant, tool) and "content" (a string, or an
 * array of {"type": "text", "text": ...} parts, joined). False with a
 * message on error. */
bool chat_parse(const char *raw, size_t len, chat *c, char *msg, size_t msg_cap);
void chat_free(chat *c);

#endif
