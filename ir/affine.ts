/**
 * Affine reasoning on int expressions of the loop AST: linear forms
 * (`sum c_v * v + c`), exact floor division and remainder by a constant when
 * the remainder's range is known, the coefficient of one variable, constant
 * evaluation and substitution. Lowering uses it to index packed buffers with
 * plain strides; the C generator to tell contiguous vector accesses from
 * broadcasts.
 *
 * @example
 * ```ts
 * import { divModExact } from "./affine.ts";
 * import { add, int, mul, vr } from "./ast.ts";
 * // (6 * r + i) / 6 = r and (6 * r + i) % 6 = i when 0 <= i < 6.
 * const e = add(mul(vr("r"), int(6)), vr("i"));
 * const env = new Map<string, [number, number]>([["r", [0, 9]], ["i", [0, 5]]]);
 * const dm = divModExact(e, 6, env);
 * if (!dm || dm.div.k !== "var" || dm.mod.k !== "var") throw new Error();
 * ```
 * @module
 */
import { add, type AExpr, bounds, div, int, mod, mul } from "./ast.ts";

/** A linear form: coefficients by variable name, and a constant. */
export interface Linear {
  terms: Map<string, number>;
  c: number;
}

/**
 * The linear form of an int expression, with `lets` (variable -> value)
 * expanded; undefined when it is not affine (a division, a remainder, a
 * product of variables).
 */
export function linearize(
  e: AExpr,
  lets: ReadonlyMap<string, AExpr> = new Map(),
  opaque = false,
): Linear | undefined {
  switch (e.k) {
    case "int":
      return { terms: new Map(), c: e.v };
    case "var": {
      const v = lets.get(e.name);
      if (v) return linearize(v, lets, opaque);
      return { terms: new Map([[e.name, 1]]), c: 0 };
    }
    case "bin": {
      const a = linearize(e.a, lets, opaque), b = linearize(e.b, lets, opaque);
      if (a && b) {
        switch (e.op) {
          case "+":
            return combine(a, b, 1);
          case "-":
            return combine(a, b, -1);
          case "*":
            if (a.terms.size === 0) return scale(b, a.c);
            if (b.terms.size === 0) return scale(a, b.c);
        }
      }
      return opaque ? atom(e, lets) : undefined;
    }
  }
  return opaque ? atom(e, lets) : undefined;
}

/**
 * The linear form of an int expression in which every non-affine part (a
 * division, a remainder, a product of variables) is an opaque term named by
 * its structure, lets expanded: equal parts cancel, so `x / 4 - m` with the
 * let `m = x / 4` is 0. Terms named `(…)` are such parts.
 */
export function linearizeOpaque(e: AExpr, lets: ReadonlyMap<string, AExpr> = new Map()): Linear {
  return linearize(e, lets, true)!;
}

function atom(e: AExpr, lets: ReadonlyMap<string, AExpr>): Linear {
  const expand = (x: AExpr): AExpr => {
    if (x.k === "var") return lets.has(x.name) ? expand(lets.get(x.name)!) : x;
    if (x.k === "bin") return { ...x, a: expand(x.a), b: expand(x.b) };
    return x;
  };
  return { terms: new Map([[`(${JSON.stringify(expand(e))})`, 1]]), c: 0 };
}

function combine(a: Linear, b: Linear, sign: number): Linear {
  const terms = new Map(a.terms);
  for (const [v, c] of b.terms) {
    const s = (terms.get(v) ?? 0) + sign * c;
    if (s === 0) terms.delete(v);
    else terms.set(v, s);
  }
  return { terms, c: a.c + sign * b.c };
}

function scale(a: Linear, k: number): Linear {
  if (k === 0) return { terms: new Map(), c: 0 };
  return { terms: new Map([...a.terms].map(([v, c]) => [v, c * k])), c: a.c * k };
}

/**
 * The expression of a linear form (terms in insertion order, then the
 * constant); an opaque term of {@link linearizeOpaque} becomes its expression.
 */
export function fromLinear(l: Linear): AExpr {
  let e: AExpr = int(0);
  for (const [v, c] of l.terms) {
    const term: AExpr = v.startsWith("(") ? JSON.parse(v.slice(1, -1)) : { k: "var", name: v };
    e = add(e, mul(term, int(c)));
  }
  return add(e, int(l.c));
}

/** The terms of `l` whose coefficient `f` divides (divided by `f`), and the other terms. */
function splitTerms(l: Linear, f: number): { q: Map<string, number>; r: Map<string, number> } {
  const q = new Map<string, number>(), r = new Map<string, number>();
  for (const [v, c] of l.terms) {
    if (c % f === 0) q.set(v, c / f);
    else r.set(v, c);
  }
  return { q, r };
}

/**
 * `e / f` and `e % f` (floor division by a positive constant) as affine
 * expressions (of the variables and of non-affine parts taken whole), when
 * `e` splits into `f * q + r` with `r` provably in `[0, f)` given the
 * variables' ranges in `env`; undefined otherwise.
 */
export function divModExact(
  e: AExpr,
  f: number,
  env: ReadonlyMap<string, [number, number]>,
  lets: ReadonlyMap<string, AExpr> = new Map(),
): { div: AExpr; mod: AExpr } | undefined {
  // Non-affine parts are opaque terms: `(g / 56 % 4) * 16 + f` by 16 is `g / 56 % 4`
  // and `f` when f < 16.
  const l = linearizeOpaque(e, lets);
  if (!Number.isInteger(f) || f < 1) return undefined;
  const split = splitTerms(l, f);
  const q: Linear = { terms: split.q, c: Math.floor(l.c / f) };
  const rest = fromLinear({ terms: split.r, c: l.c - q.c * f });
  let range: [number, number];
  try {
    range = bounds(rest, env);
  } catch {
    return undefined;
  }
  if (range[0] < 0 || range[1] >= f) return undefined;
  return { div: fromLinear(q), mod: rest };
}

/**
 * `e / f` and `e % f` when `e` splits into `f * q + r` with `r` provably
 * non-negative (not necessarily below `f`): `q + r / f` and `r % f`, so the
 * variables of `q` keep their plain coefficients (a stride-f reader `f * x + rx`
 * of a deinterleaved buffer is position `x + rx / f` of phase `rx % f`).
 * {@link divModExact}'s answer when it has one; undefined when `r` may be
 * negative.
 */
export function divModFloor(
  e: AExpr,
  f: number,
  env: ReadonlyMap<string, [number, number]>,
  lets: ReadonlyMap<string, AExpr> = new Map(),
): { div: AExpr; mod: AExpr } | undefined {
  const exact = divModExact(e, f, env, lets);
  if (exact || !Number.isInteger(f) || f < 1) return exact;
  const l = linearizeOpaque(e, lets);
  const split = splitTerms(l, f);
  const rest = fromLinear({ terms: split.r, c: l.c });
  try {
    if (bounds(rest, env)[0] < 0) return undefined;
  } catch {
    return undefined;
  }
  return { div: add(fromLinear({ terms: split.q, c: 0 }), div(rest, f)), mod: mod(rest, f) };
}

/**
 * The coefficient of variable `v` in `e` (0 when `e` does not use it), or
 * undefined when `e` is not affine in `v`. Variables in `consts` are constants.
 */
export function coefOf(
  e: AExpr,
  v: string,
  consts: ReadonlyMap<string, number> = new Map(),
): number | undefined {
  switch (e.k) {
    case "int":
    case "float":
      return 0;
    case "var":
      return e.name === v ? 1 : 0;
    case "bin": {
      const a = coefOf(e.a, v, consts), b = coefOf(e.b, v, consts);
      if (a === undefined || b === undefined) return undefined;
      if (e.op === "+") return a + b;
      if (e.op === "-") return a - b;
      if (a === 0 && b === 0) return 0;
      if (e.op === "*") {
        const ca = constEval(e.a, consts), cb = constEval(e.b, consts);
        if (ca !== undefined) return ca * b;
        if (cb !== undefined) return cb * a;
      }
      return undefined;
    }
    case "cmp":
    case "and": {
      const a = coefOf(e.a, v, consts), b = coefOf(e.b, v, consts);
      return a === 0 && b === 0 ? 0 : undefined;
    }
    case "select": {
      const cs = [e.cond, e.t, e.f].map((x) => coefOf(x, v, consts));
      return cs.every((c) => c === 0) ? 0 : undefined;
    }
    case "load":
      return coefOf(e.index, v, consts) === 0 ? 0 : undefined;
  }
}

/** The value of an int expression whose variables are all in `consts`, else undefined. */
export function constEval(e: AExpr, consts: ReadonlyMap<string, number>): number | undefined {
  switch (e.k) {
    case "int":
      return e.v;
    case "var":
      return consts.get(e.name);
    case "bin": {
      const a = constEval(e.a, consts), b = constEval(e.b, consts);
      if (a === undefined || b === undefined) return undefined;
      switch (e.op) {
        case "+":
          return a + b;
        case "-":
          return a - b;
        case "*":
          return a * b;
        case "/":
          return b > 0 && a >= 0 ? Math.floor(a / b) : undefined;
        case "%":
          return b > 0 && a >= 0 ? a % b : undefined;
        case "max":
          return Math.max(a, b);
        case "min":
          return Math.min(a, b);
      }
    }
  }
  return undefined;
}

/** `e` with variables replaced by the expressions of `map`. */
export function substitute(e: AExpr, map: ReadonlyMap<string, AExpr>): AExpr {
  switch (e.k) {
    case "var":
      return map.get(e.name) ?? e;
    case "bin":
    case "cmp":
    case "and":
      return { ...e, a: substitute(e.a, map), b: substitute(e.b, map) } as AExpr;
    case "select":
      return {
        k: "select",
        cond: substitute(e.cond, map),
        t: substitute(e.t, map),
        f: substitute(e.f, map),
      };
    case "load":
      return { k: "load", buf: e.buf, index: substitute(e.index, map) };
    default:
      return e;
  }
}

/**
 * True when `e` never decreases as any variable of `vars` grows: built from
 * constants, variables, `+`, products with non-negative constants and
 * division by positive constants (other variables are held fixed).
 */
export function nondecreasing(e: AExpr, vars: ReadonlySet<string>): boolean {
  if (e.k === "int" || e.k === "var") return true;
  if (e.k !== "bin") return !uses(e, vars);
  switch (e.op) {
    case "+":
    case "max":
    case "min":
      return nondecreasing(e.a, vars) && nondecreasing(e.b, vars);
    case "*":
      if (e.b.k === "int" && e.b.v >= 0) return nondecreasing(e.a, vars);
      if (e.a.k === "int" && e.a.v >= 0) return nondecreasing(e.b, vars);
      return !uses(e, vars);
    case "/":
      return e.b.k === "int" && e.b.v > 0 ? nondecreasing(e.a, vars) : !uses(e, vars);
    default:
      return !uses(e, vars);
  }
}

function uses(e: AExpr, vars: ReadonlySet<string>): boolean {
  switch (e.k) {
    case "var":
      return vars.has(e.name);
    case "bin":
    case "cmp":
    case "and":
      return uses(e.a, vars) || uses(e.b, vars);
    case "select":
      return uses(e.cond, vars) || uses(e.t, vars) || uses(e.f, vars);
    case "load":
      return uses(e.index, vars);
    default:
      return false;
  }
}
