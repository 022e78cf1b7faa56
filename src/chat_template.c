/* Chat templates without a template engine.
 *
 * A GGUF stores its chat format as Jinja source (tokenizer.chat_template).
 * Rather than interpret Jinja, we recognise which well-known family the
 * source belongs to from marker strings it contains (the same heuristics
 * the reference implementation uses, so a model renders the same prompt
 * here and there) and render that family's format with plain string
 * building. Each family below states the exact byte layout it produces.
 *
 * Unknown sources are not an error here: gl_chat_template_family() returns
 * NULL and gl_chat_render() falls back to ChatML; callers warn. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "genloop.h"

typedef enum family {
    F_CHATML,
    F_LLAMA2,
    F_LLAMA2_SYS,
    F_LLAMA2_SYS_BOS,
    F_LLAMA2_SYS_STRIP,
    F_MISTRAL_V1,
    F_MISTRAL_V3,
    F_MISTRAL_V3_TEKKEN,
    F_MISTRAL_V7,
    F_PHI3,
    F_PHI4,
    F_FALCON3,
    F_ZEPHYR,
    F_MONARCH,
    F_GEMMA,
    F_ORION,
    F_OPENCHAT,
    F_VICUNA,
    F_VICUNA_ORCA,
    F_DEEPSEEK,
    F_DEEPSEEK2,
    F_DEEPSEEK3,
    F_COMMAND_R,
    F_LLAMA3,
    F_CHATGLM3,
    F_CHATGLM4,
    F_GLMEDGE,
    F_MINICPM,
    F_EXAONE3,
    F_RWKV_WORLD,
    F_GRANITE,
    F_GIGACHAT,
    F_MEGREZ,
    F_COUNT,
    F_UNKNOWN = -1,
} family;

/* Names as --chat-template accepts them (the reference's names). */
static const char *const family_names[F_COUNT] = {
    [F_CHATML] = "chatml",
    [F_LLAMA2] = "llama2",
    [F_LLAMA2_SYS] = "llama2-sys",
    [F_LLAMA2_SYS_BOS] = "llama2-sys-bos",
    [F_LLAMA2_SYS_STRIP] = "llama2-sys-strip",
    [F_MISTRAL_V1] = "mistral-v1",
    [F_MISTRAL_V3] = "mistral-v3",
    [F_MISTRAL_V3_TEKKEN] = "mistral-v3-tekken",
    [F_MISTRAL_V7] = "mistral-v7",
    [F_PHI3] = "phi3",
    [F_PHI4] = "phi4",
    [F_FALCON3] = "falcon3",
    [F_ZEPHYR] = "zephyr",
    [F_MONARCH] = "monarch",
    [F_GEMMA] = "gemma",
    [F_ORION] = "orion",
    [F_OPENCHAT] = "openchat",
    [F_VICUNA] = "vicuna",
    [F_VICUNA_ORCA] = "vicuna-orca",
    [F_DEEPSEEK] = "deepseek",
    [F_DEEPSEEK2] = "deepseek2",
    [F_DEEPSEEK3] = "deepseek3",
    [F_COMMAND_R] = "command-r",
    [F_LLAMA3] = "llama3",
    [F_CHATGLM3] = "chatglm3",
    [F_CHATGLM4] = "chatglm4",
    [F_GLMEDGE] = "glmedge",
    [F_MINICPM] = "minicpm",
    [F_EXAONE3] = "exaone3",
    [F_RWKV_WORLD] = "rwkv-world",
    [F_GRANITE] = "granite",
    [F_GIGACHAT] = "gigachat",
    [F_MEGREZ] = "megrez",
};

/* ---- recognising a template ------------------------------------------------ */

static bool has(const char *s, const char *needle)
{
    return strstr(s, needle) != NULL;
}

static family detect_mistral_or_llama2(const char *t)
{
    if (has(t, "[SYSTEM_PROMPT]"))
        return F_MISTRAL_V7;
    /* Mistral's official v1 / v3 / v3-tekken sources */
    if (has(t, "' [INST] ' + system_message") || has(t, "[AVAILABLE_TOOLS]")) {
        if (has(t, " [INST]"))
            return F_MISTRAL_V1;
        if (has(t, "\"[INST]\""))
            return F_MISTRAL_V3_TEKKEN;
        return F_MISTRAL_V3;
    }
    /* Llama 2 and its variants, most specific first */
    if (has(t, "content.strip()"))
        return F_LLAMA2_SYS_STRIP;
    if (has(t, "bos_token + '[INST]"))
        return F_LLAMA2_SYS_BOS;
    if (has(t, "<<SYS>>"))
        return F_LLAMA2_SYS;
    return F_LLAMA2;
}

static family detect(const char *t)
{
    if (!t)
        return F_UNKNOWN;
    for (int f = 0; f < F_COUNT; f++)
        if (!strcmp(t, family_names[f]))
            return (family)f;
    /* Marker strings, in an order where earlier families' markers do not
     * occur in later ones' sources. */
    if (has(t, "<|im_start|>"))
        return has(t, "<|im_sep|>") ? F_PHI4 : F_CHATML;
    if (!strncmp(t, "mistral", 7) || has(t, "[INST]"))
        return detect_mistral_or_llama2(t);
    if (has(t, "<|assistant|>") && has(t, "<|end|>"))
        return F_PHI3;
    if (has(t, "<|assistant|>") && has(t, "<|user|>"))
        return has(t, "</s>") ? F_FALCON3 : F_GLMEDGE;
    if (has(t, "<|user|>") && has(t, "<|endoftext|>"))
        return F_ZEPHYR;
    if (has(t, "bos_token + message['role']"))
        return F_MONARCH;
    if (has(t, "<start_of_turn>"))
        return F_GEMMA;
    if (has(t, "'\\n\\nAssistant: ' + eos_token"))
        return F_ORION;
    if (has(t, "GPT4 Correct "))
        return F_OPENCHAT;
    if (has(t, "USER: ") && has(t, "ASSISTANT: "))
        return has(t, "SYSTEM: ") ? F_VICUNA_ORCA : F_VICUNA;
    if (has(t, "### Instruction:") && has(t, "<|EOT|>"))
        return F_DEEPSEEK;
    if (has(t, "<|START_OF_TURN_TOKEN|>") && has(t, "<|USER_TOKEN|>"))
        return F_COMMAND_R;
    if (has(t, "<|start_header_id|>") && has(t, "<|end_header_id|>"))
        return F_LLAMA3;
    if (has(t, "[gMASK]sop"))
        return F_CHATGLM3;
    if (has(t, "[gMASK]<sop>"))
        return F_CHATGLM4;
    if (has(t, "<\xE7\x94\xA8\xE6\x88\xB7>")) /* <用户> */
        return F_MINICPM;
    if (has(t, "'Assistant: ' + message['content'] + eos_token"))
        return F_DEEPSEEK2;
    if (has(t, "<\xEF\xBD\x9C"
               "Assistant\xEF\xBD\x9C>") &&
        has(t, "<\xEF\xBD\x9CUser\xEF\xBD\x9C>") &&
        has(t, "<\xEF\xBD\x9C"
               "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"))
        return F_DEEPSEEK3;
    if (has(t, "[|system|]") && has(t, "[|assistant|]") && has(t, "[|endofturn|]"))
        return F_EXAONE3;
    if (has(t, "rwkv-world"))
        return F_RWKV_WORLD;
    if (has(t, "<|start_of_role|>"))
        return F_GRANITE;
    if (has(t, "message['role'] + additional_special_tokens[0] + message['content'] + "
               "additional_special_tokens[1]"))
        return F_GIGACHAT;
    if (has(t, "<|role_start|>"))
        return F_MEGREZ;
    return F_UNKNOWN;
}

const char *gl_chat_template_family(const char *tmpl)
{
    family f = detect(tmpl);
    return f == F_UNKNOWN ? NULL : family_names[f];
}

int gl_chat_template_names(const char **names, int cap)
{
    for (int i = 0; i < F_COUNT && i < cap; i++)
        names[i] = family_names[i];
    return F_COUNT;
}

/* ---- rendering --------------------------------------------------------------- */

/* Growing output; on allocation failure `failed` sticks and writes stop. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool failed;
} sbuf;

static void put_n(sbuf *b, const char *s, size_t n)
{
    if (b->failed || n == 0)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void put(sbuf *b, const char *s)
{
    put_n(b, s, strlen(s));
}

/* s without leading and trailing ASCII white space (start, and its length
 * in *n), as the formats that strip their messages write it. */
static const char *trimmed(const char *s, size_t *n)
{
    size_t end = strlen(s), i = 0;
    while (i < end && isspace((unsigned char)s[i]))
        i++;
    while (end > i && isspace((unsigned char)s[end - 1]))
        end--;
    *n = end - i;
    return s + i;
}

static void put_trimmed(sbuf *b, const char *s)
{
    size_t n;
    const char *t = trimmed(s, &n);
    put_n(b, t, n);
}

static bool is_role(const gl_chat_message *m, const char *role)
{
    return m->role && !strcmp(m->role, role);
}

static const char *content(const gl_chat_message *m)
{
    return m->content ? m->content : "";
}

static const char *role(const gl_chat_message *m)
{
    return m->role ? m->role : "";
}

/* Mistral v1/v3/v3-tekken: "[INST]" opens a turn that a system and a user
 * message fill, an assistant message closes it with "</s>". v1 puts a
 * space before "[INST]" and "[/INST]", tekken none after "[INST]", v3
 * strips assistant messages. */
static void render_mistral(sbuf *b, family f, const gl_chat_message *m, int n, const char *eos)
{
    const char *lead = f == F_MISTRAL_V1 ? " " : "";
    const char *trail = f == F_MISTRAL_V3_TEKKEN ? "" : " ";
    bool in_turn = false;
    for (int i = 0; i < n; i++) {
        if (!in_turn) {
            put(b, lead);
            put(b, "[INST]");
            put(b, trail);
            in_turn = true;
        }
        if (is_role(&m[i], "system")) {
            put(b, content(&m[i]));
            put(b, "\n\n");
        } else if (is_role(&m[i], "user")) {
            put(b, content(&m[i]));
            put(b, lead);
            put(b, "[/INST]");
        } else {
            put(b, trail);
            if (f == F_MISTRAL_V3)
                put_trimmed(b, content(&m[i]));
            else
                put(b, content(&m[i]));
            put(b, eos);
            in_turn = false;
        }
    }
}

/* Llama 2: "[INST] " opens, a user message ends with " [/INST]", an
 * assistant one with "</s>" (the next turn's "[INST] " then follows, with
 * BOS before it in the -bos variant). The system message goes in <<SYS>>
 * tags, or bare with a newline in the plain variant. */
static void render_llama2(sbuf *b, family f, const gl_chat_message *m, int n, const char *bos,
                          const char *eos)
{
    const bool sys_tags = f != F_LLAMA2, strip = f == F_LLAMA2_SYS_STRIP;
    bool in_turn = true; /* the first "[INST] " comes without BOS */
    put(b, "[INST] ");
    for (int i = 0; i < n; i++) {
        if (!in_turn) {
            in_turn = true;
            if (f == F_LLAMA2_SYS_BOS)
                put(b, bos);
            put(b, "[INST] ");
        }
        size_t tn;
        const char *text = strip ? trimmed(content(&m[i]), &tn) : content(&m[i]);
        if (!strip)
            tn = strlen(text);
        if (is_role(&m[i], "system")) {
            if (sys_tags) {
                put(b, "<<SYS>>\n");
                put_n(b, text, tn);
                put(b, "\n<</SYS>>\n\n");
            } else {
                put_n(b, text, tn);
                put(b, "\n");
            }
        } else if (is_role(&m[i], "user")) {
            put_n(b, text, tn);
            put(b, " [/INST]");
        } else {
            put_n(b, text, tn);
            put(b, eos);
            in_turn = false;
        }
    }
}

/* Gemma: no system role (it is merged into the next user turn, stripped),
 * "assistant" is "model", every message is stripped. */
static void render_gemma(sbuf *b, const gl_chat_message *m, int n, bool gen)
{
    const char *system = NULL;
    for (int i = 0; i < n; i++) {
        if (is_role(&m[i], "system")) {
            system = content(&m[i]);
            continue;
        }
        const bool model = is_role(&m[i], "assistant");
        put(b, "<start_of_turn>");
        put(b, model ? "model" : role(&m[i]));
        put(b, "\n");
        size_t sn;
        const char *sys = system && !model ? trimmed(system, &sn) : NULL;
        if (sys && sn) {
            put_n(b, sys, sn);
            put(b, "\n\n");
            system = NULL;
        }
        put_trimmed(b, content(&m[i]));
        put(b, "<end_of_turn>\n");
    }
    if (gen)
        put(b, "<start_of_turn>model\n");
}

static void render(sbuf *b, family f, const gl_chat_message *m, int n, bool gen, const char *bos,
                   const char *eos)
{
    switch (f) {
    case F_UNKNOWN:
    case F_COUNT:
    case F_CHATML:
        for (int i = 0; i < n; i++) {
            put(b, "<|im_start|>");
            put(b, role(&m[i]));
            put(b, "\n");
            put(b, content(&m[i]));
            put(b, "<|im_end|>\n");
        }
        if (gen)
            put(b, "<|im_start|>assistant\n");
        break;
    case F_MISTRAL_V7:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "system")) {
                put(b, "[SYSTEM_PROMPT] ");
                put(b, content(&m[i]));
                put(b, "[/SYSTEM_PROMPT]");
            } else if (is_role(&m[i], "user")) {
                put(b, "[INST] ");
                put(b, content(&m[i]));
                put(b, "[/INST]");
            } else {
                put(b, " ");
                put(b, content(&m[i]));
                put(b, eos);
            }
        }
        break;
    case F_MISTRAL_V1:
    case F_MISTRAL_V3:
    case F_MISTRAL_V3_TEKKEN: render_mistral(b, f, m, n, eos); break;
    case F_LLAMA2:
    case F_LLAMA2_SYS:
    case F_LLAMA2_SYS_BOS:
    case F_LLAMA2_SYS_STRIP: render_llama2(b, f, m, n, bos, eos); break;
    case F_PHI3:
        for (int i = 0; i < n; i++) {
            put(b, "<|");
            put(b, role(&m[i]));
            put(b, "|>\n");
            put(b, content(&m[i]));
            put(b, "<|end|>\n");
        }
        if (gen)
            put(b, "<|assistant|>\n");
        break;
    case F_PHI4:
        for (int i = 0; i < n; i++) {
            put(b, "<|im_start|>");
            put(b, role(&m[i]));
            put(b, "<|im_sep|>");
            put(b, content(&m[i]));
            put(b, "<|im_end|>");
        }
        if (gen)
            put(b, "<|im_start|>assistant<|im_sep|>");
        break;
    case F_FALCON3:
        for (int i = 0; i < n; i++) {
            put(b, "<|");
            put(b, role(&m[i]));
            put(b, "|>\n");
            put(b, content(&m[i]));
            put(b, "\n");
        }
        if (gen)
            put(b, "<|assistant|>\n");
        break;
    case F_ZEPHYR:
        for (int i = 0; i < n; i++) {
            put(b, "<|");
            put(b, role(&m[i]));
            put(b, "|>\n");
            put(b, content(&m[i]));
            put(b, "<|endoftext|>\n");
        }
        if (gen)
            put(b, "<|assistant|>\n");
        break;
    case F_MONARCH: /* BOS inside the history, not before the first message */
        for (int i = 0; i < n; i++) {
            if (i > 0)
                put(b, bos);
            put(b, role(&m[i]));
            put(b, "\n");
            put(b, content(&m[i]));
            put(b, eos);
            put(b, "\n");
        }
        if (gen) {
            put(b, bos);
            put(b, "assistant\n");
        }
        break;
    case F_GEMMA: render_gemma(b, m, n, gen); break;
    case F_ORION: {
        const char *system = NULL;
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "system")) {
                system = content(&m[i]);
            } else if (is_role(&m[i], "user")) {
                put(b, "Human: ");
                if (system && system[0]) {
                    put(b, system);
                    put(b, "\n\n");
                    system = NULL;
                }
                put(b, content(&m[i]));
                put(b, "\n\nAssistant: ");
                put(b, eos);
            } else {
                put(b, content(&m[i]));
                put(b, eos);
            }
        }
        break;
    }
    case F_OPENCHAT:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "system")) {
                put(b, content(&m[i]));
            } else {
                const char *r = role(&m[i]);
                char first[2] = { (char)toupper((unsigned char)r[0]), 0 };
                put(b, "GPT4 Correct ");
                put(b, first);
                if (r[0])
                    put(b, r + 1);
                put(b, ": ");
                put(b, content(&m[i]));
            }
            put(b, "<|end_of_turn|>");
        }
        if (gen)
            put(b, "GPT4 Correct Assistant:");
        break;
    case F_VICUNA:
    case F_VICUNA_ORCA:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "system")) {
                if (f == F_VICUNA_ORCA) {
                    put(b, "SYSTEM: ");
                    put(b, content(&m[i]));
                    put(b, "\n");
                } else {
                    put(b, content(&m[i]));
                    put(b, "\n\n");
                }
            } else if (is_role(&m[i], "user")) {
                put(b, "USER: ");
                put(b, content(&m[i]));
                put(b, "\n");
            } else if (is_role(&m[i], "assistant")) {
                put(b, "ASSISTANT: ");
                put(b, content(&m[i]));
                put(b, eos);
                put(b, "\n");
            }
        }
        if (gen)
            put(b, "ASSISTANT:");
        break;
    case F_DEEPSEEK:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "system")) {
                put(b, content(&m[i]));
            } else if (is_role(&m[i], "user")) {
                put(b, "### Instruction:\n");
                put(b, content(&m[i]));
                put(b, "\n");
            } else if (is_role(&m[i], "assistant")) {
                put(b, "### Response:\n");
                put(b, content(&m[i]));
                put(b, "\n<|EOT|>\n");
            }
        }
        if (gen)
            put(b, "### Response:\n");
        break;
    case F_DEEPSEEK2:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "system")) {
                put(b, content(&m[i]));
                put(b, "\n\n");
            } else if (is_role(&m[i], "user")) {
                put(b, "User: ");
                put(b, content(&m[i]));
                put(b, "\n\n");
            } else if (is_role(&m[i], "assistant")) {
                put(b, "Assistant: ");
                put(b, content(&m[i]));
                put(b, eos);
            }
        }
        if (gen)
            put(b, "Assistant:");
        break;
    case F_DEEPSEEK3:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "system")) {
                put(b, content(&m[i]));
                put(b, "\n\n");
            } else if (is_role(&m[i], "user")) {
                put(b, "<\xEF\xBD\x9CUser\xEF\xBD\x9C>");
                put(b, content(&m[i]));
            } else if (is_role(&m[i], "assistant")) {
                put(b, "<\xEF\xBD\x9C"
                       "Assistant\xEF\xBD\x9C>");
                put(b, content(&m[i]));
                put(b, eos);
            }
        }
        if (gen)
            put(b, "<\xEF\xBD\x9C"
                   "Assistant\xEF\xBD\x9C>");
        break;
    case F_COMMAND_R:
        for (int i = 0; i < n; i++) {
            const char *tag = is_role(&m[i], "system")      ? "<|SYSTEM_TOKEN|>"
                              : is_role(&m[i], "user")      ? "<|USER_TOKEN|>"
                              : is_role(&m[i], "assistant") ? "<|CHATBOT_TOKEN|>"
                                                            : NULL;
            if (!tag)
                continue;
            put(b, "<|START_OF_TURN_TOKEN|>");
            put(b, tag);
            put_trimmed(b, content(&m[i]));
            put(b, "<|END_OF_TURN_TOKEN|>");
        }
        if (gen)
            put(b, "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>");
        break;
    case F_LLAMA3:
        for (int i = 0; i < n; i++) {
            put(b, "<|start_header_id|>");
            put(b, role(&m[i]));
            put(b, "<|end_header_id|>\n\n");
            put_trimmed(b, content(&m[i]));
            put(b, "<|eot_id|>");
        }
        if (gen)
            put(b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
        break;
    case F_CHATGLM3:
    case F_CHATGLM4:
    case F_GLMEDGE:
        if (f == F_CHATGLM3)
            put(b, "[gMASK]sop");
        else if (f == F_CHATGLM4)
            put(b, "[gMASK]<sop>");
        for (int i = 0; i < n; i++) {
            put(b, "<|");
            put(b, role(&m[i]));
            put(b, f == F_CHATGLM3 ? "|>\n " : "|>\n");
            put(b, content(&m[i]));
        }
        if (gen)
            put(b, "<|assistant|>");
        break;
    case F_MINICPM:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "user")) {
                put(b, "<\xE7\x94\xA8\xE6\x88\xB7>");
                put_trimmed(b, content(&m[i]));
                put(b, "<AI>");
            } else {
                put_trimmed(b, content(&m[i]));
            }
        }
        break;
    case F_EXAONE3:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "system")) {
                put(b, "[|system|]");
                put_trimmed(b, content(&m[i]));
                put(b, "[|endofturn|]\n");
            } else if (is_role(&m[i], "user")) {
                put(b, "[|user|]");
                put_trimmed(b, content(&m[i]));
                put(b, "\n");
            } else if (is_role(&m[i], "assistant")) {
                put(b, "[|assistant|]");
                put_trimmed(b, content(&m[i]));
                put(b, "[|endofturn|]\n");
            }
        }
        if (gen)
            put(b, "[|assistant|]");
        break;
    case F_RWKV_WORLD:
        for (int i = 0; i < n; i++) {
            if (is_role(&m[i], "user")) {
                put(b, "User: ");
                put(b, content(&m[i]));
                put(b, "\n\nAssistant:");
            } else {
                put(b, content(&m[i]));
                put(b, "\n\n");
            }
        }
        break;
    case F_GRANITE:
        for (int i = 0; i < n; i++) {
            put(b, "<|start_of_role|>");
            put(b, role(&m[i]));
            put(b, "<|end_of_role|>");
            if (is_role(&m[i], "assistant_tool_call"))
                put(b, "<|tool_call|>");
            put(b, content(&m[i]));
            put(b, "<|end_of_text|>\n");
        }
        if (gen)
            put(b, "<|start_of_role|>assistant<|end_of_role|>\n");
        break;
    case F_GIGACHAT: {
        const bool sys = n > 0 && is_role(&m[0], "system");
        put(b, bos);
        if (sys) {
            put(b, content(&m[0]));
            put(b, "<|message_sep|>");
        }
        for (int i = sys ? 1 : 0; i < n; i++) {
            if (is_role(&m[i], "user")) {
                put(b, "user<|role_sep|>");
                put(b, content(&m[i]));
                put(b, "<|message_sep|>available functions<|role_sep|>[]<|message_sep|>");
            } else if (is_role(&m[i], "assistant")) {
                put(b, "assistant<|role_sep|>");
                put(b, content(&m[i]));
                put(b, "<|message_sep|>");
            }
        }
        if (gen)
            put(b, "assistant<|role_sep|>");
        break;
    }
    case F_MEGREZ:
        for (int i = 0; i < n; i++) {
            put(b, "<|role_start|>");
            put(b, role(&m[i]));
            put(b, "<|role_end|>");
            put(b, content(&m[i]));
            put(b, "<|turn_end|>");
        }
        if (gen)
            put(b, "<|role_start|>assistant<|role_end|>");
        break;
    }
}

/* The BOS / EOS text a family writes when the caller gives none. */
static const char *default_eos(family f)
{
    return f == F_DEEPSEEK2 || f == F_DEEPSEEK3
               ? "<\xEF\xBD\x9C"
                 "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"
               : "</s>";
}

int gl_chat_render(const char *tmpl, const gl_chat_message *msgs, int n_msgs,
                   bool add_generation_prompt, const char *bos, const char *eos, char *out,
                   size_t cap, gl_error *err)
{
    if (n_msgs < 0 || (n_msgs > 0 && !msgs) || (cap > 0 && !out)) {
        gl_fail(err, GL_ERR_ARG, "gl_chat_render: invalid argument");
        return -1;
    }
    family f = detect(tmpl);
    if (f == F_UNKNOWN)
        f = F_CHATML;
    if (!bos || !bos[0])
        bos = "<s>";
    if (!eos || !eos[0])
        eos = default_eos(f);
    sbuf b = { 0 };
    render(&b, f, msgs, n_msgs, add_generation_prompt, bos, eos);
    if (b.failed || b.n > (size_t)INT32_MAX) {
        free(b.p);
        gl_fail(err, GL_ERR_NOMEM, "out of memory rendering a chat of %d messages", n_msgs);
        return -1;
    }
    if (cap > 0) {
        size_t k = b.n < cap - 1 ? b.n : cap - 1;
        if (k)
            memcpy(out, b.p, k);
        out[k] = '\0';
    }
    free(b.p);
    return (int)b.n;
}
