/**
 * Bound inference: the region of a producer that a consumer reads inside its
 * loops (what `compute_at` allocates and what lowering computes and indexes),
 * from the symbolic intervals of the consumer's index expressions. The
 * schedule asks it for the extents of an attached stage
 * ({@link attachedExtents}); lowering (`lower.ts`) extends it with the
 * emission of loop nests. It depends on stages, not on the schedule, so the
 * schedule and lowering do not import each other.
 *
 * @example
 * ```ts
 * import { attachedExtents } from "./bounds.ts";
 * import { createPrng } from "./prng.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(0) });
 * const local = sch.cacheWrite("C");
 * const [, j1] = sch.split("C", "j", [null, 16]);
 * sch.computeAt(local, "C", j1);
 * const [a, c] = [sch.stage(local), sch.stage("C")];
 * if (attachedExtents(sch, a, c, c.leaves[c.leaves.length - 1]).join() !== "1,1") throw new Error();
 * ```
 * @module
 */
import { add, type AExpr, div, int, mod, mul, sub, vr } from "./ast.ts";
import { divModExact, divModFloor } from "./affine.ts";
import { ScheduleError } from "./errors.ts";
import { holderIn, type LayoutDim, type Loop, padToLayout, type Stage } from "./stage.ts";
import type { Workload } from "./workloads.ts";
import { Expr, type IterVar, type Reduce, rewrite } from "./te.ts";

/** What bound inference reads of a schedule: its workload, its stages and who reads each. */
export interface ScheduledStages {
  /** The workload scheduled. */
  readonly workload: Workload;
  /** Its stages. */
  readonly stages: readonly Stage[];
  /** Stages that read stage `s`. */
  consumers(s: Stage): Stage[];
}

/**
 * Extents of the region of producer `a` that consumer `s` reads within one
 * iteration of its leaf loop `loop` (bound inference for compute_at).
 */
export function attachedExtents(
  sch: ScheduledStages,
  a: Stage,
  s: Stage,
  loop: Loop,
): number[] {
  return new BoundInference(sch).regionExtents(a, s, loop);
}

/**
 * The regions of a schedule's stages and the conversion of their tensor
 * expressions to the AST (loads indexed into the regions); `Lowering`
 * extends it.
 */
export class BoundInference {
  protected readonly names = new Set<string>();
  protected readonly regions = new Map<string, Region>();
  protected readonly env = new Map<string, [number, number]>();
  protected readonly bodies = new Map<Stage, Expr | Reduce>();
  /** Loop variables bound to threadIdx axes, with their extents. */
  protected readonly threadVars = new Map<string, number>();
  /** Values of the `let` variables emitted so far (region starts). */
  protected readonly letValues = new Map<string, AExpr>();
  /** Counter of symbolic variables (bound inference only, never emitted). */
  protected symbols = 0;

  constructor(protected readonly sch: ScheduledStages) {}

  /** A C identifier derived from `base`, unique in this kernel. */
  protected fresh(base: string): string {
    const clean = base.replace(/[^A-Za-z0-9_]/g, "_");
    let name = clean;
    for (let i = 2; this.names.has(name); i++) name = `${clean}_${i}`;
    this.names.add(name);
    return name;
  }

  /** The stage's body with inlined producers substituted (memoised). */
  protected bodyOf(s: Stage): Expr | Reduce {
    let b = this.bodies.get(s);
    if (!b) this.bodies.set(s, b = this.inlined(s));
    return b;
  }

  /** The stage's body with inlined producers substituted. */
  protected inlined(s: Stage): Expr | Reduce {
    const inline = (e: Expr): Expr =>
      rewrite(e, (x) => {
        const n = x.node;
        if (n.k !== "load") return undefined;
        const p = this.sch.stages.find((t) => t.name === n.tensor.name);
        if (!p || p.attach.k !== "inline") return undefined;
        const pb = this.bodyOf(p);
        if (!(pb instanceof Expr)) throw new Error("internal: inlined a reduction");
        return atIndex(pb, p, n.index);
      });
    const b = s.body;
    return b instanceof Expr ? inline(b) : { ...b, body: inline(b.body) };
  }

  /**
   * The region of producer `a` that consumer `s` reads inside its first `i`
   * leaf loops: per dimension, a start expression and a constant extent.
   */
  regionOf(
    a: Stage,
    s: Stage,
    i: number,
    rootVal: Map<IterVar, AExpr>,
    leafVar: Map<Loop, AExpr>,
    outerRanging: ReadonlyMap<string, number> = new Map(),
  ): { los: AExpr[]; extents: number[]; widths?: number[] } {
    const ranging = new Map<string, number>(outerRanging);
    // A shared copy serves the whole thread block: thread indices range too,
    // seen through the region starts (lets) that depend on them.
    const shared = a.scope === "shared";
    if (shared) { for (const [v, extent] of this.threadVars) ranging.set(v, extent); }
    s.leaves.slice(i).forEach((l) =>
      ranging.set((leafVar.get(l) as { name: string }).name, l.extent)
    );
    const loads: AExpr[][] = [];
    const body = this.bodyOf(s);
    rewrite(body instanceof Expr ? body : body.body, (x) => {
      if (x.node.k === "load" && x.node.tensor.name === a.name) {
        loads.push(x.node.index.map((ix) => {
          const e = this.convert(ix, rootVal, "int");
          return shared ? this.expandLets(e) : e;
        }));
      }
      return undefined;
    });
    if (loads.length === 0) return this.heldRegionOf(a, s, i, rootVal, leafVar, outerRanging);
    const los: AExpr[] = [], extents: number[] = [], widths: number[] = [];
    a.shape.forEach((full, d) => {
      const ivs = loads.map((ix) => symInterval(ix[d], ranging));
      const lo = ivs[0].lo;
      if (!ivs.every((iv) => JSON.stringify(iv.lo) === JSON.stringify(lo))) {
        throw new ScheduleError(
          `Cannot compute_at stage "${a.name}" in "${s.name}": its accesses differ in dimension ${d}`,
        );
      }
      los.push(lo);
      // A packed copy covers every index its readers form (a start below zero, say,
      // with padding) and holds zeros outside the tensor; other stages are clipped.
      const width = Math.max(...ivs.map((iv) => iv.w)) + 1;
      widths.push(width);
      extents.push(a.packed ? width : Math.min(width, full));
    });
    return { los, extents: padToLayout(extents, a.layout), widths };
  }

  /**
   * The region of a packed copy `a` computed at depth `i` of `s` but read by
   * a stage `x` computed (possibly through others) inside `s`: `x`'s region
   * start as expressions of `s`'s loops, every loop of `x` ranging.
   */
  protected heldRegionOf(
    a: Stage,
    s: Stage,
    i: number,
    rootVal: Map<IterVar, AExpr>,
    leafVar: Map<Loop, AExpr>,
    outerRanging: ReadonlyMap<string, number>,
  ): { los: AExpr[]; extents: number[] } {
    const reader = this.sch.consumers(a);
    const held = a.packed && reader.length === 1 ? holderIn(reader[0], s) : undefined;
    if (!held) throw new Error(`internal: "${s.name}" does not read "${a.name}"`);
    const depth = s.leaves.indexOf(held.loop) + 1;
    if (depth < i) {
      throw new ScheduleError(
        `Stage "${a.name}" is computed at loop "${
          s.leaves[i - 1].name
        }" of "${s.name}", inside loop "${held.loop.name}" where its reader "${held.stage.name}" is computed`,
      );
    }
    const x = held.stage;
    const bases = this.regionOf(x, s, depth, rootVal, leafVar, outerRanging).los;
    const ranging = new Map(outerRanging);
    s.leaves.slice(i).forEach((l) =>
      ranging.set((leafVar.get(l) as { name: string }).name, l.extent)
    );
    const xVar = new Map<Loop, AExpr>(x.leaves.map((l) => [l, vr(`@${this.symbols++}`)]));
    const rel = x.roots.map((r) => loopValue(x, r, xVar));
    const xRoot = new Map<IterVar, AExpr>(
      x.rootAxes.map((ax, d) => [ax, d < x.axes.length ? add(bases[d], rel[d]) : rel[d]]),
    );
    return this.regionOf(a, x, 0, xRoot, xVar, ranging);
  }

  /** `e` with every `let` variable replaced by its value (recursively). */
  protected expandLets(e: AExpr): AExpr {
    switch (e.k) {
      case "var": {
        const v = this.letValues.get(e.name);
        return v ? this.expandLets(v) : e;
      }
      case "bin":
      case "cmp":
      case "and":
        return { ...e, a: this.expandLets(e.a), b: this.expandLets(e.b) } as AExpr;
      case "select":
        return {
          k: "select",
          cond: this.expandLets(e.cond),
          t: this.expandLets(e.t),
          f: this.expandLets(e.f),
        };
      case "load":
        return { k: "load", buf: e.buf, index: this.expandLets(e.index) };
      default:
        return e;
    }
  }

  /**
   * Leaf variables of `s` for bound inference outside a full lowering, with
   * its threadIdx-bound loops registered.
   */
  protected symbolicLeaves(s: Stage): Map<Loop, AExpr> {
    const leafVar = new Map<Loop, AExpr>();
    for (const l of s.leaves) {
      const v = this.fresh(`v_${l.name}`);
      leafVar.set(l, vr(v));
      if (s.bindings.get(l)?.startsWith("threadIdx")) this.threadVars.set(v, l.extent);
    }
    return leafVar;
  }

  /**
   * Starts of the region of `s` as expressions of the loops of the stages it
   * is computed in (symbolic variables): what lowering puts in its lets.
   */
  protected symbolicBases(s: Stage): AExpr[] {
    if (s.attach.k !== "at") return s.axes.map(() => int(0));
    const c = s.attach.stage;
    const leafVar = this.symbolicLeaves(c);
    const rel = c.roots.map((r) => loopValue(c, r, leafVar));
    const bases = this.symbolicBases(c);
    const rootVal = new Map<IterVar, AExpr>(
      c.rootAxes.map((ax, i) => [ax, i < c.axes.length ? add(bases[i], rel[i]) : rel[i]]),
    );
    return this.regionOf(s, c, c.leaves.indexOf(s.attach.loop) + 1, rootVal, leafVar).los;
  }

  /** Extents of the region `a` needs when computed at `loop` of `s` (see {@link attachedExtents}). */
  regionExtents(a: Stage, s: Stage, loop: Loop): number[] {
    for (const t of this.sch.workload.inputs) {
      this.regions.set(t.name, { buf: t.name, mins: t.shape.map(() => int(0)), extents: t.shape });
    }
    for (const st of this.sch.stages) {
      this.regions.set(st.name, {
        buf: st.name,
        mins: st.shape.map(() => int(0)),
        extents: st.shape,
      });
    }
    const leafVar = this.symbolicLeaves(s);
    const rel = s.roots.map((r) => loopValue(s, r, leafVar));
    // A shared copy's region depends on the thread loops of the stages `s` is computed in.
    const bases = a.scope === "shared"
      ? this.symbolicBases(s)
      : s.axes.map(() => vr(this.fresh("base")));
    const rootVal = new Map<IterVar, AExpr>(
      s.rootAxes.map((ax, i) => [ax, i < s.axes.length ? add(bases[i], rel[i]) : rel[i]]),
    );
    return this.regionOf(a, s, s.leaves.indexOf(loop) + 1, rootVal, leafVar).extents;
  }

  /**
   * The flat index of a position (per dimension, relative to the region's
   * start) in a region's buffer: row-major, or for a packed copy its panels
   * first, then the other dimensions, then the positions within the panels;
   * a deinterleaved dimension is its phase, then the position in the phase.
   * Panel index and position are plain affine expressions when the
   * variables' ranges prove it (so the C generator sees unit strides).
   */
  protected layoutIndex(region: Region, rels: AExpr[]): AExpr {
    const dims: { e: AExpr; extent: number }[] = [];
    const inner: { e: AExpr; extent: number }[] = [];
    const layout = region.layout ?? [];
    const panelDims = layout.filter((t) => !t.phase);
    const panels = new Set(panelDims.map((t) => t.axis));
    for (const { axis, factor } of panelDims) {
      const dm = divModExact(rels[axis], factor, this.env, this.letValues);
      dims.push({ e: dm?.div ?? div(rels[axis], factor), extent: region.extents[axis] / factor });
      inner.push({ e: dm?.mod ?? mod(rels[axis], factor), extent: factor });
    }
    rels.forEach((e, d) => {
      if (panels.has(d)) return;
      const phases = layout.find((t) => t.phase && t.axis === d)?.factor;
      if (!phases) return dims.push({ e, extent: region.extents[d] });
      // A stride-f reader's `f * x + r` is phase `r % f`, position `x + r / f`.
      const dm = divModFloor(e, phases, this.env, this.letValues);
      dims.push({ e: dm?.mod ?? mod(e, phases), extent: phases });
      dims.push({ e: dm?.div ?? div(e, phases), extent: region.extents[d] / phases });
    });
    dims.push(...inner);
    const strides = stridesOf(dims.map((x) => x.extent));
    return dims.reduce((acc: AExpr, x, d) => add(acc, mul(x.e, int(strides[d]))), int(0));
  }

  /** Converts a tensor expression to the AST, given the values of the root axes. */
  protected convert(e: Expr, rootVal: Map<IterVar, AExpr>, ctx: "int" | "float"): AExpr {
    const n = e.node;
    switch (n.k) {
      case "const":
        return ctx === "int" ? int(n.value) : { k: "float", v: n.value };
      case "var": {
        const v = rootVal.get(n.v);
        if (!v) throw new Error(`internal: axis "${n.v.name}" has no value here`);
        return v;
      }
      case "load": {
        const r = this.regions.get(n.tensor.name);
        if (!r) throw new Error(`internal: tensor "${n.tensor.name}" is not available`);
        const rels = n.index.map((ix, d) => sub(this.convert(ix, rootVal, "int"), r.mins[d]));
        return { k: "load", buf: r.buf, index: this.layoutIndex(r, rels) };
      }
      case "bin": {
        const a = this.convert(n.a, rootVal, ctx), b = this.convert(n.b, rootVal, ctx);
        switch (n.op) {
          case "add":
            return ctx === "int" ? add(a, b) : { k: "bin", op: "+", a, b };
          case "sub":
            return ctx === "int" ? sub(a, b) : { k: "bin", op: "-", a, b };
          case "mul":
            return ctx === "int" ? mul(a, b) : { k: "bin", op: "*", a, b };
          case "div":
            return { k: "bin", op: "/", a, b };
          case "mod":
            if (ctx === "float") throw new ScheduleError("mod is only defined on indices");
            return { k: "bin", op: "%", a, b };
          default:
            return { k: "bin", op: n.op, a, b };
        }
      }
      case "cmp": {
        const c = hasLoad(n.a) || hasLoad(n.b) ? "float" : "int";
        const op = ({ lt: "<", le: "<=", ge: ">=", gt: ">", eq: "==" } as const)[n.op];
        return { k: "cmp", op, a: this.convert(n.a, rootVal, c), b: this.convert(n.b, rootVal, c) };
      }
      case "and":
        return { k: "and", a: this.convert(n.a, rootVal, ctx), b: this.convert(n.b, rootVal, ctx) };
      case "select":
        return {
          k: "select",
          cond: this.convert(n.cond, rootVal, ctx),
          t: this.convert(n.t, rootVal, ctx),
          f: this.convert(n.f, rootVal, ctx),
        };
    }
  }
}

/** The value of any loop of `s` in terms of its leaf loops' variables. */
export function loopValue(s: Stage, l: Loop, leafVar: Map<Loop, AExpr>): AExpr {
  const v = leafVar.get(l);
  if (v) return v;
  for (const r of s.relations) {
    if (r.k === "split" && r.parent === l) {
      return add(
        mul(loopValue(s, r.outer, leafVar), int(r.factor)),
        loopValue(s, r.inner, leafVar),
      );
    }
    if (r.k === "fuse" && (r.outer === l || r.inner === l)) {
      const f = loopValue(s, r.fused, leafVar);
      return r.outer === l ? div(f, r.inner.extent) : mod(f, r.inner.extent);
    }
  }
  throw new Error(`internal: loop "${l.name}" of "${s.name}" is unreachable`);
}

/** A symbolic interval: values in [lo, lo + w], lo an expression of fixed variables. */
interface SymInterval {
  lo: AExpr;
  w: number;
}

/** Symbolic interval of an index expression where `ranging` variables span [0, extent). */
function symInterval(e: AExpr, ranging: ReadonlyMap<string, number>): SymInterval {
  switch (e.k) {
    case "int":
      return { lo: e, w: 0 };
    case "var": {
      const ext = ranging.get(e.name);
      return ext === undefined ? { lo: e, w: 0 } : { lo: int(0), w: ext - 1 };
    }
    case "bin": {
      const a = symInterval(e.a, ranging), b = symInterval(e.b, ranging);
      switch (e.op) {
        case "+":
          return { lo: add(a.lo, b.lo), w: a.w + b.w };
        case "-":
          return { lo: sub(a.lo, add(b.lo, int(b.w))), w: a.w + b.w };
        case "*":
          if (e.b.k === "int" && e.b.v >= 0) return { lo: mul(a.lo, e.b), w: a.w * e.b.v };
          if (e.a.k === "int" && e.a.v >= 0) return { lo: mul(e.a, b.lo), w: b.w * e.a.v };
          if (a.w === 0 && b.w === 0) return { lo: mul(a.lo, b.lo), w: 0 };
          break;
        case "/":
          if (e.b.k === "int" && e.b.v > 0) {
            return { lo: div(a.lo, e.b.v), w: a.w === 0 ? 0 : Math.ceil(a.w / e.b.v) };
          }
          break;
        case "%":
          if (e.b.k === "int" && e.b.v > 0) {
            return a.w === 0 ? { lo: mod(a.lo, e.b.v), w: 0 } : { lo: int(0), w: e.b.v - 1 };
          }
          break;
      }
    }
  }
  throw new ScheduleError(`Cannot infer a region for the index expression (${e.k})`);
}

/** `e`, an expression in stage `p`'s axes, at the element `index` of `p` (a consumer's load). */
export function atIndex(e: Expr, p: Stage, index: Expr[]): Expr {
  const map = new Map<IterVar, Expr>(p.axes.map((a, i) => [a, index[i]]));
  return rewrite(e, (y) => y.node.k === "var" ? map.get(y.node.v) : undefined);
}

function hasLoad(e: Expr): boolean {
  let found = false;
  rewrite(e, (x) => {
    if (x.node.k === "load") found = true;
    return undefined;
  });
  return found;
}

interface Region {
  buf: string;
  mins: AExpr[];
  extents: number[];
  /** Tiled dimensions of a packed copy (see `Stage.layout`); row-major when absent. */
  layout?: readonly LayoutDim[];
}

/** Row-major strides of a shape. */
function stridesOf(shape: number[]): number[] {
  const out = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) out[i] = out[i + 1] * shape[i + 1];
  return out;
}
