/* checkkernels — kernel conformance and benchmark program (checkasm style).
 *
 * For every backend this build has and this CPU runs, every kernel slot
 * that differs from the generic table is compared with generic on random
 * inputs and edge cases; every backend's matmul / attention slots are also
 * checked for the determinism contract of src/kernels.h (results bit-equal
 * for any r0/r1 split, batch size or run split). A plain program: no fork,
 * no Criterion, so it also runs under qemu-user.
 *
 *   checkkernels [--seed N] [--backend NAME] [--slot PREFIX] [--tune NAME] [-v] [--bench]
 *
 * Every backend runs under every decode tune (src/tune.h: each preset with
 * each product width, enum gl_tune_width): after the first, a tune's table is checked
 * where it has kernels no earlier tune had, so every instance is compared
 * with generic, with the same inputs. --tune checks one tune only.
 *
 * The RNG is reseeded per (slot, case), so every backend sees identical
 * inputs, and a failure is reproduced by passing the printed seed.
 *
 * Tolerances (u = 2^-24, the unit roundoff of float). Quantization is
 * compared byte for byte. Float results that generic computes with a
 * different summation order are compared with the classical bound for two
 * summations of the same terms, each within gamma_K * sum|terms|:
 *   dot products (float matmul, attention scores):
 *       |new - ref| <= 2 (n + 16) u sum_j |w_j x_j|  (+ n 2^-149 for
 *       subnormal products; scores add u |ref| for the final * scale)
 *   quantized matmul: the terms are the per-block products, K = blocks:
 *       |new - ref| <= 2 (nblk + 16) u sum_b |dw_b dx_b| sum_j |qw_j qx_j|
 *   attention accumulation: K = rows (+ 2):
 *       |new - ref| <= 2 (rows + 2) u (|out_0| + sum_j |p_j v_ji|)
 *       (Q8_0 caches: the same bounds over the dequantized elements d q, which
 *       are exact in float)
 *   grouped-query attention slots: no tolerance; each head equals the same
 *       backend's single-head slot bit for bit (which meets the above)
 *   every attention slot, generic included: keys / rows split into runs,
 *       contiguous or laid out as the ring stores them (pinned, tail of the
 *       ring, head of the ring), give the bits of one call over the rows
 *   rmsnorm: only the sum of squares is reordered (all terms >= 0, so a
 *       relative bound): |new - ref| <= (n + 24) u |ref| + 2^-140
 *   swiglu: the kernel's exp is allowed 8 ulp end to end:
 *       |new - ref| <= 16 u |ref| + 2^-120 |up| + 2^-148 (subnormal out)
 * Non-finite references must be matched exactly. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "genloop.h"
#include "half.h"
#include "kernels.h"

#define U (1.0 / 16777216.0) /* 2^-24 */

/* ---- options and report ------------------------------------------------ */

static struct {
    uint64_t seed;
    const char *backend, *slot, *tune;
    int verbose, bench;
} opt;

static int group_fail; /* failures inside the current (backend, slot) group */
static const char *cur_backend, *cur_slot;
static char cur_case[160];

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
    if (group_fail++ < (opt.verbose ? 20 : 3)) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "  %s/%s: %s: ", cur_backend, cur_slot, cur_case);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}

/* ---- RNG: xorshift128+, seeded through splitmix64 ----------------------- */

static uint64_t rs[2];

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void reseed(uint32_t a, uint32_t b)
{
    uint64_t x = opt.seed ^ ((uint64_t)a << 40) ^ ((uint64_t)b << 20);
    rs[0] = splitmix(&x);
    rs[1] = splitmix(&x);
}

static uint64_t rnd(void)
{
    uint64_t s1 = rs[0];
    const uint64_t s0 = rs[1];
    rs[0] = s0;
    s1 ^= s1 << 23;
    rs[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
    return rs[1] + s0;
}

static int rint_in(int lo, int hi)
{
    return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}
static double runif(void)
{
    return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
}
static int chance(int pct)
{
    return (int)(rnd() % 100) < pct;
}

static float rnorm(void)
{
    double u1 = runif(), u2 = runif();
    if (u1 < 1e-300)
        u1 = 1e-300;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* A float of the given value mode: 0 N(0,1); 1 with outliers; 2 with
 * subnormals; 3 large but finite (|x| up to ~1e15); 4 zero-heavy. */
static float rfloat(int mode)
{
    float v = rnorm();
    switch (mode) {
    case 1: return chance(2) ? v * 100.0f : v;
    case 2: return chance(20) ? v * 1e-39f : v;
    case 3: return chance(30) ? v * 1e15f : v;
    case 4: return chance(70) ? 0.0f : v;
    default: return v;
    }
}

/* ---- guarded buffers ----------------------------------------------------- */

enum { GUARD = 64, CANARY = 0xa5 };

typedef struct gbuf {
    unsigned char *base;
    size_t size, off;
} gbuf;

/* size bytes at a misalignment of `mis` bytes from a 64-byte boundary,
 * GUARD canary bytes on each side. */
static void *galloc(gbuf *g, size_t size, int mis)
{
    g->size = size;
    g->off = GUARD + (size_t)mis;
    g->base = aligned_alloc(64, (g->off + size + GUARD + 63) / 64 * 64);
    if (!g->base) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(g->base, CANARY, g->off + size + GUARD);
    return g->base + g->off;
}

static int gcheck(const gbuf *g, const char *what)
{
    for (size_t i = 0; i < g->off; i++)
        if (g->base[i] != CANARY) {
            failf("%s: write %zu bytes before the buffer", what, g->off - i);
            return 0;
        }
    for (size_t i = 0; i < GUARD; i++)
        if (g->base[g->off + g->size + i] != CANARY) {
            failf("%s: write %zu bytes after the buffer", what, i);
            return 0;
        }
    return 1;
}

static void gfree(gbuf *g)
{
    free(g->base);
}

static int rmis(void)
{
    return rint_in(0, 63);
}
static int rmis4(void)
{
    return 4 * rint_in(0, 15);
}
/* A misalignment for data of type t: quantized blocks may start at any byte
 * (GGUF rows of 34- and 18-byte blocks do); float arrays and F32/F16 rows
 * are element-aligned, as GGUF's 32-byte tensor alignment guarantees. */
static int elem_align(int type)
{
    return type == GGUF_T_F32 ? 4 : type == GGUF_T_F16 || type == GGUF_T_BF16 ? 2 : 1;
}
static int rmis_for(int type)
{
    const int a = elem_align(type);
    return a * rint_in(0, 63 / a);
}

static const uint32_t SENTINEL = 0x7fc0dead; /* a NaN no kernel produces */

static void fill_sentinel(float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&y[i], &SENTINEL, 4);
}

static int is_sentinel(const float *p)
{
    uint32_t u;
    memcpy(&u, p, 4);
    return u == SENTINEL;
}

/* |new - ref| <= tol, with non-finite references matched exactly. */
static int near(float ref, float nw, double tol)
{
    if (!isfinite(ref))
        return isnan(ref) ? isnan(nw) : nw == ref;
    if (!isfinite(nw))
        return 0;
    return fabs((double)nw - (double)ref) <= tol;
}

/* ---- random operands ------------------------------------------------------ */

static uint16_t rhalf_scale(void)
{
    int m = rint_in(0, 99);
    if (m < 5)
        return 0; /* d = 0       */
    if (m < 10)
        return (uint16_t)rint_in(1, 0x3ff); /* subnormal   */
    if (m < 14)
        return 0x7bff; /* 65504       */
    uint16_t h = gl_f32_to_f16((float)(runif() * 0.1 + 1e-4));
    return m < 30 ? (uint16_t)(h | 0x8000) : h; /* negative    */
}

static void rblock_q8(block_q8_0 *b, int allow_neg128)
{
    b->d = rhalf_scale();
    int m = rint_in(0, 99);
    for (int j = 0; j < QK8_0; j++) {
        int v;
        if (m < 5)
            v = 0;
        else if (m < 10)
            v = allow_neg128 ? -128 : -127;
        else if (m < 15)
            v = 127;
        else if (m < 20)
            v = (j & 1) ? 127 : (allow_neg128 ? -128 : -127);
        else
            v = rint_in(allow_neg128 ? -128 : -127, 127);
        b->qs[j] = (int8_t)v;
    }
}

static void rblock_q4(block_q4_0 *b)
{
    b->d = rhalf_scale();
    int m = rint_in(0, 99);
    for (int j = 0; j < QK4_0 / 2; j++) {
        int lo = rint_in(0, 15), hi = rint_in(0, 15);
        if (m < 5)
            lo = hi = 0;
        else if (m < 10)
            lo = hi = 15;
        else if (m < 15)
            lo = hi = 8;
        b->qs[j] = (uint8_t)(lo | hi << 4);
    }
}

static uint16_t rf16(int mode)
{
    int m = rint_in(0, 99);
    if (m < 2)
        return (uint16_t)rint_in(1, 0x3ff) | (chance(50) ? 0x8000 : 0);
    if (m < 3)
        return chance(50) ? 0x7bff : 0xfbff;
    if (m < 4)
        return chance(50) ? 0x0000 : 0x8000;
    return gl_f32_to_f16(mode == 3 ? rnorm() * 100.0f : rfloat(mode == 2 ? 2 : 0));
}

static uint16_t rbf16(int mode)
{
    float v = rfloat(mode);
    if (mode == 3 && chance(30))
        v = rnorm() * 1e10f;
    return gl_f32_to_bf16(v);
}

/* dequantized weight element j of a row (for the tolerance terms only) */
static double wval(int type, const void *row, int j)
{
    switch (type) {
    case GGUF_T_F32: return ((const float *)row)[j];
    case GGUF_T_F16: return gl_f16_to_f32(((const uint16_t *)row)[j]);
    case GGUF_T_BF16: return gl_bf16_to_f32(((const uint16_t *)row)[j]);
    case GGUF_T_Q8_0: {
        const block_q8_0 *b = (const block_q8_0 *)row + j / QK8_0;
        return (double)gl_f16_to_f32(b->d) * b->qs[j % QK8_0];
    }
    default: {
        const block_q4_0 *b = (const block_q4_0 *)row + j / QK4_0;
        const int i = j % QK4_0;
        const int q = i < 16 ? (b->qs[i] & 15) : (b->qs[i - 16] >> 4);
        return (double)gl_f16_to_f32(b->d) * (q - 8);
    }
    }
}

/* the generic table (reference, and the layouts' one definition) */
static gl_kernels gen;

static size_t row_bytes(int type, int n)
{
    return (size_t)n / gguf_type_block_elems((uint32_t)type) *
           gguf_type_block_bytes((uint32_t)type);
}

static int is_quant(int type)
{
    return gguf_type_block_elems((uint32_t)type) > 1;
}

/* Every quantized product (integer dot products of the weight blocks with
 * quantized activations, then the scales in one specified order, see
 * src/kernels.h) is specified to the last bit, so every backend must equal
 * generic exactly: the K-quants and the other newer types, and Q8_0 / Q4_0
 * plain rows too (bit-equal on avx2 and avx512 when this was written).
 * Only float-weight products keep a rounding tolerance. */
static int is_exact_type(int type)
{
    return is_quant(type);
}

/* activation format of a weight type, and the bytes of one activation row */
static int act_of(int type)
{
    return gen.act_type[type];
}

static size_t act_row_bytes(int type, int n)
{
    return gl_act_row_bytes(act_of(type), n);
}

/* Offsets of a block's half-precision scale fields (d, and dmin or m). */
static int half_fields(int type, int off[2])
{
    switch (type) {
    case GGUF_T_Q4_1:
    case GGUF_T_Q5_1:
    case GGUF_T_Q4_K:
    case GGUF_T_Q5_K: off[0] = 0, off[1] = 2; return 2;
    case GGUF_T_Q2_K: off[0] = 80, off[1] = 82; return 2;
    case GGUF_T_Q3_K: off[0] = 108; return 1;
    case GGUF_T_Q6_K: off[0] = 208; return 1;
    default: off[0] = 0; return 1; /* Q5_0, IQ4_NL, IQ4_XS */
    }
}

/* A random block of any of the new types: every bit pattern of the quant,
 * scale and high-bit bytes is a valid block, so bytes are drawn at random,
 * with edge cases (all zero: zero sub-blocks; all ones: the largest quants,
 * scales and mins; alternating), then the half scales (zero, subnormal,
 * 65504, negative). */
static void rblock_any(int type, unsigned char *b)
{
    const size_t bytes = gguf_type_block_bytes((uint32_t)type);
    const int m = rint_in(0, 99);
    for (size_t i = 0; i < bytes; i++) {
        const int v = m < 5 ? 0 : m < 10 ? 0xff : m < 13 ? (i & 1 ? 0xff : 0) : rint_in(0, 255);
        b[i] = (unsigned char)v;
    }
    if (chance(10)) { /* one sub-block of zeros in an otherwise random block */
        const size_t at = (size_t)rint_in(0, (int)bytes - 8);
        memset(b + at, 0, 8);
    }
    int off[2];
    const int nh = half_fields(type, off);
    for (int i = 0; i < nh; i++) {
        const uint16_t h = rhalf_scale();
        memcpy(b + off[i], &h, 2);
    }
}

/* A random activation block in the weight type's format, quants in
 * [-127, 127], sums consistent with the quants. */
static void rblock_act(int type, unsigned char *out)
{
    const int act = act_of(type);
    if (act == GL_ACT_Q8_K) {
        block_q8_K b;
        const int m = rint_in(0, 99);
        b.d = m < 5 ? 0.0f : m < 10 ? 1e-30f : m < 15 ? -rfloat(0) : rfloat(0) * 0.01f;
        for (int j = 0; j < QK_K; j++) {
            const int v = m < 20 ? (j & 1 ? 127 : -127) : m < 25 ? 127 : rint_in(-127, 127);
            b.qs[j] = (int8_t)v;
        }
        for (int i = 0; i < QK_K / 16; i++) {
            int sum = 0;
            for (int j = 0; j < 16; j++)
                sum += b.qs[16 * i + j];
            b.bsums[i] = (int16_t)sum;
        }
        memcpy(out, &b, sizeof b);
    } else {
        block_q8_0 q;
        rblock_q8(&q, 0);
        if (act == GL_ACT_Q8_1) {
            block_q8_1 b = { .d = q.d };
            int sum = 0;
            for (int j = 0; j < QK8_0; j++)
                sum += q.qs[j];
            b.s = (int16_t)sum;
            memcpy(b.qs, q.qs, QK8_0);
            memcpy(out, &b, sizeof b);
        } else {
            memcpy(out, &q, sizeof q);
        }
    }
}

/* ---- slots ------------------------------------------------------------------- */

enum kind {
    K_QUANT,
    K_DEQUANT,
    K_MATMUL,
    K_MATMUL_X8,
    K_REPACK,
    K_RMSNORM,
    K_SWIGLU,
    K_SCORES,
    K_ACCUM,
    K_SCORES_G,
    K_ACCUM_G,
    K_SCORES_T,
    K_LAYERNORM,
    K_GELU,
    K_ADD_BIAS,
    K_SOFTCAP,
    K_SOFTMAX,
    K_ROUND_F16,
    K_TO_F16
};

static const struct slot {
    const char *name;
    enum kind kind;
    int type;
    int layout; /* K_MATMUL_X8, K_REPACK: the repacked layout */
} slots[] = {
    { "quantize_q8_0", K_QUANT, GL_ACT_Q8_0, 0 },
    { "quantize_q8_1", K_QUANT, GL_ACT_Q8_1, 0 },
    { "quantize_q8_K", K_QUANT, GL_ACT_Q8_K, 0 },
    { "matmul_q8_0", K_MATMUL, GGUF_T_Q8_0, 0 },
    { "matmul_q4_0", K_MATMUL, GGUF_T_Q4_0, 0 },
    { "matmul_q4_1", K_MATMUL, GGUF_T_Q4_1, 0 },
    { "matmul_q5_0", K_MATMUL, GGUF_T_Q5_0, 0 },
    { "matmul_q5_1", K_MATMUL, GGUF_T_Q5_1, 0 },
    { "matmul_iq4_nl", K_MATMUL, GGUF_T_IQ4_NL, 0 },
    { "matmul_q2_K", K_MATMUL, GGUF_T_Q2_K, 0 },
    { "matmul_q3_K", K_MATMUL, GGUF_T_Q3_K, 0 },
    { "matmul_q4_K", K_MATMUL, GGUF_T_Q4_K, 0 },
    { "matmul_q5_K", K_MATMUL, GGUF_T_Q5_K, 0 },
    { "matmul_q6_K", K_MATMUL, GGUF_T_Q6_K, 0 },
    { "matmul_iq4_xs", K_MATMUL, GGUF_T_IQ4_XS, 0 },
    { "dequant_q8_0", K_DEQUANT, GGUF_T_Q8_0, 0 },
    { "dequant_q4_0", K_DEQUANT, GGUF_T_Q4_0, 0 },
    { "dequant_q4_1", K_DEQUANT, GGUF_T_Q4_1, 0 },
    { "dequant_q5_0", K_DEQUANT, GGUF_T_Q5_0, 0 },
    { "dequant_q5_1", K_DEQUANT, GGUF_T_Q5_1, 0 },
    { "dequant_iq4_nl", K_DEQUANT, GGUF_T_IQ4_NL, 0 },
    { "dequant_q2_K", K_DEQUANT, GGUF_T_Q2_K, 0 },
    { "dequant_q3_K", K_DEQUANT, GGUF_T_Q3_K, 0 },
    { "dequant_q4_K", K_DEQUANT, GGUF_T_Q4_K, 0 },
    { "dequant_q5_K", K_DEQUANT, GGUF_T_Q5_K, 0 },
    { "dequant_q6_K", K_DEQUANT, GGUF_T_Q6_K, 0 },
    { "dequant_iq4_xs", K_DEQUANT, GGUF_T_IQ4_XS, 0 },
    { "matmul_f32", K_MATMUL, GGUF_T_F32, 0 },
    { "matmul_f16", K_MATMUL, GGUF_T_F16, 0 },
    { "matmul_bf16", K_MATMUL, GGUF_T_BF16, 0 },
    { "repack_q4_0x8", K_REPACK, GGUF_T_Q4_0, GL_LAYOUT_Q4_0X8 },
    { "repack_q8_0x8", K_REPACK, GGUF_T_Q8_0, GL_LAYOUT_Q8_0X8 },
    { "repack_q4_0x16", K_REPACK, GGUF_T_Q4_0, GL_LAYOUT_Q4_0X16 },
    { "repack_q8_0x16", K_REPACK, GGUF_T_Q8_0, GL_LAYOUT_Q8_0X16 },
    { "repack_q5_0x16", K_REPACK, GGUF_T_Q5_0, GL_LAYOUT_Q5_0X16 },
    { "repack_iq4_nlx16", K_REPACK, GGUF_T_IQ4_NL, GL_LAYOUT_IQ4_NLX16 },
    { "repack_q5_0x8", K_REPACK, GGUF_T_Q5_0, GL_LAYOUT_Q5_0X8 },
    { "repack_iq4_nlx8", K_REPACK, GGUF_T_IQ4_NL, GL_LAYOUT_IQ4_NLX8 },
    { "repack_q4_1x8", K_REPACK, GGUF_T_Q4_1, GL_LAYOUT_Q4_1X8 },
    { "repack_q4_1x16", K_REPACK, GGUF_T_Q4_1, GL_LAYOUT_Q4_1X16 },
    { "repack_q5_1x8", K_REPACK, GGUF_T_Q5_1, GL_LAYOUT_Q5_1X8 },
    { "repack_q5_1x16", K_REPACK, GGUF_T_Q5_1, GL_LAYOUT_Q5_1X16 },
    { "matmul_q4_0x8", K_MATMUL_X8, GGUF_T_Q4_0, GL_LAYOUT_Q4_0X8 },
    { "matmul_q8_0x8", K_MATMUL_X8, GGUF_T_Q8_0, GL_LAYOUT_Q8_0X8 },
    { "matmul_q4_0x16", K_MATMUL_X8, GGUF_T_Q4_0, GL_LAYOUT_Q4_0X16 },
    { "matmul_q8_0x16", K_MATMUL_X8, GGUF_T_Q8_0, GL_LAYOUT_Q8_0X16 },
    { "matmul_q5_0x16", K_MATMUL_X8, GGUF_T_Q5_0, GL_LAYOUT_Q5_0X16 },
    { "matmul_iq4_nlx16", K_MATMUL_X8, GGUF_T_IQ4_NL, GL_LAYOUT_IQ4_NLX16 },
    { "matmul_q5_0x8", K_MATMUL_X8, GGUF_T_Q5_0, GL_LAYOUT_Q5_0X8 },
    { "matmul_iq4_nlx8", K_MATMUL_X8, GGUF_T_IQ4_NL, GL_LAYOUT_IQ4_NLX8 },
    { "matmul_q4_1x8", K_MATMUL_X8, GGUF_T_Q4_1, GL_LAYOUT_Q4_1X8 },
    { "matmul_q4_1x16", K_MATMUL_X8, GGUF_T_Q4_1, GL_LAYOUT_Q4_1X16 },
    { "matmul_q5_1x8", K_MATMUL_X8, GGUF_T_Q5_1, GL_LAYOUT_Q5_1X8 },
    { "matmul_q5_1x16", K_MATMUL_X8, GGUF_T_Q5_1, GL_LAYOUT_Q5_1X16 },
    { "repack_q4_Kx8", K_REPACK, GGUF_T_Q4_K, GL_LAYOUT_Q4_KX8 },
    { "repack_q6_Kx8", K_REPACK, GGUF_T_Q6_K, GL_LAYOUT_Q6_KX8 },
    { "matmul_q4_Kx8", K_MATMUL_X8, GGUF_T_Q4_K, GL_LAYOUT_Q4_KX8 },
    { "matmul_q6_Kx8", K_MATMUL_X8, GGUF_T_Q6_K, GL_LAYOUT_Q6_KX8 },
    { "repack_q4_Kx16", K_REPACK, GGUF_T_Q4_K, GL_LAYOUT_Q4_KX16 },
    { "matmul_q4_Kx16", K_MATMUL_X8, GGUF_T_Q4_K, GL_LAYOUT_Q4_KX16 },
    { "repack_q6_Kx16", K_REPACK, GGUF_T_Q6_K, GL_LAYOUT_Q6_KX16 },
    { "matmul_q6_Kx16", K_MATMUL_X8, GGUF_T_Q6_K, GL_LAYOUT_Q6_KX16 },
    { "repack_q5_Kx16", K_REPACK, GGUF_T_Q5_K, GL_LAYOUT_Q5_KX16 },
    { "matmul_q5_Kx16", K_MATMUL_X8, GGUF_T_Q5_K, GL_LAYOUT_Q5_KX16 },
    { "repack_iq4_xsx16", K_REPACK, GGUF_T_IQ4_XS, GL_LAYOUT_IQ4_XSX16 },
    { "matmul_iq4_xsx16", K_MATMUL_X8, GGUF_T_IQ4_XS, GL_LAYOUT_IQ4_XSX16 },
    { "repack_q3_Kx16", K_REPACK, GGUF_T_Q3_K, GL_LAYOUT_Q3_KX16 },
    { "matmul_q3_Kx16", K_MATMUL_X8, GGUF_T_Q3_K, GL_LAYOUT_Q3_KX16 },
    { "repack_q3_Kx8", K_REPACK, GGUF_T_Q3_K, GL_LAYOUT_Q3_KX8 },
    { "matmul_q3_Kx8", K_MATMUL_X8, GGUF_T_Q3_K, GL_LAYOUT_Q3_KX8 },
    { "repack_iq4_xsx8", K_REPACK, GGUF_T_IQ4_XS, GL_LAYOUT_IQ4_XSX8 },
    { "matmul_iq4_xsx8", K_MATMUL_X8, GGUF_T_IQ4_XS, GL_LAYOUT_IQ4_XSX8 },
    { "repack_q2_Kx8", K_REPACK, GGUF_T_Q2_K, GL_LAYOUT_Q2_KX8 },
    { "matmul_q2_Kx8", K_MATMUL_X8, GGUF_T_Q2_K, GL_LAYOUT_Q2_KX8 },
    { "repack_q2_Kx16", K_REPACK, GGUF_T_Q2_K, GL_LAYOUT_Q2_KX16 },
    { "matmul_q2_Kx16", K_MATMUL_X8, GGUF_T_Q2_K, GL_LAYOUT_Q2_KX16 },
    { "repack_q5_Kx8", K_REPACK, GGUF_T_Q5_K, GL_LAYOUT_Q5_KX8 },
    { "matmul_q5_Kx8", K_MATMUL_X8, GGUF_T_Q5_K, GL_LAYOUT_Q5_KX8 },
    { "rmsnorm", K_RMSNORM, 0, 0 },
    { "swiglu", K_SWIGLU, 0, 0 },
    { "attn_scores_f32", K_SCORES, GL_KV_F32, 0 },
    { "attn_scores_f16", K_SCORES, GL_KV_F16, 0 },
    { "attn_accum_f32", K_ACCUM, GL_KV_F32, 0 },
    { "attn_accum_f16", K_ACCUM, GL_KV_F16, 0 },
    { "attn_scores_q8", K_SCORES, GL_KV_Q8_0, 0 },
    { "attn_accum_q8", K_ACCUM, GL_KV_Q8_0, 0 },
    { "attn_scores_g_f32", K_SCORES_G, GL_KV_F32, 0 },
    { "attn_scores_g_f16", K_SCORES_G, GL_KV_F16, 0 },
    { "attn_scores_g_q8", K_SCORES_G, GL_KV_Q8_0, 0 },
    { "attn_accum_g_f32", K_ACCUM_G, GL_KV_F32, 0 },
    { "attn_accum_g_f16", K_ACCUM_G, GL_KV_F16, 0 },
    { "attn_accum_g_q8", K_ACCUM_G, GL_KV_Q8_0, 0 },
    { "attn_scores_t_f32", K_SCORES_T, GL_KV_F32, 0 },
    { "attn_scores_t_f16", K_SCORES_T, GL_KV_F16, 0 },
    { "layernorm", K_LAYERNORM, 0, 0 },
    { "gelu", K_GELU, 0, 0 },
    { "add_bias", K_ADD_BIAS, 0, 0 },
    { "softcap", K_SOFTCAP, 0, 0 },
    { "softmax", K_SOFTMAX, 0, 0 },
    { "softmax_f16", K_SOFTMAX, 1, 0 },
    { "round_f16", K_ROUND_F16, 0, 0 },
    { "to_f16", K_TO_F16, 0, 0 },
};
enum { n_slots = sizeof slots / sizeof slots[0] };

static const void *slot_fn(const gl_kernels *k, const struct slot *s)
{
    switch (s->kind) {
    case K_QUANT:
        return s->type == GL_ACT_Q8_0 ? (const void *)k->quantize_q8_0
                                      : (const void *)k->quantize_act[s->type];
    case K_DEQUANT: return (const void *)k->dequant[s->type];
    case K_MATMUL: return (const void *)k->matmul[s->type];
    case K_MATMUL_X8: return (const void *)k->matmul_packed[s->layout];
    case K_REPACK: return (const void *)k->layouts[s->layout].repack;
    case K_RMSNORM: return (const void *)k->rmsnorm;
    case K_SWIGLU: return (const void *)k->swiglu;
    case K_SCORES:
        return s->type == GL_KV_Q8_0 ? (const void *)k->attn_scores_q8
                                     : (const void *)k->attn_scores[s->type];
    case K_SCORES_G:
        return s->type == GL_KV_Q8_0 ? (const void *)k->attn_scores_q8_g
                                     : (const void *)k->attn_scores_g[s->type];
    case K_ACCUM_G:
        return s->type == GL_KV_Q8_0 ? (const void *)k->attn_accum_q8_g
                                     : (const void *)k->attn_accum_g[s->type];
    case K_SCORES_T: return (const void *)k->attn_scores_t[s->type];
    case K_LAYERNORM: return (const void *)k->layernorm;
    case K_GELU: return (const void *)k->gelu;
    case K_ADD_BIAS: return (const void *)k->add_bias;
    case K_SOFTCAP: return (const void *)k->softcap;
    case K_SOFTMAX: return (const void *)k->softmax;
    case K_ROUND_F16: return (const void *)k->round_f16;
    case K_TO_F16: return (const void *)k->to_f16;
    default:
        return s->type == GL_KV_Q8_0 ? (const void *)k->attn_accum_q8
                                     : (const void *)k->attn_accum[s->type];
    }
}

/* ---- quantize ---------------------------------------------------------------- */

static void gen_quant_input(float *x, int nblk)
{
    for (int b = 0; b < nblk; b++) {
        float *xb = x + b * QK8_0;
        const int m = rint_in(0, 99);
        const float scale = (float)pow(10.0, rint_in(-30, 30));
        for (int j = 0; j < QK8_0; j++)
            xb[j] = rnorm() * scale;
        if (m < 5) {
            memset(xb, 0, QK8_0 * sizeof(float));
        } else if (m < 15) { /* amax 127 -> id = 1: exact halves test the ties */
            for (int j = 0; j < QK8_0; j++)
                xb[j] = (float)rint_in(-127, 126) + 0.5f;
            xb[rint_in(0, QK8_0 - 1)] = chance(50) ? 127.0f : -127.0f;
        } else if (m < 20) { /* subnormals next to a normal amax */
            for (int j = 0; j < QK8_0; j++)
                xb[j] = rnorm() * 1e-39f;
            xb[rint_in(0, QK8_0 - 1)] = 1e-30f;
        } else if (m < 25) { /* one non-zero */
            memset(xb, 0, QK8_0 * sizeof(float));
            xb[rint_in(0, QK8_0 - 1)] = rnorm();
        } else if (m < 28) { /* largest finite: d overflows to half inf */
            xb[rint_in(0, QK8_0 - 1)] = chance(50) ? 3.4e38f : -3.4e38f;
        } else if (m < 34) { /* amax < 127 / FLT_MAX: 127 / amax overflows, id = 0 */
            for (int j = 0; j < QK8_0; j++)
                xb[j] = rnorm() * (chance(50) ? 1e-38f : 1e-42f);
        } else if (m < 37) { /* ties after scaling by a non-trivial id */
            const float a = (float)rint_in(1, 1000) / 8.0f;
            for (int j = 0; j < QK8_0; j++)
                xb[j] = a * (float)rint_in(-254, 254) / 254.0f;
            xb[0] = a;
        }
    }
}

/* Quantization is bit-exact, blocks with amax < 127/FLT_MAX (~3.7e-37)
 * included: there 127/amax overflows and the contract sets id = 0. */
static void check_quantize_act(const gl_kernels *ref, const gl_kernels *nw, int act);

static void check_quantize(const gl_kernels *ref, const gl_kernels *nw, int act)
{
    if (act != GL_ACT_Q8_0) {
        check_quantize_act(ref, nw, act);
        return;
    }
    static const int sizes[] = { 1, 2, 3, 4, 7, 8, 9, 16, 17, 64, 176, 0, 0, 0 };
    for (int ci = 0; ci < (int)(sizeof sizes / sizeof sizes[0]); ci++) {
        reseed(1, (uint32_t)ci);
        const int nblk = sizes[ci] ? sizes[ci] : rint_in(1, 300);
        const int n = nblk * QK8_0;
        snprintf(cur_case, sizeof cur_case, "n=%d", n);
        gbuf gx, gr, gn;
        float *x = galloc(&gx, (size_t)n * 4, rmis4());
        gen_quant_input(x, nblk);
        const size_t ob = (size_t)nblk * sizeof(block_q8_0);
        block_q8_0 *yr = galloc(&gr, ob, rmis()), *yn = galloc(&gn, ob, rmis());
        memset(yr, 0x5a, ob);
        memset(yn, 0x5a, ob);
        ref->quantize_q8_0(x, yr, n);
        nw->quantize_q8_0(x, yn, n);
        for (int b = 0; b < nblk; b++)
            if (memcmp(&yr[b], &yn[b], sizeof(block_q8_0))) {
                int j = 0;
                while (j < QK8_0 && yr[b].qs[j] == yn[b].qs[j])
                    j++;
                failf("block %d differs: d %04x vs %04x, first q at %d: %d vs %d (x=%a)", b,
                      yr[b].d, yn[b].d, j, j < QK8_0 ? yr[b].qs[j] : 0, j < QK8_0 ? yn[b].qs[j] : 0,
                      j < QK8_0 ? x[b * QK8_0 + j] : 0.0f);
                break;
            }
        gcheck(&gn, "y");
        gcheck(&gx, "x");
        gfree(&gx);
        gfree(&gr);
        gfree(&gn);
    }
}

/* Q8_1 and Q8_K activations: byte for byte, on the same inputs (32-blocks
 * of edge cases; Q8_K sees eight of them per block, so its amax and sign
 * rules meet ties, zeros, subnormals and overflow too). */
static void check_quantize_act(const gl_kernels *ref, const gl_kernels *nw, int act)
{
    static const int sizes[] = { 1, 2, 3, 4, 7, 8, 9, 16, 17, 22, 0, 0, 0 };
    const int be = act == GL_ACT_Q8_K ? QK_K : QK8_0;
    const size_t bb = gl_act_row_bytes(act, be);
    for (int ci = 0; ci < (int)(sizeof sizes / sizeof sizes[0]); ci++) {
        reseed(2 + (uint32_t)act, (uint32_t)ci);
        const int nblk = sizes[ci] ? sizes[ci] : rint_in(1, act == GL_ACT_Q8_K ? 40 : 300);
        const int n = nblk * be;
        snprintf(cur_case, sizeof cur_case, "n=%d", n);
        gbuf gx, gr, gn;
        float *x = galloc(&gx, (size_t)n * 4, rmis4());
        gen_quant_input(x, n / QK8_0);
        if (act == GL_ACT_Q8_K && chance(30)) /* a whole block of one magnitude: sign ties */
            for (int j = 0; j < be; j++)
                x[j] = chance(50) ? 3.0f : -3.0f;
        const size_t ob = (size_t)nblk * bb;
        unsigned char *yr = galloc(&gr, ob, rmis()), *yn = galloc(&gn, ob, rmis());
        memset(yr, 0x5a, ob);
        memset(yn, 0x5a, ob);
        ref->quantize_act[act](x, yr, n);
        nw->quantize_act[act](x, yn, n);
        for (int b = 0; b < nblk; b++)
            if (memcmp(yr + (size_t)b * bb, yn + (size_t)b * bb, bb)) {
                size_t i = 0;
                while (yr[(size_t)b * bb + i] == yn[(size_t)b * bb + i])
                    i++;
                failf("block %d differs from generic's at byte %zu of %zu", b, i, bb);
                break;
            }
        gcheck(&gn, "y");
        gcheck(&gx, "x");
        gfree(&gx);
        gfree(&gr);
        gfree(&gn);
    }
}

/* Row dequantization (embedding lookups): bit-equal to generic, which is
 * exact up to its specified float expression per element. */
static void check_dequant(const gl_kernels *ref, const gl_kernels *nw, int type)
{
    const int be = (int)gguf_type_block_elems((uint32_t)type);
    const size_t bb = gguf_type_block_bytes((uint32_t)type);
    for (int ci = 0; ci < 24; ci++) {
        reseed(5 + (uint32_t)type, (uint32_t)ci);
        const int nblk = ci < 8 ? ci + 1 : rint_in(1, be == QK_K ? 24 : 200);
        const int n = nblk * be;
        snprintf(cur_case, sizeof cur_case, "n=%d", n);
        gbuf gw, gr, gn;
        unsigned char *w = galloc(&gw, (size_t)nblk * bb, rmis_for(type));
        for (int b = 0; b < nblk; b++) {
            unsigned char *blk = w + (size_t)b * bb;
            if (type == GGUF_T_Q8_0)
                rblock_q8((block_q8_0 *)(void *)blk, 1);
            else if (type == GGUF_T_Q4_0)
                rblock_q4((block_q4_0 *)(void *)blk);
            else
                rblock_any(type, blk);
        }
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        ref->dequant[type](w, yr, n);
        nw->dequant[type](w, yn, n);
        for (int j = 0; j < n; j++)
            if (memcmp(&yr[j], &yn[j], 4)) {
                failf("element %d = %a, generic %a", j, yn[j], yr[j]);
                break;
            }
        gcheck(&gn, "y");
        gcheck(&gw, "w");
        gfree(&gw);
        gfree(&gr);
        gfree(&gn);
    }
}

/* ---- matmul -------------------------------------------------------------------- */

typedef struct mm_case {
    int type, rows, n, nb;
    size_t wrb, xs, ys; /* strides: weight row bytes, activation bytes, y floats */
    gbuf gw, gx, gp;
    const void *w, *x;
    int packed; /* mm_call passes the repacked copy: wp, groups gb apart */
    int layout; /* of the repacked copy (mm_pack) */
    const void *wp;
    size_t gb;
} mm_case;

static void mm_make(mm_case *c, int type, int rows, int n, int nb)
{
    c->type = type;
    c->rows = rows;
    c->n = n;
    c->nb = nb;
    c->packed = 0;
    c->wrb = row_bytes(type, n) + (chance(25) ? (size_t)elem_align(type) * rint_in(1, 10) : 0);
    const int q = is_quant(type);
    c->xs =
        (q ? act_row_bytes(type, n) : (size_t)n * 4) + (chance(25) ? 4 * (size_t)rint_in(1, 9) : 0);
    c->ys = (size_t)rows + (chance(30) ? (size_t)rint_in(1, 5) : 0);
    unsigned char *w = galloc(&c->gw, c->wrb * (size_t)rows, rmis_for(type));
    unsigned char *x = galloc(&c->gx, c->xs * (size_t)nb, q ? rmis() : rmis4());
    const int wmode = rint_in(0, 4), xmode = rint_in(0, 4);
    for (int r = 0; r < rows; r++) {
        unsigned char *row = w + (size_t)r * c->wrb;
        const int bel = (int)gguf_type_block_elems((uint32_t)type);
        for (int j = 0; j < n / bel; j++) {
            switch (type) {
            case GGUF_T_F32: {
                float v = rfloat(wmode);
                memcpy(row + 4 * j, &v, 4);
                break;
            }
            case GGUF_T_F16: {
                uint16_t h = rf16(wmode);
                memcpy(row + 2 * j, &h, 2);
                break;
            }
            case GGUF_T_BF16: {
                uint16_t h = rbf16(wmode);
                memcpy(row + 2 * j, &h, 2);
                break;
            }
            case GGUF_T_Q8_0: {
                block_q8_0 b;
                rblock_q8(&b, 1);
                memcpy(row + j * sizeof b, &b, sizeof b);
                break;
            }
            case GGUF_T_Q4_0: {
                block_q4_0 b;
                rblock_q4(&b);
                memcpy(row + j * sizeof b, &b, sizeof b);
                break;
            }
            default: rblock_any(type, row + (size_t)j * gguf_type_block_bytes((uint32_t)type));
            }
        }
    }
    for (int b = 0; b < nb; b++) {
        unsigned char *col = x + (size_t)b * c->xs;
        if (q) {
            const int act = act_of(type), ab = act == GL_ACT_Q8_K ? QK_K : QK8_0;
            const size_t abytes = gl_act_row_bytes(act, ab);
            for (int j = 0; j < n / ab; j++) /* activation quants: [-127, 127] */
                rblock_act(type, col + (size_t)j * abytes);
        } else {
            for (int j = 0; j < n; j++) {
                float v = rfloat(xmode);
                memcpy(col + 4 * j, &v, 4);
            }
        }
    }
    c->w = w;
    c->x = x;
}

/* Repacks the case's weights with generic's repack (the layout's one
 * definition) into a guarded buffer; checks, as it goes, that a split
 * into random group ranges gives the same bytes, that every row unpacks
 * back to its GGUF bytes and that padding rows are zero. */
static void mm_pack(mm_case *c, int layout)
{
    const int rows8 = gen.layouts[layout].rows, groups = (c->rows + rows8 - 1) / rows8;
    const gl_repack_fn repack = gen.layouts[layout].repack;
    const size_t rb = row_bytes(c->type, c->n);
    c->layout = layout;
    c->gb = rb * (size_t)rows8;
    const size_t bytes = c->gb * (size_t)groups;
    unsigned char *p = galloc(&c->gp, bytes, rmis());
    memset(p, 0xcc, bytes);
    repack(p, c->w, c->wrb, c->n, c->rows, 0, groups);
    gcheck(&c->gp, "packed");
    gbuf gs;
    unsigned char *q = galloc(&gs, bytes, rmis());
    memset(q, 0x33, bytes);
    for (int g0 = 0; g0 < groups;) {
        const int g1 = g0 + rint_in(1, groups - g0);
        repack(q, c->w, c->wrb, c->n, c->rows, g0, g1);
        g0 = g1;
    }
    if (memcmp(p, q, bytes))
        failf("repack split into group ranges differs from one call");
    gcheck(&gs, "packed (split)");
    gfree(&gs);
    unsigned char *row = malloc(rb), *zero = calloc(1, rb);
    for (int r = 0; r < groups * rows8; r++) {
        memset(row, 0x77, rb);
        gen.layouts[layout].unpack(row, p, c->gb, c->n, r);
        const int bad = r < c->rows ? memcmp(row, (const char *)c->w + (size_t)r * c->wrb, rb)
                                    : memcmp(row, zero, rb);
        if (bad) {
            failf("row %d does not unpack to its %s", r,
                  r < c->rows ? "GGUF bytes" : "zero padding");
            break;
        }
    }
    free(row);
    free(zero);
    c->wp = p;
    c->packed = 1;
}

static void mm_free(mm_case *c)
{
    gfree(&c->gw);
    gfree(&c->gx);
    if (c->packed)
        gfree(&c->gp);
}

/* y for columns [b0, b0 + nb), rows [r0, r1), into a guarded buffer laid
 * out as the full output (column stride c->ys). */
static void mm_call(gl_matmul_fn f, const mm_case *c, float *y, int r0, int r1, int b0, int nb)
{
    f(c->packed ? c->wp : c->w, c->packed ? c->gb : c->wrb, (const char *)c->x + (size_t)b0 * c->xs,
      c->xs, y + (size_t)b0 * c->ys, c->ys, c->n, r0, r1, nb);
}

static double mm_terms(const mm_case *c, int r, int b)
{
    const void *row = (const char *)c->w + (size_t)r * c->wrb;
    const void *col = (const char *)c->x + (size_t)b * c->xs;
    double s = 0;
    for (int j = 0; j < c->n; j++) {
        double xv;
        if (is_quant(c->type)) {
            const block_q8_0 *xb = (const block_q8_0 *)col + j / QK8_0;
            xv = (double)gl_f16_to_f32(xb->d) * xb->qs[j % QK8_0];
        } else {
            float f;
            memcpy(&f, (const char *)col + 4 * j, 4);
            xv = f;
        }
        s += fabs(wval(c->type, row, j) * xv);
    }
    return s;
}

/* the output region must hold the sentinel everywhere outside the rows
 * [r0, r1) of columns [b0, b0 + nb) */
static int mm_untouched(const mm_case *c, const float *y, int r0, int r1, int b0, int nb)
{
    for (int b = 0; b < c->nb; b++)
        for (size_t r = 0; r < c->ys; r++) {
            const int inside = b >= b0 && b < b0 + nb && (int)r >= r0 && (int)r < r1;
            if (!inside && !is_sentinel(y + (size_t)b * c->ys + r)) {
                failf("wrote y[col %d][row %zu] outside rows [%d,%d) cols [%d,%d)", b, r, r0, r1,
                      b0, b0 + nb);
                return 0;
            }
        }
    return 1;
}

/* outputs bit-equal to generic, reported with -v */
static size_t mm_exact, mm_total;

static int same_bits(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof(float)) == 0;
}

/* layout 0: the plain-row slot matmul[type], compared with generic within
 * the dot tolerance; an x8 layout: matmul_packed[layout] on weights
 * repacked by generic, which must equal generic's packed kernel AND
 * generic's plain-row kernel bit for bit (for generic itself: the latter). */
static void check_matmul(const gl_kernels *ref, const gl_kernels *nw, int type, int vs_ref,
                         int layout)
{
    /* 37: past the K-quant tile path's 32-column blocks (kx8_tmpl.h KX_CB);
     * 36, 39, 46: its 8-column tiles (KX_CU) then 4, 7, 8 + 6 columns;
     * 150 rows: past its 8-group panels (KX_PG) */
    static const int nbs[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 32, 36, 37, 39, 46 };
    static const int rowset[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 150 };
    /* 300 blocks / 70 super-blocks: more than one chunk of the row-group
     * kernels (256 blocks, 64 super-blocks), so a row's sum waits in y */
    static const int qblk[] = { 1, 2, 3, 7, 8, 9, 17, 64, 176, 300 };
    static const int fn[] = { 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 288, 2048 };
    const gl_matmul_fn fr = layout ? ref->matmul_packed[layout] : ref->matmul[type];
    const gl_matmul_fn fw = layout ? nw->matmul_packed[layout] : nw->matmul[type];
    /* the last three: one column (the decode path) at lengths inside and
     * past the row-group kernels' decode preparation (1024 blocks, 128
     * super-blocks: rows up to 32768) */
    const int ncases = 47;
    static const int long_blk[] = { 300, 1024, 1100 }, long_kblk[] = { 70, 128, 131 };
    for (int ci = 0; ci < ncases; ci++) {
        reseed(100 + (uint32_t)type + 50 * (uint32_t)layout, (uint32_t)ci);
        int nb = nbs[ci % (int)(sizeof nbs / sizeof nbs[0])];
        int rows = chance(70) ? rowset[rint_in(0, 13)] : rint_in(1, 90);
        int n;
        static const int kblk[] = { 1, 2, 3, 4, 7, 8, 22, 70 };
        if (gguf_type_block_elems((uint32_t)type) == QK_K)
            n = QK_K * (chance(70) ? kblk[rint_in(0, 7)] : rint_in(1, 30));
        else if (is_quant(type))
            n = 32 * (chance(70) ? qblk[rint_in(0, 9)] : rint_in(1, 200));
        else
            n = chance(70) ? fn[rint_in(0, 13)] : rint_in(1, 600);
        if ((size_t)rows * nb * (size_t)n > (size_t)6 << 20) /* keep generic quick */
            n = is_quant(type) ? (int)gguf_type_block_elems((uint32_t)type) * 8 : 500;
        if (ci == 43) { /* a wide tile case for certain: several column blocks and panels */
            rows = 150;
            nb = 37;
            n = is_quant(type) ? (int)gguf_type_block_elems((uint32_t)type) * 5 : 160;
        }
        if (ci >= 44) {
            const int li = ci - 44;
            rows = 64 + 3 * li; /* whole groups, and a partial one past them */
            nb = 1;
            if (gguf_type_block_elems((uint32_t)type) == QK_K)
                n = QK_K * long_kblk[li];
            else if (is_quant(type))
                n = 32 * long_blk[li];
        }
        mm_case c;
        mm_make(&c, type, rows, n, nb);
        snprintf(cur_case, sizeof cur_case, "rows=%d n=%d nb=%d wrb=%zu", rows, n, nb, c.wrb);
        if (layout)
            mm_pack(&c, layout);
        const size_t ny = c.ys * (size_t)nb;
        gbuf gr, gn, gs;
        float *yr = galloc(&gr, ny * 4, rmis4()), *yn = galloc(&gn, ny * 4, rmis4());
        float *ys = galloc(&gs, ny * 4, rmis4());
        fill_sentinel(yn, ny);
        mm_call(fw, &c, yn, 0, rows, 0, nb);
        gcheck(&gn, "y");
        mm_untouched(&c, yn, 0, rows, 0, nb);
        if (layout) { /* exact: vs generic packed (other backends), vs generic plain rows */
            for (int pass = vs_ref ? 0 : 1; pass < 2; pass++) {
                fill_sentinel(yr, ny);
                if (pass == 0) {
                    mm_call(fr, &c, yr, 0, rows, 0, nb);
                } else {
                    c.packed = 0;
                    mm_call(ref->matmul[type], &c, yr, 0, rows, 0, nb);
                    c.packed = 1;
                }
                int bad = 0;
                for (int b = 0; b < nb && !bad; b++)
                    for (int r = 0; r < rows && !bad; r++) {
                        const size_t i = (size_t)b * c.ys + r;
                        if (memcmp(&yr[i], &yn[i], 4)) {
                            failf("y[col %d][row %d] = %a, generic %s %a: not bit-equal", b, r,
                                  yn[i], pass ? "plain rows" : "packed", yr[i]);
                            bad = 1;
                        }
                    }
                if (!bad)
                    mm_exact += (size_t)rows * nb;
            }
            mm_total += (size_t)rows * nb * (vs_ref ? 2 : 1);
        } else if (vs_ref) {
            fill_sentinel(yr, ny);
            mm_call(fr, &c, yr, 0, rows, 0, nb);
            const int K = is_quant(type) ? n / 32 : n;
            int bad = 0;
            size_t exact = 0;
            for (int b = 0; b < nb && !bad; b++)
                for (int r = 0; r < rows && !bad; r++) {
                    const size_t i = (size_t)b * c.ys + r;
                    exact += !memcmp(&yr[i], &yn[i], 4);
                    if (is_exact_type(type)) { /* specified to the bit */
                        if (memcmp(&yr[i], &yn[i], 4)) {
                            failf("y[col %d][row %d] = %a, generic %a: not bit-equal", b, r, yn[i],
                                  yr[i]);
                            bad = 1;
                        }
                        continue;
                    }
                    const double tol = 2.0 * (K + 16) * U * mm_terms(&c, r, b) + (n + 1) * 0x1p-149;
                    if (!near(yr[i], yn[i], tol)) {
                        failf("y[col %d][row %d] = %.9g, generic %.9g, |diff| %.3g > tol %.3g", b,
                              r, yn[i], yr[i], fabs((double)yn[i] - yr[i]), tol);
                        bad = 1;
                    }
                }
            mm_exact += exact;
            mm_total += (size_t)rows * nb;
        }
        /* determinism: row sub-ranges at arbitrary (not tile-aligned) cuts */
        fill_sentinel(ys, ny);
        for (int r0 = 0; r0 < rows;) {
            const int r1 = r0 + rint_in(1, rows - r0);
            mm_call(fw, &c, ys, r0, r1, 0, nb);
            r0 = r1;
        }
        if (!same_bits(ys, yn, ny))
            failf("row-split result differs from the full call");
        /* determinism: one sub-range on its own leaves the rest untouched */
        {
            const int r0 = rint_in(0, rows - 1), r1 = rint_in(r0 + 1, rows);
            fill_sentinel(ys, ny);
            mm_call(fw, &c, ys, r0, r1, 0, nb);
            mm_untouched(&c, ys, r0, r1, 0, nb);
            for (int b = 0; b < nb; b++)
                if (!same_bits(ys + b * c.ys + r0, yn + b * c.ys + r0, (size_t)(r1 - r0))) {
                    failf("rows [%d,%d) alone differ from the full call", r0, r1);
                    break;
                }
        }
        /* determinism: every column alone (nb = 1), then a random batch split */
        if (nb > 1) {
            fill_sentinel(ys, ny);
            for (int b = 0; b < nb; b++)
                mm_call(fw, &c, ys, 0, rows, b, 1);
            if (!same_bits(ys, yn, ny))
                failf("nb=1 per column differs from nb=%d", nb);
            fill_sentinel(ys, ny);
            for (int b0 = 0; b0 < nb;) {
                const int k = rint_in(1, nb - b0);
                mm_call(fw, &c, ys, 0, rows, b0, k);
                b0 += k;
            }
            if (!same_bits(ys, yn, ny))
                failf("batch split differs from nb=%d", nb);
        }
        gcheck(&gs, "y");
        gfree(&gr);
        gfree(&gn);
        gfree(&gs);
        mm_free(&c);
    }
}

/* Repack (generic only: the layout has one definition; backends inherit
 * it): split invariance, round trip and zero padding, through mm_pack, on
 * row counts around the group size and odd block counts. A backend that
 * overrides the slot is compared byte for byte with generic. */
static void check_repack(const gl_kernels *nw, int layout)
{
    static const int rowset[] = { 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 33, 100 };
    const int type = gen.layouts[layout].type, grows = gen.layouts[layout].rows;
    for (int ci = 0; ci < 24; ci++) {
        reseed(300 + (uint32_t)layout, (uint32_t)ci);
        const int rows = ci < 12 ? rowset[ci] : rint_in(1, 200);
        const int qk = (int)gguf_type_block_elems((uint32_t)type);
        const int n = qk * (chance(50) ? rint_in(1, 9) : rint_in(1, qk == QK_K ? 24 : 100));
        mm_case c;
        mm_make(&c, type, rows, n, 1);
        snprintf(cur_case, sizeof cur_case, "rows=%d n=%d wrb=%zu", rows, n, c.wrb);
        mm_pack(&c, layout);
        if (nw->layouts[layout].repack != gen.layouts[layout].repack) {
            const int groups = (rows + grows - 1) / grows;
            const size_t bytes = c.gb * (size_t)groups;
            gbuf gq;
            unsigned char *q = galloc(&gq, bytes, rmis());
            nw->layouts[layout].repack(q, c.w, c.wrb, n, rows, 0, groups);
            if (memcmp(q, c.wp, bytes))
                failf("repacked bytes differ from generic's");
            gcheck(&gq, "packed");
            gfree(&gq);
        }
        mm_free(&c);
    }
}

/* ---- rmsnorm / swiglu ------------------------------------------------------------ */

static const int vec_sizes[] = {
    1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 288, 768, 4096, 0, 0, 0
};
enum { n_vec_sizes = sizeof vec_sizes / sizeof vec_sizes[0] };

static void check_rmsnorm(const gl_kernels *ref, const gl_kernels *nw)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(200, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        const int mode = rint_in(0, 4);
        snprintf(cur_case, sizeof cur_case, "n=%d mode=%d", n, mode);
        gbuf gx, gw, gr, gn;
        float *x = galloc(&gx, (size_t)n * 4, rmis4()), *w = galloc(&gw, (size_t)n * 4, rmis4());
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        for (int j = 0; j < n; j++) {
            x[j] = rfloat(mode == 3 ? 0 : mode);
            if (mode == 3)
                x[j] *= 1e15f;
            w[j] = rnorm();
        }
        const float eps = chance(50) ? 1e-5f : 1e-6f;
        ref->rmsnorm(yr, x, w, n, eps);
        nw->rmsnorm(yn, x, w, n, eps);
        for (int j = 0; j < n; j++)
            if (!near(yr[j], yn[j], (n + 24) * U * fabs(yr[j]) + 0x1p-140)) {
                failf("out[%d] = %.9g, generic %.9g", j, yn[j], yr[j]);
                break;
            }
        gcheck(&gn, "out");
        gfree(&gx);
        gfree(&gw);
        gfree(&gr);
        gfree(&gn);
    }
}

static void check_swiglu(const gl_kernels *ref, const gl_kernels *nw)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(300, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        snprintf(cur_case, sizeof cur_case, "n=%d%s", n, ci & 1 ? " in-place" : "");
        gbuf gg, gu, gr, gn;
        float *g = galloc(&gg, (size_t)n * 4, rmis4()), *u = galloc(&gu, (size_t)n * 4, rmis4());
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        for (int j = 0; j < n; j++) {
            const int m = rint_in(0, 99);
            g[j] = m < 60   ? rnorm() * 4.0f
                   : m < 70 ? (float)(runif() * 220.0 - 110.0)
                   : m < 75 ? (chance(50) ? 88.72f : -88.72f) + (float)(runif() - 0.5) * 0.1f
                   : m < 80 ? rnorm() * 1e-39f
                   : m < 83 ? (chance(50) ? 1e30f : -1e30f)
                   : m < 85 ? 0.0f
                            : rnorm();
            u[j] = rfloat(chance(20) ? 2 : 0);
        }
        ref->swiglu(yr, g, u, n);
        if (ci & 1) { /* forward.c calls it in place (out == gate) */
            memcpy(yn, g, (size_t)n * 4);
            nw->swiglu(yn, yn, u, n);
        } else {
            nw->swiglu(yn, g, u, n);
        }
        for (int j = 0; j < n; j++)
            if (!near(yr[j], yn[j], 16 * U * fabs(yr[j]) + 0x1p-120 * fabs(u[j]) + 0x1p-148)) {
                failf("out[%d] = %.9g, generic %.9g (gate %.9g up %.9g)", j, yn[j], yr[j], g[j],
                      u[j]);
                break;
            }
        gcheck(&gn, "out");
        gfree(&gg);
        gfree(&gu);
        gfree(&gr);
        gfree(&gn);
    }
}

/* ---- GPT-2 ops: layernorm / gelu / add_bias ------------------------------------------
 * layernorm: the mean and the sum of squares may be reordered; with
 *     m1 = sum|x_j| / n and d_j = |x_j - mean|,
 *     |new - ref| <= 4 (n + 16) u |scale w_j| (m1 + d_j) + 4 u (|ref| + |b_j|) + 2^-140
 * gelu: the kernel's exp is allowed 8 ulp end to end, as swiglu's:
 *     |new - ref| <= 16 u |ref| + 2^-120 |x| + 2^-148
 * add_bias: bit-exact (one add per element). */

static void check_layernorm(const gl_kernels *ref, const gl_kernels *nw)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(600, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        const int mode = rint_in(0, 5);
        snprintf(cur_case, sizeof cur_case, "n=%d mode=%d%s", n, mode, ci & 1 ? " in-place" : "");
        gbuf gx, gw, gb, gr, gn;
        float *x = galloc(&gx, (size_t)n * 4, rmis4()), *w = galloc(&gw, (size_t)n * 4, rmis4());
        float *bb = galloc(&gb, (size_t)n * 4, rmis4());
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        const float off = mode == 5 ? rnorm() * 1000.0f : 0.0f; /* |mean| >> std */
        for (int j = 0; j < n; j++) {
            x[j] = mode == 5 ? off + rnorm() : rfloat(mode == 3 ? 0 : mode);
            if (mode == 3)
                x[j] *= 1e15f;
            w[j] = rnorm();
            bb[j] = rnorm();
        }
        const float eps = chance(50) ? 1e-5f : 1e-6f;
        ref->layernorm(yr, x, w, bb, n, eps);
        if (ci & 1) { /* out may equal x */
            memcpy(yn, x, (size_t)n * 4);
            nw->layernorm(yn, yn, w, bb, n, eps);
        } else {
            nw->layernorm(yn, x, w, bb, n, eps);
        }
        double m1 = 0, mean = 0, var = 0;
        for (int j = 0; j < n; j++) {
            m1 += fabs(x[j]);
            mean += x[j];
        }
        m1 /= n;
        mean /= n;
        for (int j = 0; j < n; j++)
            var += (x[j] - mean) * (x[j] - mean);
        const double scale = 1.0 / sqrt(var / n + eps);
        for (int j = 0; j < n; j++) {
            const double tol = 4.0 * (n + 16) * U * fabs(scale * w[j]) * (m1 + fabs(x[j] - mean)) +
                               4 * U * (fabs(yr[j]) + fabs(bb[j])) + 0x1p-140;
            if (!near(yr[j], yn[j], tol)) {
                failf("out[%d] = %.9g, generic %.9g, tol %.3g", j, yn[j], yr[j], tol);
                break;
            }
        }
        gcheck(&gn, "out");
        gfree(&gx);
        gfree(&gw);
        gfree(&gb);
        gfree(&gr);
        gfree(&gn);
    }
}

static void check_gelu(const gl_kernels *ref, const gl_kernels *nw)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(700, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        snprintf(cur_case, sizeof cur_case, "n=%d%s", n, ci & 1 ? " in-place" : "");
        gbuf gx, gr, gn;
        float *x = galloc(&gx, (size_t)n * 4, rmis4());
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        for (int j = 0; j < n; j++) {
            const int m = rint_in(0, 99);
            x[j] = m < 60   ? rnorm() * 3.0f
                   : m < 70 ? (float)(runif() * 40.0 - 20.0)
                   : m < 75 ? -(float)(runif() * 4.0 + 8.0) /* exp argument near 88 */
                   : m < 80 ? rnorm() * 1e-39f
                   : m < 83 ? (chance(50) ? 1e30f : -1e30f)
                   : m < 85 ? 0.0f
                            : rnorm();
        }
        ref->gelu(yr, x, n);
        if (ci & 1) {
            memcpy(yn, x, (size_t)n * 4);
            nw->gelu(yn, yn, n);
        } else {
            nw->gelu(yn, x, n);
        }
        for (int j = 0; j < n; j++)
            if (!near(yr[j], yn[j], 16 * U * fabs(yr[j]) + 0x1p-120 * fabs(x[j]) + 0x1p-148)) {
                failf("out[%d] = %.9g, generic %.9g (x %.9g)", j, yn[j], yr[j], x[j]);
                break;
            }
        gcheck(&gn, "out");
        gfree(&gx);
        gfree(&gr);
        gfree(&gn);
    }
}

/* ---- softcap: cap * tanh(x / cap), in place ------------------------------------
 * The kernel's tanh is allowed 16 ulp relative (kernels.h):
 *     |new - ref| <= 16 u |ref| + 2^-148
 * Inputs: logit- and score-like values, values right at the kernel's switch
 * between series and exponential (|x / cap| = 0.5), tiny and subnormal
 * values (the series must keep them), +-inf (-> +-cap), NaN, +-0. */
static void check_softcap(const gl_kernels *ref, const gl_kernels *nw)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(750, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        const float caps[] = { 30.0f, 50.0f, 1.0f, 0.5f + (float)runif() * 100.0f };
        const float cap = caps[ci % 4];
        snprintf(cur_case, sizeof cur_case, "n=%d cap=%.9g", n, cap);
        gbuf gx, gr, gn;
        float *x = galloc(&gx, (size_t)n * 4, rmis4());
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        for (int j = 0; j < n; j++) {
            const int m = rint_in(0, 99);
            x[j] = m < 50   ? rnorm() * cap
                   : m < 60 ? rnorm() * 10.0f * cap
                   : m < 70 ? cap * (0.5f + (float)(runif() - 0.5) * 1e-3f) * (chance(50) ? 1 : -1)
                   : m < 75 ? rnorm() * 1e-3f * cap
                   : m < 80 ? rnorm() * 1e-39f
                   : m < 83 ? (chance(50) ? 1e30f : -1e30f)
                   : m < 85 ? (chance(50) ? INFINITY : -INFINITY)
                   : m < 86 ? NAN
                   : m < 88 ? (chance(50) ? 0.0f : -0.0f)
                            : (float)(runif() * 40.0 - 20.0) * cap;
        }
        memcpy(yr, x, (size_t)n * 4);
        memcpy(yn, x, (size_t)n * 4);
        ref->softcap(yr, n, cap);
        nw->softcap(yn, n, cap);
        for (int j = 0; j < n; j++)
            if (!near(yr[j], yn[j], 16 * U * fabs(yr[j]) + 0x1p-148) ||
                (!isnan(yr[j]) && signbit(yr[j]) != signbit(yn[j]))) {
                failf("out[%d] = %.9g, generic %.9g (x %.9g)", j, yn[j], yr[j], x[j]);
                break;
            }
        gcheck(&gn, "out");
        gfree(&gx);
        gfree(&gr);
        gfree(&gn);
    }
}

static void check_add_bias(const gl_kernels *ref, const gl_kernels *nw)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(800, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        snprintf(cur_case, sizeof cur_case, "n=%d", n);
        gbuf gb, gr, gn;
        float *bb = galloc(&gb, (size_t)n * 4, rmis4());
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        for (int j = 0; j < n; j++) {
            yr[j] = yn[j] = rfloat(rint_in(0, 4));
            bb[j] = rfloat(rint_in(0, 4));
        }
        ref->add_bias(yr, bb, n);
        nw->add_bias(yn, bb, n);
        if (!same_bits(yr, yn, (size_t)n))
            failf("differs from generic");
        gcheck(&gn, "y");
        gfree(&gb);
        gfree(&gr);
        gfree(&gn);
    }
}

/* softmax: exp within 8 ulp and the sum reordered, so
 *     |new - ref| <= (16 + n + 16) u |ref| + 2^-120 (the SIMD exp flushes below e^-88);
 * with F16 rounding the two may land on neighbouring F16 values: one F16
 * step (2^-10 relative, or 2^-24 for F16 subnormals) more.
 * round_f16: exact. */
static void check_softmax(const gl_kernels *ref, const gl_kernels *nw, int round)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(900 + (uint32_t)round, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        snprintf(cur_case, sizeof cur_case, "n=%d", n);
        gbuf gr, gn;
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        const float spread = ci & 1 ? 30.0f : 3.0f; /* peaked and flat distributions */
        for (int j = 0; j < n; j++)
            yr[j] = yn[j] = rnorm() * spread + (chance(5) ? 80.0f : 0.0f);
        ref->softmax(yr, n, round);
        nw->softmax(yn, n, round);
        for (int j = 0; j < n; j++) {
            double tol = (32.0 + n) * U * fabs(yr[j]) + 0x1p-120; /* exp clamps at -88 */
            if (round)
                tol += fabs(yr[j]) * 0x1p-10 + 0x1p-24;
            if (!near(yr[j], yn[j], tol)) {
                failf("p[%d] = %.9g, generic %.9g", j, yn[j], yr[j]);
                break;
            }
        }
        gcheck(&gn, "p");
        gfree(&gr);
        gfree(&gn);
    }
}

/* A backend whose element-wise kernels promise its twin's bits (AVX-512's
 * softmax, SwiGLU and GELU compute AVX2's lanes in AVX2's order,
 * arch/x86/avx512/float_ops.h): equal bit for bit on the inputs above. */
static void check_same_as_twin(const gl_kernels *twin, const gl_kernels *nw, int kind, int type)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(990 + (uint32_t)kind, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        snprintf(cur_case, sizeof cur_case, "n=%d, against %s", n, twin->name);
        gbuf ga, gb, gt, gn;
        float *a = galloc(&ga, (size_t)n * 4, rmis4()), *b = galloc(&gb, (size_t)n * 4, rmis4());
        float *yt = galloc(&gt, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        for (int j = 0; j < n; j++) {
            a[j] = rnorm() * (ci & 1 ? 30.0f : 3.0f) + (chance(5) ? 80.0f : 0.0f);
            b[j] = rnorm();
        }
        if (kind == K_SOFTMAX) {
            memcpy(yt, a, (size_t)n * 4);
            memcpy(yn, a, (size_t)n * 4);
            twin->softmax(yt, n, type);
            nw->softmax(yn, n, type);
        } else if (kind == K_SWIGLU) {
            twin->swiglu(yt, a, b, n);
            nw->swiglu(yn, a, b, n);
        } else {
            twin->gelu(yt, a, n);
            nw->gelu(yn, a, n);
        }
        for (int j = 0; j < n; j++)
            if (memcmp(&yt[j], &yn[j], 4)) {
                failf("[%d] = %.9g, %s %.9g", j, yn[j], twin->name, yt[j]);
                break;
            }
        gcheck(&gn, "out");
        gfree(&ga);
        gfree(&gb);
        gfree(&gt);
        gfree(&gn);
    }
}

static void check_round_f16(const gl_kernels *ref, const gl_kernels *nw)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(950, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        snprintf(cur_case, sizeof cur_case, "n=%d", n);
        gbuf gr, gn;
        float *yr = galloc(&gr, (size_t)n * 4, rmis4()), *yn = galloc(&gn, (size_t)n * 4, rmis4());
        for (int j = 0; j < n; j++)
            yr[j] = yn[j] = rfloat(rint_in(0, 4)); /* includes huge, tiny, subnormal */
        ref->round_f16(yr, n);
        nw->round_f16(yn, n);
        if (!same_bits(yr, yn, (size_t)n))
            failf("differs from generic");
        gcheck(&gn, "x");
        gfree(&gr);
        gfree(&gn);
    }
}

/* to_f16: exact, NaNs included. Besides the value modes of rfloat: the
 * edges of F16's range (the largest finite, the overflow threshold 65520
 * and either side of it), ties halfway between two F16 values (normal and
 * subnormal), infinities and NaNs with random payloads and signs. */
static float f16_edge(void)
{
    static const uint32_t edges[] = {
        0x477fe000u, /* 65504, the largest F16 */
        0x477fefffu, /* just below 65520: rounds down to 65504 */
        0x477ff000u, /* 65520: the tie, to infinity */
        0x38800000u, /* 2^-14, the smallest normal F16 */
        0x387fc000u, /* a subnormal F16 exactly */
        0x33800000u, /* 2^-24, the smallest subnormal */
        0x33000000u, /* 2^-25: the tie with zero, to zero */
        0x33000001u, /* just above it: to 2^-24 */
        0x7f800000u, /* infinity */
    };
    uint32_t b;
    switch (rint_in(0, 3)) {
    case 0: b = edges[rint_in(0, (int)(sizeof edges / sizeof edges[0]) - 1)]; break;
    case 1: /* a tie: an F16 mantissa with the next bit set and nothing below */
        b = (uint32_t)rint_in(0x38800000 >> 13, 0x477fe000 >> 13) << 13 | 0x1000u;
        break;
    case 2: b = 0x7f800000u | (uint32_t)rint_in(1, 0x7fffff); break; /* NaN */
    default: b = 0x7fc00000u; break;                                 /* the default NaN */
    }
    b |= chance(50) ? 0x80000000u : 0;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static void check_to_f16(const gl_kernels *ref, const gl_kernels *nw)
{
    for (int ci = 0; ci < n_vec_sizes * 2; ci++) {
        reseed(960, (uint32_t)ci);
        const int n = vec_sizes[ci % n_vec_sizes] ? vec_sizes[ci % n_vec_sizes] : rint_in(1, 3000);
        snprintf(cur_case, sizeof cur_case, "n=%d", n);
        gbuf gx, gr, gn;
        float *x = galloc(&gx, (size_t)n * 4, rmis4());
        uint16_t *yr = galloc(&gr, (size_t)n * 2, rmis4()),
                 *yn = galloc(&gn, (size_t)n * 2, rmis4());
        for (int j = 0; j < n; j++)
            x[j] = chance(20) ? f16_edge() : rfloat(rint_in(0, 4));
        ref->to_f16(yr, x, n);
        nw->to_f16(yn, x, n);
        for (int j = 0; j < n; j++)
            if (yr[j] != yn[j]) {
                failf("y[%d] = 0x%04x for %a, generic 0x%04x", j, yn[j], (double)x[j], yr[j]);
                break;
            }
        gcheck(&gx, "x");
        gcheck(&gn, "y");
        gfree(&gx);
        gfree(&gr);
        gfree(&gn);
    }
}

/* ---- attention ---------------------------------------------------------------------- */

static const int lens[] = { 1, 3, 7, 8, 9, 16, 31, 32, 48, 64, 100, 128, 256 };

/* A test KV layout: rows stride bytes apart. F32 / F16 rows are the head's
 * len elements (row pointers at the head); Q8_0 rows are whole blocks of a
 * cache row and the head is elements [off, off + len) of each, as heads of
 * fewer than 32 elements (head_dim 8: off 8, 16, 24) or at any offset. */
typedef struct kv_lay {
    int kv, off, len;
    size_t stride;
} kv_lay;

static kv_lay kv_layout(int kv, int len)
{
    kv_lay L = { .kv = kv, .len = len };
    if (kv == GL_KV_Q8_0) {
        const int m = rint_in(0, 99);
        L.off = m < 35 ? 0 : m < 75 ? len * rint_in(1, 3) : rint_in(1, 40);
        const int nblk = (L.off + len + QK8_0 - 1) / QK8_0 + (chance(30) ? rint_in(1, 2) : 0);
        L.stride = (size_t)nblk * sizeof(block_q8_0);
    } else {
        const size_t esz = kv == GL_KV_F16 ? 2 : 4;
        L.stride = esz * (size_t)len + (chance(30) ? esz * (size_t)rint_in(1, 9) : 0);
    }
    return L;
}

/* random rows [r0, r1) of a layout at p */
static void fill_kv(const kv_lay *L, unsigned char *p, int r0, int r1)
{
    const int mode = rint_in(0, 4);
    for (int r = r0; r < r1; r++) {
        unsigned char *row = p + (size_t)r * L->stride;
        if (L->kv == GL_KV_Q8_0) {
            for (size_t b = 0; b < L->stride / sizeof(block_q8_0); b++) {
                block_q8_0 blk;
                rblock_q8(&blk, 1);
                memcpy(row + b * sizeof(block_q8_0), &blk, sizeof blk);
            }
            continue;
        }
        for (int i = 0; i < L->len; i++) {
            if (L->kv == GL_KV_F16) {
                uint16_t h = rf16(mode);
                memcpy(row + 2 * i, &h, 2);
            } else {
                float v = rfloat(mode);
                memcpy(row + 4 * i, &v, 4);
            }
        }
    }
}

/* Q8_0 rows at even addresses: generic reads the block scales in place */
static void *make_kv(gbuf *g, const kv_lay *L, int rows)
{
    unsigned char *p = galloc(g, L->stride * (size_t)rows,
                              L->kv == GL_KV_Q8_0  ? rmis()
                              : L->kv == GL_KV_F16 ? 2 * rint_in(0, 31)
                                                   : rmis4());
    fill_kv(L, p, 0, rows);
    return p;
}

static double kv_val(const kv_lay *L, const void *base, int r, int i)
{
    const char *row = (const char *)base + (size_t)r * L->stride;
    if (L->kv == GL_KV_Q8_0) {
        block_q8_0 b;
        memcpy(&b, row + (size_t)(L->off + i) / QK8_0 * sizeof(block_q8_0), sizeof b);
        return (double)gl_f16_to_f32(b.d) * b.qs[(L->off + i) % QK8_0];
    }
    if (L->kv == GL_KV_F16) {
        uint16_t h;
        memcpy(&h, row + 2 * i, 2);
        return gl_f16_to_f32(h);
    }
    float f;
    memcpy(&f, row + 4 * i, 4);
    return f;
}

/* The slots, by cache type: single-head and group forms. */
static void call_scores(const gl_kernels *k, const kv_lay *L, float *s, const float *q,
                        const void *rows, int n, float scale)
{
    if (L->kv == GL_KV_Q8_0)
        k->attn_scores_q8(s, q, rows, L->stride, n, L->off, L->len, scale);
    else
        k->attn_scores[L->kv](s, q, rows, L->stride, n, L->len, scale);
}

static void call_accum(const gl_kernels *k, const kv_lay *L, float *out, const float *p,
                       const void *rows, int n)
{
    if (L->kv == GL_KV_Q8_0)
        k->attn_accum_q8(out, p, rows, L->stride, n, L->off, L->len);
    else
        k->attn_accum[L->kv](out, p, rows, L->stride, n, L->len);
}

static void call_scores_g(const gl_kernels *k, const kv_lay *L, float *s, size_t ss, const float *q,
                          size_t qs, int nq, const void *rows, int n, float scale)
{
    if (L->kv == GL_KV_Q8_0)
        k->attn_scores_q8_g(s, ss, q, qs, nq, rows, L->stride, n, L->off, L->len, scale);
    else
        k->attn_scores_g[L->kv](s, ss, q, qs, nq, rows, L->stride, n, L->len, scale);
}

static void call_accum_g(const gl_kernels *k, const kv_lay *L, float *out, size_t os,
                         const float *p, size_t ps, int nq, const void *rows, int n)
{
    if (L->kv == GL_KV_Q8_0)
        k->attn_accum_q8_g(out, os, p, ps, nq, rows, L->stride, n, L->off, L->len);
    else
        k->attn_accum_g[L->kv](out, os, p, ps, nq, rows, L->stride, n, L->len);
}

/* The n logical rows at `rows`, laid out as src/attention.c's ring stores
 * them: P pinned rows in slots [0, P), the other n - P in a ring of S >= n - P
 * slots rotated by rot (logical row P + x in slot P + (rot + x) % S), the
 * slots no row uses holding other data. Runs (physical first slot, count,
 * first logical row) cover the rows in logical order: pinned, tail of the
 * ring, head of the ring, so 1 to 3 of them. */
typedef struct ring_run {
    int slot, n, first;
} ring_run;

static const void *make_ring(gbuf *g, const kv_lay *L, const void *rows, int n, ring_run *runs,
                             int *n_runs)
{
    const int P = chance(50) ? rint_in(0, n - 1 < 4 ? n - 1 : 4) : 0, W = n - P;
    const int S = W + (chance(30) ? rint_in(1, 5) : 0);
    const int rot = S > 1 && chance(85) ? rint_in(1, S - 1) : 0;
    unsigned char *p = galloc(g, L->stride * (size_t)(P + S),
                              L->kv == GL_KV_Q8_0  ? rmis()
                              : L->kv == GL_KV_F16 ? 2 * rint_in(0, 31)
                                                   : rmis4());
    fill_kv(L, p, 0, P + S); /* the unused slots: stale rows */
    memcpy(p, rows, L->stride * (size_t)P);
    for (int x = 0; x < W; x++)
        memcpy(p + (size_t)(P + (rot + x) % S) * L->stride,
               (const char *)rows + (size_t)(P + x) * L->stride, L->stride);
    int nr = 0;
    if (P)
        runs[nr++] = (ring_run){ 0, P, 0 };
    const int tail = W < S - rot ? W : S - rot;
    runs[nr++] = (ring_run){ P + rot, tail, P };
    if (W > tail)
        runs[nr++] = (ring_run){ P, W - tail, P + tail };
    *n_runs = nr;
    return p;
}

#define RING_ROW(L, base, slot) ((const char *)(base) + (size_t)(slot) * (L)->stride)

static void check_scores(const gl_kernels *ref, const gl_kernels *nw, int kv, int vs_ref)
{
    for (int ci = 0; ci < 40; ci++) {
        reseed(400 + (uint32_t)kv, (uint32_t)ci);
        const int nk = chance(50) ? rint_in(1, 9) : rint_in(1, 90);
        const int len = chance(70) ? lens[rint_in(0, 12)] : rint_in(1, 300);
        const kv_lay L = kv_layout(kv, len);
        snprintf(cur_case, sizeof cur_case, "keys=%d len=%d off=%d", nk, len, L.off);
        gbuf gk, gq, gr, gn, gs, gg;
        const void *k = make_kv(&gk, &L, nk);
        float *q = galloc(&gq, (size_t)len * 4, rmis4());
        for (int i = 0; i < len; i++)
            q[i] = rnorm();
        const float scale = chance(50) ? 0.125f : 1.0f / sqrtf((float)len);
        float *yr = galloc(&gr, (size_t)nk * 4, rmis4()),
              *yn = galloc(&gn, (size_t)nk * 4, rmis4());
        float *ys = galloc(&gs, (size_t)nk * 4, rmis4());
        call_scores(nw, &L, yn, q, k, nk, scale);
        if (vs_ref) {
            call_scores(ref, &L, yr, q, k, nk, scale);
            for (int j = 0; j < nk; j++) {
                double t = 0;
                for (int i = 0; i < len; i++)
                    t += fabs(q[i] * kv_val(&L, k, j, i));
                const double tol =
                    2.0 * (len + 16) * U * t * scale + U * fabs(yr[j]) + len * 0x1p-149;
                if (!near(yr[j], yn[j], tol)) {
                    failf("scores[%d] = %.9g, generic %.9g, tol %.3g", j, yn[j], yr[j], tol);
                    break;
                }
            }
        }
        for (int j0 = 0; j0 < nk;) { /* keys split into runs */
            const int m = rint_in(1, nk - j0);
            call_scores(nw, &L, ys + j0, q, (const char *)k + (size_t)j0 * L.stride, m, scale);
            j0 += m;
        }
        if (!same_bits(ys, yn, (size_t)nk))
            failf("split into key runs differs from one call");
        ring_run runs[3];
        int nr;
        const void *ring = make_ring(&gg, &L, k, nk, runs, &nr);
        fill_sentinel(ys, (size_t)nk);
        for (int r = 0; r < nr; r++)
            call_scores(nw, &L, ys + runs[r].first, q, RING_ROW(&L, ring, runs[r].slot), runs[r].n,
                        scale);
        if (!same_bits(ys, yn, (size_t)nk))
            failf("ring layout (%d runs) differs from one call", nr);
        gcheck(&gn, "scores");
        gcheck(&gs, "scores");
        gfree(&gk);
        gfree(&gq);
        gfree(&gr);
        gfree(&gn);
        gfree(&gs);
        gfree(&gg);
    }
}

static void check_accum(const gl_kernels *ref, const gl_kernels *nw, int kv, int vs_ref)
{
    for (int ci = 0; ci < 40; ci++) {
        reseed(500 + (uint32_t)kv, (uint32_t)ci);
        const int nr = chance(50) ? rint_in(1, 9) : rint_in(1, 150);
        const int len = chance(70) ? lens[rint_in(0, 12)] : rint_in(1, 300);
        const kv_lay L = kv_layout(kv, len);
        snprintf(cur_case, sizeof cur_case, "rows=%d len=%d off=%d", nr, len, L.off);
        gbuf gv, gp, gr, gn, gs, gg;
        const void *v = make_kv(&gv, &L, nr);
        float *p = galloc(&gp, (size_t)nr * 4, rmis4());
        for (int j = 0; j < nr; j++)
            p[j] = (float)runif();
        float *yr = galloc(&gr, (size_t)len * 4, rmis4()),
              *yn = galloc(&gn, (size_t)len * 4, rmis4());
        float *ys = galloc(&gs, (size_t)len * 4, rmis4());
        for (int i = 0; i < len; i++)
            yr[i] = yn[i] = ys[i] = rnorm();
        float *y0 = malloc((size_t)len * 4);
        memcpy(y0, yn, (size_t)len * 4);
        call_accum(nw, &L, yn, p, v, nr);
        if (vs_ref) {
            call_accum(ref, &L, yr, p, v, nr);
            for (int i = 0; i < len; i++) {
                double t = fabs(ys[i]);
                for (int j = 0; j < nr; j++)
                    t += fabs(p[j] * kv_val(&L, v, j, i));
                const double tol = 2.0 * (nr + 2) * U * t + (nr + 1) * 0x1p-149;
                if (!near(yr[i], yn[i], tol)) {
                    failf("out[%d] = %.9g, generic %.9g, tol %.3g", i, yn[i], yr[i], tol);
                    break;
                }
            }
        }
        for (int j0 = 0; j0 < nr;) { /* rows split into runs */
            const int m = rint_in(1, nr - j0);
            call_accum(nw, &L, ys, p + j0, (const char *)v + (size_t)j0 * L.stride, m);
            j0 += m;
        }
        if (!same_bits(ys, yn, (size_t)len))
            failf("split into row runs differs from one call");
        ring_run runs[3];
        int nru;
        const void *ring = make_ring(&gg, &L, v, nr, runs, &nru);
        memcpy(ys, y0, (size_t)len * 4);
        for (int r = 0; r < nru; r++)
            call_accum(nw, &L, ys, p + runs[r].first, RING_ROW(&L, ring, runs[r].slot), runs[r].n);
        if (!same_bits(ys, yn, (size_t)len))
            failf("ring layout (%d runs) differs from one call", nru);
        gcheck(&gn, "out");
        gcheck(&gs, "out");
        free(y0);
        gfree(&gv);
        gfree(&gp);
        gfree(&gr);
        gfree(&gn);
        gfree(&gs);
        gfree(&gg);
    }
}

/* group sizes: TinyLlama's 8, Llama-3's 4, MHA's 1, and the odd ones that
 * exercise every tile remainder */
static int rand_nq(void)
{
    static const int g[] = { 1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 12, 16 };
    return g[rint_in(0, (int)(sizeof g / sizeof g[0]) - 1)];
}

/* Group scores: each head's scores equal the same backend's single-head
 * slot bit for bit (so generic's tolerance carries over from
 * attn_scores_*), the stride padding between heads is never written, and
 * the ring's runs give the bits of one call. */
static void check_scores_g(const gl_kernels *nw, int kv)
{
    for (int ci = 0; ci < 40; ci++) {
        reseed(1400 + (uint32_t)kv, (uint32_t)ci);
        const int nq = rand_nq();
        const int nk = chance(50) ? rint_in(1, 9) : rint_in(1, 90);
        const int len = chance(70) ? lens[rint_in(0, 12)] : rint_in(1, 300);
        const kv_lay L = kv_layout(kv, len);
        const size_t qs = (size_t)len + (chance(50) ? (size_t)rint_in(1, 7) : 0);
        const size_t ss = (size_t)nk + (chance(50) ? (size_t)rint_in(1, 9) : 0);
        snprintf(cur_case, sizeof cur_case, "heads=%d keys=%d len=%d off=%d", nq, nk, len, L.off);
        gbuf gk, gq, gn, gs, gg;
        const void *k = make_kv(&gk, &L, nk);
        float *q = galloc(&gq, ((size_t)(nq - 1) * qs + (size_t)len) * 4, rmis4());
        for (size_t i = 0; i < (size_t)(nq - 1) * qs + (size_t)len; i++)
            q[i] = rnorm();
        const float scale = chance(50) ? 0.125f : 1.0f / sqrtf((float)len);
        const size_t ny = (size_t)(nq - 1) * ss + (size_t)nk;
        float *yn = galloc(&gn, ny * 4, rmis4()), *ys = galloc(&gs, ny * 4, rmis4());
        fill_sentinel(yn, ny);
        call_scores_g(nw, &L, yn, ss, q, qs, nq, k, nk, scale);
        float *one = malloc((size_t)nk * 4);
        for (int h = 0; h < nq; h++) {
            call_scores(nw, &L, one, q + h * qs, k, nk, scale);
            if (!same_bits(one, yn + h * ss, (size_t)nk)) {
                failf("head %d differs from the single-head slot", h);
                break;
            }
            for (size_t j = (size_t)nk; h < nq - 1 && j < ss; j++)
                if (!is_sentinel(yn + h * ss + j)) {
                    failf("head %d: wrote scores[%zu] past n_keys", h, j);
                    break;
                }
        }
        free(one);
        ring_run runs[3];
        int nr;
        const void *ring = make_ring(&gg, &L, k, nk, runs, &nr);
        fill_sentinel(ys, ny);
        for (int r = 0; r < nr; r++)
            call_scores_g(nw, &L, ys + runs[r].first, ss, q, qs, nq,
                          RING_ROW(&L, ring, runs[r].slot), runs[r].n, scale);
        if (!same_bits(ys, yn, ny))
            failf("ring layout (%d runs) differs from one call", nr);
        gcheck(&gn, "scores");
        gcheck(&gs, "scores");
        gfree(&gk);
        gfree(&gq);
        gfree(&gn);
        gfree(&gs);
        gfree(&gg);
    }
}

/* Scores over key-transposed blocks: bit-identical to generic (the chain of
 * FMAs is the slot's definition), for any first lane, group size and split
 * of keys and heads into calls; the lanes around the keys hold NaN, which
 * must never reach a result, and nothing is written past n_keys. */
static void check_scores_t(const gl_kernels *ref, const gl_kernels *nw, int kv)
{
    const size_t es = kv == GL_KV_F16 ? 2 : 4;
    for (int ci = 0; ci < 60; ci++) {
        reseed(1600 + (uint32_t)kv, (uint32_t)ci);
        const int nq = rand_nq();
        const int nk = chance(40)   ? rint_in(1, 20)
                       : chance(80) ? rint_in(1, 150)
                                    : rint_in(150, 600);
        const int len = chance(70) ? lens[rint_in(0, 12)] : rint_in(1, 300);
        const int lane0 = chance(30) ? 0 : rint_in(0, GL_KT_BLOCK - 1);
        const int nblk = (lane0 + nk + GL_KT_BLOCK - 1) / GL_KT_BLOCK;
        const size_t qs = (size_t)len + (chance(50) ? (size_t)rint_in(1, 7) : 0);
        const size_t ss = (size_t)nk + (chance(50) ? (size_t)rint_in(1, 9) : 0);
        snprintf(cur_case, sizeof cur_case, "heads=%d keys=%d len=%d lane0=%d", nq, nk, len, lane0);
        gbuf gk, gq, gr, gn, gs;
        const size_t blk_el = (size_t)len * GL_KT_BLOCK, nel = (size_t)nblk * blk_el;
        unsigned char *k = galloc(&gk, nel * es, kv == GL_KV_F16 ? 2 * rint_in(0, 31) : rmis4());
        const int mode = rint_in(0, 4);
        for (size_t e = 0; e < nel; e++) {
            const int p = (int)(e / blk_el) * GL_KT_BLOCK + (int)(e % GL_KT_BLOCK);
            const bool used = p >= lane0 && p < lane0 + nk;
            if (kv == GL_KV_F16) {
                const uint16_t h = used ? rf16(mode) : 0x7e00;
                memcpy(k + 2 * e, &h, 2);
            } else {
                const float v = used ? rfloat(mode) : NAN;
                memcpy(k + 4 * e, &v, 4);
            }
        }
        float *q = galloc(&gq, ((size_t)(nq - 1) * qs + (size_t)len) * 4, rmis4());
        for (size_t i = 0; i < (size_t)(nq - 1) * qs + (size_t)len; i++)
            q[i] = rnorm();
        const float scale = chance(50) ? 0.125f : 1.0f / sqrtf((float)len);
        const size_t ny = (size_t)(nq - 1) * ss + (size_t)nk;
        float *yr = galloc(&gr, ny * 4, rmis4()), *yn = galloc(&gn, ny * 4, rmis4());
        float *ys = galloc(&gs, ny * 4, rmis4());
        fill_sentinel(yr, ny);
        fill_sentinel(yn, ny);
        fill_sentinel(ys, ny);
        ref->attn_scores_t[kv](yr, ss, q, qs, nq, k, lane0, nk, len, scale);
        nw->attn_scores_t[kv](yn, ss, q, qs, nq, k, lane0, nk, len, scale);
        for (size_t i = 0; i < ny; i++)
            if (!same_bits(yn + i, yr + i, 1)) {
                failf("scores[%zu][%zu] = %.9g, generic %.9g", i / ss, i % ss, yn[i], yr[i]);
                break;
            }
        for (int j0 = 0; j0 < nk;) { /* keys and heads split into calls */
            const int m = rint_in(1, nk - j0), p = lane0 + j0;
            const unsigned char *kb = k + (size_t)(p / GL_KT_BLOCK) * blk_el * es;
            for (int h0 = 0; h0 < nq;) {
                const int hn = rint_in(1, nq - h0);
                nw->attn_scores_t[kv](ys + (size_t)h0 * ss + j0, ss, q + (size_t)h0 * qs, qs, hn,
                                      kb, p % GL_KT_BLOCK, m, len, scale);
                h0 += hn;
            }
            j0 += m;
        }
        if (!same_bits(ys, yn, ny))
            failf("keys and heads split into calls differ from one call");
        gcheck(&gr, "scores");
        gcheck(&gn, "scores");
        gcheck(&gs, "scores");
        gfree(&gk);
        gfree(&gq);
        gfree(&gr);
        gfree(&gn);
        gfree(&gs);
    }
}

/* Group accumulation: as check_scores_g, per head against the same
 * backend's single-head slot (itself checked against generic). */
static void check_accum_g(const gl_kernels *nw, int kv)
{
    for (int ci = 0; ci < 40; ci++) {
        reseed(1500 + (uint32_t)kv, (uint32_t)ci);
        const int nq = rand_nq();
        const int nr = chance(50) ? rint_in(1, 9) : rint_in(1, 150);
        const int len = chance(70) ? lens[rint_in(0, 12)] : rint_in(1, 300);
        const kv_lay L = kv_layout(kv, len);
        const size_t os = (size_t)len + (chance(50) ? (size_t)rint_in(1, 7) : 0);
        const size_t ps = (size_t)nr + (chance(50) ? (size_t)rint_in(1, 9) : 0);
        snprintf(cur_case, sizeof cur_case, "heads=%d rows=%d len=%d off=%d", nq, nr, len, L.off);
        gbuf gv, gp, gn, gs, gg;
        const void *v = make_kv(&gv, &L, nr);
        const size_t np = (size_t)(nq - 1) * ps + (size_t)nr;
        float *p = galloc(&gp, np * 4, rmis4());
        for (size_t j = 0; j < np; j++)
            p[j] = (float)runif();
        const size_t ny = (size_t)(nq - 1) * os + (size_t)len;
        float *yn = galloc(&gn, ny * 4, rmis4()), *ys = galloc(&gs, ny * 4, rmis4());
        float *y0 = malloc(ny * 4), *one = malloc((size_t)len * 4);
        for (size_t i = 0; i < ny; i++)
            y0[i] = (i % os) < (size_t)len ? rnorm() : 0.0f;
        for (int h = 0; h < nq - 1; h++) /* stride padding: must stay untouched */
            fill_sentinel(y0 + h * os + len, os - (size_t)len);
        memcpy(yn, y0, ny * 4);
        call_accum_g(nw, &L, yn, os, p, ps, nq, v, nr);
        for (int h = 0; h < nq; h++) {
            memcpy(one, y0 + h * os, (size_t)len * 4);
            call_accum(nw, &L, one, p + h * ps, v, nr);
            if (!same_bits(one, yn + h * os, (size_t)len)) {
                failf("head %d differs from the single-head slot", h);
                break;
            }
            if (h < nq - 1 && !same_bits(y0 + h * os + len, yn + h * os + len, os - (size_t)len)) {
                failf("head %d: wrote out past len", h);
                break;
            }
        }
        ring_run runs[3];
        int nru;
        const void *ring = make_ring(&gg, &L, v, nr, runs, &nru);
        memcpy(ys, y0, ny * 4);
        for (int r = 0; r < nru; r++)
            call_accum_g(nw, &L, ys, os, p + runs[r].first, ps, nq,
                         RING_ROW(&L, ring, runs[r].slot), runs[r].n);
        if (!same_bits(ys, yn, ny))
            failf("ring layout (%d runs) differs from one call", nru);
        gcheck(&gn, "out");
        gcheck(&gs, "out");
        free(y0);
        free(one);
        gfree(&gv);
        gfree(&gp);
        gfree(&gn);
        gfree(&gs);
        gfree(&gg);
    }
}

/* ---- bench ----------------------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* generic's time per bench row, to print speed-ups */
static double gen_ns[64];

typedef struct bench_ctx {
    const gl_kernels *k;
    const struct slot *s;
    int n, rows, nb;
    void *w, *x, *y, *aux;
} bench_ctx;

/* a bench KV row: one head of n elements of the cache type */
static size_t kv_bench_stride(int kv, int n)
{
    return kv == GL_KV_Q8_0 ? row_bytes(GGUF_T_Q8_0, n) : (size_t)n * (kv == GL_KV_F16 ? 2 : 4);
}

static void bench_call(const bench_ctx *b)
{
    const struct slot *s = b->s;
    switch (s->kind) {
    case K_QUANT:
        if (s->type == GL_ACT_Q8_0)
            b->k->quantize_q8_0(b->x, b->y, b->n);
        else
            b->k->quantize_act[s->type](b->x, b->y, b->n);
        break;
    case K_DEQUANT: b->k->dequant[s->type](b->w, b->y, b->n); break;
    case K_MATMUL: {
        const size_t xs = is_quant(s->type) ? act_row_bytes(s->type, b->n) : (size_t)b->n * 4;
        b->k->matmul[s->type](b->w, row_bytes(s->type, b->n), b->x, xs, b->y, (size_t)b->rows, b->n,
                              0, b->rows, b->nb);
        break;
    }
    case K_MATMUL_X8: /* aux: the weights repacked by generic */
        b->k->matmul_packed[s->layout](
            b->aux, row_bytes(s->type, b->n) * gen.layouts[s->layout].rows, b->x,
            act_row_bytes(s->type, b->n), b->y, (size_t)b->rows, b->n, 0, b->rows, b->nb);
        break;
    case K_REPACK: /* not benchmarked (load time: see genloop bench) */ break;
    case K_RMSNORM: b->k->rmsnorm(b->y, b->x, b->aux, b->n, 1e-5f); break;
    case K_SWIGLU: b->k->swiglu(b->y, b->x, b->aux, b->n); break;
    case K_SCORES:
    case K_ACCUM:
    case K_SCORES_G:
    case K_ACCUM_G: { /* nb: query heads of the group slots */
        const kv_lay L = { .kv = s->type, .len = b->n, .stride = kv_bench_stride(s->type, b->n) };
        if (s->kind == K_SCORES)
            call_scores(b->k, &L, b->y, b->x, b->w, b->rows, 0.125f);
        else if (s->kind == K_ACCUM)
            call_accum(b->k, &L, b->y, b->x, b->w, b->rows);
        else if (s->kind == K_SCORES_G)
            call_scores_g(b->k, &L, b->y, (size_t)b->rows, b->x, (size_t)b->n, b->nb, b->w, b->rows,
                          0.125f);
        else
            call_accum_g(b->k, &L, b->y, (size_t)b->n, b->x, (size_t)b->rows, b->nb, b->w, b->rows);
        break;
    }
    case K_SCORES_T: { /* rows keys in whole blocks, nb query heads */
        b->k->attn_scores_t[s->type](b->y, (size_t)b->rows, b->x, (size_t)b->n, b->nb, b->w, 0,
                                     b->rows, b->n, 0.125f);
        break;
    }
    case K_LAYERNORM: b->k->layernorm(b->y, b->x, b->aux, b->aux, b->n, 1e-5f); break;
    case K_GELU: b->k->gelu(b->y, b->x, b->n); break;
    case K_ADD_BIAS: b->k->add_bias(b->y, b->aux, b->n); break;
    case K_SOFTCAP: b->k->softcap(b->y, b->n, 30.0f); break;
    case K_SOFTMAX: b->k->softmax(b->y, b->n, s->type); break;
    case K_ROUND_F16: b->k->round_f16(b->y, b->n); break;
    case K_TO_F16: b->k->to_f16(b->y, b->x, b->n); break;
    }
}

typedef struct bench_shape {
    int n, rows, nb;
} bench_shape;

/* ns per call: the best of 5 batches, each >= ~40 ms (at least 1 call) */
static double time_calls(const bench_ctx *b)
{
    bench_call(b); /* warm up caches and wide units */
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        int iters = 0;
        const double t0 = now();
        double t;
        do {
            bench_call(b);
            iters++;
            t = now() - t0;
        } while (t < 0.04);
        if (t / iters < best)
            best = t / iters;
    }
    return best * 1e9;
}

static void *bench_buf(size_t bytes)
{
    unsigned char *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p)
        exit(2);
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)(0x38 + (rnd() & 7)); /* normal floats, halves, bf16 ~ 1e-4..1 */
    return p;
}

/* random blocks with normal half scales (subnormal or non-finite ones
 * would time the FPU's slow paths, not the kernel) */
static void bench_sane_scales(int type, void *w, size_t nel)
{
    const size_t bb = gguf_type_block_bytes((uint32_t)type);
    const size_t nblk = nel / gguf_type_block_elems((uint32_t)type);
    int off[2] = { 0, 0 };
    const int nh = type == GGUF_T_Q8_0 || type == GGUF_T_Q4_0 ? 1 : half_fields(type, off);
    const uint16_t h = 0x2000;
    for (size_t i = 0; i < nblk; i++)
        for (int f = 0; f < nh; f++)
            memcpy((char *)w + i * bb + off[f], &h, 2);
}

static void bench_backend(const char *name, const gl_kernels *k, int is_generic)
{
    printf("bench %s:\n", name);
    int row = 0;
    for (int si = 0; si < n_slots; si++) {
        const struct slot *s = &slots[si];
        if (opt.slot && strncmp(s->name, opt.slot, strlen(opt.slot)))
            continue;
        bench_shape shapes[4];
        int nsh = 0;
        const int is_mm = s->kind == K_MATMUL || s->kind == K_MATMUL_X8;
        if (s->kind == K_REPACK || !slot_fn(k, s))
            continue;
        if (is_mm) {
            shapes[nsh++] = (bench_shape){ 2048, 5632, 1 };
            shapes[nsh++] = (bench_shape){ 5632, 2048, 1 };
            shapes[nsh++] = (bench_shape){ 2048, 5632, 32 };
            /* ~0.6 MB of 4-bit weights stay in L2: the kernel's own rate,
             * not the cache hierarchy's */
            shapes[nsh++] = (bench_shape){ 2048, 512, 1 };
        } else if (s->kind == K_SCORES || s->kind == K_ACCUM) {
            shapes[nsh++] = (bench_shape){ 64, 1024, 1 };
        } else if (s->kind == K_SCORES_G || s->kind == K_ACCUM_G || s->kind == K_SCORES_T) {
            shapes[nsh++] = (bench_shape){ 64, 1024, 8 }; /* TinyLlama: 8 heads per KV head */
        } else {
            shapes[nsh++] = (bench_shape){ s->kind == K_RMSNORM ? 2048 : 5632, 1, 1 };
        }
        for (int i = 0; i < nsh; i++, row++) {
            bench_ctx b = {
                .k = k, .s = s, .n = shapes[i].n, .rows = shapes[i].rows, .nb = shapes[i].nb
            };
            reseed(900, (uint32_t)row);
            size_t wbytes = 0;
            if (is_mm) {
                wbytes = row_bytes(s->type, b.n) * (size_t)b.rows;
                b.w = bench_buf(wbytes);
                if (is_quant(s->type)) {
                    bench_sane_scales(s->type, b.w, (size_t)b.rows * (size_t)b.n);
                    b.x = bench_buf(act_row_bytes(s->type, b.n) * (size_t)b.nb);
                } else {
                    b.x = bench_buf((size_t)b.n * 4 * (size_t)b.nb);
                }
                b.y = bench_buf((size_t)b.rows * 4 * (size_t)b.nb);
                if (s->kind == K_MATMUL_X8) {
                    const int grows = gen.layouts[s->layout].rows;
                    const int groups = (b.rows + grows - 1) / grows;
                    b.aux = bench_buf(row_bytes(s->type, b.n) * (size_t)grows * (size_t)groups);
                    gen.layouts[s->layout].repack(b.aux, b.w, row_bytes(s->type, b.n), b.n, b.rows,
                                                  0, groups);
                }
            } else if (s->kind == K_SCORES || s->kind == K_ACCUM || s->kind == K_SCORES_G ||
                       s->kind == K_ACCUM_G || s->kind == K_SCORES_T) {
                b.w = bench_buf((size_t)b.n * 4 * (size_t)b.rows);
                b.x = bench_buf(((size_t)b.rows * 4 + (size_t)b.n * 4) * (size_t)b.nb);
                b.y = bench_buf(((size_t)b.rows * 4 + (size_t)b.n * 4) * (size_t)b.nb);
            } else {
                b.x = bench_buf((size_t)b.n * 4);
                b.aux = bench_buf((size_t)b.n * 4);
                b.y = bench_buf((size_t)b.n * 4 + 64);
                if (s->kind == K_DEQUANT) {
                    b.w = bench_buf(row_bytes(s->type, b.n));
                    bench_sane_scales(s->type, b.w, (size_t)b.n);
                }
            }
            const double ns = time_calls(&b);
            if (is_generic && row < 64)
                gen_ns[row] = ns;
            char shape[64];
            if (is_mm)
                snprintf(shape, sizeof shape, "%dx%d nb=%d", b.n, b.rows, b.nb);
            else if (s->kind == K_SCORES || s->kind == K_ACCUM)
                snprintf(shape, sizeof shape, "len=%d rows=%d", b.n, b.rows);
            else if (s->kind == K_SCORES_G || s->kind == K_ACCUM_G || s->kind == K_SCORES_T)
                snprintf(shape, sizeof shape, "len=%d rows=%d heads=%d", b.n, b.rows, b.nb);
            else
                snprintf(shape, sizeof shape, "n=%d", b.n);
            printf("  %-16s %-22s %12.0f ns", s->name, shape, ns);
            if (wbytes)
                printf("  %7.2f GB/s weights  %7.2f GMAC/s", wbytes / ns,
                       (double)b.n * b.rows * b.nb / ns);
            if (!is_generic && row < 64 && gen_ns[row] > 0)
                printf("  (%.2fx)", gen_ns[row] / ns);
            printf("\n");
            free(b.w);
            free(b.x);
            free(b.y);
            free(b.aux);
        }
    }
}

/* ---- driver ------------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: checkkernels [--seed N] [--backend NAME] [--slot PREFIX] [--tune NAME] [-v] "
            "[--bench]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    opt.seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            opt.seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            opt.backend = argv[++i];
        else if (!strcmp(argv[i], "--slot") && i + 1 < argc)
            opt.slot = argv[++i];
        else if (!strcmp(argv[i], "--tune") && i + 1 < argc)
            opt.tune = argv[++i];
        else if (!strcmp(argv[i], "-v"))
            opt.verbose = 1;
        else if (!strcmp(argv[i], "--bench"))
            opt.bench = 1;
        else
            usage();
    }
    printf("checkkernels: using random seed %" PRIu64 "\n", opt.seed);
    printf("cpu features: %s\n", gl_cpu_features());
    printf("cpu: %s\n", gl_cpu_model());

    gl_error err;
    if (gl_kernels_init(&gen, "generic", &err) != GL_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    const char *names[16];
    const int nbk = gl_backend_list(names, 16);
    int passed = 0, failed = 0;
    int ran[16] = { 0 };
    gl_kernels tabs[16];
    /* the tunes: this CPU's first (its table is the one --bench times), then
     * every preset with each of its product widths (enum gl_tune_width) */
    gl_tune tunes[GL_YMM_COUNT * GL_TUNE_COUNT + 1];
    int n_tunes = 0;
    if (opt.tune) {
        if (gl_tune_parse(opt.tune, &tunes[n_tunes++], &err) != GL_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
    } else {
        if (gl_tune_auto(&tunes[n_tunes++], &err) != GL_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
        for (int i = 0; i < GL_TUNE_COUNT; i++)
            for (int y = 0; y < GL_YMM_COUNT; y++)
                if (tunes[0].id != i || tunes[0].ymm != y)
                    tunes[n_tunes++] = (gl_tune){ (uint8_t)i, (uint8_t)y };
    }
    {
        char tname[32];
        gl_tune_format(tunes[0], tname, sizeof tname);
        printf("tune: %s%s\n", tname, n_tunes > 1 ? " (then every other tune's own kernels)" : "");
    }
    for (int bi = 0; bi < nbk; bi++) {
        if (opt.backend && strcmp(opt.backend, names[bi]) && strcmp(names[bi], "generic"))
            continue;
        if (gl_backend_check(names[bi], &err) != GL_OK) {
            printf("%s: skipped (%s)\n", names[bi], err.msg);
            continue;
        }
        const int is_gen = !strcmp(names[bi], "generic");
        gl_kernels earlier[GL_YMM_COUNT * GL_TUNE_COUNT + 1];
        for (int ti = 0; ti < n_tunes; ti++) {
            gl_kernels *k = ti ? &earlier[ti] : &tabs[bi];
            if (gl_kernels_init_tuned(k, names[bi], tunes[ti], &err) != GL_OK) {
                printf("%s: init failed (%s)\n", names[bi], err.msg);
                failed++;
                break;
            }
            if (ti == 0)
                earlier[0] = *k;
            ran[bi] = 1;
            if (opt.backend && is_gen && strcmp(opt.backend, "generic"))
                break; /* generic only as the reference */
            if (ti > 0 && is_gen)
                break; /* generic's kernels take no tune */
            char tname[32];
            gl_tune_format(tunes[ti], tname, sizeof tname);
            /* the first tune's header is the backend's name alone (scripts
             * grep for it); the tune is printed once at the start */
            if (ti == 0)
                printf("%s:\n", names[bi]);
            int printed = ti == 0;
            for (int si = 0; si < n_slots; si++) {
                const struct slot *s = &slots[si];
                if (opt.slot && strncmp(s->name, opt.slot, strlen(opt.slot)))
                    continue;
                if (!slot_fn(k, s)) { /* e.g. a repack the backend declines */
                    if (opt.verbose && ti == 0)
                        printf("  [--]     %s (not used by this backend)\n", s->name);
                    continue;
                }
                /* a later tune: only kernels no earlier tune of this
                 * backend had (the others were checked already) */
                int seen = 0;
                for (int e = 0; e < ti && !seen; e++)
                    seen = slot_fn(k, s) == slot_fn(&earlier[e], s);
                if (seen)
                    continue;
                if (!printed) {
                    printf("%s (tune %s):\n", names[bi], tname);
                    printed = 1;
                }
                const int differs = slot_fn(k, s) != slot_fn(&gen, s);
                /* the determinism checks apply to generic too; a slot inherited
                 * unchanged from generic was already checked under generic */
                const int has_det = s->kind == K_MATMUL || s->kind == K_MATMUL_X8 ||
                                    s->kind == K_REPACK || s->kind == K_SCORES ||
                                    s->kind == K_ACCUM || s->kind == K_SCORES_G ||
                                    s->kind == K_ACCUM_G || s->kind == K_SCORES_T;
                /* a group slot must equal its backend's single-head slot, so it
                 * is checked again whenever either one differs from generic's */
                int single_differs = 0;
                if (s->kind == K_SCORES_G || s->kind == K_ACCUM_G) {
                    const struct slot one = { s->name, s->kind == K_SCORES_G ? K_SCORES : K_ACCUM,
                                              s->type, 0 };
                    single_differs = slot_fn(k, &one) != slot_fn(&gen, &one);
                }
                if (!differs && !single_differs && !(is_gen && has_det)) {
                    if (opt.verbose)
                        printf("  [--]     %s (inherited from generic)\n", s->name);
                    continue;
                }
                cur_backend = names[bi];
                cur_slot = s->name;
                group_fail = 0;
                mm_exact = mm_total = 0;
                switch (s->kind) {
                case K_QUANT: check_quantize(&gen, k, s->type); break;
                case K_DEQUANT: check_dequant(&gen, k, s->type); break;
                case K_MATMUL: check_matmul(&gen, k, s->type, differs, 0); break;
                case K_MATMUL_X8: check_matmul(&gen, k, s->type, differs, s->layout); break;
                case K_REPACK: check_repack(k, s->layout); break;
                case K_RMSNORM: check_rmsnorm(&gen, k); break;
                case K_SWIGLU: check_swiglu(&gen, k); break;
                case K_SCORES: check_scores(&gen, k, s->type, differs); break;
                case K_ACCUM: check_accum(&gen, k, s->type, differs); break;
                case K_SCORES_G: check_scores_g(k, s->type); break;
                case K_ACCUM_G: check_accum_g(k, s->type); break;
                case K_SCORES_T: check_scores_t(&gen, k, s->type); break;
                case K_LAYERNORM: check_layernorm(&gen, k); break;
                case K_GELU: check_gelu(&gen, k); break;
                case K_ADD_BIAS: check_add_bias(&gen, k); break;
                case K_SOFTCAP: check_softcap(&gen, k); break;
                case K_SOFTMAX: check_softmax(&gen, k, s->type); break;
                case K_ROUND_F16: check_round_f16(&gen, k); break;
                case K_TO_F16: check_to_f16(&gen, k); break;
                }
                if ((s->kind == K_SOFTMAX || s->kind == K_SWIGLU || s->kind == K_GELU) &&
                    !strncmp(names[bi], "avx512", 6)) {
                    gl_kernels twin;
                    if (gl_kernels_init_tuned(&twin, "avx2", tunes[ti], &err) == GL_OK)
                        check_same_as_twin(&twin, k, s->kind, s->type);
                    else
                        failf("no avx2 table to compare with: %s", err.msg);
                }
                printf("  %-9s%s%s", group_fail ? "[FAILED]" : "[OK]", s->name,
                       differs ? "" : " (determinism only)");
                if (opt.verbose && mm_total)
                    printf("  (%zu of %zu outputs bit-equal to generic)", mm_exact, mm_total);
                printf("\n");
                if (group_fail)
                    failed++;
                else
                    passed++;
            }
        }
    }
    if (opt.bench) {
        if (failed) {
            printf("bench skipped: checks failed\n");
        } else {
            for (int bi = 0; bi < nbk; bi++)
                if (ran[bi] && !strcmp(names[bi], "generic"))
                    bench_backend(names[bi], &tabs[bi], 1);
            for (int bi = 0; bi < nbk; bi++)
                if (ran[bi] && strcmp(names[bi], "generic") &&
                    (!opt.backend || !strcmp(opt.backend, names[bi])))
                    bench_backend(names[bi], &tabs[bi], 0);
        }
    }
    if (failed) {
        printf("%d of %d checks failed (seed %" PRIu64 ")\n", failed, passed + failed, opt.seed);
        return 1;
    }
    printf("%d passed, 0 failed\n", passed);
    return 0;
}
