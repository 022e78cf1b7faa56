/* AVX-512 VNNI product of IQ4_XS with Q8_K activations, included by
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

typedef struct {
    __m512i lo[2], hi[2]; /* sub-blocks 4 g .. 4 g + 3, first / last 16 elements */
    __m512i off[2];       /* -32 bsum_j in each of sub-block j's lanes */
} ix5_xprep;

GL_ALWAYS_INLINE void ix5_xprep_fn(ix5_xprep *p, const block_q8_K *xb)
{
    for (int g = 0; g < 2; g++) {
        const __m512i a = _mm512_loadu_si512((const void *)(xb->qs + 128 * g));
        const __m512i b = _mm512_loadu_si512((const void *)(xb->qs + 128 * g + 64));
        p->lo[g] = _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        p->hi[g] = _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    }
    /* sub-block sums (bsums in pairs), times -32 */
    const __m256i bp = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums),
                                         _mm256_set1_epi16(-32));
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
    const __m512i tbl =
        _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)ix5_tbl_u));
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

static void kquants_low_init_vnni(gl_kernels *k)
{
    k->matmul[GGUF_T_IQ4_XS] = matmul_iq4_xs_512;
}
