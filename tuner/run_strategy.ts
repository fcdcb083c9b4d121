/**
 * One strategy run to a budget of distinct evaluations, for comparisons
 * (`compare`, notebooks 02 and 03, the benches): the tuning loop of
 * `loop.ts` with a budget in trials, records in a {@link RecordStore} (a
 * fresh in-memory one unless given), and the run's tuning curve read back
 * from those records as a {@link RunTrace}.
 *
 * A budget counts distinct configurations evaluated (invalid ones included);
 * re-proposing one costs nothing. Configurations are told apart by their
 * knobs (default {@link RunOptions.keyOf}). Strategies do not know the
 * budget, so the first b evaluations of a run are those of a run with budget
 * b and the same seed.
 *
 * @example
 * ```ts
 * import { runStrategy } from "./run_strategy.ts";
 * import { replaySpaceFromFile } from "../search/replay.ts";
 * import { replayMeasurer } from "../measure/replay.ts";
 * import { createStrategy } from "./strategies.ts";
 * const r = await replaySpaceFromFile("pnpoly_RTX_3090");
 * const sa = await createStrategy("sa", r.space, { seed: 1, candidateOf: r.candidateOf });
 * const run = await runStrategy(sa, replayMeasurer(r), { budget: 50 });
 * console.log(run.evals, r.optimum / run.best.at(-1)!); // 50, fraction of optimum
 * ```
 * @module
 */
import type { Candidate } from "../ir/candidate.ts";
import type { RunInfo, WorkloadInput } from "../datasets/db.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import type { RecordStore } from "../datasets/record_store.ts";
import type { Measurer } from "../measure/measurer.ts";
import type { Evaluator, RunTrace } from "../search/comparison.ts";
import type { Strategy } from "../search/strategy.ts";
import { candidateKey, type Measured, tune } from "./loop.ts";
import { DEFAULTS } from "../ir/defaults.ts";

export type { Evaluator, RunTrace };

/** Defaults of {@link RunOptions} (a comparison's, from ir/defaults.ts). */
export const RUN_DEFAULTS: Readonly<{ batch: number; patience: number }> = Object.freeze({
  batch: DEFAULTS.compare.batch,
  patience: DEFAULTS.compare.patience,
});

/** Options of {@link runStrategy}. */
export interface RunOptions {
  /** Distinct evaluations to make. */
  budget: number;
  /** Key of a candidate for deduplication. Default: its knobs joined (its trace hash without knobs). */
  keyOf?: (c: Candidate) => string | Promise<string>;
  /** Batch size asked of the strategy. Default {@link RUN_DEFAULTS}.batch (16). */
  batch?: number;
  /** Rounds in a row with nothing new before the run stops. Default {@link RUN_DEFAULTS}.patience (50). */
  patience?: number;
  /** Where the records go. Default: a fresh in-memory store. */
  store?: RecordStore;
  /** Continue this run of `store` (its recorded results are not measured again). Default: a new run. */
  runId?: number;
  /**
   * How a new run is recorded (strategy name, seed, config, workload). Default: the strategy's
   * name, seed 0, the measurer's name as target, config `{ budget }` and a workload named
   * `"space"`.
   */
  run?: Partial<Omit<RunInfo, "workloadId">> & { workload?: WorkloadInput };
  /** Called with each new result as it is recorded (live plots). Default: nothing. */
  onMeasured?: (m: Measured) => void;
}

/** The default {@link RunOptions.keyOf}: knobs joined, else the trace hash. */
export function knobKey(c: Candidate): string | Promise<string> {
  return c.knobs ? c.knobs.join(",") : candidateKey(c);
}

/** An {@link Evaluator} (candidates in, observations out) as a {@link Measurer}. */
export function evaluatorMeasurer(evaluate: Evaluator, name = "evaluator"): Measurer {
  return {
    name,
    measure: async (batch) => {
      const obs = await evaluate([...batch]);
      return obs.map((o) => ({
        errorKind: o.errorKind,
        times: o.errorKind === "none" && o.seconds !== undefined ? [o.seconds] : [],
        buildSeconds: 0,
        runSeconds: 0,
      }));
    },
  };
}

/**
 * Runs one strategy to a budget of distinct evaluations through the tuning
 * loop and returns its tuning curve; `measure` is a {@link Measurer} (a
 * replay's `measurer`, the native one) or an {@link Evaluator}.
 */
export async function runStrategy(
  strategy: Strategy,
  measure: Measurer | Evaluator,
  o: RunOptions,
): Promise<RunTrace> {
  const measurer = typeof measure === "function" ? evaluatorMeasurer(measure) : measure;
  const store = o.store ?? createMemoryRecordStore();
  const runId = o.runId ?? await startRun(store, strategy, measurer, o);
  const started = performance.now();
  const wallOf = new Map<number, number>();
  const out = await tune({
    strategy,
    measurer,
    store,
    runId,
    trials: o.budget,
    batchSize: o.batch ?? RUN_DEFAULTS.batch,
    patience: o.patience ?? RUN_DEFAULTS.patience,
    keyOf: o.keyOf ?? knobKey,
    onMeasured: (m) => {
      wallOf.set(m.result.id, (performance.now() - started) / 1000);
      o.onMeasured?.(m);
    },
  });
  if (out.stop !== "time") await store.finishRun(runId);
  return await runTrace(store, runId, wallOf);
}

/**
 * The tuning curve of a recorded run: its results in trial order, the best
 * valid seconds after each, and the wall seconds after each (`wallOf`, by
 * result id, where this process measured it; otherwise from the result's
 * timestamp and the run's start).
 */
export async function runTrace(
  store: RecordStore,
  runId: number,
  wallOf: ReadonlyMap<number, number> = new Map(),
): Promise<RunTrace> {
  const run = await store.run(runId);
  const created = run ? Date.parse(run.created) : NaN;
  const best: number[] = [], wall: number[] = [];
  let current = Infinity;
  for (const c of await store.candidates(runId)) {
    const r = c.result;
    if (!r) continue;
    if (r.errorKind === "none" && r.seconds !== null && r.seconds < current) current = r.seconds;
    best.push(current);
    wall.push(wallOf.get(r.id) ?? Math.max(0, (Date.parse(r.timestamp) - created) / 1000));
  }
  return { best, wall, evals: best.length };
}

async function startRun(
  store: RecordStore,
  strategy: Strategy,
  measurer: Measurer,
  o: RunOptions,
): Promise<number> {
  const { workload, ...info } = o.run ?? {};
  return await store.startRun({
    strategy: strategy.name,
    seed: 0,
    trials: o.budget,
    target: measurer.name,
    config: { budget: o.budget },
    machine: {},
    compiler: "",
    tunebookVersion: "",
    ...info,
    workloadId: await store.upsertWorkload(workload ?? { name: "space", shape: [], flops: 0 }),
  });
}
