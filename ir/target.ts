/**
 * One `Target`: what a run's kernels run on, resolved once and asked
 * everywhere instead of comparing target strings. `resolveTarget("cpu")`
 * holds the CPU's facts (vector lanes and registers of the generated C, the
 * kernel compiler and its flags: `target_cpu.ts`); `"cuda"` and `"opencl"`
 * the GPU's limits (`target_gpu.ts`, default an H100); `"replay"` answers from
 * recorded measurements and builds nothing. The layers above turn a target
 * into its default space (`search/target_space.ts`) and its measurer
 * (`tuner/session.ts`).
 *
 * This module is the one place that compares target names
 * (`tests/layers_test.ts` fails on a comparison anywhere else).
 *
 * @example
 * ```ts
 * import { resolveTarget } from "./target.ts";
 * const avx2 = resolveTarget("cpu", { flags: new Set(["avx2", "fma"]) });
 * if (avx2.registers.lanes !== 8 || avx2.registers.registers !== 16 || avx2.gpu) throw new Error();
 * const cuda = resolveTarget("cuda");
 * if (!cuda.gpu || cuda.limits?.arch !== "sm_90" || !cuda.nvcc) throw new Error();
 * if (!resolveTarget("replay").replay) throw new Error();
 * ```
 * @module
 */
import {
  cpuFlags,
  type KernelCompiler,
  kernelCompiler,
  type RegisterFile,
  registerFile,
} from "./target_cpu.ts";
import { type GpuTarget, H100 } from "./target_gpu.ts";

/** The kinds of target. */
export type TargetKind = "cpu" | "cuda" | "opencl" | "replay";

/** Every target kind, in the order errors list them. */
export const TARGET_KINDS: readonly TargetKind[] = Object.freeze([
  "cpu",
  "cuda",
  "opencl",
  "replay",
]);

/** Options of {@link resolveTarget}: the facts to use instead of this machine's. */
export interface TargetOptions {
  /** CPU feature flags (`avx512f`, `avx2`, ...). Default this machine's ({@link cpuFlags}). */
  flags?: Set<string>;
  /** Kernel C compiler. Default the environment's `TUNEBOOK_CC`, else gcc ({@link kernelCompiler}). */
  cc?: string;
  /** GPU limits of `cuda` and `opencl`. Default {@link H100}. */
  gpu?: Readonly<GpuTarget>;
}

/** A resolved target: its kind, what it can do, and the facts of its machine. */
export interface Target {
  readonly kind: TargetKind;
  /** Kernels are C built by the host compiler and run on this CPU (`cpu`). */
  readonly host: boolean;
  /** Kernels are GPU schedules (`cuda`, `opencl`): GPU templates, sketches and limits. */
  readonly gpu: boolean;
  /** Kernels are CUDA built with nvcc and timed with CUDA events (`cuda`). */
  readonly nvcc: boolean;
  /** Candidates are looked up in recorded measurements; nothing is built (`replay`). */
  readonly replay: boolean;
  /** The vector register file of the generated C (the host CPU's, whatever the kind). */
  readonly registers: Readonly<RegisterFile>;
  /** The C compiler kernels (and GPU references) are built with. */
  readonly compiler: Readonly<KernelCompiler>;
  /** The GPU's limits (`cuda`, `opencl`). */
  readonly limits?: Readonly<GpuTarget>;
  /** The target's name as TVM writes it (AutoTVM logs): `c` for the CPU, else the kind. */
  readonly tvmName: string;
}

/** Whether `name` is a {@link TargetKind}. */
export function isTargetKind(name: unknown): name is TargetKind {
  return typeof name === "string" && (TARGET_KINDS as readonly string[]).includes(name);
}

/**
 * The target of a kind, with this machine's facts unless `options` gives
 * them.
 *
 * @throws {RangeError} naming `target` when `kind` is not a target kind
 */
export function resolveTarget(kind: TargetKind | string, options: TargetOptions = {}): Target {
  if (!isTargetKind(kind)) {
    throw new RangeError(
      `target: expected one of ${TARGET_KINDS.join(", ")}, got ${JSON.stringify(kind)}`,
    );
  }
  const gpu = kind === "cuda" || kind === "opencl";
  return Object.freeze({
    kind,
    host: kind === "cpu",
    gpu,
    nvcc: kind === "cuda",
    replay: kind === "replay",
    registers: Object.freeze(registerFile(options.flags ?? cpuFlags())),
    compiler: kernelCompiler(options.cc),
    ...(gpu ? { limits: options.gpu ?? H100 } : {}),
    tvmName: tvmTargetName(kind),
  });
}

/**
 * A target's name as TVM writes it in AutoTVM logs: `c` (C source built by
 * the host compiler) for `cpu`; any other name as it is.
 *
 * @example
 * ```ts
 * import { tvmTargetName } from "./target.ts";
 * if (tvmTargetName("cpu") !== "c" || tvmTargetName("cuda") !== "cuda") throw new Error();
 * ```
 */
export function tvmTargetName(name: string): string {
  return name === "cpu" ? "c" : name;
}

/**
 * Whether two target names (a record's, a request's, a worker's) name the
 * same target.
 *
 * @example
 * ```ts
 * import { sameTarget } from "./target.ts";
 * if (!sameTarget("cpu", "cpu") || sameTarget("cpu", "cuda")) throw new Error();
 * ```
 */
export function sameTarget(a: string, b: string): boolean {
  return a === b;
}

/**
 * The target a record names (a run's `target` column), or undefined for a
 * name that is no target kind (a record from elsewhere).
 *
 * @example
 * ```ts
 * import { recordTarget } from "./target.ts";
 * if (recordTarget("cuda")?.gpu !== true || recordTarget("tpu") !== undefined) throw new Error();
 * ```
 */
export function recordTarget(name: string, options: TargetOptions = {}): Target | undefined {
  return isTargetKind(name) ? resolveTarget(name, options) : undefined;
}
