/**
 * The loop-nest IR of one stage (one compute op), in TVM's `te.Stage` form:
 * root loops, leaf loops in nest order, the split/fuse relations between
 * them, annotations and where the stage is attached.
 * @module
 */
import type { ThreadAxis } from "./ast.ts";
import { Expr, type IterVar, type Reduce, visitLoads } from "./te.ts";

/** A loop of a stage: a root axis, or the result of a split or fuse. */
export class Loop {
  /** Creates a loop; schedules create them through primitives. */
  constructor(
    readonly name: string,
    readonly extent: number,
    readonly kind: "spatial" | "reduce",
  ) {}
}

/** How leaf loops derive from root loops. */
export type Relation =
  | { k: "split"; parent: Loop; outer: Loop; inner: Loop; factor: number }
  | { k: "fuse"; outer: Loop; inner: Loop; fused: Loop };

/** Loop annotations; a `"bind"` loop's thread axis is in {@link Stage.bindings}. */
export type Annotation = "parallel" | "vectorize" | "unroll" | "bind";

/** Where a stage's loop nest is emitted. */
export type Attach =
  | { k: "root" }
  | { k: "inline" }
  | { k: "at"; stage: Stage; loop: Loop };

/** One compute stage of a schedule. */
export class Stage {
  /** Root loops: one per spatial axis, then one per reduction axis. */
  roots: Loop[];
  /** Leaf loops, outermost first. */
  leaves: Loop[];
  /** Split and fuse relations, in the order applied. */
  readonly relations: Relation[] = [];
  /** Annotations of leaf loops. */
  readonly annotations: Map<Loop, Annotation> = new Map();
  /** Software prefetches by leaf loop: tensor read `offset` iterations ahead. */
  readonly prefetches: Map<Loop, { tensor: string; offset: number }[]> = new Map();
  /** GPU thread axes of the leaf loops annotated `"bind"`. */
  readonly bindings: Map<Loop, ThreadAxis> = new Map();
  /** Where the nest goes. */
  attach: Attach = { k: "root" };
  /** Integer pragmas of the stage (`annotate`), e.g. `gemm.block_m`. */
  readonly pragmas: Map<string, number> = new Map();
  /** `pragma auto_unroll_max_step`: unroll inner loops up to this product (0: off). */
  autoUnrollMaxStep = 0;
  /**
   * Dimensions stored in panels (`transform_layout`), in the order applied:
   * the buffer is indexed `[d0 / f0, …, other dims …, d0 % f0, …]`, and
   * dimensions split into phases (`deinterleave`, `phase`), stored in place
   * as `[…, d % f, d / f, …]`. Panels for a CPU `cache_read` copy
   * ({@link Stage.packed}), a `cache_write` tile or a stage computed into
   * its own buffer.
   */
  readonly layout: LayoutDim[] = [];
  /**
   * A CPU `cache_read` copy (scope `"global"`): positions outside the source
   * tensor are stored as zeros and tiled dimensions are padded to a multiple
   * of their factor.
   */
  packed = false;

  /** Creates a stage for a compute op. */
  constructor(
    readonly name: string,
    readonly shape: number[],
    readonly axes: IterVar[],
    public body: Expr | Reduce,
    readonly isOutput: boolean,
    public scope: "global" | "local" | "shared" = "global",
  ) {
    const reduceAxes = body instanceof Expr ? [] : body.axes;
    this.roots = [...axes, ...reduceAxes].map((a) => new Loop(a.name, a.extent, a.kind));
    this.leaves = [...this.roots];
  }

  /**
   * Gives the spatial root loops new extents (the region bound inference
   * found for compute_at). Only for a stage whose loops are untouched.
   */
  resize(extents: number[]): void {
    if (this.touched) throw new Error(`internal: resize of transformed stage "${this.name}"`);
    this.roots = this.roots.map((l, i) =>
      i < extents.length ? new Loop(l.name, extents[i], l.kind) : l
    );
    this.leaves = [...this.roots];
  }

  /** The stage's full extents: its shape, tiled dimensions rounded up to their factor. */
  get fullExtents(): number[] {
    return padToLayout(this.shape, this.layout);
  }

  /** The reduction axes (empty for an element-wise stage). */
  get reduceAxes(): IterVar[] {
    return this.body instanceof Expr ? [] : this.body.axes;
  }

  /** The axis of each root loop, in the same order. */
  get rootAxes(): IterVar[] {
    return [...this.axes, ...this.reduceAxes];
  }

  /** True once any loop primitive changed this stage. */
  get touched(): boolean {
    return this.relations.length > 0 || this.annotations.size > 0 ||
      this.leaves.some((l, i) => l !== this.roots[i]) || this.autoUnrollMaxStep > 0;
  }

  /** Finds a loop by name (leaf or not). */
  findLoop(name: string): Loop | undefined {
    const all = new Set<Loop>([...this.roots, ...this.leaves]);
    for (const r of this.relations) {
      if (r.k === "split") [r.parent, r.outer, r.inner].forEach((l) => all.add(l));
      else [r.outer, r.inner, r.fused].forEach((l) => all.add(l));
    }
    for (const l of all) if (l.name === name) return l;
    return undefined;
  }
}

/**
 * A dimension of a stage's buffer stored in another order: in panels of
 * `factor` (`transform_layout`), or, with `phase`, as `factor` phases of
 * every `factor`-th element (`deinterleave`).
 */
export interface LayoutDim {
  /** The dimension. */
  axis: number;
  /** Panel width, or number of phases. */
  factor: number;
  /** Phases (`[d % f][d / f]` in place) instead of panels. */
  phase?: boolean;
}

/** Extents with each tiled dimension rounded up to a multiple of its factor. */
export function padToLayout(
  extents: number[],
  layout: readonly LayoutDim[],
): number[] {
  const out = [...extents];
  for (const { axis, factor } of layout) out[axis] = Math.ceil(out[axis] / factor) * factor;
  return out;
}

/**
 * Where `reader` is computed inside stage `c`, directly or through the stages
 * it is computed in: the stage attached to `c` on that chain and its loop.
 */
export function holderIn(reader: Stage, c: Stage): { stage: Stage; loop: Loop } | undefined {
  for (let x: Stage = reader; x.attach.k === "at";) {
    if (x.attach.stage === c) return { stage: x, loop: x.attach.loop };
    x = x.attach.stage;
  }
  return undefined;
}

/** Names of the tensors a stage's body reads. */
export function readsOf(s: Stage): string[] {
  const out: string[] = [];
  visitLoads(s.body instanceof Expr ? s.body : s.body.body, (t) => {
    if (!out.includes(t.name)) out.push(t.name);
  });
  return out;
}
