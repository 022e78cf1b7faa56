/* Element-wise float kernels on 16 lanes, included by kernels.c (static
 * functions, so the native and the SIMDe builds each get their own): the
 * attention softmax, SwiGLU and GELU. Each lane runs AVX2's operations in
 * AVX2's order (gl_exp16_ps is util.h's gl_exp8_ps lane for lane), and the
 * softmax adds its exponentials into AVX2's 8-lane sum in AVX2's order,
 * so every result is bit-identical to the AVX2 backend's: only the
 * exponentials, which are most of the work, run twice as wide. */

/* gl_exp8_scale of util.h on 16 lanes. This SIMDe release lacks the
 * 512-bit shifts and conversion: there the halves take AVX2's own code. */
GL_ALWAYS_INLINE __m512 exp16_scale(__m512 p, __m512 n)
{
#ifdef GL_USE_SIMDE
    return gl512_from_halves(gl_exp8_scale(gl512_lo_ps(p), gl512_lo_ps(n)),
                             gl_exp8_scale(gl512_hi_ps(p), gl512_hi_ps(n)));
#else
    const __m512i ni = _mm512_cvtps_epi32(n);
    const __m512i n1 = _mm512_srai_epi32(ni, 1);
    const __m512i n2 = _mm512_sub_epi32(ni, n1);
    const __m512 s1 =
        _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, _mm512_set1_epi32(127)), 23));
    const __m512 s2 =
        _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, _mm512_set1_epi32(127)), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
#endif
}

/* gl_exp8_ps of util.h on 16 lanes, the same operations per lane. */
GL_ALWAYS_INLINE __m512 gl_exp16_ps(__m512 x)
{
    x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.75f)), _mm512_set1_ps(-88.0f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return exp16_scale(p, n);
}

/* AVX2's softmax with the exponentials of each 16 scores in one vector */
#define SM_NAME    softmax_512
#define SM_LINKAGE static
#define SM_W16     1
#include "arch/x86/avx2/softmax_tmpl.h"

/* arch/x86/avx2/float.c's swiglu8 and gelu8, 16 lanes; tails go to AVX2's
 * kernels, which compute each element the same way. */
GL_ALWAYS_INLINE __m512 swiglu16(__m512 g, __m512 u)
{
    const __m512 e = gl_exp16_ps(_mm512_xor_ps(g, _mm512_set1_ps(-0.0f)));
    return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

static GL_DECL_SWIGLU_FN(swiglu_512)
{
    int j = 0;
    for (; j + 16 <= n; j += 16)
        _mm512_storeu_ps(out + j, swiglu16(_mm512_loadu_ps(gate + j), _mm512_loadu_ps(up + j)));
    if (j < n)
        gl_swiglu_avx2(out + j, gate + j, up + j, n - j);
}

GL_ALWAYS_INLINE __m512 gelu16(__m512 v)
{
    const __m512 c = _mm512_set1_ps(0.044715f);
    const __m512 nk2 = _mm512_set1_ps(-(2.0f * 0.7978845608028654f));
    const __m512 cube = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(c, v), v), v);
    const __m512 e = gl_exp16_ps(_mm512_mul_ps(nk2, _mm512_add_ps(v, cube)));
    return _mm512_div_ps(v, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

static GL_DECL_GELU_FN(gelu_512)
{
    int j = 0;
    for (; j + 16 <= n; j += 16)
        _mm512_storeu_ps(out + j, gelu16(_mm512_loadu_ps(x + j)));
    if (j < n)
        gl_gelu_avx2(out + j, x + j, n - j);
}
