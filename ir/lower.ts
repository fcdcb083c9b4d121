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
  type ForKind,
  int,
  isZeroSelect,
  type Kernel,
  type Stmt,
  varsOf,
  vr,
} from "./ast.ts";
import { nondecreasing, substitute } from "./affine.ts";
import { ScheduleError } from "./errors.ts";
import { described } from "./check.ts";
import { atIndex, BoundInference, loopValue, type ScheduledStages } from "./bounds.ts";
import { holderIn, type Loop, readsOf, type Stage } from "./stage.ts";
import { Expr, type IterVar, visitLoads } from "./te.ts";

/**
 * A padding guard that is evaluated at run time wraps at least this many
 * iterations (a register tile's multiply-adds); below that, as in a naive
 * loop nest, the branch costs more than the zeros it skips.
 */
const MIN_GUARDED_WORK = 32;

/** Attached buffers up to this many bytes live on the stack. */
const STACK_LIMIT_BYTES = 128 * 1024;

/**
 * True when stage `s` is a layout rewrite (see `Kernel.prologue`): a packed
 * copy computed at the root, on the CPU, of layout-free inputs only.
 */
function isLayoutRewrite(sch: ScheduledStages, s: Stage): boolean {
  const layoutFree = sch.workload.layoutFree ?? [];
  return s.packed && s.attach.k === "root" && !isGpuSchedule(sch) &&
    readsOf(s).every((t) => layoutFree.includes(t));
}

/** A GPU schedule (bound loops or shared memory). */
function isGpuSchedule(sch: ScheduledStages): boolean {
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
export function rewritesLayout(sch: ScheduledStages): boolean {
  return sch.stages.some((s) => isLayoutRewrite(sch, s));
}

/** Lowers a schedule to a kernel. Throws ScheduleError for an illegal combination. */
export function lower(sch: ScheduledStages): Kernel {
  const x = sch as Partial<ScheduledStages> | undefined;
  if (
    typeof x !== "object" || x === null || !Array.isArray(x.stages) ||
    typeof x.consumers !== "function" || typeof x.workload !== "object"
  ) {
    throw new TypeError(
      `sch must be a schedule (new Schedule(workload, { prng })), got ${described(sch)}`,
    );
  }
  return new Lowering(sch).run();
}

/**
 * The gcc options a schedule's `gcc.*` pragmas ask for: `gcc.NAME` 0 is
 * `no-NAME`, 1 is `NAME` (underscores become dashes), in stage order, once each.
 */
function gccOptionsOf(sch: ScheduledStages): string[] {
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

/**
 * What {@link Lowering.emitStage} reports of a nest it emits for loop
 * versioning: its spatial guards' conditions and loop extents, and whether
 * any of those guards keeps the nest inside its region rather than inside
 * the tensor (`regionGuards`).
 */
interface Version {
  drop: boolean;
  spatial: AExpr[];
  vars: Map<string, number>;
  regionGuards?: boolean;
}

class Lowering extends BoundInference {
  private readonly loopOf = new Map<string, { stage: Stage; loop: Loop }>();
  /** A GPU schedule (bound loops or shared memory): no loop versioning. */
  private readonly gpu: boolean;

  constructor(sch: ScheduledStages) {
    super(sch);
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

  /**
   * Emits the nest of `s`, whose spatial roots start at `bases`. With
   * `version`, the conditions of the guards on spatial loops are pushed to
   * `version.spatial` and the loop variables' extents to `version.vars`; with
   * `version.drop` those guards are left out (a nest for full tiles).
   */
  private emitStage(
    s: Stage,
    bases: AExpr[],
    version?: Version,
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
      if (guards.some((g) => g.spatial && !g.tensor) || zeroOutside.length > 0) {
        version.regionGuards = true;
      }
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
    const probe: Version = { drop: false, spatial: [], vars: new Map<string, number>() };
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
        if (!probe.regionGuards && this.readsPadded(a)) {
          // Every value the tile reads comes from a packed copy, which covers all the
          // indices the tile forms and holds zeros outside the tensor: an edge tile runs
          // the full tile's nest too, and only its write-back keeps the tensor guards.
          return (rest, restFull) => [
            ...lets,
            alloc([
              ...fast,
              ...(exact
                ? [{ k: "if", cond: full, body: restFull }, {
                  k: "if",
                  cond: not,
                  body: rest,
                }] as Stmt[]
                : rest),
            ]),
          ];
        }
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
   * True when every tensor that stage `s` reads (through inlined stages) is
   * a packed copy (`cache_read(..., "global")`), whose region covers every
   * index its readers form, with zeros outside the tensor.
   */
  private readsPadded(s: Stage): boolean {
    const body = this.bodyOf(s);
    let padded = true;
    visitLoads(body instanceof Expr ? body : body.body, (t) => {
      const p = this.sch.stages.find((x) => x.name === t.name);
      if (!p || !p.packed || p.attach.k === "inline") padded = false;
    });
    return padded;
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
