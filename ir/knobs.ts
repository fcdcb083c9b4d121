/**
 * Knob spaces in the style of AutoTVM's ConfigSpace: a finite list of knobs,
 * each with a list of options; a configuration is one option index per knob
 * (a "point"). The space is indexable (index <-> point, first knob varying
 * fastest, as AutoTVM does), enumerable, knows its size and which points are
 * valid, gives neighbours, and applies a {-1, 0, +1} step per knob (the
 * multi-step RL formulation).
 *
 * @example
 * ```ts
 * import { KnobSpace } from "./knobs.ts";
 * const space = new KnobSpace([
 *   { name: "tile_x", kind: "split", options: [[1, 8], [2, 4], [4, 2], [8, 1]] },
 *   { name: "unroll", kind: "annotate", options: [0, 1] },
 * ]);
 * if (space.size !== 8 || space.index(space.point(5)) !== 5) throw new Error();
 * ```
 * @module
 */
import type { Prng } from "../ir/prng.ts";

/** AutoTVM's knob kinds: split ("sp"), reorder ("re"), annotate ("an"), other ("ot"). */
export type KnobKind = "split" | "reorder" | "annotate" | "other";

/** One knob: a name and its options (any JSON value). */
export interface Knob {
  /** Knob name, unique in its space, e.g. `"tile_i"`. */
  name: string;
  /** AutoTVM's kind of the knob. */
  kind: KnobKind;
  /** The knob's options; a point holds an index into them. */
  options: readonly unknown[];
}

/** A configuration: one option index per knob. */
export type Point = number[];

/** Options of a {@link KnobSpace}. */
export interface KnobSpaceOptions {
  /** Restrictions: a point for which this returns false is not in the space. Default: all valid. */
  isValid?: (values: Record<string, unknown>, point: Point) => boolean;
}

/** A finite, indexable space of knob configurations. */
export class KnobSpace {
  /** Number of points of the Cartesian product (valid or not). */
  readonly size: number;
  private readonly radix: number[];
  private readonly valid?: (values: Record<string, unknown>, point: Point) => boolean;

  /** Creates a space; every knob needs at least one option and a unique name. */
  constructor(readonly knobs: readonly Knob[], options: KnobSpaceOptions = {}) {
    const names = new Set<string>();
    for (const k of knobs) {
      if (k.options.length === 0) throw new RangeError(`Knob "${k.name}" has no options`);
      if (names.has(k.name)) throw new RangeError(`Knob "${k.name}" is defined twice`);
      names.add(k.name);
    }
    this.radix = knobs.map((k) => k.options.length);
    this.size = this.radix.reduce((a, b) => a * b, 1);
    if (!Number.isSafeInteger(this.size)) {
      throw new RangeError(`Space of ${this.size} points is too large`);
    }
    this.valid = options.isValid;
  }

  /** The point of a flat index (first knob varies fastest). */
  point(index: number): Point {
    if (!Number.isInteger(index) || index < 0 || index >= this.size) {
      throw new RangeError(`Index ${index} is outside the space of ${this.size} points`);
    }
    const p: Point = [];
    let rest = index;
    for (const r of this.radix) {
      p.push(rest % r);
      rest = Math.floor(rest / r);
    }
    return p;
  }

  /** The flat index of a point. */
  index(point: Point): number {
    this.check(point);
    let idx = 0;
    for (let i = point.length - 1; i >= 0; i--) idx = idx * this.radix[i] + point[i];
    return idx;
  }

  /** Knob values of a point, by knob name. */
  values(point: Point): Record<string, unknown> {
    this.check(point);
    return Object.fromEntries(this.knobs.map((k, i) => [k.name, k.options[point[i]]]));
  }

  /** True when the point satisfies the space's restrictions. */
  isValid(point: Point): boolean {
    return this.valid ? this.valid(this.values(point), point) : true;
  }

  /** A uniformly random point of the Cartesian product (valid or not). */
  random(prng: Prng): Point {
    return this.radix.map((r) => prng.int(r));
  }

  /** Points that differ from `point` by one option index (±1) in one knob. */
  neighbours(point: Point): Point[] {
    this.check(point);
    const out: Point[] = [];
    point.forEach((v, i) => {
      for (const d of [-1, 1]) {
        const w = v + d;
        if (w >= 0 && w < this.radix[i]) out.push(point.map((x, j) => (j === i ? w : x)));
      }
    });
    return out;
  }

  /** Adds a step in {-1, 0, +1} to each knob index, clipped to the knob's range. */
  step(point: Point, deltas: readonly number[]): Point {
    this.check(point);
    if (deltas.length !== point.length) {
      throw new RangeError(`A step needs ${point.length} deltas, got ${deltas.length}`);
    }
    return point.map((v, i) => Math.min(this.radix[i] - 1, Math.max(0, v + Math.sign(deltas[i]))));
  }

  /** Every point, in index order (a generator: spaces can be large). */
  *enumerate(): Generator<Point> {
    for (let i = 0; i < this.size; i++) yield this.point(i);
  }

  /** AutoTVM-style entity list of a point: `[[name, "sp"|"re"|"an"|"ot", value], …]`. */
  entity(point: Point): [string, string, unknown][] {
    const code = { split: "sp", reorder: "re", annotate: "an", other: "ot" } as const;
    return this.knobs.map((k, i) => [k.name, code[k.kind], k.options[point[i]]]);
  }

  /** Throws a RangeError naming the point when it does not fit the space. */
  private check(point: Point): void {
    if (
      point.length !== this.radix.length ||
      !point.every((v, i) => Number.isInteger(v) && v >= 0 && v < this.radix[i])
    ) {
      throw new RangeError(
        `Point ${JSON.stringify(point)} is not in this ${this.radix.length}-knob space`,
      );
    }
  }
}

/** Every factorisation of `extent` into `parts` ordered factors (AutoTVM's split knob, policy "factors"). */
export function splitOptions(extent: number, parts: number, maxInnermost = Infinity): number[][] {
  const out: number[][] = [];
  const rec = (rest: number, prefix: number[]) => {
    if (prefix.length === parts - 1) {
      if (rest <= maxInnermost) out.push([...prefix, rest]);
      return;
    }
    for (let d = 1; d <= rest; d++) if (rest % d === 0) rec(rest / d, [...prefix, d]);
  };
  rec(extent, []);
  return out;
}

/**
 * `values` with every knob they leave out at its first option.
 *
 * @example
 * ```ts
 * import { withDefaults } from "./knobs.ts";
 * const knobs = [{ name: "tile", options: [8, 16] }, { name: "unroll", options: [0, 1] }];
 * if (JSON.stringify(withDefaults(knobs, { unroll: 1 })) !== '{"tile":8,"unroll":1}') throw new Error();
 * ```
 */
export function withDefaults(
  knobs: readonly { name: string; options: readonly unknown[] }[],
  values: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(knobs.map((k) => [k.name, values[k.name] ?? k.options[0]]));
}

/**
 * The point whose knobs take `values` (by knob name; options compared as
 * JSON, so values read back from a JSON record match); undefined when a
 * knob's value is missing or not among its options.
 *
 * @example
 * ```ts
 * import { pointOfValues } from "./knobs.ts";
 * const knobs = [
 *   { name: "tile", options: [[1, 8], [2, 4]] },
 *   { name: "unroll", options: [0, 1] },
 * ];
 * if (pointOfValues(knobs, { tile: [2, 4], unroll: 1 })?.join() !== "1,1") throw new Error();
 * if (pointOfValues(knobs, { tile: [4, 2], unroll: 1 }) !== undefined) throw new Error();
 * ```
 */
export function pointOfValues(
  knobs: readonly { name: string; options: readonly unknown[] }[],
  values: Record<string, unknown>,
): Point | undefined {
  const point = knobs.map((k) => {
    const v = JSON.stringify(values[k.name]);
    return k.options.findIndex((o) => JSON.stringify(o) === v);
  });
  return point.some((i) => i < 0) ? undefined : point;
}
