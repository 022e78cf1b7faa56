/* Helpers of the K-quant row-group kernels (kx8_tmpl.h), AVX2 and AVX-512. */
#ifndef GENLOOP_ARCH_X86_AVX2_KX8_H
#define GENLOOP_ARCH_X86_AVX2_KX8_H

#include "arch/x86/avx2/util.h"

/* One activation super-block, prepared once per column: its scale, the
 * sums of its 32-element sub-blocks as int16 pairs (b4[p]: sub-blocks 2 p,
 * 2 p + 1; each at most 32 * 127 in magnitude) and its 16-element sums as
 * int16 pairs (b6[p]: bsums[2 p], bsums[2 p + 1]), for madd. */
typedef struct kx_xprep {
    float dx;
    int32_t b4[4];
    int32_t b6[8];
    int32_t q6c[16]; /* -32 bsums[j]: a Q6_K sub-block's offset, as an accumulator's start */
    int32_t q3c[16]; /* -4 bsums[j]: a Q3_K sub-block's offset (u = q + 4) */
    int32_t iq4c[8]; /* -128 (bsums[2 j] + bsums[2 j + 1]): an IQ4_XS sub-block's (u = v + 128) */
} kx_xprep;

/* The lanes [*lo, *hi) of group g (rows g * rows ..) that rows [r0, r1)
 * cover: a partial group at either end of a thread's share. */
GL_ALWAYS_INLINE void kx_group_lanes(int r0, int r1, int g, int rows, int *lo, int *hi)
{
    *lo = r0 > g * rows ? r0 - g * rows : 0;
    *hi = r1 - g * rows < rows ? r1 - g * rows : rows;
}

GL_ALWAYS_INLINE void kx_col_prep(const block_q8_K *xs, int kn, kx_xprep *xp)
{
    for (int b = 0; b < kn; b++) {
        xp[b].dx = xs[b].d;
        int16_t s[8];
        for (int j = 0; j < 8; j++)
            s[j] = (int16_t)(xs[b].bsums[2 * j] + xs[b].bsums[2 * j + 1]);
        memcpy(xp[b].b4, s, sizeof s);
        memcpy(xp[b].b6, xs[b].bsums, sizeof xp[b].b6);
        for (int j = 0; j < 16; j++)
            xp[b].q6c[j] = -32 * xs[b].bsums[j];
        for (int j = 0; j < 16; j++)
            xp[b].q3c[j] = -4 * xs[b].bsums[j];
        for (int j = 0; j < 8; j++)
            xp[b].iq4c[j] = -128 * (xs[b].bsums[2 * j] + xs[b].bsums[2 * j + 1]);
    }
}

/* vpshufb control: in each 32-bit lane q, int16 halves = bytes 4 q + a and
 * 4 q + b of the source, zero-extended */
GL_ALWAYS_INLINE __m256i kx_pair16(int a, int b)
{
    const int v = (int)((unsigned)a | 0x80u << 8 | (unsigned)b << 16 | 0x80u << 24);
    const __m256i base = _mm256_set1_epi32(v);
    return _mm256_add_epi8(base, _mm256_setr_epi32(0, 0x00040004, 0x00080008, 0x000c000c, 0,
                                                   0x00040004, 0x00080008, 0x000c000c));
}

/* the same with the byte in the high half of each int16 (sign-extend with
 * srai 8) */
GL_ALWAYS_INLINE __m256i kx_pair16_hi(int a, int b)
{
    const int v = (int)(0x80u | (unsigned)a << 8 | 0x80u << 16 | (unsigned)b << 24);
    const __m256i base = _mm256_set1_epi32(v);
    return _mm256_add_epi8(base, _mm256_setr_epi32(0, 0x04000400, 0x08000800, 0x0c000c00, 0,
                                                   0x04000400, 0x08000800, 0x0c000c00));
}

/* vpshufb control: in each 32-bit lane q, byte 4 q + a zero-extended to
 * int32 (hi = 0), or placed in the top byte (hi = 1: srai 24 sign-extends) */
GL_ALWAYS_INLINE __m256i kx_byte32(int a, int hi)
{
    const int v = hi ? (int)(0x00808080u | (unsigned)a << 24) : (int)(0x80808000u | (unsigned)a);
    const int step = hi ? 0x04000000 : 0x00000004;
    return _mm256_add_epi8(_mm256_set1_epi32(v), _mm256_setr_epi32(0, step, 2 * step, 3 * step, 0,
                                                                   step, 2 * step, 3 * step));
}

/* Q6_Kx8 unit k (k < 8) of chunk t = 4 h + s: the stored quants u = q + 32
 * in [0, 63] (kpacked.c has the layout's walk; the AVX-VNNI kernels share it) */
GL_ALWAYS_INLINE __m256i kx_q6_u(const block_q6_Kx8 *blk, int h, int s, int k)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    const __m256i q =
        _mm256_loadu_si256((const __m256i *)(blk->ql + 32 * (16 * h + 8 * (s & 1) + k)));
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(blk->qh + 32 * (8 * h + k)));
    const __m256i lo =
        s < 2 ? _mm256_and_si256(q, m4) : _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    const __m256i hb = s == 0   ? _mm256_slli_epi16(qh, 4)
                       : s == 1 ? _mm256_slli_epi16(qh, 2)
                       : s == 2 ? qh
                                : _mm256_srli_epi16(qh, 2);
    return _mm256_or_si256(lo, _mm256_and_si256(hb, m30));
}

/* kx_unpack_tmpl.h's helpers over ymm lanes: kx_scales_mins8,
 * kx_q3_units8, ... (the AVX2 row groups) */
#define KL_FN(name)          name##8
#define KL_V                 __m256i
#define KL_BYTES             32
#define KL_LOAD(p)           _mm256_loadu_si256((const __m256i *)(p))
#define KL_LOAD_UNIT(p, pin) ((void)(pin), KL_LOAD(p))
#define KL_AND(a, b)         _mm256_and_si256(a, b)
#define KL_OR(a, b)          _mm256_or_si256(a, b)
#define KL_SUB8(a, b)        _mm256_sub_epi8(a, b)
#define KL_SUB32(a, b)       _mm256_sub_epi32(a, b)
#define KL_SET1_8(c)         _mm256_set1_epi8((char)(c))
#define KL_SET1_32(v)        _mm256_set1_epi32(v)
#define KL_SRLI16(v, n)      _mm256_srli_epi16(v, n)
#define KL_SLLI16(v, n)      _mm256_slli_epi16(v, n)
#define KL_SRLI32(v, n)      _mm256_srli_epi32(v, n)
#define KL_SLLI32(v, n)      _mm256_slli_epi32(v, n)
#define KL_ORAND(a, b, m)    _mm256_or_si256(a, _mm256_and_si256(b, m))
#define KL_SHUF(v, ctl)      _mm256_shuffle_epi8(v, ctl)
#define KL_DPWSSD(acc, a, b) _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
#include "arch/x86/avx2/kx_unpack_tmpl.h"

/* Q5_Kx8 unit k of pair i: the quants u <= 31 of sub-blocks 2 i (lo, low
 * nibbles of v) and 2 i + 1 (hi, high nibbles), the fifth bit from qh unit k
 * (bits 2 i and 2 i + 1 of each byte h) at bit 4 */
GL_ALWAYS_INLINE void kx_q5_lohi8(__m256i v, __m256i h, int i, __m256i *lo, __m256i *hi)
{
    const __m256i m4 = _mm256_set1_epi8(0x0f), m10 = _mm256_set1_epi8(0x10);
    *lo = _mm256_or_si256(_mm256_and_si256(v, m4), _mm256_and_si256(kx_hbit8(h, 2 * i), m10));
    *hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                          _mm256_and_si256(kx_hbit8(h, 2 * i + 1), m10));
}

/* Decode prefetch of one super-block of one stream (kx8_tmpl.h's
 * KX_ISUMS_PF): the lines at l2 (far: into L2 with prefetcht1, or with
 * prefetcht0 under a tune with far_t0, src/tune.h) and l1 (near, into L1),
 * issued in nparts slices between the block's own loads. One burst of a whole
 * 2-3 KiB super-block's prefetches at once fills the core's miss buffers
 * and the burst's tail waits for them (perf: half of a Q6_K decode's
 * samples sat on such a prefetch). */
typedef struct kx_pf {
    const char *l2, *l1;
    int far_t0; /* the far (l2) lines with prefetcht0: the tune's far_t0, a constant */
    int none;   /* no prefetch at all (a constant): the tune's hw_decode */
} kx_pf;

/* the line at offset off of the blocks pf points at (whole blocks ahead),
 * for blocks of whole lines (off a line's start): kx_pf_starts(pf, off, 1)
 * without its rounding, which each of these kernels' 36-44 prefetch pairs
 * a block would pay */
GL_ALWAYS_INLINE void kx_pf_line(const kx_pf *pf, size_t off)
{
    if (pf->none)
        return;
    gl_prefetch_in_order(pf->l2 + off, pf->far_t0);
    gl_prefetch_in_order(pf->l1 + off, 1);
}

/* The n line starts at or after offset off of the blocks pf points at, and
 * (kx_pf_nth) the i-th line start of [off, end) if there is one: for blocks
 * that are not whole lines, each line is asked for by the range holding its
 * start. */
GL_ALWAYS_INLINE void kx_pf_starts(const kx_pf *pf, size_t off, int n)
{
    if (pf->none)
        return;
    const uintptr_t a2 = ((uintptr_t)pf->l2 + off + 63) & ~(uintptr_t)63;
    const uintptr_t a1 = ((uintptr_t)pf->l1 + off + 63) & ~(uintptr_t)63;
    for (int m = 0; m < n; m++) {
        gl_prefetch_in_order((const char *)(a2 + 64 * (size_t)m), pf->far_t0);
        gl_prefetch_in_order((const char *)(a1 + 64 * (size_t)m), 1);
    }
}
GL_ALWAYS_INLINE void kx_pf_nth(const kx_pf *pf, size_t off, size_t end, int i)
{
    if (pf->none)
        return;
    const uintptr_t a2 = (((uintptr_t)pf->l2 + off + 63) & ~(uintptr_t)63) + 64 * (size_t)i;
    const uintptr_t a1 = (((uintptr_t)pf->l1 + off + 63) & ~(uintptr_t)63) + 64 * (size_t)i;
    if (a2 < (uintptr_t)pf->l2 + end)
        gl_prefetch_in_order((const char *)a2, pf->far_t0);
    if (a1 < (uintptr_t)pf->l1 + end)
        gl_prefetch_in_order((const char *)a1, 1);
}

GL_ALWAYS_INLINE void kx_pf_part(const kx_pf *pf, int part, int nparts, size_t bytes)
{
    if (pf->none)
        return;
    const size_t lines = (bytes + 63) / 64;
    for (size_t l = lines * (size_t)part / (size_t)nparts;
         l < lines * (size_t)(part + 1) / (size_t)nparts; l++) {
        gl_prefetch_in_order(pf->l2 + 64 * l, pf->far_t0);
        gl_prefetch_in_order(pf->l1 + 64 * l, 1);
    }
}

/* The weight stream of a tile body (kx8_tmpl.h KX_TILE_TPF): the lines of
 * the block far bytes ahead (and, near set, those near bytes ahead into
 * L1), asked for in nparts slices between the body's steps as decode does
 * (kx_pf); NULL: the body streams nothing (a later column tile, reading the
 * block from L1). */
typedef struct kx_tpf {
    const char *far, *near;
    int far_t0;
} kx_tpf;

GL_ALWAYS_INLINE void kx_tpf_part(const kx_tpf *pf, int part, int nparts, size_t bytes)
{
    if (!pf)
        return;
    const size_t lines = (bytes + 63) / 64;
    for (size_t l = lines * (size_t)part / (size_t)nparts;
         l < lines * (size_t)(part + 1) / (size_t)nparts; l++) {
        gl_prefetch_in_order(pf->far + 64 * l, pf->far_t0);
        if (pf->near)
            gl_prefetch_in_order(pf->near + 64 * l, 1);
    }
}

#endif
