/* Chat templates and the chat front ends: the shared table of template
 * cases (../shared/chat/templates.json) rendered through the API and through
 * `genloop template`, with and without the generation prompt; the real
 * models' templates (../shared/chat/jinja) recognised as their family;
 * `genloop chat` through a pipe and under a pseudo-terminal (Ctrl-C). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_run.h"
#include "genloop.h"
#include "shared_data.h"

static const char *shared_path(const char *rel)
{
    static char buf[8][4096];
    static int k;
    char *p = buf[k++ & 7];
    if (!td_path(p, sizeof buf[0], rel)) {
        fprintf(stderr, "SKIP: ../shared not found (set GENLOOP_SHARED)\n");
        cr_skip_test("SKIP: ../shared not found (set GENLOOP_SHARED)");
    }
    return p;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return s;
}

/* ---- a small JSON reader for the test table -------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    bool b;
    char *s; /* J_STR */
    struct jval *items; /* J_ARR, J_OBJ (values) */
    char **keys;        /* J_OBJ */
    int n;
} jval;

static void jskip(const char **p)
{
    while (**p == ' ' || **p == '\n' || **p == '\r' || **p == '\t')
        (*p)++;
}

static void put_utf8(char **w, unsigned cp)
{
    char *o = *w;
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | cp >> 12);
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | cp >> 18);
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    *w = o;
}

static char *jstring(const char **p)
{
    cr_assert_eq(**p, '"');
    (*p)++;
    const char *q = *p;
    size_t n = 0;
    while (q[n] && q[n] != '"')
        n += q[n] == '\\' ? 2 : 1;
    char *s = malloc(n + 1), *w = s;
    while (**p != '"') {
        char c = *(*p)++;
        if (c != '\\') {
            *w++ = c;
            continue;
        }
        c = *(*p)++;
        switch (c) {
        case 'n': *w++ = '\n'; break;
        case 't': *w++ = '\t'; break;
        case 'r': *w++ = '\r'; break;
        case 'b': *w++ = '\b'; break;
        case 'f': *w++ = '\f'; break;
        case 'u': {
            unsigned cp = (unsigned)strtoul((char[5]){ (*p)[0], (*p)[1], (*p)[2], (*p)[3], 0 },
                                            NULL, 16);
            *p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && (*p)[0] == '\\' && (*p)[1] == 'u') {
                unsigned lo = (unsigned)strtoul(
                    (char[5]){ (*p)[2], (*p)[3], (*p)[4], (*p)[5], 0 }, NULL, 16);
                *p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            put_utf8(&w, cp);
            break;
        }
        default: *w++ = c; break;
        }
    }
    (*p)++;
    *w = '\0';
    return s;
}

static jval jparse(const char **p)
{
    jval v = { 0 };
    jskip(p);
    if (**p == '"') {
        v.t = J_STR;
        v.s = jstring(p);
    } else if (**p == '[' || **p == '{') {
        const bool obj = **p == '{';
        const char close = obj ? '}' : ']';
        v.t = obj ? J_OBJ : J_ARR;
        (*p)++;
        int cap = 0;
        for (;;) {
            jskip(p);
            if (**p == close) {
                (*p)++;
                break;
            }
            if (**p == ',') {
                (*p)++;
                continue;
            }
            if (v.n == cap) {
                cap = cap ? 2 * cap : 8;
                v.items = realloc(v.items, (size_t)cap * sizeof *v.items);
                v.keys = realloc(v.keys, (size_t)cap * sizeof *v.keys);
            }
            v.keys[v.n] = NULL;
            if (obj) {
                v.keys[v.n] = jstring(p);
                jskip(p);
                cr_assert_eq(**p, ':');
                (*p)++;
            }
            v.items[v.n] = jparse(p);
            v.n++;
        }
    } else if (!strncmp(*p, "true", 4) || !strncmp(*p, "false", 5)) {
        v.t = J_BOOL;
        v.b = **p == 't';
        *p += v.b ? 4 : 5;
    } else if (!strncmp(*p, "null", 4)) {
        *p += 4;
    } else {
        v.t = J_NUM;
        strtod(*p, (char **)p);
    }
    return v;
}

static const jval *jget(const jval *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (o->keys[i] && !strcmp(o->keys[i], key))
            return &o->items[i];
    return NULL;
}

static const char *jstr(const jval *o, const char *key)
{
    const jval *v = jget(o, key);
    cr_assert(v && v->t == J_STR, "key %s missing", key);
    return v->s;
}

/* ---- the template table ------------------------------------------------------ */

typedef struct tcase {
    const char *name, *tmpl, *bos, *eos, *expected;
    gl_chat_message msgs[16];
    int n_msgs;
    const jval *messages;
} tcase;

static jval table;
static char *table_text;

static int load_table(tcase *cases, int cap)
{
    table_text = slurp(shared_path("chat/templates.json"), NULL);
    const char *p = table_text;
    table = jparse(&p);
    cr_assert_eq(table.t, J_ARR);
    cr_assert_leq(table.n, cap);
    for (int i = 0; i < table.n; i++) {
        const jval *c = &table.items[i];
        tcase *t = &cases[i];
        t->name = jstr(c, "name");
        t->tmpl = jstr(c, "template");
        t->bos = jstr(c, "bos_token");
        t->eos = jstr(c, "eos_token");
        t->expected = jstr(c, "expected");
        t->messages = jget(c, "messages");
        cr_assert(t->messages && t->messages->t == J_ARR && t->messages->n <= 16);
        t->n_msgs = t->messages->n;
        for (int k = 0; k < t->n_msgs; k++) {
            t->msgs[k].role = jstr(&t->messages->items[k], "role");
            t->msgs[k].content = jstr(&t->messages->items[k], "content");
        }
    }
    return table.n;
}

/* The text each family appends as the generation prompt (the header that
 * opens the assistant's answer); "" for the formats that add none. */
static const char *generation_prompt(const char *family)
{
    static const struct {
        const char *family, *prompt;
    } t[] = {
        { "chatml", "<|im_start|>assistant\n" },
        { "phi3", "<|assistant|>\n" },
        { "phi4", "<|im_start|>assistant<|im_sep|>" },
        { "falcon3", "<|assistant|>\n" },
        { "zephyr", "<|assistant|>\n" },
        { "monarch", "<s>assistant\n" },
        { "gemma", "<start_of_turn>model\n" },
        { "openchat", "GPT4 Correct Assistant:" },
        { "vicuna", "ASSISTANT:" },
        { "vicuna-orca", "ASSISTANT:" },
        { "deepseek", "### Response:\n" },
        { "deepseek2", "Assistant:" },
        { "deepseek3", "<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>" },
        { "command-r", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>" },
        { "llama3", "<|start_header_id|>assistant<|end_header_id|>\n\n" },
        { "chatglm3", "<|assistant|>" },
        { "chatglm4", "<|assistant|>" },
        { "glmedge", "<|assistant|>" },
        { "exaone3", "[|assistant|]" },
        { "granite", "<|start_of_role|>assistant<|end_of_role|>\n" },
        { "gigachat", "assistant<|role_sep|>" },
        { "megrez", "<|role_start|>assistant<|role_end|>" },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].family, family))
            return t[i].prompt;
    return ""; /* llama2*, mistral*, orion, minicpm, rwkv-world */
}

static char *render(const char *tmpl, const tcase *c, bool gen)
{
    gl_error err;
    int n = gl_chat_render(tmpl, c->msgs, c->n_msgs, gen, c->bos, c->eos, NULL, 0, &err);
    cr_assert_geq(n, 0, "%s: %s", c->name, err.msg);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(gl_chat_render(tmpl, c->msgs, c->n_msgs, gen, c->bos, c->eos, s, (size_t)n + 1,
                                &err),
                 n);
    return s;
}

Test(chat_template, table_through_api)
{
    static tcase cases[64];
    int n = load_table(cases, 64);
    cr_assert_eq(n, 30);
    int ok = 0, ok_no_gen = 0;
    for (int i = 0; i < n; i++) {
        const tcase *c = &cases[i];
        const char *fam = gl_chat_template_family(c->tmpl);
        cr_expect_not_null(fam, "%s: template not recognised", c->name);
        if (!fam)
            continue;
        char *with = render(c->tmpl, c, true);
        ok += !strcmp(with, c->expected);
        cr_expect_str_eq(with, c->expected, "%s (%s)", c->name, fam);
        /* Without the generation prompt: the expected text minus the
         * family's assistant header. */
        char *without = render(c->tmpl, c, false);
        const char *gp = generation_prompt(fam);
        size_t le = strlen(c->expected), lg = strlen(gp);
        bool same = le >= lg && !strcmp(c->expected + le - lg, gp) &&
                    strlen(without) == le - lg && !memcmp(without, c->expected, le - lg);
        ok_no_gen += same;
        cr_expect(same, "%s (%s): without the generation prompt got '%s'", c->name, fam, without);
        /* A family name renders the same as the source. */
        char *by_name = render(fam, c, true);
        cr_expect_str_eq(by_name, with, "%s: --chat-template %s differs", c->name, fam);
        free(by_name);
        free(with);
        free(without);
    }
    fprintf(stderr, "chat templates (API): %d/%d expected, %d/%d without generation prompt\n", ok,
            n, ok_no_gen, n);
}

/* Writes s to a fresh temporary file; returns its path (static slot). */
static const char *temp_file(const char *s, size_t len)
{
    static char path[8][64];
    static int k;
    char *p = path[k++ & 7];
    snprintf(p, sizeof path[0], "/tmp/genloop-chat-XXXXXX");
    int fd = mkstemp(p);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, s, len), (ssize_t)len);
    close(fd);
    return p;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static run_out r;

Test(chat_template, table_through_cli)
{
    static tcase cases[64];
    int n = load_table(cases, 64);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        const tcase *c = &cases[i];
        const char *tf = temp_file(c->tmpl, strlen(c->tmpl));
        char *mj;
        size_t mlen;
        FILE *f = open_memstream(&mj, &mlen);
        fputc('[', f);
        for (int k = 0; k < c->n_msgs; k++) {
            fputs(k ? ", {\"role\": " : "{\"role\": ", f);
            json_str(f, c->msgs[k].role);
            fputs(", \"content\": ", f);
            json_str(f, c->msgs[k].content);
            fputc('}', f);
        }
        fputs("]\n", f);
        fclose(f);
        const char *mf = temp_file(mj, mlen);
        free(mj);
        const char *argv[16] = { "template", "--template-file", tf, "--messages", mf };
        int na = 5;
        if (c->bos[0]) {
            argv[na++] = "--bos";
            argv[na++] = c->bos;
        }
        if (c->eos[0]) {
            argv[na++] = "--eos";
            argv[na++] = c->eos;
        }
        argv[na] = NULL;
        cr_assert_eq(cli_run(&r, NULL, 0, argv), 0);
        cr_expect_eq(r.status, 0, "%s: %s", c->name, r.err);
        ok += !strcmp(r.out, c->expected);
        cr_expect_str_eq(r.out, c->expected, "%s", c->name);
        cr_expect_str_empty(r.err, "%s: stderr '%s'", c->name, r.err);
        /* without the generation prompt: a prefix of it, the header cut */
        RUN(&r, NULL, "template", "--template-file", tf, "--messages", mf,
            "--no-generation-prompt");
        const char *gp = generation_prompt(gl_chat_template_family(c->tmpl));
        size_t le = strlen(c->expected), lg = strlen(gp);
        cr_expect(strlen(r.out) == le - lg && !memcmp(r.out, c->expected, le - lg), "%s: '%s'",
                  c->name, r.out);
        unlink(tf);
        unlink(mf);
    }
    fprintf(stderr, "chat templates (genloop template): %d/%d expected\n", ok, n);
}

/* The templates of real models are recognised as their family. */
Test(chat_template, real_model_templates)
{
    static const struct {
        const char *file, *family;
    } t[] = {
        { "CohereForAI-c4ai-command-r-plus-tool_use.jinja", "command-r" },
        { "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "command-r" },
        { "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "chatml" },
        { "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "chatml" },
        { "Qwen-Qwen2.5-7B-Instruct.jinja", "chatml" },
        { "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "deepseek3" },
        { "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek3" },
        { "fireworks-ai-llama-3-firefunction-v2.jinja", "llama3" },
        { "google-gemma-2-2b-it.jinja", "gemma" },
        { "llama-cpp-deepseek-r1.jinja", "deepseek3" },
        { "meetkai-functionary-medium-v3.1.jinja", "llama3" },
        { "meetkai-functionary-medium-v3.2.jinja", "llama3" },
        { "meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3" },
        { "meta-llama-Llama-3.2-3B-Instruct.jinja", "llama3" },
        { "meta-llama-Llama-3.3-70B-Instruct.jinja", "llama3" },
        { "microsoft-Phi-3.5-mini-instruct.jinja", "phi3" },
        { "mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-v3-tekken" },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "chat/jinja/%s", t[i].file);
        char *src = slurp(shared_path(rel), NULL);
        const char *fam = gl_chat_template_family(src);
        fprintf(stderr, "  %-55s -> %s\n", t[i].file, fam ? fam : "(unknown: chatml)");
        if (t[i].family)
            cr_expect(fam && !strcmp(fam, t[i].family), "%s: %s, want %s", t[i].file,
                      fam ? fam : "NULL", t[i].family);
        free(src);
    }
}
