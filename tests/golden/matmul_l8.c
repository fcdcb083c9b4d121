#include <stdlib.h>
#include <string.h>

#if defined(TB_VECTOR_PRELUDE) && TB_VECTOR_PRELUDE != 8
#error kernels of different vector widths in one file
#endif
#ifndef TB_VECTOR_PRELUDE
#define TB_VECTOR_PRELUDE 8
typedef float tb_v8 __attribute__((vector_size(32)));
typedef int tb_v8i __attribute__((vector_size(32)));
static inline tb_v8 tb_loadu(const float *p) {
  tb_v8 v;
  __builtin_memcpy(&v, p, 32);
  return v;
}
static inline void tb_storeu(float *p, tb_v8 v) { __builtin_memcpy(p, &v, 32); }
static inline void tb_storeu_n(float *p, tb_v8 v, int n) {
  if (n >= 8) {
    tb_storeu(p, v);
    return;
  }
  typedef float tb_h8 __attribute__((vector_size(32)));
  typedef float tb_h4 __attribute__((vector_size(16)));
  typedef float tb_h2 __attribute__((vector_size(8)));
  tb_h8 o = v;
  tb_h4 q = __builtin_shufflevector(o, o, 0, 1, 2, 3);
  if (n >= 4) {
    __builtin_memcpy(p, &q, 16);
    q = __builtin_shufflevector(o, o, 4, 5, 6, 7);
    p += 4, n -= 4;
  }
  if (n >= 2) {
    tb_h2 d = __builtin_shufflevector(q, q, 0, 1);
    __builtin_memcpy(p, &d, 8);
    q = __builtin_shufflevector(q, q, 2, 3, 2, 3);
    p += 2, n -= 2;
  }
  if (n >= 1) p[0] = q[0];
}
/* Edge chunks: lanes selected by an 8-bit mask. */
static inline unsigned tb_lanes_lt(long n) {
  return n >= 8 ? 0xFFu : n <= 0 ? 0u : (1u << n) - 1u;
}
/* Lane i of the result is all ones where bit i of m is set (bits past 8 ignored). */
static inline tb_v8i tb_lane_bits(unsigned m) {
  const tb_v8i bit = {1, 2, 4, 8, 16, 32, 64, 128};
  return (((tb_v8i){0} + (int)(m & 0xFFu)) & bit) != 0;
}
/* Zeroes the lanes outside m. */
static inline tb_v8 tb_maskz(tb_v8 v, unsigned m) {
  return (tb_v8)((tb_v8i)v & tb_lane_bits(m));
}
#if defined(__AVX__) && (defined(__GNUC__) || defined(__clang__))
/* vmaskmovps: a masked-off lane is neither read nor written, and never faults. */
static inline tb_v8 tb_loadu_m(const float *p, unsigned m) {
  return __builtin_ia32_maskloadps256((const tb_v8 *)p, tb_lane_bits(m));
}
static inline void tb_storeu_m(float *p, tb_v8 v, unsigned m) {
  /* A mask of the first n lanes: plain stores (vmaskmovps stores are slow on AMD's cores). */
  if ((m & (m + 1)) == 0) {
    tb_storeu_n(p, v, __builtin_popcount(m));
    return;
  }
  __builtin_ia32_maskstoreps256((tb_v8 *)p, tb_lane_bits(m), v);
}
#else
static inline tb_v8 tb_loadu_m(const float *p, unsigned m) {
  tb_v8 v = {0};
  for (int i = 0; i < 8; i++) if (m >> i & 1) v[i] = p[i];
  return v;
}
static inline void tb_storeu_m(float *p, tb_v8 v, unsigned m) {
  for (int i = 0; i < 8; i++) if (m >> i & 1) p[i] = v[i];
}
#endif
/* Every second float from p (a stride-2 convolution's input row): two loads (the second
   masked off p[15]), one permute. */
static inline tb_v8 tb_loadu_s2(const float *p) {
  tb_v8 lo = tb_loadu(p), hi = tb_loadu_m(p + 8, 0x7Fu);
  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
}
/* Lanes i of m spread to the even bits 2i, so that lane i of the result reads p[2i]. */
static inline unsigned tb_even_bits(unsigned m) {
  unsigned e = 0;
  for (int i = 0; i < 4; i++) e |= (m >> i & 1u) << (2 * i);
  return e;
}
static inline tb_v8 tb_loadu_s2_m(const float *p, unsigned m) {
  tb_v8 lo = tb_loadu_m(p, tb_even_bits(m)), hi = tb_loadu_m(p + 8, tb_even_bits(m >> 4));
  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
}
/* Lane-wise max and min as C's a > b ? a : b and a < b ? a : b: a compare and a blend. */
static inline tb_v8 tb_vmax(tb_v8 a, tb_v8 b) {
  tb_v8i m = a > b;
  return (tb_v8)(((tb_v8i)a & m) | ((tb_v8i)b & ~m));
}
static inline tb_v8 tb_vmin(tb_v8 a, tb_v8 b) {
  tb_v8i m = a < b;
  return (tb_v8)(((tb_v8i)a & m) | ((tb_v8i)b & ~m));
}
/* Transposes 8 vectors in place (r[i][j] <- r[j][i]): unpack, shuffle within 128-bit halves,
   swap halves (16 shuffles in all). */
static inline void tb_transpose8(tb_v8 *r) {
  tb_v8 t[8], s[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[2 * i + 1] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int h = 0; h < 2; h++) {
    for (int k = 0; k < 2; k++) {
      tb_v8 a = t[4 * h + k], b = t[4 * h + k + 2];
      s[4 * h + 2 * k] = __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13);
      s[4 * h + 2 * k + 1] = __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
    }
  }
  for (int j = 0; j < 4; j++) {
    r[j] = __builtin_shufflevector(s[j], s[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    r[j + 4] = __builtin_shufflevector(s[j], s[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}
#endif /* TB_VECTOR_PRELUDE */

void tb_kernel(float **bufs) {
  float *restrict T_A = bufs[0];
  float *restrict T_B = bufs[1];
  float *restrict T_C = bufs[2];
  {
    const int v_C_i_0_j_0_fused = 0;
    for (int v_C_i_1 = 0; v_C_i_1 < 4; ++v_C_i_1) {
      {
        const int v_C_j_1 = 0;
        const int m_C_local_0 = (((v_C_i_0_j_0_fused * 4) + v_C_i_1) * 16);
        const int m_C_local_1 = (v_C_j_1 * 64);
        {
          float T_C_local[1024] __attribute__((aligned(64)));
          for (int v_C_local_i = 0; v_C_local_i < 16; ++v_C_local_i) {
            {
              const int v_C_local_j = 0;
              tb_storeu(&T_C_local[(v_C_local_i * 64)], ((tb_v8){0} + 0.0f));
            }
            {
              const int v_C_local_j = 8;
              tb_storeu(&T_C_local[((v_C_local_i * 64) + 8)], ((tb_v8){0} + 0.0f));
            }
            {
              const int v_C_local_j = 16;
              tb_storeu(&T_C_local[((v_C_local_i * 64) + 16)], ((tb_v8){0} + 0.0f));
            }
            {
              const int v_C_local_j = 24;
              tb_storeu(&T_C_local[((v_C_local_i * 64) + 24)], ((tb_v8){0} + 0.0f));
            }
            {
              const int v_C_local_j = 32;
              tb_storeu(&T_C_local[((v_C_local_i * 64) + 32)], ((tb_v8){0} + 0.0f));
            }
            {
              const int v_C_local_j = 40;
              tb_storeu(&T_C_local[((v_C_local_i * 64) + 40)], ((tb_v8){0} + 0.0f));
            }
            {
              const int v_C_local_j = 48;
              tb_storeu(&T_C_local[((v_C_local_i * 64) + 48)], ((tb_v8){0} + 0.0f));
            }
            {
              const int v_C_local_j = 56;
              tb_storeu(&T_C_local[((v_C_local_i * 64) + 56)], ((tb_v8){0} + 0.0f));
            }
          }
          {
            const int v_C_local_k_0 = 0;
            for (int v_C_local_k_1 = 0; v_C_local_k_1 < 64; ++v_C_local_k_1) {
              for (int v_C_local_i = 0; v_C_local_i < 16; ++v_C_local_i) {
                {
                  const int v_C_local_j = 0;
                  tb_storeu(&T_C_local[(v_C_local_i * 64)], tb_loadu(&T_C_local[(v_C_local_i * 64)]) + (T_A[(((m_C_local_0 * 64) + (v_C_local_i * 64)) + v_C_local_k_1)] * tb_loadu(&T_B[((v_C_local_k_1 * 64) + m_C_local_1)])));
                }
                {
                  const int v_C_local_j = 8;
                  tb_storeu(&T_C_local[((v_C_local_i * 64) + 8)], tb_loadu(&T_C_local[((v_C_local_i * 64) + 8)]) + (T_A[(((m_C_local_0 * 64) + (v_C_local_i * 64)) + v_C_local_k_1)] * tb_loadu(&T_B[(((v_C_local_k_1 * 64) + m_C_local_1) + 8)])));
                }
                {
                  const int v_C_local_j = 16;
                  tb_storeu(&T_C_local[((v_C_local_i * 64) + 16)], tb_loadu(&T_C_local[((v_C_local_i * 64) + 16)]) + (T_A[(((m_C_local_0 * 64) + (v_C_local_i * 64)) + v_C_local_k_1)] * tb_loadu(&T_B[(((v_C_local_k_1 * 64) + m_C_local_1) + 16)])));
                }
                {
                  const int v_C_local_j = 24;
                  tb_storeu(&T_C_local[((v_C_local_i * 64) + 24)], tb_loadu(&T_C_local[((v_C_local_i * 64) + 24)]) + (T_A[(((m_C_local_0 * 64) + (v_C_local_i * 64)) + v_C_local_k_1)] * tb_loadu(&T_B[(((v_C_local_k_1 * 64) + m_C_local_1) + 24)])));
                }
                {
                  const int v_C_local_j = 32;
                  tb_storeu(&T_C_local[((v_C_local_i * 64) + 32)], tb_loadu(&T_C_local[((v_C_local_i * 64) + 32)]) + (T_A[(((m_C_local_0 * 64) + (v_C_local_i * 64)) + v_C_local_k_1)] * tb_loadu(&T_B[(((v_C_local_k_1 * 64) + m_C_local_1) + 32)])));
                }
                {
                  const int v_C_local_j = 40;
                  tb_storeu(&T_C_local[((v_C_local_i * 64) + 40)], tb_loadu(&T_C_local[((v_C_local_i * 64) + 40)]) + (T_A[(((m_C_local_0 * 64) + (v_C_local_i * 64)) + v_C_local_k_1)] * tb_loadu(&T_B[(((v_C_local_k_1 * 64) + m_C_local_1) + 40)])));
                }
                {
                  const int v_C_local_j = 48;
                  tb_storeu(&T_C_local[((v_C_local_i * 64) + 48)], tb_loadu(&T_C_local[((v_C_local_i * 64) + 48)]) + (T_A[(((m_C_local_0 * 64) + (v_C_local_i * 64)) + v_C_local_k_1)] * tb_loadu(&T_B[(((v_C_local_k_1 * 64) + m_C_local_1) + 48)])));
                }
                {
                  const int v_C_local_j = 56;
                  tb_storeu(&T_C_local[((v_C_local_i * 64) + 56)], tb_loadu(&T_C_local[((v_C_local_i * 64) + 56)]) + (T_A[(((m_C_local_0 * 64) + (v_C_local_i * 64)) + v_C_local_k_1)] * tb_loadu(&T_B[(((v_C_local_k_1 * 64) + m_C_local_1) + 56)])));
                }
              }
            }
          }
          for (int v_C_i_2 = 0; v_C_i_2 < 16; ++v_C_i_2) {
            {
              const int v_C_j_2 = 0;
              tb_storeu(&T_C[((v_C_i_1 * 1024) + (v_C_i_2 * 64))], tb_loadu(&T_C_local[((((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + (m_C_local_0 * (-64))) + (m_C_local_1 * (-1)))]));
            }
            {
              const int v_C_j_2 = 8;
              tb_storeu(&T_C[(((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + 8)], tb_loadu(&T_C_local[(((((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + (m_C_local_0 * (-64))) + (m_C_local_1 * (-1))) + 8)]));
            }
            {
              const int v_C_j_2 = 16;
              tb_storeu(&T_C[(((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + 16)], tb_loadu(&T_C_local[(((((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + (m_C_local_0 * (-64))) + (m_C_local_1 * (-1))) + 16)]));
            }
            {
              const int v_C_j_2 = 24;
              tb_storeu(&T_C[(((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + 24)], tb_loadu(&T_C_local[(((((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + (m_C_local_0 * (-64))) + (m_C_local_1 * (-1))) + 24)]));
            }
            {
              const int v_C_j_2 = 32;
              tb_storeu(&T_C[(((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + 32)], tb_loadu(&T_C_local[(((((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + (m_C_local_0 * (-64))) + (m_C_local_1 * (-1))) + 32)]));
            }
            {
              const int v_C_j_2 = 40;
              tb_storeu(&T_C[(((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + 40)], tb_loadu(&T_C_local[(((((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + (m_C_local_0 * (-64))) + (m_C_local_1 * (-1))) + 40)]));
            }
            {
              const int v_C_j_2 = 48;
              tb_storeu(&T_C[(((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + 48)], tb_loadu(&T_C_local[(((((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + (m_C_local_0 * (-64))) + (m_C_local_1 * (-1))) + 48)]));
            }
            {
              const int v_C_j_2 = 56;
              tb_storeu(&T_C[(((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + 56)], tb_loadu(&T_C_local[(((((v_C_i_1 * 1024) + (v_C_i_2 * 64)) + (m_C_local_0 * (-64))) + (m_C_local_1 * (-1))) + 56)]));
            }
          }
        }
      }
    }
  }
}
