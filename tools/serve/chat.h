/* Chat messages to prompt text. The rendering is one function (chat_render)
 * so a real chat-template engine can replace it in one place. */
#ifndef GENLOOP_SERVE_CHAT_H
#define GENLOOP_SERVE_CHAT_H

#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"

typedef struct chat_msg {
    char *role, *content;
} chat_msg;

typedef struct chat {
    chat_msg *msgs;
    int n;
} chat;

/* Parses the JSON text of a "messages" array (raw, len bytes): objects with
 * "role" (system, user, assistant, tool) and "content" (a string). False
 * with a message on error. */
bool chat_parse(const char *raw, size_t len, chat *c, char *msg, size_t msg_cap);
void chat_free(chat *c);

/* Renders the conversation as the model's chat template asks (tmpl: the
 * GGUF's tokenizer.chat_template, may be NULL), ending where the assistant's
 * reply starts. Understood: Llama-2 ([INST]) templates; anything else gets
 * ChatML. */
void chat_render(const char *tmpl, const chat *c, sbuf *out);

#endif
