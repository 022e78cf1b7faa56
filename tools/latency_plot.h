/* Latency you can see: a self-contained SVG (no scripts, no external
 * fonts or files) of per-token decode latency over a generation, its CDF
 * with p50/p90/p99 marked, and for benchmark sweeps tok/s against threads
 * and against context depth.
 *
 * The plotted numbers are also written as data-* attributes (raw values,
 * not pixels), so tests can check the picture against the JSON figures:
 *   <polyline class="latency" data-label=".." data-values="ms ms ..">
 *   <polyline class="cdf" data-label="..">
 *   <line class="pct" data-label=".." data-p="50|90|99" data-ms="..">
 *   <polyline class="tps-threads|tps-depth" data-label=".." data-x=".." data-y="..">
 */
#ifndef GENLOOP_TOOLS_LATENCY_PLOT_H
#define GENLOOP_TOOLS_LATENCY_PLOT_H

typedef struct lp_series {
    const char *label;
    const double *lat_ms; /* per-token decode latency, in generation order */
    int n;
    double p50, p90, p99;
} lp_series;

/* One measured configuration of a sweep: y (tok/s) at x (threads or
 * context depth) in the line named group. */
typedef struct lp_point {
    const char *group;
    double x, y;
} lp_point;

/* p50, p90 and p99 (nearest rank) of n values into out; 0, or -1 when out
 * of memory (out is then zeros). */
int lp_percentiles(const double *v, int n, double out[3]);

/* Writes the plot; sweep panels appear when their points span at least two
 * x values. Returns 0, or -1 with errno set. */
int latency_plot_write(const char *path, const char *title, const lp_series *s, int n_series,
                       const lp_point *by_threads, int n_threads, const lp_point *by_depth,
                       int n_depth);

#endif
