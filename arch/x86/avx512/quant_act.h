/* The Q8_K activation quantizer on 16 lanes, included by kernels.c: the
 * same bytes as arch/x86/avx2/quant_act.c's (and generic's), by the same
 * rules: maxima exact in any order with the running maximum as max's
 * second operand (a NaN never enters it), the scale from the same scalar
 * expressions, q = cvtps2dq(x * iscale) rounding half to even, lanes
 * outside [-127.5, 127.5] (or NaN) zero, sums exact. Decode quantizes the
 * input of every K-quant product on one thread between the regions: on a
 * Zen 5 the AVX2 form took ~0.63 us for 2048 floats, ~84 us of a
 * TinyLlama Q4_K_M decode step on 2 threads (bench/RESULTS.md). */

/* 16 floats' quants, zero where out of range, as int8 */
GL_ALWAYS_INLINE __m128i q8k_quants16(__m512 v)
{
    const __mmask16 ok = _mm512_cmp_ps_mask(v, _mm512_set1_ps(-127.5f), _CMP_GE_OQ) &
                         _mm512_cmp_ps_mask(v, _mm512_set1_ps(127.5f), _CMP_LE_OQ);
    /* in range, so saturating to int8 keeps every value */
    return _mm512_cvtsepi32_epi8(_mm512_maskz_mov_epi32(ok, gl512_cvtps_epi32(v)));
}

/* The eight sums of 16 bytes of two 64-byte vectors of per-8-byte sums
 * (sad_epu8 lanes), as int16, each less 16 * 128 (the bias) */
GL_ALWAYS_INLINE __m128i q8k_sums16(__m512i s0, __m512i s1)
{
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    const __m512i t = _mm512_add_epi64(_mm512_permutex2var_epi64(s0, even, s1),
                                       _mm512_permutex2var_epi64(s0, odd, s1));
    return _mm_sub_epi16(_mm512_cvtsepi64_epi16(t), _mm_set1_epi16(16 * 128));
}

static GL_DECL_QUANTIZE_FN(quantize_q8_K_512)
{
    block_q8_K *out = y;
    const __m512i bias = _mm512_set1_epi8(-128);
    for (int b = 0; b < n / QK_K; b++) {
        const float *xb = x + b * QK_K;
        __m512 m0 = _mm512_setzero_ps(), m1 = _mm512_setzero_ps();
        for (int i = 0; i < QK_K; i += 32) {
            m0 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(xb + i)), m0);
            m1 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(xb + i + 16)), m1);
        }
        const __m512 m = _mm512_max_ps(m0, m1);
        const float amax = gl_hmax8_ps(_mm256_max_ps(gl512_lo_ps(m), gl512_hi_ps(m)));
        float max = 0.0f;
        if (amax != 0.0f) { /* the first element whose magnitude is amax */
            const __m512 va = _mm512_set1_ps(amax);
            for (int i = 0; i < QK_K; i += 16) {
                const __mmask16 k =
                    _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(xb + i)), va, _CMP_EQ_OQ);
                if (k) {
                    max = xb[i + __builtin_ctz((unsigned)k)];
                    break;
                }
            }
        }
        const gl_q8k_scales sc = gl_q8k_scales_of(amax, max);
        out[b].d = sc.d;
        const __m512 vs = _mm512_set1_ps(sc.iscale);
        __m512i sads[4];
        for (int i = 0; i < QK_K / 64; i++) {
            const float *p = xb + 64 * i;
            const __m128i q0 = q8k_quants16(_mm512_mul_ps(_mm512_loadu_ps(p), vs));
            const __m128i q1 = q8k_quants16(_mm512_mul_ps(_mm512_loadu_ps(p + 16), vs));
            const __m128i q2 = q8k_quants16(_mm512_mul_ps(_mm512_loadu_ps(p + 32), vs));
            const __m128i q3 = q8k_quants16(_mm512_mul_ps(_mm512_loadu_ps(p + 48), vs));
            __m512i q = _mm512_castsi128_si512(q0);
            q = _mm512_inserti32x4(q, q1, 1);
            q = _mm512_inserti32x4(q, q2, 2);
            q = _mm512_inserti32x4(q, q3, 3);
            _mm512_storeu_si512(out[b].qs + 64 * i, q);
            /* per 8 bytes, the sum of q + 128 */
            sads[i] = _mm512_sad_epu8(_mm512_xor_si512(q, bias), _mm512_setzero_si512());
        }
        _mm_storeu_si128((__m128i *)out[b].bsums, q8k_sums16(sads[0], sads[1]));
        _mm_storeu_si128((__m128i *)(out[b].bsums + 8), q8k_sums16(sads[2], sads[3]));
    }
}
