/* AVX2 activation quantizers of the formats beyond Q8_0: Q8_1 (Q8_0 plus
 * the integer sum of each block's quants) and Q8_K (blocks of 256, float
 * scale signed like the largest-magnitude element, 16 sums of 16).
 * Byte-identical to arch/generic/quantize.c:
 *  - the maxima are exact in any order; the NaN rule of the scalar loops
 *    (fmaxf / `>` never pick a NaN) is kept by always passing the running
 *    maximum as max_ps's second operand, which it returns when either
 *    operand is a NaN;
 *  - scales come from the same scalar expressions;
 *  - q = cvtps2dq(x * id) rounds half to even under the default MXCSR
 *    mode, as nearbyintf does; the low byte is kept as the scalar cast
 *    does, and lanes outside [-127.5, 127.5] (or NaN) become 0 as the
 *    scalar range test makes them;
 *  - the sums are exact integer sums of the stored bytes. */
#include <float.h>

#include "arch/x86/avx2/legacy.h"
#include "arch/x86/avx2/util.h"

/* 32 int32 lanes (4 vectors) to 32 int8 in element order, low bytes kept. */
GL_ALWAYS_INLINE __m256i pack_q8_32(__m256i q0, __m256i q1, __m256i q2, __m256i q3)
{
    const __m256i lo8 = _mm256_set1_epi32(0xff);
    q0 = _mm256_and_si256(q0, lo8);
    q1 = _mm256_and_si256(q1, lo8);
    q2 = _mm256_and_si256(q2, lo8);
    q3 = _mm256_and_si256(q3, lo8);
    const __m256i q = _mm256_packus_epi16(_mm256_packus_epi32(q0, q1), _mm256_packus_epi32(q2, q3));
    return _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* round(v) with the scalar quantizers' range rule: 0 outside [-127.5, 127.5] */
GL_ALWAYS_INLINE __m256i q8_round(__m256 v)
{
    const __m256 ok = _mm256_and_ps(_mm256_cmp_ps(v, _mm256_set1_ps(-127.5f), _CMP_GE_OQ),
                                    _mm256_cmp_ps(v, _mm256_set1_ps(127.5f), _CMP_LE_OQ));
    return _mm256_and_si256(_mm256_cvtps_epi32(v), _mm256_castps_si256(ok));
}

/* sad of (q ^ 0x80) against 0: per 8 bytes, the sum of q + 128 */
GL_ALWAYS_INLINE __m256i sad_biased(__m256i q)
{
    return _mm256_sad_epu8(_mm256_xor_si256(q, _mm256_set1_epi8(-128)), _mm256_setzero_si256());
}

GL_DECL_QUANTIZE_FN(gl_quantize_q8_1_avx2)
{
    block_q8_1 *out = y;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int b = 0; b < n / QK8_0; b++) {
        const float *xb = x + b * QK8_0;
        const __m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8);
        const __m256 v2 = _mm256_loadu_ps(xb + 16), v3 = _mm256_loadu_ps(xb + 24);
        __m256 m = _mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_setzero_ps());
        m = _mm256_max_ps(_mm256_andnot_ps(sign, v1), m);
        m = _mm256_max_ps(_mm256_andnot_ps(sign, v2), m);
        m = _mm256_max_ps(_mm256_andnot_ps(sign, v3), m);
        const float amax = gl_hmax8_ps(m); /* no NaN lanes left */
        const float d = amax / 127.0f;
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        if (id > FLT_MAX)
            id = 0.0f;
        out[b].d = (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(d), 0), 0);
        const __m256 vid = _mm256_set1_ps(id);
        const __m256i q =
            pack_q8_32(q8_round(_mm256_mul_ps(v0, vid)), q8_round(_mm256_mul_ps(v1, vid)),
                       q8_round(_mm256_mul_ps(v2, vid)), q8_round(_mm256_mul_ps(v3, vid)));
        _mm256_storeu_si256((__m256i *)out[b].qs, q);
        const __m256i s4 = sad_biased(q);
        __m128i s = _mm_add_epi64(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
        s = _mm_add_epi64(s, _mm_unpackhi_epi64(s, s));
        out[b].s = (int16_t)(_mm_cvtsi128_si32(s) - 32 * 128);
    }
}

GL_DECL_QUANTIZE_FN(gl_quantize_q8_K_avx2)
{
    block_q8_K *out = y;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int b = 0; b < n / QK_K; b++) {
        const float *xb = x + b * QK_K;
        __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps();
        for (int i = 0; i < QK_K; i += 16) {
            m0 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + i)), m0);
            m1 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + i + 8)), m1);
        }
        const float amax = gl_hmax8_ps(_mm256_max_ps(m0, m1));
        float max = 0.0f;
        if (amax != 0.0f) { /* the first element whose magnitude is amax */
            const __m256 va = _mm256_set1_ps(amax);
            for (int i = 0; i < QK_K; i += 8) {
                const int mask = _mm256_movemask_ps(
                    _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + i)), va, _CMP_EQ_OQ));
                if (mask) {
                    max = xb[i + __builtin_ctz((unsigned)mask)];
                    break;
                }
            }
        }
        const gl_q8k_scales sc = gl_q8k_scales_of(amax, max);
        out[b].d = sc.d;
        const __m256 vs = _mm256_set1_ps(sc.iscale);
        __m256i sads[8];
        for (int i = 0; i < QK_K / 32; i++) {
            const float *p = xb + 32 * i;
            const __m256i q = pack_q8_32(q8_round(_mm256_mul_ps(_mm256_loadu_ps(p), vs)),
                                         q8_round(_mm256_mul_ps(_mm256_loadu_ps(p + 8), vs)),
                                         q8_round(_mm256_mul_ps(_mm256_loadu_ps(p + 16), vs)),
                                         q8_round(_mm256_mul_ps(_mm256_loadu_ps(p + 24), vs)));
            _mm256_storeu_si256((__m256i *)(out[b].qs + 32 * i), q);
            sads[i] = sad_biased(q); /* 32-bit lanes [a0 0 a1 0 | a2 0 a3 0], a = 8-byte sums */
        }
        /* bsums: sums of 16 = two adjacent 8-byte sums, minus 16 * 128 */
        __m256i bs[2];
        for (int h = 0; h < 2; h++) {
            const __m256i t0 = _mm256_hadd_epi32(sads[4 * h], sads[4 * h + 1]);
            const __m256i t1 = _mm256_hadd_epi32(sads[4 * h + 2], sads[4 * h + 3]);
            /* lane k (low 128) = sums of bytes 0..15 of vector 4h + k, lane 4 + k: bytes 16..31 */
            const __m256i t = _mm256_hadd_epi32(t0, t1);
            bs[h] = _mm256_sub_epi32(
                _mm256_permutevar8x32_epi32(t, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)),
                _mm256_set1_epi32(16 * 128));
        }
        const __m256i s16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(bs[0], bs[1]), 0xd8);
        _mm256_storeu_si256((__m256i *)out[b].bsums, s16);
    }
}
