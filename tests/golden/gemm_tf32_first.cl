static float tb_tf32(float x) { return as_float((as_uint(x) + 0x1000u) & 0xffffe000u); }
static float tb_f16(float x) { ushort h; vstore_half_rte(x, 0, (__private half *)&h); return vload_half(0, (__private half *)&h); }
static float tb_bf16(float x) { uint u = as_uint(x); u += 0x7fffu + ((u >> 16) & 1u); return as_float(u & 0xffff0000u); }

__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void tb_k0(__global float *restrict T_A, __global float *restrict T_B, __global float *restrict T_C) {
  __local float4 sm4[4416];
  __local float *sm = (__local float *)sm4;
  __local float xs[6144];
  const int tid = (int)get_local_id(0), lane = tid % 32, warp = tid / 32;
  const int bm0 = (int)get_group_id(1) * 128, bn0 = (int)get_group_id(0) * 128;
  const int wr = (warp / 4) * 64, wc = (warp % 4) * 32;
  const int gid = lane / 4, tig = lane % 4;
  const int kt0 = (int)get_group_id(2) * 32;
  const int nkt = min(32, kt0 + 32) - kt0;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  (void)gid; (void)tig; (void)wr; (void)wc;
  for (int st = 0; st < 1; ++st) {
    if (st < nkt) {
      for (int i = 0; i < 4; ++i) {
        const int u = tid + i * 256;
        {
          const int r = u / 8, c = (u % 8) * 4;
          const int gm = bm0 + r, gk = (kt0 + st) * 32 + c;
          const int ok = gm < 1024 && gk < 1024;
          const int src = ok ? gm * 1024 + gk : 0;
          const int dst = (r) * 36 + (c);
          const float4 v = ok ? vload4(0, &T_A[src]) : (float4)(0.0f);
          vstore4(v, 0, &sm[dst + (st) * 4608]);
        }
      }
      for (int i = 0; i < 4; ++i) {
        const int u = tid + i * 256;
        {
          const int r = u / 32, c = (u % 32) * 4;
          const int gk = (kt0 + st) * 32 + r, gn = bn0 + c;
          const int ok = gk < 1024 && gn < 1024;
          const int src = ok ? gk * 1024 + gn : 0;
          const int dst = 9216 + (r) * 132 + (c);
          const float4 v = ok ? vload4(0, &T_B[src]) : (float4)(0.0f);
          vstore4(v, 0, &sm[dst + (st) * 4224]);
        }
      }
    }
  }
  for (int it = 0; it < nkt; ++it) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (it + 1 < nkt) {
      for (int i = 0; i < 4; ++i) {
        const int u = tid + i * 256;
        {
          const int r = u / 8, c = (u % 8) * 4;
          const int gm = bm0 + r, gk = (kt0 + it + 1) * 32 + c;
          const int ok = gm < 1024 && gk < 1024;
          const int src = ok ? gm * 1024 + gk : 0;
          const int dst = (r) * 36 + (c);
          const float4 v = ok ? vload4(0, &T_A[src]) : (float4)(0.0f);
          vstore4(v, 0, &sm[dst + ((it + 1) % 2) * 4608]);
        }
      }
      for (int i = 0; i < 4; ++i) {
        const int u = tid + i * 256;
        {
          const int r = u / 32, c = (u % 32) * 4;
          const int gk = (kt0 + it + 1) * 32 + r, gn = bn0 + c;
          const int ok = gk < 1024 && gn < 1024;
          const int src = ok ? gk * 1024 + gn : 0;
          const int dst = 9216 + (r) * 132 + (c);
          const float4 v = ok ? vload4(0, &T_B[src]) : (float4)(0.0f);
          vstore4(v, 0, &sm[dst + ((it + 1) % 2) * 4224]);
        }
      }
    }
    #pragma unroll
    for (int ks = 0; ks < 32; ks += 8) {
      xs[(warp * 24 + (0)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 0 + gid) * 36 + (ks + tig)]);
      xs[(warp * 24 + (1)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 8 + gid) * 36 + (ks + tig)]);
      xs[(warp * 24 + (2)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 0 + gid) * 36 + (ks + tig + 4)]);
      xs[(warp * 24 + (3)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 8 + gid) * 36 + (ks + tig + 4)]);
      xs[(warp * 24 + (4)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 16 + gid) * 36 + (ks + tig)]);
      xs[(warp * 24 + (5)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 24 + gid) * 36 + (ks + tig)]);
      xs[(warp * 24 + (6)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 16 + gid) * 36 + (ks + tig + 4)]);
      xs[(warp * 24 + (7)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 24 + gid) * 36 + (ks + tig + 4)]);
      xs[(warp * 24 + (8)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 32 + gid) * 36 + (ks + tig)]);
      xs[(warp * 24 + (9)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 40 + gid) * 36 + (ks + tig)]);
      xs[(warp * 24 + (10)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 32 + gid) * 36 + (ks + tig + 4)]);
      xs[(warp * 24 + (11)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 40 + gid) * 36 + (ks + tig + 4)]);
      xs[(warp * 24 + (12)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 48 + gid) * 36 + (ks + tig)]);
      xs[(warp * 24 + (13)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 56 + gid) * 36 + (ks + tig)]);
      xs[(warp * 24 + (14)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 48 + gid) * 36 + (ks + tig + 4)]);
      xs[(warp * 24 + (15)) * 32 + (lane)] = tb_tf32(sm[(it % 2) * 4608 + (wr + 56 + gid) * 36 + (ks + tig + 4)]);
      xs[(warp * 24 + (16)) * 32 + (lane)] = tb_tf32(sm[9216 + (it % 2) * 4224 + (ks + tig) * 132 + (wc + 0 + gid)]);
      xs[(warp * 24 + (17)) * 32 + (lane)] = tb_tf32(sm[9216 + (it % 2) * 4224 + (ks + tig + 4) * 132 + (wc + 0 + gid)]);
      xs[(warp * 24 + (18)) * 32 + (lane)] = tb_tf32(sm[9216 + (it % 2) * 4224 + (ks + tig) * 132 + (wc + 8 + gid)]);
      xs[(warp * 24 + (19)) * 32 + (lane)] = tb_tf32(sm[9216 + (it % 2) * 4224 + (ks + tig + 4) * 132 + (wc + 8 + gid)]);
      xs[(warp * 24 + (20)) * 32 + (lane)] = tb_tf32(sm[9216 + (it % 2) * 4224 + (ks + tig) * 132 + (wc + 16 + gid)]);
      xs[(warp * 24 + (21)) * 32 + (lane)] = tb_tf32(sm[9216 + (it % 2) * 4224 + (ks + tig + 4) * 132 + (wc + 16 + gid)]);
      xs[(warp * 24 + (22)) * 32 + (lane)] = tb_tf32(sm[9216 + (it % 2) * 4224 + (ks + tig) * 132 + (wc + 24 + gid)]);
      xs[(warp * 24 + (23)) * 32 + (lane)] = tb_tf32(sm[9216 + (it % 2) * 4224 + (ks + tig + 4) * 132 + (wc + 24 + gid)]);
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int mi = 0; mi < 4; ++mi) {
        for (int ni = 0; ni < 4; ++ni) {
          for (int e = 0; e < 4; ++e) {
            const int row = gid + 8 * (e / 2), col = 2 * tig + e % 2;
            float c = acc[(mi * 4 + ni) * 4 + e];
            for (int kk = 0; kk < 8; ++kk) c += xs[(warp * 24 + (mi * 4 + row / 8 + 2 * (kk / 4))) * 32 + ((row % 8) * 4 + kk % 4)] * xs[(warp * 24 + (16 + ni * 2 + kk / 4)) * 32 + (col * 4 + kk % 4)];
            acc[(mi * 4 + ni) * 4 + e] = c;
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  for (int mi = 0; mi < 4; ++mi) {
    for (int ni = 0; ni < 4; ++ni) {
      for (int e = 0; e < 4; ++e) {
        const int m = bm0 + wr + mi * 16 + gid + 8 * (e / 2);
        const int n = bn0 + wc + ni * 8 + 2 * tig + e % 2;
        if (m < 1024 && n < 1024) T_C[(m) * 1024 + (n)] = acc[(mi * 4 + ni) * 4 + e];
      }
    }
  }
}
