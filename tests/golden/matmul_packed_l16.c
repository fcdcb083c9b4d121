#include <stdlib.h>
#include <string.h>

#if defined(TB_VECTOR_PRELUDE) && TB_VECTOR_PRELUDE != 16
#error kernels of different vector widths in one file
#endif
#ifndef TB_VECTOR_PRELUDE
#define TB_VECTOR_PRELUDE 16
typedef float tb_v16 __attribute__((vector_size(64)));
static inline tb_v16 tb_loadu(const float *p) {
  tb_v16 v;
  __builtin_memcpy(&v, p, 64);
  return v;
}
static inline void tb_storeu(float *p, tb_v16 v) { __builtin_memcpy(p, &v, 64); }
static inline void tb_storeu_n(float *p, tb_v16 v, int n) {
  if (n >= 16) {
    tb_storeu(p, v);
    return;
  }
  typedef float tb_h8 __attribute__((vector_size(32)));
  typedef float tb_h4 __attribute__((vector_size(16)));
  typedef float tb_h2 __attribute__((vector_size(8)));
  tb_h8 o = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  if (n >= 8) {
    __builtin_memcpy(p, &o, 32);
    o = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    p += 8, n -= 8;
  }
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
/* Edge chunks: lanes selected by a 16-bit mask (AVX-512 masked moves, never faulting). */
static inline unsigned tb_lanes_lt(long n) {
  return n >= 16 ? 0xFFFFu : n <= 0 ? 0u : (1u << n) - 1u;
}
typedef int tb_v16i __attribute__((vector_size(64)));
/* Zeroes the lanes outside m (any compiler with vector extensions; one masked move with AVX-512). */
static inline tb_v16 tb_maskz(tb_v16 v, unsigned m) {
  const tb_v16i bit = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
  return (tb_v16)((tb_v16i)v & ((((tb_v16i){0} + (int)m) & bit) != 0));
}
/* The compiler's own builtins behind immintrin.h's masked moves: that header alone costs gcc 0.25 s. */
#if defined(__AVX512F__) && (defined(__GNUC__) || defined(__clang__))
static inline tb_v16 tb_loadu_m(const float *p, unsigned m) {
  return __builtin_ia32_loadups512_mask(p, (tb_v16){0}, (unsigned short)m);
}
static inline void tb_storeu_m(float *p, tb_v16 v, unsigned m) {
  __builtin_ia32_storeups512_mask(p, v, (unsigned short)m);
}
/* Every second float from p (a stride-2 convolution's input row): two loads, one permute. */
static inline tb_v16 tb_loadu_s2(const float *p) {
  tb_v16 lo = tb_loadu(p), hi = tb_loadu_m(p + 16, 0x7FFFu);
  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
static inline tb_v16 tb_loadu_s2_m(const float *p, unsigned m) {
  const tb_v16i even = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  return __builtin_ia32_gathersiv16sf((tb_v16){0}, p, even, (unsigned short)m, 4);
}
#elif defined(__AVX__) && (defined(__GNUC__) || defined(__clang__))
/* AVX and AVX2 (no AVX-512): each half of a vector by vmaskmovps, which never faults on a masked lane. */
typedef float tb_v8 __attribute__((vector_size(32)));
typedef int tb_v8i __attribute__((vector_size(32)));
typedef float tb_v8a __attribute__((vector_size(32), may_alias));
/* Lane i of the result is all ones where bit i of m is set (bits past 8 ignored). */
static inline tb_v8i tb_lane_bits(unsigned m) {
  const tb_v8i bit = {1, 2, 4, 8, 16, 32, 64, 128};
  return (((tb_v8i){0} + (int)(m & 0xFFu)) & bit) != 0;
}
static inline tb_v16 tb_loadu_m(const float *p, unsigned m) {
  tb_v8 lo = __builtin_ia32_maskloadps256((const tb_v8 *)p, tb_lane_bits(m));
  tb_v8 hi = __builtin_ia32_maskloadps256((const tb_v8 *)(p + 8), tb_lane_bits(m >> 8));
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
static inline void tb_storeu_m(float *p, tb_v16 v, unsigned m) {
  /* A mask of the first n lanes: plain stores (vmaskmovps stores are slow on AMD's cores). */
  if ((m & (m + 1)) == 0) {
    tb_storeu_n(p, v, __builtin_popcount(m));
    return;
  }
  tb_v8 lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  tb_v8 hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  __builtin_ia32_maskstoreps256((tb_v8 *)p, tb_lane_bits(m), lo);
  __builtin_ia32_maskstoreps256((tb_v8 *)(p + 8), tb_lane_bits(m >> 8), hi);
}
/* Every second float from p: two loads (the second masked off p[31]), one permute. */
static inline tb_v16 tb_loadu_s2(const float *p) {
  tb_v16 lo = tb_loadu(p), hi = tb_loadu_m(p + 16, 0x7FFFu);
  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
/* Lanes i of m spread to the even bits 2i, so that lane i of the result reads p[2i]. */
static inline unsigned tb_even_bits(unsigned m) {
  unsigned e = 0;
  for (int i = 0; i < 8; i++) e |= (m >> i & 1u) << (2 * i);
  return e;
}
static inline tb_v16 tb_loadu_s2_m(const float *p, unsigned m) {
  tb_v16 lo = tb_loadu_m(p, tb_even_bits(m)), hi = tb_loadu_m(p + 16, tb_even_bits(m >> 8));
  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
#else
static inline tb_v16 tb_loadu_m(const float *p, unsigned m) {
  tb_v16 v = {0};
  for (int i = 0; i < 16; i++) if (m >> i & 1) v[i] = p[i];
  return v;
}
static inline void tb_storeu_m(float *p, tb_v16 v, unsigned m) {
  for (int i = 0; i < 16; i++) if (m >> i & 1) p[i] = v[i];
}
static inline tb_v16 tb_loadu_s2_m(const float *p, unsigned m) {
  tb_v16 v = {0};
  for (int i = 0; i < 16; i++) if (m >> i & 1) v[i] = p[2 * i];
  return v;
}
static inline tb_v16 tb_loadu_s2(const float *p) { return tb_loadu_s2_m(p, 0xFFFFu); }
#endif
/* Lane-wise max and min as C's a > b ? a : b and a < b ? a : b: a compare and a blend. */
static inline tb_v16 tb_vmax(tb_v16 a, tb_v16 b) {
  tb_v16i m = a > b;
  return (tb_v16)(((tb_v16i)a & m) | ((tb_v16i)b & ~m));
}
static inline tb_v16 tb_vmin(tb_v16 a, tb_v16 b) {
  tb_v16i m = a < b;
  return (tb_v16)(((tb_v16i)a & m) | ((tb_v16i)b & ~m));
}
#if !defined(__AVX512F__) && defined(__AVX__) && (defined(__GNUC__) || defined(__clang__))
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
/* Transposes 16 vectors in place (r[i][j] <- r[j][i]) as four 8 x 8 blocks of halves: AVX has
   no 16-lane shuffle, and gcc writes the interleaving below lane by lane there. */
static inline void tb_transpose16(tb_v16 *r) {
  tb_v8a *h = (tb_v8a *)r; /* h[2 * i] and h[2 * i + 1]: the halves of r[i] */
  tb_v8 q[4][8];
  for (int i = 0; i < 8; i++) {
    q[0][i] = h[2 * i];
    q[1][i] = h[2 * i + 16];
    q[2][i] = h[2 * i + 1];
    q[3][i] = h[2 * i + 17];
  }
  for (int b = 0; b < 4; b++) tb_transpose8(q[b]);
  for (int j = 0; j < 8; j++) {
    h[2 * j] = q[0][j];
    h[2 * j + 1] = q[1][j];
    h[2 * j + 16] = q[2][j];
    h[2 * j + 17] = q[3][j];
  }
}
#else
/* Transposes 16 vectors in place (r[i][j] <- r[j][i]): four rounds of interleaving. */
static inline void tb_transpose16(tb_v16 *r) {
  for (int round = 0; round < 4; round++) {
    tb_v16 t[16];
    for (int i = 0; i < 8; i++) {
      t[2 * i] = __builtin_shufflevector(r[i], r[i + 8], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      t[2 * i + 1] = __builtin_shufflevector(r[i], r[i + 8], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
  }
}
#endif
#endif /* TB_VECTOR_PRELUDE */

void tb_kernel(float **bufs) {
  float *restrict T_A = bufs[0];
  float *restrict T_B = bufs[1];
  float *restrict T_C = bufs[2];
  {
    const int v_C_j_0 = 0;
    for (int v_C_i_0 = 0; v_C_i_0 < 2; ++v_C_i_0) {
      for (int v_C_j_1 = 0; v_C_j_1 < 16; ++v_C_j_1) {
        if ((((v_C_j_0 * 16) + v_C_j_1) < 2)) {
          for (int v_C_i_1 = 0; v_C_i_1 < 16; ++v_C_i_1) {
            if ((((v_C_i_0 * 16) + v_C_i_1) < 24)) {
              {
                const int v_C_i_2 = 0;
                if ((((((v_C_i_0 * 16) + v_C_i_1) * 4) + v_C_i_2) < 96)) {
                  {
                    const int v_C_j_2 = 0;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 15) < 96)) {
                      tb_storeu(&T_C[(((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64))], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 0)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[(((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64))], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 16;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 31) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 16)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 16)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 16)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 32;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 47) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 32)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 32)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 32)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 48;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 63) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 48)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 48)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 48)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                }
              }
              {
                const int v_C_i_2 = 1;
                if ((((((v_C_i_0 * 16) + v_C_i_1) * 4) + v_C_i_2) < 96)) {
                  {
                    const int v_C_j_2 = 0;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 15) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 96)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 0)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 96)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 16;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 31) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 112)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 16)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 112)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 32;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 47) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 128)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 32)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 128)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 48;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 63) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 144)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 48)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 144)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                }
              }
              {
                const int v_C_i_2 = 2;
                if ((((((v_C_i_0 * 16) + v_C_i_1) * 4) + v_C_i_2) < 96)) {
                  {
                    const int v_C_j_2 = 0;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 15) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 192)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 0)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 192)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 16;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 31) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 208)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 16)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 208)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 32;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 47) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 224)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 32)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 224)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 48;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 63) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 240)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 48)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 240)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                }
              }
              {
                const int v_C_i_2 = 3;
                if ((((((v_C_i_0 * 16) + v_C_i_1) * 4) + v_C_i_2) < 96)) {
                  {
                    const int v_C_j_2 = 0;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 15) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 288)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 0)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 288)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 16;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 31) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 304)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 16)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 304)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 32;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 47) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 320)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 32)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 320)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                  {
                    const int v_C_j_2 = 48;
                    if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 63) < 96)) {
                      tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 336)], ((tb_v16){0} + 0.0f));
                    } else {
                      {
                        const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 48)));
                        const unsigned tb_m = tb_g;
                        if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 336)], ((tb_v16){0} + 0.0f), tb_g);
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    {
      const int v_C_k_0 = 0;
      for (int v_C_i_0 = 0; v_C_i_0 < 2; ++v_C_i_0) {
        for (int v_C_j_1 = 0; v_C_j_1 < 16; ++v_C_j_1) {
          if ((((v_C_j_0 * 16) + v_C_j_1) < 2)) {
            for (int v_C_i_1 = 0; v_C_i_1 < 16; ++v_C_i_1) {
              if ((((v_C_i_0 * 16) + v_C_i_1) < 24)) {
                for (int v_C_k_1 = 0; v_C_k_1 < 256; ++v_C_k_1) {
                  if ((((v_C_k_0 * 256) + v_C_k_1) < 64)) {
                    {
                      const int v_C_i_2 = 0;
                      if ((((((v_C_i_0 * 16) + v_C_i_1) * 4) + v_C_i_2) < 96)) {
                        {
                          const int v_C_j_2 = 0;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 15) < 96)) {
                            tb_storeu(&T_C[(((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64))], tb_loadu(&T_C[(((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64))]) + (T_A[(((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1)] * tb_loadu(&T_B[((v_C_k_1 * 96) + (v_C_j_1 * 64))])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 0)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[(((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64))], tb_loadu_m(&T_C[(((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64))], tb_g) + (T_A[(((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1)] * tb_loadu_m(&T_B[((v_C_k_1 * 96) + (v_C_j_1 * 64))], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 16;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 31) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 16)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 16)]) + (T_A[(((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 16)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 16)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 16)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 16)], tb_g) + (T_A[(((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 16)], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 32;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 47) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 32)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 32)]) + (T_A[(((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 32)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 32)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 32)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 32)], tb_g) + (T_A[(((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 32)], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 48;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 63) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 48)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 48)]) + (T_A[(((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 48)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 48)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 48)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 48)], tb_g) + (T_A[(((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 48)], tb_m)), tb_g);
                            }
                          }
                        }
                      }
                    }
                    {
                      const int v_C_i_2 = 1;
                      if ((((((v_C_i_0 * 16) + v_C_i_1) * 4) + v_C_i_2) < 96)) {
                        {
                          const int v_C_j_2 = 0;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 15) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 96)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 96)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 64)] * tb_loadu(&T_B[((v_C_k_1 * 96) + (v_C_j_1 * 64))])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 0)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 96)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 96)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 64)] * tb_loadu_m(&T_B[((v_C_k_1 * 96) + (v_C_j_1 * 64))], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 16;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 31) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 112)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 112)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 64)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 16)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 16)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 112)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 112)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 64)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 16)], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 32;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 47) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 128)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 128)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 64)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 32)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 32)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 128)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 128)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 64)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 32)], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 48;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 63) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 144)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 144)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 64)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 48)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 48)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 144)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 144)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 64)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 48)], tb_m)), tb_g);
                            }
                          }
                        }
                      }
                    }
                    {
                      const int v_C_i_2 = 2;
                      if ((((((v_C_i_0 * 16) + v_C_i_1) * 4) + v_C_i_2) < 96)) {
                        {
                          const int v_C_j_2 = 0;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 15) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 192)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 192)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 128)] * tb_loadu(&T_B[((v_C_k_1 * 96) + (v_C_j_1 * 64))])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 0)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 192)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 192)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 128)] * tb_loadu_m(&T_B[((v_C_k_1 * 96) + (v_C_j_1 * 64))], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 16;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 31) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 208)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 208)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 128)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 16)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 16)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 208)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 208)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 128)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 16)], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 32;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 47) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 224)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 224)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 128)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 32)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 32)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 224)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 224)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 128)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 32)], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 48;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 63) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 240)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 240)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 128)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 48)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 48)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 240)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 240)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 128)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 48)], tb_m)), tb_g);
                            }
                          }
                        }
                      }
                    }
                    {
                      const int v_C_i_2 = 3;
                      if ((((((v_C_i_0 * 16) + v_C_i_1) * 4) + v_C_i_2) < 96)) {
                        {
                          const int v_C_j_2 = 0;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 15) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 288)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 288)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 192)] * tb_loadu(&T_B[((v_C_k_1 * 96) + (v_C_j_1 * 64))])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 0)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 288)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 288)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 192)] * tb_loadu_m(&T_B[((v_C_k_1 * 96) + (v_C_j_1 * 64))], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 16;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 31) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 304)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 304)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 192)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 16)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 16)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 304)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 304)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 192)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 16)], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 32;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 47) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 320)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 320)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 192)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 32)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 32)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 320)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 320)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 192)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 32)], tb_m)), tb_g);
                            }
                          }
                        }
                        {
                          const int v_C_j_2 = 48;
                          if ((((((v_C_j_0 * 16) + v_C_j_1) * 64) + 63) < 96)) {
                            tb_storeu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 336)], tb_loadu(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 336)]) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 192)] * tb_loadu(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 48)])));
                          } else {
                            {
                              const unsigned tb_g = tb_lanes_lt((96 - ((((v_C_j_0 * 16) + v_C_j_1) * 64) + 48)));
                              const unsigned tb_m = tb_g;
                              if (tb_m) tb_storeu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 336)], tb_loadu_m(&T_C[((((v_C_i_0 * 6144) + (v_C_i_1 * 384)) + (v_C_j_1 * 64)) + 336)], tb_g) + (T_A[((((v_C_i_0 * 4096) + (v_C_i_1 * 256)) + v_C_k_1) + 192)] * tb_loadu_m(&T_B[(((v_C_k_1 * 96) + (v_C_j_1 * 64)) + 48)], tb_m)), tb_g);
                            }
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}
