// Generates one pipeline with one of Halide 14's autoschedulers and compiles
// it ahead of time to a static library defining
//   int hpipe(halide_buffer_t *a, halide_buffer_t *b, halide_buffer_t *out)
// usage: halide_gen PLUGIN_DIR SCHEDULER OUT_PREFIX PARALLELISM
//          matmul M N K | conv N C H W F KH KW stride pad
// SCHEDULER is Adams2019, Mullapudi2016 or Li2018. Prints the seconds the
// autoscheduler took as JSON on stdout.
#include <chrono>
#include <cstdio>
#include <string>
#include "Halide.h"

using namespace Halide;

int main(int argc, char **argv) {
  if (argc < 9) {
    fprintf(stderr, "usage: %s PLUGIN_DIR SCHEDULER OUT_PREFIX PARALLELISM matmul M N K | conv ...\n",
            argv[0]);
    return 2;
  }
  std::string dir = argv[1], sched = argv[2], out = argv[3], kind = argv[5];
  int parallelism = atoi(argv[4]);
  std::string lib = sched == "Adams2019"       ? "adams2019"
                    : sched == "Mullapudi2016" ? "mullapudi2016"
                                               : "li2018";
  load_plugin(dir + "/libautoschedule_" + lib + ".so");
  Var x("x"), y("y"), c("c"), n("n");
  Func f("out");
  std::vector<Argument> args;
  ImageParam a(Float(32), kind == "matmul" ? 2 : 4, "a"), b(Float(32), kind == "matmul" ? 2 : 4, "b");
  if (kind == "matmul") {
    int M = atoi(argv[6]), N = atoi(argv[7]), K = atoi(argv[8]);
    RDom k(0, K, "k");
    // out(j, i) = sum_k a(k, i) * b(j, k): row-major C[M][N] = A[M][K] B[K][N].
    // The reduction is its own Func, read by the output (as in Halide's
    // apps/mat_mul_generator): an update of the output Func itself can only be
    // scheduled at root, with the reduction loop innermost (one accumulator
    // vector, no register tile), and Adams2019 then ran ~7x slower.
    Func prod("prod");
    prod(x, y) = 0.0f;
    prod(x, y) += a(k, y) * b(x, k);
    f(x, y) = prod(x, y);
    a.dim(0).set_estimate(0, K).dim(1).set_estimate(0, M);
    b.dim(0).set_estimate(0, N).dim(1).set_estimate(0, K);
    f.set_estimate(x, 0, N).set_estimate(y, 0, M);
  } else {
    if (argc < 15) return 2;
    int N = atoi(argv[6]), C = atoi(argv[7]), H = atoi(argv[8]), W = atoi(argv[9]);
    int F = atoi(argv[10]), KH = atoi(argv[11]), KW = atoi(argv[12]);
    int stride = atoi(argv[13]), pad = atoi(argv[14]);
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    // NCHW input a(x, y, c, n) already zero-padded by `pad` on each side (as in
    // Halide's apps/conv_layer; the harness passes a padded buffer), OIHW weights
    // b(kx, ky, c, f), output out(x, y, f, n).
    RDom r(0, KW, 0, KH, 0, C, "r");
    // The reduction is its own Func read by the output, as for matmul (and as
    // in apps/conv_layer).
    Func conv("conv");
    conv(x, y, c, n) = 0.0f;
    conv(x, y, c, n) += a(x * stride + r.x, y * stride + r.y, r.z, n) * b(r.x, r.y, r.z, c);
    f(x, y, c, n) = conv(x, y, c, n);
    a.dim(0).set_estimate(0, W + 2 * pad).dim(1).set_estimate(0, H + 2 * pad);
    a.dim(2).set_estimate(0, C).dim(3).set_estimate(0, N);
    b.dim(0).set_estimate(0, KW).dim(1).set_estimate(0, KH).dim(2).set_estimate(0, C).dim(3).set_estimate(0, F);
    f.set_estimate(x, 0, OW).set_estimate(y, 0, OH).set_estimate(c, 0, F).set_estimate(n, 0, N);
  }
  Target target = get_host_target();
  Pipeline p(f);
  MachineParams params(parallelism, 32 * 1024 * 1024, 40);
  auto t0 = std::chrono::steady_clock::now();
  p.auto_schedule(sched, target, params);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.compile_to_static_library(out, {a, b}, "hpipe", target);
  printf("{\"autoschedule_seconds\":%.6f,\"target\":\"%s\"}\n", seconds, target.to_string().c_str());
  return 0;
}
