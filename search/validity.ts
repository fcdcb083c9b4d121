/**
 * An online classifier of invalid configurations: a logistic regression
 * trained on the points measured so far (valid: the kernel ran; invalid: it
 * failed to compile or run, or the configuration was rejected), which
 * model-based strategies ask before spending an evaluation. In the spaces of
 * Kernel Tuner's studies 20-80% of the points are invalid, mostly for
 * resource limits (threads or shared memory per block: products of knob
 * values, linear in their logarithms) and for options that never work, so the
 * features are one indicator per option of every knob and, for numeric knobs,
 * the logarithm of the value. Training is gradient descent with an L2
 * penalty, warm-started from the previous weights.
 *
 * Until both kinds have been seen the classifier answers the observed valid
 * share for every point (no information to discriminate with).
 *
 * @example
 * ```ts
 * import { validityClassifier } from "./validity.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "block", kind: "other", options: [64, 128, 256, 512, 1024] }]);
 * const v = validityClassifier(space);
 * for (let i = 0; i < 5; i++) v.add([i], i < 3);
 * if (!(v.pValid([0]) > v.pValid([4]))) throw new Error();
 * ```
 * @module
 */
import type { KnobSpace, Point } from "../ir/knobs.ts";

/** Estimates how likely a point is to be valid, learned from measurements. */
export interface ValidityModel {
  /** Records the outcome of a measured point. */
  add(point: Point, valid: boolean): void;
  /** Probability that each point is valid (retrains first when points were added). */
  pValid(point: Point): number;
  /** Points recorded so far. */
  readonly size: number;
}

/** Options of {@link validityClassifier}. */
export interface ValidityOptions {
  /** L2 penalty per weight. Default 0.01. */
  l2?: number;
  /** Gradient steps per retraining. Default 200. */
  steps?: number;
}

/** Numeric value of an option (numbers, booleans), or undefined. */
function numeric(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  return undefined;
}

/** The feature encoder: one-hot options, and log2(1 + |value|) scaled to [0, 1] for numeric knobs. */
export function validityFeatures(space: KnobSpace): (p: Point) => Float64Array {
  const offsets: number[] = [];
  let width = 0;
  const logs: (number[] | undefined)[] = [];
  for (const k of space.knobs) {
    offsets.push(width);
    width += k.options.length > 1 ? k.options.length : 0;
    const vals = k.options.map(numeric);
    if (k.options.length > 2 && vals.every((v) => v !== undefined)) {
      const l = vals.map((v) => Math.log2(1 + Math.abs(v!)));
      const lo = Math.min(...l), hi = Math.max(...l);
      logs.push(hi > lo ? l.map((x) => (x - lo) / (hi - lo)) : undefined);
    } else logs.push(undefined);
  }
  const logAt: number[] = [];
  for (const l of logs) {
    logAt.push(l ? width : -1);
    if (l) width++;
  }
  const total = width + 1; // bias
  return (p) => {
    const f = new Float64Array(total);
    p.forEach((v, j) => {
      if (space.knobs[j].options.length > 1) f[offsets[j] + v] = 1;
      const l = logs[j];
      if (l) f[logAt[j]] = l[v];
    });
    f[total - 1] = 1;
    return f;
  };
}

/** A logistic-regression classifier of valid points, trained online. */
export function validityClassifier(space: KnobSpace, o: ValidityOptions = {}): ValidityModel {
  const l2 = o.l2 ?? 0.01, steps = o.steps ?? 200;
  const encode = validityFeatures(space);
  const xs: Float64Array[] = [];
  const ys: number[] = [];
  let w: Float64Array | undefined;
  let trainedOn = 0, valid = 0;
  const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
  const dot = (a: Float64Array, b: Float64Array) => {
    let s = 0;
    for (let i = 0; i < a.length; i++) s += a[i] * b[i];
    return s;
  };
  const train = () => {
    const d = xs[0].length;
    w ??= new Float64Array(d);
    const g = new Float64Array(d);
    // Step size from a bound on the Hessian: features are at most (knobs + 2) nonzero in [0, 1].
    const lr = 4 / (space.knobs.length + 2);
    for (let s = 0; s < steps; s++) {
      g.fill(0);
      for (let n = 0; n < xs.length; n++) {
        const e = sigmoid(dot(w, xs[n])) - ys[n];
        const x = xs[n];
        for (let i = 0; i < d; i++) if (x[i] !== 0) g[i] += e * x[i];
      }
      for (let i = 0; i < d; i++) w[i] -= lr * (g[i] / xs.length + (i === d - 1 ? 0 : l2 * w[i]));
    }
    trainedOn = xs.length;
  };
  return {
    add(point, ok) {
      xs.push(encode(point));
      ys.push(ok ? 1 : 0);
      if (ok) valid++;
    },
    pValid(point) {
      if (xs.length === 0) return 1;
      if (valid === 0 || valid === xs.length) return (valid + 1) / (xs.length + 2);
      if (trainedOn !== xs.length) train();
      return sigmoid(dot(w!, encode(point)));
    },
    get size() {
      return xs.length;
    },
  };
}
