/**
 * A reference interpreter of tensor expressions in JavaScript (float64
 * accumulation), independent of lowering and code generation: the oracle
 * that tests compare generated kernels with.
 * @module
 */
import { Expr, type IterVar, type Tensor } from "./te.ts";
import { computeStages, type Workload } from "./workloads.ts";

/** Evaluates a workload on the given inputs (by tensor name); returns every computed tensor. */
export function evaluate(
  w: Workload,
  inputs: Map<string, Float32Array>,
): Map<string, Float64Array> {
  const values = new Map<string, Float32Array | Float64Array>(inputs);
  for (const t of w.inputs) {
    const v = inputs.get(t.name);
    if (!v || v.length !== t.size) throw new RangeError(`Input "${t.name}" needs ${t.size} values`);
  }
  const out = new Map<string, Float64Array>();
  for (const t of computeStages(w)) {
    const r = evalTensor(t, values);
    values.set(t.name, r);
    out.set(t.name, r);
  }
  return out;
}

function evalTensor(t: Tensor, values: Map<string, Float32Array | Float64Array>): Float64Array {
  if (t.op.kind !== "compute") throw new Error("unreachable");
  const { axes, body } = t.op;
  const result = new Float64Array(t.size);
  const env = new Map<IterVar, number>();
  const reduceAxes = body instanceof Expr ? [] : body.axes;
  const inner = body instanceof Expr ? body : body.body;
  const idx = new Array(axes.length).fill(0);
  for (let flat = 0; flat < t.size; flat++) {
    let rem = flat;
    for (let d = axes.length - 1; d >= 0; d--) {
      idx[d] = rem % axes[d].extent;
      rem = Math.floor(rem / axes[d].extent);
    }
    axes.forEach((a, d) => env.set(a, idx[d]));
    if (reduceAxes.length === 0) {
      result[flat] = evalExpr(inner, env, values);
      continue;
    }
    let acc = 0;
    const loop = (r: number) => {
      if (r === reduceAxes.length) {
        acc += evalExpr(inner, env, values);
        return;
      }
      for (let v = 0; v < reduceAxes[r].extent; v++) {
        env.set(reduceAxes[r], v);
        loop(r + 1);
      }
    };
    loop(0);
    result[flat] = acc;
  }
  return result;
}

function evalExpr(
  e: Expr,
  env: Map<IterVar, number>,
  values: Map<string, Float32Array | Float64Array>,
): number {
  const n = e.node;
  switch (n.k) {
    case "const":
      return n.value;
    case "var":
      return env.get(n.v)!;
    case "load": {
      const shape = n.tensor.shape;
      let flat = 0;
      for (let d = 0; d < shape.length; d++) {
        const i = evalExpr(n.index[d], env, values);
        if (i < 0 || i >= shape[d]) {
          throw new RangeError(`Index ${i} out of bounds for "${n.tensor.name}" dimension ${d}`);
        }
        flat = flat * shape[d] + i;
      }
      return values.get(n.tensor.name)![flat];
    }
    case "bin": {
      const a = evalExpr(n.a, env, values), b = evalExpr(n.b, env, values);
      switch (n.op) {
        case "add":
          return a + b;
        case "sub":
          return a - b;
        case "mul":
          return a * b;
        case "div":
          return Math.floor(a / b);
        case "mod":
          return a - Math.floor(a / b) * b;
        case "max":
          return Math.max(a, b);
        case "min":
          return Math.min(a, b);
      }
      break;
    }
    case "cmp": {
      const a = evalExpr(n.a, env, values), b = evalExpr(n.b, env, values);
      return Number(
        n.op === "lt"
          ? a < b
          : n.op === "le"
          ? a <= b
          : n.op === "ge"
          ? a >= b
          : n.op === "gt"
          ? a > b
          : a === b,
      );
    }
    case "and":
      return Number(evalExpr(n.a, env, values) !== 0 && evalExpr(n.b, env, values) !== 0);
    case "select":
      return evalExpr(n.cond, env, values) !== 0
        ? evalExpr(n.t, env, values)
        : evalExpr(n.f, env, values);
  }
  throw new Error("unreachable");
}
