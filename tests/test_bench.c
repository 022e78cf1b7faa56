/* genloop bench sweeps and the latency SVGs of bench --plot and run
 * --latency-plot: every output format parsed back, and the plotted series
 * (as parsed from well-formed XML) checked against the JSON figures. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "shared_data.h"

static run_out r;

static const char *model(void)
{
    static char path[1024];
    if (!td_path(path, sizeof path, "models/stories260K.gguf"))
        cr_skip_test("SKIP: ../shared not found (set GENLOOP_SHARED): bench tests run "
                     "models/stories260K.gguf");
    return path;
}

/* ---- a minimal XML well-formedness checker ------------------------------ */

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == ':' || c == '.';
}

/* Checks entity references in [s, e): only the five predefined ones. */
static bool entities_ok(const char *s, const char *e)
{
    static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
    for (const char *p = s; p < e; p++) {
        if (*p != '&')
            continue;
        bool ok = false;
        for (int i = 0; i < 5; i++)
            ok |= (size_t)(e - p) >= strlen(ents[i]) && !strncmp(p, ents[i], strlen(ents[i]));
        if (!ok)
            return false;
    }
    return true;
}

/* Returns NULL when doc is well-formed XML with one root element named
 * root, else what is wrong. */
static const char *xml_check(const char *doc, const char *root)
{
    char stack[64][32];
    int depth = 0, roots = 0;
    const char *p = doc;
    if (!strncmp(p, "<?xml", 5)) {
        p = strstr(p, "?>");
        if (!p)
            return "unterminated XML declaration";
        p += 2;
    }
    while (*p) {
        const char *lt = strchr(p, '<');
        const char *text_end = lt ? lt : p + strlen(p);
        if (!entities_ok(p, text_end))
            return "bad entity in text";
        if (depth == 0)
            for (const char *q = p; q < text_end; q++)
                if (*q != ' ' && *q != '\n' && *q != '\r' && *q != '\t')
                    return "text outside the root element";
        if (!lt)
            break;
        p = lt + 1;
        if (*p == '/') {
            p++;
            char name[32];
            int n = 0;
            while (name_char(*p) && n < 31)
                name[n++] = *p++;
            name[n] = '\0';
            if (*p != '>' || depth == 0 || strcmp(stack[depth - 1], name))
                return "mismatched end tag";
            depth--;
            p++;
            continue;
        }
        char name[32];
        int n = 0;
        while (name_char(*p) && n < 31)
            name[n++] = *p++;
        name[n] = '\0';
        if (!n)
            return "bad tag name";
        for (;;) {
            while (*p == ' ' || *p == '\n' || *p == '\t')
                p++;
            if (*p == '/' && p[1] == '>') {
                p += 2;
                if (depth == 0)
                    roots++;
                break;
            }
            if (*p == '>') {
                p++;
                if (depth == 64)
                    return "too deep";
                if (depth == 0) {
                    roots++;
                    if (strcmp(name, root))
                        return "wrong root element";
                }
                snprintf(stack[depth++], sizeof stack[0], "%s", name);
                break;
            }
            int an = 0;
            while (name_char(*p))
                p++, an++;
            if (!an || *p != '=' || (p[1] != '"' && p[1] != '\''))
                return "bad attribute";
            const char q = p[1];
            const char *v = p + 2, *ve = strchr(v, q);
            if (!ve)
                return "unterminated attribute value";
            for (const char *c = v; c < ve; c++)
                if (*c == '<')
                    return "'<' in an attribute value";
            if (!entities_ok(v, ve))
                return "bad entity in an attribute";
            p = ve + 1;
        }
    }
    if (depth)
        return "unclosed element";
    return roots == 1 ? NULL : "not exactly one root element";
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert(b);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    return b;
}

/* The value of attribute `attr` of the k-th element that starts with
 * `tag_prefix` (e.g. "<polyline class=\"latency\""), copied to out. */
static bool svg_attr(const char *svg, const char *tag_prefix, int k, const char *attr, char *out,
                     size_t cap)
{
    const char *p = svg;
    for (int i = 0; i <= k; i++) {
        p = strstr(p, tag_prefix);
        if (!p)
            return false;
        if (i < k)
            p++;
    }
    const char *end = strchr(p, '>');
    char pat[64];
    snprintf(pat, sizeof pat, " %s=\"", attr);
    const char *a = strstr(p, pat);
    if (!a || a > end)
        return false;
    a += strlen(pat);
    const char *e = strchr(a, '"');
    size_t n = (size_t)(e - a) < cap - 1 ? (size_t)(e - a) : cap - 1;
    memcpy(out, a, n);
    out[n] = '\0';
    return true;
}

static int parse_numbers(const char *s, double *v, int cap)
{
    int n = 0;
    char *end;
    while (n < cap) {
        double x = strtod(s, &end);
        if (end == s)
            break;
        v[n++] = x;
        s = end;
        while (*s == ' ' || *s == ',')
            s++;
    }
    return n;
}

/* The value of "key": (a number) in the k-th JSON object that starts with
 * {"model" (k = 0: the first occurrence anywhere), or NAN. */
static double jnum_k(const char *json, int k, const char *key)
{
    const char *p = json;
    for (int i = 0; i < k; i++) {
        p = strstr(p, "{\"model\"");
        cr_assert(p);
        p++;
    }
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(p, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* The number under the n-th (from 1) occurrence of key. */
static double jnum_nth(const char *json, int n, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json;
    for (int i = 0; i < n && p; i++)
        if ((p = strstr(p, pat)))
            p += strlen(pat);
    return p ? strtod(p, NULL) : NAN;
}

/* The k-th object's number array under key. */
static int jarr_k(const char *json, int k, const char *key, double *v, int cap)
{
    const char *p = json;
    for (int i = 0; i < k; i++) {
        p = strstr(p, "{\"model\"");
        cr_assert(p);
        p++;
    }
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\": [", key);
    p = strstr(p, pat);
    cr_assert(p, "no %s", key);
    return parse_numbers(p + strlen(pat), v, cap);
}

static bool near(double a, double b, double rel, double abs_tol)
{
    return fabs(a - b) <= abs_tol + rel * fabs(b);
}

/* ---- sweeps ------------------------------------------------------------- */

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(bench_sweep, markdown_table)
{
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8,16", "-n", "4", "-t", "1", "--batch", "1,2",
        "-r", "2", "--bw-mib", "16");
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* header, separator, 4 rows, blank, bandwidth note */
    const char *line = r.out;
    int rows = 0, cols0 = -1;
    for (int i = 0; line && *line; i++) {
        const char *nl = strchr(line, '\n');
        if (line[0] == '|') {
            int cols = -1;
            for (const char *c = line; c < (nl ? nl : line + strlen(line)); c++)
                cols += *c == '|';
            if (cols0 < 0)
                cols0 = cols;
            cr_expect_eq(cols, cols0, "row %d has %d columns, the header %d", i, cols, cols0);
            rows++;
            if (i >= 2) {
                char model_c[64], type[32], cpu[128], be[32];
                int size_ok, t, b, p, n;
                double sz;
                cr_expect_eq(sscanf(line,
                                    "| %63s | %31s | %lf | %127[^|]| %31s | %d | %d | %d | %d |",
                                    model_c, type, &sz, cpu, be, &t, &b, &p, &n),
                             9, "cannot parse %.*s", (int)(nl - line), line);
                size_ok = sz > 0;
                cr_expect(size_ok);
                cr_expect_str_eq(model_c, "stories260K.gguf");
                cr_expect_str_eq(type, "F32");
                cr_expect(strlen(cpu) > 1);
                cr_expect_eq(t, 1);
                cr_expect(b == ((i - 2) % 2 ? 2 : 1), "row %d batch %d", i, b);
                cr_expect(p == (i - 2 < 2 ? 8 : 16), "row %d prompt %d", i, p);
                cr_expect_eq(n, 4);
                cr_expect(strstr(line, "±"), "no mean ± stddev in %.*s", (int)(nl - line), line);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    cr_expect_eq(rows, 6, "%s", r.out);
    cr_expect_eq(cols0, 15);
    cr_expect(strstr(r.out, "memory read bandwidth"));
}

Test(bench_sweep, csv)
{
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4,6", "-t", "1", "-r", "1", "--bw-mib",
        "16", "-o", "csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(count_lines(r.out), 3, "%s", r.out);
    char *save = NULL, *buf = strdup(r.out);
    char *hdr = strtok_r(buf, "\n", &save);
    int n_cols = 1;
    for (char *c = hdr; *c; c++)
        n_cols += *c == ',';
    cr_expect_eq(n_cols, 26);
    int col_dec = -1, col_roof = -1, col_bw = -1, col_gen = -1, i = 0;
    char *hs = NULL, *hbuf = strdup(hdr);
    for (char *h = strtok_r(hbuf, ",", &hs); h; h = strtok_r(NULL, ",", &hs), i++) {
        col_dec = !strcmp(h, "decode_tok_s") ? i : col_dec;
        col_roof = !strcmp(h, "roofline_pct") ? i : col_roof;
        col_bw = !strcmp(h, "bandwidth_gbs") ? i : col_bw;
        col_gen = !strcmp(h, "n_gen") ? i : col_gen;
    }
    cr_assert(col_dec >= 0 && col_roof >= 0 && col_bw >= 0 && col_gen >= 0);
    double bw0 = -1;
    for (int row = 0; row < 2; row++) {
        char *l = strtok_r(NULL, "\n", &save);
        cr_assert(l);
        /* split honouring quotes */
        char *cells[32];
        int nc = 0;
        for (char *c = l; nc < 32;) {
            cells[nc++] = c;
            bool q = false;
            for (; *c && (q || *c != ','); c++)
                q ^= *c == '"';
            if (!*c)
                break;
            *c++ = '\0';
        }
        cr_expect_eq(nc, 26, "row %d has %d cells", row, nc);
        cr_expect_eq(atoi(cells[col_gen]), row ? 6 : 4);
        cr_expect(atof(cells[col_dec]) > 0);
        cr_expect(atof(cells[col_roof]) > 0, "every decode row carries its roofline %%");
        if (row == 0)
            bw0 = atof(cells[col_bw]);
        else
            cr_expect_eq(atof(cells[col_bw]), bw0, "one bandwidth probe per sweep");
    }
    free(buf);
    free(hbuf);
}

Test(bench_sweep, json_and_jsonl)
{
    RUN(&r, NULL, "bench", "-m", model(), "-m", model(), "-p", "8", "-n", "4", "-t", "1", "-r", "1",
        "--bw-mib", "16", "-o", "json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(r.out[0], '[');
    cr_expect(strstr(r.out, "]\n") && strstr(r.out, "]\n")[2] == '\0');
    int objs = 0;
    for (const char *p = r.out; (p = strstr(p, "{\"model\"")); p++)
        objs++;
    cr_expect_eq(objs, 2);
    for (int k = 1; k <= 2; k++) {
        cr_expect(jnum_k(r.out, k, "decode_tok_s") > 0);
        cr_expect(jnum_k(r.out, k, "model_bytes") > 0);
        cr_expect(jnum_k(r.out, k, "roofline_pct") > 0);
        double v[16];
        cr_expect_eq(jarr_k(r.out, k, "latency_series_ms", v, 16), 4);
    }
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-t", "1", "--batch", "1,3", "-r",
        "1", "--bw-mib", "16", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(count_lines(r.out), 2);
    cr_expect(!strncmp(r.out, "{\"model\"", 8));
    cr_expect_eq(jnum_k(r.out, 2, "batch"), 3);
    cr_expect(strstr(r.out, "\"cpu\": \"") && strstr(r.out, "\"model_type\": \"F32\""));
}

/* --breakdown splits a decode step: its parts are non-negative and add up
 * to no more than the step (products + other regions + serial = the step's
 * wall time); the stories260K forward pass runs 5 regions per layer plus
 * the output product, and the JSON names the tune. */
Test(bench_sweep, breakdown)
{
    for (int t = 1; t <= 2; t++) {
        char th[8];
        snprintf(th, sizeof th, "%d", t);
        RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "16", "-t", th, "-r", "2",
            "--bw-mib", "16", "--breakdown", "--json");
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.out, "\"breakdown\": {") && strstr(r.out, "\"tune\": \""), "%s", r.out);
        const double prod = jnum_k(r.out, 1, "product_ms"), other = jnum_k(r.out, 1, "other_ms");
        const double serial = jnum_k(r.out, 1, "serial_ms"),
                     wait = jnum_k(r.out, 1, "wait_thread_ms");
        const double regions = jnum_k(r.out, 1, "regions"), p99 = jnum_k(r.out, 1, "p99");
        cr_expect(prod > 0 && other >= 0 && serial >= 0 && wait >= 0, "%s", r.out);
        /* a units check, not a timing one: the parts are means over every
         * step, and one step the VM stalls for milliseconds (seen: p50
         * 0.03 ms, p90 6.6 ms) moves a mean far past the median */
        cr_expect(prod + other < 20 * p99 + 50, "%s", r.out);
        cr_expect(jnum_k(r.out, 1, "product_gbs") > 0, "%s", r.out);
        /* the sampler runs between the regions: a part of the serial time */
        const double sample = jnum_k(r.out, 1, "sample_ms");
        cr_expect(sample >= 0 && sample <= serial + 1e-3, "%s", r.out);
        cr_expect_geq(regions, 5 * 5 + 1, "%s", r.out);
        /* the products by kind: stories260K's five (Q+K+V, output
         * projection, gate+up, down, logits), each named by its types and
         * shapes, their regions the product regions (four a layer and the
         * logits), their times the products' time, percentiles in order */
        cr_expect(strstr(r.out, "\"products\": [{\"kind\": \"") &&
                      strstr(r.out, "\"kind\": \"F32 64x64 + F32 64x32 + F32 64x32\"") &&
                      strstr(r.out, "\"kind\": \"F32 172x64\"") &&
                      strstr(r.out, "\"kind\": \"F32 64x512\""),
                  "%s", r.out);
        double kind_regions = 0, kind_ms = 0;
        for (int i = 1; i <= 5; i++) {
            const double p10 = jnum_nth(r.out, i, "gbs_p10"), p50 = jnum_nth(r.out, i, "gbs_p50");
            const double p90 = jnum_nth(r.out, i, "gbs_p90");
            cr_expect(p10 > 0 && p10 <= p50 && p50 <= p90, "kind %d: %s", i, r.out);
            /* the first "regions" is the breakdown's own, then one a kind */
            kind_regions += jnum_nth(r.out, i + 1, "regions");
            kind_ms += jnum_nth(r.out, i, "ms");
        }
        cr_expect_float_eq(kind_regions, 4 * 5 + 1, 1e-9, "%s", r.out); /* all but attention */
        cr_expect(kind_ms <= prod * 1.01 + 1e-3 && kind_ms >= prod * 0.99 - 1e-3, "%s", r.out);
        if (t == 1)
            cr_expect_eq(wait, 0, "one thread never waits for another: %s", r.out);
    }
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-r", "1", "--bw-mib", "16",
        "--json");
    cr_expect(!strstr(r.out, "\"breakdown\""), "%s", r.out);
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-r", "1", "--bw-mib", "16",
        "--breakdown");
    cr_expect(strstr(r.out, "per decode step: products "), "%s", r.out);
    cr_expect(strstr(r.out, "products by kind, per decode step") &&
                  strstr(r.out, "\n  F32 64x172 + F32 64x172 "),
              "%s", r.out);
}

/* The cached keys and values a decode step reads join the weights in a
 * second roofline. stories260K: 5 layers, one position's K (or V) is 4 KV
 * heads x 8 dims: 64 bytes in F16, 128 in F32, one 34-byte Q8_0 block; -p
 * 8 -n 4 decodes positions 8..11, attending 9..12 positions (10.5 on
 * average), each sequence of a batch its own. */
Test(bench_sweep, kv_roofline)
{
    static const struct {
        const char *type;
        double row_bytes;
    } caches[] = { { "f16", 64 }, { "f32", 128 }, { "q8_0", 34 } };
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-t", "1", "-r", "1", "--batch",
            "1,2", "--bw-mib", "16", "--cache-type", caches[i].type, "--json");
        cr_assert_eq(r.status, 0, "%s", r.err);
        for (int k = 1; k <= 2; k++) {
            const double kv = jnum_k(r.out, k, "kv_bytes_per_step");
            const double want = k * 2.0 * 5 * 10.5 * caches[i].row_bytes;
            cr_expect(near(kv, want, 0, 0.5), "%s batch %d: %.1f bytes, want %.1f", caches[i].type,
                      k, kv, want);
            const double bw = jnum_k(r.out, k, "bandwidth_gbs"),
                         wbt = jnum_k(r.out, k, "weight_bytes_per_token");
            cr_expect(
                near(jnum_k(r.out, k, "roofline_kv_tok_s"), k * bw * 1e9 / (wbt + kv), 1e-3, 0.01),
                "%s", r.out);
            cr_expect(jnum_k(r.out, k, "roofline_kv_pct") > jnum_k(r.out, k, "roofline_pct"), "%s",
                      r.out);
        }
    }
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-t", "1", "-r", "1", "--bw-mib",
        "16");
    cr_expect(strstr(r.out, "with the KV cache a step reads (0.0 MB at positions 8-11)"), "%s",
              r.out);
}

/* A sliding layer reads only its window: the shared Gemma 2 file slides
 * every other one of its 26 layers over 64 positions, and one position's K
 * (or V) is 2 KV heads x 32 dims in F16, 128 bytes. -p 100 -n 4 attends
 * 101..104 positions (102.5 on average) in the 13 global layers, 64 in the
 * 13 sliding ones. */
Test(bench_sweep, kv_roofline_sliding)
{
    char path[1024];
    if (!td_path(path, sizeof path, "models/synthetic-gemma2-F16.gguf"))
        cr_skip_test("SKIP: ../shared not found (set GENLOOP_SHARED): needs "
                     "models/synthetic-gemma2-F16.gguf");
    RUN(&r, NULL, "bench", "-m", path, "-p", "100", "-n", "4", "-t", "1", "-r", "1", "--bw-mib",
        "16", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const double want = 2.0 * (13 * 102.5 + 13 * 64) * 128;
    cr_expect(near(jnum_k(r.out, 1, "kv_bytes_per_step"), want, 0, 0.5), "want %.1f: %s", want,
              r.out);
}

/* The bandwidth probes run before and after the measurements; the one before
 * runs in a child, so its buffer (512 MiB here) never counts in the peak RSS
 * reported for a 1 MB model. */
Test(bench_sweep, probe_outside_peak_rss)
{
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-t", "1", "-r", "1", "--bw-mib",
        "512", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "before the runs") && strstr(r.err, "after"), "%s", r.err);
    const double rss = jnum_k(r.out, 1, "peak_rss_bytes");
    cr_expect(rss > 0 && rss < 400.0 * 1048576, "peak RSS %.0f bytes includes the probe", rss);
    cr_expect(jnum_k(r.out, 1, "bandwidth_gbs") > 0);
}

/* Each row's roofline is the probe at its own thread count: a sweep over
 * -t probes every count, and the default (-t omitted: one thread per
 * physical core) probes the count the context then runs with (it once
 * probed one thread and set a 2-thread decode against it). */
Test(bench_sweep, probe_per_thread_count)
{
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-t", "1,2", "-r", "1", "--bw-mib",
        "16", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "after (1 thread)") && strstr(r.err, "after (2 threads)"), "%s", r.err);
    for (int k = 1; k <= 2; k++) {
        const double bw = jnum_k(r.out, k, "bandwidth_gbs"),
                     wbt = jnum_k(r.out, k, "weight_bytes_per_token");
        cr_expect(bw > 0 && wbt > 0);
        cr_expect(near(jnum_k(r.out, k, "roofline_tok_s"), bw * 1e9 / wbt, 1e-3, 0.01), "row %d",
                  k);
    }
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-r", "1", "--bw-mib", "16",
        "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[64];
    const int t = (int)jnum_k(r.out, 1, "threads");
    snprintf(want, sizeof want, "after (%d thread%s)", t, t == 1 ? "" : "s");
    cr_expect(t >= 1 && strstr(r.err, want), "rows run %d threads; probes: %s", t, r.err);
}

/* Both probes are reported, the roofline takes the higher, and a spread of
 * more than 20 % between them is said on stderr (whichever way this
 * machine's bandwidth moved during the run, the warning matches it). */
Test(bench_sweep, probe_spread)
{
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8", "-n", "4", "-t", "1,2", "-r", "1", "--bw-mib",
        "16", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    bool any_wide = false;
    for (int k = 1; k <= 2; k++) {
        const double bw = jnum_k(r.out, k, "bandwidth_gbs"),
                     before = jnum_k(r.out, k, "bandwidth_before_gbs"),
                     after = jnum_k(r.out, k, "bandwidth_after_gbs");
        cr_expect(before > 0 && after > 0, "row %d: %s", k, r.out);
        cr_expect(near(bw, before > after ? before : after, 1e-6, 1e-3), "row %d: %s", k, r.out);
        const double hi = before > after ? before : after, lo = before > after ? after : before;
        const bool wide = 100.0 * (hi - lo) / hi > 20.0;
        char want[64];
        snprintf(want, sizeof want, "the %d-thread probes", k);
        cr_expect(wide == (strstr(r.err, want) != NULL), "row %d: %.3f / %.3f GB/s: %s", k, before,
                  after, r.err);
        any_wide |= wide;
    }
    cr_expect(any_wide == (strstr(r.err, "warning") != NULL), "%s", r.err);
}

Test(bench_sweep, bad_lists_refused)
{
    const char *const a1[] = { "bench", "-m", "x.gguf", "-p", "8,,16", NULL };
    cr_assert_eq(cli_run(&r, NULL, 0, a1), 0);
    cr_expect_eq(r.status, 2);
    const char *const a2[] = { "bench", "-m", "x.gguf", "-t", "1,", NULL };
    cr_assert_eq(cli_run(&r, NULL, 0, a2), 0);
    cr_expect_eq(r.status, 2);
    const char *const a3[] = { "bench", "-m", "x.gguf", "-o", "xml", NULL };
    cr_assert_eq(cli_run(&r, NULL, 0, a3), 0);
    cr_expect_eq(r.status, 2);
}

/* ---- plots -------------------------------------------------------------- */

/* Checks the k-th latency polyline and percentile markers of svg against
 * object k (1-based) of json. */
static void check_series(const char *svg, int k, const char *json, int obj)
{
    char attr[1 << 16];
    static double sv[4096], jv[4096];
    cr_assert(svg_attr(svg, "<polyline class=\"latency\"", k, "data-values", attr, sizeof attr),
              "no latency series %d", k);
    const int ns = parse_numbers(attr, sv, 4096);
    const int nj = jarr_k(json, obj, "latency_series_ms", jv, 4096);
    cr_expect_eq(ns, nj, "series %d: %d values in the SVG, %d in the JSON", k, ns, nj);
    for (int i = 0; i < ns && i < nj; i++)
        cr_expect(near(sv[i], jv[i], 1e-3, 6e-5), "token %d: %g vs %g", i, sv[i], jv[i]);
    static const char *const ps[3] = { "p50", "p90", "p99" };
    for (int m = 0; m < 3; m++) {
        cr_assert(svg_attr(svg, "<line class=\"pct\"", 3 * k + m, "data-ms", attr, sizeof attr));
        const double want = jnum_k(json, obj, ps[m]);
        cr_expect(near(atof(attr), want, 1e-3, 6e-5), "%s: SVG %s, JSON %g", ps[m], attr, want);
    }
}

Test(plot, bench_sweep_svg_matches_json)
{
    char svg_path[128];
    snprintf(svg_path, sizeof svg_path, "/tmp/gl_bench_plot_%ld.svg", (long)getpid());
    RUN(&r, NULL, "bench", "-m", model(), "-p", "8,32", "-n", "12", "-t", "1,2", "-r", "2",
        "--bw-mib", "16", "-o", "json", "--plot", svg_path);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *svg = slurp(svg_path);
    const char *bad = xml_check(svg, "svg");
    cr_assert(!bad, "the SVG is not well-formed XML: %s", bad);
    /* rows in order t=1 p=8, t=1 p=32, t=2 p=8, t=2 p=32 */
    for (int k = 0; k < 4; k++)
        check_series(svg, k, r.out, k + 1);
    char attr[4096];
    cr_assert(!svg_attr(svg, "<polyline class=\"latency\"", 4, "data-values", attr, sizeof attr));
    /* tok/s against threads: one line per prompt length, points at t = 1, 2 */
    for (int g = 0; g < 2; g++) {
        double x[8], y[8];
        cr_assert(svg_attr(svg, "<polyline class=\"tps-threads\"", g, "data-x", attr, sizeof attr));
        cr_expect_eq(parse_numbers(attr, x, 8), 2);
        cr_expect(x[0] == 1 && x[1] == 2);
        cr_assert(svg_attr(svg, "<polyline class=\"tps-threads\"", g, "data-y", attr, sizeof attr));
        cr_expect_eq(parse_numbers(attr, y, 8), 2);
        for (int i = 0; i < 2; i++) {
            const double want = jnum_k(r.out, 1 + 2 * i + g, "decode_tok_s");
            cr_expect(near(y[i], want, 1e-4, 0.006), "threads %g: %g vs %g", x[i], y[i], want);
        }
        cr_assert(svg_attr(svg, "<polyline class=\"tps-depth\"", g, "data-x", attr, sizeof attr));
        cr_expect_eq(parse_numbers(attr, x, 8), 2);
        cr_expect(x[0] == 8 && x[1] == 32);
        cr_assert(svg_attr(svg, "<polyline class=\"tps-depth\"", g, "data-y", attr, sizeof attr));
        parse_numbers(attr, y, 8);
        for (int i = 0; i < 2; i++) {
            const double want = jnum_k(r.out, 1 + 2 * g + i, "decode_tok_s");
            cr_expect(near(y[i], want, 1e-4, 0.006), "depth %g: %g vs %g", x[i], y[i], want);
        }
    }
    free(svg);
    unlink(svg_path);
}

Test(plot, run_latency_svg_matches_json)
{
    char svg_path[128];
    snprintf(svg_path, sizeof svg_path, "/tmp/gl_run_plot_%ld.svg", (long)getpid());
    RUN(&r, NULL, "run", "-m", model(), "-p", "Once upon a time", "-n", "40", "--temp", "0", "-t",
        "1", "--json", "--latency-plot", svg_path);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *svg = slurp(svg_path);
    const char *bad = xml_check(svg, "svg");
    cr_assert(!bad, "the SVG is not well-formed XML: %s", bad);
    /* object 0: the search starts at the beginning of run's single object */
    const char *json = r.out;
    double v[64];
    cr_expect_eq(jarr_k(json, 0, "latency_series_ms", v, 64), 39,
                 "40 tokens: 39 gaps between them");
    check_series(svg, 0, json, 0);
    cr_expect(!strstr(svg, "tps-threads"), "no sweep panels for a single run");
    free(svg);
    unlink(svg_path);
}

Test(plot, xml_checker_catches_errors)
{
    cr_expect(!xml_check("<svg a=\"1\"><g/><text>x &amp; y</text></svg>", "svg"));
    cr_expect(xml_check("<svg><g></svg>", "svg"));
    cr_expect(xml_check("<svg a=1></svg>", "svg"));
    cr_expect(xml_check("<svg>a & b</svg>", "svg"));
    cr_expect(xml_check("<svg></svg><svg></svg>", "svg"));
    cr_expect(xml_check("<svg a=\"<\"></svg>", "svg"));
}
