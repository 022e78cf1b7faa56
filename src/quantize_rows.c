/* Quantizers (float rows to GGUF blocks) and their dequantizers.
 *
 * The rules are those of GGUF's reference quantizer without an importance
 * matrix, re-derived here:
 *  - Q8_0: d = amax / 127, q = round(x / d) (half away from zero).
 *  - Q4_0 / Q5_0: d = m / -8 (-16), m the element of largest magnitude with
 *    its sign, so that m itself maps to the extreme code; q = x / d + 8.5
 *    (16.5) truncated, clamped to the top code.
 *  - Q4_1 / Q5_1: d = (max - min) / 15 (31), offset min, q = (x - min) / d
 *    + 0.5 truncated.
 *  - Q2_K, Q4_K, Q5_K: per sub-block an affine fit x ~ s * q - m (m >= 0)
 *    chosen among a sweep of candidate scales by weighted error; the
 *    sub-block scales and mins are then coded on 4 (Q2_K) or 6 bits against
 *    the super-block maxima, and the quants recomputed with the coded scales.
 *  - Q3_K: per sub-block a symmetric scale refined by coordinate descent on
 *    the x^2-weighted error; 6-bit signed scales.
 *  - Q6_K: per sub-block a symmetric scale from a sweep of 19 candidates
 *    (x^2-weighted least squares); 8-bit signed scales.
 *  - IQ4_NL / IQ4_XS: nearest entries of the non-linear table, scale from a
 *    sweep of 15 candidates (x^2-weighted least squares); IQ4_XS codes its
 *    8 sub-block scales on 6 bits. */
#include "quantize_rows.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "gguf.h"
#include "half.h"
#include "quant.h"

#define TINY 1e-15f /* a group whose largest magnitude is below this is zero */

/* Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves
 * the rounded integer in the low mantissa bits. Branch-free, so the
 * compiler vectorizes the loops around it. */
static inline int rnd(float v)
{
    const float t = v + 12582912.0f;
    int32_t i;
    memcpy(&i, &t, 4);
    return (i & 0x007fffff) - 0x00400000;
}

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ---- 32-element types ------------------------------------------------ */

static void q8_0_rows(const float *x, block_q8_0 *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += QK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++)
            amax = fmaxf(amax, fabsf(x[j]));
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = gl_f32_to_f16(d);
        for (int j = 0; j < QK8_0; j++)
            y[b].qs[j] = (int8_t)roundf(x[j] * id);
    }
}

/* The element of largest magnitude, with its sign (the first on ties). */
static float signed_max(const float *x, int n)
{
    float amax = 0.0f, m = 0.0f;
    for (int j = 0; j < n; j++)
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            m = x[j];
        }
    return m;
}

/* Q4_0 (bits 4, bias 8) and Q5_0 (bits 5, bias 16): code of x[j]. */
static void symmetric_codes(const float *x, int bias, uint8_t *q, float *dout)
{
    const float d = signed_max(x, 32) / (float)-bias, id = d != 0.0f ? 1.0f / d : 0.0f;
    const int top = 2 * bias - 1;
    for (int j = 0; j < 32; j++) {
        const int v = (int8_t)(x[j] * id + ((float)bias + 0.5f));
        q[j] = (uint8_t)(v > top ? top : v);
    }
    *dout = d;
}

/* Q4_1 (levels 15) and Q5_1 (levels 31). */
static void affine_codes(const float *x, int levels, uint8_t *q, float *dout, float *mout)
{
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < 32; j++) {
        lo = x[j] < lo ? x[j] : lo;
        hi = x[j] > hi ? x[j] : hi;
    }
    const float d = (hi - lo) / (float)levels, id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; j++) {
        const int v = (int8_t)((x[j] - lo) * id + 0.5f);
        q[j] = (uint8_t)(v > levels ? levels : v);
    }
    *dout = d;
    *mout = lo;
}

static void pack_nibbles(const uint8_t *q, uint8_t *qs)
{
    for (int j = 0; j < 16; j++)
        qs[j] = (uint8_t)((q[j] & 15) | ((q[j + 16] & 15) << 4));
}

static void pack_high_bits(const uint8_t *q, uint8_t *qh)
{
    uint32_t h = 0;
    for (int j = 0; j < 32; j++)
        h |= (uint32_t)((q[j] >> 4) & 1) << j;
    for (int k = 0; k < 4; k++)
        qh[k] = (uint8_t)(h >> (8 * k));
}

static void q4_0_rows(const float *x, block_q4_0 *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += 32) {
        uint8_t q[32];
        float d;
        symmetric_codes(x, 8, q, &d);
        y[b].d = gl_f32_to_f16(d);
        pack_nibbles(q, y[b].qs);
    }
}

static void q5_0_rows(const float *x, block_q5_0 *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += 32) {
        uint8_t q[32];
        float d;
        symmetric_codes(x, 16, q, &d);
        y[b].d = gl_f32_to_f16(d);
        pack_nibbles(q, y[b].qs);
        pack_high_bits(q, y[b].qh);
    }
}

static void q4_1_rows(const float *x, block_q4_1 *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += 32) {
        uint8_t q[32];
        float d, m;
        affine_codes(x, 15, q, &d, &m);
        y[b].d = gl_f32_to_f16(d);
        y[b].m = gl_f32_to_f16(m);
        pack_nibbles(q, y[b].qs);
    }
}

static void q5_1_rows(const float *x, block_q5_1 *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += 32) {
        uint8_t q[32];
        float d, m;
        affine_codes(x, 31, q, &d, &m);
        y[b].d = gl_f32_to_f16(d);
        y[b].m = gl_f32_to_f16(m);
        pack_nibbles(q, y[b].qs);
        pack_high_bits(q, y[b].qh);
    }
}

/* ---- scale searches -------------------------------------------------- */

/* Affine fits of G groups of n values (group g at x + g n, weights w + g n):
 * x ~ scale * q + lo with q in 0..nmax and lo <= 0. Each starts from the
 * min/max fit, then tries inverse scales (nmax + rmin + rdelta * k) /
 * (max - lo), k = 0..nstep, each with the weighted least-squares scale and
 * offset for its codes, keeping the one of least weighted error (absolute
 * when abs_err, else squared). Codes go to q + g n, scales to scale[g],
 * -lo to neg_lo[g]. The groups run in lockstep, one lane each: every lane's
 * sums keep their sequential order (so the result is that of fitting the
 * groups one by one), while the lanes hide each other's add latency. */
enum { FIT_G = 16, FIT_N = 32 };

static void fit_affine(int G, int n, int nmax, const float *x, const float *w, uint8_t *q,
                       float *scale, float *neg_lo, float rmin, float rdelta, int nstep,
                       bool abs_err)
{
    float xt[FIT_N][FIT_G], wt[FIT_N][FIT_G];
    uint8_t qt[FIT_N][FIT_G], cand[FIT_N][FIT_G];
    float lo[FIT_G], hi[FIT_G], sw[FIT_G], swx[FIT_G], best[FIT_G], sc[FIT_G];
    bool flat[FIT_G];
    for (int i = 0; i < n; i++)
        for (int g = 0; g < G; g++) {
            xt[i][g] = x[g * n + i];
            wt[i][g] = w[g * n + i];
        }
    for (int g = 0; g < G; g++) {
        lo[g] = hi[g] = xt[0][g];
        sw[g] = wt[0][g];
        swx[g] = wt[0][g] * xt[0][g];
    }
    for (int i = 1; i < n; i++)
        for (int g = 0; g < G; g++) {
            lo[g] = xt[i][g] < lo[g] ? xt[i][g] : lo[g];
            hi[g] = xt[i][g] > hi[g] ? xt[i][g] : hi[g];
            sw[g] += wt[i][g];
            swx[g] += wt[i][g] * xt[i][g];
        }
    float inv[FIT_G];
    for (int g = 0; g < G; g++) {
        if (lo[g] > 0)
            lo[g] = 0;
        flat[g] = hi[g] == lo[g];
        inv[g] = flat[g] ? 0.0f : (float)nmax / (hi[g] - lo[g]);
        sc[g] = flat[g] ? 0.0f : 1.0f / inv[g];
        best[g] = 0;
    }
    for (int i = 0; i < n; i++)
        for (int g = 0; g < G; g++) {
            qt[i][g] = (uint8_t)clampi(rnd(inv[g] * (xt[i][g] - lo[g])), 0, nmax);
            const float e = sc[g] * qt[i][g] + lo[g] - xt[i][g];
            best[g] += wt[i][g] * (abs_err ? fabsf(e) : e * e);
        }
    for (int k = 0; k <= nstep; k++) {
        float sl[FIT_G] = { 0 }, sl2[FIT_G] = { 0 }, sxl[FIT_G] = { 0 }, err[FIT_G] = { 0 };
        float s[FIT_G], m[FIT_G];
        bool ok[FIT_G];
        for (int g = 0; g < G; g++)
            inv[g] = flat[g] ? 0.0f : (rmin + rdelta * (float)k + (float)nmax) / (hi[g] - lo[g]);
        for (int i = 0; i < n; i++)
            for (int g = 0; g < G; g++) {
                const int l = clampi(rnd(inv[g] * (xt[i][g] - lo[g])), 0, nmax);
                cand[i][g] = (uint8_t)l;
                sl[g] += wt[i][g] * (float)l;
                sl2[g] += wt[i][g] * (float)l * (float)l;
                sxl[g] += wt[i][g] * (float)l * xt[i][g];
            }
        for (int g = 0; g < G; g++) {
            const float det = sw[g] * sl2[g] - sl[g] * sl[g];
            ok[g] = !flat[g] && det > 0;
            s[g] = ok[g] ? (sw[g] * sxl[g] - swx[g] * sl[g]) / det : 0.0f;
            m[g] = ok[g] ? (sl2[g] * swx[g] - sl[g] * sxl[g]) / det : 0.0f;
            if (m[g] > 0) {
                m[g] = 0;
                s[g] = sxl[g] / sl2[g];
            }
        }
        for (int i = 0; i < n; i++)
            for (int g = 0; g < G; g++) {
                const float e = s[g] * cand[i][g] + m[g] - xt[i][g];
                err[g] += wt[i][g] * (abs_err ? fabsf(e) : e * e);
            }
        for (int g = 0; g < G; g++) {
            if (!ok[g] || !(err[g] < best[g]))
                continue;
            for (int i = 0; i < n; i++)
                qt[i][g] = cand[i][g];
            best[g] = err[g];
            sc[g] = s[g];
            lo[g] = m[g];
        }
    }
    for (int g = 0; g < G; g++) {
        for (int i = 0; i < n; i++)
            q[g * n + i] = flat[g] ? 0 : qt[i][g];
        scale[g] = sc[g];
        neg_lo[g] = -lo[g];
    }
}

/* Symmetric fit x ~ scale * q, q in -nmax..nmax-1, x^2-weighted: the
 * least-squares scale for codes at 19 inverse scales (nmax + 0.1 k) / -m,
 * k = -9..9, m the signed maximum. Codes come back offset by nmax. */
static float fit_symmetric_sweep(int n, int nmax, const float *x, int8_t *q)
{
    const float m = signed_max(x, n);
    if (fabsf(m) < TINY) {
        memset(q, 0, (size_t)n);
        return 0.0f;
    }
    float scale = 0, best = 0;
    bool have = false;
    for (int k = 0; k <= 18; k++) {
        /* the unshifted candidate first, then k = -9..-1, 1..9 */
        const int step = k == 0 ? 0 : k <= 9 ? k - 10 : k - 9;
        const float inv = -((float)nmax + 0.1f * (float)step) / m;
        float sxl = 0, sl2 = 0;
        for (int i = 0; i < n; i++) {
            const int l = clampi(rnd(inv * x[i]), -nmax, nmax - 1);
            const float w = x[i] * x[i];
            sxl += w * x[i] * (float)l;
            sl2 += w * (float)l * (float)l;
        }
        bool better;
        if (!have) {
            better = true;
        } else {
            better = sl2 > 0 && sxl * sxl > best * sl2;
        }
        if (better) {
            for (int i = 0; i < n; i++)
                q[i] = (int8_t)(nmax + clampi(rnd(inv * x[i]), -nmax, nmax - 1));
            scale = sl2 != 0.0f ? sxl / sl2 : 0.0f;
            best = scale * sxl;
            have = true;
        }
    }
    return scale;
}

/* Symmetric fit for Q3_K: codes at inverse scale nmax / -m, then up to five
 * passes of coordinate descent moving single codes while the x^2-weighted
 * least-squares error drops. Codes come back offset by nmax. */
static float fit_symmetric_descent(int n, int nmax, const float *x, int8_t *q)
{
    const float m = signed_max(x, n);
    if (fabsf(m) < TINY) {
        memset(q, 0, (size_t)n);
        return 0.0f;
    }
    const float inv = -(float)nmax / m;
    float sxl = 0, sl2 = 0;
    for (int i = 0; i < n; i++) {
        q[i] = (int8_t)clampi(rnd(inv * x[i]), -nmax, nmax - 1);
        const float w = x[i] * x[i];
        sxl += w * x[i] * q[i];
        sl2 += w * q[i] * q[i];
    }
    for (int pass = 0; pass < 5; pass++) {
        int moved = 0;
        for (int i = 0; i < n; i++) {
            const float w = x[i] * x[i];
            float sx = sxl - w * x[i] * q[i];
            if (sx <= 0)
                continue;
            float s2 = sl2 - w * q[i] * q[i];
            const int l = clampi(rnd(x[i] * s2 / sx), -nmax, nmax - 1);
            if (l == q[i])
                continue;
            sx += w * x[i] * l;
            s2 += w * l * l;
            if (s2 > 0 && sx * sx * sl2 > sxl * sxl * s2) {
                q[i] = (int8_t)l;
                sxl = sx;
                sl2 = s2;
                moved++;
            }
        }
        if (!moved)
            break;
    }
    for (int i = 0; i < n; i++)
        q[i] = (int8_t)(q[i] + nmax);
    return sxl / sl2;
}

/* ---- K-quants ---------------------------------------------------------- */

static void q2_k_rows(const float *x, block_q2_K *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += QK_K) {
        uint8_t q[QK_K];
        float w[QK_K], sc[16], mn[16], max_sc = 0, max_mn = 0;
        for (int l = 0; l < QK_K; l++)
            w[l] = fabsf(x[l]);
        fit_affine(16, 16, 3, x, w, q, sc, mn, -0.5f, 0.1f, 15, true);
        for (int j = 0; j < 16; j++) {
            max_sc = sc[j] > max_sc ? sc[j] : max_sc;
            max_mn = mn[j] > max_mn ? mn[j] : max_mn;
        }
        memset(y[b].scales, 0, sizeof y[b].scales);
        y[b].d = gl_f32_to_f16(max_sc > 0 ? max_sc / 15.0f : 0.0f);
        y[b].dmin = gl_f32_to_f16(max_mn > 0 ? max_mn / 15.0f : 0.0f);
        if (max_sc > 0) {
            const float inv = 15.0f / max_sc;
            for (int j = 0; j < 16; j++)
                y[b].scales[j] = (uint8_t)rnd(inv * sc[j]);
        }
        if (max_mn > 0) {
            const float inv = 15.0f / max_mn;
            for (int j = 0; j < 16; j++)
                y[b].scales[j] |= (uint8_t)(rnd(inv * mn[j]) << 4);
        }
        const float d = gl_f16_to_f32(y[b].d), dmin = gl_f16_to_f32(y[b].dmin);
        for (int j = 0; j < 16; j++) {
            const float dl = d * (float)(y[b].scales[j] & 15);
            if (dl == 0.0f)
                continue;
            const float ml = dmin * (float)(y[b].scales[j] >> 4);
            for (int l = 0; l < 16; l++)
                q[16 * j + l] = (uint8_t)clampi(rnd((x[16 * j + l] + ml) / dl), 0, 3);
        }
        for (int h = 0; h < 2; h++)
            for (int l = 0; l < 32; l++) {
                const uint8_t *s = q + 128 * h + l;
                y[b].qs[32 * h + l] = (uint8_t)(s[0] | (s[32] << 2) | (s[64] << 4) | (s[96] << 6));
            }
    }
}

/* Q3_K's 16 six-bit scales (stored + 32): low nibbles in bytes 0..7 (j and
 * j + 8 share a byte), the high 2 bits in bytes 8..11. */
static int q3_k_scale(const uint8_t *s, int j)
{
    const int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
    const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

static void q3_k_rows(const float *x, block_q3_K *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += QK_K) {
        int8_t q[QK_K];
        float sc[16], amax = 0, max_sc = 0;
        for (int j = 0; j < 16; j++) {
            sc[j] = fit_symmetric_descent(16, 4, x + 16 * j, q + 16 * j);
            if (fabsf(sc[j]) > amax) {
                amax = fabsf(sc[j]);
                max_sc = sc[j];
            }
        }
        memset(y[b].scales, 0, sizeof y[b].scales);
        if (max_sc != 0.0f) {
            const float inv = -32.0f / max_sc;
            for (int j = 0; j < 16; j++) {
                const int l = clampi(rnd(inv * sc[j]), -32, 31) + 32;
                if (j < 8)
                    y[b].scales[j] = (uint8_t)(l & 15);
                else
                    y[b].scales[j - 8] |= (uint8_t)((l & 15) << 4);
                y[b].scales[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
            }
            y[b].d = gl_f32_to_f16(1.0f / inv);
        } else {
            y[b].d = 0;
        }
        const float d = gl_f16_to_f32(y[b].d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * (float)q3_k_scale(y[b].scales, j);
            if (dl == 0.0f)
                continue;
            for (int l = 0; l < 16; l++)
                q[16 * j + l] = (int8_t)(clampi(rnd(x[16 * j + l] / dl), -4, 3) + 4);
        }
        memset(y[b].hmask, 0, sizeof y[b].hmask);
        for (int e = 0; e < QK_K; e++)
            if (q[e] > 3) {
                y[b].hmask[e % 32] |= (uint8_t)(1 << (e / 32));
                q[e] = (int8_t)(q[e] - 4);
            }
        for (int h = 0; h < 2; h++)
            for (int l = 0; l < 32; l++) {
                const int8_t *s = q + 128 * h + l;
                y[b].qs[32 * h + l] = (uint8_t)(s[0] | (s[32] << 2) | (s[64] << 4) | (s[96] << 6));
            }
    }
}

/* Q4_K / Q5_K share the scale/min coding of 8 sub-blocks of 32. */
static void k4_fit(const float *x, int nmax, float rmin, int nstep, uint8_t *q, uint8_t *scales,
                   uint16_t *dh, uint16_t *dminh)
{
    float w[QK_K], sc[8], mn[8], max_sc = 0, max_mn = 0;
    for (int j = 0; j < 8; j++) {
        const float *xb = x + 32 * j;
        float s2 = 0;
        for (int l = 0; l < 32; l++)
            s2 += xb[l] * xb[l];
        const float av = sqrtf(s2 / 32.0f);
        for (int l = 0; l < 32; l++)
            w[32 * j + l] = av + fabsf(xb[l]);
    }
    fit_affine(8, 32, nmax, x, w, q, sc, mn, rmin, 0.1f, nstep, false);
    for (int j = 0; j < 8; j++) {
        max_sc = sc[j] > max_sc ? sc[j] : max_sc;
        max_mn = mn[j] > max_mn ? mn[j] : max_mn;
    }
    const float inv_sc = max_sc > 0 ? 63.0f / max_sc : 0.0f;
    const float inv_mn = max_mn > 0 ? 63.0f / max_mn : 0.0f;
    memset(scales, 0, K_SCALE_SIZE);
    for (int j = 0; j < 8; j++) {
        const int ls = clampi((uint8_t)rnd(inv_sc * sc[j]), 0, 63);
        const int lm = clampi((uint8_t)rnd(inv_mn * mn[j]), 0, 63);
        if (j < 4) {
            scales[j] = (uint8_t)ls;
            scales[j + 4] = (uint8_t)lm;
        } else {
            scales[j + 4] = (uint8_t)((ls & 15) | ((lm & 15) << 4));
            scales[j - 4] |= (uint8_t)((ls >> 4) << 6);
            scales[j] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    *dh = gl_f32_to_f16(max_sc / 63.0f);
    *dminh = gl_f32_to_f16(max_mn / 63.0f);
    const float d = gl_f16_to_f32(*dh), dmin = gl_f16_to_f32(*dminh);
    for (int j = 0; j < 8; j++) {
        uint8_t s, m;
        gl_k4_scale_min(j, scales, &s, &m);
        const float dl = d * (float)s;
        if (dl == 0.0f)
            continue;
        const float ml = dmin * (float)m;
        for (int l = 0; l < 32; l++)
            q[32 * j + l] = (uint8_t)clampi(rnd((x[32 * j + l] + ml) / dl), 0, nmax);
    }
}

static void q4_k_rows(const float *x, block_q4_K *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += QK_K) {
        uint8_t q[QK_K];
        uint16_t d, dmin;
        k4_fit(x, 15, -1.0f, 20, q, y[b].scales, &d, &dmin);
        y[b].d = d;
        y[b].dmin = dmin;
        for (int i = 0; i < 4; i++)
            for (int l = 0; l < 32; l++)
                y[b].qs[32 * i + l] = (uint8_t)(q[64 * i + l] | (q[64 * i + 32 + l] << 4));
    }
}

static void q5_k_rows(const float *x, block_q5_K *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += QK_K) {
        uint8_t q[QK_K];
        uint16_t d, dmin;
        k4_fit(x, 31, -0.5f, 15, q, y[b].scales, &d, &dmin);
        y[b].d = d;
        y[b].dmin = dmin;
        memset(y[b].qh, 0, sizeof y[b].qh);
        for (int i = 0; i < 4; i++)
            for (int l = 0; l < 32; l++) {
                const int a = q[64 * i + l], c = q[64 * i + 32 + l];
                y[b].qs[32 * i + l] = (uint8_t)((a & 15) | ((c & 15) << 4));
                y[b].qh[l] |= (uint8_t)(((a >> 4) << (2 * i)) | ((c >> 4) << (2 * i + 1)));
            }
    }
}

static void q6_k_rows(const float *x, block_q6_K *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += QK_K) {
        int8_t q[QK_K];
        float sc[16], amax = 0, max_sc = 0;
        for (int j = 0; j < 16; j++) {
            sc[j] = fit_symmetric_sweep(16, 32, x + 16 * j, q + 16 * j);
            if (fabsf(sc[j]) > amax) {
                amax = fabsf(sc[j]);
                max_sc = sc[j];
            }
        }
        if (amax < TINY) {
            memset(&y[b], 0, sizeof y[b]);
            continue;
        }
        const float inv = -128.0f / max_sc;
        y[b].d = gl_f32_to_f16(1.0f / inv);
        for (int j = 0; j < 16; j++) {
            const int v = rnd(inv * sc[j]);
            y[b].scales[j] = (int8_t)(v > 127 ? 127 : v);
        }
        const float d = gl_f16_to_f32(y[b].d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * (float)y[b].scales[j];
            if (dl == 0.0f)
                continue;
            for (int l = 0; l < 16; l++)
                q[16 * j + l] = (int8_t)(clampi(rnd(x[16 * j + l] / dl), -32, 31) + 32);
        }
        for (int h = 0; h < 2; h++)
            for (int l = 0; l < 32; l++) {
                const int8_t *s = q + 128 * h + l;
                y[b].ql[64 * h + l] = (uint8_t)((s[0] & 15) | ((s[64] & 15) << 4));
                y[b].ql[64 * h + 32 + l] = (uint8_t)((s[32] & 15) | ((s[96] & 15) << 4));
                y[b].qh[32 * h + l] = (uint8_t)((s[0] >> 4) | ((s[32] >> 4) << 2) |
                                                ((s[64] >> 4) << 4) | ((s[96] >> 4) << 6));
            }
    }
}

/* ---- IQ4 ------------------------------------------------------------- */

/* Index of the IQ4 table entry nearest to v (ties go to the upper entry).
 * h counts the entries <= v, so t[h - 1] <= v < t[h] between the ends;
 * clamping h to 1..15 makes the final comparison also give 0 below the
 * table and 15 above it. Branch-free, the same answer as a binary search. */
static inline int iq4_index(float v)
{
    const int8_t *t = gl_iq4nl_values;
    int h = 0;
    for (int k = 0; k < 16; k++)
        h += (float)t[k] <= v;
    h = h < 1 ? 1 : h > 15 ? 15 : h;
    return v - t[h - 1] < t[h] - v ? h - 1 : h;
}

/* Scales of G 32-element groups (group g at x + 32 g) against the IQ4
 * table: for each, the x^2-weighted least-squares scale for the codes at 16
 * inverse scales (start max / 127, then (k - 127) / m, k = -7..7, m the
 * signed maximum), keeping the best; 0 for zero groups. The groups run in
 * lockstep as in fit_affine, each with its own sequential sums. */
static void iq4_group_scales(int G, const float *x, float *d)
{
    const int8_t *t = gl_iq4nl_values;
    float xt[32][FIT_G], mx[FIT_G], inv[FIT_G], sqx[FIT_G], sq2[FIT_G], best[FIT_G] = { 0 };
    bool zero[FIT_G];
    for (int i = 0; i < 32; i++)
        for (int g = 0; g < G; g++)
            xt[i][g] = x[32 * g + i];
    for (int g = 0; g < G; g++) {
        mx[g] = signed_max(x + 32 * g, 32);
        zero[g] = fabsf(mx[g]) < TINY;
        inv[g] = zero[g] ? 0.0f : 1.0f / (mx[g] / 127.0f);
        sqx[g] = sq2[g] = 0;
    }
    for (int k = -8; k <= 7; k++) { /* -8: the starting inverse scale */
        if (k > -8)
            for (int g = 0; g < G; g++) {
                inv[g] = zero[g] ? 0.0f : (float)(k + t[0]) / mx[g];
                sqx[g] = sq2[g] = 0;
            }
        for (int i = 0; i < 32; i++)
            for (int g = 0; g < G; g++) {
                const float v = (float)t[iq4_index(inv[g] * xt[i][g])], w = xt[i][g] * xt[i][g];
                sqx[g] += w * v * xt[i][g];
                sq2[g] += w * v * v;
            }
        for (int g = 0; g < G; g++) {
            if (zero[g])
                continue;
            if (k == -8) {
                d[g] = sqx[g] / sq2[g];
                best[g] = d[g] * sqx[g];
            } else if (sq2[g] > 0 && sqx[g] * sqx[g] > best[g] * sq2[g]) {
                d[g] = sqx[g] / sq2[g];
                best[g] = d[g] * sqx[g];
            }
        }
    }
    for (int g = 0; g < G; g++)
        if (zero[g])
            d[g] = 0.0f;
}

static void iq4_pack(const float *x, float inv, uint8_t *qs)
{
    uint8_t q[32];
    for (int j = 0; j < 32; j++)
        q[j] = (uint8_t)iq4_index(inv * x[j]);
    pack_nibbles(q, qs);
}

static void iq4_nl_rows(const float *x, block_iq4_nl *y, int64_t nb)
{
    for (int64_t b0 = 0; b0 < nb; b0 += 8) {
        const int G = nb - b0 < 8 ? (int)(nb - b0) : 8;
        float d[8];
        iq4_group_scales(G, x + 32 * b0, d);
        for (int g = 0; g < G; g++) {
            y[b0 + g].d = gl_f32_to_f16(d[g]);
            iq4_pack(x + 32 * (b0 + g), d[g] != 0.0f ? 1.0f / d[g] : 0.0f, y[b0 + g].qs);
        }
    }
}

static void iq4_xs_rows(const float *x, block_iq4_xs *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += QK_K) {
        float sc[8], amax = 0, max_sc = 0;
        iq4_group_scales(8, x, sc);
        for (int j = 0; j < 8; j++) {
            if (fabsf(sc[j]) > amax) {
                amax = fabsf(sc[j]);
                max_sc = sc[j];
            }
        }
        const float d = -max_sc / 32.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = gl_f32_to_f16(d);
        y[b].scales_h = 0;
        memset(y[b].scales_l, 0, sizeof y[b].scales_l);
        for (int j = 0; j < 8; j++) {
            const int l = clampi(rnd(id * sc[j]), -32, 31);
            const float dl = d * (float)l;
            iq4_pack(x + 32 * j, dl != 0.0f ? 1.0f / dl : 0.0f, y[b].qs + 16 * j);
            const int c = l + 32;
            y[b].scales_l[j / 2] |= (uint8_t)((c & 15) << (4 * (j % 2)));
            y[b].scales_h |= (uint16_t)((c >> 4) << (2 * j));
        }
    }
}

/* ---- dequantizers ----------------------------------------------------- */

static void unpack_nibbles(const uint8_t *qs, int *q)
{
    for (int j = 0; j < 16; j++) {
        q[j] = qs[j] & 15;
        q[j + 16] = qs[j] >> 4;
    }
}

static void add_high_bits(const uint8_t *qh, int *q)
{
    const uint32_t h =
        (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
    for (int j = 0; j < 32; j++)
        q[j] |= (int)((h >> j) & 1) << 4;
}

static void dequant_blocks(uint32_t type, const uint8_t *src, float *y, int64_t nb)
{
    const size_t bs = gguf_type_block_bytes(type);
    for (int64_t b = 0; b < nb; b++, src += bs) {
        int q[QK_K];
        switch (type) {
        case GGUF_T_Q8_0: {
            const block_q8_0 *p = (const block_q8_0 *)src;
            const float d = gl_f16_to_f32(p->d);
            for (int j = 0; j < 32; j++)
                *y++ = d * (float)p->qs[j];
            break;
        }
        case GGUF_T_Q4_0:
        case GGUF_T_IQ4_NL: {
            const block_q4_0 *p = (const block_q4_0 *)src;
            const float d = gl_f16_to_f32(p->d);
            unpack_nibbles(p->qs, q);
            for (int j = 0; j < 32; j++)
                *y++ = d * (float)(type == GGUF_T_Q4_0 ? q[j] - 8 : gl_iq4nl_values[q[j]]);
            break;
        }
        case GGUF_T_Q4_1: {
            const block_q4_1 *p = (const block_q4_1 *)src;
            const float d = gl_f16_to_f32(p->d), m = gl_f16_to_f32(p->m);
            unpack_nibbles(p->qs, q);
            for (int j = 0; j < 32; j++)
                *y++ = d * (float)q[j] + m;
            break;
        }
        case GGUF_T_Q5_0: {
            const block_q5_0 *p = (const block_q5_0 *)src;
            const float d = gl_f16_to_f32(p->d);
            unpack_nibbles(p->qs, q);
            add_high_bits(p->qh, q);
            for (int j = 0; j < 32; j++)
                *y++ = d * (float)(q[j] - 16);
            break;
        }
        case GGUF_T_Q5_1: {
            const block_q5_1 *p = (const block_q5_1 *)src;
            const float d = gl_f16_to_f32(p->d), m = gl_f16_to_f32(p->m);
            unpack_nibbles(p->qs, q);
            add_high_bits(p->qh, q);
            for (int j = 0; j < 32; j++)
                *y++ = d * (float)q[j] + m;
            break;
        }
        case GGUF_T_Q2_K: {
            const block_q2_K *p = (const block_q2_K *)src;
            const float d = gl_f16_to_f32(p->d), dmin = gl_f16_to_f32(p->dmin);
            for (int e = 0; e < QK_K; e++) {
                const int h = e / 128, s = (e % 128) / 32, l = e % 32;
                const int v = (p->qs[32 * h + l] >> (2 * s)) & 3;
                const uint8_t sc = p->scales[e / 16];
                *y++ = d * (float)(sc & 15) * (float)v - dmin * (float)(sc >> 4);
            }
            break;
        }
        case GGUF_T_Q3_K: {
            const block_q3_K *p = (const block_q3_K *)src;
            const float d = gl_f16_to_f32(p->d);
            for (int e = 0; e < QK_K; e++) {
                const int h = e / 128, s = (e % 128) / 32, l = e % 32;
                int v = (p->qs[32 * h + l] >> (2 * s)) & 3;
                v -= (p->hmask[l] >> (4 * h + s)) & 1 ? 0 : 4;
                *y++ = d * (float)q3_k_scale(p->scales, e / 16) * (float)v;
            }
            break;
        }
        case GGUF_T_Q4_K:
        case GGUF_T_Q5_K: {
            const bool five = type == GGUF_T_Q5_K;
            const block_q4_K *p4 = (const block_q4_K *)src;
            const block_q5_K *p5 = (const block_q5_K *)src;
            const uint8_t *scales = five ? p5->scales : p4->scales;
            const uint8_t *qs = five ? p5->qs : p4->qs;
            const float d = gl_f16_to_f32(five ? p5->d : p4->d);
            const float dmin = gl_f16_to_f32(five ? p5->dmin : p4->dmin);
            for (int j = 0; j < 8; j++) {
                uint8_t sc, m;
                gl_k4_scale_min(j, scales, &sc, &m);
                const float dl = d * (float)sc, ml = dmin * (float)m;
                for (int l = 0; l < 32; l++) {
                    int v = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 15;
                    if (five)
                        v |= ((p5->qh[l] >> j) & 1) << 4;
                    *y++ = dl * (float)v - ml;
                }
            }
            break;
        }
        case GGUF_T_Q6_K: {
            const block_q6_K *p = (const block_q6_K *)src;
            const float d = gl_f16_to_f32(p->d);
            for (int e = 0; e < QK_K; e++) {
                const int h = e / 128, s = (e % 128) / 32, l = e % 32;
                const int lo = (p->ql[64 * h + l + 32 * (s & 1)] >> (4 * (s >> 1))) & 15;
                const int hi = (p->qh[32 * h + l] >> (2 * s)) & 3;
                *y++ = d * (float)p->scales[e / 16] * (float)((lo | (hi << 4)) - 32);
            }
            break;
        }
        case GGUF_T_IQ4_XS: {
            const block_iq4_xs *p = (const block_iq4_xs *)src;
            const float d = gl_f16_to_f32(p->d);
            for (int j = 0; j < 8; j++) {
                const int ls = ((p->scales_l[j / 2] >> (4 * (j % 2))) & 15) |
                               (((p->scales_h >> (2 * j)) & 3) << 4);
                const float dl = d * (float)(ls - 32);
                unpack_nibbles(p->qs + 16 * j, q);
                for (int l = 0; l < 32; l++)
                    *y++ = dl * (float)gl_iq4nl_values[q[l]];
            }
            break;
        }
        default: break;
        }
    }
}

/* ---- dispatch ---------------------------------------------------------- */

bool gl_quant_can_write(uint32_t type)
{
    switch (type) {
    case GGUF_T_F32:
    case GGUF_T_F16:
    case GGUF_T_BF16:
    case GGUF_T_Q8_0:
    case GGUF_T_Q4_0:
    case GGUF_T_Q4_1:
    case GGUF_T_Q5_0:
    case GGUF_T_Q5_1:
    case GGUF_T_Q2_K:
    case GGUF_T_Q3_K:
    case GGUF_T_Q4_K:
    case GGUF_T_Q5_K:
    case GGUF_T_Q6_K:
    case GGUF_T_IQ4_NL:
    case GGUF_T_IQ4_XS: return true;
    default: return false;
    }
}

bool gl_quant_can_read(uint32_t type)
{
    return gl_quant_can_write(type);
}

int64_t gl_quant_block_elems(uint32_t type)
{
    return gl_quant_can_write(type) ? (int64_t)gguf_type_block_elems(type) : 0;
}

size_t gl_quant_row_bytes(uint32_t type, int64_t n)
{
    const int64_t be = gl_quant_block_elems(type);
    if (be <= 0 || n % be)
        return 0;
    return (size_t)(n / be) * gguf_type_block_bytes(type);
}

bool gl_quantize_row(uint32_t type, const float *x, void *dst, int64_t n)
{
    const int64_t be = gl_quant_block_elems(type);
    if (be <= 0 || n < 0 || n % be)
        return false;
    const int64_t nb = n / be;
    switch (type) {
    case GGUF_T_F32: memcpy(dst, x, (size_t)n * 4); break;
    case GGUF_T_F16:
        for (int64_t i = 0; i < n; i++) {
            const uint16_t h = gl_f32_to_f16(x[i]);
            memcpy((uint8_t *)dst + 2 * i, &h, 2);
        }
        break;
    case GGUF_T_BF16:
        for (int64_t i = 0; i < n; i++) {
            const uint16_t h = gl_f32_to_bf16(x[i]);
            memcpy((uint8_t *)dst + 2 * i, &h, 2);
        }
        break;
    case GGUF_T_Q8_0: q8_0_rows(x, dst, nb); break;
    case GGUF_T_Q4_0: q4_0_rows(x, dst, nb); break;
    case GGUF_T_Q4_1: q4_1_rows(x, dst, nb); break;
    case GGUF_T_Q5_0: q5_0_rows(x, dst, nb); break;
    case GGUF_T_Q5_1: q5_1_rows(x, dst, nb); break;
    case GGUF_T_Q2_K: q2_k_rows(x, dst, nb); break;
    case GGUF_T_Q3_K: q3_k_rows(x, dst, nb); break;
    case GGUF_T_Q4_K: q4_k_rows(x, dst, nb); break;
    case GGUF_T_Q5_K: q5_k_rows(x, dst, nb); break;
    case GGUF_T_Q6_K: q6_k_rows(x, dst, nb); break;
    case GGUF_T_IQ4_NL: iq4_nl_rows(x, dst, nb); break;
    case GGUF_T_IQ4_XS: iq4_xs_rows(x, dst, nb); break;
    default: return false;
    }
    return true;
}

bool gl_dequantize_row(uint32_t type, const void *src, float *y, int64_t n)
{
    const int64_t be = gl_quant_block_elems(type);
    if (be <= 0 || n < 0 || n % be)
        return false;
    const uint8_t *s = src;
    switch (type) {
    case GGUF_T_F32: memcpy(y, src, (size_t)n * 4); break;
    case GGUF_T_F16:
    case GGUF_T_BF16:
        for (int64_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            y[i] = type == GGUF_T_F16 ? gl_f16_to_f32(h) : gl_bf16_to_f32(h);
        }
        break;
    default: dequant_blocks(type, s, y, n / be); break;
    }
    return true;
}

typedef struct rows_job {
    uint32_t type;
    const float *x;
    uint8_t *dst;
    int64_t r0, r1, n;
    size_t row_bytes;
} rows_job;

static void *rows_worker(void *arg)
{
    const rows_job *j = arg;
    for (int64_t r = j->r0; r < j->r1; r++)
        gl_quantize_row(j->type, j->x + r * j->n, j->dst + (size_t)r * j->row_bytes, j->n);
    return NULL;
}

bool gl_quantize_rows(uint32_t type, const float *x, void *dst, int64_t nrows, int64_t n,
                      int nthreads)
{
    const size_t rb = gl_quant_row_bytes(type, n);
    if (!rb || nrows < 0)
        return false;
    enum { MAX_THREADS = 256 };
    int nt = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
    if (nt > nrows)
        nt = nrows > 0 ? (int)nrows : 1;
    rows_job jobs[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    bool started[MAX_THREADS] = { false };
    for (int t = 0; t < nt; t++) {
        jobs[t] = (rows_job){ type, x, dst, nrows * t / nt, nrows * (t + 1) / nt, n, rb };
        if (t > 0)
            started[t] = pthread_create(&tids[t], NULL, rows_worker, &jobs[t]) == 0;
    }
    rows_worker(&jobs[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        else
            rows_worker(&jobs[t]); /* no thread: do its rows here */
    }
    return true;
}
