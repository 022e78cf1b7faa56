/* AVX-512 (VL + VNNI) K-quant products, included by kernels.c (static
 * functions, one copy per build: native and SIMDe).
 *
 * Plain rows: arch/x86/avx2/kquant_ops.h with the scale step as one
 * vpdpwssd (acc + madd(p, s), exact) in place of madd + add.
 *
 * Row groups (the x16 layouts of Q2_K .. Q6_K and IQ4_XS; arch/x86/avx2/
 * kx8_tmpl.h, one zmm lane per row): each sub-block's quants go through a
 * vpdpbusd chain into its own int32 lanes (u unsigned x activation int8,
 * no saturation), then one vpmulld by the row's scale; all exact, so the
 * template's equality with generic holds. */
#include "arch/x86/avx2/kx8.h"

static GL_DECL_MATMUL_FN(matmul_q4_K_vnni);
static GL_DECL_MATMUL_FN(matmul_q5_K_vnni);
static GL_DECL_MATMUL_FN(matmul_q6_K_vnni);
#define KQ_SFX                 vnni
#define KQ_NAME_Q4K            matmul_q4_K_vnni
#define KQ_NAME_Q5K            matmul_q5_K_vnni
#define KQ_NAME_Q6K            matmul_q6_K_vnni
#define KQ_MADD_ACC(acc, p, s) _mm256_dpwssd_epi32(acc, p, s)
#include "arch/x86/avx2/kquant_ops.h"

/* Four columns per tile: at eight, a tile's chains,
 * sums and accumulators (40 zmm for Q4_K, more for Q6_K) spilled to the
 * stack in every super-block, and unpacking the weights twice costs less
 * than that (bench/RESULTS.md 2026-12-02, second sitting: TinyLlama batch-8
 * decode 1 thread Q4_K_M +12 %, Q6_K +20 %, prefill unchanged). */
#ifndef GL_KX16_C
#define GL_KX16_C 4
#endif
#define KX_C GL_KX16_C

/* a kx8.h vpshufb control for zmm (the controls repeat per 128-bit lane) */
GL_ALWAYS_INLINE __m512i kx512_ctl(__m256i ctl)
{
    return _mm512_broadcast_i32x4(_mm256_castsi256_si128(ctl));
}

/* kx_unpack_tmpl.h's helpers over zmm lanes: kx_scales_mins16,
 * kx_q3_units16, ... */
#define KL_FN(name)          name##16
#define KL_V                 __m512i
#define KL_BYTES             64
#define KL_LOAD(p)           _mm512_loadu_si512((const void *)(p))
#define KL_LOAD_UNIT(p, pin) gl512_loadu_unit(p, pin)
#define KL_AND(a, b)         _mm512_and_si512(a, b)
#define KL_OR(a, b)          _mm512_or_si512(a, b)
#define KL_SUB8(a, b)        _mm512_sub_epi8(a, b)
#define KL_SUB32(a, b)       _mm512_sub_epi32(a, b)
#define KL_SET1_8(c)         _mm512_set1_epi8((char)(c))
#define KL_SET1_32(v)        _mm512_set1_epi32(v)
#define KL_SRLI16(v, n)      _mm512_srli_epi16(v, n)
#define KL_SLLI16(v, n)      _mm512_slli_epi16(v, n)
#define KL_SRLI32(v, n)      _mm512_srli_epi32(v, n)
#define KL_SLLI32(v, n)      _mm512_slli_epi32(v, n)
#define KL_ORAND(a, b, m)    _mm512_ternarylogic_epi32(a, b, m, 0xf8) /* a | (b & m) */
#define KL_SHUF(v, ctl)      _mm512_shuffle_epi8(v, kx512_ctl(ctl))
#define KL_DPWSSD(acc, a, b) _mm512_dpwssd_epi32(acc, a, b)
#include "arch/x86/avx2/kx_unpack_tmpl.h"

/* a sub-block pair's contribution, al * its scale (sub-block 2 i) + ah *
 * its scale (2 i + 1), per lane; exact */
GL_ALWAYS_INLINE __m512i kx16_scaled_pair(const __m512i sc[2], int i, __m512i al, __m512i ah)
{
    const __m512i s_lo = _mm512_shuffle_epi8(sc[i / 2], kx512_ctl(kx_byte32(2 * (i % 2), 0)));
    const __m512i s_hi = _mm512_shuffle_epi8(sc[i / 2], kx512_ctl(kx_byte32(2 * (i % 2) + 1, 0)));
    return _mm512_add_epi32(_mm512_mullo_epi32(al, s_lo), _mm512_mullo_epi32(ah, s_hi));
}

/* Two sub-blocks' chains, each inside int16, as the low (a) and high (b)
 * int16 of every lane: vpdpwssd then takes both times their scales in one
 * instruction, exactly (kx16_sub16_tmpl.h KS_SCALE2). */
GL_ALWAYS_INLINE __m512i kx16_pack16(__m512i a, __m512i b)
{
    return _mm512_mask_blend_epi16((__mmask32)0xaaaaaaaau, a, _mm512_slli_epi32(b, 16));
}

/* ---- Q4_Kx16 (layout: src/quant.h), one zmm lane per row ----
 * The low nibbles u, the high ones in place (v & 0xf0 = 16 u: a
 * chain sums at most 32 * 240 * 128) and their sum shifted back once */
GL_ALWAYS_INLINE void kx16_q4_units(const block_q4_Kx16 *blk, int i, int k, __m512i *lo,
                                    __m512i *hi, const int pin)
{
    const __m512i v = gl512_loadu_unit(blk->qs + 64 * (8 * i + k), pin);
    *lo = _mm512_and_si512(v, _mm512_set1_epi8(0x0f));
    *hi = _mm512_and_si512(v, _mm512_set1_epi8((char)0xf0));
}

#define KP_ISUMS                         kx16_isums_q4K_vnni
#define KP_ISUMS1                        kx16_isums1_q4K_vnni
#define KP_WBLK                          block_q4_Kx16
#define KP_PREP(blk, xp, sc, imin, nc)   kx_scales_mins16((blk)->scales, xp, sc, imin, nc)
#define KP_START(xp, j)                  _mm512_setzero_si512()
#define KP_UNITS(blk, i, k, lo, hi, pin) kx16_q4_units(blk, i, k, &(lo), &(hi), pin)
#define KP_PAIR(sc, i, al, ah)           kx16_scaled_pair(sc, i, al, gl512_srai4_epi32(ah))
#define KP_PF_HEAD                       offsetof(block_q4_Kx16, qs)
#define KP_PF_UNIT(i, k)                 (offsetof(block_q4_Kx16, qs) + 64 * (8 * (i) + (k)))
#include "arch/x86/avx512/kx16_sub8_tmpl.h"

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME      matmul_q4_K_x16_vnni
#define KX_PF_BLOCKS 1
#define KX_WBLK      block_q4_Kx16
#define KX_ISUMS     kx16_isums_q4K_vnni
#define KX_ISUMS_PF  kx16_isums1_q4K_vnni
#define KX_HAS_MIN   1
#define KX_LINK      static
#include "arch/x86/avx2/kx8_tmpl.h"

/* ---- Q5_Kx16: Q4_Kx16 plus the fifth bit (qh unit k, bit 2 i for the low
 * nibbles of pair i, 2 i + 1 for the high ones), moved to bit 4 with 16-bit
 * shifts of at most 4 (nothing from the neighbouring byte reaches bit 4).
 * Quants u <= 31: dpbusd sums at most 32 * 31 * 128 per sub-block. */
GL_ALWAYS_INLINE void kx16_q5_units(const block_q5_Kx16 *blk, int i, int k, __m512i *lo,
                                    __m512i *hi, const int pin)
{
    const __m512i m4 = _mm512_set1_epi8(0x0f), m10 = _mm512_set1_epi8(0x10);
    const __m512i v = gl512_loadu_unit(blk->qs + 64 * (8 * i + k), pin);
    const __m512i h = gl512_loadu_unit(blk->qh + 64 * k, pin);
    *lo = _mm512_or_si512(_mm512_and_si512(v, m4), _mm512_and_si512(kx_hbit16(h, 2 * i), m10));
    *hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 4), m4),
                          _mm512_and_si512(kx_hbit16(h, 2 * i + 1), m10));
}

#define KP_ISUMS                         kx16_isums_q5K_vnni
#define KP_ISUMS1                        kx16_isums1_q5K_vnni
#define KP_WBLK                          block_q5_Kx16
#define KP_PREP(blk, xp, sc, imin, nc)   kx_scales_mins16((blk)->scales, xp, sc, imin, nc)
#define KP_START(xp, j)                  _mm512_setzero_si512()
#define KP_UNITS(blk, i, k, lo, hi, pin) kx16_q5_units(blk, i, k, &(lo), &(hi), pin)
#define KP_PAIR(sc, i, al, ah)           kx16_scaled_pair(sc, i, al, ah)
#define KP_PF_HEAD                       offsetof(block_q5_Kx16, qh)
#define KP_PF_QH                         offsetof(block_q5_Kx16, qh)
#define KP_PF_UNIT(i, k)                 (offsetof(block_q5_Kx16, qs) + 64 * (8 * (i) + (k)))
#include "arch/x86/avx512/kx16_sub8_tmpl.h"

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME      matmul_q5_K_x16_vnni
#define KX_PF_BLOCKS 1
#define KX_WBLK      block_q5_Kx16
#define KX_ISUMS     kx16_isums_q5K_vnni
#define KX_ISUMS_PF  kx16_isums1_q5K_vnni
#define KX_HAS_MIN   1
#define KX_LINK      static
#include "arch/x86/avx2/kx8_tmpl.h"

/* the scales' state of the sub16 template (kx16_sub16_tmpl.h) */
typedef struct {
    __m512i v[4];
} kx16_sc4;

/* ---- Q6_Kx16 (layout: src/quant.h), one zmm lane per row ----
 * A group (h, k) is three loads v0..v2: u_s = v_s & 0x3f for s < 3, u_3 from
 * bits 6-7 of all three. Sub-block j = 8 h + 2 s + half is one dpbusd chain
 * over k = 4 half .. 4 half + 3, started at -32 bsums[j] (the offset of
 * u = q + 32, so no correction pass), times its sign-extended scale: all
 * exact, the same integer isum as generic's. Wide batches unpack each
 * super-block once for all their column tiles (KS_UNPACK; Q3_Kx16 too):
 * a tile then loads a unit instead of three loads and nine operations per
 * four units. Q2_Kx16's units are two operations each: unpacking them to
 * memory was slower (tile GMAC/s 214 -> 195, Zen 5), so it does not.
 * The unpacked tiles take 8 columns (KX_CU; kx16_sub16_tmpl.h), so a unit
 * loaded from ub serves 8 columns, not 4: the tile is bound by its loads
 * (units, activation broadcasts, chain starts). bench/ab_builds.sh, Zen 5,
 * 2048 x 5632, 20-25 alternated rounds, median speed-ups over two runs:
 * Q6_Kx16 32 columns 1.04-1.05x, 128 columns 1.06-1.11x; Q3_Kx16
 * 1.06-1.08x, 1.07-1.13x (6 columns a tile: 1.05-1.07x). */

/* the four 6-bit units u[s] of a group's three 64-byte loads at g. The
 * 16-bit shifts bring in bits of the next byte above each field, which the
 * two bit-selects (0xe4: c ? a : b) and the last mask drop. */
GL_ALWAYS_INLINE void kx16_q6_units(const uint8_t *g, __m512i u[4], const int pin)
{
    const __m512i m6 = _mm512_set1_epi8(0x3f), m3 = _mm512_set1_epi8(0x03),
                  mf = _mm512_set1_epi8(0x0f);
    const __m512i v0 = gl512_loadu_unit(g, pin);
    const __m512i v1 = gl512_loadu_unit(g + 64, pin);
    const __m512i v2 = gl512_loadu_unit(g + 128, pin);
    const __m512i t =
        _mm512_ternarylogic_epi32(_mm512_srli_epi16(v0, 6), _mm512_srli_epi16(v1, 4), m3, 0xe4);
    u[0] = _mm512_and_si512(v0, m6);
    u[1] = _mm512_and_si512(v1, m6);
    u[2] = _mm512_and_si512(v2, m6);
    u[3] = _mm512_and_si512(_mm512_ternarylogic_epi32(t, _mm512_srli_epi16(v2, 2), mf, 0xe4), m6);
}

#define KS_ISUMS                    kx16_isums_q6K_vnni
#define KS_ISUMS1                   kx16_isums1_q6K_vnni
#define KS_UNPACK                   kx16_unpack_q6K
#define KS_ISUMS_U                  kx16_isums_u_q6K_vnni
#define KS_WBLK                     block_q6_Kx16
#define KS_KSTEP                    1
#define KS_UNITS(blk, h, k, u, pin) kx16_q6_units((blk)->q + 64 * 3 * (8 * (h) + (k)), u, pin)
#define KS_START(xp, j)             _mm512_set1_epi32((xp)->q6c[j])
#define KS_PREP(blk, xp, sc, m, n)  ((void)(sc), (void)(m))
#define KS_SCALE(blk, sc, j)                                                                       \
    gl512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)((blk)->scales + GL_X16_ROWS * (j))))
#include "arch/x86/avx512/kx16_sub16_tmpl.h"

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME     matmul_q6_K_x16_vnni
#define KX_WBLK     block_q6_Kx16
#define KX_ISUMS    kx16_isums_q6K_vnni
#define KX_ISUMS_PF kx16_isums1_q6K_vnni
#define KX_UNPACK   kx16_unpack_q6K
#define KX_CU       8
#define KX_ISUMS_U  kx16_isums_u_q6K_vnni
#define KX_UBYTES   4096
#define KX_HAS_MIN  0
#define KX_LINK     static
#include "arch/x86/avx2/kx8_tmpl.h"

/* ---- IQ4_XSx16 (layout: src/quant.h), one zmm lane per row ----
 * Each nibble looks up u = value + 128 in [1, 241] (vpshufb; the sign
 * bit of gl_iq4nl_values flipped), unsigned for vpdpbusd; sub-block j's chain
 * starts at -128 times its activation sum (xp->iq4c[j]), which takes the
 * offset back exactly, then one vpmulld by the row's scale ls - 32.
 * Bounds: |chain| <= 32 * 241 * 128 + 130048, times |scale| <= 32, eight
 * sub-blocks: inside int32. */
GL_ALWAYS_INLINE __m512i kx16_iq4_table(void)
{
    return _mm512_xor_si512(
        _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)gl_iq4nl_values)),
        _mm512_set1_epi8((char)0x80));
}

GL_ALWAYS_INLINE void kx16_iq4_scale_regs(const block_iq4_xsx16 *blk, __m512i *l, __m512i *h)
{
    *l = _mm512_loadu_si512((const void *)blk->scales_l);
    *h = gl512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)blk->scales_h));
}

/* unit k of sub-block j: the low nibbles of its load k (k < 4) or the
 * high ones of load k - 4, looked up; the two loads of a pair repeat for
 * k and k + 4 (the compiler keeps them) */
GL_ALWAYS_INLINE __m512i kx16_iq4_unit(const block_iq4_xsx16 *blk, int j, int k, const int pin)
{
    const __m512i v = gl512_loadu_unit(blk->qs + 64 * (4 * j + k % 4), pin);
    const __m512i n = k < 4 ? v : _mm512_srli_epi16(v, 4);
    return _mm512_shuffle_epi8(kx16_iq4_table(), _mm512_and_si512(n, _mm512_set1_epi8(0x0f)));
}

GL_ALWAYS_INLINE void kx16_iq4_prep(const block_iq4_xsx16 *blk, __m512i sc[2])
{
    kx16_iq4_scale_regs(blk, &sc[0], &sc[1]);
}

GL_ALWAYS_INLINE __m512i kx16_iq4_pair(const __m512i sc[2], int i, __m512i al, __m512i ah)
{
    return _mm512_add_epi32(_mm512_mullo_epi32(al, kx_iq4_scale16(sc[0], sc[1], 2 * i)),
                            _mm512_mullo_epi32(ah, kx_iq4_scale16(sc[0], sc[1], 2 * i + 1)));
}

#define KP_ISUMS                       kx16_isums_iq4xs_vnni
#define KP_ISUMS1                      kx16_isums1_iq4xs_vnni
#define KP_WBLK                        block_iq4_xsx16
#define KP_PREP(blk, xp, sc, imin, nc) ((void)(imin), kx16_iq4_prep(blk, sc))
#define KP_START(xp, j)                _mm512_set1_epi32((xp)->iq4c[j])
#define KP_UNITS(blk, i, k, lo, hi, pin)                                                           \
    ((lo) = kx16_iq4_unit(blk, 2 * (i), k, pin), (hi) = kx16_iq4_unit(blk, 2 * (i) + 1, k, pin))
#define KP_PAIR(sc, i, al, ah) kx16_iq4_pair(sc, i, al, ah)
#define KP_PF_HEAD             offsetof(block_iq4_xsx16, qs)
#define KP_PF_UNIT(i, k)       (offsetof(block_iq4_xsx16, qs) + 64 * (8 * (i) + (k)))
#include "arch/x86/avx512/kx16_sub8_tmpl.h"

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME      matmul_iq4_xs_x16_vnni
#define KX_PF_BLOCKS 1
#define KX_WBLK      block_iq4_xsx16
#define KX_ISUMS     kx16_isums_iq4xs_vnni
#define KX_ISUMS_PF  kx16_isums1_iq4xs_vnni
#define KX_HAS_MIN   0
#define KX_LINK      static
#include "arch/x86/avx2/kx8_tmpl.h"
/* ---- Q3_Kx16 (layout: src/quant.h), one zmm lane per row ----
 * A group's three loads give eight vectors of u = q + 4 (kx_q3_units16);
 * sub-block j = 8 h + 2 s + half is one dpbusd chain started at -4
 * bsums[j] (xp->q3c: the offset, exactly), so it ends at sum q x, q in
 * [-4, 3]: |chain| <= 16 * 4 * 128 = 8192, inside int16 (KS_SCALE2: two
 * chains a vpdpwssd with their scales - 32, sign-extended to int16);
 * partial chains stay inside 16 * 7 * 127 + 4 * 16 * 128. Times 32,
 * sixteen sub-blocks: inside int32. */
/* sub-blocks ja's and jb's scales (ja / 4 == jb / 4) as the int16 halves
 * of each lane: bytes ja % 4 and jb % 4 of sc[ja / 4], sign-extended */
GL_ALWAYS_INLINE __m512i kx16_q3_scale2(const __m512i sc[4], int ja, int jb)
{
    return _mm512_srai_epi16(
        _mm512_shuffle_epi8(sc[ja / 4], kx512_ctl(kx_pair16_hi(ja % 4, jb % 4))), 8);
}

#define KS_ISUMS                    kx16_isums_q3K_vnni
#define KS_ISUMS1                   kx16_isums1_q3K_vnni
#define KS_UNPACK                   kx16_unpack_q3K
#define KS_ISUMS_U                  kx16_isums_u_q3K_vnni
#define KS_WBLK                     block_q3_Kx16
#define KS_KSTEP                    2
#define KS_UNITS(blk, h, k, u, pin) kx_q3_units16((blk)->q + 192 * (4 * (h) + (k) / 2), u, pin)
#define KS_PF_HEAD                  offsetof(block_q3_Kx16, q)
#define KS_PF_UNIT(h, k)            (offsetof(block_q3_Kx16, q) + 192 * (4 * (h) + (k) / 2))
#define KS_PF_UBYTES                192
#define KS_START(xp, j)             _mm512_set1_epi32((xp)->q3c[j])
#define KS_PREP(blk, xp, sc, m, n)  ((void)(m), kx_q3_scales16((blk)->scales, (sc)->v))
#define KS_SCALE2(blk, sc, ja, jb)  kx16_q3_scale2((sc)->v, ja, jb)
#include "arch/x86/avx512/kx16_sub16_tmpl.h"

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME      matmul_q3_K_x16_vnni
#define KX_PF_BLOCKS 1
#define KX_WBLK      block_q3_Kx16
#define KX_ISUMS     kx16_isums_q3K_vnni
#define KX_ISUMS_PF  kx16_isums1_q3K_vnni
#define KX_UNPACK    kx16_unpack_q3K
#define KX_CU        8
#define KX_ISUMS_U   kx16_isums_u_q3K_vnni
#define KX_UBYTES    4096
#define KX_HAS_MIN   0
#define KX_LINK      static
#include "arch/x86/avx2/kx8_tmpl.h"
/* ---- Q2_Kx16 (layout: src/quant.h), one zmm lane per row ----
 * Unit k of qs gives four vectors of 2-bit quants u_s = (v >> 2 s) & 3;
 * sub-block j = 8 h + 2 s + half (h = k / 8, half = k % 8 / 4) is one
 * dpbusd chain, |chain| <= 16 * 3 * 128 = 6144 (inside int16: KS_SCALE2),
 * times its 4-bit scale; the mins dpwssd the bsum pairs (b6). All exact. */
/* sub-blocks ja's and jb's scales (ja / 4 == jb / 4) as the int16 halves
 * of each lane: bytes ja % 4 and jb % 4 of sc[ja / 4], zero-extended */
GL_ALWAYS_INLINE __m512i kx16_q2_scale2(const __m512i sc[4], int ja, int jb)
{
    return _mm512_shuffle_epi8(sc[ja / 4], kx512_ctl(kx_pair16(ja % 4, jb % 4)));
}

#define KS_ISUMS                    kx16_isums_q2K_vnni
#define KS_ISUMS1                   kx16_isums1_q2K_vnni
#define KS_WBLK                     block_q2_Kx16
#define KS_KSTEP                    1
#define KS_UNITS(blk, h, k, u, pin) kx_q2_units16((blk)->qs + 64 * (8 * (h) + (k)), u, pin)
#define KS_PF_HEAD                  offsetof(block_q2_Kx16, qs)
#define KS_PF_UNIT(h, k)            (offsetof(block_q2_Kx16, qs) + 64 * (8 * (h) + (k)))
#define KS_PF_UBYTES                64
#define KS_START(xp, j)             _mm512_setzero_si512()
#define KS_PREP(blk, xp, sc, m, n)  kx_q2_scales_mins16((blk)->scales, xp, (sc)->v, m, n)
#define KS_SCALE2(blk, sc, ja, jb)  kx16_q2_scale2((sc)->v, ja, jb)
#include "arch/x86/avx512/kx16_sub16_tmpl.h"

#include "arch/x86/avx512/kx16_kv.h"
#define KX_NAME      matmul_q2_K_x16_vnni
#define KX_PF_BLOCKS 1
#define KX_WBLK      block_q2_Kx16
#define KX_ISUMS     kx16_isums_q2K_vnni
#define KX_ISUMS_PF  kx16_isums1_q2K_vnni
#define KX_HAS_MIN   1
#define KX_LINK      static
#include "arch/x86/avx2/kx8_tmpl.h"
#undef KX_C
