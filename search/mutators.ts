/**
 * Mutators of traces, after MetaSchedule's: each changes one decision of one
 * sampling instruction and replays the trace (decisions that no longer fit
 * are sampled afresh); the postprocessor then rejects a trace that does not
 * lower. `MutateTileSize` moves a prime factor between two tile levels,
 * `MutateParallel` changes how many outer tiles run in parallel,
 * `MutateUnroll` the auto-unroll step, `MutateComputeLocation` where a
 * producer is computed, and `MutateAnnotation` (ours) another value of a
 * categorical decision that feeds an `annotate` pragma: the knobs of the GEMM
 * template (`ir/gemm_gpu.ts`: block and warp tiles, mma kind, load, stages,
 * ...), which no MetaSchedule mutator reaches. A design space may bring its
 * own postprocessor (`DesignSpace.postprocess`, MetaSchedule's
 * VerifyGPUCode for the GPU space); the default replays and lowers.
 *
 * @example
 * ```ts
 * import { mutate } from "./mutators.ts";
 * import { defaultSpace } from "./sketch.ts";
 * import { createWorkload } from "../ir/workloads.ts";
 * import { createPrng } from "../ir/prng.ts";
 * const prng = createPrng(1);
 * const t = defaultSpace(createWorkload("matmul", [64, 64, 64])).sample(prng);
 * const m = mutate(t, prng);
 * if (m && JSON.stringify(m) === JSON.stringify(t)) throw new Error("no change");
 * ```
 * @module
 */
import { ScheduleError } from "../ir/errors.ts";
import { lower } from "../ir/lower.ts";
import type { Prng } from "../ir/prng.ts";
import { primeFactors } from "../ir/sampling.ts";
import type { Schedule } from "../ir/schedule.ts";
import { replayTrace, type Trace, traceOf } from "../ir/trace.ts";

/** The mutators, by MetaSchedule name. */
export type MutatorName =
  | "MutateTileSize"
  | "MutateParallel"
  | "MutateUnroll"
  | "MutateComputeLocation"
  | "MutateAnnotation";

/**
 * Probabilities of the mutators (MetaSchedule's CPU defaults: tile 0.9,
 * parallel 0.05, unroll 0.03, location 0.02; annotation 0.9, as the tile
 * sizes it stands for in a GEMM template trace, the only traces it applies to).
 */
export const MUTATOR_PROBS: Record<MutatorName, number> = {
  MutateTileSize: 0.9,
  MutateParallel: 0.05,
  MutateUnroll: 0.03,
  MutateComputeLocation: 0.02,
  MutateAnnotation: 0.9,
};

/** The instruction a categorical decision must feed for each mutator of such decisions. */
const USER_OP = {
  MutateParallel: "parallel_outer",
  MutateUnroll: "auto_unroll",
  MutateAnnotation: "annotate",
} as const;

/** Indices of the instructions a mutator can change. */
export function mutable(trace: Trace, m: MutatorName): number[] {
  return trace.insts.flatMap((inst, i) => {
    if (!("decision" in inst)) return [];
    switch (m) {
      case "MutateTileSize": {
        const d = inst.decision as number[];
        return inst.op === "sample_perfect_tile" && d.filter((x) => x > 1).length >= 1 &&
            d.length > 1
          ? [i]
          : [];
      }
      case "MutateParallel":
      case "MutateUnroll":
      case "MutateAnnotation": {
        if (inst.op !== "sample_categorical") return [];
        const user = trace.insts.find((u) =>
          Object.values(u.args).some((a) =>
            typeof a === "object" && a !== null && "$ref" in a && a.$ref === i
          )
        );
        return user?.op === USER_OP[m] && (inst.args.candidates as number[]).length > 1 ? [i] : [];
      }
      case "MutateComputeLocation":
        return inst.op === "sample_compute_location" ? [i] : [];
    }
  });
}

/** A new decision for instruction `i` (different from the current one when possible). */
function newDecision(trace: Trace, i: number, m: MutatorName, prng: Prng): unknown | undefined {
  const inst = trace.insts[i];
  if (m === "MutateTileSize") {
    const d = [...(inst.decision as number[])];
    const maxInner = inst.args.max_innermost as number;
    for (let attempt = 0; attempt < 16; attempt++) {
      const from = prng.pick(d.map((x, k) => (x > 1 ? k : -1)).filter((k) => k >= 0));
      const to = prng.pick(d.map((_, k) => k).filter((k) => k !== from));
      const p = prng.pick(primeFactors(d[from]));
      const next = [...d];
      next[from] /= p;
      next[to] *= p;
      if (next[next.length - 1] <= Math.max(1, maxInner)) return next;
    }
    return undefined;
  }
  const current = inst.decision as number;
  if (m === "MutateComputeLocation") {
    // Move to a nearby location; the replay rejects an index past the candidates.
    const next = current + prng.pick([-2, -1, 1, 2]);
    return next >= 0 ? next : current + 1;
  }
  const options = (inst.args.candidates as number[]).length;
  if (options < 2) return undefined;
  const other = prng.int(options - 1);
  return other >= current ? other + 1 : other;
}

/**
 * Applies one mutator (drawn with {@link MUTATOR_PROBS} among those that
 * apply) and returns the trace `postprocess` makes of it (default
 * {@link verify}: replayed, lowered and checked), or undefined when the
 * mutation gave no legal schedule.
 */
export function mutate(
  trace: Trace,
  prng: Prng,
  postprocess: (trace: Trace, prng: Prng) => Trace | undefined = verify,
): Trace | undefined {
  const names = (Object.keys(MUTATOR_PROBS) as MutatorName[]).filter((m) =>
    mutable(trace, m).length > 0
  );
  if (names.length === 0) return undefined;
  const total = names.reduce((a, m) => a + MUTATOR_PROBS[m], 0);
  let r = prng.next() * total, m = names[names.length - 1];
  for (const n of names) {
    r -= MUTATOR_PROBS[n];
    if (r < 0) {
      m = n;
      break;
    }
  }
  const i = prng.pick(mutable(trace, m));
  const decision = newDecision(trace, i, m, prng);
  if (decision === undefined) return undefined;
  const next = structuredClone(trace);
  next.insts[i].decision = decision;
  return postprocess(next, prng);
}

/**
 * The postprocessor: replays a trace (repairing decisions that no longer
 * fit) and checks the schedule with `check` (default: it lowers); returns
 * the replayed trace, or undefined if the schedule is illegal (`check`
 * threw a ScheduleError).
 */
export function verify(
  trace: Trace,
  prng: Prng,
  check: (sch: Schedule) => unknown = lower,
): Trace | undefined {
  try {
    const sch = replayTrace(trace, { prng, repair: true });
    check(sch);
    return traceOf(sch);
  } catch (e) {
    if (e instanceof ScheduleError) return undefined;
    throw e;
  }
}
