/**
 * The tuning loop: the one module that wires a strategy, a {@link Measurer}
 * and a {@link RecordStore} together. `tune`, `compare` (live and replayed),
 * RL training and the notebooks all run it.
 *
 * Each round asks the strategy for a batch, drops candidates this run has
 * already measured (their recorded result is observed again at no cost),
 * records the new ones before measuring them, measures them in one call of
 * the measurer, records each result as it arrives, and tells the strategy.
 * With `overlap` the rounds form a pipeline: round k+1 is proposed and handed
 * to the measurer while round k is measured (the native measurer builds it
 * meanwhile), and round k is observed while round k+1 is measured.
 *
 * The run ends when the trials are done, when the wall-time budget is spent,
 * or when the space is exhausted: the strategy proposes nothing, or
 * `patience` rounds in a row bring nothing new. A run stopped at any moment
 * (a measurer that throws, a killed process, the time budget) resumes from
 * the store: the strategy is replayed from its seed, recorded results are fed
 * back instead of measured, and nothing finished is measured twice. A result
 * of a transient error kind (`isTransient`: the worker lost, a timeout under
 * load) is not finished: a resumed run measures it again.
 *
 * Each result records the parts of its time as Kernel Tuner's caches do:
 * build, run and verification seconds from the measurer, the strategy's
 * seconds (its round's share of the propose and observe time since the
 * previous round with new candidates) and framework seconds (the rest of the
 * wall time since the previous result arrived, less its build and run seconds
 * and, for a round's first result, the round's strategy time; at least 0), so
 * that the parts of a run's results sum to its wall time up to the last one
 * (less where builds overlap other measurements, and the figure is 0).
 *
 * Side effects other than the records are callbacks: `onProgress` (a
 * progress bar), `onMeasured` (live plots, curves), and the strategy's own
 * `observe` (model updates).
 *
 * @example
 * ```ts
 * import { tune } from "./loop.ts";
 * import { createMemoryRecordStore } from "../datasets/memory_store.ts";
 * import type { Measurer } from "../measure/measurer.ts";
 * import { gridSearch } from "../search/grid.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3, 4] }]);
 * // A measurer that answers 1 + |x - 3| milliseconds: no kernel runs.
 * const measurer: Measurer = {
 *   name: "fake",
 *   measure: (batch) =>
 *     Promise.resolve(batch.map((c) => ({
 *       errorKind: "none" as const,
 *       times: [(1 + Math.abs(c.knobs![0] - 2)) * 1e-3],
 *       buildSeconds: 0,
 *       runSeconds: 0,
 *     }))),
 * };
 * const store = createMemoryRecordStore();
 * const workloadId = await store.upsertWorkload({ name: "x", shape: [4], flops: 1 });
 * const runId = await store.startRun({
 *   strategy: "random", seed: 1, trials: 4, target: "fake", workloadId,
 *   config: {}, machine: {}, compiler: "", tunebookVersion: "0",
 * });
 * const out = await tune({
 *   strategy: gridSearch(space), measurer, store, runId, trials: 4,
 * });
 * if (out.measured !== 4 || (await store.best(runId))?.result.seconds !== 1e-3) throw new Error();
 * ```
 * @module
 */
import type { Candidate, Observation } from "../ir/candidate.ts";
import { type ErrorKind, isTransient } from "../ir/error_kind.ts";
import { traceHash } from "../ir/trace.ts";
import { median } from "../ir/stats.ts";
import type { RecordStore } from "../datasets/record_store.ts";
import type { ResultRow } from "../datasets/db.ts";
import type { Measurer, MeasureResult } from "../measure/measurer.ts";
import type { Strategy } from "../search/strategy.ts";
import type { Progress } from "./progress.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkNumber,
  checkObject,
  described,
} from "../ir/check.ts";

/** Throws a TypeError/RangeError naming the first option of `o` that {@link tune} cannot take. */
function checkTuneOptions(o: unknown): void {
  const x = checkObject(o, "tune options");
  const s = x.strategy as Record<string, unknown> | undefined;
  if (typeof s !== "object" || s === null || typeof s.propose !== "function") {
    throw new TypeError(
      `strategy must be a strategy (propose, observe; e.g. createStrategy), got ${described(s)}`,
    );
  }
  const m = x.measurer as Record<string, unknown> | undefined;
  if (typeof m !== "object" || m === null || typeof m.measure !== "function") {
    throw new TypeError(`measurer must be a measurer (measure), got ${described(m)}`);
  }
  const st = x.store as Record<string, unknown> | undefined;
  if (typeof st !== "object" || st === null || typeof st.addCandidate !== "function") {
    throw new TypeError(
      `store must be a record store (createMemoryRecordStore, sqliteRecordStore), got ${
        described(st)
      }`,
    );
  }
  checkInteger(x.runId, "runId", { min: 1 });
  // Infinity: no trial budget, or never exhausted (trainAgent's runs end with their episodes).
  if (x.trials !== Infinity) checkInteger(x.trials, "trials", { min: 0 });
  checkInteger(x.firstTrial, "firstTrial", { min: 0, optional: true });
  checkInteger(x.batchSize, "batchSize", { min: 1, optional: true });
  if (x.patience !== Infinity) checkInteger(x.patience, "patience", { min: 1, optional: true });
  checkNumber(x.timeLimitSeconds, "timeLimitSeconds", { min: 0, above: true, optional: true });
  checkNumber(x.flops, "flops", { min: 0, optional: true });
  for (const f of ["keyOf", "onProgress", "onMeasured"]) checkFunction(x[f], f, { optional: true });
  checkBoolean(x.overlap, "overlap", { optional: true });
}

/** Defaults of {@link TuneOptions} (tune's, from ir/defaults.ts). */
export const LOOP_DEFAULTS: Readonly<{ batchSize: number; patience: number }> = Object.freeze({
  batchSize: DEFAULTS.tune.batch,
  patience: DEFAULTS.tune.patience,
});

/** One result as the loop recorded it (for {@link TuneOptions.onMeasured}). */
export interface Measured {
  /** The candidate measured. */
  candidate: Candidate;
  /** The candidate's key (its trace hash, or its knobs joined). */
  key: string;
  /** The result as the store holds it (`seconds`: median of the repeats). */
  result: ResultRow;
  /** Distinct candidates of the run measured so far, this one included. */
  done: number;
  /** Best valid seconds of the run so far (Infinity before the first valid one). */
  bestSeconds: number;
}

/** Options of {@link tune}. */
export interface TuneOptions {
  /** The strategy that proposes candidates (ask/tell). */
  strategy: Strategy;
  /** Measures each round's new candidates (native CPU, CUDA, replay, ...). */
  measurer: Measurer;
  /** Where the run's records go, and what a resumed run reads back. */
  store: RecordStore;
  /** The run to record into (from `store.startRun`, or a resumed run). */
  runId: number;
  /** Distinct candidates to measure (failures count). */
  trials: number;
  /**
   * Trial number of this call's first new candidate. Default 0, as for a new
   * or resumed run (a resumed strategy re-proposes the recorded candidates,
   * which keep their numbers). A driver that calls `tune` again on the same
   * run with a strategy that goes on from where it stopped (the task
   * scheduler's rounds) passes the run's candidate count, so trial numbers
   * stay distinct.
   */
  firstTrial?: number;
  /** Candidates proposed per round. Default {@link LOOP_DEFAULTS}.batchSize (8). */
  batchSize?: number;
  /** Stop after this many wall seconds (the run stays resumable). Default: no limit. */
  timeLimitSeconds?: number;
  /**
   * Rounds in a row without a new candidate before the space counts as
   * exhausted. Default {@link LOOP_DEFAULTS}.patience (20). A strategy that
   * proposes nothing ends the run at once.
   */
  patience?: number;
  /**
   * Key that deduplicates candidates: equal keys are one configuration,
   * measured once per run. Default: the trace hash when the candidate has a
   * trace, else its knobs joined by commas.
   */
  keyOf?: (candidate: Candidate) => string | Promise<string>;
  /**
   * Floating-point operations of one call, for the GFLOP/s of the progress. Default: unknown
   * (the progress has no GFLOP/s).
   */
  flops?: number;
  /** Called after every recorded result. Default: nothing. */
  onProgress?: (p: Progress) => void;
  /** Called with every new result, in the order they are recorded. Default: nothing. */
  onMeasured?: (m: Measured) => void;
  /**
   * Hand round k+1 to the measurer while round k is measured (and observe
   * round k meanwhile). Proposals then lag one round behind the
   * observations. Give the native measurer a builder with `background`
   * (as `runSession` does): compilers at normal priority on the cores being
   * measured perturb the timings badly (bench/tuning_throughput.ts measures
   * both effects). Default false: one round at a time.
   */
  overlap?: boolean;
  /**
   * Racing: a candidate whose first timing repeat is more than `race` times
   * slower than the best of the run so far (when its round is handed to the
   * measurer) gets no further repeats. Default: every repeat.
   */
  race?: number;
}

/** Wall seconds the loop spent in each part of a run (summed over rounds). */
export interface TuneTimings {
  /** From the start of {@link tune} to its return. */
  wall: number;
  /** Strategy `propose` calls (search). */
  propose: number;
  /** Strategy `observe` calls (model updates). */
  observe: number;
  /** Keys of proposals (trace hashing). */
  key: number;
  /** Waiting for the measurer (each round, start to finish; rounds overlap with `overlap`). */
  measure: number;
  /** Record store writes and reads. */
  records: number;
}

/** What a finished (or stopped) tuning loop reports. */
export interface TuneOutcome {
  /** Distinct candidates measured in this run, including earlier sessions. */
  measured: number;
  /** Why the loop stopped. */
  stop: "trials" | "exhausted" | "time";
  /**
   * Measurements of candidates the strategy asked to have timed again
   * (`Strategy.remeasure`): not trials, not recorded. 0 without the hook.
   */
  remeasured: number;
  /** Where the wall time went. */
  timings: TuneTimings;
}

/** One round's candidates on their way through measurement and observation. */
interface Round {
  /** Proposals already measured (this run or recorded) or in flight: observed by key. */
  known: { candidate: Candidate; key: string }[];
  /** Observations of the new candidates, in the order their results arrive. */
  fresh: Observation[];
  /** Resolves when every new candidate of the round has a recorded result. */
  done: Promise<void>;
}

/** The default {@link TuneOptions.keyOf}. */
export async function candidateKey(c: Candidate): Promise<string> {
  return c.trace ? await traceHash(c.trace) : (c.knobs ?? []).join(",");
}

/** Runs the tuning loop; see the module documentation. */
export async function tune(o: TuneOptions): Promise<TuneOutcome> {
  checkTuneOptions(o);
  const batchSize = o.batchSize ?? LOOP_DEFAULTS.batchSize;
  if (o.race !== undefined && !(o.race >= 1)) {
    throw new RangeError(`race must be a factor >= 1, got ${o.race}`);
  }
  const patience = o.patience ?? LOOP_DEFAULTS.patience;
  const overlap = o.overlap ?? false;
  const keyOf = o.keyOf ?? candidateKey;
  const started = performance.now();
  const timings: TuneTimings = { wall: 0, propose: 0, observe: 0, key: 0, measure: 0, records: 0 };
  type Part = Exclude<keyof TuneTimings, "wall">;
  const timed = async <T>(part: Part, f: () => T | Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      timings[part] += (performance.now() - t0) / 1000;
    }
  };
  // A transient result (the worker lost, a timeout under load) is not final: measured again.
  const recorded = await timed("records", async () =>
    new Map(
      [...await o.store.measured(o.runId)].filter(([, r]) => !isTransient(r.errorKind)),
    ));
  const seen = new Map<string, ResultRow>();
  /** Keys recorded in the store whose result has not arrived yet. */
  const pending = new Set<string>();
  let valid = 0, errors = 0, bestSeconds = Infinity;
  const count = (r: { errorKind: ErrorKind; seconds: number | null }) => {
    // As the records count: "none" is valid, timed or not (a checker such as OpenCL does not time).
    if (r.errorKind === "none") {
      valid++;
      if (r.seconds) bestSeconds = Math.min(bestSeconds, r.seconds);
    } else errors++;
  };
  const report = () =>
    o.onProgress?.({
      done: seen.size,
      total: o.trials,
      valid,
      errors,
      ...(o.flops && Number.isFinite(bestSeconds)
        ? { bestGflops: o.flops / bestSeconds / 1e9 }
        : {}),
      elapsed: (performance.now() - started) / 1000,
    });

  let idle = 0;
  // The time parts of each result (see the module documentation).
  let strategyAttributed = 0;
  /** Strategy seconds inside the next result's gap, not yet taken out of a framework figure. */
  let strategyUncharged = 0;
  let lastArrival = started;
  /** The round being measured (with `overlap`, while the next one is handed over). */
  let inFlight: Round | undefined;

  /** Waits for the round in flight, then tells the strategy what it gave. */
  const settle = async () => {
    const round = inFlight;
    if (!round) return;
    inFlight = undefined;
    await round.done;
    const observations = [
      ...round.known.flatMap(({ candidate, key }) => {
        const row = seen.get(key);
        return row ? [observationOf(candidate, row)] : [];
      }),
      ...round.fresh,
    ];
    await timed("observe", () => o.strategy.observe(observations));
    await remeasureAsked();
  };
  let remeasured = 0;
  /** Times again what the strategy asks for (not a trial, not recorded) and tells it. */
  const remeasureAsked = async () => {
    const again = o.strategy.remeasure?.() ?? [];
    if (again.length === 0) return;
    remeasured += again.length;
    const results = await timed("measure", () => o.measurer.measure(again));
    const figures = results.map((r, i): Observation => ({
      candidate: again[i],
      errorKind: r.errorKind,
      ...(r.errorKind === "none" && r.times.length > 0 ? { seconds: median(r.times) } : {}),
    }));
    await timed("observe", () => o.strategy.observeRemeasured?.(figures));
  };
  const outcome = async (stop: TuneOutcome["stop"]): Promise<TuneOutcome> => {
    await settle();
    timings.wall = (performance.now() - started) / 1000;
    return { measured: seen.size, stop, timings, remeasured };
  };

  while (seen.size + pending.size < o.trials) {
    if (o.timeLimitSeconds && (performance.now() - started) / 1000 > o.timeLimitSeconds) {
      return await outcome("time");
    }
    const proposals = await timed(
      "propose",
      () => o.strategy.propose(Math.min(batchSize, o.trials - seen.size - pending.size)),
    );
    const known: Round["known"] = [];
    const fresh: { candidate: Candidate; key: string }[] = [];
    const inBatch = new Set<string>();
    for (const candidate of proposals) {
      const key = await timed("key", () => keyOf(candidate));
      const old = seen.get(key) ?? recorded.get(key);
      if (old) {
        if (!seen.has(key)) {
          seen.set(key, old);
          count(old);
        }
        known.push({ candidate, key });
      } else if (pending.has(key)) {
        // Being measured in the round in flight: observed once its result is in.
        known.push({ candidate, key });
      } else if (!inBatch.has(key) && seen.size + pending.size + fresh.length < o.trials) {
        inBatch.add(key);
        fresh.push({ candidate, key });
      }
    }
    const round: Round = { known, fresh: [], done: Promise.resolve() };
    if (fresh.length === 0) {
      // Only re-proposals: tell the strategy again, and give up on a stuck or exhausted space.
      if (!overlap) {
        inFlight = round;
        await settle();
      } else {
        await settle();
        inFlight = round;
      }
      if (proposals.length === 0 || ++idle >= patience) return await outcome("exhausted");
      continue;
    }
    idle = 0;

    // Record before measuring: a killed run finds these again on resume.
    const ids = await timed("records", async () => {
      const out: number[] = [];
      for (const [i, { candidate, key }] of fresh.entries()) {
        out.push(
          await o.store.addCandidate(o.runId, {
            trial: (o.firstTrial ?? 0) + seen.size + pending.size + i,
            trace: JSON.stringify(candidate.trace ?? null),
            traceHash: key,
            ...(candidate.knobs ? { knobs: candidate.knobs } : {}),
          }),
        );
      }
      return out;
    });
    fresh.forEach(({ key }) => pending.add(key));
    const strategyRound = timings.propose + timings.observe - strategyAttributed;
    const strategyShare = strategyRound / fresh.length;
    strategyAttributed += strategyRound;
    strategyUncharged += strategyRound;
    /** Store writes of this round's results, one after another in arrival order. */
    let writes = Promise.resolve();
    const finish = (i: number, r: MeasureResult) => {
      const arrival = performance.now();
      const gap = (arrival - lastArrival) / 1000;
      lastArrival = arrival;
      // The round's strategy time lies in its first result's gap: taken out there, once.
      const frameworkSeconds = Math.max(
        0,
        gap - r.buildSeconds - r.runSeconds - strategyUncharged,
      );
      strategyUncharged = 0;
      writes = writes.then(async () => {
        const row = await timed("records", () =>
          o.store.addResult(ids[i], {
            errorKind: r.errorKind,
            ...(r.error !== undefined ? { error: r.error } : {}),
            times: r.times,
            buildSeconds: r.buildSeconds,
            runSeconds: r.runSeconds,
            ...(r.verifySeconds !== undefined ? { verifySeconds: r.verifySeconds } : {}),
            strategySeconds: strategyShare,
            frameworkSeconds,
            ...(r.conditions ? { conditions: r.conditions } : {}),
          }));
        pending.delete(fresh[i].key);
        seen.set(fresh[i].key, row);
        count(row);
        round.fresh.push(observationOf(fresh[i].candidate, row));
        o.onMeasured?.({
          candidate: fresh[i].candidate,
          key: fresh[i].key,
          result: row,
          done: seen.size,
          bestSeconds,
        });
        report();
      });
      // A failed write rejects where the round is awaited, not as an unhandled rejection before.
      writes.catch(() => {});
    };
    const cutoff = o.race !== undefined && Number.isFinite(bestSeconds)
      ? { cutoffSeconds: o.race * bestSeconds }
      : {};
    round.done = timed("measure", async () => {
      const arrived = new Set<number>();
      try {
        const results = await o.measurer.measure(fresh.map((f) => f.candidate), {
          ...cutoff,
          onResult: (i, r) => {
            if (arrived.has(i)) return;
            arrived.add(i);
            finish(i, r);
          },
        });
        // A measurer that returns results without announcing them: record the rest.
        results.forEach((r, i) => {
          if (!arrived.has(i)) finish(i, r);
        });
      } finally {
        await writes;
      }
    });
    // A failing measurer rejects when awaited, not as an unhandled rejection meanwhile.
    round.done.catch(() => {});
    if (overlap) {
      // Observe the previous round while this one is measured.
      await settle();
      inFlight = round;
    } else {
      inFlight = round;
      await settle();
    }
  }
  return await outcome("trials");
}

function observationOf(candidate: Candidate, r: ResultRow): Observation {
  return {
    candidate,
    errorKind: r.errorKind,
    ...(r.seconds !== null ? { seconds: r.seconds } : {}),
  };
}
