/* Times a tunebook kernel (a shared object defining tb_kernel(float **bufs)):
 * tunebook KERNEL.so SIZE0 SIZE1 ... -- warmup repeat min_ms. Buffers are
 * the workload's inputs then outputs; inputs get seeded random values. A
 * kernel that rewrites the layout of its weights (tb_layout, tb_compute) has
 * the rewrite run once and tb_compute timed, as the measurement harness does. */
#include <string.h>
#define TB_PEER_KERNELS
#include "timing.h"

static tb_peer_kernel_fn kernel;
static float *bufs[16];

static void call(void *arg) {
  (void)arg;
  kernel(bufs);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s KERNEL.so SIZE... -- warmup repeat min_ms\n", argv[0]);
    return 2;
  }
  long sizes[16];
  int at = 2, n = 0;
  for (; at < argc && strcmp(argv[at], "--") != 0 && n < 16; at++, n++) sizes[n] = atol(argv[at]);
  kernel = tb_peer_load_kernel(argv[1], sizes, n, bufs);
  if (!kernel) return 1;
  if (at + 3 >= argc) return 2;
  tb_peer_time(call, NULL, atoi(argv[at + 1]), atoi(argv[at + 2]), atof(argv[at + 3]));
  return 0;
}
