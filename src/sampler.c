/* Token sampling.
 *
 * Order of the stages (llama.cpp's default chain, where temperature comes
 * after the truncation samplers):
 *
 *   repetition penalty -> [temp <= 0: greedy argmax, nothing else]
 *   -> top-k -> top-p -> min-p -> temperature -> softmax -> draw
 *
 * so top-k, top-p and min-p judge probabilities of the untempered logits:
 * the temperature reshapes the surviving distribution but never changes
 * which tokens survive.
 *
 * Every ranking breaks ties by the lower token id, and the generator is
 * xoshiro256** seeded through splitmix64, so a seed gives the same tokens on
 * every platform. All scratch is allocated by gl_sampler_create: the per
 * token path never allocates. */
#include "genloop.h"
#include "error.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct gl_cand {
    float z;
    int32_t id;
} gl_cand;

struct gl_sampler {
    gl_sampler_params p;
    int n_vocab;
    uint64_t rng[4];
    float *work;   /* gl_sampler_probs' copy of its const logits              */
    gl_cand *cand; /* surviving tokens                                        */
    float *w;      /* their unnormalised final weights, parallel to cand      */
    uint8_t *seen; /* penalty dedup; all zero between calls                   */
};

/* ---- random numbers ---------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro256ss(uint64_t s[4])
{
    uint64_t out = rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return out;
}

/* The top 24 bits: exactly representable in a float, so the result is < 1. */
static float rng_uniform(uint64_t s[4])
{
    return (float)(xoshiro256ss(s) >> 40) * 0x1p-24f;
}

/* ---- ranking ----------------------------------------------------------- */

/* Strict total order (larger logit first, then lower id) so that any
 * selection or sort gives the same answer everywhere. */
static int ranks_above(gl_cand a, gl_cand b)
{
    return a.z > b.z || (a.z == b.z && a.id < b.id);
}

/* best_on_top: the root is the highest-ranked element (to pop the nucleus in
 * order); otherwise the lowest (to evict from a bounded top-k heap). */
static void sift_down(gl_cand *h, int n, int i, int best_on_top)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && (best_on_top ? ranks_above(h[l], h[m]) : ranks_above(h[m], h[l])))
            m = l;
        if (r < n && (best_on_top ? ranks_above(h[r], h[m]) : ranks_above(h[m], h[r])))
            m = r;
        if (m == i)
            return;
        gl_cand t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heapify(gl_cand *h, int n, int best_on_top)
{
    for (int i = n / 2 - 1; i >= 0; i--)
        sift_down(h, n, i, best_on_top);
}

/* The k highest-ranked tokens into out, best first: O(V log k) with a heap
 * whose root is the weakest survivor, instead of sorting the vocabulary. */
static void select_top_k(const float *z, int n_vocab, int k, gl_cand *out)
{
    for (int i = 0; i < k; i++)
        out[i] = (gl_cand){ z[i], i };
    heapify(out, k, 0);
    for (int i = k; i < n_vocab; i++) {
        /* Later ids lose ties, so only a strictly larger logit gets in. */
        if (z[i] > out[0].z) {
            out[0] = (gl_cand){ z[i], i };
            sift_down(out, k, 0, 0);
        }
    }
    /* Heapsort: moving the weakest to the back leaves the array best first. */
    for (int n = k - 1; n > 0; n--) {
        gl_cand t = out[0];
        out[0] = out[n];
        out[n] = t;
        sift_down(out, n, 0, 0);
    }
}

/* ---- the pipeline ------------------------------------------------------ */

static void apply_penalty(gl_sampler *s, float *z, const int32_t *hist, int n_hist)
{
    float pen = s->p.repeat_penalty;
    int n = n_hist;
    if (s->p.repeat_last_n >= 0 && s->p.repeat_last_n < n)
        n = s->p.repeat_last_n;
    if (pen == 1.0f || !hist || n <= 0)
        return;
    const int32_t *h = hist + (n_hist - n);
    for (int i = 0; i < n; i++) {
        int32_t t = h[i];
        if (t < 0 || t >= s->n_vocab || s->seen[t])
            continue;
        s->seen[t] = 1;
        /* Dividing a negative logit would raise it, so those get multiplied. */
        z[t] = z[t] > 0.0f ? z[t] / pen : z[t] * pen;
    }
    for (int i = 0; i < n; i++) {
        int32_t t = h[i];
        if (t >= 0 && t < s->n_vocab)
            s->seen[t] = 0;
    }
}

/* +inf counts as FLT_MAX (as the sanitizing pass makes it); NaN passes
 * through, and every comparison below skips it. */
static inline float clamp_inf(float v)
{
    return v > FLT_MAX ? FLT_MAX : v;
}

/* The first index of the largest of z[0..n) (n >= 1), NaN skipped and +inf
 * equal to FLT_MAX, so the same token as after the sanitizing pass; 0 when
 * nothing is larger than -inf. It reads z once and writes nothing: per
 * block, the maximum over 32 lanes (8 vectors of 4: enough independent
 * max chains that the compiler's vector loop runs at the cache's rate),
 * then a search inside the first block that reached the largest. Over a
 * 151936-token vocabulary (Qwen2.5) ~17 us at the x86-64 baseline, where
 * the sanitizing pass, a 16-lane maximum and a search from the start took
 * 65-115 us, ~2 % of a small model's decode step spent by one thread while
 * the others wait. */
static int32_t argmax_first(const float *z, int n)
{
    enum { LANES = 32, BLOCK = 2048 };
    float best = -INFINITY;
    int best_block = 0;
    for (int b0 = 0; b0 < n; b0 += BLOCK) {
        const int b1 = n - b0 < BLOCK ? n : b0 + BLOCK;
        float lane[LANES];
        for (int k = 0; k < LANES; k++)
            lane[k] = -INFINITY;
        int i = b0;
        for (; i + LANES <= b1; i += LANES)
            for (int k = 0; k < LANES; k++) {
                const float v = clamp_inf(z[i + k]);
                lane[k] = v > lane[k] ? v : lane[k];
            }
        float m = -INFINITY;
        for (int k = 0; k < LANES; k++)
            m = lane[k] > m ? lane[k] : m;
        for (; i < b1; i++) {
            const float v = clamp_inf(z[i]);
            m = v > m ? v : m;
        }
        if (m > best) { /* strictly: an earlier block keeps a tie */
            best = m;
            best_block = b0;
        }
    }
    if (best == -INFINITY)
        return 0;
    int32_t arg = best_block; /* best is in this block (-0 == +0: the first of either) */
    while (clamp_inf(z[arg]) != best)
        arg++;
    return arg;
}

/* Runs every stage on z (modified). Returns 0 for greedy, with the token in
 * *pick; otherwise the number of candidates in s->cand, their weights in
 * s->w and the weights' sum in *total. */
static int run_pipeline(gl_sampler *s, float *z, const int32_t *hist, int n_hist, int32_t *pick,
                        double *total)
{
    const int V = s->n_vocab;
    const gl_sampler_params *p = &s->p;
    gl_cand *cand = s->cand;

    apply_penalty(s, z, hist, n_hist);

    const int32_t arg = argmax_first(z, V);
    if (p->temp <= 0.0f) { /* greedy needs nothing else, not even the sanitizing pass */
        *pick = arg;
        return 0;
    }
    /* NaN would poison every comparison and sum, +inf every difference. */
    for (int i = 0; i < V; i++) {
        const float v = z[i];
        z[i] = v != v ? -INFINITY : v > FLT_MAX ? FLT_MAX : v;
    }
    float m = z[arg];
    if (m == -INFINITY) {
        /* Nothing is possible: fall back to uniform rather than dividing 0 by 0. */
        for (int i = 0; i < V; i++)
            z[i] = 0.0f;
        m = 0.0f;
    }

    const int top_p_on = p->top_p < 1.0f;
    const float min_p_thr = p->min_p > 0.0f ? logf(p->min_p) : -INFINITY;
    double zsum = 0.0; /* softmax normaliser at the top-p stage, relative to m */
    int n;

    if (p->top_k > 0 && p->top_k < V) {
        n = p->top_k;
        select_top_k(z, V, n, cand);
        if (top_p_on) {
            /* The nucleus is measured on the renormalised top-k survivors. */
            for (int i = 0; i < n; i++)
                zsum += expf(cand[i].z - m);
            double target = (double)p->top_p * zsum, cum = 0.0;
            for (int i = 0; i < n; i++) {
                cum += expf(cand[i].z - m);
                if (cum >= target) {
                    n = i + 1;
                    break;
                }
            }
        }
    } else {
        /* The nucleus and the min-p set are both prefixes of the ranked
         * vocabulary, so only tokens that can be in both need ranking. A token
         * below c = (1 - top_p) / (V - 1) is never needed: all such tokens
         * together hold less than 1 - top_p, so the rest reach top_p. */
        float thr = min_p_thr;
        if (top_p_on) {
            for (int i = 0; i < V; i++)
                zsum += expf(z[i] - m);
            if (V > 1) {
                double c = (1.0 - (double)p->top_p) / (V - 1);
                float t = (float)(log(c) + log(zsum));
                if (t > thr)
                    thr = t;
            }
        }
        n = 0;
        for (int i = 0; i < V; i++)
            if (z[i] - m >= thr)
                cand[n++] = (gl_cand){ z[i], i };
        if (top_p_on) {
            /* Pop from a best-on-top heap just until the nucleus is complete:
             * O(n + kept log n) rather than a sort of every candidate. */
            double target = (double)p->top_p * zsum, cum = 0.0;
            int left = n;
            heapify(cand, n, 1);
            while (left > 0) {
                gl_cand t = cand[0];
                cand[0] = cand[left - 1];
                cand[--left] = t;
                sift_down(cand, left, 0, 1);
                cum += expf(t.z - m);
                if (cum >= target)
                    break;
            }
            /* The popped tokens sit at the back, best last: bring them to the
             * front, best first. */
            int kept = n - left;
            for (int a = left, b = n - 1; a < b; a++, b--) {
                gl_cand t = cand[a];
                cand[a] = cand[b];
                cand[b] = t;
            }
            memmove(cand, cand + left, (size_t)kept * sizeof *cand);
            n = kept;
        }
    }

    if (p->min_p > 0.0f) {
        /* The best token always survives the earlier stages, so m is still the
         * maximum and min_p x p_max is a fixed offset from it in logit space.
         * Without top-k the prefilter above already did this; the pass is cheap. */
        int j = 0;
        for (int i = 0; i < n; i++)
            if (cand[i].z - m >= min_p_thr)
                cand[j++] = cand[i];
        n = j;
    }

    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        /* Division, not a reciprocal: 1/temp overflows for tiny temperatures
         * and 0 * inf is NaN for the top token. */
        float w = expf((cand[i].z - m) / p->temp);
        s->w[i] = w;
        sum += w;
    }
    *total = sum;
    return n;
}

/* ---- public API -------------------------------------------------------- */

gl_sampler_params gl_sampler_default_params(void)
{
    gl_sampler_params p;
    p.temp = 0.8f;
    p.top_k = 40;
    p.top_p = 0.95f;
    p.min_p = 0.05f;
    p.repeat_penalty = 1.0f;
    p.repeat_last_n = 64;
    p.seed = 0xC0FFEEull;
    return p;
}

static gl_status check_params(int n_vocab, const gl_sampler_params *p, gl_error *err)
{
    if (n_vocab <= 0)
        return gl_fail(err, GL_ERR_ARG, "sampler: n_vocab must be > 0, got %d", n_vocab);
    /* Written as negated accepts so that NaN is rejected too. */
    if (!(p->temp >= 0.0f && p->temp <= FLT_MAX))
        return gl_fail(err, GL_ERR_ARG, "sampler: temp must be finite and >= 0, got %g",
                       (double)p->temp);
    if (p->top_k < 0)
        return gl_fail(err, GL_ERR_ARG, "sampler: top_k must be >= 0, got %d", p->top_k);
    if (!(p->top_p > 0.0f && p->top_p <= 1.0f))
        return gl_fail(err, GL_ERR_ARG, "sampler: top_p must be in (0, 1], got %g",
                       (double)p->top_p);
    if (!(p->min_p >= 0.0f && p->min_p <= 1.0f))
        return gl_fail(err, GL_ERR_ARG, "sampler: min_p must be in [0, 1], got %g",
                       (double)p->min_p);
    if (!(p->repeat_penalty > 0.0f && p->repeat_penalty <= FLT_MAX))
        return gl_fail(err, GL_ERR_ARG, "sampler: repeat_penalty must be finite and > 0, got %g",
                       (double)p->repeat_penalty);
    if (p->repeat_last_n < -1)
        return gl_fail(err, GL_ERR_ARG,
                       "sampler: repeat_last_n must be >= -1 (-1: whole history), got %d",
                       p->repeat_last_n);
    return GL_OK;
}

gl_status gl_sampler_create(gl_sampler **out, int n_vocab, const gl_sampler_params *p,
                            gl_error *err)
{
    if (!out)
        return gl_fail(err, GL_ERR_ARG, "sampler: out is NULL");
    *out = NULL;
    gl_sampler_params def = gl_sampler_default_params();
    if (!p)
        p = &def;
    gl_status st = check_params(n_vocab, p, err);
    if (st != GL_OK)
        return st;

    gl_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return gl_fail(err, GL_ERR_NOMEM, "sampler: out of memory");
    s->p = *p;
    s->n_vocab = n_vocab;
    size_t n = (size_t)n_vocab;
    s->work = malloc(n * sizeof *s->work);
    s->cand = malloc(n * sizeof *s->cand);
    s->w = malloc(n * sizeof *s->w);
    s->seen = calloc(n, 1);
    if (!s->work || !s->cand || !s->w || !s->seen) {
        gl_sampler_free(s);
        return gl_fail(err, GL_ERR_NOMEM, "sampler: out of memory for n_vocab %d", n_vocab);
    }
    uint64_t x = p->seed;
    for (int i = 0; i < 4; i++)
        s->rng[i] = splitmix64(&x);
    *out = s;
    return GL_OK;
}

void gl_sampler_free(gl_sampler *s)
{
    if (!s)
        return;
    free(s->work);
    free(s->cand);
    free(s->w);
    free(s->seen);
    free(s);
}

/* Returns -1 only when s or logits is NULL. */
int32_t gl_sampler_sample(gl_sampler *s, float *logits, const int32_t *history, int n_history)
{
    if (!s || !logits)
        return -1;
    int32_t pick = 0;
    double total = 0.0;
    int n = run_pipeline(s, logits, history, n_history, &pick, &total);
    if (n == 0)
        return pick;

    double r = (double)rng_uniform(s->rng) * total, cum = 0.0;
    int last = 0;
    for (int i = 0; i < n; i++) {
        if (s->w[i] > 0.0f) {
            cum += s->w[i];
            last = i;
            if (r < cum)
                return s->cand[i].id;
        }
    }
    /* Rounding left r at or past the final sum: the last possible token. */
    return s->cand[last].id;
}

void gl_sampler_probs(gl_sampler *s, const float *logits, const int32_t *history, int n_history,
                      float *probs)
{
    if (!s || !probs)
        return;
    size_t V = (size_t)s->n_vocab;
    memset(probs, 0, V * sizeof *probs);
    if (!logits)
        return;
    memcpy(s->work, logits, V * sizeof *s->work);
    int32_t pick = 0;
    double total = 0.0;
    int n = run_pipeline(s, s->work, history, n_history, &pick, &total);
    if (n == 0) {
        probs[pick] = 1.0f;
        return;
    }
    for (int i = 0; i < n; i++)
        probs[s->cand[i].id] = (float)(s->w[i] / total);
}
