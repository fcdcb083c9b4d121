/**
 * Tensor expressions in the style of TVM's `te`: placeholders, `compute` with
 * an index lambda, reduction axes and `sum`.
 *
 * @example
 * ```ts
 * import { compute, placeholder, reduceAxis, sum } from "./te.ts";
 * const A = placeholder([64, 32], "A"), B = placeholder([32, 48], "B");
 * const k = reduceAxis(32, "k");
 * const C = compute([64, 48], (i, j) => sum(A.at(i, k).mul(B.at(k, j)), [k]), "C", ["i", "j"]);
 * if (C.shape[1] !== 48) throw new Error();
 * ```
 * @module
 */

/** Names that may appear in a workload: a C-like identifier. */
export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Throws a TypeError unless `name` matches {@link NAME_PATTERN}. */
export function checkName(name: string, what: string): string {
  if (typeof name !== "string" || !NAME_PATTERN.test(name)) {
    throw new TypeError(
      `Invalid ${what} name ${JSON.stringify(name)}: use letters, digits and _ (at most 64)`,
    );
  }
  return name;
}

/** An iteration variable of a compute: a spatial axis or a reduction axis. */
export class IterVar {
  /** Creates an axis; prefer {@link reduceAxis} or the arguments of `compute`. */
  constructor(
    readonly name: string,
    readonly extent: number,
    readonly kind: "spatial" | "reduce",
  ) {
    checkName(name, "axis");
    checkExtent(extent, `axis "${name}"`);
  }
  /** This axis as an expression. */
  get expr(): Expr {
    return new Expr({ k: "var", v: this });
  }
}

/** The node types of an expression tree. */
export type Node =
  | { k: "const"; value: number }
  | { k: "var"; v: IterVar }
  | { k: "load"; tensor: Tensor; index: Expr[] }
  | { k: "bin"; op: BinOp; a: Expr; b: Expr }
  | { k: "cmp"; op: CmpOp; a: Expr; b: Expr }
  | { k: "and"; a: Expr; b: Expr }
  | { k: "select"; cond: Expr; t: Expr; f: Expr };

/** Arithmetic operators. `div` and `mod` are floor division on integers. */
export type BinOp = "add" | "sub" | "mul" | "div" | "mod" | "max" | "min";
/** Comparison operators (for `select` conditions). */
export type CmpOp = "lt" | "le" | "ge" | "gt" | "eq";

/** Anything that converts to an expression. */
export type ExprLike = Expr | IterVar | number;

/** An immutable expression node with chainable builders. */
export class Expr {
  /** Wraps a node; prefer the builders. */
  constructor(readonly node: Node) {}
  /** `this + b` */
  add(b: ExprLike): Expr {
    return bin("add", this, b);
  }
  /** `this - b` */
  sub(b: ExprLike): Expr {
    return bin("sub", this, b);
  }
  /** `this * b` */
  mul(b: ExprLike): Expr {
    return bin("mul", this, b);
  }
}

/** Converts a number or axis into an expression. */
export function expr(x: ExprLike): Expr {
  if (x instanceof Expr) return x;
  if (x instanceof IterVar) return x.expr;
  if (typeof x === "number" && Number.isFinite(x)) return new Expr({ k: "const", value: x });
  throw new TypeError(`Cannot use ${String(x)} in an expression`);
}

/** A binary arithmetic expression. */
export function bin(op: BinOp, a: ExprLike, b: ExprLike): Expr {
  return new Expr({ k: "bin", op, a: expr(a), b: expr(b) });
}
/** `max(a, b)` */
export const max = (a: ExprLike, b: ExprLike): Expr => bin("max", a, b);
/** `min(a, b)` */
export const min = (a: ExprLike, b: ExprLike): Expr => bin("min", a, b);
/** A comparison, for {@link select}. */
export function cmp(op: CmpOp, a: ExprLike, b: ExprLike): Expr {
  return new Expr({ k: "cmp", op, a: expr(a), b: expr(b) });
}
/** Logical and of conditions. */
export function and(...conds: Expr[]): Expr {
  return conds.reduce((x, y) => new Expr({ k: "and", a: x, b: y }));
}
/** `cond ? t : f` */
export function select(cond: Expr, t: ExprLike, f: ExprLike): Expr {
  return new Expr({ k: "select", cond, t: expr(t), f: expr(f) });
}

/** A reduction: the body summed over `axes`. Only at the top of a compute body. */
export interface Reduce {
  /** The reduction's kind (only sums so far). */
  kind: "sum";
  /** The expression summed. */
  body: Expr;
  /** The reduction axes it is summed over. */
  axes: IterVar[];
}

/** `sum(body, axes)` as in `te.sum`. */
export function sum(body: ExprLike, axes: IterVar[]): Reduce {
  for (const a of axes) {
    if (a.kind !== "reduce") throw new TypeError(`Axis "${a.name}" of sum is not a reduce axis`);
  }
  return { kind: "sum", body: expr(body), axes };
}

/** A reduction axis of the given extent, as in `te.reduce_axis`. */
export function reduceAxis(extent: number, name: string): IterVar {
  return new IterVar(name, extent, "reduce");
}

/** How a tensor is produced. */
export type Operation =
  | { kind: "placeholder" }
  | { kind: "compute"; axes: IterVar[]; body: Expr | Reduce };

/** A float32 tensor: an input placeholder or the result of a compute. */
export class Tensor {
  /** Creates a tensor; prefer {@link placeholder} and {@link compute}. */
  constructor(readonly name: string, readonly shape: number[], readonly op: Operation) {
    checkName(name, "tensor");
    shape.forEach((d, i) => checkExtent(d, `dimension ${i} of tensor "${name}"`));
    const size = shape.reduce((a, b) => a * b, 1);
    if (size >= 2 ** 31) {
      throw new RangeError(`Tensor "${name}" has ${size} elements, more than 2^31 - 1`);
    }
  }
  /** Number of elements. */
  get size(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }
  /** An element access `T[i, j, ...]`. */
  at(...index: ExprLike[]): Expr {
    if (index.length !== this.shape.length) {
      throw new TypeError(
        `Tensor "${this.name}" has ${this.shape.length} dimensions, accessed with ${index.length}`,
      );
    }
    return new Expr({ k: "load", tensor: this, index: index.map(expr) });
  }
  /** The reduction of a compute, if any. */
  get reduce(): Reduce | undefined {
    const op = this.op;
    return op.kind === "compute" && !(op.body instanceof Expr) ? op.body : undefined;
  }
  /** Tensors read by this one's compute (each once, in first-use order). */
  get inputs(): Tensor[] {
    const op = this.op;
    if (op.kind !== "compute") return [];
    const out: Tensor[] = [];
    visitLoads(op.body instanceof Expr ? op.body : op.body.body, (t) => {
      if (!out.includes(t)) out.push(t);
    });
    return out;
  }
}

/** An input tensor, as `te.placeholder`. */
export function placeholder(shape: number[], name: string): Tensor {
  return new Tensor(name, [...shape], { kind: "placeholder" });
}

/**
 * A computed tensor, as `te.compute`: `fn` receives one spatial axis per
 * dimension (named by `axisNames`, default `ax0`, `ax1`, …) and returns the
 * element value or a {@link sum}.
 */
export function compute(
  shape: number[],
  fn: (...axes: IterVar[]) => ExprLike | Reduce,
  name: string,
  axisNames?: string[],
): Tensor {
  const axes = shape.map((d, i) => new IterVar(axisNames?.[i] ?? `ax${i}`, d, "spatial"));
  const out = fn(...axes);
  const body = isReduce(out) ? out : expr(out);
  const names = new Set(axes.map((a) => a.name));
  for (const r of isReduce(body) ? body.axes : []) {
    if (names.has(r.name)) throw new TypeError(`Axis name "${r.name}" is used twice in "${name}"`);
    names.add(r.name);
  }
  return new Tensor(name, [...shape], { kind: "compute", axes, body });
}

function isReduce(x: unknown): x is Reduce {
  return typeof x === "object" && x !== null && (x as Reduce).kind === "sum" && "axes" in x;
}

/** Calls `f` for each tensor load in `e` (depth first). */
export function visitLoads(e: Expr, f: (t: Tensor, index: Expr[]) => void): void {
  const n = e.node;
  switch (n.k) {
    case "load":
      f(n.tensor, n.index);
      n.index.forEach((i) => visitLoads(i, f));
      return;
    case "bin":
    case "cmp":
    case "and":
      visitLoads(n.a, f);
      visitLoads(n.b, f);
      return;
    case "select":
      visitLoads(n.cond, f);
      visitLoads(n.t, f);
      visitLoads(n.f, f);
      return;
    default:
      return;
  }
}

/** Rebuilds `e` bottom-up, letting `f` replace any node (return undefined to keep it). */
export function rewrite(e: Expr, f: (e: Expr) => Expr | undefined): Expr {
  const n = e.node;
  let out: Expr;
  switch (n.k) {
    case "load":
      out = new Expr({ k: "load", tensor: n.tensor, index: n.index.map((i) => rewrite(i, f)) });
      break;
    case "bin":
      out = new Expr({ k: "bin", op: n.op, a: rewrite(n.a, f), b: rewrite(n.b, f) });
      break;
    case "cmp":
      out = new Expr({ k: "cmp", op: n.op, a: rewrite(n.a, f), b: rewrite(n.b, f) });
      break;
    case "and":
      out = new Expr({ k: "and", a: rewrite(n.a, f), b: rewrite(n.b, f) });
      break;
    case "select":
      out = new Expr({
        k: "select",
        cond: rewrite(n.cond, f),
        t: rewrite(n.t, f),
        f: rewrite(n.f, f),
      });
      break;
    default:
      out = e;
  }
  return f(out) ?? out;
}

function checkExtent(d: number, what: string): void {
  if (!Number.isInteger(d) || d < 1) {
    throw new RangeError(`Invalid extent ${d} for ${what}: must be a positive integer`);
  }
}
