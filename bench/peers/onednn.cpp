// oneDNN: the matmul primitive (f32, row-major A B) and convolution forward,
// grouped and depthwise too (NCHW tensors, layouts chosen by oneDNN:
// format_tag::any, reordered outside the timed loop, as benchdnn does).
// Threads: OMP_NUM_THREADS.
#include <dnnl.hpp>
#include <vector>
#include "timing.h"

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

struct Run {
  primitive prim;
  std::unordered_map<int, memory> args;
  stream *s;
};

static void call(void *arg) {
  Run *r = static_cast<Run *>(arg);
  r->prim.execute(*r->s, r->args);
  r->s->wait();
}

static memory filled(const memory::desc &d, engine &e, unsigned seed) {
  memory m(d, e);
  tb_peer_fill(static_cast<float *>(m.get_data_handle()), (long)(d.get_size() / sizeof(float)), seed);
  return m;
}

int main(int argc, char **argv) {
  tb_peer_problem P;
  int at = tb_peer_parse(argc, argv, &P);
  if (at < 0) return 2;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  Run run;
  run.s = &s;
  if (!P.conv) {
    memory::desc a({P.M, P.K}, dt::f32, tag::ab), b({P.K, P.N}, dt::f32, tag::ab),
        c({P.M, P.N}, dt::f32, tag::ab);
    matmul::primitive_desc pd(matmul::desc(a, b, c), eng);
    run.prim = matmul(pd);
    run.args = {{DNNL_ARG_SRC, filled(a, eng, 1)}, {DNNL_ARG_WEIGHTS, filled(b, eng, 2)},
                {DNNL_ARG_DST, memory(c, eng)}};
    fprintf(stderr, "onednn matmul: %s\n", pd.impl_info_str());
  } else {
    const int G = P.groups;
    // A grouped convolution's weights are 5-D, [G][F/G][C/G][KH][KW] (goihw).
    memory::dims src{P.n, P.c, P.h, P.w}, dst{P.n, P.f, P.oh, P.ow};
    memory::dims wei = G == 1 ? memory::dims{P.f, P.c, P.kh, P.kw}
                              : memory::dims{G, P.f / G, P.c / G, P.kh, P.kw};
    memory::dims strides{P.stride, P.stride}, pads{P.pad, P.pad};
    memory::desc src_any(src, dt::f32, tag::any), wei_any(wei, dt::f32, tag::any),
        dst_any(dst, dt::f32, tag::any);
    convolution_forward::primitive_desc pd(
        convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                  src_any, wei_any, dst_any, strides, pads, pads),
        eng);
    // Inputs in plain NCHW / OIHW, reordered once into the primitive's layouts.
    memory src_plain = filled(memory::desc(src, dt::f32, tag::nchw), eng, 1);
    memory wei_plain = filled(memory::desc(wei, dt::f32, G == 1 ? tag::oihw : tag::goihw), eng, 2);
    memory src_m(pd.src_desc(), eng), wei_m(pd.weights_desc(), eng), dst_m(pd.dst_desc(), eng);
    reorder(src_plain, src_m).execute(s, src_plain, src_m);
    reorder(wei_plain, wei_m).execute(s, wei_plain, wei_m);
    s.wait();
    run.prim = convolution_forward(pd);
    run.args = {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}};
    fprintf(stderr, "onednn conv: %s\n", pd.impl_info_str());
  }
  tb_peer_time(call, &run, atoi(argv[at]), atoi(argv[at + 1]), atof(argv[at + 2]));
  return 0;
}
