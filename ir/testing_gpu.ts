/**
 * A generator of random legal GPU schedules, for property tests that run the
 * OpenCL twin of every schedule against the reference and compile its CUDA
 * with nvcc: random (often imperfect) splits, fuses and reorders, loops
 * bound to `blockIdx` / `threadIdx` anywhere in the nest (inside reduction
 * loops too), an optional register accumulator (cache_write + compute_at at
 * a random loop), padding inlined, computed at a loop or bound as its own
 * kernel, explicit and automatic unrolling, and sometimes an input read
 * through shared memory (cache_read computed at a random loop of its reader,
 * copied cooperatively by the block's threads). Every returned schedule passes
 * {@link verifyGpu}.
 *
 * @example
 * ```ts
 * import { randomGpuSchedule } from "./testing_gpu.ts";
 * import { verifyGpu } from "./target_gpu.ts";
 * import { createPrng } from "./prng.ts";
 * import { matmul } from "./workloads.ts";
 * const sch = randomGpuSchedule(matmul(37, 29, 23), createPrng(7));
 * verifyGpu(sch); // never throws
 * ```
 * @module
 */
import type { ThreadAxis } from "./ast.ts";
import { ScheduleError } from "./errors.ts";
import { createPrng, type Prng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { readsOf } from "./stage.ts";
import { type GpuTarget, H100, verifyGpu } from "./target_gpu.ts";
import { Expr } from "./te.ts";
import { splitFactors } from "./testing.ts";
import { matmul, type Workload } from "./workloads.ts";

/** Options of {@link randomGpuSchedule}. */
export interface RandomGpuScheduleOptions {
  /** Limits to respect. Default {@link H100}. */
  target?: Readonly<GpuTarget>;
  /** Fresh schedules to try before giving up. Default 200. */
  maxAttempts?: number;
}

const BLOCK: ThreadAxis[] = ["blockIdx.x", "blockIdx.y", "blockIdx.z"];
const THREAD: ThreadAxis[] = ["threadIdx.x", "threadIdx.y", "threadIdx.z"];

/** A random GPU schedule of `w` that passes {@link verifyGpu}; deterministic in `prng`. */
export function randomGpuSchedule(
  w: Workload,
  prng: Prng,
  options: RandomGpuScheduleOptions = {},
): Schedule {
  const target = options.target ?? H100;
  const max = options.maxAttempts ?? 200;
  let last = "";
  for (let attempt = 0; attempt < max; attempt++) {
    const sch = new Schedule(w, { prng: prng.fork() });
    try {
      build(sch, prng);
      verifyGpu(sch, target);
      return sch;
    } catch (e) {
      if (!(e instanceof ScheduleError)) throw e;
      last = e.message;
    }
  }
  throw new Error(`randomGpuSchedule: no legal GPU schedule of ${w.name} in ${max} tries: ${last}`);
}

function build(sch: Schedule, prng: Prng): void {
  const red = sch.stages.find((s) => !(s.body instanceof Expr))!;
  const producers = sch.stages.filter((s) => s !== red && !s.isOutput && s.body instanceof Expr);
  // Padding: inline it, keep it as its own kernel, or compute it at a loop (decided later).
  const padding = producers.map((p) => ({
    name: p.name,
    how: prng.pick(["inline", "root", "at"]),
  }));
  for (const p of padding) if (p.how === "inline") sch.computeInline(p.name);
  const local = prng.next() < 0.5 ? sch.cacheWrite(red.name) : undefined;
  const outer = red.name;
  tile(sch, outer, prng);
  bindRandom(sch, outer, prng);
  annotate(sch, outer, prng);
  if (local) {
    if (prng.next() < 0.85) {
      sch.computeAt(local, outer, prng.pick(sch.loops(outer)));
    } else {
      tile(sch, local, prng);
      bindRandom(sch, local, prng);
    }
    if (sch.stage(local).attach.k === "at") {
      tile(sch, local, prng);
    }
    annotate(sch, local, prng);
  }
  for (const p of padding) {
    if (p.how === "root") {
      tile(sch, p.name, prng);
      bindRandom(sch, p.name, prng);
    } else if (p.how === "at") {
      const consumer = sch.consumers(sch.stage(p.name))[0];
      sch.computeAt(p.name, consumer.name, prng.pick(sch.loops(consumer.name)));
      if (prng.next() < 0.5) annotate(sch, p.name, prng);
    }
  }
  if (prng.next() < 0.35) sharedCopy(sch, local ?? outer, prng);
}

/**
 * Reads one input of `reader` through shared memory: computed at a random
 * loop of the reader, fused and split over the block's threads.
 */
function sharedCopy(sch: Schedule, reader: string, prng: Prng): void {
  const inputs = sch.workload.inputs.map((t) => t.name);
  const reads = readsOf(sch.stage(reader)).filter((n) => inputs.includes(n));
  if (reads.length === 0) return;
  const copy = sch.cacheRead(prng.pick(reads), "shared", [reader]);
  sch.computeAt(copy, reader, prng.pick(sch.loops(reader)));
  // The block's threads, from the kernel's root stage.
  let root = sch.stage(reader);
  while (root.attach.k === "at") root = root.attach.stage;
  const threads: [ThreadAxis, number][] = [];
  for (const [l, ax] of root.bindings) if (ax.startsWith("threadIdx")) threads.push([ax, l.extent]);
  threads.sort((a, b) => b[0].localeCompare(a[0]));
  const axes = sch.loops(copy);
  const fused = axes.length > 1 ? sch.fuse(copy, axes) : axes[0];
  if (threads.length === 0) return;
  const loops = sch.split(copy, fused, [null, ...threads.map(([, e]) => e)]);
  threads.forEach(([ax], i) => sch.bind(copy, loops[i + 1], ax));
}

/** Random splits of some loops, an occasional fuse, then a random order. */
function tile(sch: Schedule, stage: string, prng: Prng): void {
  for (const l of [...sch.stage(stage).leaves]) {
    if (prng.next() < 0.7) sch.split(stage, l.name, splitFactors(l.extent, prng));
  }
  const leaves = sch.stage(stage).leaves;
  if (prng.next() < 0.3 && leaves.length > 1) {
    const i = prng.int(leaves.length - 1);
    if (leaves[i].kind === leaves[i + 1].kind) {
      sch.fuse(stage, [leaves[i].name, leaves[i + 1].name]);
    }
  }
  const names = sch.loops(stage);
  for (let i = names.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [names[i], names[j]] = [names[j], names[i]];
  }
  sch.reorder(stage, names);
}

/**
 * Binds 0-3 random spatial loops (of extent > 1) to threads (at most 1024
 * threads per block), then 1-3 of the others to blocks.
 */
function bindRandom(sch: Schedule, stage: string, prng: Prng): void {
  const spatial = sch.stage(stage).leaves.filter((l) => l.kind === "spatial");
  const order = [...spatial];
  for (let i = order.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const nt = prng.next() < 0.15 ? 0 : 1 + prng.int(3);
  let threads = 1, t = 0;
  const rest = [];
  for (const l of order) {
    if (t < nt && l.extent > 1 && threads * l.extent <= 1024) {
      threads *= l.extent;
      sch.bind(stage, l.name, THREAD[t++]);
    } else rest.push(l);
  }
  const nb = Math.min(rest.length, 1 + prng.int(3));
  rest.slice(0, nb).forEach((l, i) => sch.bind(stage, l.name, BLOCK[i]));
}

/** Maybe unroll a small unbound loop; maybe auto-unroll. */
function annotate(sch: Schedule, stage: string, prng: Prng): void {
  const s = sch.stage(stage);
  const small = s.leaves.filter((l) => l.extent <= 8 && !s.annotations.has(l));
  if (small.length > 0 && prng.next() < 0.4) sch.unroll(stage, prng.pick(small).name);
  if (prng.next() < 0.4) sch.autoUnroll(stage, prng.pick([4, 16, 64]));
}

/** Options of {@link registerTiledMatmul}. */
export interface RegisterTiledMatmulOptions {
  /** Threads per block along i and j (`threadIdx.y`, `threadIdx.x`). */
  threads: [number, number];
  /** Outputs per thread along i and j (the register tile). */
  tile: [number, number];
  /** Split k with this inner extent and unroll it (default: k left whole). */
  kInner?: number;
}

/**
 * A GPU matmul with a register accumulator: blocks of `threads` threads,
 * each computing a `tile` of outputs in registers (cache_write + compute_at
 * at the thread loop), k optionally split and its inner loop unrolled.
 *
 * @example
 * ```ts
 * import { registerTiledMatmul } from "./testing_gpu.ts";
 * import { verifyGpu } from "./target_gpu.ts";
 * const sch = registerTiledMatmul(128, 96, 64, { threads: [16, 16], tile: [4, 2], kInner: 8 });
 * const [launch] = verifyGpu(sch).launches;
 * if (launch.block.join() !== "16,16,1" || launch.grid.join() !== "3,2,1") throw new Error();
 * ```
 */
export function registerTiledMatmul(
  M: number,
  N: number,
  K: number,
  o: RegisterTiledMatmulOptions,
): Schedule {
  const sch = new Schedule(matmul(M, N, K), { prng: createPrng(0) });
  const local = sch.cacheWrite("C");
  bindRegisterTile(sch, local, o.threads, o.tile);
  if (o.kInner !== undefined) {
    const [k0, k1] = sch.split(local, "k", [null, o.kInner]);
    sch.reorder(local, [k0, k1, "i", "j"]);
    sch.unroll(local, k1);
  }
  return sch;
}

/** Binds C's blocks and `threads`, each computing a `tile` of C in the register stage `local`. */
function bindRegisterTile(
  sch: Schedule,
  local: string,
  threads: readonly [number, number],
  tile: readonly [number, number],
): void {
  const [i0, i1, i2] = sch.split("C", "i", [null, threads[0], tile[0]]);
  const [j0, j1, j2] = sch.split("C", "j", [null, threads[1], tile[1]]);
  sch.reorder("C", [i0, j0, i1, j1, i2, j2]);
  sch.bind("C", i0, "blockIdx.y");
  sch.bind("C", j0, "blockIdx.x");
  sch.bind("C", i1, "threadIdx.y");
  sch.bind("C", j1, "threadIdx.x");
  sch.computeAt(local, "C", j1);
}

/**
 * The classic shared-memory matmul: `t` x `t` threads per block, `r` x `r`
 * register tiles (cache_write + compute_at), and per 8-deep k step the tiles
 * of A and B in shared memory, fetched by all threads (cache_read + compute_at
 * + fuse + split + bind).
 */
export function sharedTileMatmul(M = 64, N = 64, K = 32, t = 8, r = 4): Schedule {
  const sch = new Schedule(matmul(M, N, K), { prng: createPrng(0) });
  const local = sch.cacheWrite("C");
  const as = sch.cacheRead("A", "shared", [local]);
  const bs = sch.cacheRead("B", "shared", [local]);
  bindRegisterTile(sch, local, [t, t], [r, r]);
  const [k0, k1] = sch.split(local, "k", [null, 8]);
  sch.reorder(local, [k0, k1, "i", "j"]);
  for (const copy of [as, bs]) {
    sch.computeAt(copy, local, k0);
    const [, ty, tx] = sch.split(copy, sch.fuse(copy, ["ax0", "ax1"]), [null, t, t]);
    sch.bind(copy, ty, "threadIdx.y");
    sch.bind(copy, tx, "threadIdx.x");
  }
  return sch;
}
