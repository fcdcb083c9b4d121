/**
 * Whole strategy runs through the queue, for `compare --queue` on a replayed
 * Kernel Tuner cache: a comparison of S strategies x N seeds is S x N
 * independent runs, each cheap to send (a cache's name, a strategy, a seed,
 * a budget) and costly to compute (model-based strategies train as they go).
 * A worker runs one with the one tuning loop (`tuner/run_strategy.ts`) on
 * its own copy of the cache (named, never a path: `data/kerneltuner` of
 * the same tunebook version) and returns the run's records; the tuner writes
 * them into its own records store, so `--db` and `--resume` work as without
 * workers, and the tuning curves are the same.
 *
 * @example
 * ```ts
 * import { parseRunJob } from "./run_job.ts";
 * const j = parseRunJob({
 *   version: "0.1.0",
 *   run: { space: "pnpoly_RTX_3090", absent: "invalid", strategy: "sa", seed: 1, budget: 20 },
 * });
 * if (j.run.budget !== 20) throw new Error();
 * ```
 * @module
 */
import type { CandidateRow, RunInfo, WorkloadInput } from "../datasets/db.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import type { RecordStore } from "../datasets/record_store.ts";
import { replaySpaceFromFile } from "../search/replay.ts";
import { replayMeasurer } from "../measure/replay.ts";
import { createStrategy } from "../tuner/strategies.ts";
import { knobKey, runStrategy } from "../tuner/run_strategy.ts";
import { JobError } from "./job.ts";

/** One strategy run of a comparison. */
export interface RunSpec {
  /** Name of a Kernel Tuner cache of `data/kerneltuner` (never a path). */
  space: string;
  absent: "invalid" | "restricted";
  strategy: string;
  seed: number;
  budget: number;
  planSize?: number;
}

/** A run job: the spec and the tuner's tunebook version. */
export interface RunJob {
  version: string;
  run: RunSpec;
}

/** What a worker returns: the run's candidates with results, in trial order, and wall seconds. */
export interface RunJobResult {
  candidates: Pick<CandidateRow, "trial" | "trace" | "traceHash" | "knobs" | "result">[];
  /** Wall seconds after each result, from the start of the run on the worker. */
  wall: number[];
}

/** Checks a run job's data field by field. */
export function parseRunJob(data: unknown): RunJob {
  const o = data as Record<string, unknown>;
  if (typeof o !== "object" || o === null) throw new JobError("run job is not an object");
  for (const k of Object.keys(o)) {
    if (k !== "version" && k !== "run") throw new JobError(`run job has an unknown field ${k}`);
  }
  if (typeof o.version !== "string") throw new JobError("run job field version is not a string");
  const r = o.run as Record<string, unknown>;
  if (typeof r !== "object" || r === null) throw new JobError("run job field run is not an object");
  const known = ["space", "absent", "strategy", "seed", "budget", "planSize"];
  for (const k of Object.keys(r)) {
    if (!known.includes(k)) throw new JobError(`run job field run has an unknown field ${k}`);
  }
  if (typeof r.space !== "string" || !/^[A-Za-z0-9_.-]+$/.test(r.space) || r.space.includes("..")) {
    throw new JobError("run job field run.space is not the name of a cache of data/kerneltuner");
  }
  if (r.absent !== "invalid" && r.absent !== "restricted") {
    throw new JobError("run job field run.absent is not invalid or restricted");
  }
  if (typeof r.strategy !== "string") {
    throw new JobError("run job field run.strategy is not a string");
  }
  const int = (v: unknown, f: string, min: number) => {
    if (!Number.isInteger(v) || (v as number) < min) {
      throw new JobError(`run job field run.${f} is not an integer >= ${min}`);
    }
    return v as number;
  };
  return {
    version: o.version,
    run: {
      space: r.space,
      absent: r.absent,
      strategy: r.strategy,
      seed: int(r.seed, "seed", -(2 ** 31)),
      budget: int(r.budget, "budget", 1),
      ...(r.planSize !== undefined ? { planSize: int(r.planSize, "planSize", 1) } : {}),
    },
  };
}

/** Runs a run job (in the worker's subprocess). */
export async function executeRunJob(spec: RunSpec): Promise<RunJobResult> {
  const r = await replaySpaceFromFile(spec.space, { absent: spec.absent });
  const strategy = await createStrategy(spec.strategy, r.space, {
    seed: spec.seed,
    candidateOf: r.candidateOf,
    ...(spec.planSize !== undefined ? { planSize: spec.planSize } : {}),
  });
  const store = createMemoryRecordStore();
  const trace = await runStrategy(strategy, replayMeasurer(r), {
    budget: spec.budget,
    store,
    keyOf: knobKey,
  });
  const runId = (await store.runs())[0].id;
  const candidates = (await store.candidates(runId)).map((
    { trial, trace, traceHash, knobs, result },
  ) => ({
    trial,
    trace,
    traceHash,
    knobs,
    result,
  }));
  return { candidates, wall: trace.wall };
}

/**
 * Writes a run a worker made into `store` as one finished run (described by
 * `info`); returns its id and the worker's wall seconds by result id (for
 * `runTrace`).
 */
export async function recordRun(
  store: RecordStore,
  info: Omit<RunInfo, "workloadId"> & { workload: WorkloadInput },
  result: RunJobResult,
): Promise<{ runId: number; wallOf: Map<number, number> }> {
  const { workload, ...rest } = info;
  const runId = await store.startRun({ ...rest, workloadId: await store.upsertWorkload(workload) });
  const wallOf = new Map<number, number>();
  let k = 0;
  for (const c of result.candidates) {
    const id = await store.addCandidate(runId, {
      trial: c.trial,
      trace: c.trace,
      traceHash: c.traceHash,
      ...(c.knobs ? { knobs: c.knobs } : {}),
    });
    if (c.result) {
      const { errorKind, error, times, buildSeconds, runSeconds } = c.result;
      const row = await store.addResult(id, {
        errorKind,
        ...(error !== null ? { error } : {}),
        times,
        buildSeconds,
        runSeconds,
      });
      wallOf.set(row.id, result.wall[k++] ?? 0);
    }
  }
  await store.finishRun(runId);
  return { runId, wallOf };
}
