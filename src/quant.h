/* Block layouts exactly as GGUF stores them (ggml-common.h bytes). */
#ifndef GENLOOP_SRC_QUANT_H
#define GENLOOP_SRC_QUANT_H

#include <assert.h>
#include <stdint.h>

/* GGUF gives blocks no alignment: rows of 34-byte Q8_0 blocks start
 * anywhere, and kernels accept unaligned pointers. Packed (alignment 1)
 * block types make every member access valid at any address. */
#if defined(__GNUC__)
#define GL_PACKED __attribute__((packed))
/* Scalars of weight and cache rows, which may sit at any address. */
typedef float gl_f32u __attribute__((aligned(1)));
typedef uint16_t gl_u16u __attribute__((aligned(1)));
#else
#define GL_PACKED
typedef float gl_f32u;
typedef uint16_t gl_u16u;
#endif

#define QK8_0 32
#define QK4_0 32

/* 32 signed bytes scaled by one half-precision d: x = d * q. */
typedef struct GL_PACKED block_q8_0 {
    uint16_t d;
    int8_t qs[QK8_0];
} block_q8_0;

/* 32 nibbles scaled by d: x = d * (q - 8). Byte j holds element j in its
 * low nibble and element j + 16 in its high nibble. */
typedef struct GL_PACKED block_q4_0 {
    uint16_t d;
    uint8_t qs[QK4_0 / 2];
} block_q4_0;

static_assert(sizeof(block_q8_0) == 34, "block_q8_0 must match GGUF");
static_assert(sizeof(block_q4_0) == 18, "block_q4_0 must match GGUF");

/* 32 nibbles with scale and offset: x = d * q + m (q = 0..15, same nibble
 * order as Q4_0). */
typedef struct GL_PACKED block_q4_1 {
    uint16_t d, m;
    uint8_t qs[QK4_0 / 2];
} block_q4_1;

/* 5-bit quants: the low 4 bits as Q4_0's nibbles, bit 4 of element j in
 * bit j of qh (little-endian uint32). Q5_0: x = d * (q - 16); Q5_1:
 * x = d * q + m. */
typedef struct GL_PACKED block_q5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[QK4_0 / 2];
} block_q5_0;

typedef struct GL_PACKED block_q5_1 {
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[QK4_0 / 2];
} block_q5_1;

/* IQ4_NL: Q4_0's nibbles index a non-linear table: x = d * gl_iq4nl_values[q]. */
typedef struct GL_PACKED block_iq4_nl {
    uint16_t d;
    uint8_t qs[QK4_0 / 2];
} block_iq4_nl;

static const int8_t gl_iq4nl_values[16] = { -127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113 };

/* ---- K-quants: super-blocks of 256 values (ggml-common.h) -------------- */
#define QK_K         256
#define K_SCALE_SIZE 12

/* 16 sub-blocks of 16, 2-bit quants. scales[j]: low nibble the scale, high
 * nibble the min of sub-block j. x = d * (scales[j] & 15) * q - dmin *
 * (scales[j] >> 4). Quant l of 128-value half h, lane group s: qs[32 h + l %
 * 32] >> (2 * (l / 32)) & 3, element 128 h + l (l = 0..127). */
typedef struct GL_PACKED block_q2_K {
    uint8_t scales[QK_K / 16];
    uint8_t qs[QK_K / 4];
    uint16_t d, dmin;
} block_q2_K;

/* 16 sub-blocks of 16, 3-bit quants: 2 low bits as in Q2_K, the third bit
 * in hmask (element 128 h + 32 s + l: bit (4 h + s) of hmask[l]); q =
 * low2 - (bit ? 0 : 4), so -4..3. 16 six-bit scales packed in 12 bytes,
 * stored + 32. x = d * (scale - 32) * q. */
typedef struct GL_PACKED block_q3_K {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[12];
    uint16_t d;
} block_q3_K;

/* 8 sub-blocks of 32, 4-bit quants; 6-bit scale and min per sub-block
 * packed in 12 bytes (gl_k4_scale_min). Element 64 i + l (l < 32): low
 * nibble of qs[32 i + l]; element 64 i + 32 + l: its high nibble.
 * x = d * sc * q - dmin * m. */
typedef struct GL_PACKED block_q4_K {
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
} block_q4_K;

/* Q4_K plus a fifth bit: element 64 i + l has bit 2 i of qh[l], element
 * 64 i + 32 + l bit 2 i + 1. q = 0..31. */
typedef struct GL_PACKED block_q5_K {
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;

/* 16 sub-blocks of 16, 6-bit quants, signed 8-bit scales. In each half
 * h (128 values) element 128 h + 32 s + l (s = 0..3, l = 0..31) has low
 * 4 bits from ql[64 h + l + 32 (s & 1)] (low nibble for s < 2, high for
 * s >= 2) and high 2 bits (qh[32 h + l] >> 2 s) & 3; q = that - 32.
 * x = d * scales[e / 16] * q. */
typedef struct GL_PACKED block_q6_K {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    uint16_t d;
} block_q6_K;

/* IQ4_XS: 8 sub-blocks of 32 as IQ4_NL's table indices (nibble order as
 * Q4_0 within each sub-block: qs[16 j + l] low = element 32 j + l, high =
 * 32 j + 16 + l), 6-bit scales: low 4 bits in scales_l (nibble j of the
 * array), high 2 in bits 2 j of scales_h; x = d * (ls - 32) * value. */
typedef struct GL_PACKED block_iq4_xs {
    uint16_t d;
    uint16_t scales_h;
    uint8_t scales_l[QK_K / 64];
    uint8_t qs[QK_K / 2];
} block_iq4_xs;

/* Scale j and min j (j = 0..7) of a Q4_K / Q5_K super-block: 6 bits each. */
static inline void gl_k4_scale_min(int j, const uint8_t *q, uint8_t *sc, uint8_t *m)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* ---- activation formats (genloop's own, never stored in files) ---------
 * Q8_1: Q8_0 plus s, the integer sum of the 32 quants (for weights with an
 * offset, Q4_1 / Q5_1: sum_j (d q_j + m) x_j = ... + m dx s). Not ggml's
 * Q8_1, whose s is d * sum in half precision.
 * Q8_K: 256 quants with a float scale and the sums of each 16 quants (the
 * K-quants' mins and offsets need them). */
typedef struct GL_PACKED block_q8_1 {
    uint16_t d;
    int16_t s;
    int8_t qs[QK8_0];
} block_q8_1;

typedef struct GL_PACKED block_q8_K {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
} block_q8_K;

static_assert(sizeof(block_q4_1) == 20 && sizeof(block_q5_0) == 22 && sizeof(block_q5_1) == 24 &&
                  sizeof(block_iq4_nl) == 18,
              "legacy blocks must match GGUF");
static_assert(sizeof(block_q2_K) == 84 && sizeof(block_q3_K) == 110 && sizeof(block_q4_K) == 144 &&
                  sizeof(block_q5_K) == 176 && sizeof(block_q6_K) == 210 &&
                  sizeof(block_iq4_xs) == 136,
              "K-quant blocks must match GGUF");
static_assert(sizeof(block_q8_1) == 36 && sizeof(block_q8_K) == 292, "activation blocks");

/* ---- Row-interleaved ("x8") layouts, made at load time (src/repack.c).
 *
 * ISA-neutral: arch/generic implements them (repack, unpack, matmul) and
 * every backend's kernels answer to that reference. A repacked matrix is a
 * sequence of row groups of GL_X8_ROWS rows; group i holds rows 8i..8i+7
 * and is nblk = n / 32 consecutive x8 blocks, one per 32 columns, so group
 * i starts at i * nblk * sizeof(block). Rows past the matrix in the last
 * group are padding: d = 0 and every quant 0 (x = 0 in both layouts below).
 *
 * Within a block the quant bytes of the 8 rows are interleaved in 4-byte
 * groups: qs[32 k + 4 r + j] is byte 4 k + j of row r's GGUF block
 * (k = 0..3 for Q4_0, 0..7 for Q8_0; j = 0..3). One 32-byte load thus
 * holds 4 consecutive bytes of each of the 8 rows, lane r = row r, and a
 * 4-byte dot product per 32-bit lane (vpdpbusd, maddubs+madd, sdot, ...)
 * yields 8 rows' partial sums with no horizontal reduction. The quant bytes
 * keep their GGUF meaning (no bias or sign trick): a Q4_0 byte holds
 * element e (low nibble) and e + 16 (high nibble) of its row's block. */
#define GL_X8_ROWS 8

typedef struct GL_PACKED block_q4_0x8 {
    uint16_t d[GL_X8_ROWS];             /* row r's d */
    uint8_t qs[GL_X8_ROWS * QK4_0 / 2]; /* 4 x (8 rows x 4 bytes) */
} block_q4_0x8;

typedef struct GL_PACKED block_q8_0x8 {
    uint16_t d[GL_X8_ROWS];
    int8_t qs[GL_X8_ROWS * QK8_0]; /* 8 x (8 rows x 4 bytes) */
} block_q8_0x8;

/* Q4_0x16: the same interleave over 16 rows (qs[64 k + 4 r + j]), so one
 * 64-byte load holds 4 bytes of each of 16 rows: a zmm register's lanes.
 * AVX-512 decode streams it faster than two Q4_0x8 groups side by side
 * (no inserts, one stream per 16 rows; bench/matvec 2 threads 2048x5632:
 * 93 -> 97 % of the read bandwidth). */
#define GL_X16_ROWS 16

typedef struct GL_PACKED block_q4_0x16 {
    uint16_t d[GL_X16_ROWS];
    uint8_t qs[GL_X16_ROWS * QK4_0 / 2]; /* 4 x (16 rows x 4 bytes) */
} block_q4_0x16;

/* Q5_0x8 / IQ4_NLx8: the 8-row forms of the two below (AVX2). */
typedef struct GL_PACKED block_q5_0x8 {
    uint16_t d[GL_X8_ROWS];
    uint8_t qh[GL_X8_ROWS * 4];         /* re-encoded as Q5_0x16's */
    uint8_t qs[GL_X8_ROWS * QK4_0 / 2]; /* 4 x (8 rows x 4 bytes) */
} block_q5_0x8;
typedef block_q4_0x8 block_iq4_nlx8;

/* Q5_0x16: 16 rows' Q5_0 blocks, qs as Q4_0x16's (qs[64 k + 4 r + j]) and
 * the fifth bits re-encoded as one 32-bit lane per row (qh[4 r + i]): byte
 * i holds in bit k the fifth bit of element 4 k + i and in bit 4 + k that
 * of element 16 + 4 k + i (k < 4). Unit k's bits then reach bit 4 of each
 * byte with one 16-bit shift of the lane ((h << (4 - k)) & 0x10 for the
 * low nibbles' elements, (h >> k) & 0x10 for the high ones'; nothing from
 * the neighbouring byte reaches bit 4). The plain rows' 5.5 bits a weight,
 * read as one stream per 16 rows like Q4_0x16: files whose rows are not a
 * multiple of 256 wide (Qwen2.5-0.5B's 896) keep the Q4_K of a Q4_K_M mix
 * as Q5_0. */
typedef struct GL_PACKED block_q5_0x16 {
    uint16_t d[GL_X16_ROWS];
    uint8_t qh[GL_X16_ROWS * 4];         /* re-encoded, one lane per row */
    uint8_t qs[GL_X16_ROWS * QK4_0 / 2]; /* 4 x (16 rows x 4 bytes) */
} block_q5_0x16;

/* IQ4_NLx16: IQ4_NL's blocks have Q4_0's bytes (d, then 16 bytes of
 * nibbles), so 16 rows of them interleave as Q4_0x16: the same struct. The
 * fallback of IQ4_XS mixes for rows not a multiple of 256 wide. */
typedef block_q4_0x16 block_iq4_nlx16;

/* Q4_1x8 / Q4_1x16 / Q5_1x8 / Q5_1x16: Q4_0's and Q5_0's row groups with
 * each row's offset m beside its scale (x = d q + m, q unsigned, so the
 * integer dot takes q as it is, no correction). Q5_1 is what the Q5_K of
 * a Q5_K_M / Q5_K_S mix becomes where rows are not a multiple of 256. */
typedef struct GL_PACKED block_q4_1x8 {
    uint16_t d[GL_X8_ROWS], m[GL_X8_ROWS];
    uint8_t qs[GL_X8_ROWS * QK4_0 / 2];
} block_q4_1x8;
typedef struct GL_PACKED block_q4_1x16 {
    uint16_t d[GL_X16_ROWS], m[GL_X16_ROWS];
    uint8_t qs[GL_X16_ROWS * QK4_0 / 2];
} block_q4_1x16;
typedef struct GL_PACKED block_q5_1x8 {
    uint16_t d[GL_X8_ROWS], m[GL_X8_ROWS];
    uint8_t qh[GL_X8_ROWS * 4]; /* re-encoded as Q5_0x16's */
    uint8_t qs[GL_X8_ROWS * QK4_0 / 2];
} block_q5_1x8;
typedef struct GL_PACKED block_q5_1x16 {
    uint16_t d[GL_X16_ROWS], m[GL_X16_ROWS];
    uint8_t qh[GL_X16_ROWS * 4];
    uint8_t qs[GL_X16_ROWS * QK4_0 / 2];
} block_q5_1x16;

/* Q8_0x16: Q8_0 over 16 rows (qs[64 k + 4 r + j], k = 0..7), so AVX-512
 * decode needs one 64-byte load per vector where two Q8_0x8 groups side
 * by side need two and an insert. */
typedef struct GL_PACKED block_q8_0x16 {
    uint16_t d[GL_X16_ROWS];
    int8_t qs[GL_X16_ROWS * QK8_0]; /* 8 x (16 rows x 4 bytes) */
} block_q8_0x16;

/* K-quant row groups: 8 rows' super-blocks of one 256-column span, every
 * byte array interleaved in 4-byte units as above (xn: byte 4 k + j of row
 * r at [32 k + 4 r + j]), so one 32-byte load holds 4 consecutive bytes of
 * each of the 8 rows:
 *   Q4_Kx8: d[r], dmin[r]; scales: 3 units (row r's 12 scale bytes, as in
 *   GGUF: a 32-byte load gives lane r the bytes 0-3, 4-7 or 8-11 of its
 *   row); qs: 32 units (load k: bytes 4 k .. 4 k + 3 of each row's qs, i.e.
 *   elements 64 (k / 8) + 4 (k % 8) + 0..3, low nibbles, and the same + 32,
 *   high nibbles).
 *   Q6_Kx8: d[r]; scales: 4 units (row r's 16 int8 scales); ql: 32 units;
 *   qh: 16 units.
 * Same bytes per group as 8 plain rows (group_bytes = 8 * row bytes). */
typedef struct GL_PACKED block_q4_Kx8 {
    uint16_t d[GL_X8_ROWS];
    uint16_t dmin[GL_X8_ROWS];
    uint8_t scales[GL_X8_ROWS * K_SCALE_SIZE];
    uint8_t qs[GL_X8_ROWS * QK_K / 2];
} block_q4_Kx8;

typedef struct GL_PACKED block_q6_Kx8 {
    uint16_t d[GL_X8_ROWS];
    int8_t scales[GL_X8_ROWS * QK_K / 16];
    uint8_t ql[GL_X8_ROWS * QK_K / 2];
    uint8_t qh[GL_X8_ROWS * QK_K / 4];
} block_q6_Kx8;

/* Q4_Kx16 / Q6_Kx16: the x8 interleave over 16 rows (one 64-byte load: 4 bytes of
 * each of 16 rows, a zmm register's lanes). */
typedef struct GL_PACKED block_q4_Kx16 {
    uint16_t d[GL_X16_ROWS];
    uint16_t dmin[GL_X16_ROWS];
    uint8_t scales[GL_X16_ROWS * K_SCALE_SIZE];
    uint8_t qs[GL_X16_ROWS * QK_K / 2];
} block_q4_Kx16;

/* Q6_Kx16 is laid out for the AVX-512 kernel rather than copied unit by unit:
 *   scales[16 j + r]: row r's scale of sub-block j (one sign-extending load
 *   gives the 16 rows' scales of a sub-block, one per lane);
 *   q: the 6-bit values u = q + 32, three bytes per four values. Element
 *   e = 128 h + 32 s + 4 k + i (h < 2, s < 4, k < 8, i < 4) of row r: for
 *   s < 3, bits 0-5 of q[64 (3 (8 h + k) + s) + 4 r + i]; for s = 3, bits 6-7
 *   of the same byte of t = 0, 1, 2 hold its bits 2t, 2t + 1. So one group
 *   (h, k) is three 64-byte loads: three values by a mask, the fourth from
 *   the top bits of all three (the GGUF ql/qh planes need two loads and
 *   2-3 shifts per value). Same bytes as 16 plain rows. */
typedef struct GL_PACKED block_q6_Kx16 {
    uint16_t d[GL_X16_ROWS];
    int8_t scales[GL_X16_ROWS * QK_K / 16];
    uint8_t q[GL_X16_ROWS * QK_K * 3 / 4];
} block_q6_Kx16;

/* Q5_Kx16: Q4_Kx16 plus qh (8 units: load k gives lane r the fifth bits of
 * elements 4 k .. 4 k + 3 of each 64-element pair of sub-blocks, as in
 * GGUF's qh[l]). */
typedef struct GL_PACKED block_q5_Kx16 {
    uint16_t d[GL_X16_ROWS];
    uint16_t dmin[GL_X16_ROWS];
    uint8_t scales[GL_X16_ROWS * K_SCALE_SIZE];
    uint8_t qh[GL_X16_ROWS * QK_K / 8];
    uint8_t qs[GL_X16_ROWS * QK_K / 2];
} block_q5_Kx16;

/* Q5_Kx8: the same over 8 rows (32-byte units) */
typedef struct GL_PACKED block_q5_Kx8 {
    uint16_t d[GL_X8_ROWS];
    uint16_t dmin[GL_X8_ROWS];
    uint8_t scales[GL_X8_ROWS * K_SCALE_SIZE];
    uint8_t qh[GL_X8_ROWS * QK_K / 8];
    uint8_t qs[GL_X8_ROWS * QK_K / 2];
} block_q5_Kx8;

static_assert(sizeof(block_q5_Kx16) == 16 * sizeof(block_q5_K) &&
                  sizeof(block_q5_Kx8) == 8 * sizeof(block_q5_K),
              "Q5_K row groups: 8 / 16 super-blocks");

/* IQ4_XSx16: 16 rows' IQ4_XS super-blocks; scales_h[r] and the 4 bytes of
 * scales_l at 4 r are row r's, so one load gives every lane its row's
 * sub-block scales (nibble j of the 32-bit lane, bits 2 j of the 16-bit
 * one); qs as Q4_Kx16's (load k: bytes 4 k .. 4 k + 3 of each row's qs,
 * i.e. elements 32 (k / 4) + 4 (k % 4) + 0..3 in the low nibbles, + 16 in
 * the high ones). Same bytes as 16 plain rows. */
typedef struct GL_PACKED block_iq4_xsx16 {
    uint16_t d[GL_X16_ROWS];
    uint16_t scales_h[GL_X16_ROWS];
    uint8_t scales_l[GL_X16_ROWS * QK_K / 64];
    uint8_t qs[GL_X16_ROWS * QK_K / 2];
} block_iq4_xsx16;

/* IQ4_XSx8: the same over 8 rows (32-byte units) */
typedef struct GL_PACKED block_iq4_xsx8 {
    uint16_t d[GL_X8_ROWS];
    uint16_t scales_h[GL_X8_ROWS];
    uint8_t scales_l[GL_X8_ROWS * QK_K / 64];
    uint8_t qs[GL_X8_ROWS * QK_K / 2];
} block_iq4_xsx8;

static_assert(sizeof(block_iq4_xsx16) == 16 * sizeof(block_iq4_xs) &&
                  sizeof(block_iq4_xsx8) == 8 * sizeof(block_iq4_xs),
              "IQ4_XS row groups: 8 / 16 super-blocks");

/* Q3_Kx8 / Q3_Kx16, laid out for the SIMD kernels (as Q6_Kx16), shown
 * for 16 rows (Q3_Kx8: 32-byte units, offsets halved):
 *   scales: row r's 16 six-bit scales (stored + 32, as GGUF) in 12 bytes,
 *   three units: byte b of unit t (scales[64 t + 4 r + b]) holds scale
 *   4 t + b in bits 0-5 and bits 2 t, 2 t + 1 of scale 12 + b in bits 6-7;
 *   q: the 3-bit values u = q + 4, three bytes per eight values. Group
 *   g = 4 h + p (h < 2, p < 4) is three 64-byte units B0..B2 at q + 192 g;
 *   byte 4 r + i of each holds row r's values u_t, t < 8, of elements
 *   128 h + 32 (t % 4) + 4 (2 p + t / 4) + i: B0 = u0 | u1 << 3 | (u6 & 3)
 *   << 6, B1 = u2 | u3 << 3 | (u7 & 3) << 6, B2 = u4 | u5 << 3 | (u6 >> 2)
 *   << 6 | (u7 >> 2) << 7. So three loads give eight vectors of values
 *   with one to four operations each. Same bytes as 16 plain rows. */
typedef struct GL_PACKED block_q3_Kx16 {
    uint16_t d[GL_X16_ROWS];
    uint8_t scales[GL_X16_ROWS * 12];
    uint8_t q[GL_X16_ROWS * QK_K * 3 / 8];
} block_q3_Kx16;

typedef struct GL_PACKED block_q3_Kx8 {
    uint16_t d[GL_X8_ROWS];
    uint8_t scales[GL_X8_ROWS * 12];
    uint8_t q[GL_X8_ROWS * QK_K * 3 / 8];
} block_q3_Kx8;

/* Q2_Kx8 / Q2_Kx16: d[r], dmin[r]; scales and qs interleaved in 4-byte
 * units as Q4_Kx8 (unit t of scales: row r's scale bytes 4 t .. 4 t + 3;
 * unit k of qs: bytes 4 k .. 4 k + 3 of each row's qs, i.e. elements
 * 128 (k / 8) + 32 s + 4 (k % 8) + 0..3 in bits 2 s). Same bytes as 8 / 16
 * plain rows. */
typedef struct GL_PACKED block_q2_Kx8 {
    uint16_t d[GL_X8_ROWS];
    uint16_t dmin[GL_X8_ROWS];
    uint8_t scales[GL_X8_ROWS * QK_K / 16];
    uint8_t qs[GL_X8_ROWS * QK_K / 4];
} block_q2_Kx8;

typedef struct GL_PACKED block_q2_Kx16 {
    uint16_t d[GL_X16_ROWS];
    uint16_t dmin[GL_X16_ROWS];
    uint8_t scales[GL_X16_ROWS * QK_K / 16];
    uint8_t qs[GL_X16_ROWS * QK_K / 4];
} block_q2_Kx16;

static_assert(sizeof(block_q2_Kx16) == 16 * sizeof(block_q2_K) &&
                  sizeof(block_q2_Kx8) == 8 * sizeof(block_q2_K),
              "Q2_K row groups: 8 / 16 super-blocks");
static_assert(sizeof(block_q3_Kx16) == 16 * sizeof(block_q3_K) &&
                  sizeof(block_q3_Kx8) == 8 * sizeof(block_q3_K),
              "Q3_K row groups: 8 / 16 super-blocks");
static_assert(sizeof(block_q4_Kx16) == 16 * sizeof(block_q4_K) &&
                  sizeof(block_q6_Kx16) == 16 * sizeof(block_q6_K),
              "K-quant x16 blocks: 16 super-blocks");
static_assert(sizeof(block_q4_Kx8) == 8 * sizeof(block_q4_K) &&
                  sizeof(block_q6_Kx8) == 8 * sizeof(block_q6_K),
              "K-quant x8 blocks: 8 super-blocks");
static_assert(sizeof(block_q4_0x8) == 8 * sizeof(block_q4_0), "block_q4_0x8: 8 Q4_0 blocks");
static_assert(sizeof(block_q4_0x16) == 16 * sizeof(block_q4_0), "block_q4_0x16: 16 Q4_0 blocks");
static_assert(sizeof(block_q8_0x8) == 8 * sizeof(block_q8_0), "block_q8_0x8: 8 Q8_0 blocks");
static_assert(sizeof(block_q8_0x16) == 16 * sizeof(block_q8_0), "block_q8_0x16: 16 Q8_0 blocks");
static_assert(sizeof(block_q5_0x16) == 16 * sizeof(block_q5_0), "block_q5_0x16: 16 Q5_0 blocks");
static_assert(sizeof(block_q5_0x8) == 8 * sizeof(block_q5_0), "block_q5_0x8: 8 Q5_0 blocks");
static_assert(sizeof(block_iq4_nl) == sizeof(block_q4_0), "IQ4_NL blocks have Q4_0's bytes");
static_assert(sizeof(block_q4_1x8) == 8 * sizeof(block_q4_1) &&
                  sizeof(block_q4_1x16) == 16 * sizeof(block_q4_1) &&
                  sizeof(block_q5_1x8) == 8 * sizeof(block_q5_1) &&
                  sizeof(block_q5_1x16) == 16 * sizeof(block_q5_1),
              "Q4_1 / Q5_1 row groups: 8 / 16 blocks");
static_assert(sizeof(block_q4_0x8) % 16 == 0 && sizeof(block_q8_0x8) % 16 == 0 &&
                  sizeof(block_q4_0x16) % 32 == 0,
              "x8 blocks keep 16-byte alignment from one block to the next");

#endif
