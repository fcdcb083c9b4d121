/**
 * C code generation from the loop AST. The kernel is
 * `void tb_kernel(float **bufs)`; identifiers come from lowering, which
 * derives them from checked names only.
 *
 * Map of what each loop kind becomes:
 * - `parallel`: OpenMP `parallel for`.
 * - `vectorize`: explicit SIMD when the extent is a multiple of the vector
 *   width (16 floats, or 8 with `lanes: 8`) and the body is stores whose
 *   accesses are contiguous (unit stride) or loop-invariant: GCC vector types
 *   (`tb_v16`, 64 bytes; `tb_v8`, 32 bytes), one statement per vector, loads
 *   and stores through `__builtin_memcpy` (no alignment assumed),
 *   loop-invariant operands broadcast (`scalar * vector`).
 *   Otherwise `omp simd` (checked in tests to produce vector instructions).
 * - `unroll`: written out explicitly when it holds such a vector loop (so
 *   indices become constants), otherwise `_Pragma("GCC unroll N")`.
 * - A private buffer (`alloc`) of at most 512 floats whose every access is a
 *   vector access at a constant index becomes local vector variables: the
 *   register tile of `cache_write(..., "local")` (gcc does not promote an
 *   array to registers on its own). Other private buffers up to 128 KiB are
 *   stack arrays; larger ones come from a pool (one slice per OpenMP
 *   thread), never per tile.
 * - Work space (temporaries such as packed panels, and the pools) is
 *   allocated on the first call and kept across calls (freed by a destructor
 *   when the library is unloaded), so timed calls do no malloc and touch no
 *   fresh pages.
 *
 * One file (past 400 lines) because the scalar and the vector emitters share
 * one context (constants of written-out loops, buffers in vector variables)
 * and fall back on each other statement by statement. Map: `generateC` ->
 * `emitStmt` / `emitAlloc` (register tiles, pools) -> `emitVectorLoop`
 * (chunks, edge lanes) -> `vexpr` / `sexpr`.
 *
 * @example
 * ```ts
 * import { generateC } from "./codegen_c.ts";
 * import { lower } from "./lower.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const src = generateC(lower(new Schedule(matmul(8, 8, 8), { prng: createPrng(0) })));
 * if (!src.includes("void tb_kernel(float **bufs)")) throw new Error();
 * ```
 * @module
 */
import { coefOf, fromLinear, linearizeOpaque, nondecreasing, substitute } from "./affine.ts";
import {
  type AExpr,
  forEachLoad,
  int,
  isZeroSelect,
  type Kernel,
  type Stmt,
  varsOf,
} from "./ast.ts";

/**
 * Floats per vector of the explicit SIMD code by default: a 64-byte AVX-512
 * register. {@link CodegenOptions.lanes} picks 8 (a 256-bit AVX register).
 */
export const VECTOR_LANES = 16;
/** Largest register tile (in floats) kept in local vector variables: 32 AVX-512 vectors. */
const MAX_TILE_FLOATS = 512;
/** Floats per 64-byte cache line (prefetches touch one per line). */
const LINE_FLOATS = 16;
/** Largest unrolled loop written out explicitly. */
const MAX_EXPLICIT_UNROLL = 64;

/** `tb_lane_bits(m)`: lane i all ones where bit i of m is set (an AVX `vmaskmovps` mask). */
const LANE_BITS_8 = [
  "/* Lane i of the result is all ones where bit i of m is set (bits past 8 ignored). */",
  "static inline tb_v8i tb_lane_bits(unsigned m) {",
  "  const tb_v8i bit = {1, 2, 4, 8, 16, 32, 64, 128};",
  "  return (((tb_v8i){0} + (int)(m & 0xFFu)) & bit) != 0;",
  "}",
];

/** `tb_even_bits(m)`: the low `n` bits of m spread to the even bits, for stride-2 masked loads. */
function evenBits(n: number): string[] {
  return [
    "/* Lanes i of m spread to the even bits 2i, so that lane i of the result reads p[2i]. */",
    "static inline unsigned tb_even_bits(unsigned m) {",
    "  unsigned e = 0;",
    `  for (int i = 0; i < ${n}; i++) e |= (m >> i & 1u) << (2 * i);`,
    "  return e;",
    "}",
  ];
}

/** `tb_vmax` and `tb_vmin` of vector type `t` (with its integer twin, `t` + `i`). */
function minMax(t: string): string[] {
  return [
    "/* Lane-wise max and min as C's a > b ? a : b and a < b ? a : b: a compare and a blend. */",
    ...[["max", ">"], ["min", "<"]].flatMap(([name, op]) => [
      `static inline ${t} tb_v${name}(${t} a, ${t} b) {`,
      `  ${t}i m = a ${op} b;`,
      `  return (${t})(((${t}i)a & m) | ((${t}i)b & ~m));`,
      "}",
    ]),
  ];
}

/**
 * `tb_storeu_n(p, v, n)`: the first n lanes of v by plain stores of 8, 4, 2
 * and 1 floats (a memcpy of 4n bytes went through the stack for n = 6). The
 * AVX `tb_storeu_m` takes it for a mask of the first n lanes: see
 * {@link PREFIX_STORE}.
 */
function storeHead(lanes: 8 | 16): string[] {
  const v = `tb_v${lanes}`;
  return [
    `static inline void tb_storeu_n(float *p, ${v} v, int n) {`,
    `  if (n >= ${lanes}) {`,
    "    tb_storeu(p, v);",
    "    return;",
    "  }",
    "  typedef float tb_h8 __attribute__((vector_size(32)));",
    "  typedef float tb_h4 __attribute__((vector_size(16)));",
    "  typedef float tb_h2 __attribute__((vector_size(8)));",
    ...(lanes === 16
      ? [
        "  tb_h8 o = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);",
        "  if (n >= 8) {",
        "    __builtin_memcpy(p, &o, 32);",
        "    o = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);",
        "    p += 8, n -= 8;",
        "  }",
      ]
      : ["  tb_h8 o = v;"]),
    "  tb_h4 q = __builtin_shufflevector(o, o, 0, 1, 2, 3);",
    "  if (n >= 4) {",
    "    __builtin_memcpy(p, &q, 16);",
    "    q = __builtin_shufflevector(o, o, 4, 5, 6, 7);",
    "    p += 4, n -= 4;",
    "  }",
    "  if (n >= 2) {",
    "    tb_h2 d = __builtin_shufflevector(q, q, 0, 1);",
    "    __builtin_memcpy(p, &d, 8);",
    "    q = __builtin_shufflevector(q, q, 2, 3, 2, 3);",
    "    p += 2, n -= 2;",
    "  }",
    "  if (n >= 1) p[0] = q[0];",
    "}",
  ];
}

/**
 * The start of the AVX `tb_storeu_m` (vmaskmovps): a mask of the first n
 * lanes goes to `tb_storeu_n`. The transposed copy-out of a tile narrower
 * than a vector stores such masks (constants, so the test folds away), and
 * so does a padded row's end. On AMD's Zen 3, with plain stores instead of
 * vmaskmovps, the 16 x 1 x 4 tile of ResNet-18's 64 x 56 x 56 convolution ran
 * faster in 9 of 10 alternating runs (best of 200 calls, 1 and 2 threads; on
 * 2 threads by 4-11%), and its padding copy took 10-32% less time in 5 of 6
 * (scratch harness).
 */
const PREFIX_STORE = [
  "  /* A mask of the first n lanes: plain stores (vmaskmovps stores are slow on AMD's cores). */",
  "  if ((m & (m + 1)) == 0) {",
  "    tb_storeu_n(p, v, __builtin_popcount(m));",
  "    return;",
  "  }",
];

/** `tb_transpose8`: 8 AVX vectors transposed in place (the 16 x 16 transpose of AVX2 uses it too). */
const TRANSPOSE_8 = [
  "/* Transposes 8 vectors in place (r[i][j] <- r[j][i]): unpack, shuffle within 128-bit halves,",
  "   swap halves (16 shuffles in all). */",
  "static inline void tb_transpose8(tb_v8 *r) {",
  "  tb_v8 t[8], s[8];",
  "  for (int i = 0; i < 4; i++) {",
  "    t[2 * i] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 0, 8, 1, 9, 4, 12, 5, 13);",
  "    t[2 * i + 1] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 2, 10, 3, 11, 6, 14, 7, 15);",
  "  }",
  "  for (int h = 0; h < 2; h++) {",
  "    for (int k = 0; k < 2; k++) {",
  "      tb_v8 a = t[4 * h + k], b = t[4 * h + k + 2];",
  "      s[4 * h + 2 * k] = __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13);",
  "      s[4 * h + 2 * k + 1] = __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);",
  "    }",
  "  }",
  "  for (int j = 0; j < 4; j++) {",
  "    r[j] = __builtin_shufflevector(s[j], s[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);",
  "    r[j + 4] = __builtin_shufflevector(s[j], s[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);",
  "  }",
  "}",
];

const VECTOR_PRELUDE_16 = [
  "#if defined(TB_VECTOR_PRELUDE) && TB_VECTOR_PRELUDE != 16",
  "#error kernels of different vector widths in one file",
  "#endif",
  "#ifndef TB_VECTOR_PRELUDE",
  "#define TB_VECTOR_PRELUDE 16",
  "typedef float tb_v16 __attribute__((vector_size(64)));",
  "static inline tb_v16 tb_loadu(const float *p) {",
  "  tb_v16 v;",
  "  __builtin_memcpy(&v, p, 64);",
  "  return v;",
  "}",
  "static inline void tb_storeu(float *p, tb_v16 v) { __builtin_memcpy(p, &v, 64); }",
  ...storeHead(16),
  "/* Edge chunks: lanes selected by a 16-bit mask (AVX-512 masked moves, never faulting). */",
  "static inline unsigned tb_lanes_lt(long n) {",
  "  return n >= 16 ? 0xFFFFu : n <= 0 ? 0u : (1u << n) - 1u;",
  "}",
  "typedef int tb_v16i __attribute__((vector_size(64)));",
  "/* Zeroes the lanes outside m (any compiler with vector extensions; one masked move with AVX-512). */",
  "static inline tb_v16 tb_maskz(tb_v16 v, unsigned m) {",
  "  const tb_v16i bit = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};",
  "  return (tb_v16)((tb_v16i)v & ((((tb_v16i){0} + (int)m) & bit) != 0));",
  "}",
  "/* The compiler's own builtins behind immintrin.h's masked moves: that header alone costs gcc 0.25 s. */",
  "#if defined(__AVX512F__) && (defined(__GNUC__) || defined(__clang__))",
  "static inline tb_v16 tb_loadu_m(const float *p, unsigned m) {",
  "  return __builtin_ia32_loadups512_mask(p, (tb_v16){0}, (unsigned short)m);",
  "}",
  "static inline void tb_storeu_m(float *p, tb_v16 v, unsigned m) {",
  "  __builtin_ia32_storeups512_mask(p, v, (unsigned short)m);",
  "}",
  "/* Every second float from p (a stride-2 convolution's input row): two loads, one permute. */",
  "static inline tb_v16 tb_loadu_s2(const float *p) {",
  "  tb_v16 lo = tb_loadu(p), hi = tb_loadu_m(p + 16, 0x7FFFu);",
  "  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);",
  "}",
  "static inline tb_v16 tb_loadu_s2_m(const float *p, unsigned m) {",
  "  const tb_v16i even = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};",
  "  return __builtin_ia32_gathersiv16sf((tb_v16){0}, p, even, (unsigned short)m, 4);",
  "}",
  "#elif defined(__AVX__) && (defined(__GNUC__) || defined(__clang__))",
  "/* AVX and AVX2 (no AVX-512): each half of a vector by vmaskmovps, which never faults on a masked lane. */",
  "typedef float tb_v8 __attribute__((vector_size(32)));",
  "typedef int tb_v8i __attribute__((vector_size(32)));",
  "typedef float tb_v8a __attribute__((vector_size(32), may_alias));",
  ...LANE_BITS_8,
  "static inline tb_v16 tb_loadu_m(const float *p, unsigned m) {",
  "  tb_v8 lo = __builtin_ia32_maskloadps256((const tb_v8 *)p, tb_lane_bits(m));",
  "  tb_v8 hi = __builtin_ia32_maskloadps256((const tb_v8 *)(p + 8), tb_lane_bits(m >> 8));",
  "  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);",
  "}",
  "static inline void tb_storeu_m(float *p, tb_v16 v, unsigned m) {",
  ...PREFIX_STORE,
  "  tb_v8 lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);",
  "  tb_v8 hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);",
  "  __builtin_ia32_maskstoreps256((tb_v8 *)p, tb_lane_bits(m), lo);",
  "  __builtin_ia32_maskstoreps256((tb_v8 *)(p + 8), tb_lane_bits(m >> 8), hi);",
  "}",
  "/* Every second float from p: two loads (the second masked off p[31]), one permute. */",
  "static inline tb_v16 tb_loadu_s2(const float *p) {",
  "  tb_v16 lo = tb_loadu(p), hi = tb_loadu_m(p + 16, 0x7FFFu);",
  "  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);",
  "}",
  ...evenBits(8),
  "static inline tb_v16 tb_loadu_s2_m(const float *p, unsigned m) {",
  "  tb_v16 lo = tb_loadu_m(p, tb_even_bits(m)), hi = tb_loadu_m(p + 16, tb_even_bits(m >> 8));",
  "  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);",
  "}",
  "#else",
  "static inline tb_v16 tb_loadu_m(const float *p, unsigned m) {",
  "  tb_v16 v = {0};",
  "  for (int i = 0; i < 16; i++) if (m >> i & 1) v[i] = p[i];",
  "  return v;",
  "}",
  "static inline void tb_storeu_m(float *p, tb_v16 v, unsigned m) {",
  "  for (int i = 0; i < 16; i++) if (m >> i & 1) p[i] = v[i];",
  "}",
  "static inline tb_v16 tb_loadu_s2_m(const float *p, unsigned m) {",
  "  tb_v16 v = {0};",
  "  for (int i = 0; i < 16; i++) if (m >> i & 1) v[i] = p[2 * i];",
  "  return v;",
  "}",
  "static inline tb_v16 tb_loadu_s2(const float *p) { return tb_loadu_s2_m(p, 0xFFFFu); }",
  "#endif",
  ...minMax("tb_v16"),
  "#if !defined(__AVX512F__) && defined(__AVX__) && (defined(__GNUC__) || defined(__clang__))",
  ...TRANSPOSE_8,
  "/* Transposes 16 vectors in place (r[i][j] <- r[j][i]) as four 8 x 8 blocks of halves: AVX has",
  "   no 16-lane shuffle, and gcc writes the interleaving below lane by lane there. */",
  "static inline void tb_transpose16(tb_v16 *r) {",
  "  tb_v8a *h = (tb_v8a *)r; /* h[2 * i] and h[2 * i + 1]: the halves of r[i] */",
  "  tb_v8 q[4][8];",
  "  for (int i = 0; i < 8; i++) {",
  "    q[0][i] = h[2 * i];",
  "    q[1][i] = h[2 * i + 16];",
  "    q[2][i] = h[2 * i + 1];",
  "    q[3][i] = h[2 * i + 17];",
  "  }",
  "  for (int b = 0; b < 4; b++) tb_transpose8(q[b]);",
  "  for (int j = 0; j < 8; j++) {",
  "    h[2 * j] = q[0][j];",
  "    h[2 * j + 1] = q[1][j];",
  "    h[2 * j + 16] = q[2][j];",
  "    h[2 * j + 17] = q[3][j];",
  "  }",
  "}",
  "#else",
  "/* Transposes 16 vectors in place (r[i][j] <- r[j][i]): four rounds of interleaving. */",
  "static inline void tb_transpose16(tb_v16 *r) {",
  "  for (int round = 0; round < 4; round++) {",
  "    tb_v16 t[16];",
  "    for (int i = 0; i < 8; i++) {",
  "      t[2 * i] = __builtin_shufflevector(r[i], r[i + 8], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);",
  "      t[2 * i + 1] = __builtin_shufflevector(r[i], r[i + 8], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);",
  "    }",
  "    for (int i = 0; i < 16; i++) r[i] = t[i];",
  "  }",
  "}",
  "#endif",
  "#endif /* TB_VECTOR_PRELUDE */",
  "",
];

/**
 * The 8-float prelude (one 256-bit AVX register): what gcc can keep in
 * registers on a CPU without AVX-512, where it has no machine mode for a
 * 16-float vector and keeps every such variable on the stack.
 */
const VECTOR_PRELUDE_8 = [
  "#if defined(TB_VECTOR_PRELUDE) && TB_VECTOR_PRELUDE != 8",
  "#error kernels of different vector widths in one file",
  "#endif",
  "#ifndef TB_VECTOR_PRELUDE",
  "#define TB_VECTOR_PRELUDE 8",
  "typedef float tb_v8 __attribute__((vector_size(32)));",
  "typedef int tb_v8i __attribute__((vector_size(32)));",
  "static inline tb_v8 tb_loadu(const float *p) {",
  "  tb_v8 v;",
  "  __builtin_memcpy(&v, p, 32);",
  "  return v;",
  "}",
  "static inline void tb_storeu(float *p, tb_v8 v) { __builtin_memcpy(p, &v, 32); }",
  ...storeHead(8),
  "/* Edge chunks: lanes selected by an 8-bit mask. */",
  "static inline unsigned tb_lanes_lt(long n) {",
  "  return n >= 8 ? 0xFFu : n <= 0 ? 0u : (1u << n) - 1u;",
  "}",
  ...LANE_BITS_8,
  "/* Zeroes the lanes outside m. */",
  "static inline tb_v8 tb_maskz(tb_v8 v, unsigned m) {",
  "  return (tb_v8)((tb_v8i)v & tb_lane_bits(m));",
  "}",
  "#if defined(__AVX__) && (defined(__GNUC__) || defined(__clang__))",
  "/* vmaskmovps: a masked-off lane is neither read nor written, and never faults. */",
  "static inline tb_v8 tb_loadu_m(const float *p, unsigned m) {",
  "  return __builtin_ia32_maskloadps256((const tb_v8 *)p, tb_lane_bits(m));",
  "}",
  "static inline void tb_storeu_m(float *p, tb_v8 v, unsigned m) {",
  ...PREFIX_STORE,
  "  __builtin_ia32_maskstoreps256((tb_v8 *)p, tb_lane_bits(m), v);",
  "}",
  "#else",
  "static inline tb_v8 tb_loadu_m(const float *p, unsigned m) {",
  "  tb_v8 v = {0};",
  "  for (int i = 0; i < 8; i++) if (m >> i & 1) v[i] = p[i];",
  "  return v;",
  "}",
  "static inline void tb_storeu_m(float *p, tb_v8 v, unsigned m) {",
  "  for (int i = 0; i < 8; i++) if (m >> i & 1) p[i] = v[i];",
  "}",
  "#endif",
  "/* Every second float from p (a stride-2 convolution's input row): two loads (the second",
  "   masked off p[15]), one permute. */",
  "static inline tb_v8 tb_loadu_s2(const float *p) {",
  "  tb_v8 lo = tb_loadu(p), hi = tb_loadu_m(p + 8, 0x7Fu);",
  "  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);",
  "}",
  ...evenBits(4),
  "static inline tb_v8 tb_loadu_s2_m(const float *p, unsigned m) {",
  "  tb_v8 lo = tb_loadu_m(p, tb_even_bits(m)), hi = tb_loadu_m(p + 8, tb_even_bits(m >> 4));",
  "  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);",
  "}",
  ...minMax("tb_v8"),
  ...TRANSPOSE_8,
  "#endif /* TB_VECTOR_PRELUDE */",
  "",
];

/**
 * The C prelude of every kernel with explicit SIMD code of `lanes` floats
 * per vector. For 16: the vector type `tb_v16`, unaligned and masked loads
 * and stores, stride-2 loads, lane-wise max and min and the 16 x 16
 * transpose, each in three versions chosen by the compiler's target
 * (AVX-512; AVX and AVX2, by 8-float halves; portable lane loops). For 8:
 * the same functions of `tb_v8` (AVX's masked moves, or portable loops) and
 * the 8 x 8 transpose. Kernels of both widths cannot share one file (an
 * `#error` says so).
 *
 * @example
 * ```ts
 * import { vectorPrelude } from "./codegen_c.ts";
 * if (!vectorPrelude().includes("tb_transpose16")) throw new Error();
 * if (!vectorPrelude(8).includes("tb_transpose8")) throw new Error();
 * ```
 */
export function vectorPrelude(lanes: VectorLanes = VECTOR_LANES): string {
  return (lanes === 8 ? VECTOR_PRELUDE_8 : VECTOR_PRELUDE_16).join("\n");
}

/** Floats per vector of the explicit SIMD code. */
export type VectorLanes = 8 | 16;

/** How {@link generateC} writes a kernel. */
export interface CodegenOptions {
  /**
   * Floats per vector (default {@link VECTOR_LANES}, 16): 16 where the CPU
   * has AVX-512, 8 where it has AVX or AVX2 only (`vectorLanes()` in
   * ir/target_cpu.ts picks it for the machine). A vectorized loop of extent 16
   * is then two vectors; register tiles hold twice as many variables.
   */
  lanes?: VectorLanes;
}

/** A buffer in local vector variables was accessed in a way that needs memory. */
class NeedsMemory extends Error {
  constructor(readonly buf: string) {
    super(buf);
  }
}

interface Ctx {
  out: string[];
  /** Loop variables with a constant value here (explicitly unrolled). */
  consts: Map<string, number>;
  /**
   * Buffers held in local vector variables: how many variables each needs so
   * far (its size in vectors, or more when dead code past a clipped tile's
   * end names them; see {@link tileName}).
   */
  tiles: Map<string, number>;
  /**
   * Real (not written-out) loops around here inside the innermost buffer held
   * in vector variables; undefined outside such buffers.
   */
  tileLoops?: number;
  /** Values of the `let` variables emitted so far. */
  lets: Map<string, AExpr>;
  /** Extents of the (not written-out) loops around here. */
  extents: Map<string, number>;
  /** Conditions of the `if`s around here, constants substituted. */
  conds: AExpr[];
  /** An attempt to keep a loop's accumulations into `buf` in vector variables. */
  promote?: Promotion;
  /** Pools of large private buffers: buffer -> bytes per thread. */
  pools: Map<string, number>;
  vectors: boolean;
  /** Floats per vector. */
  lanes: VectorLanes;
  /** The C vector type (`tb_v16`, `tb_v8`). */
  vt: string;
  /** The mask of every lane (`0xFFFFu`, `0xFFu`). */
  full: string;
}

/**
 * Accumulator promotion of a reduction loop whose body only adds vectors into
 * `buf` at indices that do not change in the loop: loaded into vector
 * variables before it, stored after it (the register tile of a schedule that
 * accumulates into its output across KC blocks).
 */
interface Promotion {
  buf: string;
  /** Variables that change inside the loop (its own, inner loops', inner lets). */
  inner: Set<string>;
  /** Accumulators by the C text of their index. */
  accs: Map<string, string>;
  /**
   * Conditions of the `if`s around each accumulator's uses (by the C text of
   * its index; absent when none): its load and store run only when they hold,
   * so a register tile clipped to the tensor never touches memory past it.
   */
  guards: Map<string, string>;
  /** How many of `Ctx.conds` are outside the loop (around its loads and stores). */
  outer: number;
  ok: boolean;
}

/**
 * C source of a kernel; `options.lanes` sets the vector width.
 *
 * @example
 * ```ts
 * import { generateC } from "./codegen_c.ts";
 * import { lower } from "./lower.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(8, 32, 8), { prng: createPrng(0) });
 * sch.reorder("C", ["i", "k", "j"]);
 * sch.vectorize("C", "j");
 * if (!generateC(lower(sch), { lanes: 8 }).includes("tb_v8")) throw new Error();
 * ```
 */
export function generateC(kernel: Kernel, options: CodegenOptions = {}): string {
  const lanes = options.lanes ?? VECTOR_LANES;
  const ctx: Ctx = {
    out: [],
    consts: new Map(),
    tiles: new Map(),
    lets: new Map(),
    extents: new Map(),
    conds: [],
    pools: new Map(),
    vectors: false,
    lanes,
    vt: `tb_v${lanes}`,
    full: lanes === 16 ? "0xFFFFu" : "0xFFu",
  };
  const prologue = kernel.prologue ?? [];
  emitBlock(prologue, 1, ctx);
  const rewrite = ctx.out.splice(0);
  emitBlock(kernel.body, 1, ctx);
  const head: string[] = ["#include <stdlib.h>", "#include <string.h>"];
  if (ctx.pools.size > 0) head.push("#include <omp.h>");
  head.push("");
  if (ctx.vectors) {
    head.push(vectorPrelude(lanes));
  }
  const allocs: [string, number][] = [
    ...kernel.temps.map((t): [string, number] => [t.buf, alignedBytes(t.size)]),
  ];
  // Work space lives across calls (allocated on the first call, or again when
  // more threads need a bigger pool) and is freed when the library is
  // unloaded: no malloc, page faults or free on the timed path.
  const spaces: [string, string][] = [
    ...allocs.map(([buf, bytes]): [string, string] => [buf, `(size_t)${bytes}`]),
    ...[...ctx.pools].map(([buf, bytes]): [string, string] => [
      `${buf}_pool`,
      `(size_t)omp_get_max_threads() * ${bytes}`,
    ]),
  ];
  // The kernel's global names are tb_kernel, tb_ws and tb_release (and, with a
  // layout rewrite, tb_layout and tb_compute), so a builder can rename them
  // with macros to put many kernels in one file.
  if (spaces.length > 0) {
    head.push(
      "static struct {",
      ...spaces.flatMap(([buf]) => [`  float *${buf};`, `  size_t ${buf}_bytes;`]),
      "} tb_ws;",
      "__attribute__((destructor)) static void tb_release(void) {",
      ...spaces.map(([buf]) => `  free(tb_ws.${buf});`),
      "}",
      "",
    );
  }
  const entry = [
    ...kernel.params.map((p, i) => `  float *restrict ${p.buf} = bufs[${i}];`),
    ...spaces.flatMap(([buf, bytes]) => [
      `  if (tb_ws.${buf}_bytes < ${bytes}) {`,
      `    free(tb_ws.${buf});`,
      `    tb_ws.${buf}_bytes = ${bytes};`,
      `    tb_ws.${buf} = (float *)aligned_alloc(64, tb_ws.${buf}_bytes);`,
      `  }`,
      `  float *restrict ${buf} = tb_ws.${buf};`,
    ]),
  ];
  // gcc's loop if-conversion is off for every kernel (measure/builder.ts
  // DEFAULT_FLAGS); a kernel with a max or min and no conditional code gets it
  // back for its own functions, so that its max/min loops vectorize.
  // The schedule's own gcc options (`gcc.*` pragmas) join it.
  const optimize = [
    ...(ifConvertible([...prologue, ...kernel.body]) ? ["tree-loop-if-convert"] : []),
    ...(kernel.gccOptions ?? []),
  ];
  const attribute = optimize.length > 0
    ? `__attribute__((optimize(${optimize.map((o) => `"${o}"`).join(", ")}))) `
    : "";
  const fn = (name: string, lines: string[]) => [
    `${attribute}void ${name}(float **bufs) {`,
    ...entry,
    ...lines,
    "}",
    "",
  ];
  if (prologue.length === 0) return [...head, ...fn("tb_kernel", ctx.out)].join("\n");
  // The layout rewrite of the weights writes the work space that the compute
  // part reads; tb_kernel runs both, the harness (TB_LAYOUT_REWRITE) times
  // tb_compute after one tb_layout.
  return [
    "#define TB_LAYOUT_REWRITE 1",
    ...head,
    ...fn("tb_layout", rewrite),
    ...fn("tb_compute", ctx.out),
    "void tb_kernel(float **bufs) {",
    "  tb_layout(bufs);",
    "  tb_compute(bufs);",
    "}",
    "",
  ].join("\n");
}

/**
 * Whether gcc may if-convert a kernel's loops: it has a `max` or `min` (C
 * prints them as `a > b ? a : b`, a branch that keeps the loop scalar unless
 * if-converted) and no `select` or `if` (conditional loads, which gcc's
 * if-conversion may turn into full-width loads past a buffer's end: see
 * `DEFAULT_FLAGS` in measure/builder.ts). A ReLU, a residual add with its
 * ReLU or an unpadded max pool then runs in vectors (bias and ReLU on 64 x
 * 3,025 values: 44.6 us scalar, 6.2 us in vectors, 2 threads).
 *
 * @example
 * ```ts
 * import { ifConvertible } from "./codegen_c.ts";
 * const relu = { k: "bin", op: "max", a: { k: "load", buf: "X", index: { k: "var", name: "i" } }, b: { k: "float", v: 0 } } as const;
 * const store = { k: "store", buf: "O", index: { k: "var", name: "i" }, value: relu, accumulate: false } as const;
 * if (!ifConvertible([{ k: "for", v: "i", extent: 8, kind: "serial", body: [store] }])) throw new Error();
 * if (ifConvertible([{ k: "if", cond: { k: "cmp", op: "<", a: { k: "var", name: "i" }, b: { k: "int", v: 4 } }, body: [store] }])) throw new Error();
 * ```
 */
export function ifConvertible(body: Stmt[]): boolean {
  let minMax = false, conditional = false;
  const visit = (e: AExpr): void => {
    switch (e.k) {
      case "bin":
        if (e.op === "max" || e.op === "min") minMax = true;
        visit(e.a);
        visit(e.b);
        return;
      case "cmp":
      case "and":
        visit(e.a);
        visit(e.b);
        return;
      case "select":
        conditional = true;
        return;
      case "load":
        visit(e.index);
        return;
      default:
        return;
    }
  };
  const walk = (ss: Stmt[]): void => {
    for (const s of ss) {
      if (s.k === "for" || s.k === "alloc") walk(s.body);
      else if (s.k === "if") conditional = true;
      else if (s.k === "let") visit(s.value);
      else if (s.k === "store") {
        visit(s.index);
        visit(s.value);
      }
    }
  };
  walk(body);
  return minMax && !conditional;
}

function alignedBytes(size: number): number {
  return Math.ceil((size * 4) / 64) * 64;
}

function emitBlock(body: Stmt[], depth: number, ctx: Ctx): void {
  for (const s of body) emitStmt(s, depth, ctx);
}

function emitStmt(s: Stmt, depth: number, ctx: Ctx): void {
  const pad = "  ".repeat(depth);
  const out = ctx.out;
  switch (s.k) {
    case "for":
      if (s.kind === "vectorize" && emitVectorLoop(s, depth, ctx)) return;
      if (s.kind === "unroll" && emitTransposedCopy(s, depth, ctx)) return;
      if (s.kind === "serial" && emitTransposedGather(s, depth, ctx)) return;
      // A loop of one iteration is a constant (a register tile's unit `n` axis, say).
      if (
        (s.extent === 1 && s.kind !== "vectorize") ||
        (s.kind === "unroll" && s.extent <= MAX_EXPLICIT_UNROLL && hasVectorLoop(s.body, ctx.lanes))
      ) {
        for (let c = 0; c < s.extent; c++) {
          out.push(`${pad}{`, `${pad}  const int ${s.v} = ${c};`);
          ctx.consts.set(s.v, c);
          emitBlock(s.body, depth + 1, ctx);
          ctx.consts.delete(s.v);
          out.push(`${pad}}`);
        }
        return;
      }
      if (s.kind === "serial" && !ctx.promote && hasVectorLoop(s.body, ctx.lanes)) {
        const buf = accumulated(s.body);
        if (buf && !ctx.tiles.has(buf) && promoteLoop(s, depth, ctx, buf)) return;
      }
      if (ctx.promote) {
        ctx.promote.inner.add(s.v);
        if (s.kind === "parallel") ctx.promote.ok = false;
      }
      if (s.kind === "parallel") out.push(`${pad}#pragma omp parallel for schedule(static)`);
      if (s.kind === "vectorize") out.push(`${pad}#pragma omp simd`);
      if (s.kind === "unroll") out.push(`${pad}_Pragma("GCC unroll ${s.extent}")`);
      out.push(`${pad}for (int ${s.v} = 0; ${s.v} < ${s.extent}; ++${s.v}) {`);
      for (const pf of s.prefetch ?? []) out.push(...prefetchLines(s, pf, ctx, `${pad}  `));
      if (ctx.tileLoops !== undefined) ctx.tileLoops++;
      ctx.extents.set(s.v, s.extent);
      emitBlock(s.body, depth + 1, ctx);
      ctx.extents.delete(s.v);
      if (ctx.tileLoops !== undefined) ctx.tileLoops--;
      out.push(`${pad}}`);
      return;
    case "if":
      out.push(`${pad}if (${expr(s.cond)}) {`);
      ctx.conds.push(substitute(s.cond, constants(ctx.consts)));
      emitBlock(s.body, depth + 1, ctx);
      ctx.conds.pop();
      out.push(`${pad}}`);
      return;
    case "let":
      ctx.lets.set(s.name, s.value);
      ctx.promote?.inner.add(s.name);
      out.push(`${pad}const int ${s.name} = ${expr(s.value)};`);
      return;
    case "store":
      if (ctx.tiles.has(s.buf)) throw new NeedsMemory(s.buf);
      if (ctx.promote?.buf === s.buf) ctx.promote.ok = false;
      checkLoads(s.value, ctx);
      out.push(
        `${pad}${s.buf}[${indexCode(s.index, ctx)}] ${s.accumulate ? "+=" : "="} ${expr(s.value)};`,
      );
      return;
    case "alloc":
      emitAlloc(s, depth, ctx);
      return;
    case "sync":
      // A GPU block barrier: serial C runs one thread at a time, nothing to wait for.
      return;
  }
}

function emitAlloc(s: Stmt & { k: "alloc" }, depth: number, ctx: Ctx): void {
  const pad = "  ".repeat(depth);
  const out = ctx.out;
  out.push(`${pad}{`);
  if (s.heap) {
    const bytes = alignedBytes(s.size);
    ctx.pools.set(s.buf, bytes);
    out.push(
      `${pad}  float *restrict ${s.buf} = ${s.buf}_pool + (size_t)omp_get_thread_num() * ${
        bytes / 4
      };`,
    );
    emitBlock(s.body, depth + 1, ctx);
    out.push(`${pad}}`);
    return;
  }
  const vectors = s.size / ctx.lanes;
  if (
    Number.isInteger(vectors) && s.size <= MAX_TILE_FLOATS && hasVectorLoop(s.body, ctx.lanes)
  ) {
    const mark = out.length;
    const loops = ctx.tileLoops;
    ctx.tiles.set(s.buf, vectors);
    ctx.tileLoops = 0;
    try {
      out.push(""); // the declaration, once the body has named every variable
      emitBlock(s.body, depth + 1, ctx);
      const names = Array.from({ length: ctx.tiles.get(s.buf)! }, (_, i) => `${s.buf}_v${i}`);
      out[mark] = `${pad}  ${ctx.vt} ${names.join(", ")};`;
      out.push(`${pad}}`);
      ctx.vectors = true;
      return;
    } catch (e) {
      if (!(e instanceof NeedsMemory) || e.buf !== s.buf) throw e;
      out.length = mark;
    } finally {
      ctx.tiles.delete(s.buf);
      ctx.tileLoops = loops;
    }
  }
  out.push(`${pad}  float ${s.buf}[${s.size}] __attribute__((aligned(64)));`);
  emitBlock(s.body, depth + 1, ctx);
  out.push(`${pad}}`);
}

/** True when `body` holds a vectorized loop whose extent is a multiple of the vector width. */
function hasVectorLoop(body: Stmt[], lanes: VectorLanes): boolean {
  return body.some((s) =>
    s.k === "for"
      ? (s.kind === "vectorize" && s.extent % lanes === 0) || hasVectorLoop(s.body, lanes)
      : (s.k === "if" || s.k === "alloc") && hasVectorLoop(s.body, lanes)
  );
}

/**
 * Writes loop `s` with its accumulations into `buf` in vector variables;
 * returns false (nothing written) when the loop does not qualify.
 */
function promoteLoop(s: Stmt & { k: "for" }, depth: number, ctx: Ctx, buf: string): boolean {
  const pad = "  ".repeat(depth);
  const mark = ctx.out.length;
  const p: Promotion = {
    buf,
    inner: new Set([s.v]),
    accs: new Map(),
    guards: new Map(),
    outer: ctx.conds.length,
    ok: true,
  };
  ctx.promote = p;
  try {
    emitStmt(s, depth + 1, ctx);
  } finally {
    ctx.promote = undefined;
  }
  if (!p.ok || p.accs.size === 0 || p.accs.size * ctx.lanes > MAX_TILE_FLOATS) {
    ctx.out.length = mark;
    return false;
  }
  const body = ctx.out.splice(mark);
  ctx.out.push(`${pad}{`);
  for (const [index, name] of p.accs) {
    const load = `tb_loadu(&${buf}[${index}])`;
    const g = p.guards.get(index);
    ctx.out.push(`${pad}  ${ctx.vt} ${name} = ${g ? `${g} ? ${load} : (${ctx.vt}){0}` : load};`);
  }
  ctx.out.push(...body);
  for (const [index, name] of p.accs) {
    const g = p.guards.get(index);
    ctx.out.push(`${pad}  ${g ? `if ${g} ` : ""}tb_storeu(&${buf}[${index}], ${name});`);
  }
  ctx.out.push(`${pad}}`);
  ctx.vectors = true;
  return true;
}

/** Most cache lines one prefetch annotation touches per iteration. */
const MAX_PREFETCH_LINES = 64;

/**
 * `__builtin_prefetch` of every 64-byte line that iteration `v + offset` of
 * loop `s` reads from `pf.buf`: for each load of it in the body, its index
 * at that iteration is an affine form whose inner-loop part spans a constant
 * range (inner loops and lets inside the body vary; loops outside do not).
 * Loads whose index is not affine in the inner variables are skipped.
 */
function prefetchLines(
  s: Stmt & { k: "for" },
  pf: { buf: string; offset: number },
  ctx: Ctx,
  pad: string,
): string[] {
  const extents = new Map<string, number>();
  const lets = new Map<string, AExpr>();
  const indices = new Map<string, AExpr>();
  const visitExpr = (e: AExpr): void =>
    forEachLoad(e, (l) => {
      if (l.buf === pf.buf) indices.set(expr(l.index), l.index);
    });
  const visit = (body: Stmt[]): void => {
    for (const st of body) {
      if (st.k === "for") {
        extents.set(st.v, st.extent);
        visit(st.body);
      } else if (st.k === "let") {
        lets.set(st.name, st.value);
        visitExpr(st.value);
      } else if (st.k === "store") visitExpr(st.value);
      else if (st.k === "if") {
        visitExpr(st.cond);
        visit(st.body);
      } else if (st.k === "alloc") visit(st.body);
    }
  };
  visit(s.body);
  const out: string[] = [];
  for (const index of indices.values()) {
    const l = linearizeOpaque(index, lets);
    const terms = new Map<string, number>();
    let c = l.c, span = 0, ok = true;
    for (const [v, k] of l.terms) {
      if (v.startsWith("(")) {
        // A non-affine part must not change inside the loop.
        if ([s.v, ...extents.keys()].some((x) => v.includes(`"${x}"`))) ok = false;
        else terms.set(v, k);
      } else if (v === s.v) {
        terms.set(v, k);
        c += k * pf.offset;
      } else if (extents.has(v)) {
        const far = k * (extents.get(v)! - 1);
        c += Math.min(0, far);
        span += Math.abs(far);
      } else if (ctx.consts.has(v)) c += k * ctx.consts.get(v)!;
      else terms.set(v, k);
    }
    const lines = Math.floor(span / LINE_FLOATS) + 1;
    if (!ok || lines > MAX_PREFETCH_LINES) continue;
    const at = expr(fromLinear({ terms, c }));
    const calls = Array.from(
      { length: lines },
      (_, i) => `__builtin_prefetch(tb_pf + ${Math.min(i * LINE_FLOATS, span)}, 0, 3);`,
    );
    out.push(`${pad}{ const float *tb_pf = &${pf.buf}[${at}]; ${calls.join(" ")} }`);
  }
  return out;
}

/** The one buffer that `body` accumulates into (`+=`), if exactly one. */
function accumulated(body: Stmt[]): string | undefined {
  const bufs = new Set<string>();
  const visit = (b: Stmt[]) => {
    for (const s of b) {
      if (s.k === "store" && s.accumulate) bufs.add(s.buf);
      if (s.k === "for" || s.k === "if" || s.k === "alloc") visit(s.body);
    }
  };
  visit(body);
  return bufs.size === 1 ? [...bufs][0] : undefined;
}

/** The accumulator of a vector `+=` into the promoted buffer, or undefined (promotion fails). */
function accumulator(st: Stmt & { k: "store" }, at: Map<string, number>, ctx: Ctx) {
  const p = ctx.promote!;
  const index = substitute(st.index, constants(at));
  if (!st.accumulate || [...varsOf(index)].some((v) => p.inner.has(v))) {
    p.ok = false;
    return undefined;
  }
  // The guards of this use inside the loop guard its load and store, but for
  // those that hold wherever the loop runs (given its loops' extents and the
  // guards around it). A guard that changes in the loop bounds a reduction
  // axis (the accumulator is touched in some iterations only, at an index
  // other guards keep in bounds): it goes too, unless it shares a variable
  // with the index (kept in memory). Every use of one accumulator must have
  // the same guards.
  const vars = (e: AExpr) => names(e, ctx);
  const indexVars = vars(index);
  const conds = ctx.conds.slice(p.outer).flatMap(conjuncts).filter((c) => {
    const vs = vars(c);
    if (![...vs].some((v) => p.inner.has(v))) return true;
    if ([...vs].some((v) => indexVars.has(v))) p.ok = false;
    return false;
  });
  if (!p.ok) return undefined;
  const around = ctx.conds.slice(0, p.outer).flatMap(conjuncts);
  const needed = conds.filter((c) => !alwaysHolds(c, around, ctx));
  const key = expr(index);
  const guard = needed.length === 0 ? "" : `(${needed.map(expr).join(" && ")})`;
  if (!p.accs.has(key)) {
    p.accs.set(key, `${p.buf}_acc${p.accs.size}`);
    if (guard) p.guards.set(key, guard);
  } else if ((p.guards.get(key) ?? "") !== guard) p.ok = false;
  return p.accs.get(key);
}

/** The variables `e` names, and those of the values of the lets it names. */
function names(e: AExpr, ctx: Ctx, out = new Set<string>()): Set<string> {
  for (const v of varsOf(e)) {
    if (out.has(v)) continue;
    out.add(v);
    const l = ctx.lets.get(v);
    if (l) names(l, ctx, out);
  }
  return out;
}

/** Integer constants of a name -> value map, for {@link substitute}. */
function constants(values: Map<string, number>): Map<string, AExpr> {
  return new Map([...values].map(([v, c]) => [v, int(c)]));
}

/**
 * True when comparison `c` holds for every value of the variables it names:
 * loops run over their extents, constants and lets stand for their values,
 * and an expression that a condition of `around` bounds (`e < n`) stays in
 * that bound. False when that cannot be shown.
 */
function alwaysHolds(c: AExpr, around: AExpr[], ctx: Ctx): boolean {
  if (c.k !== "cmp") return false;
  const a = rangeOf(c.a, around, ctx), b = rangeOf(c.b, around, ctx);
  if (!a || !b) return false;
  switch (c.op) {
    case "<":
      return a[1] < b[0];
    case "<=":
      return a[1] <= b[0];
    case ">=":
      return a[0] >= b[1];
    case ">":
      return a[0] > b[1];
  }
  return false;
}

/** Lowest and highest value of integer expression `e` (see {@link alwaysHolds}). */
function rangeOf(e: AExpr, around: AExpr[], ctx: Ctx): [number, number] | undefined {
  let r: [number, number] | undefined;
  if (e.k === "int") r = [e.v, e.v];
  else if (e.k === "var") {
    const c = ctx.consts.get(e.name), n = ctx.extents.get(e.name), l = ctx.lets.get(e.name);
    if (c !== undefined) r = [c, c];
    else if (n !== undefined) r = [0, n - 1];
    else if (l !== undefined) r = rangeOf(l, around, ctx);
  } else if (e.k === "bin") {
    const a = rangeOf(e.a, around, ctx), b = rangeOf(e.b, around, ctx);
    if (!a || !b) return undefined;
    if (e.op === "+") r = [a[0] + b[0], a[1] + b[1]];
    else if (e.op === "-") r = [a[0] - b[1], a[1] - b[0]];
    else if (e.op === "*") {
      const p = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]];
      r = [Math.min(...p), Math.max(...p)];
    } else if (e.op === "max") r = [Math.max(a[0], b[0]), Math.max(a[1], b[1])];
    else if (e.op === "min") r = [Math.min(a[0], b[0]), Math.min(a[1], b[1])];
  }
  if (!r) return undefined;
  const text = expr(e);
  for (const g of around) {
    if (g.k !== "cmp" || expr(g.a) !== text) continue;
    const b = rangeOf(g.b, [], ctx);
    if (!b || b[0] !== b[1]) continue;
    if (g.op === "<") r[1] = Math.min(r[1], b[0] - 1);
    else if (g.op === "<=") r[1] = Math.min(r[1], b[0]);
    else if (g.op === ">=") r[0] = Math.max(r[0], b[0]);
    else if (g.op === ">") r[0] = Math.max(r[0], b[0] + 1);
  }
  return r;
}

/** The conjuncts of a condition (`a && b && c` -> `[a, b, c]`). */
function conjuncts(c: AExpr): AExpr[] {
  return c.k === "and" ? [...conjuncts(c.a), ...conjuncts(c.b)] : [c];
}

/** Throws NeedsMemory when `e` reads a buffer held in vector variables. */
function checkLoads(e: AExpr, ctx: Ctx): void {
  forEachLoad(e, (l) => {
    if (ctx.tiles.has(l.buf)) throw new NeedsMemory(l.buf);
    if (ctx.promote?.buf === l.buf) ctx.promote.ok = false;
  });
}

/** A vector or scalar C expression. */
interface VCode {
  code: string;
  vec: boolean;
}

/** A store of a vectorized loop's body, with the guard around it (if any). */
interface LaneStore {
  st: Stmt & { k: "store" };
  guard?: AExpr;
  /** The value when every condition holds (a `select` zero-padding unwrapped). */
  value: AExpr;
  /** Conditions of the full-chunk fast path. */
  conds: AExpr[];
}

/**
 * Writes a vectorized loop as explicit vector statements, one vector at a
 * time; returns false (nothing written) when its body does not fit. Guards
 * and zero-padding selects that grow monotonically with the lane become one
 * test per chunk: full chunks run vector code, a chunk at an edge runs its
 * lanes one by one.
 */
function emitVectorLoop(s: Stmt & { k: "for" }, depth: number, ctx: Ctx): boolean {
  const lanes = ctx.lanes;
  if (s.extent % lanes !== 0 || s.body.length === 0) return false;
  const items: LaneStore[] = [];
  for (const b of s.body) {
    if (b.k === "store") items.push(laneStore(b));
    else if (b.k === "if" && b.body.every((x) => x.k === "store")) {
      for (const st of b.body as (Stmt & { k: "store" })[]) {
        const it = laneStore(st);
        items.push({ ...it, guard: b.cond, conds: [b.cond, ...it.conds] });
      }
    } else return false;
  }
  if (!items.every((it) => coefOf(it.st.index, s.v, ctx.consts) === 1)) return false;
  // An edge chunk runs masked vector code when every condition bounds the lane
  // linearly; else its lanes one by one, which inside a loop of a register
  // tile would bloat its hot loop (the guarded copy of an edge tile): keep
  // that copy in memory.
  const maskable = items.every((it) => it.conds.every((c) => laneMask(c, s.v, 0, ctx)));
  if (!maskable && items.some((it) => it.conds.length > 0) && (ctx.tileLoops ?? 0) > 0) {
    return false;
  }
  const skipsWhole = items.every((it) =>
    it.st.accumulate && it.conds.every((c) => coefOf(c, s.v, ctx.consts) === 0)
  );
  const pad = "  ".repeat(depth);
  const lines: string[] = [];
  for (let base = 0; base < s.extent; base += lanes) {
    lines.push(`${pad}{`, `${pad}  const int ${s.v} = ${base};`);
    const at = new Map(ctx.consts).set(s.v, base);
    const full = items.flatMap((it) => it.conds).map((c) =>
      chunkCondition(c, s.v, base, base + lanes - 1)
    );
    if (full.some((c) => c === undefined)) return false;
    const vector: string[] = [];
    for (const it of items) {
      const v = vexpr(it.value, s.v, ctx, at);
      if (!v) return false;
      const value = v.vec ? v.code : `((${ctx.vt}){0} + ${v.code})`;
      const op = it.st.accumulate ? "+=" : "=";
      const acc = ctx.promote?.buf === it.st.buf ? accumulator(it.st, at, ctx) : undefined;
      if (ctx.tiles.has(it.st.buf)) {
        vector.push(`${tileVar(it.st.buf, it.st.index, at, ctx)} ${op} ${value};`);
      } else if (acc) {
        vector.push(`${acc} += ${value};`);
      } else {
        const p = `&${it.st.buf}[${indexCode(it.st.index, ctx, at)}]`;
        vector.push(
          it.st.accumulate
            ? `tb_storeu(${p}, tb_loadu(${p}) + ${value});`
            : `tb_storeu(${p}, ${value});`,
        );
      }
    }
    if (full.length === 0) lines.push(...vector.map((l) => `${pad}  ${l}`));
    else if (skipsWhole) {
      // Updates whose conditions hold for all lanes or none (a padded tap of
      // a register tile): nothing to do when they do not hold.
      lines.push(`${pad}  if (${full.map((c) => expr(c!)).join(" && ")}) {`);
      lines.push(...vector.map((l) => `${pad}    ${l}`), `${pad}  }`);
    } else {
      const edge = maskable
        ? maskedChunk(items, s.v, base, ctx, at)
        : laneChunk(items, s.v, base, ctx, at);
      if (!edge) return false;
      lines.push(`${pad}  if (${full.map((c) => expr(c!)).join(" && ")}) {`);
      lines.push(...vector.map((l) => `${pad}    ${l}`), `${pad}  } else {`);
      lines.push(...edge.map((l) => `${pad}    ${l}`), `${pad}  }`);
    }
    lines.push(`${pad}}`);
  }
  ctx.out.push(...lines);
  ctx.vectors = true;
  return true;
}

/**
 * An unrolled loop `x` around a vectorized loop `f` whose one store runs
 * along `x` in memory (coefficient 1) and strides along `f`, copying a value
 * that is contiguous along `f`: the copy-out of a tile kept channel-innermost
 * (`conv2d-nchwc`). Written as blocks of L x L values (L lanes a vector):
 * L vector loads along `f` (of the value: a load, or an element-wise
 * expression of loads along `f` and values invariant along it), an
 * in-register transpose, L vector stores along `x` (masked where fewer than
 * L `x` remain), instead of L scalar stores per vector. Each `x` of an edge
 * tile may be guarded (`if (x0 * 6 + x < 56)`, a tile of 6 columns on a
 * 56-wide row): a column the guard drops is neither read nor stored, the
 * stores masked by the guards' lanes.
 * Returns false (nothing written) when the loop is not such a copy.
 */
function emitTransposedCopy(s: Stmt & { k: "for" }, depth: number, ctx: Ctx): boolean {
  const first = s.body.length === 1 ? s.body[0] : undefined;
  // An edge tile's columns each guarded (`if (x0 * 6 + x < 56)`, say).
  const guard = first?.k === "if" && first.body.length === 1 ? first.cond : undefined;
  const inner = guard && first?.k === "if" ? first.body[0] : first;
  if (
    !inner || inner.k !== "for" || inner.kind !== "vectorize" ||
    inner.extent % ctx.lanes !== 0 || inner.body.length !== 1 || s.extent > MAX_EXPLICIT_UNROLL
  ) return false;
  const st = inner.body[0];
  if (st.k !== "store" || st.accumulate || ctx.tiles.has(st.buf)) return false;
  const stride = coefOf(st.index, inner.v, ctx.consts);
  if (coefOf(st.index, s.v, ctx.consts) !== 1 || stride === undefined || stride <= 1) {
    return false;
  }
  // The value: a load contiguous along `f`, or an expression of such loads and
  // values invariant along `f` (a fused bias and activation: act(tile + b[f])).
  let along = false;
  forEachLoad(st.value, (l) => {
    if (coefOf(l.index, inner.v, ctx.consts) === 1) along = true;
  });
  if (!along) return false;
  const pad = "  ".repeat(depth);
  const lines: string[] = [];
  const lanes = ctx.lanes;
  const zero = `(${ctx.vt}){0}`;
  for (let fb = 0; fb < inner.extent; fb += lanes) {
    for (let xb = 0; xb < s.extent; xb += lanes) {
      const n = Math.min(lanes, s.extent - xb);
      // Column i's guard; a column it drops is neither read nor stored.
      const held = (i: number) => expr(substitute(guard!, new Map([[s.v, int(xb + i)]])));
      lines.push(`${pad}{`, `${pad}  ${ctx.vt} tb_t[${lanes}];`);
      if (guard) {
        const bits = Array.from({ length: n }, (_, i) => `(${held(i)} ? ${1 << i}u : 0u)`);
        lines.push(`${pad}  const unsigned tb_g = ${bits.join(" | ")};`);
      }
      for (let i = 0; i < lanes; i++) {
        const at = new Map(ctx.consts).set(s.v, xb + i).set(inner.v, fb);
        const v = i < n ? vexpr(st.value, inner.v, ctx, at) : { code: zero, vec: true };
        if (!v?.vec) return false;
        const value = guard && i < n ? `(tb_g >> ${i} & 1u) ? ${v.code} : ${zero}` : v.code;
        lines.push(`${pad}  tb_t[${i}] = ${value};`);
      }
      lines.push(`${pad}  tb_transpose${lanes}(tb_t);`);
      for (let j = 0; j < lanes; j++) {
        const at = new Map(ctx.consts).set(s.v, xb).set(inner.v, fb + j);
        const p = `&${st.buf}[${indexCode(st.index, ctx, at)}]`;
        lines.push(
          guard
            ? `${pad}  tb_storeu_m(${p}, tb_t[${j}], tb_g);`
            : n === lanes
            ? `${pad}  tb_storeu(${p}, tb_t[${j}]);`
            : `${pad}  tb_storeu_m(${p}, tb_t[${j}], ${(1 << n) - 1}u);`,
        );
      }
      lines.push(`${pad}}`);
    }
  }
  ctx.out.push(...lines);
  ctx.vectors = true;
  return true;
}

/**
 * A loop `x` around a vectorized loop `c` whose one store runs along `c` in
 * memory (coefficient 1), copying a value read along `x` (coefficient 1) and
 * strided along `c`, maybe zero-padded (`select(cond, load, 0)`, `cond`
 * independent of `c`): an NCHW input copied into a channel-blocked one,
 * `[C/CB][H][W][CB]` (`conv2d-nchwxc`'s padding copy). Written as blocks of
 * L x L values (L lanes a vector): L vector loads along `x` (masked by the
 * padding's condition and, past the loop's end, by the lanes left), an
 * in-register transpose, L vector stores along `c`. The scalar gather it
 * replaces read one float per store, each from another channel's plane: 13-17%
 * of the 64 x 56 x 56 layer's time on one Zen 3 core, 10-13 times the
 * transposes' (README, "CPUs without AVX-512"). Returns false (nothing
 * written) when the loop is not such a copy.
 */
function emitTransposedGather(s: Stmt & { k: "for" }, depth: number, ctx: Ctx): boolean {
  const lanes = ctx.lanes;
  const inner = s.body.length === 1 ? s.body[0] : undefined;
  if (
    !inner || inner.k !== "for" || inner.kind !== "vectorize" || inner.extent % lanes !== 0 ||
    inner.body.length !== 1 || s.extent < lanes || inner.extent > MAX_EXPLICIT_UNROLL
  ) return false;
  const st = inner.body[0];
  if (st.k !== "store" || st.accumulate || ctx.tiles.has(st.buf) || ctx.promote) return false;
  const sx = coefOf(st.index, s.v, ctx.consts);
  if (coefOf(st.index, inner.v, ctx.consts) !== 1 || sx === undefined) return false;
  const { value, conds } = laneStore(st);
  if (value.k !== "load" || ctx.tiles.has(value.buf)) return false;
  const sc = coefOf(value.index, inner.v, ctx.consts);
  if (coefOf(value.index, s.v, ctx.consts) !== 1 || sc === undefined || sc <= 1) return false;
  if (conds.some((c) => coefOf(c, inner.v, ctx.consts) !== 0)) return false;
  const x: AExpr = { k: "var", name: s.v };
  const masks = conds.map((c) => laneMask(c, s.v, x, ctx));
  if (masks.some((m) => m === undefined)) return false;
  const pad = "  ".repeat(depth);
  const vt = ctx.vt;
  /** One block at `x` = s.v: loads (masked by `mask` when given), transpose, the first `n` stores. */
  const block = (mask: string | undefined, n: number, indent: string): string[] => {
    const lines: string[] = [];
    for (let fb = 0; fb < inner.extent; fb += lanes) {
      lines.push(`${indent}{`, `${indent}  ${vt} tb_t[${lanes}];`);
      for (let i = 0; i < lanes; i++) {
        const at = new Map(ctx.consts).set(inner.v, fb + i);
        const p = `&${value.buf}[${indexCode(value.index, ctx, at)}]`;
        lines.push(
          `${indent}  tb_t[${i}] = ${mask ? `tb_loadu_m(${p}, ${mask})` : `tb_loadu(${p})`};`,
        );
      }
      lines.push(`${indent}  tb_transpose${lanes}(tb_t);`);
      for (let j = 0; j < n; j++) {
        const at = new Map(ctx.consts).set(inner.v, fb);
        const p = `&${st.buf}[${indexCode(st.index, ctx, at)} + ${j * sx}]`;
        lines.push(`${indent}  tb_storeu(${p}, tb_t[${j}]);`);
      }
      lines.push(`${indent}}`);
    }
    return lines;
  };
  const cond = masks.length > 0 ? masks.join(" & ") : undefined;
  const full = s.extent - (s.extent % lanes);
  const lines = [`${pad}for (int ${s.v} = 0; ${s.v} < ${full}; ${s.v} += ${lanes}) {`];
  if (cond) {
    lines.push(
      `${pad}  const unsigned tb_m = ${cond};`,
      `${pad}  if (tb_m == ${ctx.full}) {`,
      ...block(undefined, lanes, `${pad}    `),
      `${pad}  } else {`,
      ...block("tb_m", lanes, `${pad}    `),
      `${pad}  }`,
    );
  } else lines.push(...block(undefined, lanes, `${pad}  `));
  lines.push(`${pad}}`);
  const rest = s.extent - full;
  if (rest > 0) {
    lines.push(
      `${pad}{`,
      `${pad}  const int ${s.v} = ${full};`,
      `${pad}  const unsigned tb_m = tb_lanes_lt(${rest})${cond ? ` & ${cond}` : ""};`,
      ...block("tb_m", rest, `${pad}  `),
      `${pad}}`,
    );
  }
  ctx.out.push(...lines);
  ctx.vectors = true;
  return true;
}

/**
 * The lanes of the vector of `v` at `base` where condition `c` holds, as a C mask
 * expression, when `c` bounds the lane linearly (`a(v) < b` and the like,
 * `a` with a positive coefficient in `v`: 2 for a stride-2 reader) or does
 * not depend on it; else undefined.
 */
function laneMask(c: AExpr, v: string, base: number | AExpr, ctx: Ctx): string | undefined {
  if (coefOf(c, v, ctx.consts) === 0) return `(${expr(c)} ? ${ctx.full} : 0u)`;
  if (c.k === "and") {
    const a = laneMask(c.a, v, base, ctx), b = laneMask(c.b, v, base, ctx);
    return a && b ? `(${a} & ${b})` : undefined;
  }
  const k = c.k === "cmp" && coefOf(c.b, v, ctx.consts) === 0
    ? coefOf(c.a, v, ctx.consts)
    : undefined;
  if (c.k !== "cmp" || k === undefined || k < 1 || !Number.isInteger(k)) return undefined;
  // Lane l holds when a(base) + k * l (op) b, i.e. k * l (op) room = b - a(base):
  // l < ceil(room / k) for "<", l < ceil((room + 1) / k) for "<=" (C's division
  // truncates, and every room <= 0 gives no lane either way).
  const room = expr(substitute(
    { k: "bin", op: "-", a: c.b, b: c.a },
    new Map([[v, typeof base === "number" ? int(base) : base]]),
  ));
  const lanes = (extra: number) => {
    const n = extra === 0 ? room : `${room} + ${extra}`;
    return k === 1 ? n : `(${n} + ${k - 1}) / ${k}`;
  };
  switch (c.op) {
    case "<":
      return `tb_lanes_lt(${lanes(0)})`;
    case "<=":
      return `tb_lanes_lt(${lanes(1)})`;
    case ">=":
      return `(~tb_lanes_lt(${lanes(0)}) & ${ctx.full})`;
    case ">":
      return `(~tb_lanes_lt(${lanes(1)}) & ${ctx.full})`;
  }
  return undefined;
}

/**
 * The statements of an edge chunk as masked vector code: loads of masked-off
 * lanes read nothing, stores to memory write only the lanes whose guard
 * holds, zero-padding selects zero their lanes. Lanes of a register tile
 * outside the guard hold values never stored. Undefined when a value does not
 * vectorize.
 */
function maskedChunk(
  items: LaneStore[],
  v: string,
  base: number,
  ctx: Ctx,
  at: Map<string, number>,
): string[] | undefined {
  const out: string[] = [];
  for (const it of items) {
    const guard = it.guard ? laneMask(it.guard, v, base, ctx)! : ctx.full;
    const selects = it.conds.filter((c) => c !== it.guard).map((c) => laneMask(c, v, base, ctx)!);
    const sel = selects.length > 0 ? selects.join(" & ") : undefined;
    const value = vexpr(it.value, v, ctx, at, "tb_m");
    if (!value) return undefined;
    let code = value.vec ? value.code : `((${ctx.vt}){0} + ${value.code})`;
    if (sel) code = `tb_maskz(${code}, tb_m)`;
    const op = it.st.accumulate ? "+=" : "=";
    if (ctx.promote?.buf === it.st.buf) ctx.promote.ok = false;
    const store = (value: string) => {
      if (ctx.tiles.has(it.st.buf)) {
        return `${tileVar(it.st.buf, it.st.index, at, ctx)} ${op} ${value};`;
      }
      const p = `&${it.st.buf}[${indexCode(it.st.index, ctx, at)}]`;
      return it.st.accumulate
        ? `tb_storeu_m(${p}, tb_loadu_m(${p}, tb_g) + ${value}, tb_g);`
        : `tb_storeu_m(${p}, ${value}, tb_g);`;
    };
    // Scalar loads run only when some lane needs them; lanes the guard keeps
    // but a select zeroes get zeros.
    out.push(
      "{",
      `  const unsigned tb_g = ${guard};`,
      `  const unsigned tb_m = tb_g${sel ? ` & ${sel}` : ""};`,
      `  if (tb_m) ${store(code)}`,
      ...(sel && !it.st.accumulate ? [`  else if (tb_g) ${store(`((${ctx.vt}){0})`)}`] : []),
      "}",
    );
  }
  return out;
}

/**
 * The statements of an edge chunk run lane by lane: a plain loop over its
 * lanes, or (when a register tile is involved) each lane written out with
 * its tile lanes named.
 */
function laneChunk(
  items: LaneStore[],
  v: string,
  base: number,
  ctx: Ctx,
  at: Map<string, number>,
): string[] {
  const scalar = (la: Map<string, number>) =>
    items.map((it) => {
      const store = `${lvalue(it.st, la, ctx)} ${it.st.accumulate ? "+=" : "="} ${
        sexpr(it.st.value, la, ctx)
      };`;
      return `${it.guard ? `if (${expr(it.guard)}) ` : ""}${store}`;
    });
  if (!items.some((it) => usesTile(it.st, ctx))) {
    // No register tile involved: the edge chunk is a plain loop over its lanes
    // (the lane variable changes in this loop: not a constant to fold).
    const loop = new Map(at);
    loop.delete(v);
    const end = base + ctx.lanes;
    return [
      `for (int ${v} = ${base}; ${v} < ${end}; ++${v}) {`,
      ...scalar(loop).map((l) => `  ${l}`),
      "}",
    ];
  }
  return Array.from({ length: ctx.lanes }, (_, lane) => {
    const la = new Map(at).set(v, base + lane);
    return ["{", `  const int ${v} = ${base + lane};`, ...scalar(la).map((l) => `  ${l}`), "}"];
  }).flat();
}

/** True when a store writes or reads a buffer held in vector variables. */
function usesTile(st: Stmt & { k: "store" }, ctx: Ctx): boolean {
  try {
    checkLoads(st.value, ctx);
    return ctx.tiles.has(st.buf);
  } catch (e) {
    if (e instanceof NeedsMemory) return true;
    throw e;
  }
}

function laneStore(st: Stmt & { k: "store" }): LaneStore {
  const v = st.value;
  if (isZeroSelect(v)) {
    return { st, value: v.t, conds: [v.cond] };
  }
  return { st, value: v, conds: [] };
}

/**
 * A condition that holds for lanes `lo..hi` of `v` when it holds here, or
 * undefined when the condition is not monotone in `v`.
 */
function chunkCondition(c: AExpr, v: string, lo: number, hi: number): AExpr | undefined {
  const at = (x: number) => new Map([[v, { k: "int", v: x } as AExpr]]);
  if (coefOf(c, v) === 0) return c;
  if (c.k === "and") {
    const a = chunkCondition(c.a, v, lo, hi), b = chunkCondition(c.b, v, lo, hi);
    return a && b ? { k: "and", a, b } : undefined;
  }
  if (c.k !== "cmp" || coefOf(c.b, v) !== 0 || !nondecreasing(c.a, new Set([v]))) return undefined;
  if (c.op === "<" || c.op === "<=") return substitute(c, at(hi));
  if (c.op === ">=" || c.op === ">") return substitute(c, at(lo));
  return undefined;
}

/** The C lvalue of a scalar store (one lane of a tile buffer, or memory). */
function lvalue(st: Stmt & { k: "store" }, at: Map<string, number>, ctx: Ctx): string {
  if (ctx.promote?.buf === st.buf) ctx.promote.ok = false;
  if (!ctx.tiles.has(st.buf)) return `${st.buf}[${indexCode(st.index, ctx, at)}]`;
  return laneOf(st.buf, st.index, at, ctx);
}

function laneOf(buf: string, index: AExpr, at: Map<string, number>, ctx: Ctx): string {
  const i = constIndex(index, at, ctx);
  if (i === undefined || i < 0) throw new NeedsMemory(buf);
  return `${tileName(buf, Math.floor(i / ctx.lanes), ctx)}[${i % ctx.lanes}]`;
}

/**
 * The name of vector variable `n` of tile buffer `buf`. A tile clipped to
 * the tensor (an MR x NR register tile of a matrix with fewer than MR rows,
 * say) is smaller than its consumer's loops: their iterations past the
 * tensor's edge are guarded off but still name variables past the tile's
 * end, which are then declared too (and never used at run time).
 */
function tileName(buf: string, n: number, ctx: Ctx): string {
  if (n >= ctx.tiles.get(buf)!) ctx.tiles.set(buf, n + 1);
  return `${buf}_v${n}`;
}

/** A scalar expression in which tile buffers are read lane by lane. */
function sexpr(e: AExpr, at: Map<string, number>, ctx: Ctx): string {
  switch (e.k) {
    case "load":
      if (ctx.promote?.buf === e.buf) ctx.promote.ok = false;
      return ctx.tiles.has(e.buf) ? laneOf(e.buf, e.index, at, ctx) : expr(e);
    case "bin":
      if (e.op === "max" || e.op === "min") {
        const a = sexpr(e.a, at, ctx), b = sexpr(e.b, at, ctx);
        return `((${a}) ${e.op === "max" ? ">" : "<"} (${b}) ? (${a}) : (${b}))`;
      }
      return `(${sexpr(e.a, at, ctx)} ${e.op} ${sexpr(e.b, at, ctx)})`;
    case "select":
      return `(${sexpr(e.cond, at, ctx)} ? ${sexpr(e.t, at, ctx)} : ${sexpr(e.f, at, ctx)})`;
    case "cmp":
      return `(${sexpr(e.a, at, ctx)} ${e.op} ${sexpr(e.b, at, ctx)})`;
    case "and":
      return `(${sexpr(e.a, at, ctx)} && ${sexpr(e.b, at, ctx)})`;
    default:
      return expr(e);
  }
}

/** The vector variable of a tile buffer at a constant index (a multiple of the vector width). */
function tileVar(buf: string, index: AExpr, at: Map<string, number>, ctx: Ctx): string {
  const i = constIndex(index, at, ctx);
  if (i === undefined || i < 0 || i % ctx.lanes !== 0) throw new NeedsMemory(buf);
  return tileName(buf, i / ctx.lanes, ctx);
}

/** The value of an index when it is constant here (lets expanded, terms cancelled). */
function constIndex(e: AExpr, at: Map<string, number>, ctx: Ctx): number | undefined {
  // Opaque parts (a fused loop's `f / 56`, say) cancel against the tile's start.
  const l = linearizeOpaque(e, ctx.lets);
  let v = l.c;
  for (const [name, c] of l.terms) {
    const x = at.get(name);
    if (x === undefined) return undefined;
    v += c * x;
  }
  return v;
}

/**
 * The expression `e` over one vector of lanes of loop variable `v` (at its value in
 * `at`): contiguous loads are vectors (stride-2 ones two loads and a
 * permute), loop-invariant ones scalars that GCC broadcasts; with `mask` (a C expression) contiguous loads read only the
 * lanes it selects. Undefined when `e` needs anything else (a gather, a
 * compare).
 */
function vexpr(
  e: AExpr,
  v: string,
  ctx: Ctx,
  at: Map<string, number>,
  mask?: string,
): VCode | undefined {
  switch (e.k) {
    case "float":
    case "int":
      return { code: expr(e), vec: false };
    case "load": {
      if (ctx.promote?.buf === e.buf) ctx.promote.ok = false;
      const c = coefOf(e.index, v, ctx.consts);
      if (c === 0) {
        if (!ctx.tiles.has(e.buf)) {
          return { code: `${e.buf}[${indexCode(e.index, ctx, at)}]`, vec: false };
        }
        return { code: laneOf(e.buf, e.index, at, ctx), vec: false };
      }
      const p = `&${e.buf}[${indexCode(e.index, ctx, at)}]`;
      if (c === 2 && !ctx.tiles.has(e.buf)) {
        return { code: mask ? `tb_loadu_s2_m(${p}, ${mask})` : `tb_loadu_s2(${p})`, vec: true };
      }
      if (c !== 1) return undefined;
      if (ctx.tiles.has(e.buf)) return { code: tileVar(e.buf, e.index, at, ctx), vec: true };
      return { code: mask ? `tb_loadu_m(${p}, ${mask})` : `tb_loadu(${p})`, vec: true };
    }
    case "bin": {
      const a = vexpr(e.a, v, ctx, at, mask), b = vexpr(e.b, v, ctx, at, mask);
      if (!a || !b) return undefined;
      const vec = a.vec || b.vec;
      if ((e.op === "max" || e.op === "min") && vec) {
        // A scalar operand is broadcast: GCC's vector + scalar.
        const vec1 = (c: VCode) => c.vec ? c.code : `((${ctx.vt}){0} + (${c.code}))`;
        return { code: `tb_v${e.op}(${vec1(a)}, ${vec1(b)})`, vec: true };
      }
      if (e.op === "max" || e.op === "min" || e.op === "%") {
        return vec ? undefined : { code: expr(e), vec: false };
      }
      return { code: `(${a.code} ${e.op} ${b.code})`, vec };
    }
    default:
      if (coefOf(e, v, ctx.consts) !== 0) return undefined;
      checkLoads(e, ctx);
      return { code: expr(e), vec: false };
  }
}

/**
 * C text of an index with the constants of unrolled loops folded in: one
 * linear form (`v_k * 64 + m_i + 35`), so gcc has far less arithmetic to
 * simplify in a fully unrolled register tile.
 */
function indexCode(e: AExpr, ctx: Ctx, at: ReadonlyMap<string, number> = ctx.consts): string {
  const l = linearizeOpaque(e);
  const terms = new Map<string, number>();
  let c = l.c;
  for (const [v, k] of l.terms) {
    const x = at.get(v);
    if (x !== undefined) c += k * x;
    else terms.set(v, k);
  }
  return expr(fromLinear({ terms, c }));
}

/** C text of an expression. */
export function expr(e: AExpr): string {
  switch (e.k) {
    case "int":
      return e.v < 0 ? `(${e.v})` : String(e.v);
    case "float":
      return floatLiteral(e.v);
    case "var":
      return e.name;
    case "load":
      return `${e.buf}[${expr(e.index)}]`;
    case "bin":
      if (e.op === "max" || e.op === "min") {
        const a = expr(e.a), b = expr(e.b);
        return `((${a}) ${e.op === "max" ? ">" : "<"} (${b}) ? (${a}) : (${b}))`;
      }
      return `(${expr(e.a)} ${e.op} ${expr(e.b)})`;
    case "cmp":
      return `(${expr(e.a)} ${e.op} ${expr(e.b)})`;
    case "and":
      return `(${expr(e.a)} && ${expr(e.b)})`;
    case "select":
      return `(${expr(e.cond)} ? ${expr(e.t)} : ${expr(e.f)})`;
  }
}

function floatLiteral(v: number): string {
  if (!Number.isFinite(v)) throw new RangeError(`Cannot emit the float constant ${v}`);
  const s = String(v);
  return /[.e]/.test(s) ? `${s}f` : `${s}.0f`;
}
