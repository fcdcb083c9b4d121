// Times a Halide pipeline compiled by halide_gen (linked in as hpipe):
// halide_run matmul M N K | conv N C H W F KH KW stride pad, then warmup repeat min_ms.
// Threads: HL_NUM_THREADS.
#include "HalideBuffer.h"
#include "timing.h"

extern "C" int hpipe(halide_buffer_t *a, halide_buffer_t *b, halide_buffer_t *out);

using Halide::Runtime::Buffer;

struct Args {
  Buffer<float> *a, *b, *out;
};

static void call(void *arg) {
  Args *x = static_cast<Args *>(arg);
  if (hpipe(x->a->raw_buffer(), x->b->raw_buffer(), x->out->raw_buffer()) != 0) exit(1);
}

int main(int argc, char **argv) {
  tb_peer_problem P;
  int at = tb_peer_parse(argc, argv, &P);
  if (at < 0) return 2;
  Buffer<float> a, b, out;
  if (!P.conv) {
    a = Buffer<float>(P.K, P.M), b = Buffer<float>(P.N, P.K), out = Buffer<float>(P.N, P.M);
  } else {
    a = Buffer<float>(P.w + 2 * P.pad, P.h + 2 * P.pad, P.c, P.n), b = Buffer<float>(P.kw, P.kh, P.c, P.f);
    out = Buffer<float>(P.ow, P.oh, P.f, P.n);
  }
  tb_peer_fill(a.data(), (long)a.number_of_elements(), 1);
  tb_peer_fill(b.data(), (long)b.number_of_elements(), 2);
  Args args{&a, &b, &out};
  tb_peer_time(call, &args, atoi(argv[at]), atoi(argv[at + 1]), atof(argv[at + 2]));
  return 0;
}
