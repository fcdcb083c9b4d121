/* Naive loops, gcc -O3 -march=native -fopenmp: matmul in ikj order (parallel over i),
 * direct NCHW convolution, grouped too (parallel over output channels). */
#include "timing.h"

static tb_peer_problem P;
static float *A, *B, *C;

static void matmul(void *arg) {
  (void)arg;
  const int M = P.M, N = P.N, K = P.K;
#pragma omp parallel for
  for (int i = 0; i < M; i++) {
    float *c = C + (long)i * N;
    for (int j = 0; j < N; j++) c[j] = 0.0f;
    for (int k = 0; k < K; k++) {
      const float a = A[(long)i * K + k];
      const float *b = B + (long)k * N;
      for (int j = 0; j < N; j++) c[j] += a * b[j];
    }
  }
}

static void conv(void *arg) {
  (void)arg;
#pragma omp parallel for collapse(2)
  for (int n = 0; n < P.n; n++)
    for (int f = 0; f < P.f; f++) {
      float *o = C + ((long)n * P.f + f) * P.oh * P.ow;
      for (int i = 0; i < P.oh * P.ow; i++) o[i] = 0.0f;
      // Output channel f reads the input channels of its group; weights [F][C/groups][KH][KW].
      const int cg = P.c / P.groups, c0 = f / (P.f / P.groups) * cg;
      for (int c = 0; c < cg; c++)
        for (int ky = 0; ky < P.kh; ky++)
          for (int kx = 0; kx < P.kw; kx++) {
            const float wv = B[(((long)f * cg + c) * P.kh + ky) * P.kw + kx];
            const float *in = A + ((long)n * P.c + c0 + c) * P.h * P.w;
            for (int y = 0; y < P.oh; y++) {
              const int iy = y * P.stride + ky - P.pad;
              if (iy < 0 || iy >= P.h) continue;
              for (int x = 0; x < P.ow; x++) {
                const int ix = x * P.stride + kx - P.pad;
                if (ix >= 0 && ix < P.w) o[y * P.ow + x] += wv * in[iy * P.w + ix];
              }
            }
          }
    }
}

int main(int argc, char **argv) {
  int at = tb_peer_parse(argc, argv, &P);
  if (at < 0) return 2;
  long na, nb, nc;
  if (P.conv) {
    na = (long)P.n * P.c * P.h * P.w, nb = (long)P.f * (P.c / P.groups) * P.kh * P.kw;
    nc = (long)P.n * P.f * P.oh * P.ow;
  } else {
    na = (long)P.M * P.K, nb = (long)P.K * P.N, nc = (long)P.M * P.N;
  }
  A = tb_peer_alloc(na), B = tb_peer_alloc(nb), C = tb_peer_alloc(nc);
  tb_peer_fill(A, na, 1), tb_peer_fill(B, nb, 2);
  tb_peer_time(P.conv ? conv : matmul, NULL, atoi(argv[at]), atoi(argv[at + 1]), atof(argv[at + 2]));
  return 0;
}
