// cuBLAS peer of bench/gpu_peers.ts: times C[M,N] = A[M,K] B[K,N] (row-major, FP32 data) with
// cublasSgemm in FP32 math or TF32 tensor-op math, between CUDA events. cuBLAS is loaded with
// dlopen (a path from the caller), so the harness builds without cuBLAS headers or libraries.
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
 * Times `repeat` repeats of cublasSgemm (number of calls per repeat grown until a repeat lasts
 * `min_ms`); ms_per_call[r] is milliseconds per call. tf32: CUBLAS_TF32_TENSOR_OP_MATH (3),
 * else CUBLAS_DEFAULT_MATH (0, FP32). Returns 0, or an error code with tb_peer_message().
 */
extern "C" int tb_cublas_sgemm(const char *lib, int M, int N, int K, int tf32, int repeat,
                               double min_ms, double *ms_per_call) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(tb_msg, sizeof tb_msg, "dlopen %s: %s", lib, dlerror());
    return -2;
  }
  tb_create_t create = (tb_create_t)dlsym(h, "cublasCreate_v2");
  tb_destroy_t destroy = (tb_destroy_t)dlsym(h, "cublasDestroy_v2");
  tb_math_t math = (tb_math_t)dlsym(h, "cublasSetMathMode");
  tb_sgemm_t sgemm = (tb_sgemm_t)dlsym(h, "cublasSgemm_v2");
  if (!create || !destroy || !math || !sgemm) {
    snprintf(tb_msg, sizeof tb_msg, "%s lacks a cuBLAS v2 symbol", lib);
    return -3;
  }
  void *handle = 0;
  float *A = 0, *B = 0, *C = 0;
  cudaEvent_t ev[2] = {0, 0};
  int rc = 0, s;
  const float one = 1.0f, zero = 0.0f;
  cudaError_t e;
  if ((s = create(&handle)) != 0) { rc = tb_fail("cublasCreate", s); goto done; }
  if ((s = math(handle, tf32 ? 3 : 0)) != 0) { rc = tb_fail("cublasSetMathMode", s); goto done; }
  if ((e = cudaMalloc((void **)&A, (size_t)M * K * 4)) != cudaSuccess ||
      (e = cudaMalloc((void **)&B, (size_t)K * N * 4)) != cudaSuccess ||
      (e = cudaMalloc((void **)&C, (size_t)M * N * 4)) != cudaSuccess ||
      (e = cudaEventCreate(&ev[0])) != cudaSuccess ||
      (e = cudaEventCreate(&ev[1])) != cudaSuccess) {
    rc = tb_fail(cudaGetErrorString(e), (int)e);
    goto done;
  }
  tb_fill<<<(unsigned)(((long)M * K + 255) / 256), 256>>>(A, (long)M * K, 0.01f);
  tb_fill<<<(unsigned)(((long)K * N + 255) / 256), 256>>>(B, (long)K * N, 0.02f);
  // Row-major C = A B is column-major C^T = B^T A^T: B is the left operand.
  if ((s = sgemm(handle, 0, 0, N, M, K, &one, B, N, A, K, &zero, C, N)) != 0) {
    rc = tb_fail("cublasSgemm", s);
    goto done;
  }
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) { rc = tb_fail(cudaGetErrorString(e), (int)e); goto done; }
  {
    int number = 1;
    for (int r = 0; r < repeat; ++r) {
      float ms = 0.0f;
      for (;;) {
        cudaEventRecord(ev[0], 0);
        for (int i = 0; i < number; ++i) sgemm(handle, 0, 0, N, M, K, &one, B, N, A, K, &zero, C, N);
        cudaEventRecord(ev[1], 0);
        if ((e = cudaEventSynchronize(ev[1])) != cudaSuccess) { rc = tb_fail(cudaGetErrorString(e), (int)e); goto done; }
        cudaEventElapsedTime(&ms, ev[0], ev[1]);
        if ((double)ms >= min_ms || number >= (1 << 20)) break;
        number = ms > 0.0f ? (int)(number * min_ms / ms) + 1 : number * 10;
      }
      ms_per_call[r] = (double)ms / number;
    }
  }
done:
  if (A) cudaFree(A);
  if (B) cudaFree(B);
  if (C) cudaFree(C);
  if (ev[0]) cudaEventDestroy(ev[0]);
  if (ev[1]) cudaEventDestroy(ev[1]);
  if (handle) destroy(handle);
  return rc;
}
