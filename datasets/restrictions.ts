/**
 * Restrictions of Kernel Tuner search spaces: Python expressions, evaluated
 * here by a small tokenizer, recursive-descent parser and evaluator (never
 * `eval` or `Function`) that knows numbers, strings, lists, parameter names,
 * `+ - * / // % **`, comparisons (chained, as in Python, and `in` / `not in`),
 * `and`, `or`, `not`, parentheses, list literals and comprehensions, and the
 * functions `range list len min max abs int float sum`. Anything else is an
 * {@link ExpressionError}, and so is an expression past the limits
 * "expression nesting depth", "expression list items" or "expression
 * evaluation steps" (`ir/limits.ts`): 100k nested parentheses or
 * `sum([x for x in range(10**7)])` are refused, not evaluated.
 *
 * One file past 400 lines: the parser is one closure over the token stream
 * and its scopes, and the builtins share its error and type helpers;
 * splitting them would export internals nothing else needs.
 *
 * Map: {@link ExpressionError}; {@link ExprValue} and {@link CompiledExpression};
 * `tokenize`; Python semantics (`truthy`, `equal`, `BUILTINS`);
 * {@link compileExpression} (the parser, one function per precedence level);
 * {@link compileRestrictions} and {@link isTruthy}.
 *
 * @example
 * ```ts
 * import { compileExpression } from "./restrictions.ts";
 * const r = compileExpression("MWG % (MDIMC * VWM) == 0");
 * if (!r.evaluate({ MWG: 64, MDIMC: 8, VWM: 2 })) throw new Error();
 * ```
 * @module
 */

import { describe, isScalar, KernelTunerError } from "./kerneltuner_json.ts";
import { limitMessage, LIMITS } from "../ir/limits.ts";

/** Error raised when an expression cannot be parsed or evaluated. */
export class ExpressionError extends KernelTunerError {
  /** The expression's source text. */
  readonly expression: string;
  /** 1-based column of the problem, when known. */
  readonly column?: number;

  /**
   * Creates an error about `expression`.
   *
   * @param expression the source text
   * @param detail what is wrong
   * @param column 1-based column of the problem
   */
  constructor(expression: string, detail: string, column?: number) {
    super(
      `expression ${shortSource(expression)}: ${detail}${
        column === undefined ? "" : ` at column ${column}`
      }`,
    );
    this.name = "ExpressionError";
    this.expression = expression;
    this.column = column;
  }
}

/** The source in a message: quoted, cut after 120 characters (a refused one may be huge). */
function shortSource(expression: string): string {
  if (expression.length <= 120) return JSON.stringify(expression);
  return `${JSON.stringify(expression.slice(0, 120))}... (${expression.length} characters)`;
}

/** A value an expression computes: a number, boolean, string or list. */
export type ExprValue = number | boolean | string | ExprValue[];

/** An expression, parsed once, evaluated many times. */
export interface CompiledExpression {
  /** The source text. */
  readonly source: string;
  /** The free names it reads (parameters), in order of first use. */
  readonly names: readonly string[];
  /**
   * Evaluates the expression with names bound to `env`'s values.
   *
   * @throws {ExpressionError} on an unbound name, a type error or a division by zero
   */
  evaluate(env: Record<string, unknown>): ExprValue;
}

type Tok = {
  kind: "num" | "str" | "name" | "kw" | "op" | "end";
  text: string;
  value?: number | string;
  col: number;
};

const KEYWORDS = new Set(["and", "or", "not", "in", "for", "if", "True", "False"]);
const UNSUPPORTED_KEYWORDS = new Set([
  "is",
  "else",
  "lambda",
  "None",
  "import",
  "from",
  "def",
  "class",
  "return",
  "yield",
  "await",
  "async",
  "while",
  "with",
  "as",
  "del",
  "global",
  "nonlocal",
  "assert",
  "pass",
  "raise",
  "try",
  "except",
  "finally",
  "break",
  "continue",
  "elif",
]);
const OPERATORS = ["**", "//", "<=", ">=", "==", "!=", "<", ">", "+", "-", "*", "/", "%"]
  .concat(["(", ")", "[", "]", ","]);

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const err = (detail: string, at: number): never => {
    throw new ExpressionError(src, detail, at + 1);
  };
  while (i < src.length) {
    const c = src[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    const num = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i));
    if (num) {
      if (/^[A-Za-z_]/.test(src.slice(i + num[0].length))) {
        err(`unsupported number literal "${src.slice(i).match(/^\w+/)![0]}"`, i);
      }
      out.push({ kind: "num", text: num[0], value: Number(num[0]), col: i });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) {
      const w = id[0];
      if (UNSUPPORTED_KEYWORDS.has(w)) {
        const why = w === "else" ? " (conditional expressions are not supported)" : "";
        err(`unsupported Python keyword "${w}"${why}`, i);
      }
      out.push({ kind: KEYWORDS.has(w) ? "kw" : "name", text: w, col: i });
      i += w.length;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = "";
      let j = i + 1;
      for (;;) {
        if (j >= src.length || src[j] === "\n") err("unterminated string", i);
        const d = src[j];
        if (d === c) break;
        if (d === "\\") {
          const e = src[j + 1];
          const map: Record<string, string> = { n: "\n", t: "\t", "\\": "\\", "'": "'", '"': '"' };
          if (!(e in map)) err(`unsupported escape "\\${e ?? ""}"`, j);
          s += map[e];
          j += 2;
        } else {
          s += d;
          j++;
        }
      }
      out.push({ kind: "str", text: src.slice(i, j + 1), value: s, col: i });
      i = j + 1;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) {
      const two = src.slice(i, i + 2);
      const hint: Record<string, string> = {
        "&&": "use and",
        "||": "use or",
        "!": "use not",
      };
      const h = hint[two] ?? hint[c];
      err(`unsupported character "${c}"${h ? ` (${h})` : ""}`, i);
    }
    out.push({ kind: "op", text: op!, col: i });
    i += op!.length;
  }
  out.push({ kind: "end", text: "end of expression", col: src.length });
  return out;
}

type Fn = (env: Record<string, unknown>) => ExprValue;

/** Python truthiness. */
function truthy(v: ExprValue): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "string") return v.length > 0;
  return v !== 0 && v !== false;
}

function typeName(v: ExprValue): string {
  if (Array.isArray(v)) return "list";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  return "str";
}

function equal(a: ExprValue, b: ExprValue): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => equal(x, b[i]));
  }
  if (typeof a === "string" || typeof b === "string") return a === b;
  return Number(a) === Number(b);
}

const BUILTINS: Record<string, (src: string, args: ExprValue[]) => ExprValue> = {
  range: (src, args) => {
    if (args.length < 1 || args.length > 3) fnErr(src, "range() takes 1 to 3 arguments");
    const ns = args.map((a) => intArg(src, "range", a));
    const [start, stop, step] = ns.length === 1 ? [0, ns[0], 1] : [ns[0], ns[1], ns[2] ?? 1];
    if (step === 0) fnErr(src, "range() step must not be zero");
    const out: number[] = [];
    const n = Math.ceil((stop - start) / step);
    if (n > LIMITS.expressionItems.value) {
      fnErr(src, limitMessage(`range() of ${n} items`, LIMITS.expressionItems));
    }
    for (let x = start; step > 0 ? x < stop : x > stop; x += step) out.push(x);
    return out;
  },
  list: (src, args) => {
    if (args.length === 0) return [];
    if (args.length !== 1) fnErr(src, "list() takes at most 1 argument");
    const a = args[0];
    if (typeof a === "string") return [...a];
    if (!Array.isArray(a)) fnErr(src, `list() of a ${typeName(a)}`);
    return [...(a as ExprValue[])];
  },
  len: (src, args) => {
    if (args.length !== 1 || !(Array.isArray(args[0]) || typeof args[0] === "string")) {
      fnErr(src, "len() takes one list or string");
    }
    return (args[0] as ExprValue[] | string).length;
  },
  min: (src, args) => extreme(src, "min", args, (a, b) => a < b),
  max: (src, args) => extreme(src, "max", args, (a, b) => a > b),
  abs: (src, args) => Math.abs(numArgs(src, "abs", args, 1)[0]),
  int: (src, args) => Math.trunc(numArgs(src, "int", args, 1)[0]),
  float: (src, args) => numArgs(src, "float", args, 1)[0],
  sum: (src, args) => {
    if (args.length !== 1 || !Array.isArray(args[0])) fnErr(src, "sum() takes one list");
    return numArgs(src, "sum", args[0] as ExprValue[], -1).reduce((a, b) => a + b, 0);
  },
};

function fnErr(src: string, detail: string): never {
  throw new ExpressionError(src, detail);
}

function numArgs(src: string, fn: string, args: ExprValue[], n: number): number[] {
  if (n >= 0 && args.length !== n) fnErr(src, `${fn}() takes ${n} argument(s)`);
  return args.map((a) => {
    if (typeof a === "number" || typeof a === "boolean") return Number(a);
    return fnErr(src, `${fn}() of a ${typeName(a)}`);
  });
}

function intArg(src: string, fn: string, a: ExprValue): number {
  const [n] = numArgs(src, fn, [a], 1);
  if (!Number.isInteger(n)) fnErr(src, `${fn}() needs integers, got ${n}`);
  return n;
}

function extreme(
  src: string,
  fn: string,
  args: ExprValue[],
  better: (a: number, b: number) => boolean,
): number {
  const xs = numArgs(src, fn, args.length === 1 && Array.isArray(args[0]) ? args[0] : args, -1);
  if (xs.length === 0) fnErr(src, `${fn}() of nothing`);
  return xs.reduce((a, b) => (better(b, a) ? b : a));
}

/**
 * Parses a Kernel Tuner (Python) expression into a reusable evaluator.
 *
 * @param source the expression, e.g. `"32 <= block_size_x * block_size_y <= 1024"`
 * @param knownNames when given, every free name must be one of these
 * @throws {ExpressionError} on a syntax error or anything unsupported or unknown
 */
export function compileExpression(
  source: string,
  knownNames?: readonly string[],
): CompiledExpression {
  const toks = tokenize(source);
  let pos = 0;
  // Limits: `nest` counts the parser's recursion, `depths` each node's depth
  // (what the evaluator recurses through), `steps` one evaluation's work.
  const DEPTH = LIMITS.expressionDepth, ITEMS = LIMITS.expressionItems;
  const STEPS = LIMITS.expressionSteps;
  let nest = 0, steps = 0;
  const depths = new WeakMap<Fn, number>();
  const free: string[] = [];
  const scopes: Set<string>[] = [];
  const peek = () => toks[pos];
  const err = (detail: string, t: Tok = peek()): never => {
    throw new ExpressionError(source, detail, t.col + 1);
  };
  const isOp = (text: string) => peek().kind === "op" && peek().text === text;
  const isKw = (text: string) => peek().kind === "kw" && peek().text === text;
  const expect = (text: string) => {
    if (!isOp(text) && !isKw(text)) err(`expected "${text}", found ${show(peek())}`);
    pos++;
  };
  const show = (t: Tok) => (t.kind === "end" ? "the end" : `"${t.text}"`);
  const tooDeep = (): never => err(limitMessage(`it nests ${DEPTH.value + 1} levels deep`, DEPTH));
  const enter = () => {
    if (++nest > DEPTH.value) tooDeep();
  };
  /** `f`, one level above `kids`; refused past the depth limit. */
  const node = (f: Fn, ...kids: Fn[]): Fn => {
    const d = 1 + kids.reduce((m, k) => Math.max(m, depths.get(k) ?? 1), 0);
    if (d > DEPTH.value) tooDeep();
    depths.set(f, d);
    return f;
  };
  const tick = (n: number) => {
    steps += n;
    if (steps > STEPS.value) {
      throw new ExpressionError(
        source,
        limitMessage(`its evaluation takes more than ${STEPS.value} steps`, STEPS),
      );
    }
  };
  /** Counts a list of `n` items that `what` makes; refused past the items limit. */
  const items = (n: number, what: string) => {
    if (n > ITEMS.value) {
      throw new ExpressionError(source, limitMessage(`${what} of ${n} items`, ITEMS));
    }
    tick(n);
  };
  const num = (v: ExprValue, op: string): number => {
    if (typeof v === "number") return v;
    if (typeof v === "boolean") return v ? 1 : 0;
    throw new ExpressionError(source, `unsupported operand type for ${op}: ${typeName(v)}`);
  };

  const orExpr = (): Fn => {
    enter();
    let left = andExpr();
    while (isKw("or")) {
      pos++;
      const a = left, b = andExpr();
      left = node(
        (env) => {
          const x = a(env);
          return truthy(x) ? x : b(env);
        },
        a,
        b,
      );
    }
    nest--;
    return left;
  };
  const andExpr = (): Fn => {
    let left = notExpr();
    while (isKw("and")) {
      pos++;
      const a = left, b = notExpr();
      left = node(
        (env) => {
          const x = a(env);
          return truthy(x) ? b(env) : x;
        },
        a,
        b,
      );
    }
    return left;
  };
  const notExpr = (): Fn => {
    if (isKw("not")) {
      pos++;
      enter();
      const a = notExpr();
      nest--;
      return node((env) => !truthy(a(env)), a);
    }
    return comparison();
  };
  const compare = (op: string, a: ExprValue, b: ExprValue): boolean => {
    switch (op) {
      case "==":
        return equal(a, b);
      case "!=":
        return !equal(a, b);
      case "in":
      case "not in": {
        let found: boolean;
        if (Array.isArray(b)) {
          tick(b.length);
          found = b.some((x) => equal(a, x));
        } else if (typeof b === "string" && typeof a === "string") found = b.includes(a);
        else {
          throw new ExpressionError(
            source,
            `unsupported operand types for ${op}: ${typeName(a)} and ${typeName(b)}`,
          );
        }
        return op === "in" ? found : !found;
      }
    }
    let x: number | string, y: number | string;
    if (typeof a === "string" && typeof b === "string") [x, y] = [a, b];
    else if (
      !Array.isArray(a) && !Array.isArray(b) && typeof a !== "string" && typeof b !== "string"
    ) {
      [x, y] = [Number(a), Number(b)];
    } else {
      throw new ExpressionError(
        source,
        `"${op}" is not supported between ${typeName(a)} and ${typeName(b)}`,
      );
    }
    return op === "<" ? x < y : op === "<=" ? x <= y : op === ">" ? x > y : x >= y;
  };
  const comparison = (): Fn => {
    const first = arith();
    const ops: string[] = [];
    const rest: Fn[] = [];
    for (;;) {
      const t = peek();
      if (t.kind === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(t.text)) {
        pos++;
        ops.push(t.text);
      } else if (isKw("in")) {
        pos++;
        ops.push("in");
      } else if (isKw("not") && toks[pos + 1].kind === "kw" && toks[pos + 1].text === "in") {
        pos += 2;
        ops.push("not in");
      } else break;
      rest.push(arith());
    }
    if (ops.length === 0) return first;
    return node(
      (env) => {
        let a = first(env);
        for (let i = 0; i < ops.length; i++) {
          const b = rest[i](env);
          if (!compare(ops[i], a, b)) return false;
          a = b;
        }
        return true;
      },
      first,
      ...rest,
    );
  };
  const arith = (): Fn => {
    let left = term();
    while (isOp("+") || isOp("-")) {
      const op = peek().text;
      pos++;
      const a = left, b = term();
      left = node(
        op === "-" ? (env) => num(a(env), "-") - num(b(env), "-") : (env) => {
          const x = a(env), y = b(env);
          if (Array.isArray(x) && Array.isArray(y)) {
            items(x.length + y.length, "a list +");
            return [...x, ...y];
          }
          if (typeof x === "string" && typeof y === "string") return x + y;
          if (
            Array.isArray(x) || Array.isArray(y) || typeof x === "string" || typeof y === "string"
          ) {
            throw new ExpressionError(
              source,
              `unsupported operand types for +: ${typeName(x)} and ${typeName(y)}`,
            );
          }
          return num(x, "+") + num(y, "+");
        },
        a,
        b,
      );
    }
    return left;
  };
  const term = (): Fn => {
    let left = unary();
    while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
      const op = peek().text;
      pos++;
      const a = left, b = unary();
      const zero = () => {
        throw new ExpressionError(source, `division by zero (${op})`);
      };
      let f: Fn;
      if (op === "*") f = (env) => num(a(env), op) * num(b(env), op);
      else if (op === "/") {
        f = (env) => {
          const x = num(a(env), op), y = num(b(env), op);
          return y === 0 ? zero() : x / y;
        };
      } else if (op === "//") {
        f = (env) => {
          const x = num(a(env), op), y = num(b(env), op);
          return y === 0 ? zero() : Math.floor(x / y);
        };
      } else {
        f = (env) => {
          const x = num(a(env), op), y = num(b(env), op);
          if (y === 0) return zero();
          const r = x % y;
          return r !== 0 && (r < 0) !== (y < 0) ? r + y : r;
        };
      }
      left = node(f, a, b);
    }
    return left;
  };
  const unary = (): Fn => {
    if (isOp("-") || isOp("+")) {
      const op = peek().text;
      pos++;
      enter();
      const a = unary();
      nest--;
      return node(
        op === "-" ? (env) => -num(a(env), "unary -") : (env) => num(a(env), "unary +"),
        a,
      );
    }
    return power();
  };
  const power = (): Fn => {
    const base = atom();
    if (!isOp("**")) return base;
    pos++;
    enter();
    const exp = unary();
    nest--;
    return node(
      (env) => {
        const x = num(base(env), "**"), y = num(exp(env), "**");
        if (x === 0 && y < 0) {
          throw new ExpressionError(source, "0 cannot be raised to a negative power");
        }
        return x ** y;
      },
      base,
      exp,
    );
  };
  const atom = (): Fn => {
    const t = peek();
    if (t.kind === "num" || t.kind === "str") {
      pos++;
      const v = t.value!;
      return () => v;
    }
    if (t.kind === "kw" && (t.text === "True" || t.text === "False")) {
      pos++;
      const v = t.text === "True";
      return () => v;
    }
    if (t.kind === "name") {
      pos++;
      if (isOp("(")) return call(t);
      const name = t.text;
      if (!scopes.some((s) => s.has(name))) {
        if (knownNames && !knownNames.includes(name)) {
          err(`unknown name "${name}" (known: ${knownNames.join(", ")})`, t);
        }
        if (!free.includes(name)) free.push(name);
      }
      return (env) => {
        if (!(name in env)) throw new ExpressionError(source, `no value for name "${name}"`);
        const v = env[name];
        if (isScalar(v) || Array.isArray(v)) return v as ExprValue;
        throw new ExpressionError(source, `name "${name}" has an unsupported value ${describe(v)}`);
      };
    }
    if (isOp("(")) {
      pos++;
      const inner = orExpr();
      if (isOp(",")) err("tuples are not supported");
      expect(")");
      return inner;
    }
    if (isOp("[")) return list();
    return err(`unexpected ${show(t)}`);
  };
  const call = (nameTok: Tok): Fn => {
    const fn = BUILTINS[nameTok.text];
    if (!fn || scopes.some((s) => s.has(nameTok.text))) {
      err(
        `unknown function "${nameTok.text}" (known: ${Object.keys(BUILTINS).join(", ")})`,
        nameTok,
      );
    }
    expect("(");
    const args: Fn[] = [];
    while (!isOp(")")) {
      args.push(orExpr());
      if (!isOp(")")) expect(",");
    }
    pos++;
    return node((env) => {
      const values = args.map((a) => a(env));
      tick(1 + values.reduce<number>((n, v) => n + (Array.isArray(v) ? v.length : 0), 0));
      const r = fn(source, values);
      if (Array.isArray(r)) items(r.length, `${nameTok.text}()`);
      return r;
    }, ...args);
  };
  const list = (): Fn => {
    expect("[");
    if (isOp("]")) {
      pos++;
      return () => [];
    }
    // A comprehension binds its variable in the element and condition, which
    // precede it in the text: look ahead for `for NAME` at this nesting depth.
    let depth = 0, j = pos, varName: string | undefined;
    for (; toks[j].kind !== "end"; j++) {
      const t = toks[j];
      if (t.kind === "op" && (t.text === "(" || t.text === "[")) depth++;
      else if (t.kind === "op" && (t.text === ")" || t.text === "]")) {
        if (depth-- === 0) break;
      } else if (depth === 0 && t.kind === "kw" && t.text === "for") {
        if (toks[j + 1].kind !== "name") err("expected a name after for", toks[j + 1]);
        varName = toks[j + 1].text;
        break;
      }
    }
    if (varName !== undefined) {
      // The iterable is evaluated outside the comprehension's scope.
      const saved = pos;
      pos = j + 3;
      if (!(toks[j + 2].kind === "kw" && toks[j + 2].text === "in")) {
        err(`expected "in", found ${show(toks[j + 2])}`, toks[j + 2]);
      }
      const iter = orExpr();
      const after = pos;
      pos = saved;
      scopes.push(new Set([varName]));
      const elem = orExpr();
      if (!isKw("for")) err(`expected "for", found ${show(peek())}`);
      pos = after;
      let cond: Fn | undefined;
      if (isKw("if")) {
        pos++;
        cond = orExpr();
      }
      scopes.pop();
      if (isKw("for")) err("nested comprehensions are not supported");
      expect("]");
      const v = varName;
      return node(
        (env) => {
          const xs = iter(env);
          if (!Array.isArray(xs)) {
            throw new ExpressionError(source, `cannot iterate over a ${typeName(xs)}`);
          }
          items(xs.length, "a comprehension");
          const out: ExprValue[] = [];
          const inner: Record<string, unknown> = Object.create(env);
          for (const x of xs) {
            tick(1);
            inner[v] = x;
            if (!cond || truthy(cond(inner))) out.push(elem(inner));
          }
          return out;
        },
        iter,
        elem,
        ...(cond ? [cond] : []),
      );
    }
    const elems: Fn[] = [];
    for (;;) {
      elems.push(orExpr());
      if (isOp(",")) {
        pos++;
        if (isOp("]")) break;
      } else break;
    }
    expect("]");
    return node((env) => {
      tick(elems.length);
      return elems.map((f) => f(env));
    }, ...elems);
  };

  const root = orExpr();
  if (peek().kind !== "end") err(`unexpected ${show(peek())}`);
  return {
    source,
    names: free,
    evaluate: (env) => {
      steps = 0;
      return root(env);
    },
  };
}

/**
 * Compiles restriction expressions into one predicate (all must hold).
 *
 * @param restrictions expressions, e.g. from {@link KernelTunerSpace.restrictions}
 * @param knownNames when given, every name used must be one of these
 * @throws {ExpressionError} on an expression that cannot be parsed or names an unknown parameter
 */
export function compileRestrictions(
  restrictions: readonly string[],
  knownNames?: readonly string[],
): (values: Record<string, unknown>) => boolean {
  const cs = restrictions.map((r) => compileExpression(r, knownNames));
  return (values) => {
    for (const c of cs) if (!truthy(c.evaluate(values))) return false;
    return true;
  };
}

/**
 * Python truthiness of an expression's value (`0`, `False`, `""` and `[]` are false).
 *
 * @param value a value computed by a {@link CompiledExpression}
 */
export function isTruthy(value: ExprValue): boolean {
  return truthy(value);
}
