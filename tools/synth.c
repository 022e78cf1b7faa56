/* genloop synth: writes a GGUF of one of the supported decoder families
 * (llama, qwen2, qwen3, gemma2, phi3) with deterministic pseudo-random
 * weights and a working SentencePiece-style vocabulary, for
 * benchmarks at real model shapes without storing large files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gguf.h"
#include "quant_mix.h"
#include "quantize_rows.h"
#include "synth_writer.h"

/* A model shape and its family's traits, so benchmarks run the real
 * per-token work of each family (biases, Q/K norms, fused matrices,
 * post-norms, soft-caps and sliding windows cost time too). */
enum {
    SH_QKV_BIAS = 1,    /* attn_q/k/v.bias (qwen2)                         */
    SH_QK_NORM = 2,     /* per-head attn_q_norm / attn_k_norm (qwen3)       */
    SH_FUSED = 4,       /* attn_qkv and [gate; up] ffn_up (phi3)            */
    SH_POST_NORMS = 8,  /* post_attention_norm, post_ffw_norm (gemma2)      */
    SH_ROPE_FREQS = 16, /* Llama 3.x rope_freqs.weight (factor 32, 8192)   */
};

typedef struct shape {
    const char *name, *arch;
    int dim, layers, heads, kv_heads, ffn, vocab, ctx;
    float rope_base;
    bool tied;
    int head_dim;                      /* 0: dim / heads */
    float eps;                         /* 0: 1e-5 */
    unsigned traits;                   /* SH_* */
    int window;                        /* attention.sliding_window; 0: none */
    float attn_softcap, final_softcap; /* 0: none */
} shape;

/* The published configurations (context lengths capped where the real one
 * would only make the metadata claim more than a benchmark uses), kept as
 * compact entries rather than one field per line. */
/* clang-format off */
static const shape shapes[] = {
    { .name = "tinyllama-1.1b", .arch = "llama", .dim = 2048, .layers = 22, .heads = 32,
      .kv_heads = 4, .ffn = 5632, .vocab = 32000, .ctx = 2048, .rope_base = 10000.0f },
    { .name = "llama-3.2-1b", .arch = "llama", .dim = 2048, .layers = 16, .heads = 32,
      .kv_heads = 8, .ffn = 8192, .vocab = 128256, .ctx = 8192, .rope_base = 500000.0f,
      .tied = true, .traits = SH_ROPE_FREQS },
    { .name = "qwen2.5-0.5b", .arch = "qwen2", .dim = 896, .layers = 24, .heads = 14,
      .kv_heads = 2, .ffn = 4864, .vocab = 151936, .ctx = 4096, .rope_base = 1000000.0f,
      .tied = true, .eps = 1e-6f, .traits = SH_QKV_BIAS },
    { .name = "qwen3-0.6b", .arch = "qwen3", .dim = 1024, .layers = 28, .heads = 16,
      .kv_heads = 8, .ffn = 3072, .vocab = 151936, .ctx = 4096, .rope_base = 1000000.0f,
      .tied = true, .head_dim = 128, .eps = 1e-6f, .traits = SH_QK_NORM },
    { .name = "gemma-2-2b", .arch = "gemma2", .dim = 2304, .layers = 26, .heads = 8,
      .kv_heads = 4, .ffn = 9216, .vocab = 256000, .ctx = 8192, .rope_base = 10000.0f,
      .tied = true, .head_dim = 256, .eps = 1e-6f, .traits = SH_POST_NORMS, .window = 4096,
      .attn_softcap = 50.0f, .final_softcap = 30.0f },
    { .name = "phi-3-mini", .arch = "phi3", .dim = 3072, .layers = 32, .heads = 32,
      .kv_heads = 32, .ffn = 8192, .vocab = 32064, .ctx = 4096, .rope_base = 10000.0f,
      .traits = SH_FUSED, .window = 2047 },
    { .name = "stories15m", .arch = "llama", .dim = 288, .layers = 6, .heads = 6, .kv_heads = 6,
      .ffn = 768, .vocab = 32000, .ctx = 256, .rope_base = 10000.0f },
    { .name = "stories260k", .arch = "llama", .dim = 64, .layers = 5, .heads = 8, .kv_heads = 4,
      .ffn = 172, .vocab = 512, .ctx = 512, .rope_base = 10000.0f },
};
/* clang-format on */

/* Llama 3.x's per-frequency RoPE divisors as GGUF converters compute them
 * from rope_scaling (factor 32, low_freq_factor 1, high_freq_factor 4,
 * original context 8192 for Llama 3.2): high frequencies keep 1, low ones
 * get the factor, the band between is interpolated. */
static float llama3_rope_factor(int i, int head_dim, float base)
{
    const double factor = 32.0, low = 1.0, high = 4.0, orig = 8192.0;
    const double freq = pow(base, -2.0 * i / head_dim);
    const double wavelen = 2.0 * M_PI / freq;
    if (wavelen < orig / high)
        return 1.0f;
    if (wavelen > orig / low)
        return (float)factor;
    const double smooth = (orig / wavelen - low) / (high - low);
    return (float)(1.0 / ((1.0 - smooth) / factor + smooth));
}

/* splitmix64: one independent stream per tensor, seeded by its name, so a
 * tensor's bytes do not depend on the order tensors are written in. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t name_seed(const char *name, uint64_t seed)
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return h;
}

/* Uniform in [-a, a]: the sum of two uniforms is closer to the bell shape of
 * trained weights and stays bounded. */
static void fill_row(uint64_t *s, float *x, int n, float a)
{
    for (int i = 0; i < n; i++) {
        uint64_t r = mix(s);
        float u0 = (float)(r >> 40) / (float)(1 << 24), u1 = (float)(r & 0xffffff) / (1 << 24);
        x[i] = (u0 + u1 - 1.0f) * a;
    }
}

/* A vocabulary that tokenizes any text: <unk> <s> </s>, the 256 byte tokens,
 * then "▁"-prefixed and plain letter n-grams with decreasing scores. */
static void add_vocab(sw_writer *w, int n_vocab)
{
    char **toks = malloc(sizeof *toks * (size_t)n_vocab);
    float *scores = malloc(sizeof *scores * (size_t)n_vocab);
    int32_t *types = malloc(sizeof *types * (size_t)n_vocab);
    static const char letters[] = "etaoinshrdlcumwfgypbvkjxqz";
    int n = 0;
    const char *special[3] = { "<unk>", "<s>", "</s>" };
    for (int i = 0; i < 3 && n < n_vocab; i++, n++) {
        toks[n] = strdup(special[i]);
        scores[n] = 0;
        types[n] = i == 0 ? 2 : 3;
    }
    for (int b = 0; b < 256 && n < n_vocab; b++, n++) {
        char buf[8];
        snprintf(buf, sizeof buf, "<0x%02X>", b);
        toks[n] = strdup(buf);
        scores[n] = 0;
        types[n] = 6;
    }
    /* n-grams over the 26 letters, shortest first, with and without "▁" */
    char gram[16];
    for (int len = 1; n < n_vocab && len <= 4; len++) {
        long combos = 1;
        for (int i = 0; i < len; i++)
            combos *= 26;
        for (long c = 0; c < combos && n < n_vocab; c++) {
            long v = c;
            for (int i = len - 1; i >= 0; i--, v /= 26)
                gram[i] = letters[v % 26];
            gram[len] = '\0';
            for (int sp = 1; sp >= 0 && n < n_vocab; sp--, n++) {
                char buf[32];
                snprintf(buf, sizeof buf, "%s%s", sp ? "\xe2\x96\x81" : "", gram);
                toks[n] = strdup(buf);
                scores[n] = -(float)n;
                types[n] = 1;
            }
        }
    }
    for (; n < n_vocab; n++) { /* padding for very large vocabularies */
        char buf[32];
        snprintf(buf, sizeof buf, "<extra_%d>", n);
        toks[n] = strdup(buf);
        scores[n] = -1e9f;
        types[n] = 5;
    }
    sw_kv_str(w, "tokenizer.ggml.model", "llama");
    sw_kv_str_array(w, "tokenizer.ggml.tokens", (const char *const *)toks, n_vocab);
    sw_kv_f32_array(w, "tokenizer.ggml.scores", scores, n_vocab);
    sw_kv_i32_array(w, "tokenizer.ggml.token_type", types, n_vocab);
    sw_kv_u32(w, "tokenizer.ggml.bos_token_id", 1);
    sw_kv_u32(w, "tokenizer.ggml.eos_token_id", 2);
    sw_kv_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    sw_kv_bool(w, "tokenizer.ggml.add_bos_token", true);
    for (int i = 0; i < n_vocab; i++)
        free(toks[i]);
    free(toks);
    free(scores);
    free(types);
}

typedef struct tensor_plan {
    char name[64];
    int ne0, ne1; /* ne1 == 0: a 1-D vector (norm weights near 1, biases near 0) */
    int type;
    float scale;
} tensor_plan;

int cmd_synth(int argc, char **argv)
{
    const char *shape_name = NULL, *type_name = "q4_0", *out = NULL;
    long long threads = 0;
    bool pure = false;
    shape s = { 0 };
    long long custom[7] = { 0 }; /* dim layers heads kv ffn vocab ctx */
    static const char *const custom_flags[7] = { "--dim", "--layers", "--heads", "--kv-heads",
                                                 "--ffn", "--vocab",  "--ctx" };
    uint64_t seed = 1234;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool matched = false;
        if (!strcmp(a, "--pure")) {
            pure = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf(
                "usage: genloop synth --shape NAME --type TYPE -o FILE.gguf [-t THREADS]\n"
                "       [--dim N --layers N --heads N --kv-heads N --ffn N --vocab N --ctx N]"
                " [--seed S]\ntypes: %s\n"
                "  (mixes such as q4_k_m assign per-tensor types with genloop quantize's rules;\n"
                "  the quantizers are the same full-quality ones, rows spread over -t threads)\n"
                "shapes:",
                gl_qmix_names());
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
                printf(" %s", shapes[k].name);
            printf(", custom (give every --dim... flag)\n");
            return 0;
        }
        if (!v) {
            cli_error("synth: option '%s' needs a value", a);
            return EXIT_USAGE;
        }
        for (int k = 0; k < 7; k++) {
            if (!strcmp(a, custom_flags[k])) {
                if (!cli_int(a, v, 1, k == 5 ? 1 << 22 : 1 << 20, &custom[k]))
                    return EXIT_USAGE;
                matched = true;
            }
        }
        if (matched) {
        } else if (!strcmp(a, "--shape")) {
            shape_name = v;
        } else if (!strcmp(a, "--type")) {
            type_name = v;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            out = v;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            if (!cli_int(a, v, 1, 256, &threads))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--seed")) {
            if (!cli_u64(a, v, &seed))
                return EXIT_USAGE;
        } else {
            cli_error("synth: unknown option '%s'", a);
            return EXIT_USAGE;
        }
        i++;
    }
    if (!out) {
        cli_error("synth: missing -o FILE.gguf");
        return EXIT_USAGE;
    }
    const gl_qmix *mix = gl_qmix_find(type_name);
    if (!mix) {
        cli_error("synth: unknown --type '%s'; one of: %s", type_name, gl_qmix_names());
        return EXIT_USAGE;
    }
    const int wtype = (int)mix->base;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : n > 256 ? 256 : n;
    }
    if (shape_name && strcmp(shape_name, "custom") != 0) {
        bool found = false;
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
            if (!strcmp(shapes[k].name, shape_name)) {
                s = shapes[k];
                found = true;
            }
        if (!found) {
            cli_error("synth: unknown shape '%s' (see genloop synth --help)", shape_name);
            return EXIT_USAGE;
        }
    } else {
        /* clang-format off */
        s = (shape){ .name = "custom", .arch = "llama", .dim = 256, .layers = 2, .heads = 4,
                     .kv_heads = 4, .ffn = 512, .vocab = 512, .ctx = 256, .rope_base = 10000.0f };
        /* clang-format on */
    }
    int *fields[7] = { &s.dim, &s.layers, &s.heads, &s.kv_heads, &s.ffn, &s.vocab, &s.ctx };
    for (int k = 0; k < 7; k++)
        if (custom[k])
            *fields[k] = (int)custom[k];
    if (custom[0] || custom[2])
        s.head_dim = 0; /* a custom width or head count: heads split dim again */
    if ((!s.head_dim && s.dim % s.heads) || s.heads % s.kv_heads ||
        (s.head_dim ? s.head_dim : s.dim / s.heads) % 2) {
        cli_error("synth: --dim must be a multiple of --heads (even head size) and --heads a "
                  "multiple of --kv-heads");
        return EXIT_USAGE;
    }
    const int hd = s.head_dim ? s.head_dim : s.dim / s.heads;
    const int q_dim = s.heads * hd, kv_dim = s.kv_heads * hd;
    if (gguf_type_block_elems((uint32_t)wtype) > 1 && (s.dim % 32 || s.ffn % 32 || q_dim % 32)) {
        cli_error("synth: quantized types need --dim and --ffn to be multiples of 32");
        return EXIT_USAGE;
    }
    if (s.vocab < 259) {
        cli_error("synth: --vocab must be at least 259 (specials and byte tokens)");
        return EXIT_USAGE;
    }

    int n_t = 0;
    tensor_plan *plan = calloc((size_t)(4 + 16 * s.layers), sizeof *plan);
    /* init scale ~ 1/sqrt(fan_in) keeps activations O(1) through the stack */
    const float a_in = 1.0f / sqrtf((float)s.dim), a_ffn = 1.0f / sqrtf((float)s.ffn);
    const float a_att = 1.0f / sqrtf((float)q_dim);
#define PLAN(nm, e0, e1, ty, sc)                                                                   \
    do {                                                                                           \
        snprintf(plan[n_t].name, sizeof plan[n_t].name, "%s", nm);                                 \
        plan[n_t].ne0 = e0;                                                                        \
        plan[n_t].ne1 = e1;                                                                        \
        plan[n_t].type = ty;                                                                       \
        plan[n_t].scale = sc;                                                                      \
        n_t++;                                                                                     \
    } while (0)
    PLAN("token_embd.weight", s.dim, s.vocab, wtype, 1.0f);
    if (s.traits & SH_ROPE_FREQS)
        PLAN("rope_freqs.weight", hd / 2, 0, SW_F32, 0.0f);
    for (int l = 0; l < s.layers; l++) {
        char nm[64];
#define LPLAN(part, e0, e1, ty, sc)                                                                \
    do {                                                                                           \
        snprintf(nm, sizeof nm, "blk.%d.%s", l, part);                                             \
        PLAN(nm, e0, e1, ty, sc);                                                                  \
    } while (0)
        LPLAN("attn_norm.weight", s.dim, 0, SW_F32, 1.0f);
        if (s.traits & SH_FUSED) {
            LPLAN("attn_qkv.weight", s.dim, q_dim + 2 * kv_dim, wtype, a_in);
        } else {
            LPLAN("attn_q.weight", s.dim, q_dim, wtype, a_in);
            LPLAN("attn_k.weight", s.dim, kv_dim, wtype, a_in);
            LPLAN("attn_v.weight", s.dim, kv_dim, wtype, a_in);
        }
        if (s.traits & SH_QKV_BIAS) {
            LPLAN("attn_q.bias", q_dim, 0, SW_F32, 0.1f);
            LPLAN("attn_k.bias", kv_dim, 0, SW_F32, 0.1f);
            LPLAN("attn_v.bias", kv_dim, 0, SW_F32, 0.1f);
        }
        if (s.traits & SH_QK_NORM) {
            LPLAN("attn_q_norm.weight", hd, 0, SW_F32, 1.0f);
            LPLAN("attn_k_norm.weight", hd, 0, SW_F32, 1.0f);
        }
        LPLAN("attn_output.weight", q_dim, s.dim, wtype, a_att);
        if (s.traits & SH_POST_NORMS)
            LPLAN("post_attention_norm.weight", s.dim, 0, SW_F32, 1.0f);
        LPLAN("ffn_norm.weight", s.dim, 0, SW_F32, 1.0f);
        if (s.traits & SH_FUSED) {
            LPLAN("ffn_up.weight", s.dim, 2 * s.ffn, wtype, a_in);
        } else {
            LPLAN("ffn_gate.weight", s.dim, s.ffn, wtype, a_in);
            LPLAN("ffn_up.weight", s.dim, s.ffn, wtype, a_in);
        }
        LPLAN("ffn_down.weight", s.ffn, s.dim, wtype, a_ffn);
        if (s.traits & SH_POST_NORMS)
            LPLAN("post_ffw_norm.weight", s.dim, 0, SW_F32, 1.0f);
#undef LPLAN
    }
    PLAN("output_norm.weight", s.dim, 0, SW_F32, 1.0f);
    if (!s.tied)
        PLAN("output.weight", s.dim, s.vocab, wtype, a_in);
#undef PLAN

    sw_writer w;
    if (!sw_open(&w, out)) {
        cli_error("synth: cannot create '%s'", out);
        free(plan);
        return EXIT_RUNTIME;
    }
    sw_kv_str(&w, "general.architecture", s.arch);
    char name[96];
    snprintf(name, sizeof name, "genloop-synth-%s-%s", s.name, mix->name);
    sw_kv_str(&w, "general.name", name);
    sw_kv_u32(&w, "general.alignment", 32);
    if (gguf_type_block_elems((uint32_t)wtype) > 1)
        sw_kv_u32(&w, "general.file_type", (uint32_t)mix->ftype);
    char key[96];
#define KEY(suffix) (snprintf(key, sizeof key, "%s.%s", s.arch, suffix), key)
    sw_kv_u32(&w, KEY("context_length"), (uint32_t)s.ctx);
    sw_kv_u32(&w, KEY("embedding_length"), (uint32_t)s.dim);
    sw_kv_u32(&w, KEY("block_count"), (uint32_t)s.layers);
    sw_kv_u32(&w, KEY("feed_forward_length"), (uint32_t)s.ffn);
    sw_kv_u32(&w, KEY("attention.head_count"), (uint32_t)s.heads);
    sw_kv_u32(&w, KEY("attention.head_count_kv"), (uint32_t)s.kv_heads);
    if (s.head_dim) {
        sw_kv_u32(&w, KEY("attention.key_length"), (uint32_t)hd);
        sw_kv_u32(&w, KEY("attention.value_length"), (uint32_t)hd);
    }
    sw_kv_u32(&w, KEY("rope.dimension_count"), (uint32_t)hd);
    sw_kv_f32(&w, KEY("rope.freq_base"), s.rope_base);
    sw_kv_f32(&w, KEY("attention.layer_norm_rms_epsilon"), s.eps > 0 ? s.eps : 1e-5f);
    if (s.window)
        sw_kv_u32(&w, KEY("attention.sliding_window"), (uint32_t)s.window);
    if (s.attn_softcap > 0)
        sw_kv_f32(&w, KEY("attn_logit_softcapping"), s.attn_softcap);
    if (s.final_softcap > 0)
        sw_kv_f32(&w, KEY("final_logit_softcapping"), s.final_softcap);
#undef KEY
    add_vocab(&w, s.vocab);
    const gl_qmix_model qm = { s.arch, s.layers, s.heads, s.kv_heads, 0, s.layers, !s.tied };
    const gl_qmix_opts qo = { pure || !strcmp(mix->name, "q4_0"), -1, -1 };
    gl_qmix_state qs = { 0 };
    for (int t = 0; t < n_t; t++)
        if (plan[t].ne1 && gl_qmix_quantizable(plan[t].name, 2))
            plan[t].type = (int)gl_qmix_tensor_type(mix, &qo, &qm, &qs, plan[t].name, plan[t].ne0);
    for (int t = 0; t < n_t; t++)
        sw_tensor_info(&w, plan[t].name, plan[t].ne0, plan[t].ne1 ? plan[t].ne1 : 1,
                       plan[t].ne1 ? 2 : 1, plan[t].type);
    bool ok = sw_begin_data(&w);
    /* Rows are generated in order (one random stream per tensor), then a
     * chunk of them is quantized over the threads. */
    int max_ne0 = s.dim > s.ffn ? s.dim : s.ffn;
    max_ne0 = max_ne0 > q_dim ? max_ne0 : q_dim;
    const int chunk = (1 << 22) / max_ne0;
    float *rows_f = malloc(sizeof *rows_f * (size_t)chunk * (size_t)max_ne0);
    uint8_t *rows_q = malloc(sizeof(float) * (size_t)chunk * (size_t)max_ne0);
    ok = ok && rows_f && rows_q;
    for (int t = 0; ok && t < n_t; t++) {
        uint64_t st = name_seed(plan[t].name, seed);
        const int rows = plan[t].ne1 ? plan[t].ne1 : 1, ne0 = plan[t].ne0;
        const uint32_t type = (uint32_t)plan[t].type;
        for (int r0 = 0; ok && r0 < rows; r0 += chunk) {
            const int nr = rows - r0 < chunk ? rows - r0 : chunk;
            for (int r = 0; r < nr; r++) {
                float *row = rows_f + (size_t)r * (size_t)ne0;
                if (plan[t].ne1) {
                    fill_row(&st, row, ne0, plan[t].scale);
                } else if (plan[t].scale == 0.0f) { /* rope_freqs */
                    for (int i = 0; i < ne0; i++)
                        row[i] = llama3_rope_factor(i, hd, s.rope_base);
                } else if (plan[t].scale < 1.0f) { /* biases near 0 */
                    fill_row(&st, row, ne0, plan[t].scale);
                } else { /* norm weights near 1 */
                    fill_row(&st, row, ne0, 0.1f);
                    for (int i = 0; i < ne0; i++)
                        row[i] += 1.0f;
                }
            }
            ok = gl_quantize_rows(type, rows_f, rows_q, nr, ne0, (int)threads) &&
                 sw_tensor_bytes(&w, rows_q, gl_quant_row_bytes(type, ne0) * (size_t)nr);
        }
        ok = ok && sw_end_tensor(&w);
    }
    ok = sw_close(&w) && ok;
    free(rows_f);
    free(rows_q);
    free(plan);
    if (!ok) {
        cli_error("synth: writing '%s' failed", out);
        return EXIT_RUNTIME;
    }
    return 0;
}
