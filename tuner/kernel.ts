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
import type { KernelSignature } from "../measure/types.ts";

/** C source of a candidate, or why the trace cannot be instantiated. */
export type KernelSource = { source: string } | { error: string };

/** Replays, lowers and generates C for a trace; a ScheduleError becomes `{ error }`. */
export function kernelSource(trace: Trace): KernelSource {
  try {
    // Decisions are all present in a proposed trace; the PRNG only serves a removed one.
    return { source: generateC(lower(replayTrace(trace, { prng: createPrng(0) }))) };
  } catch (e) {
    if (e instanceof ScheduleError) return { error: e.message };
    throw e;
  }
}

/** C source of the reference kernel: the workload's default loop nest. */
export function referenceSource(w: Workload): string {
  return generateC(lower(new Schedule(w, { prng: createPrng(0) })));
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
