static float tb_tf32(float x) { return as_float((as_uint(x) + 0x1000u) & 0xffffe000u); }
static float tb_f16(float x) { ushort h; vstore_half_rte(x, 0, (__private half *)&h); return vload_half(0, (__private half *)&h); }
static float tb_bf16(float x) { uint u = as_uint(x); u += 0x7fffu + ((u >> 16) & 1u); return as_float(u & 0xffff0000u); }

__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void tb_k0(__global float *restrict T_A, __global float *restrict T_B, __global float *restrict T_C) {
  __local float4 sm4[2112];
  __local float *sm = (__local float *)sm4;
  const int tid = (int)get_local_id(0), lane = tid % 32, warp = tid / 32;
  const int bm0 = (int)get_group_id(1) * 128, bn0 = (int)get_group_id(0) * 128;
  const int wr = (warp / 4) * 64, wc = (warp % 4) * 32;
  const int gid = lane / 4, tig = lane % 4;
  const int kt0 = (int)get_group_id(2) * 64;
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
        rA[i] = ok ? vload4(0, &T_A[src]) : (float4)(0.0f);
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
        rB[i] = ok ? vload4(0, &T_B[src]) : (float4)(0.0f);
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
        vstore4(rB[i], 0, &sm[dst + (0) * 2112]);
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
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
          rA[i] = ok ? vload4(0, &T_A[src]) : (float4)(0.0f);
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
          rB[i] = ok ? vload4(0, &T_B[src]) : (float4)(0.0f);
        }
      }
    }
    #pragma unroll
    for (int kk = 0; kk < 16; kk += 4) {
      float a[32];
      { const float4 t = vload4(0, &sm[(it % 2) * 2112 + (kk + 0) * 132 + (tr + 0)]);
        a[0] = t.x; a[4] = t.y; a[8] = t.z; a[12] = t.w; }
      { const float4 t = vload4(0, &sm[(it % 2) * 2112 + (kk + 0) * 132 + (tr + 32)]);
        a[16] = t.x; a[20] = t.y; a[24] = t.z; a[28] = t.w; }
      { const float4 t = vload4(0, &sm[(it % 2) * 2112 + (kk + 1) * 132 + (tr + 0)]);
        a[1] = t.x; a[5] = t.y; a[9] = t.z; a[13] = t.w; }
      { const float4 t = vload4(0, &sm[(it % 2) * 2112 + (kk + 1) * 132 + (tr + 32)]);
        a[17] = t.x; a[21] = t.y; a[25] = t.z; a[29] = t.w; }
      { const float4 t = vload4(0, &sm[(it % 2) * 2112 + (kk + 2) * 132 + (tr + 0)]);
        a[2] = t.x; a[6] = t.y; a[10] = t.z; a[14] = t.w; }
      { const float4 t = vload4(0, &sm[(it % 2) * 2112 + (kk + 2) * 132 + (tr + 32)]);
        a[18] = t.x; a[22] = t.y; a[26] = t.z; a[30] = t.w; }
      { const float4 t = vload4(0, &sm[(it % 2) * 2112 + (kk + 3) * 132 + (tr + 0)]);
        a[3] = t.x; a[7] = t.y; a[11] = t.z; a[15] = t.w; }
      { const float4 t = vload4(0, &sm[(it % 2) * 2112 + (kk + 3) * 132 + (tr + 32)]);
        a[19] = t.x; a[23] = t.y; a[27] = t.z; a[31] = t.w; }
      { float b[8];
      { const float4 t = vload4(0, &sm[4224 + (it % 2) * 2112 + (kk + 0) * 132 + (tc + 0)]);
        b[0] = t.x; b[1] = t.y; b[2] = t.z; b[3] = t.w; }
      { const float4 t = vload4(0, &sm[4224 + (it % 2) * 2112 + (kk + 0) * 132 + (tc + 16)]);
        b[4] = t.x; b[5] = t.y; b[6] = t.z; b[7] = t.w; }
    #pragma unroll
      for (int i = 0; i < 8; ++i) {
    #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i * 8 + j] += a[i * 4 + 0] * b[j];
      }
      }
      { float b[8];
      { const float4 t = vload4(0, &sm[4224 + (it % 2) * 2112 + (kk + 1) * 132 + (tc + 0)]);
        b[0] = t.x; b[1] = t.y; b[2] = t.z; b[3] = t.w; }
      { const float4 t = vload4(0, &sm[4224 + (it % 2) * 2112 + (kk + 1) * 132 + (tc + 16)]);
        b[4] = t.x; b[5] = t.y; b[6] = t.z; b[7] = t.w; }
    #pragma unroll
      for (int i = 0; i < 8; ++i) {
    #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i * 8 + j] += a[i * 4 + 1] * b[j];
      }
      }
      { float b[8];
      { const float4 t = vload4(0, &sm[4224 + (it % 2) * 2112 + (kk + 2) * 132 + (tc + 0)]);
        b[0] = t.x; b[1] = t.y; b[2] = t.z; b[3] = t.w; }
      { const float4 t = vload4(0, &sm[4224 + (it % 2) * 2112 + (kk + 2) * 132 + (tc + 16)]);
        b[4] = t.x; b[5] = t.y; b[6] = t.z; b[7] = t.w; }
    #pragma unroll
      for (int i = 0; i < 8; ++i) {
    #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i * 8 + j] += a[i * 4 + 2] * b[j];
      }
      }
      { float b[8];
      { const float4 t = vload4(0, &sm[4224 + (it % 2) * 2112 + (kk + 3) * 132 + (tc + 0)]);
        b[0] = t.x; b[1] = t.y; b[2] = t.z; b[3] = t.w; }
      { const float4 t = vload4(0, &sm[4224 + (it % 2) * 2112 + (kk + 3) * 132 + (tc + 16)]);
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
          vstore4(rB[i], 0, &sm[dst + ((it + 1) % 2) * 2112]);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  { const int m = bm0 + tr + 0;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[0], acc[1], acc[2], acc[3]), 0, &T_C[m * 1024 + n]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[4], acc[5], acc[6], acc[7]), 0, &T_C[m * 1024 + n]); }
  }
  { const int m = bm0 + tr + 1;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[8], acc[9], acc[10], acc[11]), 0, &T_C[m * 1024 + n]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[12], acc[13], acc[14], acc[15]), 0, &T_C[m * 1024 + n]); }
  }
  { const int m = bm0 + tr + 2;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[16], acc[17], acc[18], acc[19]), 0, &T_C[m * 1024 + n]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[20], acc[21], acc[22], acc[23]), 0, &T_C[m * 1024 + n]); }
  }
  { const int m = bm0 + tr + 3;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[24], acc[25], acc[26], acc[27]), 0, &T_C[m * 1024 + n]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[28], acc[29], acc[30], acc[31]), 0, &T_C[m * 1024 + n]); }
  }
  { const int m = bm0 + tr + 32;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[32], acc[33], acc[34], acc[35]), 0, &T_C[m * 1024 + n]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[36], acc[37], acc[38], acc[39]), 0, &T_C[m * 1024 + n]); }
  }
  { const int m = bm0 + tr + 33;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[40], acc[41], acc[42], acc[43]), 0, &T_C[m * 1024 + n]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[44], acc[45], acc[46], acc[47]), 0, &T_C[m * 1024 + n]); }
  }
  { const int m = bm0 + tr + 34;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[48], acc[49], acc[50], acc[51]), 0, &T_C[m * 1024 + n]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[52], acc[53], acc[54], acc[55]), 0, &T_C[m * 1024 + n]); }
  }
  { const int m = bm0 + tr + 35;
    { const int n = bn0 + tc + 0;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[56], acc[57], acc[58], acc[59]), 0, &T_C[m * 1024 + n]); }
    { const int n = bn0 + tc + 16;
      if (m < 1024 && n < 1024) vstore4((float4)(acc[60], acc[61], acc[62], acc[63]), 0, &T_C[m * 1024 + n]); }
  }
}
