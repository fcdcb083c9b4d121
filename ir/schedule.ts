/**
 * A schedule of a workload: the stages' loop nests transformed eagerly by
 * primitives (split, fuse, reorder, parallel, vectorize, unroll,
 * cache_write, cache_read into GPU shared memory or a packed CPU buffer,
 * transform_layout of such a buffer into panels, deinterleave of a buffer
 * into phases, prefetch, compute_at, compute_inline, bind to GPU thread axes)
 * and sampling instructions
 * (sample_perfect_tile, sample_categorical, sample_compute_location).
 *
 * Every call is recorded as an instruction of {@link Schedule.trace}; sampled
 * values are referenced by later instructions as `{ $ref: index }`, so a
 * trace replays exactly and a decision can be changed or resampled.
 *
 * @example
 * ```ts
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(1) });
 * const t = sch.samplePerfectTile("C", "j", 2, 16);
 * const [, j1] = sch.split("C", "j", t);
 * sch.vectorize("C", j1);
 * ```
 * @module
 */
import { THREAD_AXES, type ThreadAxis } from "./ast.ts";
import { ScheduleError } from "./errors.ts";
import { checkObject, checkWorkload, described } from "./check.ts";
import { limitMessage, LIMITS, splitLimitReason } from "./limits.ts";
import { attachedExtents } from "./bounds.ts";
import type { Prng } from "./prng.ts";
import { checkPerfectTile, sampleCategorical, samplePerfectTile } from "./sampling.ts";
import { type Annotation, holderIn, type LayoutDim, Loop, readsOf, Stage } from "./stage.ts";
import { bin, compute, Expr, IterVar, placeholder, rewrite } from "./te.ts";
import { computeStages, type Workload } from "./workloads.ts";

/** A reference to the value an earlier instruction produced. */
export interface RV {
  /** Index of the instruction whose value this refers to. */
  $ref: number;
}

/** An instruction argument. */
export type Arg = string | number | (number | null | RV)[] | string[] | number[] | RV;

/** One recorded instruction: an op, its arguments, and a sampler's decision. */
export interface Inst {
  /** Primitive name, e.g. `"split"` or `"sample_perfect_tile"`. */
  op: string;
  /** Arguments by name; sampled values appear as {@link RV} references. */
  args: Record<string, Arg>;
  /** The sampler's choice, for a sampling instruction (absent: sampled afresh on replay). */
  decision?: unknown;
}

/** Options of a {@link Schedule}. */
export interface ScheduleOptions {
  /** Source of fresh decisions for sampling instructions without one. */
  prng: Prng;
}

/** Largest extent `vectorize` accepts (a vector of 64 floats is 4 zmm registers). */
export const MAX_VECTOR_EXTENT = 64;
/** Largest extent `unroll` accepts. */
export const MAX_UNROLL_EXTENT = 256;

/** A schedule under construction; see the module documentation. */
export class Schedule {
  /** Stages, producers before consumers (cache stages sit before their origin). */
  readonly stages: Stage[];
  /** Instructions applied so far. */
  readonly trace: Inst[] = [];
  private readonly values: unknown[] = [];
  private readonly prng: Prng;

  /** Creates the default schedule of a workload (one naive loop nest per stage). */
  constructor(readonly workload: Workload, options: ScheduleOptions) {
    checkWorkload(workload, "workload");
    const o = checkObject(options, "Schedule options");
    const p = o.prng as Partial<Prng> | undefined;
    if (typeof p !== "object" || p === null || typeof p.int !== "function") {
      throw new TypeError(`prng must be a generator (createPrng(seed)), got ${described(o.prng)}`);
    }
    this.prng = options.prng;
    const names = new Set<string>();
    for (const t of [...workload.inputs, ...computeStages(workload)]) {
      if (names.has(t.name)) throw new ScheduleError(`Tensor name "${t.name}" is used twice`);
      names.add(t.name);
    }
    this.stages = computeStages(workload).map((t) => {
      if (t.op.kind !== "compute") throw new Error("unreachable");
      return new Stage(t.name, t.shape, t.op.axes, t.op.body, workload.outputs.includes(t));
    });
  }

  /** The stage named `name`. */
  stage(name: string): Stage {
    const s = this.stages.find((s) => s.name === name);
    if (!s) {
      throw new ScheduleError(
        `No stage "${name}"; stages: ${this.stages.map((s) => s.name).join(", ")}`,
      );
    }
    return s;
  }

  /** Names of a stage's leaf loops, outermost first. */
  loops(stage: string): string[] {
    return this.stage(stage).leaves.map((l) => l.name);
  }

  /** Value of an earlier instruction. */
  value(rv: RV): unknown {
    return this.values[rv.$ref];
  }

  // ---------------------------------------------------------------- primitives

  /**
   * Splits a leaf loop into `factors.length` loops (outermost first). One
   * factor may be `null` (inferred). A product above the extent is allowed:
   * the extra iterations are guarded (an imperfect tile).
   */
  split(stage: string, loop: string, factors: (number | null | RV)[] | RV): string[] {
    return this.apply({ op: "split", args: { stage, loop, factors } }) as string[];
  }
  /** Fuses consecutive leaf loops of one kind into one. */
  fuse(stage: string, loops: string[]): string {
    return this.apply({ op: "fuse", args: { stage, loops } }) as string;
  }
  /** Reorders the given leaf loops among the positions they occupy. */
  reorder(stage: string, loops: string[]): void {
    this.apply({ op: "reorder", args: { stage, loops } });
  }
  /** Runs a spatial leaf loop across threads (OpenMP). */
  parallel(stage: string, loop: string): void {
    this.apply({ op: "parallel", args: { stage, loop } });
  }
  /** Vectorizes the innermost spatial leaf loop (SIMD). */
  vectorize(stage: string, loop: string): void {
    this.apply({ op: "vectorize", args: { stage, loop } });
  }
  /** Fully unrolls a leaf loop of constant extent. */
  unroll(stage: string, loop: string): void {
    this.apply({ op: "unroll", args: { stage, loop } });
  }
  /**
   * Software prefetch (TVM's `s[stage].prefetch(tensor, loop, offset)`): at
   * the start of each iteration of leaf loop `loop`, prefetch the cache lines
   * of `tensor` that iteration `loop + offset` will read (`__builtin_prefetch`
   * in C; GPU code ignores it). `tensor` must be read by the stage.
   */
  prefetch(stage: string, tensor: string, loop: string, offset: number): void {
    this.apply({ op: "prefetch", args: { stage, tensor, loop, offset } });
  }
  /**
   * Binds a spatial leaf loop to a GPU thread axis (`"blockIdx.x"` …
   * `"threadIdx.z"`): on a GPU each block or thread runs one iteration; C code
   * runs the loop serially. A stage binds each axis at most once.
   */
  bind(stage: string, loop: string, threadAxis: ThreadAxis): void {
    this.apply({ op: "bind", args: { stage, loop, thread_axis: threadAxis } });
  }
  /**
   * Fuses the first `count` of `loops` (consecutive leaves, outer first) and
   * runs the fused loop in parallel: the parallel extent as one decision
   * (MetaSchedule's MutateParallel changes it). Returns the parallel loop.
   */
  parallelOuter(stage: string, loops: string[], count: number | RV): string {
    return this.apply({ op: "parallel_outer", args: { stage, loops, count } }) as string;
  }
  /**
   * Annotates a stage with an integer pragma (MetaSchedule's `annotate`), read
   * by code generators: e.g. the `gemm.*` keys of `ir/gemm_gpu.ts`, which
   * generate the stage as a GEMM-class GPU kernel.
   */
  annotate(stage: string, key: string, value: number | RV): void {
    this.apply({ op: "annotate", args: { stage, key, value } });
  }
  /** Unrolls the innermost loops while their extents' product stays within `maxStep`. */
  autoUnroll(stage: string, maxStep: number | RV): void {
    this.apply({ op: "auto_unroll", args: { stage, max_step: maxStep } });
  }
  /**
   * Computes a stage into a local buffer first (`cache_write(..., "local")`);
   * the stage then copies from it. Returns the new stage's name.
   */
  cacheWrite(stage: string): string {
    return this.apply({ op: "cache_write", args: { stage, scope: "local" } }) as string;
  }
  /**
   * Reads `tensor` (an input or a stage) through a copy that the `readers`
   * load from instead; returns the new stage's name.
   *
   * - `"shared"` (GPU): a stage `<tensor>_shared` in shared memory. Compute it
   *   at a loop of its reader (outside that reader's thread loops, or inside
   *   them: thread indices are relaxed, so the copy covers the whole thread
   *   block), then bind its loops to threadIdx axes so the block loads it
   *   cooperatively; lowering adds the barriers.
   * - `"global"` (CPU packing): a stage `<tensor>_global`, a private buffer
   *   (64-byte aligned, allocated once per kernel call and per thread, never
   *   per tile) holding the region its readers use where it is computed.
   *   Positions outside the tensor hold zeros. With {@link transformLayout} it
   *   becomes a packed panel (e.g. B's `[N/NR][K][NR]`). It may be computed at
   *   a loop of any stage its reader is computed in (e.g. the output tile
   *   loop that holds the register tile), so one packed block serves many
   *   register tiles. Not supported by the GPU code generators.
   */
  cacheRead(tensor: string, scope: "shared" | "global", readers: string[]): string {
    return this.apply({ op: "cache_read", args: { stage: tensor, scope, readers } }) as string;
  }
  /**
   * Stores dimension `axis` of a `cache_read(..., "global")` copy in panels of
   * `factor` (TVM's `transform_layout` with the index map
   * `(…, x, …) -> (x // factor, …, x % factor)`): the panel index moves to the
   * front, the position within the panel to the innermost place. A(M, K)
   * tiled on axis 0 by MR becomes `[M/MR][K][MR]`; B(K, N) tiled on axis 1 by
   * NR becomes `[N/NR][K][NR]` (k-major panels). The extent is padded to a
   * multiple of `factor` with zeros. Apply before transforming its loops.
   * Also for a `cache_write` tile: a convolution's `O_local` tiled on its
   * channel axis by FR holds each output position's FR channels side by side
   * (the tile of `conv2d_NCHWc`, vectorized over channels). A packed copy of
   * a workload's layout-free input (its weights) computed at the root is a
   * layout rewrite, run once ahead of the timed calls (`Kernel.prologue`).
   * Also for a stage computed into its own buffer (not an output, not
   * inlined): a convolution's padded input `P` tiled on its channel axis by
   * CB is `[C/CB][N][H][W][CB]` (the `NCHW[x]c` data layout).
   */
  transformLayout(stage: string, axis: number, factor: number | RV): void {
    this.apply({ op: "transform_layout", args: { stage, axis, factor } });
  }
  /**
   * Stores dimension `axis` of a stage's buffer as `factor` phases, each
   * holding every `factor`-th element (the index map
   * `(…, x, …) -> (…, x % factor, x / factor, …)`; a polyphase or
   * space-to-depth layout). A reader with stride `factor` along it, such as a
   * stride-2 convolution reading its padded input `P` at `2 * x + rx`, then
   * finds consecutive outputs' inputs next to each other (phase `rx % 2`,
   * position `x + rx / 2`): plain vector loads instead of strided ones. For a
   * stage computed into its own buffer (not an output, not inlined) or a
   * `cache_read(..., "global")` copy; the extent is padded to a multiple of
   * `factor`. Apply before transforming its loops.
   */
  deinterleave(stage: string, axis: number, factor: number | RV): void {
    this.apply({ op: "deinterleave", args: { stage, axis, factor } });
  }
  /**
   * Computes a producer inside a leaf loop of its consumer, or of a stage its
   * consumer is computed in (a `cache_read(..., "global")` copy only). `loop`
   * may be a location sampled by {@link sampleComputeLocation} (`"root"`,
   * `"inline"`).
   */
  computeAt(stage: string, consumer: string, loop: string | RV): void {
    this.apply({ op: "compute_at", args: { stage, consumer, loop } });
  }
  /**
   * Merges consecutive spatial axes of a stage nothing reads (an output) into
   * one axis, named by joining theirs (`["y", "x"]` gives `yx`), of their
   * extents' product: the body reads `y = yx / W`, `x = yx % W`, and the
   * buffer, row-major, is the same memory. Loops then tile the merged axis as
   * one dimension (Halide's `fuse`, oneDNN's spatial dimension of a 1x1
   * convolution): a 14 x 14 output in tiles of 6 positions has one edge tile
   * instead of one per row, and a tile may span two rows. Apply first, before
   * `cache_write` and any loop primitive. Returns the new axis's name.
   */
  fuseAxes(stage: string, axes: string[]): string {
    return this.apply({ op: "fuse_axes", args: { stage, axes } }) as string;
  }
  /** Substitutes an element-wise stage into its consumers. */
  computeInline(stage: string): void {
    this.apply({ op: "compute_inline", args: { stage } });
  }
  /** Emits a stage's nest at the top level again. */
  computeRoot(stage: string): void {
    this.apply({ op: "compute_root", args: { stage } });
  }

  // ------------------------------------------------------------------ sampling

  /** Samples `n` tile factors of a loop whose product is its extent. */
  samplePerfectTile(stage: string, loop: string, n: number, maxInnermost: number): RV {
    this.apply({
      op: "sample_perfect_tile",
      args: { stage, loop, n, max_innermost: maxInnermost },
    });
    return { $ref: this.trace.length - 1 };
  }
  /**
   * Samples one of `candidates` with probabilities `probs`; a given
   * `decision` (an index of `candidates`) is taken instead of a draw.
   */
  sampleCategorical(candidates: number[], probs: number[], decision?: number): RV {
    this.apply({
      op: "sample_categorical",
      args: { candidates, probs },
      ...(decision !== undefined ? { decision } : {}),
    });
    return { $ref: this.trace.length - 1 };
  }
  /** Samples where a producer is computed: root, inline (if legal) or a consumer loop. */
  sampleComputeLocation(stage: string): RV {
    this.apply({ op: "sample_compute_location", args: { stage } });
    return { $ref: this.trace.length - 1 };
  }

  // ----------------------------------------------------------------- dispatch

  /**
   * Applies one instruction (resolving `$ref` arguments, honouring or
   * recording its decision) and appends it to the trace. Nothing is recorded
   * when it throws.
   */
  apply(inst: Inst): unknown {
    const args = inst.args;
    const handler = HANDLERS[inst.op];
    if (!handler) throw new ScheduleError(`Unknown instruction "${inst.op}"`);
    const resolved: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(args)) resolved[k] = this.resolve(v, inst.op);
    const out = handler(this, resolved, inst.decision, this.prng);
    const recorded: Inst = { op: inst.op, args: structuredClone(args) };
    if (out.decision !== undefined) recorded.decision = out.decision;
    this.trace.push(recorded);
    this.values.push(out.value);
    return out.value;
  }

  /** The value of an argument: a literal, or the value an {@link RV} refers to. */
  private resolve(v: Arg, op: string): unknown {
    // Split factors may each be a sampled value (e.g. a register tile size).
    if (Array.isArray(v)) {
      return v.some((x) => typeof x === "object" && x !== null)
        ? (v as Arg[]).map((x) => this.resolve(x, op))
        : v;
    }
    if (typeof v === "object" && v !== null) {
      const ref = (v as RV).$ref;
      if (!Number.isInteger(ref) || ref < 0 || ref >= this.values.length) {
        throw new ScheduleError(`Instruction "${op}" refers to missing value $${ref}`);
      }
      return this.values[ref];
    }
    return v;
  }

  /** Leaf loop `name` of `stage`, or a ScheduleError naming both. */
  leaf(stage: Stage, name: unknown): Loop {
    const l = stage.leaves.find((l) => l.name === name);
    if (!l) {
      throw new ScheduleError(
        `No leaf loop "${String(name)}" in stage "${stage.name}"; leaves: ${
          stage.leaves.map((l) => l.name).join(", ")
        }`,
      );
    }
    return l;
  }

  /** Stages whose (inline-expanded) bodies read `stage`'s tensor. */
  consumers(stage: Stage): Stage[] {
    const direct = this.stages.filter((s) => readsOf(s).includes(stage.name));
    return direct.flatMap((s) => s.attach.k === "inline" ? this.consumers(s) : [s]);
  }
}

type Handler = (
  sch: Schedule,
  a: Record<string, unknown>,
  decision: unknown,
  prng: Prng,
) => { value: unknown; decision?: unknown };

function int(v: unknown, what: string): number {
  if (!Number.isInteger(v)) throw new ScheduleError(`${what} must be an integer, got ${v}`);
  return v as number;
}

function annotate(kind: Annotation): Handler {
  return (sch, a) => {
    const s = sch.stage(String(a.stage));
    const l = sch.leaf(s, a.loop);
    const why = (reason: string) =>
      new ScheduleError(`Cannot ${kind} loop "${l.name}" of stage "${s.name}": ${reason}`);
    if (s.annotations.has(l)) throw why(`it is already marked ${s.annotations.get(l)}`);
    if (kind !== "unroll" && l.kind === "reduce") {
      throw why("it is a reduction loop (iterations would race on the output)");
    }
    if (kind === "vectorize" && l.extent > MAX_VECTOR_EXTENT) {
      throw why(`extent ${l.extent} exceeds ${MAX_VECTOR_EXTENT}`);
    }
    if (kind === "unroll" && l.extent > MAX_UNROLL_EXTENT) {
      throw why(`extent ${l.extent} exceeds ${MAX_UNROLL_EXTENT}`);
    }
    s.annotations.set(l, kind);
    return { value: undefined };
  };
}

/**
 * Adds `dim` to the buffer layout of stage `s` (transform_layout,
 * deinterleave) after the checks both share; a packed copy is resized to
 * compute its padding (zeros) too, another stage computes only its shape.
 */
function addLayoutDim(
  sch: Schedule,
  s: Stage,
  dim: LayoutDim,
  [lo, hi]: [number, number],
  op: string,
  why: (reason: string) => ScheduleError,
): void {
  if (dim.axis < 0 || dim.axis >= s.shape.length) {
    throw why(`axis ${dim.axis} not in [0, ${s.shape.length - 1}]`);
  }
  if (dim.factor < lo || dim.factor > hi) throw why(`factor ${dim.factor} not in [${lo}, ${hi}]`);
  if (s.layout.some((t) => t.axis === dim.axis)) throw why(`axis ${dim.axis} is tiled already`);
  if (s.touched) throw why(`apply ${op} before transforming its loops`);
  s.layout.push(dim);
  if (s.packed) {
    s.resize(
      s.attach.k === "at" ? attachedExtents(sch, s, s.attach.stage, s.attach.loop) : s.fullExtents,
    );
  }
}

const HANDLERS: Record<string, Handler> = {
  prefetch(sch, a) {
    const s = sch.stage(String(a.stage));
    const l = sch.leaf(s, a.loop);
    const tensor = String(a.tensor);
    const offset = int(a.offset, "prefetch offset");
    const why = (reason: string) =>
      new ScheduleError(
        `Cannot prefetch "${tensor}" at loop "${l.name}" of "${s.name}": ${reason}`,
      );
    if (!readsOf(s).includes(tensor)) throw why(`the stage does not read it`);
    if (offset < 1 || offset > 64) throw why(`offset ${offset} is not in 1..64`);
    s.prefetches.set(l, [...(s.prefetches.get(l) ?? []), { tensor, offset }]);
    return { value: undefined };
  },
  split(sch, a) {
    const s = sch.stage(String(a.stage));
    const l = sch.leaf(s, a.loop);
    const why = (reason: string) =>
      new ScheduleError(`Cannot split loop "${l.name}" of stage "${s.name}": ${reason}`);
    const fs = a.factors;
    if (!Array.isArray(fs) || fs.length < 2) throw why("give at least two factors");
    const nulls = fs.filter((f) => f === null).length;
    if (nulls > 1) throw why("at most one factor may be null");
    if (!fs.every((f) => f === null || (Number.isInteger(f) && f >= 1))) {
      throw why(`factors ${JSON.stringify(fs)} must be positive integers`);
    }
    const over = splitLimitReason(fs, l.extent, s.leaves.length);
    if (over) throw why(over);
    if (s.annotations.has(l)) throw why(`it is marked ${s.annotations.get(l)}`);
    const held = attachedAt(sch, s, l);
    if (held) throw why(`stage "${held.name}" is computed at it`);
    const known = fs.reduce((p: number, f) => p * (f ?? 1), 1);
    if (nulls === 0 && known < l.extent) {
      throw why(`factors ${JSON.stringify(fs)} cover ${known} < extent ${l.extent}`);
    }
    // Binary splits from the inside out: l -> (r, f_{n-1}), r -> (r', f_{n-2}), ...
    const n = fs.length;
    const resolved = [...fs] as (number | null)[];
    if (nulls === 1) {
      const at = resolved.indexOf(null);
      resolved[at] = Math.ceil(l.extent / known);
    }
    const names = fs.map((_, i) => `${l.name}.${i}`);
    for (const name of names) {
      if (s.findLoop(name)) throw why(`a loop named "${name}" exists already`);
    }
    const leaves: Loop[] = new Array(n);
    let rest = l;
    for (let i = n - 1; i >= 1; i--) {
      const f = resolved[i] as number;
      const outerExtent = Math.ceil(rest.extent / f);
      const outer = i === 1
        ? new Loop(names[0], outerExtent, l.kind)
        : new Loop(`${l.name}.r${i}`, outerExtent, l.kind);
      const innerLoop = new Loop(names[i], f, l.kind);
      s.relations.push({ k: "split", parent: rest, outer, inner: innerLoop, factor: f });
      leaves[i] = innerLoop;
      rest = outer;
    }
    leaves[0] = rest;
    const at = s.leaves.indexOf(l);
    s.leaves.splice(at, 1, ...leaves);
    return { value: names };
  },

  fuse(sch, a) {
    const s = sch.stage(String(a.stage));
    if (!Array.isArray(a.loops) || a.loops.length < 2) {
      throw new ScheduleError(`fuse on stage "${s.name}" needs at least two loops`);
    }
    const ls = a.loops.map((n) => sch.leaf(s, n));
    const at = s.leaves.indexOf(ls[0]);
    ls.forEach((l, i) => {
      const why = (reason: string) =>
        new ScheduleError(`Cannot fuse loop "${l.name}" of stage "${s.name}": ${reason}`);
      if (s.leaves[at + i] !== l) throw why("the loops to fuse must be consecutive, outer first");
      if (l.kind !== ls[0].kind) throw why("cannot fuse a spatial loop with a reduction loop");
      if (s.annotations.has(l)) throw why(`it is marked ${s.annotations.get(l)}`);
      const held = attachedAt(sch, s, l);
      if (held) throw why(`stage "${held.name}" is computed at it`);
    });
    let fused = ls[0];
    for (const l of ls.slice(1)) {
      const name = `${fused.name}.${l.name}.fused`;
      if (name.length > LIMITS.loopName.value) {
        throw new ScheduleError(
          `Cannot fuse in stage "${s.name}": ${
            limitMessage(
              `the fused loop's name would have ${name.length} characters`,
              LIMITS.loopName,
            )
          }`,
        );
      }
      const f = new Loop(name, fused.extent * l.extent, l.kind);
      if (f.extent > LIMITS.loopIterations.value) {
        throw new ScheduleError(
          `Cannot fuse in stage "${s.name}": ${
            limitMessage(`"${f.name}" would iterate ${f.extent} times`, LIMITS.loopIterations)
          }`,
        );
      }
      if (s.findLoop(f.name)) {
        throw new ScheduleError(`Cannot fuse in stage "${s.name}": "${f.name}" exists`);
      }
      s.relations.push({ k: "fuse", outer: fused, inner: l, fused: f });
      fused = f;
    }
    s.leaves.splice(at, ls.length, fused);
    return { value: fused.name };
  },

  reorder(sch, a) {
    const s = sch.stage(String(a.stage));
    if (!Array.isArray(a.loops)) throw new ScheduleError("reorder needs a list of loops");
    const ls = a.loops.map((n) => sch.leaf(s, n));
    if (new Set(ls).size !== ls.length) {
      throw new ScheduleError(`Cannot reorder stage "${s.name}": a loop is named twice`);
    }
    const positions = ls.map((l) => s.leaves.indexOf(l)).sort((x, y) => x - y);
    positions.forEach((p, i) => (s.leaves[p] = ls[i]));
    return { value: undefined };
  },

  parallel: annotate("parallel"),
  vectorize: annotate("vectorize"),
  unroll: annotate("unroll"),

  bind(sch, a) {
    const s = sch.stage(String(a.stage));
    const l = sch.leaf(s, a.loop);
    const axis = a.thread_axis as ThreadAxis;
    const why = (reason: string) =>
      new ScheduleError(`Cannot bind loop "${l.name}" of stage "${s.name}" to ${axis}: ${reason}`);
    if (!(THREAD_AXES as readonly string[]).includes(axis)) {
      throw new ScheduleError(
        `Cannot bind loop "${l.name}" of stage "${s.name}": unknown thread axis ${
          JSON.stringify(axis)
        } (use ${THREAD_AXES.join(", ")})`,
      );
    }
    if (s.annotations.has(l)) throw why(`it is already marked ${s.annotations.get(l)}`);
    if (l.kind === "reduce") {
      throw why("it is a reduction loop (threads would race on the output)");
    }
    for (const [other, ax] of s.bindings) {
      if (ax === axis) throw why(`loop "${other.name}" is bound to it already`);
    }
    s.annotations.set(l, "bind");
    s.bindings.set(l, axis);
    return { value: undefined };
  },

  parallel_outer(sch, a) {
    const s = sch.stage(String(a.stage));
    const n = int(a.count, "parallel_outer count");
    if (!Array.isArray(a.loops) || n < 1 || n > a.loops.length) {
      throw new ScheduleError(
        `parallel_outer on stage "${s.name}": count ${n} not in [1, ${
          (a.loops as unknown[])?.length
        }]`,
      );
    }
    const loops = a.loops.slice(0, n) as string[];
    const fused = n > 1
      ? HANDLERS.fuse(sch, { stage: s.name, loops }, undefined, NO).value as string
      : loops[0];
    HANDLERS.parallel(sch, { stage: s.name, loop: fused }, undefined, NO);
    return { value: fused };
  },

  annotate(sch, a) {
    const s = sch.stage(String(a.stage));
    s.pragmas.set(String(a.key), int(a.value, `annotate ${a.key}`));
    return { value: undefined };
  },

  auto_unroll(sch, a) {
    const s = sch.stage(String(a.stage));
    const m = int(a.max_step, "auto_unroll max_step");
    if (m < 0 || m > 4096) throw new ScheduleError(`auto_unroll max_step ${m} not in [0, 4096]`);
    s.autoUnrollMaxStep = m;
    return { value: undefined };
  },

  fuse_axes(sch, a) {
    const s = sch.stage(String(a.stage));
    const why = (reason: string) =>
      new ScheduleError(`Cannot fuse_axes of stage "${s.name}": ${reason}`);
    if (!Array.isArray(a.axes) || a.axes.length < 2) throw why("it needs at least two axes");
    const names = a.axes.map(String);
    if (s.touched || s.attach.k !== "root" || s.layout.length > 0) {
      throw why("apply fuse_axes before other primitives");
    }
    if (s.scope !== "global") throw why(`it lives in ${s.scope} memory`);
    const readers = sch.consumers(s);
    if (readers.length > 0) throw why(`stage "${readers[0].name}" reads it`);
    const at = names.map((n) => s.axes.findIndex((x) => x.name === n));
    at.forEach((d, i) => {
      if (d < 0) throw why(`it has no axis "${names[i]}"`);
      if (d !== at[0] + i) throw why("the axes must be consecutive, outer first");
    });
    const merged = at.map((d) => s.axes[d]);
    const name = merged.map((x) => x.name).join("");
    if (s.rootAxes.some((x) => x.name === name)) throw why(`it has an axis "${name}"`);
    const extent = merged.reduce((p, x) => p * x.extent, 1);
    const axis = new IterVar(name, extent, "spatial");
    // Axis d of the merged ones is (yx / inner extents) % its extent; the outermost needs no %.
    const value = new Map<IterVar, Expr>();
    let inner = 1;
    for (let i = merged.length - 1; i >= 0; i--) {
      const q = inner === 1 ? axis.expr : bin("div", axis, inner);
      value.set(merged[i], i === 0 ? q : bin("mod", q, merged[i].extent));
      inner *= merged[i].extent;
    }
    const put = (e: Expr) =>
      rewrite(e, (x) => x.node.k === "var" ? value.get(x.node.v) : undefined);
    const body = s.body instanceof Expr
      ? put(s.body)
      : { kind: s.body.kind, body: put(s.body.body), axes: s.body.axes };
    const shape = s.shape.toSpliced(at[0], at.length, extent);
    const axes = s.axes.toSpliced(at[0], at.length, axis);
    sch.stages.splice(
      sch.stages.indexOf(s),
      1,
      new Stage(s.name, shape, axes, body, s.isOutput, s.scope),
    );
    return { value: name };
  },

  cache_write(sch, a) {
    const s = sch.stage(String(a.stage));
    const why = (reason: string) =>
      new ScheduleError(`Cannot cache_write stage "${s.name}": ${reason}`);
    if (a.scope !== "local") throw why(`unknown scope ${JSON.stringify(a.scope)}`);
    if (s.touched || s.attach.k !== "root") throw why("apply cache_write before other primitives");
    if (s.scope === "local") throw why("it is already a local cache");
    const name = `${s.name}_local`;
    if (sch.stages.some((x) => x.name === name)) throw why(`stage "${name}" exists`);
    const cache = new Stage(name, s.shape, s.axes, s.body, false, "local");
    const source = placeholder(s.shape, name);
    const t = compute(s.shape, (...ax) => source.at(...ax), s.name, s.axes.map((x) => x.name));
    if (t.op.kind !== "compute") throw new Error("unreachable");
    const copy = new Stage(s.name, s.shape, t.op.axes, t.op.body, s.isOutput);
    for (const other of sch.stages) {
      if (other.attach.k === "at" && other.attach.stage === s) {
        throw why(`stage "${other.name}" is attached to it`);
      }
    }
    sch.stages.splice(sch.stages.indexOf(s), 1, cache, copy);
    return { value: name };
  },

  cache_read(sch, a) {
    const name = String(a.stage);
    const scope = a.scope === "global" ? "global" : "shared";
    const why = (reason: string) =>
      new ScheduleError(
        `Cannot cache_read "${name}" into ${
          scope === "global" ? "a packed" : "shared"
        } memory: ${reason}`,
      );
    if (a.scope !== "shared" && a.scope !== "global") {
      throw why(`unknown scope ${JSON.stringify(a.scope)}`);
    }
    const input = sch.workload.inputs.find((t) => t.name === name);
    const stage = sch.stages.find((x) => x.name === name);
    const shape = input?.shape ?? stage?.shape;
    if (!shape) throw why("no such input or stage");
    if (stage && stage.attach.k === "inline") throw why("it is inlined");
    const cacheName = `${name}_${scope}`;
    if (
      sch.stages.some((x) => x.name === cacheName) ||
      sch.workload.inputs.some((t) => t.name === cacheName)
    ) {
      throw why(`stage "${cacheName}" exists`);
    }
    if (!Array.isArray(a.readers) || a.readers.length === 0) throw why("name its readers");
    const readers = a.readers.map((r) => sch.stage(String(r)));
    for (const r of readers) {
      if (!readsOf(r).includes(name)) throw why(`stage "${r.name}" does not read it`);
    }
    const source = placeholder(shape, name);
    const axes = shape.map((_, i) => `ax${i}`);
    const t = compute(shape, (...ax) => source.at(...ax), cacheName, axes);
    if (t.op.kind !== "compute") throw new Error("unreachable");
    const copy = new Stage(cacheName, shape, t.op.axes, t.op.body, false, scope);
    copy.packed = scope === "global";
    for (const r of readers) {
      const redirect = (e: Expr) =>
        rewrite(
          e,
          (x) =>
            x.node.k === "load" && x.node.tensor.name === name ? t.at(...x.node.index) : undefined,
        );
      r.body = r.body instanceof Expr
        ? redirect(r.body)
        : { ...r.body, body: redirect(r.body.body) };
    }
    const first = Math.min(...readers.map((r) => sch.stages.indexOf(r)));
    sch.stages.splice(first, 0, copy);
    return { value: cacheName };
  },

  transform_layout(sch, a) {
    const s = sch.stage(String(a.stage));
    const axis = int(a.axis, "transform_layout axis");
    const factor = int(a.factor, "transform_layout factor");
    const why = (reason: string) =>
      new ScheduleError(`Cannot transform_layout stage "${s.name}": ${reason}`);
    if (!s.packed && s.scope !== "local" && (s.isOutput || s.attach.k === "inline")) {
      throw why(
        'it is not a cache_read(..., "global") copy, a cache_write tile or a stage computed into its own buffer',
      );
    }
    addLayoutDim(sch, s, { axis, factor }, [1, 4096], "transform_layout", why);
    return { value: undefined };
  },

  deinterleave(sch, a) {
    const s = sch.stage(String(a.stage));
    const axis = int(a.axis, "deinterleave axis");
    const factor = int(a.factor, "deinterleave factor");
    const why = (reason: string) =>
      new ScheduleError(`Cannot deinterleave stage "${s.name}": ${reason}`);
    if (s.isOutput) throw why("it is an output");
    if (s.attach.k === "inline") throw why("it is inlined");
    if (s.scope !== "global") throw why(`it lives in ${s.scope} memory`);
    addLayoutDim(sch, s, { axis, factor, phase: true }, [2, 16], "deinterleave", why);
    return { value: undefined };
  },

  compute_at(sch, a) {
    const s = sch.stage(String(a.stage));
    if (a.loop === "root") return HANDLERS.compute_root(sch, { stage: s.name }, undefined, NO);
    if (a.loop === "inline") return HANDLERS.compute_inline(sch, { stage: s.name }, undefined, NO);
    const c = sch.stage(String(a.consumer));
    const l = sch.leaf(c, a.loop);
    const why = (reason: string) =>
      new ScheduleError(
        `Cannot compute_at stage "${s.name}" at loop "${l.name}" of "${c.name}": ${reason}`,
      );
    if (s.isOutput) throw why("it is an output");
    const consumers = sch.consumers(s);
    const direct = consumers.length === 1 && consumers[0] === c;
    // A packed copy may sit further out: at a loop of a stage its reader is computed in.
    const holder = !direct && s.packed && consumers.length === 1
      ? holderIn(consumers[0], c)
      : undefined;
    if (!direct && !holder) {
      throw why(`its consumers are ${consumers.map((x) => `"${x.name}"`).join(", ") || "none"}`);
    }
    if (holder && c.leaves.indexOf(l) > c.leaves.indexOf(holder.loop)) {
      throw why(
        `its reader "${consumers[0].name}" is computed at loop "${holder.loop.name}", outside it`,
      );
    }
    if (c.attach.k === "inline") throw why(`"${c.name}" is inlined`);
    if (attachedWithin(c, s)) throw why(`"${c.name}" is computed inside "${s.name}"`);
    if (s.touched) throw why(`apply compute_at before transforming the loops of "${s.name}"`);
    const inner = attachedTo(sch, s);
    if (inner) {
      throw why(
        `stage "${inner.name}" is computed at one of its loops; compute_at "${s.name}" first`,
      );
    }
    s.resize(attachedExtents(sch, s, c, l));
    s.attach = { k: "at", stage: c, loop: l };
    return { value: undefined };
  },

  compute_inline(sch, a) {
    const s = sch.stage(String(a.stage));
    const why = (reason: string) =>
      new ScheduleError(`Cannot compute_inline stage "${s.name}": ${reason}`);
    if (s.isOutput) throw why("it is an output");
    if (!(s.body instanceof Expr)) throw why("it is a reduction");
    if (s.touched) throw why("its loops were already transformed");
    if (s.layout.length > 0) throw why("its buffer's layout was transformed");
    if (sch.stages.some((x) => x.attach.k === "at" && x.attach.stage === s)) {
      throw why("another stage is attached to it");
    }
    // Undo compute_at's resize, so that a later compute_root computes the whole tensor.
    if (s.attach.k === "at") s.resize(s.fullExtents);
    s.attach = { k: "inline" };
    return { value: undefined };
  },

  compute_root(sch, a) {
    const s = sch.stage(String(a.stage));
    if (s.attach.k === "at") {
      if (s.touched) {
        throw new ScheduleError(
          `Cannot compute_root stage "${s.name}": its loops were transformed after compute_at`,
        );
      }
      const inner = attachedTo(sch, s);
      if (inner) {
        throw new ScheduleError(
          `Cannot compute_root stage "${s.name}": stage "${inner.name}" is computed at one of its loops`,
        );
      }
      s.resize(s.fullExtents);
    }
    s.attach = { k: "root" };
    return { value: undefined };
  },

  sample_perfect_tile(sch, a, decision, prng) {
    const s = sch.stage(String(a.stage));
    const l = s.findLoop(String(a.loop));
    if (!l) throw new ScheduleError(`No loop "${a.loop}" in stage "${s.name}"`);
    const n = int(a.n, "sample_perfect_tile n");
    const maxInner = int(a.max_innermost, "sample_perfect_tile max_innermost");
    if (n < 1 || n > 8) throw new ScheduleError(`sample_perfect_tile n=${n} not in [1, 8]`);
    if (decision !== undefined) {
      const bad = checkPerfectTile(decision, l.extent, n, maxInner);
      if (bad) {
        throw new ScheduleError(
          `Decision ${
            JSON.stringify(decision)
          } of sample_perfect_tile on loop "${l.name}" of "${s.name}": ${bad}`,
        );
      }
      return { value: [...(decision as number[])], decision };
    }
    const d = samplePerfectTile(l.extent, n, maxInner, prng);
    return { value: d, decision: d };
  },

  sample_categorical(_sch, a, decision, prng) {
    const cands = a.candidates, probs = a.probs;
    if (
      !Array.isArray(cands) || !Array.isArray(probs) || cands.length === 0 ||
      cands.length !== probs.length || !probs.every((p) => typeof p === "number" && p >= 0)
    ) throw new ScheduleError("sample_categorical needs candidates and matching probabilities");
    let idx: number;
    if (decision !== undefined) {
      if (
        !Number.isInteger(decision) || (decision as number) < 0 ||
        (decision as number) >= cands.length
      ) {
        throw new ScheduleError(`Decision ${decision} of sample_categorical is out of range`);
      }
      idx = decision as number;
    } else idx = sampleCategorical(probs as number[], prng);
    return { value: cands[idx], decision: idx };
  },

  sample_compute_location(sch, a, decision, prng) {
    const s = sch.stage(String(a.stage));
    const locations = computeLocations(sch, s);
    let idx: number;
    if (decision !== undefined) {
      if (
        !Number.isInteger(decision) || (decision as number) < 0 ||
        (decision as number) >= locations.length
      ) {
        throw new ScheduleError(
          `Decision ${decision} of sample_compute_location on "${s.name}" is out of range`,
        );
      }
      idx = decision as number;
    } else idx = prng.int(locations.length);
    return { value: locations[idx], decision: idx };
  },
};

const NO: Prng = {
  next: () => 0,
  int: () => 0,
  pick: <T>(x: readonly T[]) => x[0],
  fork: () => NO,
};

/** Candidate compute locations of a producer: "root", "inline" if legal, then consumer loops. */
export function computeLocations(sch: Schedule, s: Stage): string[] {
  const out = ["root"];
  if (!s.isOutput && s.body instanceof Expr && !s.touched) out.push("inline");
  const consumers = sch.consumers(s);
  if (!s.isOutput && consumers.length === 1 && consumers[0].attach.k !== "inline") {
    const c = consumers[0];
    out.push(...c.leaves.filter((l) => c.annotations.get(l) !== "vectorize").map((l) => l.name));
  }
  return out;
}

/** A stage computed at leaf `l` of `s`, if any (such a loop must stay a leaf). */
function attachedAt(sch: Schedule, s: Stage, l: Loop): Stage | undefined {
  return sch.stages.find((x) => x.attach.k === "at" && x.attach.stage === s && x.attach.loop === l);
}

/** A stage computed at some loop of `s`, if any (resizing `s` would orphan it). */
function attachedTo(sch: Schedule, s: Stage): Stage | undefined {
  return sch.stages.find((x) => x.attach.k === "at" && x.attach.stage === s);
}

function attachedWithin(c: Stage, s: Stage): boolean {
  for (let x: Stage | undefined = c; x;) {
    if (x === s) return true;
    x = x.attach.k === "at" ? x.attach.stage : undefined;
  }
  return false;
}
