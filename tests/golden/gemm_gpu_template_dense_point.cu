#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// launch tb_k0 stage Y grid 2x4x4 block 64x1x1
// launch tb_k1 stage Y grid 128x1x1 block 256x1x1

extern "C" __global__ void tb_to_bf16(const float *x, unsigned short *y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = __bfloat16_as_ushort(__float2bfloat16_rn(x[i]));
}

static __device__ __forceinline__ float tb_h1(const unsigned short *x, int i) { return __uint_as_float((unsigned)(x[i]) << 16); }
static __device__ __forceinline__ float4 tb_h4(const unsigned short *x, int i) {
  const uint2 v = *(const uint2 *)(x + i);
  return make_float4(__uint_as_float(v.x << 16), __uint_as_float(v.x & 0xffff0000u), __uint_as_float(v.y << 16), __uint_as_float(v.y & 0xffff0000u));
}
static __device__ __forceinline__ void tb_cp16(float *dst, const float *src, int bytes) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(d), "l"(src), "r"(bytes));
}
static __device__ __forceinline__ void tb_cp4(float *dst, const float *src, int bytes) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(d), "l"(src), "r"(bytes));
}
static __device__ __forceinline__ unsigned tb_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
static __device__ __forceinline__ unsigned tb_f16x2(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<unsigned *>(&h);
}
static __device__ __forceinline__ unsigned tb_bf16x2(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<unsigned *>(&h);
}
static __device__ __forceinline__ void tb_mma(float *c, const unsigned *a, const unsigned *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(64) tb_k0(float *T_X, float *T_W, float *T_bias, float *T_Y, float *T_splitk) {
  extern __shared__ float4 tb_smem4[];
  float *sm = (float *)tb_smem4;
  const unsigned short *T_Xh = (const unsigned short *)T_X;
  const unsigned short *T_Wh = (const unsigned short *)T_W;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int bm0 = blockIdx.y * 32, bn0 = blockIdx.x * 128;
  const int wr = (warp / 1) * 16, wc = (warp % 1) * 128;
  const int gid = lane / 4, tig = lane % 4;
  const int kt0 = blockIdx.z * 4;
  const int nkt = min(16, kt0 + 4) - kt0;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  (void)gid; (void)tig; (void)wr; (void)wc;
  for (int it = 0; it < nkt; ++it) {
    __syncthreads();
    for (int i = 0; i < 2; ++i) {
      const int u = tid + i * 64;
      {
        const int r = u / 4, c = (u % 4) * 4;
        const int gm = bm0 + r, gk = (kt0 + it) * 16 + c;
        const int ok = gm < 128 && gk < 256;
        const int src = ok ? gm * 256 + gk : 0;
        const int dst = (r) * 24 + (c);
        const float4 v = ok ? tb_h4(T_Xh, src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        *(float4 *)(&sm[dst + (0) * 768]) = v;
      }
    }
    for (int i = 0; i < 8; ++i) {
      const int u = tid + i * 64;
      {
        const int r = u / 4, c = (u % 4) * 4;
        const int gn = bn0 + r, gk = (kt0 + it) * 16 + c;
        const int ok = gn < 256 && gk < 256;
        const int src = ok ? gn * 256 + gk : 0;
        const int dst = 768 + (r) * 24 + (c);
        const float4 v = ok ? tb_h4(T_Wh, src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        *(float4 *)(&sm[dst + (0) * 3072]) = v;
      }
    }
    __syncthreads();
    #pragma unroll
    for (int ks = 0; ks < 16; ks += 16) {
      unsigned af[4], bf[32];
      af[0] = tb_bf16x2(sm[(0) * 768 + (wr + 0 + gid) * 24 + (ks + 2 * tig + 0)], sm[(0) * 768 + (wr + 0 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      af[1] = tb_bf16x2(sm[(0) * 768 + (wr + 8 + gid) * 24 + (ks + 2 * tig + 0)], sm[(0) * 768 + (wr + 8 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      af[2] = tb_bf16x2(sm[(0) * 768 + (wr + 0 + gid) * 24 + (ks + 2 * tig + 8)], sm[(0) * 768 + (wr + 0 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      af[3] = tb_bf16x2(sm[(0) * 768 + (wr + 8 + gid) * 24 + (ks + 2 * tig + 8)], sm[(0) * 768 + (wr + 8 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[0] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 0 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 0 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[1] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 0 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 0 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[2] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 8 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 8 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[3] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 8 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 8 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[4] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 16 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 16 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[5] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 16 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 16 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[6] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 24 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 24 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[7] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 24 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 24 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[8] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 32 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 32 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[9] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 32 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 32 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[10] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 40 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 40 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[11] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 40 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 40 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[12] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 48 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 48 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[13] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 48 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 48 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[14] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 56 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 56 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[15] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 56 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 56 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[16] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 64 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 64 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[17] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 64 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 64 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[18] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 72 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 72 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[19] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 72 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 72 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[20] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 80 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 80 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[21] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 80 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 80 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[22] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 88 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 88 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[23] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 88 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 88 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[24] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 96 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 96 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[25] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 96 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 96 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[26] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 104 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 104 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[27] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 104 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 104 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[28] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 112 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 112 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[29] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 112 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 112 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      bf[30] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 120 + gid) * 24 + (ks + 2 * tig + 0)], sm[768 + (0) * 3072 + (wc + 120 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      bf[31] = tb_bf16x2(sm[768 + (0) * 3072 + (wc + 120 + gid) * 24 + (ks + 2 * tig + 8)], sm[768 + (0) * 3072 + (wc + 120 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      tb_mma(&acc[0], &af[0], &bf[0]);
      tb_mma(&acc[4], &af[0], &bf[2]);
      tb_mma(&acc[8], &af[0], &bf[4]);
      tb_mma(&acc[12], &af[0], &bf[6]);
      tb_mma(&acc[16], &af[0], &bf[8]);
      tb_mma(&acc[20], &af[0], &bf[10]);
      tb_mma(&acc[24], &af[0], &bf[12]);
      tb_mma(&acc[28], &af[0], &bf[14]);
      tb_mma(&acc[32], &af[0], &bf[16]);
      tb_mma(&acc[36], &af[0], &bf[18]);
      tb_mma(&acc[40], &af[0], &bf[20]);
      tb_mma(&acc[44], &af[0], &bf[22]);
      tb_mma(&acc[48], &af[0], &bf[24]);
      tb_mma(&acc[52], &af[0], &bf[26]);
      tb_mma(&acc[56], &af[0], &bf[28]);
      tb_mma(&acc[60], &af[0], &bf[30]);
    }
  }
  for (int mi = 0; mi < 1; ++mi) {
    for (int ni = 0; ni < 16; ++ni) {
      for (int e = 0; e < 4; ++e) {
        const int m = bm0 + wr + mi * 16 + gid + 8 * (e / 2);
        const int n = bn0 + wc + ni * 8 + 2 * tig + e % 2;
        if (m < 128 && n < 256) T_splitk[blockIdx.z * 32768 + (m) * 256 + (n)] = acc[(mi * 16 + ni) * 4 + e];
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(256) tb_k1(float *T_X, float *T_W, float *T_bias, float *T_Y, float *T_splitk) {
  const int i = blockIdx.x * 256 + threadIdx.x;
  if (i < 32768) {
    float v = 0.0f;
    for (int z = 0; z < 4; ++z) v += T_splitk[z * 32768 + i];
    const int m = i / 256, n = i % 256;
    T_Y[(m) * 256 + (n)] = fmaxf((v) + T_bias[n], 0.0f);
  }
}

extern "C" int tb_cuda_device_count(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  return e == cudaSuccess ? n : -(int)e;
}

extern "C" const char *tb_cuda_error_string(int code) {
  return cudaGetErrorString((cudaError_t)code);
}

static cudaError_t tb_launch(float **d) {
  cudaError_t e;
  tb_k0<<<dim3(2, 4, 4), dim3(64, 1, 1), 15360>>>(d[0], d[1], d[2], d[3], d[4]);
  e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  tb_k1<<<dim3(128, 1, 1), dim3(256, 1, 1)>>>(d[0], d[1], d[2], d[3], d[4]);
  e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  return cudaSuccess;
}

static cudaError_t tb_pack_inputs(float **d) {
  cudaError_t e;
  unsigned short *s = 0;
  if ((e = cudaMalloc((void **)&s, 32768UL * 2)) != cudaSuccess) return e;
  tb_to_bf16<<<128, 256>>>(d[0], s, 32768L);
  e = cudaMemcpy(d[0], s, 32768UL * 2, cudaMemcpyDeviceToDevice);
  cudaFree(s);
  if (e != cudaSuccess) return e;
  if ((e = cudaMalloc((void **)&s, 65536UL * 2)) != cudaSuccess) return e;
  tb_to_bf16<<<256, 256>>>(d[1], s, 65536L);
  e = cudaMemcpy(d[1], s, 65536UL * 2, cudaMemcpyDeviceToDevice);
  cudaFree(s);
  if (e != cudaSuccess) return e;
  return cudaGetLastError();
}

static cudaError_t tb_setup(void) {
  return cudaSuccess;
}

static cudaError_t tb_run_impl(float **host, const long *sizes, int nbufs, int repeat,
                               double *times_ms, float **d, cudaEvent_t *ev) {
  cudaError_t e;
  if (nbufs != 4 || repeat < 0) return cudaErrorInvalidValue;
  if (sizes[0] != 32768L) return cudaErrorInvalidValue;
  if (sizes[1] != 65536L) return cudaErrorInvalidValue;
  if (sizes[2] != 256L) return cudaErrorInvalidValue;
  if (sizes[3] != 32768L) return cudaErrorInvalidValue;
  e = cudaMalloc((void **)&d[0], 32768UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void **)&d[1], 65536UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void **)&d[2], 256UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void **)&d[3], 32768UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void **)&d[4], 131072UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMemcpy(d[0], host[0], 32768UL * sizeof(float), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return e;
  e = cudaMemcpy(d[1], host[1], 65536UL * sizeof(float), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return e;
  e = cudaMemcpy(d[2], host[2], 256UL * sizeof(float), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return e;
  if ((e = tb_pack_inputs(d)) != cudaSuccess) return e;
  if ((e = cudaEventCreate(&ev[0])) != cudaSuccess) return e;
  if ((e = cudaEventCreate(&ev[1])) != cudaSuccess) return e;
  if ((e = tb_setup()) != cudaSuccess) return e;
  if ((e = tb_launch(d)) != cudaSuccess) return e;
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return e;
  for (int r = 0; r < repeat; ++r) {
    float ms = 0.0f;
    if ((e = cudaEventRecord(ev[0], 0)) != cudaSuccess) return e;
    if ((e = tb_launch(d)) != cudaSuccess) return e;
    if ((e = cudaEventRecord(ev[1], 0)) != cudaSuccess) return e;
    if ((e = cudaEventSynchronize(ev[1])) != cudaSuccess) return e;
    if ((e = cudaEventElapsedTime(&ms, ev[0], ev[1])) != cudaSuccess) return e;
    times_ms[r] = (double)ms;
  }
  e = cudaMemcpy(host[3], d[3], 32768UL * sizeof(float), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return e;
  return cudaSuccess;
}

extern "C" int tb_cuda_run(float **host_bufs, const long *sizes, int nbufs, int repeat,
                          double *times_ms) {
  float *d[5] = {0};
  cudaEvent_t ev[2] = {0, 0};
  cudaError_t e = tb_run_impl(host_bufs, sizes, nbufs, repeat, times_ms, d, ev);
  for (int i = 0; i < 5; ++i) {
    if (d[i]) cudaFree(d[i]);
  }
  if (ev[0]) cudaEventDestroy(ev[0]);
  if (ev[1]) cudaEventDestroy(ev[1]);
  return (int)e;
}
