#include "metrics.h"

static const double bucket_s[METRICS_BUCKETS] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                  0.1,   0.25,   0.5,   1,    2.5,   10 };

void metrics_count_status(metrics *m, int status)
{
    const int d = status / 100;
    if (d >= 1 && d <= 5)
        m->by_status[d]++;
}

void metrics_observe(histogram *h, double seconds)
{
    int b = 0;
    while (b < METRICS_BUCKETS && seconds > bucket_s[b])
        b++;
    h->counts[b]++;
    h->sum += seconds;
    h->n++;
}

static void render_hist(sbuf *out, const char *name, const char *help, const histogram *h)
{
    sb_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (int b = 0; b < METRICS_BUCKETS; b++) {
        cum += h->counts[b];
        sb_printf(out, "%s_bucket{le=\"%g\"} %llu\n", name, bucket_s[b], (unsigned long long)cum);
    }
    cum += h->counts[METRICS_BUCKETS];
    sb_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name,
              (unsigned long long)cum, name, h->sum, name, (unsigned long long)h->n);
}

void metrics_render(const metrics *m, sbuf *out, uint64_t prefill_tokens, uint64_t decode_tokens,
                    int queue, int running, int connections)
{
    sb_puts(out, "# HELP genloop_requests_total HTTP requests answered, by status class.\n"
                 "# TYPE genloop_requests_total counter\n");
    for (int d = 1; d <= 5; d++)
        sb_printf(out, "genloop_requests_total{status=\"%dxx\"} %llu\n", d,
                  (unsigned long long)m->by_status[d]);
    sb_printf(
        out,
        "# HELP genloop_completions_total Completions that ran to a stop.\n"
        "# TYPE genloop_completions_total counter\ngenloop_completions_total %llu\n"
        "# HELP genloop_cancelled_total Requests cancelled by a client disconnect.\n"
        "# TYPE genloop_cancelled_total counter\ngenloop_cancelled_total %llu\n"
        "# HELP genloop_prompt_tokens_reused_total Prompt tokens served from a slot's "
        "cache.\n"
        "# TYPE genloop_prompt_tokens_reused_total counter\n"
        "genloop_prompt_tokens_reused_total %llu\n"
        "# HELP genloop_tokens_prefilled_total Prompt tokens run through the model.\n"
        "# TYPE genloop_tokens_prefilled_total counter\ngenloop_tokens_prefilled_total %llu\n"
        "# HELP genloop_tokens_decoded_total Generated tokens run through the model.\n"
        "# TYPE genloop_tokens_decoded_total counter\ngenloop_tokens_decoded_total %llu\n"
        "# HELP genloop_tokens_generated_total Tokens returned to clients (completion_tokens).\n"
        "# TYPE genloop_tokens_generated_total counter\ngenloop_tokens_generated_total %llu\n"
        "# HELP genloop_queue_depth Requests waiting for a sequence slot.\n"
        "# TYPE genloop_queue_depth gauge\ngenloop_queue_depth %d\n"
        "# HELP genloop_running_sequences Sequences being prefilled or decoded.\n"
        "# TYPE genloop_running_sequences gauge\ngenloop_running_sequences %d\n"
        "# HELP genloop_open_connections Client connections open.\n"
        "# TYPE genloop_open_connections gauge\ngenloop_open_connections %d\n",
        (unsigned long long)m->completions, (unsigned long long)m->cancelled,
        (unsigned long long)m->prefix_reused_tokens, (unsigned long long)prefill_tokens,
        (unsigned long long)decode_tokens, (unsigned long long)m->generated, queue, running,
        connections);
    render_hist(out, "genloop_time_to_first_token_seconds",
                "Time from a request's arrival to its first generated token.", &m->ttft);
    render_hist(out, "genloop_time_per_output_token_seconds",
                "Decode time per generated token after the first, per request.", &m->per_token);
}
