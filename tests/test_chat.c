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
    td_need_path(p, sizeof buf[0], rel);
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
    char *s;            /* J_STR */
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
            unsigned cp =
                (unsigned)strtoul((char[5]){ (*p)[0], (*p)[1], (*p)[2], (*p)[3], 0 }, NULL, 16);
            *p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && (*p)[0] == '\\' && (*p)[1] == 'u') {
                unsigned lo =
                    (unsigned)strtoul((char[5]){ (*p)[2], (*p)[3], (*p)[4], (*p)[5], 0 }, NULL, 16);
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
        { "deepseek3", "<\xEF\xBD\x9C"
                       "Assistant\xEF\xBD\x9C>" },
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
    cr_assert_eq(
        gl_chat_render(tmpl, c->msgs, c->n_msgs, gen, c->bos, c->eos, s, (size_t)n + 1, &err), n);
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
        bool same = le >= lg && !strcmp(c->expected + le - lg, gp) && strlen(without) == le - lg &&
                    !memcmp(without, c->expected, le - lg);
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

/* -m MODEL: the template stored in the GGUF (phi-3's vocabulary file has
 * one), rendered with the model's BOS/EOS texts. */
Test(chat_template, from_model_file)
{
    const char *vocab = shared_path("tokenizers/ggml-vocab-phi-3.gguf");
    static const char msgs[] = "[{\"role\": \"user\", \"content\": \"Hi\"},\n"
                               " {\"role\": \"assistant\", \"content\": \"Hello!\"},\n"
                               " {\"role\": \"user\", \"content\": \"Bye \\\"now\\\"\"}]\n";
    const char *mf = temp_file(msgs, strlen(msgs));
    RUN(&r, NULL, "template", "-m", vocab, "--messages", mf);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n<|user|>\nBye "
                            "\"now\"<|end|>\n<|assistant|>\n");
    RUN(&r, NULL, "template", "--chat-template", "llama3", "--messages", mf,
        "--no-generation-prompt");
    cr_expect_str_eq(r.out, "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                            "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
                            "<|start_header_id|>user<|end_header_id|>\n\nBye \"now\"<|eot_id|>");
    /* an unknown template: chatml, with one warning line on stderr */
    const char *tf = temp_file("{{ nothing we know }}", 21);
    RUN(&r, NULL, "template", "--template-file", tf, "--messages", mf);
    cr_expect_eq(r.status, 0);
    cr_expect(!strncmp(r.out, "<|im_start|>user\nHi<|im_end|>\n", 30), "%s", r.out);
    cr_expect(strstr(r.err, "warning") && strstr(r.err, "chatml"), "%s", r.err);
    unlink(mf);
    unlink(tf);
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

/* ---- genloop chat ------------------------------------------------------------ */

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Scripted through a pipe: one turn per line, /reset, /save, end of input
 * exits cleanly; the cache is kept between turns (turn 2 feeds only its new
 * tokens) and /reset really forgets (the next answer equals a fresh chat's). */
Test(chat_cli, pipe_transcript)
{
    const char *model = shared_path("models/stories260K.gguf");
    char save[64];
    snprintf(save, sizeof save, "/tmp/genloop-chat-save-%d.json", (int)getpid());
    char input[256];
    snprintf(input, sizeof input,
             "Once upon a time\nThe little dog\n/save %s\n/reset\nLily wanted to\n", save);
    RUN(&r, input, "chat", "-m", model, "--temp", "0", "-n", "12", "-c", "256", "-t", "1",
        "--system", "You tell stories.");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(count(r.err, "no chat template; using chatml"), 1, "%s", r.err);
    cr_expect_eq(count(r.err, "genloop: turn "), 3, "%s", r.err);
    cr_expect(strstr(r.err, "genloop: turn 1 ") && strstr(r.err, "genloop: turn 2 "), "%s", r.err);
    cr_expect(strstr(r.err, "conversation reset"), "%s", r.err);
    /* turn 2 feeds only its new tokens: the context after it is the context
     * after turn 1, plus its new prompt, plus its answer */
    int t1_new, t1_gen, t1_ctx, t2_new, t2_gen, t2_ctx;
    const char *p1 = strstr(r.err, "genloop: turn 1 "), *p2 = strstr(r.err, "genloop: turn 2 ");
    cr_assert(p1 && p2);
    cr_assert_eq(sscanf(p1,
                        "genloop: turn 1 | new prompt %d tok %*f ms | ttft %*f ms | decode %d "
                        "tok %*f tok/s | context %d",
                        &t1_new, &t1_gen, &t1_ctx),
                 3, "%s", p1);
    cr_assert_eq(sscanf(p2,
                        "genloop: turn 2 | new prompt %d tok %*f ms | ttft %*f ms | decode %d "
                        "tok %*f tok/s | context %d",
                        &t2_new, &t2_gen, &t2_ctx),
                 3, "%s", p2);
    cr_expect_eq(t1_ctx, t1_new + t1_gen);
    cr_expect_eq(t2_ctx, t1_ctx + t2_new + t2_gen, "turn 2 re-fed the history: %s", r.err);
    cr_expect_lt(t2_new, t1_ctx + t2_new, "turn 2 fed the whole conversation");

    /* /reset: the next answer is the answer of a fresh chat */
    const char *out = strdup(r.out);
    RUN(&r, "Lily wanted to\n", "chat", "-m", model, "--temp", "0", "-n", "12", "-c", "256", "-t",
        "1", "--system", "You tell stories.");
    cr_assert_eq(r.status, 0, "%s", r.err);
    size_t lo = strlen(out), lf = strlen(r.out);
    cr_expect(lo >= lf && !strcmp(out + lo - lf, r.out), "after /reset: '%s', fresh: '%s'", out,
              r.out);
    free((void *)out);

    /* /save wrote the conversation before the reset as JSON messages */
    size_t n;
    char *js = slurp(save, &n);
    cr_expect(strstr(js, "\"role\": \"system\", \"content\": \"You tell stories.\""), "%s", js);
    cr_expect_eq(count(js, "\"role\": \"user\""), 2, "%s", js);
    cr_expect_eq(count(js, "\"role\": \"assistant\""), 2, "%s", js);
    /* and /load brings it back: the next turn is turn 3 */
    char in2[256];
    snprintf(in2, sizeof in2, "/load %s\nWhat next\n", save);
    RUN(&r, in2, "chat", "-m", model, "--temp", "0", "-n", "4", "-c", "256", "-t", "1");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "loaded 5 messages") && strstr(r.err, "genloop: turn 3 "), "%s", r.err);
    free(js);
    unlink(save);
}

/* run/tokenize read control-token text as those tokens only with --special. */
Test(chat_cli, tokenize_special_flag)
{
    const char *vocab = shared_path("tokenizers/ggml-vocab-phi-3.gguf");
    RUN(&r, NULL, "tokenize", "-m", vocab, "--no-bos", "--special", "-p", "<|user|>Hi<|end|>");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "[32010, 6324, 32007]\n");
    RUN(&r, NULL, "tokenize", "-m", vocab, "--no-bos", "-p", "<|user|>Hi<|end|>");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(!strstr(r.out, "32010") && !strstr(r.out, "32007"), "%s", r.out);
}

/* Usage errors are one line and exit 2. */
Test(chat_cli, usage_errors)
{
    RUN(&r, NULL, "chat");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "genloop: error: missing -m"), "%s", r.err);
    RUN(&r, NULL, "template", "--messages", "x.json");
    cr_expect_eq(r.status, 2);
    RUN(&r, NULL, "template", "--chat-template", "no-such-family", "--messages", "x.json");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "unknown chat template 'no-such-family'"), "%s", r.err);
}

/* Reads what the pseudo-terminal shows until needle appears or ms pass. */
static bool pty_wait(int fd, char *buf, size_t cap, size_t *len, const char *needle, int ms)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        buf[*len] = '\0';
        if (strstr(buf, needle))
            return true;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        int left = ms - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0)
            return false;
        struct pollfd pfd = { fd, POLLIN, 0 };
        if (poll(&pfd, 1, left) <= 0)
            continue;
        char tmp[4096];
        ssize_t k = read(fd, tmp, sizeof tmp);
        if (k <= 0)
            return strstr(buf, needle) != NULL;
        /* keep the tail when the screen overflows the buffer */
        if (*len + (size_t)k >= cap) {
            size_t drop = *len + (size_t)k - cap / 2;
            memmove(buf, buf + drop, *len - drop);
            *len -= drop;
        }
        memcpy(buf + *len, tmp, (size_t)k);
        *len += (size_t)k;
    }
}

/* Under a terminal: Ctrl-C stops the answer (not the program), which
 * prints its timing line and the prompt again; Ctrl-D exits cleanly. */
Test(chat_cli, pty_ctrl_c_and_ctrl_d)
{
    const char *model = shared_path("models/stories260K.gguf");
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert_geq(master, 0);
    cr_assert_eq(grantpt(master), 0);
    cr_assert_eq(unlockpt(master), 0);
    const char *slave_name = ptsname(master);
    cr_assert_not_null(slave_name);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        setsid();
        int s = open(slave_name, O_RDWR); /* becomes the controlling terminal */
        if (s < 0)
            _exit(127);
        dup2(s, 0);
        dup2(s, 1);
        dup2(s, 2);
        if (s > 2)
            close(s);
        /* an answer that never ends by itself: no length limit, sliding ring */
        execl(cli_bin(), cli_bin(), "chat", "-m", model, "-n", "-1", "-c", "64", "-t", "1",
              "--temp", "1", "--seed", "7", (char *)NULL);
        _exit(127);
    }
    static char buf[1 << 16];
    size_t len = 0;
    cr_assert(pty_wait(master, buf, sizeof buf, &len, "> ", 20000), "no prompt: %s", buf);
    cr_assert_eq(write(master, "Once upon a time\n", 17), 17);
    /* let the answer stream a while, then Ctrl-C */
    size_t before = len;
    pty_wait(master, buf, sizeof buf, &len, "\x01never", 700);
    cr_expect_gt(len, before + 20, "no answer streamed: %s", buf);
    cr_assert_eq(write(master, "\x03", 1), 1);
    /* the timing line (stderr), then the prompt again (stdout) */
    cr_expect(pty_wait(master, buf, sizeof buf, &len, "stop interrupted\r\n> ", 10000),
              "Ctrl-C did not stop the answer: ...%s", len > 400 ? buf + len - 400 : buf);
    /* still alive: Ctrl-D at an empty line exits with status 0 */
    cr_assert_eq(write(master, "\x04", 1), 1);
    int status = -1;
    bool exited = false;
    for (int i = 0; i < 400 && !exited; i++) {
        len = 0;
        pty_wait(master, buf, sizeof buf, &len, "\x01never", 10); /* drain the screen */
        exited = waitpid(pid, &status, WNOHANG) == pid;
        if (!exited)
            usleep(25000);
    }
    if (!exited) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        cr_assert_fail("Ctrl-D did not end the chat");
    }
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    close(master);
}

/* genloop run: SIGINT ends generation cleanly, with the text flushed and
 * the timing line printed, exit status 0. */
Test(chat_cli, run_sigint_is_clean)
{
    const char *model = shared_path("models/stories260K.gguf");
    int out[2], err[2];
    cr_assert_eq(pipe(out), 0);
    cr_assert_eq(pipe(err), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        execl(cli_bin(), cli_bin(), "run", "-m", model, "-p", "Once upon a time", "-n", "-1", "-c",
              "64", "-t", "1", "--seed", "3", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    static char o[1 << 20], e[8192];
    size_t lo = 0, le = 0;
    /* wait for text, then interrupt */
    struct pollfd pfd = { out[0], POLLIN, 0 };
    cr_assert_gt(poll(&pfd, 1, 20000), 0, "no output");
    usleep(300000);
    kill(pid, SIGINT);
    for (;;) {
        ssize_t k = read(out[0], o + lo, sizeof o - 1 - lo);
        if (k <= 0)
            break;
        lo += (size_t)k;
        if (lo == sizeof o - 1)
            lo = 0; /* keep reading; only the end matters */
    }
    for (ssize_t k; (k = read(err[0], e + le, sizeof e - 1 - le)) > 0;)
        le += (size_t)k;
    e[le] = '\0';
    int status;
    waitpid(pid, &status, 0);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d, stderr %s", status, e);
    cr_expect(strstr(e, "stop interrupted"), "%s", e);
    cr_expect(lo > 0 && o[lo - 1] == '\n', "output not ended by a newline");
    close(out[0]);
    close(err[0]);
}
