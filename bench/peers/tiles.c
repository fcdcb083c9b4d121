/* Times several tunebook kernels of one workload in one process, interleaved:
 * tiles ROUNDS CALLS SIZE0 SIZE1 ... -- A.so B.so ...  Every kernel gets its
 * own buffers (the workload's inputs then outputs, seeded random values) and
 * its layout rewrite (tb_layout) once; then each round calls every kernel in
 * turn, one untimed call and CALLS timed ones, and keeps the fastest call.
 * Prints one JSON line: {"seconds":[[round 1: A, B, ...], [round 2: ...], ...]}.
 * Kernels timed seconds apart meet the same machine, so their ratio round by
 * round is steadier than figures taken minutes apart. */
#include <string.h>
#define TB_PEER_KERNELS
#include "timing.h"

#define MAX_KERNELS 32
#define MAX_BUFFERS 16

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s ROUNDS CALLS SIZE... -- KERNEL.so...\n", argv[0]);
    return 2;
  }
  int rounds = atoi(argv[1]), calls = atoi(argv[2]);
  long sizes[MAX_BUFFERS];
  int nbuf = 0, at = 3;
  for (; at < argc && strcmp(argv[at], "--") != 0; at++) {
    if (nbuf == MAX_BUFFERS) return 2;
    sizes[nbuf++] = atol(argv[at]);
  }
  at++;
  int nk = argc - at;
  if (rounds < 1 || calls < 1 || nbuf == 0 || nk < 1 || nk > MAX_KERNELS) return 2;
  tb_peer_kernel_fn timed[MAX_KERNELS];
  float *bufs[MAX_KERNELS][MAX_BUFFERS];
  for (int k = 0; k < nk; k++) {
    timed[k] = tb_peer_load_kernel(argv[at + k], sizes, nbuf, bufs[k]);
    if (!timed[k]) return 1;
  }
  printf("{\"seconds\":[");
  for (int r = 0; r < rounds; r++) {
    printf("%s[", r ? "," : "");
    for (int k = 0; k < nk; k++) {
      timed[k](bufs[k]);
      double best = 1e30;
      for (int c = 0; c < calls; c++) {
        double t0 = tb_peer_now_ms();
        timed[k](bufs[k]);
        double ms = tb_peer_now_ms() - t0;
        if (ms < best) best = ms;
      }
      printf("%s%.9g", k ? "," : "", best * 1e-3);
    }
    printf("]");
  }
  printf("]}\n");
  return 0;
}
