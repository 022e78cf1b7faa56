/* The latency SVG (see latency_plot.h): stacked panels with linear axes,
 * written by hand so the CLI needs no plotting library. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency_plot.h"

enum { W = 1120, PANEL_H = 300, GAP = 75, TOP = 75, LEFT = 80, RIGHT = 340 };
#define MAX_POINTS 2000  /* polyline vertices per series; more are bucketed */
#define MAX_DATA   20000 /* data-values written up to this many tokens */

static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22" };
#define N_COLORS (int)(sizeof colors / sizeof colors[0])

static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            /* control bytes are not allowed in XML 1.0 */
            fputc((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' ? ' ' : *s, f);
        }
    }
}

/* A panel: data range [x0, x1] x [y0, y1] mapped into a box. */
typedef struct panel {
    double x0, x1, y0, y1;
    bool x_int;            /* x ticks on whole numbers (threads, tokens) */
    double bx, by, bw, bh; /* box in pixels */
} panel;

static double px(const panel *p, double x)
{
    return p->bx + (x - p->x0) / (p->x1 - p->x0) * p->bw;
}

static double py(const panel *p, double y)
{
    return p->by + p->bh - (y - p->y0) / (p->y1 - p->y0) * p->bh;
}

/* 1, 2 or 5 times a power of ten, about range / 5 */
static double nice_step(double range)
{
    if (!(range > 0))
        return 1;
    const double raw = range / 5, mag = pow(10, floor(log10(raw))), r = raw / mag;
    return mag * (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10);
}

/* Widens [lo, hi] to whole steps (and to a non-empty range). */
static void nice_range(double *lo, double *hi)
{
    if (!(*hi > *lo)) {
        *hi = *lo + (*lo != 0 ? fabs(*lo) * 0.5 : 1);
        *lo -= *lo != 0 ? fabs(*lo) * 0.5 : 0;
    }
    const double s = nice_step(*hi - *lo);
    *lo = floor(*lo / s) * s;
    *hi = ceil(*hi / s) * s;
}

static void draw_frame(FILE *f, const panel *p, const char *title, const char *xlabel,
                       const char *ylabel)
{
    fprintf(f,
            "<g class=\"panel\">\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"15\" "
            "font-weight=\"bold\">",
            p->bx, p->by - 12);
    xml_text(f, title);
    fprintf(f,
            "</text>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"#fafafa\" stroke=\"#333\"/>\n",
            p->bx, p->by, p->bw, p->bh);
    double sx = nice_step(p->x1 - p->x0);
    const double sy = nice_step(p->y1 - p->y0);
    if (p->x_int && sx < 1)
        sx = 1;
    for (double x = ceil(p->x0 / sx) * sx; x <= p->x1 + sx * 1e-9; x += sx) {
        const double X = px(p, x);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n",
                X, p->by, X, p->by + p->bh, X, p->by + p->bh + 15, x);
    }
    for (double y = ceil(p->y0 / sy) * sy; y <= p->y1 + sy * 1e-9; y += sy) {
        const double Y = py(p, y);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>\n",
                p->bx, Y, p->bx + p->bw, Y, p->bx - 6, Y + 4, y);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">",
            p->bx + p->bw / 2, p->by + p->bh + 34);
    xml_text(f, xlabel);
    fprintf(f,
            "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 %.1f %.1f)\">",
            p->bx - 55, p->by + p->bh / 2, p->bx - 55, p->by + p->bh / 2);
    xml_text(f, ylabel);
    fputs("</text>\n</g>\n", f);
}

static void legend(FILE *f, const panel *p, int i, const char *label)
{
    const double x = p->bx + p->bw + 15, y = p->by + 10 + 18 * i;
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"3\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">",
            x, y, x + 18, y, colors[i % N_COLORS], x + 24, y + 4);
    xml_text(f, label);
    fputs("</text>\n", f);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int lp_percentiles(const double *v, int n, double out[3])
{
    static const double p[3] = { 50, 90, 99 };
    out[0] = out[1] = out[2] = 0;
    if (n <= 0)
        return 0;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    for (int i = 0; i < 3; i++)
        out[i] = s[(int)(p[i] / 100.0 * (n - 1) + 0.5)];
    free(s);
    return 0;
}

/* Per-token latency over the generation; long runs are bucketed keeping
 * each bucket's maximum, so stalls stay visible. */
static void latency_panel(FILE *f, const panel *p, const lp_series *s, int ns)
{
    for (int k = 0; k < ns; k++) {
        fprintf(f,
                "<polyline class=\"latency\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"1.2\" data-label=\"",
                colors[k % N_COLORS]);
        xml_text(f, s[k].label);
        fprintf(f, "\" data-n=\"%d\"", s[k].n);
        if (s[k].n <= MAX_DATA) {
            fputs(" data-values=\"", f);
            for (int i = 0; i < s[k].n; i++)
                fprintf(f, "%s%.6g", i ? " " : "", s[k].lat_ms[i]);
            fputc('"', f);
        }
        fputs(" points=\"", f);
        const int per = (s[k].n + MAX_POINTS - 1) / MAX_POINTS;
        for (int i = 0; i < s[k].n; i += per) {
            double mx = s[k].lat_ms[i];
            for (int j = i + 1; j < i + per && j < s[k].n; j++)
                mx = s[k].lat_ms[j] > mx ? s[k].lat_ms[j] : mx;
            fprintf(f, "%.1f,%.1f ", px(p, i), py(p, mx));
        }
        fputs("\"/>\n", f);
        legend(f, p, k, s[k].label);
    }
}

static int cdf_panel(FILE *f, const panel *p, const lp_series *s, int ns)
{
    static const char *const names[3] = { "p50", "p90", "p99" };
    for (int k = 0; k < ns; k++) {
        double *v = malloc((size_t)(s[k].n ? s[k].n : 1) * sizeof *v);
        if (!v)
            return -1;
        memcpy(v, s[k].lat_ms, (size_t)s[k].n * sizeof *v);
        qsort(v, (size_t)s[k].n, sizeof *v, cmp_double);
        const char *c = colors[k % N_COLORS];
        fprintf(f,
                "<polyline class=\"cdf\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                "data-label=\"",
                c);
        xml_text(f, s[k].label);
        fputs("\" points=\"", f);
        const int per = (s[k].n + MAX_POINTS - 1) / MAX_POINTS;
        for (int i = 0; i < s[k].n; i += per) {
            /* a step at each value: fraction below, then at or below */
            fprintf(f, "%.1f,%.1f %.1f,%.1f ", px(p, v[i]), py(p, (double)i / s[k].n), px(p, v[i]),
                    py(p, (double)(i + 1) / s[k].n));
        }
        if (s[k].n)
            fprintf(f, "%.1f,%.1f", px(p, v[s[k].n - 1]), py(p, 1));
        fputs("\"/>\n", f);
        free(v);
        const double pv[3] = { s[k].p50, s[k].p90, s[k].p99 }, pq[3] = { 0.5, 0.9, 0.99 };
        for (int m = 0; m < 3; m++) {
            const double X = px(p, pv[m]);
            fputs("<line class=\"pct\" data-label=\"", f);
            xml_text(f, s[k].label);
            fprintf(f,
                    "\" data-p=\"%s\" data-ms=\"%.6g\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                    "y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>\n",
                    names[m] + 1, pv[m], X, p->by, X, p->by + p->bh, c);
            if (ns == 1 || k == 0)
                fprintf(f,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">%s %.3g "
                        "ms</text>\n",
                        X + 3, py(p, pq[m]) + (m == 2 ? 14 : -4), c, names[m], pv[m]);
        }
        legend(f, p, k, s[k].label);
    }
    return 0;
}

/* tok/s against x, one line per group (in order of first appearance). */
static void sweep_panel(FILE *f, const panel *p, const char *cls, const lp_point *pt, int n)
{
    const char *groups[64];
    int ng = 0;
    for (int i = 0; i < n && ng < 64; i++) {
        bool seen = false;
        for (int g = 0; g < ng; g++)
            seen |= !strcmp(groups[g], pt[i].group);
        if (!seen)
            groups[ng++] = pt[i].group;
    }
    for (int g = 0; g < ng; g++) {
        const char *c = colors[g % N_COLORS];
        /* points of the group, by x */
        lp_point sel[256];
        int m = 0;
        for (int i = 0; i < n && m < 256; i++)
            if (!strcmp(pt[i].group, groups[g]))
                sel[m++] = pt[i];
        for (int a = 1; a < m; a++)
            for (int b = a; b > 0 && sel[b].x < sel[b - 1].x; b--) {
                lp_point t = sel[b];
                sel[b] = sel[b - 1];
                sel[b - 1] = t;
            }
        fprintf(f,
                "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                "data-label=\"",
                cls, c);
        xml_text(f, groups[g]);
        fputs("\" data-x=\"", f);
        for (int i = 0; i < m; i++)
            fprintf(f, "%s%g", i ? " " : "", sel[i].x);
        fputs("\" data-y=\"", f);
        for (int i = 0; i < m; i++)
            fprintf(f, "%s%.6g", i ? " " : "", sel[i].y);
        fputs("\" points=\"", f);
        for (int i = 0; i < m; i++)
            fprintf(f, "%.1f,%.1f ", px(p, sel[i].x), py(p, sel[i].y));
        fputs("\"/>\n", f);
        for (int i = 0; i < m; i++)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", px(p, sel[i].x),
                    py(p, sel[i].y), c);
        legend(f, p, g, groups[g]);
    }
}

static bool spans(const lp_point *pt, int n)
{
    for (int i = 1; i < n; i++)
        if (pt[i].x != pt[0].x)
            return true;
    return false;
}

static panel make_panel(int index, double x0, double x1, double y0, double y1)
{
    panel p = { x0,     x1, y0, y1, false, LEFT, TOP + index * (PANEL_H + GAP), W - LEFT - RIGHT,
                PANEL_H };
    nice_range(&p.x0, &p.x1);
    nice_range(&p.y0, &p.y1);
    return p;
}

static panel sweep_range(int index, const lp_point *pt, int n)
{
    double x0 = pt[0].x, x1 = pt[0].x, y1 = 0;
    for (int i = 0; i < n; i++) {
        x0 = pt[i].x < x0 ? pt[i].x : x0;
        x1 = pt[i].x > x1 ? pt[i].x : x1;
        y1 = pt[i].y > y1 ? pt[i].y : y1;
    }
    panel p = make_panel(index, x0, x1, 0, y1 * 1.05);
    p.x_int = true;
    return p;
}

int latency_plot_write(const char *path, const char *title, const lp_series *s, int ns,
                       const lp_point *by_threads, int n_threads, const lp_point *by_depth,
                       int n_depth)
{
    const bool show_t = spans(by_threads, n_threads), show_d = spans(by_depth, n_depth);
    const int n_panels = 2 + show_t + show_d;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const int h = TOP + n_panels * (PANEL_H + GAP);
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"28\" font-size=\"17\">",
            W, h, W, h, LEFT);
    xml_text(f, title);
    fputs("</text>\n", f);

    double n_max = 1, lat_max = 0;
    for (int k = 0; k < ns; k++) {
        n_max = s[k].n - 1 > n_max ? s[k].n - 1 : n_max;
        for (int i = 0; i < s[k].n; i++)
            lat_max = s[k].lat_ms[i] > lat_max ? s[k].lat_ms[i] : lat_max;
    }
    panel p = make_panel(0, 0, n_max, 0, lat_max * 1.05);
    p.x_int = true;
    draw_frame(f, &p, "Decode latency per token", "generated token", "latency (ms)");
    latency_panel(f, &p, s, ns);
    p = make_panel(1, 0, lat_max, 0, 1);
    draw_frame(f, &p, "Latency CDF (dashed: p50, p90, p99)", "latency (ms)", "fraction of tokens");
    if (cdf_panel(f, &p, s, ns)) {
        fclose(f);
        errno = ENOMEM;
        return -1;
    }
    int idx = 2;
    if (show_t) {
        p = sweep_range(idx++, by_threads, n_threads);
        draw_frame(f, &p, "Decode throughput against threads", "threads", "decode tok/s");
        sweep_panel(f, &p, "tps-threads", by_threads, n_threads);
    }
    if (show_d) {
        p = sweep_range(idx++, by_depth, n_depth);
        draw_frame(f, &p, "Decode throughput against context depth",
                   "context depth (prompt tokens before decoding)", "decode tok/s");
        sweep_panel(f, &p, "tps-depth", by_depth, n_depth);
    }
    fputs("</svg>\n", f);
    return fclose(f) ? -1 : 0;
}
