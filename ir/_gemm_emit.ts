/**
 * Source of the GEMM template's kernels ({@link GemmPlan}, `ir/gemm_gpu.ts`)
 * in CUDA and in OpenCL C, from one description so the OpenCL twin checks
 * the CUDA kernel's indexing on PoCL:
 *
 * - tile loads: each thread copies `vec`-wide units of the A tile (K
 *   contiguous, stored `[m][k]`) and the B tile (stored as it lies in global
 *   memory: `[k][n]`, or `[n][k]` for dense; conv2d gathers its input with
 *   zero padding), zero-filled outside the matrix. CUDA uses float4 loads
 *   (`ld.global.v4.f32`) or `cp.async` (16 or 4 bytes, zero-filled by a
 *   source size of 0); OpenCL copies synchronously through the same ring;
 * - main loop: `direct` (load, barrier, math, barrier), `regs` (the next tile
 *   loaded into registers during the math, then stored into the other
 *   buffer: one barrier per k-step) or `cp.async` with `stages` buffers
 *   (`cp.async.wait_group stages-2`, one barrier per k-step);
 * - math: FP32 outer products on float4 shared loads, or `mma.sync`
 *   fragments (TF32 m16n8k8 rounded with `cvt.rna.tf32.f32`; FP16/BF16
 *   m16n8k16 packed with round-to-nearest-even). In OpenCL each lane
 *   computes the same fragments with the same rounding and the warp
 *   exchanges them through local memory, so the fragment layouts of the PTX
 *   ISA are executed as written;
 * - 16-bit inputs ({@link GemmPlan.halfInputs}): A and B are read through
 *   `unsigned short` views of their buffers, 4 values (8 bytes) or 1 at a
 *   time, and widened to FP32 (exactly) on their way into shared memory;
 * - epilogue: guarded stores (float4 where the row allows), bias and ReLU for
 *   dense, the NCHW scatter for conv2d, or the split-K workspace with a
 *   second kernel that sums the slices and applies the epilogue.
 * @module
 */
import type { GpuLaunch } from "./target_gpu.ts";
import type { GemmKernel, GemmPlan } from "./gemm_gpu.ts";

/** Kernel source lines (helpers, then every launch's kernel) of a GEMM kernel. */
export function emitGemm(k: GemmKernel, launches: GpuLaunch[], cuda: boolean): string[] {
  const prefix = launches[0].name.replace(/_k0$/, "");
  const e = new Emitter(k, prefix, cuda);
  return [...e.helpers(), ...e.main(launches[0]), ...(launches[1] ? e.reduce(launches[1]) : [])];
}

class Emitter {
  readonly g: GemmPlan;
  readonly a: string;
  readonly b: string;
  readonly out: string;
  readonly bias?: string;
  readonly gq: string;
  readonly lq: string;
  readonly bufs: { buf: string; size: number }[];
  readonly ldA: number;
  readonly ldB: number;
  /** Float offset of the B buffers in shared memory. */
  readonly offB: number;

  constructor(readonly k: GemmKernel, readonly p: string, readonly cuda: boolean) {
    const g = this.g = k.gemm;
    const names = k.params.map((x) => x.buf);
    this.out = names[names.length - 1];
    if (g.op === "conv2d") [this.b, this.a] = names;
    else [this.a, this.b] = names;
    if (g.op === "dense") this.bias = names[2];
    this.gq = cuda ? "" : "__global ";
    this.lq = cuda ? "" : "__local ";
    this.bufs = [...k.params, ...k.temps];
    this.ldA = g.aTrans ? g.blockM + g.pad : g.blockK + g.pad;
    this.ldB = g.bLayout === "nk" ? g.blockK + g.pad : g.blockN + g.pad;
    this.offB = g.stages * g.stageA;
  }

  signature(name: string, threads: number, minBlocks = 1): string {
    const ps = this.bufs.map((b) => `${this.gq}float *${this.cuda ? "" : "restrict "}${b.buf}`);
    return this.cuda
      ? `extern "C" __global__ void __launch_bounds__(${threads}${
        minBlocks > 1 ? `, ${minBlocks}` : ""
      }) ${name}(${ps.join(", ")}) {`
      : `__kernel __attribute__((reqd_work_group_size(${threads}, 1, 1))) void ${name}(${
        ps.join(", ")
      }) {`;
  }

  idx(axis: "tid" | "bx" | "by" | "bz"): string {
    if (this.cuda) {
      return { tid: "threadIdx.x", bx: "blockIdx.x", by: "blockIdx.y", bz: "blockIdx.z" }[axis];
    }
    return {
      tid: "(int)get_local_id(0)",
      bx: "(int)get_group_id(0)",
      by: "(int)get_group_id(1)",
      bz: "(int)get_group_id(2)",
    }[axis];
  }

  barrier(): string {
    return this.cuda ? "__syncthreads();" : "barrier(CLK_LOCAL_MEM_FENCE);";
  }

  ld4(ptr: string): string {
    return this.cuda ? `*(const float4 *)(${ptr})` : `vload4(0, ${ptr})`;
  }

  st4(ptr: string, v: string): string {
    return this.cuda ? `*(float4 *)(${ptr}) = ${v};` : `vstore4(${v}, 0, ${ptr});`;
  }

  zero4(): string {
    return this.cuda ? "make_float4(0.0f, 0.0f, 0.0f, 0.0f)" : "(float4)(0.0f)";
  }

  /** `ok ? <4 or 1 values of op at src, as float4 or float> : 0`, from a 16-bit buffer or not. */
  gload(op: "A" | "B", vec: 1 | 4): string {
    const buf = op === "A" ? this.a : this.b;
    if (!this.g.halfInputs) {
      return vec === 4
        ? `ok ? ${this.ld4(`&${buf}[src]`)} : ${this.zero4()}`
        : `ok ? ${buf}[src] : 0.0f`;
    }
    return vec === 4
      ? `ok ? ${this.p}_h4(${buf}h, src) : ${this.zero4()}`
      : `ok ? ${this.p}_h1(${buf}h, src) : 0.0f`;
  }

  /** Loaders of 16-bit inputs (widened to FP32): `<p>_h1` one value, `<p>_h4` four (8 bytes). */
  halfLoaders(): string[] {
    const p = this.p, bf = this.g.mma === 3;
    if (!this.g.halfInputs) return [];
    if (!this.cuda) {
      const w = (x: string) => `as_float((uint)(${x}) << 16)`;
      return bf
        ? [
          `static float ${p}_h1(__global const ushort *x, int i) { return ${w("x[i]")}; }`,
          `static float4 ${p}_h4(__global const ushort *x, int i) {`,
          "  const ushort4 v = vload4(0, x + i);",
          `  return (float4)(${w("v.x")}, ${w("v.y")}, ${w("v.z")}, ${w("v.w")});`,
          "}",
        ]
        : [
          `static float ${p}_h1(__global const ushort *x, int i) { return vload_half(i, (__global const half *)x); }`,
          `static float4 ${p}_h4(__global const ushort *x, int i) { return vload_half4(0, (__global const half *)(x + i)); }`,
        ];
    }
    const one = (x: string) =>
      bf ? `__uint_as_float((unsigned)(${x}) << 16)` : `__half2float(__ushort_as_half(${x}))`;
    const lo = (x: string) =>
      bf ? `__uint_as_float(${x} << 16)` : one(`(unsigned short)(${x} & 0xffffu)`);
    const hi = (x: string) =>
      bf ? `__uint_as_float(${x} & 0xffff0000u)` : one(`(unsigned short)(${x} >> 16)`);
    return [
      `static __device__ __forceinline__ float ${p}_h1(const unsigned short *x, int i) { return ${
        one("x[i]")
      }; }`,
      `static __device__ __forceinline__ float4 ${p}_h4(const unsigned short *x, int i) {`,
      "  const uint2 v = *(const uint2 *)(x + i);",
      `  return make_float4(${lo("v.x")}, ${hi("v.x")}, ${lo("v.y")}, ${hi("v.y")});`,
      "}",
    ];
  }

  helpers(): string[] {
    const p = this.p, g = this.g;
    if (!this.cuda) {
      return [
        `static float ${p}_tf32(float x) { return as_float((as_uint(x) + 0x1000u) & 0xffffe000u); }`,
        `static float ${p}_f16(float x) { ushort h; vstore_half_rte(x, 0, (__private half *)&h); return vload_half(0, (__private half *)&h); }`,
        `static float ${p}_bf16(float x) { uint u = as_uint(x); u += 0x7fffu + ((u >> 16) & 1u); return as_float(u & 0xffff0000u); }`,
        ...this.halfLoaders(),
        "",
      ];
    }
    const out = [
      ...this.halfLoaders(),
      `static __device__ __forceinline__ void ${p}_cp16(float *dst, const float *src, int bytes) {`,
      "  unsigned d = (unsigned)__cvta_generic_to_shared(dst);",
      '  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\\n" :: "r"(d), "l"(src), "r"(bytes));',
      "}",
      `static __device__ __forceinline__ void ${p}_cp4(float *dst, const float *src, int bytes) {`,
      "  unsigned d = (unsigned)__cvta_generic_to_shared(dst);",
      '  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\\n" :: "r"(d), "l"(src), "r"(bytes));',
      "}",
      `static __device__ __forceinline__ unsigned ${p}_tf32(float x) {`,
      "  unsigned r;",
      '  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));',
      "  return r;",
      "}",
      `static __device__ __forceinline__ unsigned ${p}_f16x2(float lo, float hi) {`,
      "  __half2 h = __floats2half2_rn(lo, hi);",
      "  return *reinterpret_cast<unsigned *>(&h);",
      "}",
      `static __device__ __forceinline__ unsigned ${p}_bf16x2(float lo, float hi) {`,
      "  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);",
      "  return *reinterpret_cast<unsigned *>(&h);",
      "}",
    ];
    const shape = g.mma === 1 ? "m16n8k8" : "m16n8k16";
    const type = ["", "tf32", "f16", "bf16"][g.mma] || "tf32";
    out.push(
      `static __device__ __forceinline__ void ${p}_mma(float *c, const unsigned *a, const unsigned *b) {`,
      `  asm volatile("mma.sync.aligned.${shape}.row.col.f32.${type}.${type}.f32 "`,
      '      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\\n"',
      '      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])',
      '      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));',
      "}",
      "",
    );
    return out;
  }

  /** Shared element of A (`[m][k]`) in stage `s`. */
  sA(s: string, m: string, k: string): string {
    return this.g.aTrans
      ? `sm[(${s}) * ${this.g.stageA} + (${k}) * ${this.ldA} + (${m})]`
      : `sm[(${s}) * ${this.g.stageA} + (${m}) * ${this.ldA} + (${k})]`;
  }

  /** Shared element of B at (k, n) in stage `s`. */
  sB(s: string, k: string, n: string): string {
    const base = `${this.offB} + (${s}) * ${this.g.stageB}`;
    return this.g.bLayout === "nk"
      ? `sm[${base} + (${n}) * ${this.ldB} + (${k})]`
      : `sm[${base} + (${k}) * ${this.ldB} + (${n})]`;
  }

  /**
   * The units of one operand's tile: per unit, lines that define `dst` (the
   * shared element), `src` (the global index) and `ok` (inside the matrix).
   */
  units(op: "A" | "B"): { count: number; vec: 1 | 4; per: number; setup(kt: string): string[] } {
    const g = this.g;
    const vec = op === "A" ? g.vecA : g.vecB;
    // Rows x units per row, along the contiguous global dimension.
    const kRows = op === "B" && g.bLayout !== "nk";
    const rows = op === "A" ? g.blockM : kRows ? g.blockK : g.blockN;
    const perRow = (kRows ? g.blockN : g.blockK) / vec;
    const count = rows * perRow;
    const setup = (kt: string): string[] => {
      const lines = [
        `const int r = u / ${perRow}, c = (u % ${perRow}) * ${vec};`,
      ];
      if (op === "A") {
        lines.push(
          `const int gm = bm0 + r, gk = (${kt}) * ${g.blockK} + c;`,
          `const int ok = gm < ${g.M} && gk < ${g.K};`,
          `const int src = ok ? gm * ${g.K} + gk : 0;`,
          g.aTrans
            ? `const int dst = (c) * ${this.ldA} + (r);`
            : `const int dst = (r) * ${this.ldA} + (c);`,
        );
      } else if (g.bLayout === "nk") {
        lines.push(
          `const int gn = bn0 + r, gk = (${kt}) * ${g.blockK} + c;`,
          `const int ok = gn < ${g.N} && gk < ${g.K};`,
          `const int src = ok ? gn * ${g.K} + gk : 0;`,
          `const int dst = ${this.offB} + (r) * ${this.ldB} + (c);`,
        );
      } else if (g.bLayout === "kn") {
        lines.push(
          `const int gk = (${kt}) * ${g.blockK} + r, gn = bn0 + c;`,
          `const int ok = gk < ${g.K} && gn < ${g.N};`,
          `const int src = ok ? gk * ${g.N} + gn : 0;`,
          `const int dst = ${this.offB} + (r) * ${this.ldB} + (c);`,
        );
      } else {
        const v = g.conv!;
        const win = v.KH * v.KW, ohw = v.OH * v.OW;
        lines.push(
          `const int gk = (${kt}) * ${g.blockK} + r, gn = bn0 + c;`,
          `const int ci = gk / ${win}, ry = (gk % ${win}) / ${v.KW}, rx = gk % ${v.KW};`,
          `const int nb = gn / ${ohw}, oy = (gn % ${ohw}) / ${v.OW}, ox = gn % ${v.OW};`,
          `const int iy = oy * ${v.stride} + ry - ${v.pad}, ix = ox * ${v.stride} + rx - ${v.pad};`,
          `const int ok = gk < ${g.K} && gn < ${g.N} && iy >= 0 && iy < ${v.H} && ix >= 0 && ix < ${v.W};`,
          `const int src = ok ? ((nb * ${v.C} + ci) * ${v.H} + iy) * ${v.W} + ix : 0;`,
          `const int dst = ${this.offB} + (r) * ${this.ldB} + (c);`,
        );
      }
      return lines;
    };
    return { count, vec, per: Math.ceil(count / g.threads), setup };
  }

  /**
   * Lines copying one operand's tile `kt` into stage `s`: `how` is `direct`
   * (global to shared), `cp` (cp.async in CUDA), `toRegs` or `fromRegs`.
   */
  copy(
    op: "A" | "B",
    s: string,
    kt: string,
    how: "direct" | "cp" | "toRegs" | "fromRegs",
  ): string[] {
    const u = this.units(op), T = this.g.threads;
    const buf = op === "A" ? this.a : this.b;
    const stride = op === "A" ? this.g.stageA : this.g.stageB;
    const dst = `&sm[dst + (${s}) * ${stride}]`;
    const reg = `r${op}[i]`;
    let body: string[];
    const kind = how === "cp" && !this.cuda ? "direct" : how;
    if (kind === "cp") {
      const bytes = u.vec * 4;
      body = [`${this.p}_cp${bytes}(${dst}, &${buf}[src], ok ? ${bytes} : 0);`];
    } else if (u.vec === 4) {
      const load = this.gload(op, 4);
      // A stored transposed: the four values along k go to four rows of the [k][m] tile.
      const put = (v: string) =>
        op === "A" && this.g.aTrans
          ? [0, 1, 2, 3].map((q) =>
            `sm[dst + (${s}) * ${stride} + ${q * this.ldA}] = (${v}).${"xyzw"[q]};`
          )
          : [this.st4(dst, v)];
      body = kind === "direct"
        ? [`const float4 v = ${load};`, ...put("v")]
        : kind === "toRegs"
        ? [`${reg} = ${load};`]
        : put(reg);
    } else {
      const load = this.gload(op, 1);
      body = kind === "direct"
        ? [`${dst.slice(1)} = ${load};`]
        : kind === "toRegs"
        ? [`${reg} = ${load};`]
        : [`${dst.slice(1)} = ${reg};`];
    }
    const guard = u.count % T !== 0;
    return [
      `for (int i = 0; i < ${u.per}; ++i) {`,
      `  const int u = tid + i * ${T};`,
      ...(guard ? [`  if (u < ${u.count}) {`] : ["  {"]),
      ...u.setup(kt).map((l) => `    ${l}`),
      ...body.map((l) => `    ${l}`),
      "  }",
      "}",
    ];
  }

  /** Lines of the math on stage `s` (FP32 outer products or mma fragments). */
  math(s: string): string[] {
    return this.g.mma === 0 ? this.simt(s) : this.mmaMath(s);
  }

  simtLayout() {
    const g = this.g;
    const LX = g.lanesN, LY = 32 / LX;
    const TM = g.warpM / LY, TN = g.warpN / LX;
    const RM = Math.min(TM, 4), RN = Math.min(TN, 4);
    const row = (i: number) => `tr + ${Math.floor(i / RM) * LY * RM + (i % RM)}`;
    const col = (j: number) => `tc + ${Math.floor(j / RN) * LX * RN + (j % RN)}`;
    return { LX, LY, TM, TN, RM, RN, row, col };
  }

  simt(s: string): string[] {
    const g = this.g, L = this.simtLayout();
    const out = [
      "#pragma unroll",
      `for (int kk = 0; kk < ${g.blockK}; kk += 4) {`,
      `  float a[${L.TM * 4}];`,
    ];
    // a[i * 4 + v] = A(row i, kk + v): float4s along k, or along m when A is transposed.
    if (g.aTrans) {
      for (let v = 0; v < 4; v++) {
        for (let i = 0; i < L.TM; i += L.RM) {
          if (L.RM === 4) {
            out.push(`  { const float4 t = ${this.ld4(`&${this.sA(s, L.row(i), `kk + ${v}`)}`)};`);
            const as = [0, 1, 2, 3].map((x) => `a[${(i + x) * 4 + v}] = t.${"xyzw"[x]};`);
            out.push(`    ${as.join(" ")} }`);
          } else {
            for (let x = 0; x < L.RM; x++) {
              out.push(`  a[${(i + x) * 4 + v}] = ${this.sA(s, L.row(i + x), `kk + ${v}`)};`);
            }
          }
        }
      }
    } else {
      for (let i = 0; i < L.TM; i++) {
        out.push(`  { const float4 t = ${this.ld4(`&${this.sA(s, L.row(i), "kk")}`)};`);
        const as = [0, 1, 2, 3].map((v) => `a[${i * 4 + v}] = t.${"xyzw"[v]};`);
        out.push(`    ${as.join(" ")} }`);
      }
    }
    const fma = (v: string) => [
      "#pragma unroll",
      `  for (int i = 0; i < ${L.TM}; ++i) {`,
      "#pragma unroll",
      `    for (int j = 0; j < ${L.TN}; ++j) acc[i * ${L.TN} + j] += a[i * 4 + ${v}] * b[${
        g.bLayout === "nk" ? `j * 4 + ${v}` : "j"
      }];`,
      "  }",
    ];
    if (g.bLayout === "nk") {
      // B stored [n][k]: one float4 along k per column, then four k-steps.
      out.push(`  float b[${4 * L.TN}];`);
      for (let j = 0; j < L.TN; j++) {
        out.push(`  { const float4 t = ${this.ld4(`&${this.sB(s, "kk", L.col(j))}`)};`);
        const bs = [0, 1, 2, 3].map((v) => `b[${j * 4 + v}] = t.${"xyzw"[v]};`);
        out.push(`    ${bs.join(" ")} }`);
      }
      for (let v = 0; v < 4; v++) out.push(...fma(String(v)));
    } else {
      // B stored [k][n]: per k-step one row of the thread's columns (float4 per patch),
      // so only TN values of B are live at a time.
      for (let v = 0; v < 4; v++) {
        out.push(`  { float b[${L.TN}];`);
        for (let j = 0; j < L.TN; j += L.RN) {
          if (L.RN === 4) {
            out.push(`  { const float4 t = ${this.ld4(`&${this.sB(s, `kk + ${v}`, L.col(j))}`)};`);
            const bs = [0, 1, 2, 3].map((x) => `b[${j + x}] = t.${"xyzw"[x]};`);
            out.push(`    ${bs.join(" ")} }`);
          } else {
            for (let x = 0; x < L.RN; x++) {
              out.push(`  b[${j + x}] = ${this.sB(s, `kk + ${v}`, L.col(j + x))};`);
            }
          }
        }
        out.push(...fma(String(v)), "  }");
      }
    }
    out.push("}");
    return out;
  }

  /**
   * Fragment elements of one mma k-step, as [register, lo, hi] with shared
   * element expressions (`hi` absent for TF32), following the PTX ISA layouts
   * of m16n8k8 (TF32) and m16n8k16 (FP16/BF16).
   */
  fragments(s: string, mi: number, ni: number) {
    const g = this.g, r0 = `wr + ${mi * 16} + gid`, r1 = `wr + ${mi * 16 + 8} + gid`;
    const c = `wc + ${ni * 8} + gid`;
    const A = (r: string, k: string) => this.sA(s, r, `ks + ${k}`);
    const B = (k: string, n: string) => this.sB(s, `ks + ${k}`, n);
    if (g.mma === 1) {
      return {
        a: [[A(r0, "tig")], [A(r1, "tig")], [A(r0, "tig + 4")], [A(r1, "tig + 4")]],
        b: [[B("tig", c)], [B("tig + 4", c)]],
      };
    }
    const pair = (
      f: (k: string) => string,
      k: string,
    ) => [f(`2 * tig + ${k}`), f(`2 * tig + ${k} + 1`)];
    return {
      a: [
        pair((k) => A(r0, k), "0"),
        pair((k) => A(r1, k), "0"),
        pair((k) => A(r0, k), "8"),
        pair((k) => A(r1, k), "8"),
      ],
      b: [pair((k) => B(k, c), "0"), pair((k) => B(k, c), "8")],
    };
  }

  mmaMath(s: string): string[] {
    const g = this.g, p = this.p;
    const MI = g.warpM / 16, NI = g.warpN / 8, KS = g.mma === 1 ? 8 : 16;
    const E = g.mma === 1 ? 1 : 2;
    const out = ["#pragma unroll", `for (int ks = 0; ks < ${g.blockK}; ks += ${KS}) {`];
    if (this.cuda) {
      const cvt = (xs: string[]) =>
        g.mma === 1
          ? `${p}_tf32(${xs[0]})`
          : `${p}_${g.mma === 2 ? "f16x2" : "bf16x2"}(${xs[0]}, ${xs[1]})`;
      out.push(`  unsigned af[${MI * 4}], bf[${NI * 2}];`);
      for (let mi = 0; mi < MI; mi++) {
        this.fragments(s, mi, 0).a.forEach((x, r) => out.push(`  af[${mi * 4 + r}] = ${cvt(x)};`));
      }
      for (let ni = 0; ni < NI; ni++) {
        this.fragments(s, 0, ni).b.forEach((x, r) => out.push(`  bf[${ni * 2 + r}] = ${cvt(x)};`));
      }
      for (let mi = 0; mi < MI; mi++) {
        for (let ni = 0; ni < NI; ni++) {
          out.push(`  ${p}_mma(&acc[${(mi * NI + ni) * 4}], &af[${mi * 4}], &bf[${ni * 2}]);`);
        }
      }
      out.push("}");
      return out;
    }
    // OpenCL: each lane rounds its own fragment elements, the warp exchanges
    // them through local memory, and each lane sums its accumulator elements
    // from the owners the ISA layout names.
    const round = `${p}_${["", "tf32", "f16", "bf16"][g.mma]}`;
    const slotsA = MI * 4 * E, slots = slotsA + NI * 2 * E;
    const x = (slot: string, ln: string) => `xs[(warp * ${slots} + (${slot})) * 32 + (${ln})]`;
    for (let mi = 0; mi < MI; mi++) {
      this.fragments(s, mi, 0).a.forEach((xs, r) =>
        xs.forEach((v, h) =>
          out.push(`  ${x(String((mi * 4 + r) * E + h), "lane")} = ${round}(${v});`)
        )
      );
    }
    for (let ni = 0; ni < NI; ni++) {
      this.fragments(s, 0, ni).b.forEach((xs, r) =>
        xs.forEach((v, h) =>
          out.push(`  ${x(String(slotsA + (ni * 2 + r) * E + h), "lane")} = ${round}(${v});`)
        )
      );
    }
    out.push(`  ${this.barrier()}`);
    // Owner lane and slot of A(row, kk) and B(kk, col) in fragment (mi, ni).
    const aLane = E === 1 ? "(row % 8) * 4 + kk % 4" : "(row % 8) * 4 + (kk % 8) / 2";
    const aSlot = E === 1
      ? "mi * 4 + row / 8 + 2 * (kk / 4)"
      : "(mi * 4 + row / 8 + 2 * (kk / 8)) * 2 + kk % 2";
    const bLane = E === 1 ? "col * 4 + kk % 4" : "col * 4 + (kk % 8) / 2";
    const bSlot = E === 1
      ? `${slotsA} + ni * 2 + kk / 4`
      : `${slotsA} + (ni * 2 + kk / 8) * 2 + kk % 2`;
    out.push(
      `  for (int mi = 0; mi < ${MI}; ++mi) {`,
      `    for (int ni = 0; ni < ${NI}; ++ni) {`,
      "      for (int e = 0; e < 4; ++e) {",
      "        const int row = gid + 8 * (e / 2), col = 2 * tig + e % 2;",
      `        float c = acc[(mi * ${NI} + ni) * 4 + e];`,
      `        for (int kk = 0; kk < ${KS}; ++kk) c += ${x(aSlot, aLane)} * ${x(bSlot, bLane)};`,
      `        acc[(mi * ${NI} + ni) * 4 + e] = c;`,
      "      }",
      "    }",
      "  }",
      `  ${this.barrier()}`,
      "}",
    );
    return out;
  }

  /** The store of value `v` at (m, n) of the product: the workload's epilogue. */
  store(m: string, n: string, v: string): string {
    const g = this.g;
    if (g.op === "dense") {
      return `${this.out}[(${m}) * ${g.N} + (${n})] = ${
        this.cuda ? "fmaxf" : "fmax"
      }((${v}) + ${this.bias}[${n}], 0.0f);`;
    }
    if (g.op === "conv2d") {
      const ohw = g.conv!.OH * g.conv!.OW;
      return `${this.out}[((${n}) / ${ohw} * ${g.M} + (${m})) * ${ohw} + (${n}) % ${ohw}] = ${v};`;
    }
    return `${this.out}[(${m}) * ${g.N} + (${n})] = ${v};`;
  }

  epilogue(): string[] {
    const g = this.g, out: string[] = [];
    const ws = g.splitK > 1;
    const put = (m: string, n: string, v: string) =>
      ws
        ? `T_splitk[${this.idx("bz")} * ${g.M * g.N} + (${m}) * ${g.N} + (${n})] = ${v};`
        : this.store(m, n, v);
    if (g.mma !== 0) {
      const MI = g.warpM / 16, NI = g.warpN / 8;
      out.push(
        `for (int mi = 0; mi < ${MI}; ++mi) {`,
        `  for (int ni = 0; ni < ${NI}; ++ni) {`,
        "    for (int e = 0; e < 4; ++e) {",
        "      const int m = bm0 + wr + mi * 16 + gid + 8 * (e / 2);",
        "      const int n = bn0 + wc + ni * 8 + 2 * tig + e % 2;",
        `      if (m < ${g.M} && n < ${g.N}) ${put("m", "n", `acc[(mi * ${NI} + ni) * 4 + e]`)}`,
        "    }",
        "  }",
        "}",
      );
      return out;
    }
    const L = this.simtLayout();
    const vector = L.RN === 4 && g.N % 4 === 0 && (ws || g.op === "matmul");
    for (let i = 0; i < L.TM; i++) {
      out.push(`{ const int m = bm0 + ${L.row(i)};`);
      for (let j = 0; j < L.TN; j += vector ? 4 : 1) {
        const a = (x: number) => `acc[${i * L.TN + j + x}]`;
        if (vector) {
          const v = this.cuda
            ? `make_float4(${a(0)}, ${a(1)}, ${a(2)}, ${a(3)})`
            : `(float4)(${a(0)}, ${a(1)}, ${a(2)}, ${a(3)})`;
          const base = ws
            ? `T_splitk[${this.idx("bz")} * ${g.M * g.N} + m * ${g.N} + n]`
            : `${this.out}[m * ${g.N} + n]`;
          out.push(`  { const int n = bn0 + ${L.col(j)};`);
          out.push(`    if (m < ${g.M} && n < ${g.N}) ${this.st4(`&${base}`, v)} }`);
        } else {
          out.push(`  { const int n = bn0 + ${L.col(j)};`);
          out.push(`    if (m < ${g.M} && n < ${g.N}) ${put("m", "n", a(0))} }`);
        }
      }
      out.push("}");
    }
    return out;
  }

  main(l: GpuLaunch): string[] {
    const g = this.g, T = g.threads;
    const total = g.stages * (g.stageA + g.stageB);
    const out = [this.signature(l.name, T, g.minBlocks)];
    if (this.cuda) {
      out.push(
        `  extern __shared__ float4 ${this.p}_smem4[];`,
        `  float *sm = (float *)${this.p}_smem4;`,
      );
    } else {
      out.push(
        `  __local float4 sm4[${total / 4}];`,
        "  __local float *sm = (__local float *)sm4;",
      );
      if (g.mma !== 0) {
        const E = g.mma === 1 ? 1 : 2;
        const slots = (g.warpM / 16) * 4 * E + (g.warpN / 8) * 2 * E;
        out.push(`  __local float xs[${(T / 32) * slots * 32}];`);
      }
    }
    if (g.halfInputs) {
      // 16-bit views of A and B (their buffers hold FP16 or BF16 values).
      const view = (b: string) =>
        this.cuda
          ? `  const unsigned short *${b}h = (const unsigned short *)${b};`
          : `  __global const ushort *${b}h = (__global const ushort *)${b};`;
      out.push(view(this.a), view(this.b));
    }
    const kTiles = Math.ceil(g.K / g.blockK), per = Math.ceil(kTiles / g.splitK);
    const warpsN = g.blockN / g.warpN;
    out.push(
      `  const int tid = ${this.idx("tid")}, lane = tid % 32, warp = tid / 32;`,
      `  const int bm0 = ${this.idx("by")} * ${g.blockM}, bn0 = ${this.idx("bx")} * ${g.blockN};`,
      `  const int wr = (warp / ${warpsN}) * ${g.warpM}, wc = (warp % ${warpsN}) * ${g.warpN};`,
      "  const int gid = lane / 4, tig = lane % 4;",
      `  const int kt0 = ${this.idx("bz")} * ${per};`,
      `  const int nkt = min(${kTiles}, kt0 + ${per}) - kt0;`,
    );
    if (g.mma === 0) {
      const L = this.simtLayout();
      out.push(
        `  const int tr = wr + (lane / ${L.LX}) * ${L.RM}, tc = wc + (lane % ${L.LX}) * ${L.RN};`,
        `  float acc[${L.TM * L.TN}];`,
        `  for (int i = 0; i < ${L.TM * L.TN}; ++i) acc[i] = 0.0f;`,
      );
    } else {
      const n = (g.warpM / 16) * (g.warpN / 8) * 4;
      out.push(`  float acc[${n}];`, `  for (int i = 0; i < ${n}; ++i) acc[i] = 0.0f;`);
    }
    out.push(`  (void)gid; (void)tig; (void)wr; (void)wc;`);
    const ind = (xs: string[], d = 2) => xs.map((x) => " ".repeat(d) + x);
    const both = (s: string, kt: string, how: "direct" | "cp" | "toRegs" | "fromRegs") => [
      ...this.copy("A", s, kt, how),
      ...this.copy("B", s, kt, how),
    ];
    if (g.load === 0) {
      out.push(
        "  for (int it = 0; it < nkt; ++it) {",
        `    ${this.barrier()}`,
        ...ind(both("0", "kt0 + it", "direct"), 4),
        `    ${this.barrier()}`,
        ...ind(this.math("0"), 4),
        "  }",
      );
    } else if (g.load === 1) {
      const ua = this.units("A"), ub = this.units("B");
      const v = (u: { vec: number }) => u.vec === 4 ? "float4" : "float";
      out.push(
        `  ${v(ua)} rA[${ua.per}];`,
        `  ${v(ub)} rB[${ub.per}];`,
        "  if (nkt > 0) {",
        ...ind(both("0", "kt0", "toRegs"), 4),
        ...ind(both("0", "kt0", "fromRegs"), 4),
        "  }",
        `  ${this.barrier()}`,
        "  for (int it = 0; it < nkt; ++it) {",
        "    if (it + 1 < nkt) {",
        ...ind(both("0", "kt0 + it + 1", "toRegs"), 6),
        "    }",
        ...ind(this.math("it % 2"), 4),
        "    if (it + 1 < nkt) {",
        ...ind(both("(it + 1) % 2", "kt0 + it + 1", "fromRegs"), 6),
        "    }",
        `    ${this.barrier()}`,
        "  }",
      );
    } else {
      const P = g.stages;
      const commit = this.cuda ? ['asm volatile("cp.async.commit_group;\\n" ::);'] : [];
      const wait = this.cuda ? [`asm volatile("cp.async.wait_group ${P - 2};\\n" ::);`] : [];
      out.push(
        `  for (int st = 0; st < ${P - 1}; ++st) {`,
        "    if (st < nkt) {",
        ...ind(both("st", "kt0 + st", "cp"), 6),
        "    }",
        ...ind(commit, 4),
        "  }",
        "  for (int it = 0; it < nkt; ++it) {",
        ...ind(wait, 4),
        `    ${this.barrier()}`,
        `    if (it + ${P - 1} < nkt) {`,
        ...ind(both(`(it + ${P - 1}) % ${P}`, `kt0 + it + ${P - 1}`, "cp"), 6),
        "    }",
        ...ind(commit, 4),
        ...ind(this.math(`it % ${P}`), 4),
        "  }",
      );
      if (this.cuda) out.push('  asm volatile("cp.async.wait_group 0;\\n" ::);');
    }
    out.push(...ind(this.epilogue()), "}", "");
    return out;
  }

  reduce(l: GpuLaunch): string[] {
    const g = this.g, MN = g.M * g.N;
    return [
      this.signature(l.name, 256),
      `  const int i = ${this.idx("bx")} * 256 + ${this.idx("tid")};`,
      `  if (i < ${MN}) {`,
      "    float v = 0.0f;",
      `    for (int z = 0; z < ${g.splitK}; ++z) v += T_splitk[z * ${MN} + i];`,
      `    const int m = i / ${g.N}, n = i % ${g.N};`,
      `    ${this.store("m", "n", "v")}`,
      "  }",
      "}",
      "",
    ];
  }
}
