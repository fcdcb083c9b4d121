/* OpenBLAS cblas_sgemm, row-major C = A B (matmul only). Threads: OPENBLAS_NUM_THREADS;
 * kernels: OPENBLAS_CORETYPE (read when the library loads). */
#include <cblas.h>
#include "timing.h"

static tb_peer_problem P;
static float *A, *B, *C;

static void sgemm(void *arg) {
  (void)arg;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, P.M, P.N, P.K, 1.0f, A, P.K, B, P.N,
              0.0f, C, P.N);
}

int main(int argc, char **argv) {
  int at = tb_peer_parse(argc, argv, &P);
  if (at < 0) return 2;
  if (P.conv) {
    printf("{\"unavailable\":\"OpenBLAS has no convolution\"}\n");
    return 0;
  }
  A = tb_peer_alloc((long)P.M * P.K), B = tb_peer_alloc((long)P.K * P.N);
  C = tb_peer_alloc((long)P.M * P.N);
  tb_peer_fill(A, (long)P.M * P.K, 1), tb_peer_fill(B, (long)P.K * P.N, 2);
  fprintf(stderr, "openblas: %s\n", openblas_get_config());
  tb_peer_time(sgemm, NULL, atoi(argv[at]), atoi(argv[at + 1]), atof(argv[at + 2]));
  return 0;
}
