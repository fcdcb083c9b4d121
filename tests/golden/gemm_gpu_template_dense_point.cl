static float tb_tf32(float x) { return as_float((as_uint(x) + 0x1000u) & 0xffffe000u); }
static float tb_f16(float x) { ushort h; vstore_half_rte(x, 0, (__private half *)&h); return vload_half(0, (__private half *)&h); }
static float tb_bf16(float x) { uint u = as_uint(x); u += 0x7fffu + ((u >> 16) & 1u); return as_float(u & 0xffff0000u); }
static float tb_h1(__global const ushort *x, int i) { return as_float((uint)(x[i]) << 16); }
static float4 tb_h4(__global const ushort *x, int i) {
  const ushort4 v = vload4(0, x + i);
  return (float4)(as_float((uint)(v.x) << 16), as_float((uint)(v.y) << 16), as_float((uint)(v.z) << 16), as_float((uint)(v.w) << 16));
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void tb_k0(__global float *restrict T_X, __global float *restrict T_W, __global float *restrict T_bias, __global float *restrict T_Y, __global float *restrict T_splitk) {
  __local float4 sm4[960];
  __local float *sm = (__local float *)sm4;
  __local float xs[4608];
  __global const ushort *T_Xh = (__global const ushort *)T_X;
  __global const ushort *T_Wh = (__global const ushort *)T_W;
  const int tid = (int)get_local_id(0), lane = tid % 32, warp = tid / 32;
  const int bm0 = (int)get_group_id(1) * 32, bn0 = (int)get_group_id(0) * 128;
  const int wr = (warp / 1) * 16, wc = (warp % 1) * 128;
  const int gid = lane / 4, tig = lane % 4;
  const int kt0 = (int)get_group_id(2) * 4;
  const int nkt = min(16, kt0 + 4) - kt0;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  (void)gid; (void)tig; (void)wr; (void)wc;
  for (int it = 0; it < nkt; ++it) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 2; ++i) {
      const int u = tid + i * 64;
      {
        const int r = u / 4, c = (u % 4) * 4;
        const int gm = bm0 + r, gk = (kt0 + it) * 16 + c;
        const int ok = gm < 128 && gk < 256;
        const int src = ok ? gm * 256 + gk : 0;
        const int dst = (r) * 24 + (c);
        const float4 v = ok ? tb_h4(T_Xh, src) : (float4)(0.0f);
        vstore4(v, 0, &sm[dst + (0) * 768]);
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
        const float4 v = ok ? tb_h4(T_Wh, src) : (float4)(0.0f);
        vstore4(v, 0, &sm[dst + (0) * 3072]);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    #pragma unroll
    for (int ks = 0; ks < 16; ks += 16) {
      xs[(warp * 72 + (0)) * 32 + (lane)] = tb_bf16(sm[(0) * 768 + (wr + 0 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (1)) * 32 + (lane)] = tb_bf16(sm[(0) * 768 + (wr + 0 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (2)) * 32 + (lane)] = tb_bf16(sm[(0) * 768 + (wr + 8 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (3)) * 32 + (lane)] = tb_bf16(sm[(0) * 768 + (wr + 8 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (4)) * 32 + (lane)] = tb_bf16(sm[(0) * 768 + (wr + 0 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (5)) * 32 + (lane)] = tb_bf16(sm[(0) * 768 + (wr + 0 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (6)) * 32 + (lane)] = tb_bf16(sm[(0) * 768 + (wr + 8 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (7)) * 32 + (lane)] = tb_bf16(sm[(0) * 768 + (wr + 8 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (8)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 0 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (9)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 0 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (10)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 0 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (11)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 0 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (12)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 8 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (13)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 8 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (14)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 8 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (15)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 8 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (16)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 16 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (17)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 16 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (18)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 16 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (19)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 16 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (20)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 24 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (21)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 24 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (22)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 24 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (23)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 24 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (24)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 32 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (25)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 32 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (26)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 32 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (27)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 32 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (28)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 40 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (29)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 40 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (30)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 40 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (31)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 40 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (32)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 48 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (33)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 48 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (34)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 48 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (35)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 48 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (36)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 56 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (37)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 56 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (38)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 56 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (39)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 56 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (40)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 64 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (41)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 64 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (42)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 64 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (43)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 64 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (44)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 72 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (45)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 72 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (46)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 72 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (47)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 72 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (48)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 80 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (49)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 80 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (50)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 80 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (51)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 80 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (52)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 88 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (53)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 88 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (54)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 88 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (55)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 88 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (56)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 96 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (57)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 96 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (58)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 96 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (59)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 96 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (60)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 104 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (61)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 104 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (62)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 104 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (63)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 104 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (64)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 112 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (65)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 112 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (66)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 112 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (67)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 112 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      xs[(warp * 72 + (68)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 120 + gid) * 24 + (ks + 2 * tig + 0)]);
      xs[(warp * 72 + (69)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 120 + gid) * 24 + (ks + 2 * tig + 0 + 1)]);
      xs[(warp * 72 + (70)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 120 + gid) * 24 + (ks + 2 * tig + 8)]);
      xs[(warp * 72 + (71)) * 32 + (lane)] = tb_bf16(sm[768 + (0) * 3072 + (wc + 120 + gid) * 24 + (ks + 2 * tig + 8 + 1)]);
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int mi = 0; mi < 1; ++mi) {
        for (int ni = 0; ni < 16; ++ni) {
          for (int e = 0; e < 4; ++e) {
            const int row = gid + 8 * (e / 2), col = 2 * tig + e % 2;
            float c = acc[(mi * 16 + ni) * 4 + e];
            for (int kk = 0; kk < 16; ++kk) c += xs[(warp * 72 + ((mi * 4 + row / 8 + 2 * (kk / 8)) * 2 + kk % 2)) * 32 + ((row % 8) * 4 + (kk % 8) / 2)] * xs[(warp * 72 + (8 + (ni * 2 + kk / 8) * 2 + kk % 2)) * 32 + (col * 4 + (kk % 8) / 2)];
            acc[(mi * 16 + ni) * 4 + e] = c;
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  for (int mi = 0; mi < 1; ++mi) {
    for (int ni = 0; ni < 16; ++ni) {
      for (int e = 0; e < 4; ++e) {
        const int m = bm0 + wr + mi * 16 + gid + 8 * (e / 2);
        const int n = bn0 + wc + ni * 8 + 2 * tig + e % 2;
        if (m < 128 && n < 256) T_splitk[(int)get_group_id(2) * 32768 + (m) * 256 + (n)] = acc[(mi * 16 + ni) * 4 + e];
      }
    }
  }
}

__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void tb_k1(__global float *restrict T_X, __global float *restrict T_W, __global float *restrict T_bias, __global float *restrict T_Y, __global float *restrict T_splitk) {
  const int i = (int)get_group_id(0) * 256 + (int)get_local_id(0);
  if (i < 32768) {
    float v = 0.0f;
    for (int z = 0; z < 4; ++z) v += T_splitk[z * 32768 + i];
    const int m = i / 256, n = i % 256;
    T_Y[(m) * 256 + (n)] = fmax((v) + T_bias[n], 0.0f);
  }
}
