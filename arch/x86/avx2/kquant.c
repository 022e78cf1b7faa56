/* AVX2 plain-row products of the K-quants Q4_K, Q5_K, Q6_K (Q8_K
 * activations): kquant_ops.h's hooks in kquant_tmpl.h's row tiles. */
#include "arch/x86/avx2/avx2.h"
#include "arch/x86/avx2/util.h"

#define KQ_SFX                 avx2
#define KQ_NAME_Q4K            gl_matmul_q4_K_avx2
#define KQ_NAME_Q5K            gl_matmul_q5_K_avx2
#define KQ_NAME_Q6K            gl_matmul_q6_K_avx2
#define KQ_MADD_ACC(acc, p, s) _mm256_add_epi32(acc, _mm256_madd_epi16(p, s))
#include "arch/x86/avx2/kquant_ops.h"
