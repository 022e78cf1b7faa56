/* The attention softmax, written once for AVX2 (softmax.c) and AVX-512
 * (arch/x86/avx512/float_ops.h). Include with SM_NAME, SM_LINKAGE and
 * SM_W16: 1 takes the scores 16 at a time on 512-bit vectors first (the
 * caller defines gl_exp16_ps), adding each block's halves to the 8-lane
 * sum in element order, as the 8-lane loop would have. Every result is
 * then the same bit for bit with or without it: the maximum is exact in
 * any order, each exponential is computed lane for lane the same way, and
 * the sum sees the same additions. */

SM_LINKAGE GL_DECL_SOFTMAX_FN(SM_NAME)
{
    __m256 vm = _mm256_set1_ps(-INFINITY);
    int j = 0;
#if SM_W16
    for (; j + 16 <= n; j += 16) {
        const __m512 v = _mm512_loadu_ps(x + j);
        vm = _mm256_max_ps(vm, _mm256_max_ps(gl512_lo_ps(v), gl512_hi_ps(v)));
    }
#endif
    for (; j + 8 <= n; j += 8)
        vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + j));
    float mx = gl_hmax8_ps(vm);
    for (; j < n; j++)
        mx = x[j] > mx ? x[j] : mx;
    const __m256 m8 = _mm256_set1_ps(mx);
    __m256 vs = _mm256_setzero_ps();
    j = 0;
#if SM_W16
    const __m512 m16 = _mm512_set1_ps(mx);
    for (; j + 16 <= n; j += 16) {
        const __m512 e = gl_exp16_ps(_mm512_sub_ps(_mm512_loadu_ps(x + j), m16));
        _mm512_storeu_ps(x + j, e);
        vs = _mm256_add_ps(_mm256_add_ps(vs, gl512_lo_ps(e)), gl512_hi_ps(e));
    }
#endif
    for (; j + 8 <= n; j += 8) {
        const __m256 e = gl_exp8_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), m8));
        _mm256_storeu_ps(x + j, e);
        vs = _mm256_add_ps(vs, e);
    }
    float sum = gl_hsum8_ps(vs);
    if (j < n) {
        const int m = n - j;
        __m256 e = gl_exp8_ps(_mm256_sub_ps(gl_load_part_f32(x + j, m), m8));
        e = _mm256_and_ps(e, _mm256_castsi256_ps(gl_tail_mask8(m)));
        _mm256_maskstore_ps(x + j, gl_tail_mask8(m), e);
        sum += gl_hsum8_ps(e);
    }
    const __m256 inv = _mm256_set1_ps(1.0f / sum);
    for (j = 0; j + 8 <= n; j += 8)
        _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), inv));
    for (; j < n; j++)
        x[j] *= 1.0f / sum;
    if (round_f16)
        gl_round_f16_avx2(x, n);
}

#undef SM_NAME
#undef SM_LINKAGE
#undef SM_W16
