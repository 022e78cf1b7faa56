/* Server counters and latency histograms, rendered as Prometheus text. */
#ifndef GENLOOP_SERVE_METRICS_H
#define GENLOOP_SERVE_METRICS_H

#include <stdint.h>

#include "sbuf.h"

#define METRICS_BUCKETS 12

typedef struct histogram {
    uint64_t counts[METRICS_BUCKETS + 1]; /* the last is +Inf */
    double sum;
    uint64_t n;
} histogram;

typedef struct metrics {
    uint64_t by_status[6]; /* 1xx..5xx by first digit, index 1..5 */
    uint64_t completions, cancelled, prefix_reused_tokens, generated;
    histogram ttft, per_token;
} metrics;

void metrics_count_status(metrics *m, int status);
void metrics_observe(histogram *h, double seconds);
/* queue: requests waiting for a slot, running: sequences in the engine */
void metrics_render(const metrics *m, sbuf *out, uint64_t prefill_tokens, uint64_t decode_tokens,
                    int queue, int running, int connections);

#endif
