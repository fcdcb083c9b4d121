/* Timing shared by every peer harness of bench/peers.ts: `warmup` untimed
 * calls, then `repeat` repeats of `number` calls each (number grows until a
 * repeat lasts `min_ms`), as tunebook's own harness times its kernels. Prints
 * one JSON line: {"times":[seconds per call, one per repeat]}. */
#ifndef TB_PEER_TIMING_H
#define TB_PEER_TIMING_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double tb_peer_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static inline void tb_peer_time(void (*f)(void *), void *arg, int warmup, int repeat, double min_ms) {
  int number = 1;
  for (int i = 0; i < warmup; i++) f(arg);
  printf("{\"times\":[");
  for (int r = 0; r < repeat; r++) {
    for (;;) {
      double t0 = tb_peer_now_ms();
      for (int i = 0; i < number; i++) f(arg);
      double elapsed = tb_peer_now_ms() - t0;
      if (elapsed >= min_ms || number >= 1000000) {
        printf("%s%.9g", r ? "," : "", elapsed * 1e-3 / number);
        break;
      }
      int want = elapsed > 0 ? (int)(number * min_ms / elapsed) + 1 : number * 10;
      number = want > 2 * number ? want : 2 * number;
    }
  }
  printf("]}\n");
}

/* Seeded uniform values in [-1, 1). */
static inline void tb_peer_fill(float *x, long n, unsigned seed) {
  unsigned s = seed * 2654435761u + 1u;
  for (long i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)((s >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
  }
}

static inline float *tb_peer_alloc(long n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, (size_t)(n > 0 ? n : 1) * sizeof(float)) != 0) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return (float *)p;
}

#ifdef TB_PEER_KERNELS
#include <dlfcn.h>
typedef void (*tb_peer_kernel_fn)(float **);

/* A tunebook kernel (a shared object defining tb_kernel(float **bufs), and tb_layout and tb_compute
 * when it rewrites the layout of its weights) on n buffers of sizes[i] floats, allocated into bufs
 * and filled with seeded values (buffer i with seed i + 1). The layout rewrite runs once, as the
 * measurement harness does. Returns the function to time (tb_compute after tb_layout, else
 * tb_kernel), or NULL after saying why on stderr. */
static inline tb_peer_kernel_fn tb_peer_load_kernel(const char *path, const long *sizes, int n,
                                                    float **bufs) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return NULL;
  }
  tb_peer_kernel_fn kernel = (tb_peer_kernel_fn)dlsym(lib, "tb_kernel");
  if (!kernel) {
    fprintf(stderr, "no tb_kernel in %s\n", path);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    bufs[i] = tb_peer_alloc(sizes[i]);
    tb_peer_fill(bufs[i], sizes[i], (unsigned)i + 1);
  }
  tb_peer_kernel_fn layout = (tb_peer_kernel_fn)dlsym(lib, "tb_layout");
  tb_peer_kernel_fn compute = (tb_peer_kernel_fn)dlsym(lib, "tb_compute");
  if (layout && compute) {
    layout(bufs);
    return compute;
  }
  return kernel;
}
#endif

/* Problem of a harness: argv is "matmul M N K", "conv N C H W F KH KW stride pad" or
 * "gconv N C H W F KH KW stride pad groups" (a grouped convolution: input channel block g of C/groups
 * feeds output channel block g of F/groups; groups = C = F is a depthwise one), then
 * "warmup repeat min_ms". Returns the index of warmup in argv, or -1. */
typedef struct {
  int conv;
  int M, N, K;
  int n, c, h, w, f, kh, kw, stride, pad, oh, ow, groups;
} tb_peer_problem;

static inline int tb_peer_parse(int argc, char **argv, tb_peer_problem *p) {
  if (argc >= 8 && argv[1][0] == 'm') {
    p->conv = 0;
    p->M = atoi(argv[2]), p->N = atoi(argv[3]), p->K = atoi(argv[4]);
    return 5;
  }
  const int grouped = argv[1][0] == 'g';
  if (argc >= 14 + grouped && (argv[1][0] == 'c' || grouped)) {
    p->conv = 1;
    p->n = atoi(argv[2]), p->c = atoi(argv[3]), p->h = atoi(argv[4]), p->w = atoi(argv[5]);
    p->f = atoi(argv[6]), p->kh = atoi(argv[7]), p->kw = atoi(argv[8]);
    p->stride = atoi(argv[9]), p->pad = atoi(argv[10]);
    p->groups = grouped ? atoi(argv[11]) : 1;
    p->oh = (p->h + 2 * p->pad - p->kh) / p->stride + 1;
    p->ow = (p->w + 2 * p->pad - p->kw) / p->stride + 1;
    if (p->groups < 1 || p->c % p->groups || p->f % p->groups) {
      fprintf(stderr, "groups %d must divide C %d and F %d\n", p->groups, p->c, p->f);
      return -1;
    }
    return 11 + grouped;
  }
  fprintf(stderr,
          "usage: %s matmul M N K | conv N C H W F KH KW stride pad | gconv N C H W F KH KW stride pad "
          "groups, then warmup repeat min_ms\n",
          argv[0]);
  return -1;
}
#endif
