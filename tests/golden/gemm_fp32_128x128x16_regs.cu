#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// launch tb_k0 stage C grid 8x8x1 block 256x1x1

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
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(256, 2) tb_k0(float *T_A, float *T_B, float *T_C) {
  extern __shared__ float4 tb_smem4[];
  float *sm = (float *)tb_smem4;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int bm0 = blockIdx.y * 128, bn0 = blockIdx.x * 128;
  const int wr = (warp / 4) * 64, wc = (warp % 4) * 32;
  const int gid = lane / 4, tig = lane % 4;
  const int kt0 = blockIdx.z * 64;
  const int nkt = min(64, kt0 + 64) - kt0;
  const int tr = wr + (lane / 4) * 4, tc = wc + (lane % 4) * 4;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  (void)gid; (void)tig; (void)wr; (void)wc;
  float4 rA[2];
  float4 rB[2];
  if (nkt > 0) {
    for (int i = 0; i < 2; ++i) {
      const int u = tid + i * 256;
      {
        const int r = u / 4, c = (u % 4) * 4;
        const int gm = bm0 + r, gk = (kt0) * 16 + c;
        const int ok = gm < 1024 && gk < 1024;
        const int src = ok ? gm * 1024 + gk : 0;
        const int dst = (c) * 132 + (r);
        rA[i] = ok ? *(const float4 *)(&T_A[src]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
    for (int i = 0; i < 2; ++i) {
      const int u = tid + i * 256;
      {
        const int r = u / 32, c = (u % 32) * 4;
        const int gk = (kt0) * 16 + r, gn = bn0 + c;
        const int ok = gk < 1024 && gn < 1024;
        const int src = ok ? gk * 1024 + gn : 0;
        const int dst = 4224 + (r) * 132 + (c);
        rB[i] = ok ? *(const float4 *)(&T_B[src]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
    for (int i = 0; i < 2; ++i) {
      const int u = tid + i * 256;
      {
        const int r = u / 4, c = (u % 4) * 4;
        const int gm = bm0 + r, gk = (kt0) * 16 + c;
        const int ok = gm < 1024 && gk < 1024;
        const int src = ok ? gm * 1024 + gk : 0;
        const int dst = (c) * 132 + (r);
        sm[dst + (0) * 2112 + 0] = (rA[i]).x;
        sm[dst + (0) * 2112 + 132] = (rA[i]).y;
        sm[dst + (0) * 2112 + 264] = (rA[i]).z;
        sm[dst + (0) * 2112 + 396] = (rA[i]).w;
      }
    }
    for (int i = 0; i < 2; ++i) {
      const int u = tid + i * 256;
      {
        const int r = u / 32, c = (u % 32) * 4;
        const int gk = (kt0) * 16 + r, gn = bn0 + c;
        const int ok = gk < 1024 && gn < 1024;
        const int src = ok ? gk * 1024 + gn : 0;
        const int dst = 4224 + (r) * 132 + (c);
        *(float4 *)(&sm[dst + (0) * 2112]) = rB[i];
      }
    }
  }
  __syncthreads();
  for (int it = 0; it < nkt; ++it) {
    if (it + 1 < nkt) {
      for (int i = 0; i < 2; ++i) {
        const int u = tid + i * 256;
        {
          const int r = u / 4, c = (u % 4) * 4;
          const int gm = bm0 + r, gk = (kt0 + it + 1) * 16 + c;
          const int ok = gm < 1024 && gk < 1024;
          const int src = ok ? gm * 1024 + gk : 0;
          const int dst = (c) * 132 + (r);
          rA[i] = ok ? *(const float4 *)(&T_A[src]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
      }
      for (int i = 0; i < 2; ++i) {
        const int u = tid + i * 256;
        {
          const int r = u / 32, c = (u % 32) * 4;
          const int gk = (kt0 + it + 1) * 16 + r, gn = bn0 + c;
          const int ok = gk < 1024 && gn < 1024;
          const int src = ok ? gk * 1024 + gn : 0;
          const int dst = 4224 + (r) * 132 + (c);
          rB[i] = ok ? *(const float4 *)(&T_B[src]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
      }
    }
    #pragma unroll
    for (int kk = 0; kk < 16; kk += 4) {
      float a[32];
      { const float4 t = *(const float4 *)(&sm[(it % 2) * 2112 + (kk + 0) * 132 + (tr + 0)]);
        a[0] = t.x; a[4] = t.y; a[8] = t.z; a[12] = t.w; }
      { const float4 t = *(const float4 *)(&sm[(it % 2) * 2112 + (kk + 0) * 132 + (tr + 32)]);
        a[16] = t.x; a[20] = t.y; a[24] = t.z; a[28] = t.w; }
      { const float4 t = *(const float4 *)(&sm[(it % 2) * 2112 + (kk + 1) * 132 + (tr + 0)]);
        a[1] = t.x; a[5] = t.y; a[9] = t.z; a[13] = t.w; }
      { const float4 t = *(const float4 *)(&sm[(it % 2) * 2112 + (kk + 1) * 132 + (tr + 32)]);
        a[17] = t.x; a[21] = t.y; a[25] = t.z; a[29] = t.w; }
      { const float4 t = *(const float4 *)(&sm[(it % 2) * 2112 + (kk + 2) * 132 + (tr + 0)]);
        a[2] = t.x; a[6] = t.y; a[10] = t.z; a[14] = t.w; }
      { const float4 t = *(const float4 *)(&sm[(it % 2) * 2112 + (kk + 2) * 132 + (tr + 32)]);
        a[18] = t.x; a[22] = t.y; a[26] = t.z; a[30] = t.w; }
      { const float4 t = *(const float4 *)(&sm[(it % 2) * 2112 + (kk + 3) * 132 + (tr + 0)]);
        a[3] = t.x; a[7] = t.y; a[11] = t.z; a[15] = t.w; }
      { const float4 t = *(const float4 *)(&sm[(it % 2) * 2112 + (kk + 3) * 132 + (tr + 32)]);
        a[19] = t.x; a[23] = t.y; a[27] = t.z; a[31] = t.w; }
      { float b[8];
      { const float4 t = *(const float4 *)(&sm[4224 + (it % 2) * 2112 + (kk + 0) * 132 + (tc + 0)]);
        b[0] = t.x; b[1] = t.y; b[2] = t.z; b[3] = t.w; }
      { const float4 t = *(const float4 *)(&sm[4224 + (it % 2) * 2112 + (kk + 0) * 132 + (tc + 16)]);
        b[4] = t.x; b[5] = t.y; b[6] = t.z; b[7] = t.w; }
    #pragma unroll
      for (int i = 0; i < 8; ++i) {
    #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i * 8 + j] += a[i * 4 + 0] * b[j];
      }
      }
      { float b[8];
      { const float4 t = *(const float4 *)(&sm[4224 + (it % 2) * 2112 + (kk + 1) * 132 + (tc + 0)]);
        b[0] = t.x; b[1] = t.y; b[2] = t.z; b[3] = t.w; }
      { const float4 t = *(const float4 *)(&sm[4224 + (it % 2) * 2112 + (kk + 1) * 132 + (tc + 16)]);
        b[4] = t.x; b[5] = t.y; b[6] = t.z; b[7] = t.w; }
    #pragma unroll
      for (int i = 0; i < 8; ++i) {
    #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i * 8 + j] += a[i * 4 + 1] * b[j];
      }
      }
      { float b[8];
      { const float4 t = *(const float4 *)(&sm[4224 + (it % 2) * 2112 + (kk + 2) * 132 + (tc + 0)]);
        b[0] = t.x; b[1] = t.y; b[2] = t.z; b[3] = t.w; }
      { const float4 t = *(const float4 *)(&sm[4224 + (it % 2) * 2112 + (kk + 2) * 132 + (tc + 16)]);
        b[4] = t.x; b[5] = t.y; b[6] = t.z; b[7] = t.w; }
    #pragma unroll
      for (int i = 0; i < 8; ++i) {
    #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i * 8 + j] += a[i * 4 + 2] * b[j];
      }
      }
      { float b[8];
      { const float4 t = *(const float4 *)(&sm[4224 + (it % 2) * 2112 + (kk + 3) * 132 + (tc + 0)]);
        b[0] = t.x; b[1] = t.y; b[2] = t.z; b[3] = t.w; }
      { const float4 t = *(const float4 *)(&sm[4224 + (it % 2) * 2112 + (kk + 3) * 132 + (tc + 16)]);
        b[4] = t.x; b[5] = t.y; b[6] = t.z; b[7] = t.w; }
    #pragma unroll
      for (int i = 0; i < 8; ++i) {
    #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i * 8 + j] += a[i * 4 + 3] * b[j];
      }
      }
    }
    if (it + 1 < nkt) {
      for (int i = 0; i < 2; ++i) {
        const int u = tid + i * 256;
        {
          const int r = u / 4, c = (u % 4) * 4;
          const int gm = bm0 + r, gk = (kt0 + it + 1) * 16 + c;
          const int ok = gm < 1024 && gk < 1024;
          const int src = ok ? gm * 1024 + gk : 0;
          const int dst = (c) * 132 + (r);
          sm[dst + ((it + 1) % 2) * 2112 + 0] = (rA[i]).x;
          sm[dst + ((it + 1) % 2) * 2112 + 132] = (rA[i]).y;
          sm[dst + ((it + 1) % 2) * 2112 + 264] = (rA[i]).z;
          sm[dst + ((it + 1) % 2) * 2112 + 396] = (rA[i]).w;
        }
      }
      for (int i = 0; i < 2; ++i) {
        const int u = tid + i * 256;
        {
          const int r = u / 32, c = (u % 32) * 4;
          const int gk = (kt0 + it + 1) * 16 + r, gn = bn0 + c;
          const int ok = gk < 1024 && gn < 1024;
          const int src = ok ? gk * 1024 + gn : 0;
          const int dst = 4224 + (r) * 132 + (c);
          *(float4 *)(&sm[dst + ((it + 1) % 2) * 2112]) = rB[i];
        }
      }
    }
    __syncthreads();
  }
  { const int m = bm0 + tr + 0;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[0], acc[1], acc[2], acc[3]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[4], acc[5], acc[6], acc[7]); }
  }
  { const int m = bm0 + tr + 1;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[8], acc[9], acc[10], acc[11]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[12], acc[13], acc[14], acc[15]); }
  }
  { const int m = bm0 + tr + 2;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[16], acc[17], acc[18], acc[19]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[20], acc[21], acc[22], acc[23]); }
  }
  { const int m = bm0 + tr + 3;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[24], acc[25], acc[26], acc[27]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[28], acc[29], acc[30], acc[31]); }
  }
  { const int m = bm0 + tr + 32;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[32], acc[33], acc[34], acc[35]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[36], acc[37], acc[38], acc[39]); }
  }
  { const int m = bm0 + tr + 33;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[40], acc[41], acc[42], acc[43]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[44], acc[45], acc[46], acc[47]); }
  }
  { const int m = bm0 + tr + 34;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[48], acc[49], acc[50], acc[51]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[52], acc[53], acc[54], acc[55]); }
  }
  { const int m = bm0 + tr + 35;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[56], acc[57], acc[58], acc[59]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) *(float4 *)(&T_C[m * 1024 + n]) = make_float4(acc[60], acc[61], acc[62], acc[63]); }
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
  tb_k0<<<dim3(8, 8, 1), dim3(256, 1, 1), 33792>>>(d[0], d[1], d[2]);
  e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  return cudaSuccess;
}

static cudaError_t tb_setup(void) {
  return cudaSuccess;
}

static cudaError_t tb_run_impl(float **host, const long *sizes, int nbufs, int repeat,
                               double *times_ms, float **d, cudaEvent_t *ev) {
  cudaError_t e;
  if (nbufs != 3 || repeat < 0) return cudaErrorInvalidValue;
  if (sizes[0] != 1048576L) return cudaErrorInvalidValue;
  if (sizes[1] != 1048576L) return cudaErrorInvalidValue;
  if (sizes[2] != 1048576L) return cudaErrorInvalidValue;
  e = cudaMalloc((void **)&d[0], 1048576UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void **)&d[1], 1048576UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMalloc((void **)&d[2], 1048576UL * sizeof(float));
  if (e != cudaSuccess) return e;
  e = cudaMemcpy(d[0], host[0], 1048576UL * sizeof(float), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return e;
  e = cudaMemcpy(d[1], host[1], 1048576UL * sizeof(float), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return e;
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
  e = cudaMemcpy(host[2], d[2], 1048576UL * sizeof(float), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return e;
  return cudaSuccess;
}

extern "C" int tb_cuda_run(float **host_bufs, const long *sizes, int nbufs, int repeat,
                          double *times_ms) {
  float *d[3] = {0};
  cudaEvent_t ev[2] = {0, 0};
  cudaError_t e = tb_run_impl(host_bufs, sizes, nbufs, repeat, times_ms, d, ev);
  for (int i = 0; i < 3; ++i) {
    if (d[i]) cudaFree(d[i]);
  }
  if (ev[0]) cudaEventDestroy(ev[0]);
  if (ev[1]) cudaEventDestroy(ev[1]);
  return (int)e;
}
