/* AVX-512 VNNI products of IQ4_XS, Q2_K and Q3_K with Q8_K activations, included by
 * kernels.c (static functions: the native and the SIMDe builds each get
 * their own). The AVX2 row-tile template (arch/x86/avx2/rowtile_tmpl.h,
 * lanes over rows, bit-identical to generic) with zmm dot products:
 *  - a 64-byte load of quants holds 4 sub-blocks, one per 128-bit lane
 *    (low nibbles: the sub-block's first 16 elements, high: the last 16);
 *    each column's activations are rearranged to match once per tile
 *    (shuffle_i64x2), so a row needs no shuffles besides the table lookup;
 *  - u = table value + 128 in [1, 241] (unsigned), vpdpbusd against x;
 *    the accumulators start at -32 bsum_j in each of sub-block j's 4 lanes
 *    (-128 bsum_j in all: the offset, exactly), then one vpmulld by the
 *    sub-blocks' scales. Lane bounds: |start| <= 130048, plus at most
 *    8 * 241 * 127 per lane; times |scale| <= 32: far inside int32. */

/* SIMDe has no native alias of it */
#ifdef GL_USE_SIMDE
#define IX5_SHUFFLE_I64X2(a, b, imm) simde_mm512_shuffle_i64x2(a, b, imm)
#else
#define IX5_SHUFFLE_I64X2(a, b, imm) _mm512_shuffle_i64x2(a, b, imm)
#endif

typedef struct {
    __m512i lo[2], hi[2]; /* sub-blocks 4 g .. 4 g + 3, first / last 16 elements */
    __m512i off[2];       /* -32 bsum_j in each of sub-block j's lanes */
} ix5_xprep;

GL_ALWAYS_INLINE void ix5_xprep_fn(ix5_xprep *p, const block_q8_K *xb)
{
    for (int g = 0; g < 2; g++) {
        const __m512i a = _mm512_loadu_si512((const void *)(xb->qs + 128 * g));
        const __m512i b = _mm512_loadu_si512((const void *)(xb->qs + 128 * g + 64));
        p->lo[g] = IX5_SHUFFLE_I64X2(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        p->hi[g] = IX5_SHUFFLE_I64X2(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    }
    /* sub-block sums (bsums in pairs), times -32 */
    const __m256i bp =
        _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums), _mm256_set1_epi16(-32));
    const __m512i bz = _mm512_castsi256_si512(bp);
    p->off[0] = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), bz);
    p->off[1] = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7), bz);
}

/* gl_iq4nl_values + 128 */
static const uint8_t ix5_tbl_u[16] = { 1,   24,  45,  63,  79,  93,  106, 118,
                                       129, 141, 153, 166, 181, 197, 217, 241 };

GL_ALWAYS_INLINE void iq4_xs_row_512(const block_iq4_xs *wb, const ix5_xprep *xp, __m256i *p,
                                     __m256i *pm, const int nc)
{
    (void)pm;
    const __m512i tbl = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)ix5_tbl_u));
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i sc = _mm512_castsi256_si512(_mm256_cvtepi16_epi32(iq4_xs_scales(wb)));
    const __m512i s0 = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), sc);
    const __m512i s1 = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7), sc);
    __m512i ul[2], uh[2];
    for (int g = 0; g < 2; g++) {
        const __m512i v = _mm512_loadu_si512((const void *)(wb->qs + 64 * g));
        ul[g] = _mm512_shuffle_epi8(tbl, _mm512_and_si512(v, m4));
        uh[g] = _mm512_shuffle_epi8(tbl, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
    }
    for (int c = 0; c < nc; c++) {
        __m512i a0 = _mm512_dpbusd_epi32(xp[c].off[0], ul[0], xp[c].lo[0]);
        __m512i a1 = _mm512_dpbusd_epi32(xp[c].off[1], ul[1], xp[c].lo[1]);
        a0 = _mm512_dpbusd_epi32(a0, uh[0], xp[c].hi[0]);
        a1 = _mm512_dpbusd_epi32(a1, uh[1], xp[c].hi[1]);
        const __m512i r = _mm512_add_epi32(_mm512_mullo_epi32(a0, s0), _mm512_mullo_epi32(a1, s1));
        p[c] = _mm256_add_epi32(_mm512_castsi512_si256(r), _mm512_extracti64x4_epi64(r, 1));
    }
}

#define RT_NAME    matmul_iq4_xs_512
#define RT_WBLK    block_iq4_xs
#define RT_QK      QK_K
#define RT_XBLK    block_q8_K
#define RT_ACT     RT_Q8_K
#define RT_DOFF    0
#define RT_DHI     0
#define RT_MIN     0
#define RT_ROW     iq4_xs_row_512
#define RT_XPREP_T ix5_xprep
#define RT_XPREP   ix5_xprep_fn
static GL_DECL_MATMUL_FN(matmul_iq4_xs_512);
#include "arch/x86/avx2/rowtile_tmpl.h"

/* ---- Q2_K / Q3_K in zmm ---------------------------------------------
 * A 64-byte load of qs holds both halves: 128-bit lane L of (qs >> 2 s) & 3
 * is sub-block sb(s, L) = 2 s + (L & 1) + 8 (L >> 1), whose 16 activations
 * sit at 32 s + 16 (L & 1) + 128 (L >> 1): two 32-byte loads per column
 * and s, once per tile. vpdpbusd leaves each sub-block's dot in its lane's
 * 4 int32 (|.| <= 4 * 7 * 127: fits int16), so two of them pack to int16
 * and one vpmaddwd applies the 16 scales (vpermw-arranged per row). */
typedef struct {
    __m512i x[4]; /* s = 0..3: activations of sub-blocks sb(s, 0..3) */
    __m256i bsums;
} k16_xprep;

GL_ALWAYS_INLINE void k16_xprep_fn(k16_xprep *p, const block_q8_K *xb)
{
    for (int s = 0; s < 4; s++)
        p->x[s] = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(xb->qs + 32 * s))),
            _mm256_loadu_si256((const __m256i *)(xb->qs + 128 + 32 * s)), 1);
    p->bsums = _mm256_loadu_si256((const __m256i *)xb->bsums);
}

/* int16 scales of the packed pair (s0, s1) = (0, 1) / (2, 3): lane L holds
 * sb(s0, L) x 4, then sb(s1, L) x 4 */
GL_ALWAYS_INLINE __m512i k16_pair_scales(__m256i sc16, int pair)
{
    static const int16_t idx[2][32] = {
        { 0, 0, 0, 0, 2,  2,  2,  2,  1, 1, 1, 1, 3,  3,  3,  3,
          8, 8, 8, 8, 10, 10, 10, 10, 9, 9, 9, 9, 11, 11, 11, 11 },
        { 4,  4,  4,  4,  6,  6,  6,  6,  5,  5,  5,  5,  7,  7,  7,  7,
          12, 12, 12, 12, 14, 14, 14, 14, 13, 13, 13, 13, 15, 15, 15, 15 },
    };
    return _mm512_permutexvar_epi16(_mm512_loadu_si512((const void *)idx[pair]),
                                    _mm512_castsi256_si512(sc16));
}

/* vpmaddwd (SIMDe's native alias of it takes the masked form's arguments) */
GL_ALWAYS_INLINE __m512i k16_madd(__m512i a, __m512i b)
{
#ifdef GL_USE_SIMDE
    return simde_mm512_madd_epi16(a, b);
#else
    return _mm512_madd_epi16(a, b);
#endif
}

/* sum_j sc_j dot(u, x)_j in 8 lanes, u[s] the quants of sub-blocks sb(s, .) */
GL_ALWAYS_INLINE __m256i k16_dot(const __m512i *u, const k16_xprep *xp, __m512i sc01, __m512i sc23)
{
    const __m512i z = _mm512_setzero_si512();
    const __m512i d0 = _mm512_dpbusd_epi32(z, u[0], xp->x[0]);
    const __m512i d1 = _mm512_dpbusd_epi32(z, u[1], xp->x[1]);
    const __m512i d2 = _mm512_dpbusd_epi32(z, u[2], xp->x[2]);
    const __m512i d3 = _mm512_dpbusd_epi32(z, u[3], xp->x[3]);
    const __m512i r = _mm512_add_epi32(k16_madd(_mm512_packs_epi32(d0, d1), sc01),
                                       k16_madd(_mm512_packs_epi32(d2, d3), sc23));
    return _mm256_add_epi32(_mm512_castsi512_si256(r), _mm512_extracti64x4_epi64(r, 1));
}

GL_ALWAYS_INLINE void q2_K_row_512(const block_q2_K *wb, const k16_xprep *xp, __m256i *p,
                                   __m256i *pm, const int nc)
{
    const __m128i sb = _mm_loadu_si128((const __m128i *)wb->scales);
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(sb, m4));
    const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sb, 4), m4));
    const __m512i sc01 = k16_pair_scales(sc16, 0), sc23 = k16_pair_scales(sc16, 1);
    const __m512i v = _mm512_loadu_si512((const void *)wb->qs);
    const __m512i m3 = _mm512_set1_epi8(3);
    __m512i u[4];
    u[0] = _mm512_and_si512(v, m3);
    u[1] = _mm512_and_si512(_mm512_srli_epi16(v, 2), m3);
    u[2] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m3);
    u[3] = _mm512_and_si512(_mm512_srli_epi16(v, 6), m3);
    for (int c = 0; c < nc; c++) {
        p[c] = k16_dot(u, &xp[c], sc01, sc23);
        pm[c] = _mm256_madd_epi16(mn16, xp[c].bsums);
    }
}

#define RT_NAME    matmul_q2_K_512
#define RT_WBLK    block_q2_K
#define RT_QK      QK_K
#define RT_XBLK    block_q8_K
#define RT_ACT     RT_Q8_K
#define RT_DOFF    80
#define RT_DHI     0
#define RT_MIN     1
#define RT_ROW     q2_K_row_512
#define RT_XPREP_T k16_xprep
#define RT_XPREP   k16_xprep_fn
static GL_DECL_MATMUL_FN(matmul_q2_K_512);
#include "arch/x86/avx2/rowtile_tmpl.h"

/* Q3_K: u = q + 4 = low2 | hbit << 2; hmask bit 4 h + s of byte l, so the
 * high half (lanes 2, 3) reads hmask >> 4. isum -= 4 sum_j sc_j bsums_j. */
GL_ALWAYS_INLINE void q3_K_row_512(const block_q3_K *wb, const k16_xprep *xp, __m256i *p,
                                   __m256i *pm, const int nc)
{
    (void)pm;
    const __m256i sc16 = q3_K_scales(wb->scales);
    const __m512i sc01 = k16_pair_scales(sc16, 0), sc23 = k16_pair_scales(sc16, 1);
    const __m512i v = _mm512_loadu_si512((const void *)wb->qs);
    const __m256i hm = _mm256_loadu_si256((const __m256i *)wb->hmask);
    const __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(hm), _mm256_srli_epi16(hm, 4), 1);
    const __m512i m3 = _mm512_set1_epi8(3), b2 = _mm512_set1_epi8(4);
    __m512i u[4];
    u[0] = _mm512_or_si512(_mm512_and_si512(v, m3), _mm512_and_si512(_mm512_slli_epi16(h, 2), b2));
    u[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 2), m3),
                           _mm512_and_si512(_mm512_slli_epi16(h, 1), b2));
    u[2] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 4), m3), _mm512_and_si512(h, b2));
    u[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 6), m3),
                           _mm512_and_si512(_mm512_srli_epi16(h, 1), b2));
    for (int c = 0; c < nc; c++)
        p[c] = _mm256_sub_epi32(k16_dot(u, &xp[c], sc01, sc23),
                                _mm256_slli_epi32(_mm256_madd_epi16(sc16, xp[c].bsums), 2));
}

#define RT_NAME    matmul_q3_K_512
#define RT_WBLK    block_q3_K
#define RT_QK      QK_K
#define RT_XBLK    block_q8_K
#define RT_ACT     RT_Q8_K
#define RT_DOFF    106
#define RT_DHI     1
#define RT_MIN     0
#define RT_ROW     q3_K_row_512
#define RT_XPREP_T k16_xprep
#define RT_XPREP   k16_xprep_fn
static GL_DECL_MATMUL_FN(matmul_q3_K_512);
#include "arch/x86/avx2/rowtile_tmpl.h"

static void kquants_low_init_vnni(gl_kernels *k)
{
    k->matmul[GGUF_T_IQ4_XS] = matmul_iq4_xs_512;
    k->matmul[GGUF_T_Q2_K] = matmul_q2_K_512;
    k->matmul[GGUF_T_Q3_K] = matmul_q3_K_512;
}
