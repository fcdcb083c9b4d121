/**
 * The imperative loop AST that lowering produces and code generators print.
 * Buffers are flat float32 arrays; indices are int expressions.
 * @module
 */

/** An int or float expression. */
export type AExpr =
  | { k: "int"; v: number }
  | { k: "float"; v: number }
  | { k: "var"; name: string }
  | { k: "bin"; op: "+" | "-" | "*" | "/" | "%" | "max" | "min"; a: AExpr; b: AExpr }
  | { k: "cmp"; op: "<" | "<=" | ">=" | ">" | "=="; a: AExpr; b: AExpr }
  | { k: "and"; a: AExpr; b: AExpr }
  | { k: "select"; cond: AExpr; t: AExpr; f: AExpr }
  | { k: "load"; buf: string; index: AExpr };

/** GPU thread axes a loop can be bound to (CUDA names; OpenCL's group and local ids). */
export const THREAD_AXES = [
  "blockIdx.x",
  "blockIdx.y",
  "blockIdx.z",
  "threadIdx.x",
  "threadIdx.y",
  "threadIdx.z",
] as const;

/** One of {@link THREAD_AXES}. */
export type ThreadAxis = typeof THREAD_AXES[number];

/**
 * Loop kinds, from annotations. A `"bind"` loop is a GPU thread axis (its
 * `thread` field names which); C code runs it as a serial loop.
 */
export type ForKind = "serial" | "parallel" | "vectorize" | "unroll" | "bind";

/** A statement. */
export type Stmt =
  | {
    k: "for";
    v: string;
    extent: number;
    kind: ForKind;
    body: Stmt[];
    thread?: ThreadAxis;
    /**
     * Software prefetch (`prefetch`): at the start of each iteration, the
     * cache lines of `buf` that iteration `v + offset` will read (C only).
     */
    prefetch?: { buf: string; offset: number }[];
  }
  | { k: "if"; cond: AExpr; body: Stmt[] }
  | { k: "let"; name: string; value: AExpr }
  | { k: "store"; buf: string; index: AExpr; value: AExpr; accumulate: boolean }
  | {
    k: "alloc";
    buf: string;
    size: number;
    heap?: boolean;
    /**
     * `"shared"`: one buffer per GPU thread block (default: private to a
     * thread). Lowering gives a shared buffer the body
     * `[sync, ...cooperative fetch, sync, ...readers]`.
     */
    scope?: "shared";
    body: Stmt[];
  }
  /** A barrier of the GPU thread block (`__syncthreads()`); nothing in serial C. */
  | { k: "sync" };

/** A kernel's parameters and body. */
export interface Kernel {
  /**
   * Parameters, in `bufs[]` order: inputs then outputs. An input with a
   * `storage` lies in device memory as 16-bit values of that format (the
   * host gives floats; the harness converts them, rounding to nearest even).
   */
  params: {
    buf: string;
    tensor: string;
    size: number;
    role: "input" | "output";
    storage?: "f16" | "bf16";
  }[];
  /** Temporaries of the whole kernel (heap, allocated once per call). */
  temps: { buf: string; size: number }[];
  /** The kernel's statements: the nests of its root stages, one after another. */
  body: Stmt[];
  /**
   * The nest of each root stage, in order (`body` is their concatenation):
   * each becomes one GPU kernel launch.
   */
  roots?: { stage: string; body: Stmt[] }[];
  /**
   * Layout rewrites of the workload's layout-free inputs (its weights): the
   * nests of packed copies of them computed at the root, left out of `body`.
   * The C kernel runs them before `body`; its timing harness runs them once
   * and times `body` alone, as TVM and oneDNN time a convolution whose
   * weights were put in its layout ahead of time.
   */
  prologue?: Stmt[];
  /**
   * Set when the kernel uses a CPU-only feature (a packed `cache_read(...,
   * "global")` copy): what it is, for the GPU generators' error message.
   */
  cpuOnly?: string;
  /**
   * gcc optimization options of the C kernel's functions (its `optimize`
   * attribute, e.g. `no-predictive-commoning`), from the stages' `gcc.*`
   * pragmas: `annotate(stage, "gcc.predictive_commoning", 0)` turns
   * `-fpredictive-commoning` off. The other generators ignore them.
   */
  gccOptions?: string[];
}

/** An int constant. */
export const int = (v: number): AExpr => ({ k: "int", v });
/** A variable. */
export const vr = (name: string): AExpr => ({ k: "var", name });

/** `a + b`, folding constants and zeros. */
export function add(a: AExpr, b: AExpr): AExpr {
  if (a.k === "int" && b.k === "int") return int(a.v + b.v);
  if (a.k === "int" && a.v === 0) return b;
  if (b.k === "int" && b.v === 0) return a;
  return { k: "bin", op: "+", a, b };
}
/** `a - b`, folding constants and zeros. */
export function sub(a: AExpr, b: AExpr): AExpr {
  if (a.k === "int" && b.k === "int") return int(a.v - b.v);
  if (b.k === "int" && b.v === 0) return a;
  return { k: "bin", op: "-", a, b };
}
/** `a * b`, folding constants, zeros and ones. */
export function mul(a: AExpr, b: AExpr): AExpr {
  if (a.k === "int" && b.k === "int") return int(a.v * b.v);
  if ((a.k === "int" && a.v === 0) || (b.k === "int" && b.v === 0)) return int(0);
  if (a.k === "int" && a.v === 1) return b;
  if (b.k === "int" && b.v === 1) return a;
  return { k: "bin", op: "*", a, b };
}
/** Floor division of a non-negative `a` by a positive constant. */
export function div(a: AExpr, c: number): AExpr {
  if (c === 1) return a;
  if (a.k === "int") return int(Math.floor(a.v / c));
  return { k: "bin", op: "/", a, b: int(c) };
}
/** Remainder of a non-negative `a` by a positive constant. */
export function mod(a: AExpr, c: number): AExpr {
  if (c === 1) return int(0);
  if (a.k === "int") return int(a.v % c);
  return { k: "bin", op: "%", a, b: int(c) };
}

/**
 * True for a zero-padding select, `select(c, t, 0)`: zero where `c` does not
 * hold (a padded input read through its condition).
 *
 * @example
 * ```ts
 * import { isZeroSelect } from "./ast.ts";
 * const e = { k: "select", cond: { k: "int", v: 1 }, t: { k: "float", v: 2 }, f: { k: "float", v: 0 } } as const;
 * if (!isZeroSelect(e) || isZeroSelect(e.t)) throw new Error();
 * ```
 */
export function isZeroSelect(e: AExpr): e is AExpr & { k: "select" } {
  return e.k === "select" && e.f.k === "float" && e.f.v === 0;
}

/** Logical and of conditions (undefined entries are skipped). */
export function andAll(conds: AExpr[]): AExpr | undefined {
  return conds.length === 0 ? undefined : conds.reduce((a, b) => ({ k: "and", a, b }));
}

/** Numeric interval [lo, hi] of an int expression, given intervals of its variables. */
export function bounds(
  e: AExpr,
  env: ReadonlyMap<string, [number, number]>,
): [number, number] {
  switch (e.k) {
    case "int":
      return [e.v, e.v];
    case "var": {
      const r = env.get(e.name);
      if (!r) throw new Error(`internal: no range for ${e.name}`);
      return r;
    }
    case "bin": {
      const [al, ah] = bounds(e.a, env), [bl, bh] = bounds(e.b, env);
      switch (e.op) {
        case "+":
          return [al + bl, ah + bh];
        case "-":
          return [al - bh, ah - bl];
        case "*": {
          const c = [al * bl, al * bh, ah * bl, ah * bh];
          return [Math.min(...c), Math.max(...c)];
        }
        case "/":
          return [Math.floor(al / bh), Math.floor(ah / bl)];
        case "%":
          return [0, bh - 1];
        case "max":
          return [Math.max(al, bl), Math.max(ah, bh)];
        case "min":
          return [Math.min(al, bl), Math.min(ah, bh)];
      }
    }
  }
  throw new Error(`internal: no int bounds for ${e.k}`);
}

/** Names of the variables an expression uses. */
export function varsOf(e: AExpr, out = new Set<string>()): Set<string> {
  switch (e.k) {
    case "var":
      out.add(e.name);
      break;
    case "bin":
    case "cmp":
    case "and":
      varsOf(e.a, out);
      varsOf(e.b, out);
      break;
    case "select":
      varsOf(e.cond, out);
      varsOf(e.t, out);
      varsOf(e.f, out);
      break;
    case "load":
      varsOf(e.index, out);
      break;
  }
  return out;
}

/** Calls `f` on every load in `e`, outermost first (loads inside an index too). */
export function forEachLoad(e: AExpr, f: (load: AExpr & { k: "load" }) => void): void {
  switch (e.k) {
    case "load":
      f(e);
      forEachLoad(e.index, f);
      return;
    case "bin":
    case "cmp":
    case "and":
      forEachLoad(e.a, f);
      forEachLoad(e.b, f);
      return;
    case "select":
      forEachLoad(e.cond, f);
      forEachLoad(e.t, f);
      forEachLoad(e.f, f);
      return;
  }
}
