/**
 * From a trace to what the builder and runner need: C source, the kernel's
 * buffer signature, and the reference kernel (the workload's default,
 * unscheduled loop nest).
 * @module
 */
import { generateC } from "../ir/codegen_c.ts";
import { ScheduleError } from "../ir/errors.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { replayTrace, type Trace } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import type { KernelSignature } from "./types.ts";
import { vectorLanes } from "../ir/target_cpu.ts";

/**
 * Source of a candidate, or why the trace cannot be instantiated. A source
 * may carry the tolerance its arithmetic needs (tensor-core kernels round
 * their inputs to TF32, FP16 or BF16); the loop checks it with the looser of
 * that and the workload's {@link toleranceOf}.
 */
export type KernelSource =
  | { source: string; tolerance?: { atol: number; rtol: number } }
  | { error: string };

/**
 * Replays, lowers and generates C for a trace, with this machine's vector
 * width ({@link vectorLanes}); a ScheduleError becomes `{ error }`.
 */
export function kernelSource(trace: Trace): KernelSource {
  try {
    // Decisions are all present in a proposed trace; the PRNG only serves a removed one.
    return {
      source: generateC(lower(replayTrace(trace, { prng: createPrng(0) })), {
        lanes: vectorLanes(),
      }),
    };
  } catch (e) {
    if (e instanceof ScheduleError) return { error: e.message };
    throw e;
  }
}

/**
 * C source of the reference kernel: the workload's default loop nest, made
 * fast without changing any output's arithmetic. In each stage the
 * reduction loops move just outside the innermost spatial loop (each output
 * still sums its terms in the same order, and the inner loop runs along
 * contiguous memory) and the outer spatial loops are fused and run in
 * parallel (OpenMP). A stage where that does not apply keeps its naive nest.
 *
 * @example
 * ```ts
 * import { referenceSource } from "./kernel_source.ts";
 * import { matmul } from "../ir/workloads.ts";
 * if (!referenceSource(matmul(64, 64, 64)).includes("#pragma omp parallel for")) {
 *   throw new Error();
 * }
 * ```
 */
export function referenceSource(w: Workload): string {
  return generateC(lower(referenceSchedule(w)), { lanes: vectorLanes() });
}

/**
 * The schedule of {@link referenceSource}: the default nest with reductions
 * inside and outer spatial loops fused in parallel. The network executor
 * runs its untunable steps (bias, ReLU, residual adds, pools) with it.
 *
 * @example
 * ```ts
 * import { referenceSchedule } from "./kernel_source.ts";
 * import { matmul } from "../ir/workloads.ts";
 * if (referenceSchedule(matmul(8, 8, 8)).trace.length === 0) throw new Error();
 * ```
 */
export function referenceSchedule(w: Workload): Schedule {
  const sch = new Schedule(w, { prng: createPrng(0) });
  for (const stage of sch.stages.map((s) => s.name)) {
    try {
      const trial = new Schedule(w, { prng: createPrng(0) });
      for (const inst of sch.trace) trial.apply(inst);
      fastReferenceNest(trial, stage);
      fastReferenceNest(sch, stage);
    } catch (e) {
      if (!(e instanceof ScheduleError)) throw e;
    }
  }
  return sch;
}

/** Reorders and parallelizes one stage of the reference (see {@link referenceSource}). */
function fastReferenceNest(sch: Schedule, stage: string): void {
  const leaves = sch.stage(stage).leaves;
  const spatial = leaves.filter((l) => l.kind === "spatial" && l.extent > 1).map((l) => l.name);
  const reduce = leaves.filter((l) => l.kind === "reduce").map((l) => l.name);
  const ones = leaves.filter((l) => l.kind === "spatial" && l.extent <= 1).map((l) => l.name);
  if (spatial.length === 0) return;
  const inner = spatial.length > 1 ? [...reduce, spatial[spatial.length - 1]] : reduce;
  const outer = spatial.length > 1 ? spatial.slice(0, -1) : spatial;
  sch.reorder(stage, [...ones, ...outer, ...inner]);
  const fused = outer.length > 1 ? sch.fuse(stage, outer) : outer[0];
  sch.parallel(stage, fused);
}

/** Buffers of a workload's kernels: inputs, then outputs. */
export function signatureOf(w: Workload): KernelSignature {
  return {
    buffers: [
      ...w.inputs.map((t) => ({ name: t.name, size: t.size, role: "input" as const })),
      ...w.outputs.map((t) => ({ name: t.name, size: t.size, role: "output" as const })),
    ],
  };
}

/** Output tolerance for a workload: float32 sums in another order. */
export function toleranceOf(w: Workload): { atol: number; rtol: number } {
  const terms = Math.max(
    1,
    ...w.outputs.map((t) => t.reduce?.axes.reduce((p, a) => p * a.extent, 1) ?? 1),
  );
  return { atol: 1e-5 * Math.sqrt(terms) + 1e-5, rtol: 1e-3 };
}
