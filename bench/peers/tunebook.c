/* Times a tunebook kernel (a shared object defining tb_kernel(float **bufs)):
 * tunebook KERNEL.so SIZE0 SIZE1 ... -- warmup repeat min_ms. Buffers are
 * the workload's inputs then outputs; inputs get seeded random values. A
 * kernel that rewrites the layout of its weights (tb_layout, tb_compute) has
 * the rewrite run once and tb_compute timed, as the measurement harness does. */
#include <dlfcn.h>
#include <string.h>
#include "timing.h"

static void (*kernel)(float **);
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
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  kernel = (void (*)(float **))dlsym(lib, "tb_kernel");
  if (!kernel) {
    fprintf(stderr, "no tb_kernel in %s\n", argv[1]);
    return 1;
  }
  int at = 2, n = 0;
  for (; at < argc && strcmp(argv[at], "--") != 0 && n < 16; at++, n++) {
    long size = atol(argv[at]);
    bufs[n] = tb_peer_alloc(size);
    tb_peer_fill(bufs[n], size, (unsigned)n + 1);
  }
  if (at + 3 >= argc) return 2;
  void (*layout)(float **) = (void (*)(float **))dlsym(lib, "tb_layout");
  void (*compute)(float **) = (void (*)(float **))dlsym(lib, "tb_compute");
  if (layout && compute) {
    layout(bufs);
    kernel = compute;
  }
  tb_peer_time(call, NULL, atoi(argv[at + 1]), atoi(argv[at + 2]), atof(argv[at + 3]));
  return 0;
}
