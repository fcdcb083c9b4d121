// Library peers of bench/gpu_peers.ts, timed between CUDA events (FP32 data):
// - tb_cublas_sgemm: C[M,N] = A[M,K] B[K,N] (row-major) with cublasSgemm, FP32 or TF32 math;
// - tb_cublas_dense: Y[M,N] = relu(X[M,K] W[N,K]^T + b[N]) as PyTorch's Linear + ReLU runs it on
//   cuBLAS: one cublasSgemm with W transposed, then one bias + ReLU kernel;
// - tb_cudnn_conv: cudnnConvolutionForward, NCHW, every forward algorithm tried, the fastest kept,
//   FP32 (CUDNN_FMA_MATH: no tensor cores) or TF32 (CUDNN_DEFAULT_MATH, as PyTorch allows TF32).
// The libraries are loaded with dlopen (paths from the caller), so the harness builds with nvcc
// alone, without cuBLAS or cuDNN headers or libraries; their enum values are written out below.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>

typedef int (*tb_create_t)(void **);
typedef int (*tb_destroy_t)(void *);
typedef int (*tb_math_t)(void *, int);
typedef int (*tb_sgemm_t)(void *, int, int, int, int, int, const float *, const float *, int,
                          const float *, int, const float *, float *, int);

static char tb_msg[512];

extern "C" int tb_cuda_device_count(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  return e == cudaSuccess ? n : -(int)e;
}

extern "C" const char *tb_cuda_error_string(int code) {
  return cudaGetErrorString((cudaError_t)code);
}

/** What the last failing call of this harness said. */
extern "C" const char *tb_peer_message(void) { return tb_msg; }

__global__ void tb_fill(float *x, long n, float scale) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = scale * (float)((i * 7919) % 101 - 50);
}

static int tb_fail(const char *what, int code) {
  snprintf(tb_msg, sizeof tb_msg, "%s (%d)", what, code);
  return code ? code : -1;
}

/**
 * Times `repeat` repeats of `call()` between two CUDA events, the number of calls per repeat grown
 * until a repeat lasts `min_ms`; ms_per_call[r] is milliseconds per call. `call` returns 0 or an
 * error code (after writing tb_msg). Returns 0 or the first error.
 */
template <typename Call>
static int tb_time(Call call, int repeat, double min_ms, double *ms_per_call) {
  cudaEvent_t ev[2] = {0, 0};
  cudaError_t e;
  int rc = 0, number = 1;
  if ((e = cudaEventCreate(&ev[0])) != cudaSuccess || (e = cudaEventCreate(&ev[1])) != cudaSuccess) {
    rc = tb_fail(cudaGetErrorString(e), (int)e);
  }
  if (!rc && (rc = call()) == 0 && (e = cudaDeviceSynchronize()) != cudaSuccess) {
    rc = tb_fail(cudaGetErrorString(e), (int)e);  // the first call is the warm-up
  }
  for (int r = 0; r < repeat && !rc; ++r) {
    float ms = 0.0f;
    for (;;) {
      cudaEventRecord(ev[0], 0);
      for (int i = 0; i < number && !rc; ++i) rc = call();
      cudaEventRecord(ev[1], 0);
      if (rc) break;
      if ((e = cudaEventSynchronize(ev[1])) != cudaSuccess) {
        rc = tb_fail(cudaGetErrorString(e), (int)e);
        break;
      }
      cudaEventElapsedTime(&ms, ev[0], ev[1]);
      if ((double)ms >= min_ms || number >= (1 << 20)) break;
      number = ms > 0.0f ? (int)(number * min_ms / ms) + 1 : number * 10;
    }
    ms_per_call[r] = (double)ms / number;
  }
  if (ev[0]) cudaEventDestroy(ev[0]);
  if (ev[1]) cudaEventDestroy(ev[1]);
  return rc;
}

static void *tb_open(const char *lib) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) snprintf(tb_msg, sizeof tb_msg, "dlopen %s: %s", lib, dlerror());
  return h;
}

/** Device buffers of `n` floats each (0 on failure, with tb_msg). */
static float *tb_alloc(long n, float scale) {
  float *p = 0;
  cudaError_t e = cudaMalloc((void **)&p, (size_t)n * 4);
  if (e != cudaSuccess) {
    tb_fail(cudaGetErrorString(e), (int)e);
    return 0;
  }
  tb_fill<<<(unsigned)((n + 255) / 256), 256>>>(p, n, scale);
  return p;
}

struct tb_cublas {
  void *h = 0, *handle = 0;
  tb_destroy_t destroy = 0;
  tb_sgemm_t sgemm = 0;
  /** Loads cuBLAS, creates a handle in FP32 or TF32 math; 0 or an error code. */
  int open(const char *lib, int tf32) {
    if (!(h = tb_open(lib))) return -2;
    tb_create_t create = (tb_create_t)dlsym(h, "cublasCreate_v2");
    destroy = (tb_destroy_t)dlsym(h, "cublasDestroy_v2");
    tb_math_t math = (tb_math_t)dlsym(h, "cublasSetMathMode");
    sgemm = (tb_sgemm_t)dlsym(h, "cublasSgemm_v2");
    if (!create || !destroy || !math || !sgemm) {
      snprintf(tb_msg, sizeof tb_msg, "%s lacks a cuBLAS v2 symbol", lib);
      return -3;
    }
    int s;
    if ((s = create(&handle)) != 0) return tb_fail("cublasCreate", s);
    // CUBLAS_TF32_TENSOR_OP_MATH (3), else CUBLAS_DEFAULT_MATH (0, FP32).
    if ((s = math(handle, tf32 ? 3 : 0)) != 0) return tb_fail("cublasSetMathMode", s);
    return 0;
  }
  ~tb_cublas() {
    if (handle) destroy(handle);
  }
};

/**
 * Times cublasSgemm of row-major C[M,N] = A[M,K] B[K,N] (see tb_time). tf32: tensor-op math.
 * Returns 0, or an error code with tb_peer_message().
 */
extern "C" int tb_cublas_sgemm(const char *lib, int M, int N, int K, int tf32, int repeat,
                               double min_ms, double *ms_per_call) {
  tb_cublas cb;
  int rc = cb.open(lib, tf32);
  const float one = 1.0f, zero = 0.0f;
  float *A = rc ? 0 : tb_alloc((long)M * K, 0.01f);
  float *B = A ? tb_alloc((long)K * N, 0.02f) : 0;
  float *C = B ? tb_alloc((long)M * N, 0.0f) : 0;
  if (!rc && !C) rc = -1;
  if (!rc) {
    // Row-major C = A B is column-major C^T = B^T A^T: B is the left operand.
    rc = tb_time([&]() {
      int s = cb.sgemm(cb.handle, 0, 0, N, M, K, &one, B, N, A, K, &zero, C, N);
      return s ? tb_fail("cublasSgemm", s) : 0;
    }, repeat, min_ms, ms_per_call);
  }
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  return rc;
}

__global__ void tb_bias_relu(float *y, const float *b, long n, int N) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = y[i] + b[i % N];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}

/**
 * Times dense with bias and ReLU, Y[M,N] = relu(X[M,K] W[N,K]^T + b[N]) (row-major), the way
 * PyTorch's Linear + ReLU runs on cuBLAS: cublasSgemm with the weight transposed, then a bias +
 * ReLU kernel; both per call. Returns 0, or an error code with tb_peer_message().
 */
extern "C" int tb_cublas_dense(const char *lib, int M, int N, int K, int tf32, int repeat,
                               double min_ms, double *ms_per_call) {
  tb_cublas cb;
  int rc = cb.open(lib, tf32);
  const float one = 1.0f, zero = 0.0f;
  float *X = rc ? 0 : tb_alloc((long)M * K, 0.01f);
  float *W = X ? tb_alloc((long)N * K, 0.02f) : 0;
  float *b = W ? tb_alloc(N, 0.1f) : 0;
  float *Y = b ? tb_alloc((long)M * N, 0.0f) : 0;
  if (!rc && !Y) rc = -1;
  if (!rc) {
    long n = (long)M * N;
    // Column-major Y^T[N,M] = W X^T: W (column-major K x N, ld K) transposed times X^T (ld K).
    rc = tb_time([&]() {
      int s = cb.sgemm(cb.handle, 1, 0, N, M, K, &one, W, K, X, K, &zero, Y, N);
      if (s) return tb_fail("cublasSgemm", s);
      tb_bias_relu<<<(unsigned)((n + 255) / 256), 256>>>(Y, b, n, N);
      cudaError_t e = cudaGetLastError();
      return e == cudaSuccess ? 0 : tb_fail(cudaGetErrorString(e), (int)e);
    }, repeat, min_ms, ms_per_call);
  }
  cudaFree(X);
  cudaFree(W);
  cudaFree(b);
  cudaFree(Y);
  return rc;
}

// cuDNN through dlopen: handles are pointers, statuses ints; enum values of cudnn_graph.h /
// cudnn_ops.h / cudnn_cnn.h (stable across cuDNN 8 and 9).
enum {
  TB_CUDNN_TENSOR_NCHW = 0,
  TB_CUDNN_DATA_FLOAT = 0,
  TB_CUDNN_CROSS_CORRELATION = 1,
  TB_CUDNN_DEFAULT_MATH = 0,
  TB_CUDNN_FMA_MATH = 3,
  TB_CUDNN_FWD_ALGOS = 8,  // IMPLICIT_GEMM ... WINOGRAD_NONFUSED
};
typedef int (*tb_dnn_create_t)(void **);
typedef int (*tb_dnn_set4d_t)(void *, int, int, int, int, int, int);
typedef int (*tb_dnn_conv2d_t)(void *, int, int, int, int, int, int, int, int);
typedef int (*tb_dnn_math_t)(void *, int);
typedef int (*tb_dnn_ws_t)(void *, void *, void *, void *, void *, int, size_t *);
typedef int (*tb_dnn_fwd_t)(void *, const void *, void *, const void *, void *, const void *,
                            void *, int, void *, size_t, const void *, void *, void *);
typedef size_t (*tb_dnn_version_t)(void);
typedef int (*tb_dnn_destroy_t)(void *);

/** cuDNN's version number (e.g. 90100), or 0 when `lib` does not load. */
extern "C" long tb_cudnn_version(const char *lib) {
  void *h = tb_open(lib);
  tb_dnn_version_t v = h ? (tb_dnn_version_t)dlsym(h, "cudnnGetVersion") : 0;
  return v ? (long)v() : 0;
}

/**
 * Times cudnnConvolutionForward of an NCHW conv2d (input N,C,H,W; F filters KH x KW; stride;
 * pad) with the fastest of the forward algorithms that run (each timed once first, as PyTorch's
 * cudnn.benchmark picks); *algo_out is the one kept. tf32: CUDNN_DEFAULT_MATH (tensor cores with
 * TF32 allowed), else CUDNN_FMA_MATH. Returns 0, or an error code with tb_peer_message().
 */
extern "C" int tb_cudnn_conv(const char *lib, int N, int C, int H, int W, int F, int KH, int KW,
                             int stride, int pad, int tf32, int repeat, double min_ms,
                             double *ms_per_call, int *algo_out) {
  void *h = tb_open(lib);
  if (!h) return -2;
#define TB_SYM(type, name) type name = (type)dlsym(h, #name)
  TB_SYM(tb_dnn_create_t, cudnnCreate);
  TB_SYM(tb_dnn_create_t, cudnnCreateTensorDescriptor);
  TB_SYM(tb_dnn_create_t, cudnnCreateFilterDescriptor);
  TB_SYM(tb_dnn_create_t, cudnnCreateConvolutionDescriptor);
  TB_SYM(tb_dnn_set4d_t, cudnnSetTensor4dDescriptor);
  TB_SYM(tb_dnn_set4d_t, cudnnSetFilter4dDescriptor);
  TB_SYM(tb_dnn_conv2d_t, cudnnSetConvolution2dDescriptor);
  TB_SYM(tb_dnn_math_t, cudnnSetConvolutionMathType);
  TB_SYM(tb_dnn_ws_t, cudnnGetConvolutionForwardWorkspaceSize);
  TB_SYM(tb_dnn_fwd_t, cudnnConvolutionForward);
  TB_SYM(tb_dnn_destroy_t, cudnnDestroy);
  TB_SYM(tb_dnn_destroy_t, cudnnDestroyTensorDescriptor);
  TB_SYM(tb_dnn_destroy_t, cudnnDestroyFilterDescriptor);
  TB_SYM(tb_dnn_destroy_t, cudnnDestroyConvolutionDescriptor);
#undef TB_SYM
  if (!cudnnCreate || !cudnnCreateTensorDescriptor || !cudnnCreateFilterDescriptor ||
      !cudnnCreateConvolutionDescriptor || !cudnnSetTensor4dDescriptor ||
      !cudnnSetFilter4dDescriptor || !cudnnSetConvolution2dDescriptor ||
      !cudnnSetConvolutionMathType || !cudnnGetConvolutionForwardWorkspaceSize ||
      !cudnnConvolutionForward || !cudnnDestroy || !cudnnDestroyTensorDescriptor ||
      !cudnnDestroyFilterDescriptor || !cudnnDestroyConvolutionDescriptor) {
    snprintf(tb_msg, sizeof tb_msg, "%s lacks a cuDNN convolution symbol", lib);
    return -3;
  }
  const int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
  void *handle = 0, *xd = 0, *yd = 0, *wd = 0, *cd = 0, *ws = 0;
  float *x = 0, *w = 0, *y = 0;
  const float one = 1.0f, zero = 0.0f;
  int rc = 0, s, best = -1;
  size_t best_ws = 0;
  if ((s = cudnnCreate(&handle)) || (s = cudnnCreateTensorDescriptor(&xd)) ||
      (s = cudnnCreateTensorDescriptor(&yd)) || (s = cudnnCreateFilterDescriptor(&wd)) ||
      (s = cudnnCreateConvolutionDescriptor(&cd)) ||
      (s = cudnnSetTensor4dDescriptor(xd, TB_CUDNN_TENSOR_NCHW, TB_CUDNN_DATA_FLOAT, N, C, H, W)) ||
      (s = cudnnSetTensor4dDescriptor(yd, TB_CUDNN_TENSOR_NCHW, TB_CUDNN_DATA_FLOAT, N, F, OH, OW)) ||
      // Filter descriptors take the data type first, then the format.
      (s = cudnnSetFilter4dDescriptor(wd, TB_CUDNN_DATA_FLOAT, TB_CUDNN_TENSOR_NCHW, F, C, KH, KW)) ||
      (s = cudnnSetConvolution2dDescriptor(cd, pad, pad, stride, stride, 1, 1,
                                           TB_CUDNN_CROSS_CORRELATION, TB_CUDNN_DATA_FLOAT)) ||
      (s = cudnnSetConvolutionMathType(cd, tf32 ? TB_CUDNN_DEFAULT_MATH : TB_CUDNN_FMA_MATH))) {
    rc = tb_fail("cuDNN descriptor setup", s);
  }
  if (!rc && (!(x = tb_alloc((long)N * C * H * W, 0.01f)) || !(w = tb_alloc((long)F * C * KH * KW, 0.02f)) ||
              !(y = tb_alloc((long)N * F * OH * OW, 0.0f)))) {
    rc = -1;
  }
  // The fastest algorithm that runs: one timed repeat of each.
  double best_ms = 0.0;
  for (int a = 0; a < TB_CUDNN_FWD_ALGOS && !rc; ++a) {
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(handle, xd, wd, cd, yd, a, &bytes)) continue;
    void *buf = 0;
    if (bytes && cudaMalloc(&buf, bytes) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    double ms = 0.0;
    int failed = tb_time([&]() {
      int st = cudnnConvolutionForward(handle, &one, xd, x, wd, w, cd, a, buf, bytes, &zero, yd, y);
      return st ? tb_fail("cudnnConvolutionForward", st) : 0;
    }, 1, min_ms / 4, &ms);
    cudaFree(buf);
    cudaGetLastError();
    if (!failed && (best < 0 || ms < best_ms)) best = a, best_ms = ms, best_ws = bytes;
  }
  if (!rc && best < 0) {
    snprintf(tb_msg, sizeof tb_msg, "no cuDNN forward algorithm runs this convolution");
    rc = -4;
  }
  if (!rc && best_ws && (s = (int)cudaMalloc(&ws, best_ws)) != 0) rc = tb_fail("cudaMalloc", s);
  if (!rc) {
    *algo_out = best;
    rc = tb_time([&]() {
      int st = cudnnConvolutionForward(handle, &one, xd, x, wd, w, cd, best, ws, best_ws, &zero,
                                       yd, y);
      return st ? tb_fail("cudnnConvolutionForward", st) : 0;
    }, repeat, min_ms, ms_per_call);
  }
  cudaFree(ws);
  cudaFree(x);
  cudaFree(w);
  cudaFree(y);
  if (xd) cudnnDestroyTensorDescriptor(xd);
  if (yd) cudnnDestroyTensorDescriptor(yd);
  if (wd) cudnnDestroyFilterDescriptor(wd);
  if (cd) cudnnDestroyConvolutionDescriptor(cd);
  if (handle) cudnnDestroy(handle);
  return rc;
}
