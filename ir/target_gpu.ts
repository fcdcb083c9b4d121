/**
 * GPU targets and the GPU postprocessor: the limits of a device (default an
 * H100, sm_90), the launch configuration of each kernel of a lowered GPU
 * schedule (one kernel per root stage; grid and block sizes from the extents
 * of the loops bound to `blockIdx` / `threadIdx`), and {@link verifyGpu},
 * which rejects a schedule that breaks a limit or would race, with a
 * {@link ScheduleError}, before anything is built.
 *
 * @example
 * ```ts
 * import { H100, verifyGpu } from "./target_gpu.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(0) });
 * const [i0, i1] = sch.split("C", "i", [null, 16]);
 * const [j0, j1] = sch.split("C", "j", [null, 16]);
 * sch.reorder("C", [i0, j0, i1, j1]);
 * sch.bind("C", i0, "blockIdx.y");
 * sch.bind("C", j0, "blockIdx.x");
 * sch.bind("C", i1, "threadIdx.y");
 * sch.bind("C", j1, "threadIdx.x");
 * const { launches } = verifyGpu(sch, H100);
 * if (launches[0].block.join() !== "16,16,1") throw new Error();
 * ```
 * @module
 */
import { type AExpr, type Kernel, type Stmt, THREAD_AXES, type ThreadAxis, varsOf } from "./ast.ts";
import { ScheduleError } from "./errors.ts";
import { gemmKernelOf, gemmLaunches, hasGemmPragmas, isGemmKernel } from "./gemm_gpu.ts";
import { lower } from "./lower.ts";
import { Schedule } from "./schedule.ts";

export { THREAD_AXES, type ThreadAxis } from "./ast.ts";

/** Limits of a GPU, as the CUDA occupancy calculator names them. */
export interface GpuTarget {
  /** Human-readable name, e.g. `"H100 (sm_90)"`. */
  name: string;
  /** nvcc `-arch`, e.g. `"sm_90"`. */
  arch: string;
  /** Threads per block (product of the threadIdx extents). */
  maxThreadsPerBlock: number;
  /** Largest threadIdx extent per dimension (x, y, z). */
  maxBlockDim: [number, number, number];
  /** Largest blockIdx extent per dimension (x, y, z). */
  maxGridDim: [number, number, number];
  /** Static shared memory per block without opting in (bytes). */
  maxSharedBytesPerBlock: number;
  /** Shared memory per block with `cudaFuncAttributeMaxDynamicSharedMemorySize` (bytes). */
  maxSharedBytesPerBlockOptin: number;
  /** 32-bit registers per SM (and per block). */
  registersPerSM: number;
  /** Registers one thread may use. */
  maxRegistersPerThread: number;
  /** Threads per warp. */
  warpSize: number;
  /** Local (per-thread, off-chip) memory one thread may use (bytes). */
  maxLocalBytesPerThread: number;
  /** Streaming multiprocessors (what a launch needs blocks for). Default 132 (H100 SXM). */
  smCount?: number;
}

/** NVIDIA H100 (Hopper, sm_90), the default target. */
export const H100: Readonly<GpuTarget> = Object.freeze({
  name: "H100 (sm_90)",
  arch: "sm_90",
  maxThreadsPerBlock: 1024,
  maxBlockDim: [1024, 1024, 64] as [number, number, number],
  maxGridDim: [2 ** 31 - 1, 65535, 65535] as [number, number, number],
  maxSharedBytesPerBlock: 48 * 1024,
  maxSharedBytesPerBlockOptin: 227 * 1024,
  registersPerSM: 65536,
  maxRegistersPerThread: 255,
  warpSize: 32,
  maxLocalBytesPerThread: 512 * 1024,
  smCount: 132,
});

/** One kernel launch of a GPU program: one root stage's nest. */
export interface GpuLaunch {
  /** Kernel function name, `<prefix>_k<index>`. */
  name: string;
  /** The root stage the kernel computes. */
  stage: string;
  /** Its statements (bound loops read their thread index). */
  body: Stmt[];
  /** blockIdx extents (x, y, z). */
  grid: [number, number, number];
  /** threadIdx extents (x, y, z). */
  block: [number, number, number];
  /** Bytes of `__shared__` memory the kernel declares. */
  sharedBytes: number;
  /**
   * Bytes of dynamic shared memory the launch passes (`<<<grid, block,
   * bytes>>>`); above 48 KiB the launcher first raises the kernel's
   * `cudaFuncAttributeMaxDynamicSharedMemorySize`. Absent: static only.
   */
  dynamicSharedBytes?: number;
}

const DIM: Record<string, number> = { x: 0, y: 1, z: 2 };

/**
 * The launches of a lowered GPU kernel: per root stage, grid and block from
 * the largest extent bound to each axis (loops with smaller extents are
 * guarded by the code generators). Throws ScheduleError for a kernel with a
 * CPU-only feature (`Kernel.cpuOnly`).
 */
export function gpuLaunches(kernel: Kernel, prefix = "tb"): GpuLaunch[] {
  if (isGemmKernel(kernel)) return gemmLaunches(kernel, prefix);
  if (kernel.cpuOnly) {
    throw new ScheduleError(
      `Cannot generate GPU code: the schedule uses ${kernel.cpuOnly}, a CPU packing copy (use cache_read(..., "shared") on GPUs)`,
    );
  }
  const roots = kernel.roots ?? [{ stage: "kernel", body: kernel.body }];
  return roots.map((r, i) => {
    const grid: [number, number, number] = [1, 1, 1], block: [number, number, number] = [1, 1, 1];
    let sharedBytes = 0;
    walk(r.body, (st) => {
      if (st.k === "for" && st.kind === "bind" && st.thread) {
        const [kind, d] = st.thread.split(".");
        const dims = kind === "blockIdx" ? grid : block;
        dims[DIM[d]] = Math.max(dims[DIM[d]], st.extent);
      }
      if (st.k === "alloc" && st.scope === "shared") sharedBytes += st.size * 4;
    });
    return { name: `${prefix}_k${i}`, stage: r.stage, body: r.body, grid, block, sharedBytes };
  });
}

/** Calls `f` on every statement, outer first. */
export function walk(body: Stmt[], f: (s: Stmt) => void): void {
  for (const s of body) {
    f(s);
    if (s.k === "for" || s.k === "if" || s.k === "alloc") walk(s.body, f);
  }
}

/** Options of {@link verifyGpu}. */
export interface VerifyGpuOptions {
  /** Reject a root stage that binds no loop (it would run in one thread). Default true. */
  requireBinding?: boolean;
  /** Allow shared memory up to the opt-in limit instead of the default 48 KiB. Default false. */
  sharedOptin?: boolean;
}

/** What {@link verifyGpu} checked: the lowered kernel and its launches. */
export interface GpuCheck {
  kernel: Kernel;
  launches: GpuLaunch[];
}

/**
 * Checks a GPU schedule (or an already lowered kernel) against a target and
 * returns the lowered kernel with its launches. Throws {@link ScheduleError}
 * naming the stage, loop and limit when:
 * - a loop is marked `parallel` (a CPU annotation: bind it instead);
 * - a bound loop is a reduction loop, or one axis is bound twice on one path;
 * - a root stage binds no loop (unless `requireBinding` is false);
 * - threads per block (the product of the threadIdx extents) exceed
 *   `maxThreadsPerBlock`, or a block or grid dimension exceeds its limit;
 * - shared memory per block exceeds the limit, or a thread's local arrays
 *   exceed `maxLocalBytesPerThread`;
 * - a store to global memory is not inside loops bound to every thread axis
 *   its kernel launches with more than one thread: several threads would
 *   write the same element (a reduction would race), i.e. every reduction
 *   must run inside the thread's own loops; a cooperative shared-memory copy
 *   must likewise bind every launched threadIdx axis;
 * - a block barrier (from a shared-memory copy) is in code only some threads
 *   run (under a guard on thread indices), where it would deadlock;
 * - a shared-memory stage is not computed at a loop of its reader, or binds
 *   blockIdx.
 *
 * A schedule with `gemm.*` pragmas is a point of the GEMM template
 * (`ir/gemm_gpu.ts`): its configuration is checked instead (threads, tiles,
 * registers, shared memory up to the opt-in limit, which its launcher
 * requests).
 */
export function verifyGpu(
  input: Schedule | Kernel,
  target: Readonly<GpuTarget> = H100,
  options: VerifyGpuOptions = {},
): GpuCheck {
  if (input instanceof Schedule && hasGemmPragmas(input)) {
    const gemm = gemmKernelOf(input, target);
    return { kernel: gemm, launches: gemmLaunches(gemm) };
  }
  if (!(input instanceof Schedule) && isGemmKernel(input)) {
    return { kernel: input, launches: gemmLaunches(input) };
  }
  if (input instanceof Schedule) checkSchedule(input);
  const kernel = input instanceof Schedule ? lower(input) : input;
  const launches = gpuLaunches(kernel);
  const requireBinding = options.requireBinding ?? true;
  const sharedLimit = options.sharedOptin
    ? target.maxSharedBytesPerBlockOptin
    : target.maxSharedBytesPerBlock;
  const privateBufs = new Set<string>(), sharedBufs = new Set<string>();
  walk(kernel.body, (s) => {
    if (s.k === "alloc") (s.scope === "shared" ? sharedBufs : privateBufs).add(s.buf);
  });
  for (const l of launches) {
    const where = `kernel ${l.name} (stage "${l.stage}")`;
    const threads = l.block[0] * l.block[1] * l.block[2];
    if (requireBinding && !hasBinding(l.body)) {
      throw new ScheduleError(
        `Stage "${l.stage}" binds no loop to a GPU thread axis: it would run in a single thread (bind its loops with bind(stage, loop, "blockIdx.x") and "threadIdx.x")`,
      );
    }
    if (threads > target.maxThreadsPerBlock) {
      throw new ScheduleError(
        `${where} uses ${threads} threads per block (threadIdx extents ${
          l.block.join(" x ")
        }), more than the ${target.maxThreadsPerBlock} of ${target.name}`,
      );
    }
    "xyz".split("").forEach((d, i) => {
      if (l.block[i] > target.maxBlockDim[i]) {
        throw new ScheduleError(
          `${where}: threadIdx.${d} extent ${l.block[i]} exceeds ${target.maxBlockDim[i]}`,
        );
      }
      if (l.grid[i] > target.maxGridDim[i]) {
        throw new ScheduleError(
          `${where}: blockIdx.${d} extent ${l.grid[i]} exceeds ${target.maxGridDim[i]}`,
        );
      }
    });
    if (l.sharedBytes > sharedLimit) {
      throw new ScheduleError(
        `${where} uses ${l.sharedBytes} bytes of shared memory per block, more than the ${sharedLimit} of ${target.name}`,
      );
    }
    const launched = THREAD_AXES.filter((ax) => {
      const [kind, d] = ax.split(".");
      return (kind === "blockIdx" ? l.grid : l.block)[DIM[d]] > 1;
    });
    checkNest(l.body, new Set(), 0, false, {
      where,
      launched,
      privateBufs,
      sharedBufs,
      target,
      launch: l,
      threadDependent: new Set(),
    });
  }
  return { kernel, launches };
}

function hasBinding(body: Stmt[]): boolean {
  let found = false;
  walk(body, (s) => {
    if (s.k === "for" && s.kind === "bind") found = true;
  });
  return found;
}

interface NestContext {
  where: string;
  launched: readonly ThreadAxis[];
  privateBufs: Set<string>;
  sharedBufs: Set<string>;
  target: Readonly<GpuTarget>;
  launch: GpuLaunch;
  /** Variables whose value differs between the threads of a block. */
  threadDependent: Set<string>;
}

function usesAny(e: AExpr, names: Set<string>): boolean {
  for (const v of varsOf(e)) if (names.has(v)) return true;
  return false;
}

/**
 * Checks a nest: `bound` are the axes bound on the path, `local` the bytes of
 * per-thread arrays so far, `divergent` whether only some threads of a block
 * run this code.
 */
function checkNest(
  body: Stmt[],
  bound: Set<ThreadAxis>,
  local: number,
  divergent: boolean,
  c: NestContext,
): void {
  for (const s of body) {
    switch (s.k) {
      case "for": {
        if (s.kind === "parallel") {
          throw new ScheduleError(
            `${c.where}: loop ${s.v} is marked parallel, a CPU annotation; bind it to a GPU thread axis instead`,
          );
        }
        if (s.kind === "bind" && s.thread) {
          if (bound.has(s.thread)) {
            throw new ScheduleError(
              `${c.where}: loop ${s.v} is bound to ${s.thread} inside another loop bound to ${s.thread}`,
            );
          }
          const isThread = s.thread.startsWith("threadIdx");
          if (isThread) c.threadDependent.add(s.v);
          const guarded = s.extent < launchExtentOf(c.launch, s.thread);
          checkNest(s.body, new Set([...bound, s.thread]), local, divergent || guarded, c);
        } else checkNest(s.body, bound, local, divergent, c);
        break;
      }
      case "if":
        checkNest(s.body, bound, local, divergent || usesAny(s.cond, c.threadDependent), c);
        break;
      case "let":
        if (usesAny(s.value, c.threadDependent)) c.threadDependent.add(s.name);
        break;
      case "sync":
        if (divergent) {
          throw new ScheduleError(
            `${c.where}: a shared-memory barrier is inside code only some threads of a block run (a guard on thread indices, or a thread loop narrower than the block); use thread tiles that divide the extents`,
          );
        }
        break;
      case "alloc": {
        if (s.scope === "shared") {
          // [sync, ...cooperative fetch, sync, ...readers]: the fetch is split among
          // the threads by its own bindings, not by the readers' loops around it.
          const end = s.body.findIndex((x, i) => i > 0 && x.k === "sync");
          if (s.body[0]?.k !== "sync" || end < 0) {
            throw new Error(`internal: shared buffer ${s.buf} without its barriers`);
          }
          checkNest([s.body[0]], bound, local, divergent, c);
          const blocks = new Set([...bound].filter((ax) => ax.startsWith("blockIdx")));
          checkNest(s.body.slice(1, end), blocks, local, divergent, c);
          checkNest(s.body.slice(end), bound, local, divergent, c);
          break;
        }
        const bytes = s.size * 4;
        if (local + bytes > c.target.maxLocalBytesPerThread) {
          throw new ScheduleError(
            `${c.where}: local array ${s.buf} brings a thread's local memory to ${
              local + bytes
            } bytes, more than ${c.target.maxLocalBytesPerThread}`,
          );
        }
        checkNest(s.body, bound, local + bytes, divergent, c);
        break;
      }
      case "store": {
        if (c.privateBufs.has(s.buf)) break;
        const shared = c.sharedBufs.has(s.buf);
        const missing = c.launched.filter((ax) =>
          !bound.has(ax) && (!shared || ax.startsWith("threadIdx"))
        );
        if (missing.length > 0 && shared) {
          throw new ScheduleError(
            `${c.where}: the copy into shared ${s.buf} is not bound to ${
              missing.join(", ")
            }: bind its loops to every threadIdx axis of the block so the threads share the copy`,
          );
        }
        if (missing.length > 0) {
          const what = s.accumulate ? "accumulates into" : "stores to";
          throw new ScheduleError(
            `${c.where} ${what} ${s.buf} outside loops bound to ${
              missing.join(", ")
            }: several threads would write the same elements${
              s.accumulate ? " (the reduction would race)" : ""
            }; every store must run inside the thread's own loops`,
          );
        }
        break;
      }
      default:
        break;
    }
  }
}

/** Schedule-level checks, with stage and loop names in the messages. */
function checkSchedule(sch: Schedule): void {
  for (const s of sch.stages) {
    if (s.attach.k === "inline") continue;
    for (const [l, a] of s.annotations) {
      if (a === "parallel") {
        throw new ScheduleError(
          `Loop "${l.name}" of stage "${s.name}" is marked parallel, a CPU annotation; bind it to a GPU thread axis instead`,
        );
      }
    }
    for (const [l, ax] of s.bindings) {
      if (l.kind !== "spatial") {
        throw new ScheduleError(
          `Loop "${l.name}" of stage "${s.name}" is a reduction loop bound to ${ax}: bound loops must be spatial`,
        );
      }
    }
    if (s.attach.k === "at" && s.scope !== "shared" && s.bindings.size > 0) {
      throw new ScheduleError(
        `Stage "${s.name}" is computed at "${s.attach.stage.name}" in per-thread memory but binds thread axes; only shared-memory stages bind loops inside a kernel`,
      );
    }
    if (s.scope === "shared") {
      if (s.attach.k !== "at") {
        throw new ScheduleError(
          `Shared-memory stage "${s.name}" must be computed at a loop of its reader (compute_at), inside the reader's kernel`,
        );
      }
      for (const [l, ax] of s.bindings) {
        if (ax.startsWith("blockIdx")) {
          throw new ScheduleError(
            `Loop "${l.name}" of shared-memory stage "${s.name}" is bound to ${ax}: a shared copy is made by the threads of one block`,
          );
        }
      }
    }
  }
}

function launchExtentOf(l: GpuLaunch, axis: ThreadAxis): number {
  const [kind, d] = axis.split(".");
  return (kind === "blockIdx" ? l.grid : l.block)[DIM[d]];
}
