/**
 * Lowering: a {@link Schedule} to the loop AST of {@link ./ast.ts}.
 *
 * Map: `lower()` walks root stages in producer order; `emitStage()` builds one
 * stage's nest from its leaf loops, with the reduction's init nest placed just
 * outside the first reduction loop, guards for imperfect tiles hoisted to the
 * innermost loop they depend on, and attached producers (compute_at) emitted
 * at the top of their loop's body over the region bound inference finds.
 * Bound inference is symbolic: a region's start is an expression of the
 * enclosing loop variables and its extent a constant. A packed copy
 * (`cache_read(..., "global")`) may be computed outside its reader's own
 * attach loop (`heldRegionOf`), covers all indices its readers form (zeros
 * outside the tensor) and is indexed panel-first (`layoutIndex`). An attached
 * CPU stage with guards is versioned: one nest without its spatial guards for
 * full tiles, the guarded nest for edge tiles (`fullTileCondition`); the full
 * version of a register tile also drops the tensor guards of its copy.
 * @module
 */
import {
  add,
  type AExpr,
  andAll,
  bounds,
  div,
  type ForKind,
  int,
  isZeroSelect,
  type Kernel,
  mod,
  mul,
  type Stmt,
  sub,
  varsOf,
  vr,
} from "./ast.ts";
import { divModExact, divModFloor, nondecreasing, substitute } from "./affine.ts";
import { ScheduleError } from "./errors.ts";
import { readsOf, type Schedule } from "./schedule.ts";
import { holderIn, type LayoutDim, type Loop, padToLayout, type Stage } from "./stage.ts";
import { Expr, type IterVar, type Reduce, rewrite, visitLoads } from "./te.ts";

/**
 * A padding guard that is evaluated at run time wraps at least this many
 * iterations (a register tile's multiply-adds); below that, as in a naive
 * loop nest, the branch costs more than the zeros it skips.
 */
const MIN_GUARDED_WORK = 32;

/** Attached buffers up to this many bytes live on the stack. */
const STACK_LIMIT_BYTES = 128 * 1024;

interface Region {
  buf: string;
  mins: AExpr[];
  extents: number[];
  /** Tiled dimensions of a packed copy (see `Stage.layout`); row-major when absent. */
  layout?: readonly LayoutDim[];
}

/**
 * Extents of the region of producer `a` that consumer `s` reads within one
 * iteration of its leaf loop `loop` (bound inference for compute_at).
 */
export function attachedExtents(sch: Schedule, a: Stage, s: Stage, loop: Loop): number[] {
  return new Lowering(sch).regionExtents(a, s, loop);
}

/**
 * True when stage `s` is a layout rewrite (see `Kernel.prologue`): a packed
 * copy computed at the root, on the CPU, of layout-free inputs only.
 */
function isLayoutRewrite(sch: Schedule, s: Stage): boolean {
  const layoutFree = sch.workload.layoutFree ?? [];
  return s.packed && s.attach.k === "root" && !isGpuSchedule(sch) &&
    readsOf(s).every((t) => layoutFree.includes(t));
}

/** A GPU schedule (bound loops or shared memory). */
function isGpuSchedule(sch: Schedule): boolean {
  return sch.stages.some((s) => s.bindings.size > 0 || s.scope === "shared");
}

/**
 * True when the schedule's kernel rewrites the layout of its weights
 * (`Kernel.prologue` non-empty), without lowering it.
 *
 * @example
 * ```ts
 * import { rewritesLayout } from "./lower.ts";
 * import { Schedule } from "./schedule.ts";
 * import { createPrng } from "./prng.ts";
 * import { createWorkload } from "./workloads.ts";
 * const sch = new Schedule(createWorkload("dense", [4, 32, 8]), { prng: createPrng(1) });
 * if (rewritesLayout(sch)) throw new Error();
 * sch.cacheRead("W", "global", ["D"]);
 * if (!rewritesLayout(sch)) throw new Error();
 * ```
 */
export function rewritesLayout(sch: Schedule): boolean {
  return sch.stages.some((s) => isLayoutRewrite(sch, s));
}

/** Lowers a schedule to a kernel. Throws ScheduleError for an illegal combination. */
export function lower(sch: Schedule): Kernel {
  return new Lowering(sch).run();
}

/**
 * The gcc options a schedule's `gcc.*` pragmas ask for: `gcc.NAME` 0 is
 * `no-NAME`, 1 is `NAME` (underscores become dashes), in stage order, once each.
 */
function gccOptionsOf(sch: Schedule): string[] {
  const options = new Set<string>();
  for (const s of sch.stages) {
    for (const [key, value] of s.pragmas) {
      if (!key.startsWith("gcc.")) continue;
      const flag = key.slice(4).replaceAll("_", "-");
      options.add(value === 0 ? `no-${flag}` : flag);
    }
  }
  return [...options];
}

class Lowering {
  private readonly names = new Set<string>();
  private readonly regions = new Map<string, Region>();
  private readonly env = new Map<string, [number, number]>();
  private readonly loopOf = new Map<string, { stage: Stage; loop: Loop }>();
  private readonly bodies = new Map<Stage, Expr | Reduce>();
  /** Loop variables bound to threadIdx axes, with their extents. */
  private readonly threadVars = new Map<string, number>();
  /** Values of the `let` variables emitted so far (region starts). */
  private readonly letValues = new Map<string, AExpr>();
  /** Counter of symbolic variables (bound inference only, never emitted). */
  private symbols = 0;
  /** A GPU schedule (bound loops or shared memory): no loop versioning. */
  private readonly gpu: boolean;

  constructor(private readonly sch: Schedule) {
    this.gpu = isGpuSchedule(sch);
  }

  run(): Kernel {
    const { sch } = this;
    const params: Kernel["params"] = [];
    for (const t of sch.workload.inputs) {
      const buf = this.fresh(`T_${t.name}`);
      params.push({ buf, tensor: t.name, size: t.size, role: "input" });
      this.regions.set(t.name, { buf, mins: t.shape.map(() => int(0)), extents: t.shape });
    }
    const temps: Kernel["temps"] = [];
    for (const s of sch.stages) {
      if (s.attach.k === "inline") continue;
      if (s.attach.k === "at") {
        const consumers = sch.consumers(s);
        const c = s.attach.stage;
        const held = s.packed && consumers.length === 1 && holderIn(consumers[0], c);
        if (held && c.leaves.indexOf(held.loop) < c.leaves.indexOf(s.attach.loop)) {
          throw new ScheduleError(
            `Stage "${s.name}" is computed at loop "${s.attach.loop.name}" of "${c.name}", inside loop "${held.loop.name}" where its reader "${held.stage.name}" is computed`,
          );
        }
        if (!held && (consumers.length !== 1 || consumers[0] !== c)) {
          throw new ScheduleError(
            `Stage "${s.name}" is computed at "${s.attach.stage.name}" but read by ${
              consumers.map((c) => `"${c.name}"`).join(", ")
            }`,
          );
        }
        continue;
      }
      const buf = this.fresh(`T_${s.name}`);
      const extents = s.fullExtents;
      this.regions.set(s.name, { buf, mins: s.shape.map(() => int(0)), extents, layout: s.layout });
      const size = extents.reduce((a, b) => a * b, 1);
      if (s.isOutput) params.push({ buf, tensor: s.name, size, role: "output" });
      else temps.push({ buf, size });
    }
    const body: Stmt[] = [];
    const prologue: Stmt[] = [];
    const roots: { stage: string; body: Stmt[] }[] = [];
    for (const s of sch.stages) {
      if (s.attach.k !== "root") continue;
      const nest = this.emitStage(s, s.shape.map(() => int(0)));
      roots.push({ stage: s.name, body: nest });
      (isLayoutRewrite(sch, s) ? prologue : body).push(...nest);
    }
    this.checkParallel([...prologue, ...body], false);
    const packed = sch.stages.find((s) => s.packed && s.attach.k !== "inline");
    const cpuOnly = packed ? `cache_read("${packed.name.replace(/_global$/, "")}", "global")` : "";
    const gccOptions = gccOptionsOf(sch);
    return {
      params,
      temps,
      body,
      roots,
      ...(prologue.length > 0 ? { prologue } : {}),
      ...(cpuOnly ? { cpuOnly } : {}),
      ...(gccOptions.length > 0 ? { gccOptions } : {}),
    };
  }

  /** A C identifier derived from `base`, unique in this kernel. */
  private fresh(base: string): string {
    const clean = base.replace(/[^A-Za-z0-9_]/g, "_");
    let name = clean;
    for (let i = 2; this.names.has(name); i++) name = `${clean}_${i}`;
    this.names.add(name);
    return name;
  }

  /** The stage's body with inlined producers substituted (memoised). */
  private bodyOf(s: Stage): Expr | Reduce {
    let b = this.bodies.get(s);
    if (!b) this.bodies.set(s, b = this.inlined(s));
    return b;
  }

  /** The stage's body with inlined producers substituted. */
  private inlined(s: Stage): Expr | Reduce {
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
   * Emits the nest of `s`, whose spatial roots start at `bases`. With
   * `version`, the conditions of the guards on spatial loops are pushed to
   * `version.spatial` and the loop variables' extents to `version.vars`; with
   * `version.drop` those guards are left out (a nest for full tiles).
   */
  private emitStage(
    s: Stage,
    bases: AExpr[],
    version?: { drop: boolean; spatial: AExpr[]; vars: Map<string, number> },
  ): Stmt[] {
    const region = this.regions.get(s.name)!;
    const leafVar = new Map<Loop, AExpr>();
    for (const l of s.leaves) {
      const v = this.fresh(`v_${s.name}_${l.name}`);
      leafVar.set(l, vr(v));
      this.env.set(v, [0, l.extent - 1]);
      this.loopOf.set(v, { stage: s, loop: l });
      version?.vars.set(v, l.extent);
      if (s.bindings.get(l)?.startsWith("threadIdx")) this.threadVars.set(v, l.extent);
    }
    const rel = s.roots.map((r) => loopValue(s, r, leafVar));
    const axes = s.rootAxes;
    const spatial = s.axes.length;
    const rootVal = new Map<IterVar, AExpr>(
      axes.map((a, i) => [a, i < spatial ? add(bases[i], rel[i]) : rel[i]]),
    );
    const depthOf = (e: AExpr) => {
      let d = -1;
      for (const v of varsOf(e)) {
        const at = s.leaves.findIndex((l) => (leafVar.get(l) as { name: string }).name === v);
        d = Math.max(d, at);
      }
      return d;
    };
    // Guards: the iteration is inside the stage's region and inside the tensor.
    // A packed copy stores zeros outside the tensor instead of skipping those positions.
    const guards: { cond: AExpr; depth: number; spatial: boolean; tensor?: boolean }[] = [];
    const zeroOutside: AExpr[] = [];
    s.roots.forEach((r, i) => {
      const [, relHi] = bounds(rel[i], this.env);
      const ext = i < spatial ? region.extents[i] : r.extent;
      const conds: AExpr[] = [];
      // At the root, the region is the tensor: its bound is a tensor bound.
      const atRoot = i < spatial && ext === s.shape[i] && bases[i].k === "int" && bases[i].v === 0;
      if (relHi >= ext) {
        const cond: AExpr = { k: "cmp", op: "<", a: rel[i], b: int(ext) };
        if (atRoot) guards.push({ cond, depth: depthOf(cond), spatial: true, tensor: true });
        else conds.push(cond);
      }
      if (i < spatial) {
        const [bLo, bHi] = bounds(bases[i], this.env);
        const full = s.shape[i];
        const v = add(bases[i], rel[i]);
        const outside: AExpr[] = [];
        if (bHi + Math.min(relHi, ext - 1) >= full) {
          outside.push({ k: "cmp", op: "<", a: v, b: int(full) });
        }
        if (bLo < 0) outside.push({ k: "cmp", op: ">=", a: v, b: int(0) });
        if (s.packed) zeroOutside.push(...outside);
        else {
          for (const cond of outside) {
            guards.push({ cond, depth: depthOf(cond), spatial: true, tensor: true });
          }
        }
      }
      for (const cond of conds) guards.push({ cond, depth: depthOf(cond), spatial: i < spatial });
    });
    // An imperfect split of a non-root loop (the inner loop of another split, or a fused
    // loop) can overshoot that loop's extent without overshooting the root: guard it too,
    // or iterations repeat (a fused loop's `% extent` wraps around).
    for (const r of s.relations) {
      if (r.k !== "split" || s.roots.includes(r.parent)) continue;
      const v = loopValue(s, r.parent, leafVar);
      if (bounds(v, this.env)[1] < r.parent.extent) continue;
      const cond: AExpr = { k: "cmp", op: "<", a: v, b: int(r.parent.extent) };
      guards.push({ cond, depth: depthOf(cond), spatial: r.parent.kind === "spatial" });
    }
    if (version) {
      version.spatial.push(...guards.filter((g) => g.spatial).map((g) => g.cond), ...zeroOutside);
      if (version.drop) {
        guards.splice(0, guards.length, ...guards.filter((g) => !g.spatial));
        zeroOutside.length = 0;
      }
    }
    const kinds = this.loopKinds(s);
    const body = this.bodyOf(s);
    const index = this.layoutIndex(region, rel.slice(0, spatial));
    const isReduce = !(body instanceof Expr);
    const p = isReduce ? s.leaves.findIndex((l) => l.kind === "reduce") : -1;
    if (!(body instanceof Expr) && !this.gpu) {
      const unrolled = new Set<string>(), vectorized = new Set<string>();
      for (const l of s.leaves) {
        const name = (leafVar.get(l) as { name: string }).name;
        if (kinds.get(l) === "unroll") unrolled.add(name);
        if (kinds.get(l) === "vectorize") vectorized.add(name);
      }
      const conds = this.zeroUnless(body.body).map((c) => this.convert(c, rootVal, "int"));
      // Iterations of the leaves inside each depth: a guard evaluated at run time costs a
      // branch per iteration of its loop, worth it only over a tile's worth of work.
      const inside = s.leaves.map((_, d) =>
        s.leaves.slice(d + 1).reduce((a, l) => a * l.extent, 1)
      );
      for (const { cond, folded } of paddingGuards(conds, this.env, unrolled, vectorized)) {
        const depth = Math.max(depthOf(cond), p);
        if (folded || inside[depth] >= MIN_GUARDED_WORK) {
          guards.push({ cond, depth, spatial: false });
        }
      }
    }
    const store = (): Stmt => {
      let value = this.convert(isReduce ? body.body : body, rootVal, "float");
      if (isReduce) value = zeroSelectOutside(value);
      const inside = andAll(zeroOutside);
      if (inside) value = { k: "select", cond: inside, t: value, f: { k: "float", v: 0 } };
      return { k: "store", buf: region.buf, index, value, accumulate: isReduce };
    };

    const forOf = (l: Loop, inner: Stmt[]): Stmt => {
      const thread = s.bindings.get(l);
      const prefetch = (s.prefetches.get(l) ?? []).flatMap(({ tensor, offset }) => {
        const buf = this.regions.get(tensor)?.buf;
        return buf ? [{ buf, offset }] : [];
      });
      return {
        k: "for",
        v: (leafVar.get(l) as { name: string }).name,
        extent: l.extent,
        kind: kinds.get(l) ?? "serial",
        body: inner,
        ...(thread ? { thread } : {}),
        ...(prefetch.length > 0 ? { prefetch } : {}),
      };
    };
    const wrapGuards = (inner: Stmt[], conds: AExpr[]): Stmt[] => {
      const c = andAll(conds);
      return c ? [{ k: "if", cond: c, body: inner }] : inner;
    };
    // The init nest of a reduction: spatial leaves inside the first reduction loop.
    const initLeaves = isReduce ? s.leaves.slice(p + 1).filter((l) => l.kind === "spatial") : [];
    const initNest = (): Stmt[] => {
      const init: Stmt = {
        k: "store",
        buf: region.buf,
        index,
        value: { k: "float", v: 0 },
        accumulate: false,
      };
      const build = (j: number): Stmt[] => {
        const inner = j === initLeaves.length ? [init] : [forOf(initLeaves[j], build(j + 1))];
        const here = guards.filter((g) =>
          g.spatial && g.depth > p &&
          (j === 0 ? false : initLeaves.indexOf(s.leaves[g.depth]) === j - 1)
        );
        return wrapGuards(inner, here.map((g) => g.cond));
      };
      return build(0);
    };
    const attachedAt = (l: Loop | undefined) =>
      this.sch.stages.filter((a) =>
        l && a.attach.k === "at" && a.attach.stage === s && a.attach.loop === l
      );
    // The copy of a cache_write stage (an element-wise stage reading the tile,
    // with a fused epilogue or not): inside a full register tile (loop
    // versioning of the tile), its tensor guards below the tile loop hold.
    const copied = new Set<string>();
    if (s.body instanceof Expr) visitLoads(s.body, (t) => copied.add(t.name));
    const build = (i: number, fullFrom = Infinity): Stmt[] => {
      const here = s.leaves[i - 1];
      // Producers first: their regions must exist before the consumer's loads are lowered.
      const producers = attachedAt(here).map((a) => {
        if (kinds.get(here) === "vectorize") {
          throw new ScheduleError(
            `Cannot vectorize loop "${here.name}" of stage "${s.name}": stage "${a.name}" is computed inside it`,
          );
        }
        return this.emitAttached(a, s, i, rootVal, leafVar);
      });
      const nest = (from: number): Stmt[] => {
        const x = i === s.leaves.length ? [store()] : [forOf(s.leaves[i], build(i + 1, from))];
        return isReduce && i === p ? [...initNest(), ...x] : x;
      };
      let inner = nest(fullFrom);
      const tile = attachedAt(here).some((a) => a.scope === "local" && copied.has(a.name));
      let full = tile && i < s.leaves.length ? nest(Math.min(fullFrom, i)) : inner;
      for (const wrap of producers.reverse()) {
        [inner, full] = [wrap(inner, full), wrap(full, full)];
      }
      return wrapGuards(
        inner,
        guards.filter((g) => g.depth === i - 1 && !(g.tensor && g.depth >= fullFrom))
          .map((g) => g.cond),
      );
    };
    s.leaves.forEach((l, i) => {
      if (kinds.get(l) === "vectorize" && i !== s.leaves.length - 1) {
        throw new ScheduleError(
          `Cannot vectorize loop "${l.name}" of stage "${s.name}": it is not the innermost loop ("${
            s.leaves[i + 1].name
          }" is inside it)`,
        );
      }
    });
    return build(0);
  }

  /**
   * Infers the region of producer `a` attached at depth `i` of consumer `s`,
   * emits its nest, and returns a function that places it before `rest`.
   */
  private emitAttached(
    a: Stage,
    s: Stage,
    i: number,
    rootVal: Map<IterVar, AExpr>,
    leafVar: Map<Loop, AExpr>,
  ): (rest: Stmt[], restFull: Stmt[]) => Stmt[] {
    const region = this.regionOf(a, s, i, rootVal, leafVar);
    const lets: Stmt[] = [];
    const mins: AExpr[] = [];
    const extents = region.extents;
    region.los.forEach((lo, d) => {
      const name = this.fresh(`m_${a.name}_${d}`);
      lets.push({ k: "let", name, value: lo });
      this.letValues.set(name, lo);
      this.env.set(name, bounds(lo, this.env));
      mins.push(vr(name));
      if (extents[d] > a.roots[d].extent) {
        throw new ScheduleError(
          `Stage "${a.name}" needs ${extents[d]} values of axis "${a.roots[d].name}" at loop "${
            s.leaves[i - 1].name
          }" of "${s.name}", but its loop covers ${
            a.roots[d].extent
          }: apply compute_at after transforming "${s.name}"`,
        );
      }
    });
    const size = extents.reduce((x, y) => x * y, 1);
    const buf = this.fresh(`T_${a.name}`);
    this.regions.set(a.name, { buf, mins, extents, layout: a.layout });
    const probe = { drop: false, spatial: [] as AExpr[], vars: new Map<string, number>() };
    const nest = this.emitStage(a, mins, probe);
    // Loop versioning: a second nest without the spatial guards, run when the
    // whole region is inside the tensor (the full tiles: all but the edges).
    const full = a.scope !== "shared" && !this.gpu ? fullTileCondition(probe) : undefined;
    if (full) {
      const fast = this.emitStage(a, mins, { ...probe, drop: true, spatial: [] });
      const not: AExpr = { k: "select", cond: full, t: int(0), f: int(1) };
      const heap = size * 4 > STACK_LIMIT_BYTES;
      const alloc = (body: Stmt[]): Stmt => ({ k: "alloc", buf, size, heap, body });
      if (a.scope === "local") {
        // The register tile: each version gets its own accumulators (constant indices).
        // The consumer's guards hold in a full tile unless the region was clipped to the tensor.
        const exact = (region.widths ?? []).every((w, d) => w === extents[d]);
        return (rest, restFull) => [
          ...lets,
          { k: "if", cond: full, body: [alloc([...fast, ...(exact ? restFull : rest)])] },
          { k: "if", cond: not, body: [alloc([...nest, ...rest])] },
        ];
      }
      return (rest) => [
        ...lets,
        alloc([
          { k: "if", cond: full, body: fast },
          { k: "if", cond: not, body: nest },
          ...rest,
        ]),
      ];
    }
    if (a.scope === "shared") {
      // A block-wide copy: wait until every thread is done with the previous
      // contents, fetch cooperatively, wait until the copy is complete.
      return (rest) => [...lets, {
        k: "alloc",
        buf,
        size,
        scope: "shared",
        body: [{ k: "sync" }, ...nest, { k: "sync" }, ...rest],
      }];
    }
    const heap = size * 4 > STACK_LIMIT_BYTES;
    return (rest) => [...lets, { k: "alloc", buf, size, heap, body: [...nest, ...rest] }];
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
  private heldRegionOf(
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
  private expandLets(e: AExpr): AExpr {
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
  private symbolicLeaves(s: Stage): Map<Loop, AExpr> {
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
  private symbolicBases(s: Stage): AExpr[] {
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
  private layoutIndex(region: Region, rels: AExpr[]): AExpr {
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

  /** Loop kinds of a stage's leaves from annotations and auto-unroll. */
  private loopKinds(s: Stage): Map<Loop, ForKind> {
    const kinds = new Map<Loop, ForKind>(s.annotations);
    if (s.autoUnrollMaxStep > 0) {
      let product = 1;
      for (let i = s.leaves.length - 1; i >= 0; i--) {
        const l = s.leaves[i];
        product *= l.extent;
        if (product > s.autoUnrollMaxStep) break;
        if (kinds.get(l) === "parallel" || kinds.get(l) === "bind") break;
        if (!kinds.has(l) && l.extent > 1) kinds.set(l, "unroll");
      }
    }
    return kinds;
  }

  /**
   * Conditions (tensor expressions in `e`'s variables) without which `e` is
   * zero: the conjuncts of `select(cond, t, 0)` bodies of the stages it
   * reads (a padding stage: zero outside the input), through copies and
   * products. Empty when nothing is known.
   */
  private zeroUnless(e: Expr): Expr[] {
    const n = e.node;
    if (n.k === "bin" && n.op === "mul") return [...this.zeroUnless(n.a), ...this.zeroUnless(n.b)];
    if (n.k === "select" && n.f.node.k === "const" && n.f.node.value === 0) {
      const conjuncts = (c: Expr): Expr[] =>
        c.node.k === "and" ? [...conjuncts(c.node.a), ...conjuncts(c.node.b)] : [c];
      return [...conjuncts(n.cond), ...this.zeroUnless(n.t)];
    }
    if (n.k !== "load") return [];
    const p = this.sch.stages.find((t) => t.name === n.tensor.name);
    if (!p || !(p.body instanceof Expr)) return [];
    return this.zeroUnless(this.bodyOf(p) as Expr).map((c) => atIndex(c, p, n.index));
  }

  /** Converts a tensor expression to the AST, given the values of the root axes. */
  private convert(e: Expr, rootVal: Map<IterVar, AExpr>, ctx: "int" | "float"): AExpr {
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

  private checkParallel(body: Stmt[], inParallel: boolean): void {
    for (const st of body) {
      if (st.k === "for") {
        const par = st.kind === "parallel";
        if (par && inParallel) {
          const o = this.loopOf.get(st.v)!;
          throw new ScheduleError(
            `Cannot parallel loop "${o.loop.name}" of stage "${o.stage.name}": it is nested in another parallel loop`,
          );
        }
        this.checkParallel(st.body, inParallel || par);
      } else if (st.k === "if" || st.k === "alloc") this.checkParallel(st.body, inParallel);
    }
  }
}

/**
 * A condition under which every spatial guard of a nest holds (all guards
 * are monotone in the nest's loop variables, checked at their extremes), or
 * undefined when there is no guard or one is not monotone.
 */
function fullTileCondition(
  probe: { spatial: AExpr[]; vars: Map<string, number> },
): AExpr | undefined {
  if (probe.spatial.length === 0) return undefined;
  const vars = new Set(probe.vars.keys());
  const hi = new Map([...probe.vars].map(([v, e]) => [v, int(e - 1)]));
  const lo = new Map([...probe.vars].map(([v]) => [v, int(0)]));
  const conds: AExpr[] = [];
  for (const c of probe.spatial) {
    if (c.k !== "cmp" || c.b.k !== "int" || !nondecreasing(c.a, vars)) return undefined;
    if (c.op === "<") conds.push({ ...c, a: substitute(c.a, hi) });
    else if (c.op === ">=") conds.push({ ...c, a: substitute(c.a, lo) });
    else return undefined;
  }
  return andAll(conds);
}

/**
 * The guards that skip a reduction's iterations whose value is zero
 * (`conds`: comparisons `a < k` or `a >= k` of loop variables, from
 * {@link Lowering.zeroUnless}): the padded taps of a convolution, which
 * oneDNN's kernels skip too. A condition on unrolled or vectorized variables
 * (the register tile) is guarded where it holds for some element of the
 * tile, at the loop outside it (`a` taken at the tile's extreme); one whose
 * other variables are fixed is also guarded per unrolled element, where the
 * C compiler folds it to a constant and drops the padded products
 * (`folded`). A condition that always holds is left out.
 */
function paddingGuards(
  conds: AExpr[],
  env: ReadonlyMap<string, [number, number]>,
  unrolled: ReadonlySet<string>,
  vectorized: ReadonlySet<string>,
): { cond: AExpr; folded: boolean }[] {
  const out: { cond: AExpr; folded: boolean }[] = [];
  const always = (c: AExpr & { k: "cmp" }, b: number) => {
    const [lo, hi] = bounds(c.a, env);
    return c.op === "<" ? hi < b : lo >= b;
  };
  for (const c of conds) {
    if (c.k !== "cmp" || c.b.k !== "int" || (c.op !== "<" && c.op !== ">=")) continue;
    const b = c.b.v;
    if (always(c, b)) continue;
    const vars = [...varsOf(c.a)];
    const tile = new Set(vars.filter((v) => unrolled.has(v) || vectorized.has(v)));
    if (tile.size === 0) {
      out.push({ cond: c, folded: false });
      continue;
    }
    if (!nondecreasing(c.a, tile)) continue;
    const extreme = new Map(
      [...tile].map((v) => [v, int(c.op === "<" ? env.get(v)![0] : env.get(v)![1])]),
    );
    const weak = { ...c, a: substitute(c.a, extreme) } as AExpr & { k: "cmp" };
    if (!always(weak, b)) out.push({ cond: weak, folded: false });
    const fixed = vars.every((v) => {
      if (unrolled.has(v)) return true;
      const r = env.get(v);
      return !vectorized.has(v) && r !== undefined && r[0] === r[1];
    });
    if (fixed) out.push({ cond: c, folded: true });
  }
  return out;
}

/**
 * A product with a zero-padding factor, `select(c, t, 0) * w`, as
 * `select(c, t * w, 0)` (nested ones joined: `select(c1 && c2, ...)`): the
 * update of a reduction over an inlined padding stage then has its
 * condition outermost, where the C generator turns it into one test per
 * vector (a skipped tap) instead of a select per lane.
 */
function zeroSelectOutside(e: AExpr): AExpr {
  if (isZeroSelect(e)) {
    const t = zeroSelectOutside(e.t);
    return isZeroSelect(t) ? { ...t, cond: { k: "and", a: e.cond, b: t.cond } } : { ...e, t };
  }
  if (e.k !== "bin" || e.op !== "*") return e;
  const a = zeroSelectOutside(e.a), b = zeroSelectOutside(e.b);
  if (!isZeroSelect(a) && !isZeroSelect(b)) return { ...e, a, b };
  const conds = [a, b].flatMap((x) => isZeroSelect(x) ? [x.cond] : []);
  const cond = conds.length === 2 ? { k: "and" as const, a: conds[0], b: conds[1] } : conds[0];
  const inner = (x: AExpr) => isZeroSelect(x) ? x.t : x;
  return { k: "select", cond, t: { ...e, a: inner(a), b: inner(b) }, f: { k: "float", v: 0 } };
}

/** `e`, an expression in stage `p`'s axes, at the element `index` of `p` (a consumer's load). */
function atIndex(e: Expr, p: Stage, index: Expr[]): Expr {
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

/** Row-major strides of a shape. */
export function stridesOf(shape: number[]): number[] {
  const out = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) out[i] = out[i + 1] * shape[i + 1];
  return out;
}

/** The value of any loop of `s` in terms of its leaf loops' variables. */
function loopValue(s: Stage, l: Loop, leafVar: Map<Loop, AExpr>): AExpr {
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
export function symInterval(e: AExpr, ranging: ReadonlyMap<string, number>): SymInterval {
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
