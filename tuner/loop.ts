/**
 * The tuning loop: the one module that wires search, measurement and
 * records together.
 *
 * Each round asks the strategy for a batch, drops candidates this run has
 * already measured (their recorded result is observed again at no cost),
 * records the new ones before building them, builds them in parallel,
 * measures them one at a time in the worker pool, records each result as it
 * arrives, and tells the strategy. With `overlap` the rounds form a pipeline:
 * round k+1 is proposed and built while round k is measured, and round k is
 * observed while round k+1 is measured. A run killed at any moment resumes from
 * the database: the strategy is replayed from its seed, recorded results are
 * fed back instead of measured, and nothing finished is measured twice. A
 * result of a transient error kind (`isTransient`: the worker lost, a timeout
 * under load) is not finished: a resumed run measures it again.
 * @module
 */
import { type Trace, traceHash } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import type { RecordsDB, ResultInput, ResultRow } from "../datasets/db.ts";
import type { Builder } from "../measure/builder.ts";
import type { Runner } from "../measure/runner.ts";
import type { Measurer } from "../measure/measurer.ts";
import {
  type BuildResult,
  type ErrorKind,
  isTransient,
  type MeasureInput,
} from "../measure/types.ts";
import type { Candidate, Observation, Strategy } from "../search/strategy.ts";
import {
  type KernelSource,
  kernelSource,
  referenceSource,
  signatureOf,
  toleranceOf,
} from "./kernel.ts";
import type { Progress } from "./progress.ts";

/** Options of {@link tune}. */
export interface TuneOptions {
  workload: Workload;
  strategy: Strategy;
  /** Distinct candidates to measure (failures count). */
  trials: number;
  db: RecordsDB;
  /** The run to record into (from `db.startRun`, or a resumed run). */
  runId: number;
  builder: Builder;
  runner: Runner;
  /** Candidates proposed per round. Default 8. */
  batchSize?: number;
  /** Seed of the measurement inputs. Default 0. */
  inputSeed?: number;
  /** Stop after this many wall seconds (unfinished runs can be resumed). */
  timeLimitSeconds?: number;
  /** Rounds in a row without a new candidate before the space counts as exhausted. Default 20. */
  patience?: number;
  /** Called after every recorded result. */
  onProgress?: (p: Progress) => void;
  /** Turns a trace into C (tests inject faulty kernels here). Default {@link kernelSource}. */
  source?: (trace: Trace) => KernelSource;
  /**
   * Builds the C reference kernel when `builder` builds another language
   * (CUDA candidates are checked against the C reference). Default `builder`.
   */
  referenceBuilder?: Builder;
  /**
   * Build round k+1 while round k is measured (and observe round k while
   * round k+1 is measured). Proposals then lag one round behind the
   * observations. Give it a builder with `background` (as `runSession`
   * does): compilers at normal priority on the cores being measured perturb
   * the timings badly (bench/tuning_throughput.ts measures both effects).
   * Default false: build, then measure, then observe, one round at a time.
   */
  overlap?: boolean;
  /**
   * Racing: a candidate whose first timing repeat is more than `race` times
   * slower than the best kernel of the run so far gets no further repeats
   * (its record has one time). Saves most of the measurement time of
   * candidates that cannot compete. Default: every candidate gets every repeat.
   */
  race?: number;
  /**
   * Measures the candidates instead of `builder` and `runner` (a remote queue
   * of workers, `remote/remote_measurer.ts`): the loop sends each round's new
   * candidates as one batch and records each result as it arrives.
   */
  measurer?: Measurer;
}

/**
 * Wall seconds the loop spent in each part of a run (summed over rounds).
 * With `overlap`, `build` and `measure` run at the same time, so the parts
 * can add up to more than `wall`.
 */
export interface TuneTimings {
  /** From the start of {@link tune} to its return. */
  wall: number;
  /** Strategy `propose` calls (search). */
  propose: number;
  /** Strategy `observe` calls (model updates). */
  observe: number;
  /** Trace hashing, replay, lowering and C generation of proposals. */
  source: number;
  /** Waiting for the builder (each round's batch, start to finish). */
  build: number;
  /** Waiting for the runner (each round's batch, start to finish). */
  measure: number;
  /** Records database writes and reads. */
  records: number;
}

/** What a finished (or stopped) tuning loop reports. */
export interface TuneOutcome {
  /** Distinct candidates measured in this run, including earlier sessions. */
  measured: number;
  /** Why the loop stopped. */
  stop: "trials" | "exhausted" | "time";
  /** Where the wall time went. */
  timings: TuneTimings;
}

/** One round's candidates on their way through build, measurement and observation. */
interface Round {
  /** Proposals already measured (this run or recorded) or in an earlier round: observed by hash. */
  known: { candidate: Candidate; hash: string }[];
  /** Observations of the new candidates, in the order their results arrive. */
  fresh: Observation[];
  /** Resolves when every new candidate of the round has a result. */
  done: Promise<void>;
}

/** Runs the tuning loop; see the module documentation. */
export async function tune(o: TuneOptions): Promise<TuneOutcome> {
  const batchSize = o.batchSize ?? 8;
  if (o.race !== undefined && !(o.race >= 1)) {
    throw new RangeError(`race must be a factor >= 1, got ${o.race}`);
  }
  const patience = o.patience ?? 20;
  const overlap = o.overlap ?? false;
  const started = performance.now();
  const timings: TuneTimings = {
    wall: 0,
    propose: 0,
    observe: 0,
    source: 0,
    build: 0,
    measure: 0,
    records: 0,
  };
  const timed = <T>(part: Exclude<keyof TuneTimings, "wall">, f: () => T): T => {
    const t0 = performance.now();
    try {
      return f();
    } finally {
      timings[part] += (performance.now() - t0) / 1000;
    }
  };
  const timedAsync = async <T>(
    part: Exclude<keyof TuneTimings, "wall">,
    f: () => Promise<T>,
  ): Promise<T> => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      timings[part] += (performance.now() - t0) / 1000;
    }
  };
  const flops = o.workload.flops;
  // A transient result (the worker lost, a timeout under load) is not final: measured again.
  const recorded = timed(
    "records",
    () => new Map([...o.db.measured(o.runId)].filter(([, r]) => !isTransient(r.errorKind))),
  );
  const seen = new Map<string, ResultRow>();
  /** Candidates recorded in the database whose result has not arrived yet. */
  const pending = new Set<string>();
  let valid = 0, errors = 0, best: number | undefined;
  const count = (r: { errorKind: ErrorKind; seconds: number | null }) => {
    if (r.errorKind === "none" && r.seconds) {
      valid++;
      const g = flops / r.seconds / 1e9;
      if (best === undefined || g > best) best = g;
    } else errors++;
  };
  const report = () =>
    o.onProgress?.({
      done: seen.size,
      total: o.trials,
      valid,
      errors,
      bestGflops: best,
      elapsed: (performance.now() - started) / 1000,
    });

  const signature = signatureOf(o.workload);
  const { atol, rtol } = toleranceOf(o.workload);
  let reference: string | undefined;
  let idle = 0;
  /** The round being measured (with `overlap`, while the next one builds). */
  let inFlight: Round | undefined;

  /** Waits for the round in flight, then tells the strategy what it gave. */
  const settle = async () => {
    const round = inFlight;
    if (!round) return;
    inFlight = undefined;
    await round.done;
    const observations = [
      ...round.known.flatMap(({ candidate, hash }) => {
        const row = seen.get(hash);
        return row ? [observationOf(candidate, row)] : [];
      }),
      ...round.fresh,
    ];
    await timedAsync("observe", async () => await o.strategy.observe(observations));
  };
  const outcome = async (stop: TuneOutcome["stop"]): Promise<TuneOutcome> => {
    await settle();
    timings.wall = (performance.now() - started) / 1000;
    return { measured: seen.size, stop, timings };
  };

  while (seen.size + pending.size < o.trials) {
    if (o.timeLimitSeconds && (performance.now() - started) / 1000 > o.timeLimitSeconds) {
      return await outcome("time");
    }
    const proposals = timed(
      "propose",
      () => o.strategy.propose(Math.min(batchSize, o.trials - seen.size - pending.size)),
    );
    const known: Round["known"] = [];
    const fresh: { candidate: Candidate; hash: string }[] = [];
    const inBatch = new Set<string>();
    for (const candidate of proposals) {
      if (!candidate.trace) {
        throw new TypeError(
          `Strategy "${o.strategy.name}" proposed a candidate without a trace: live tuning builds schedules (give knob strategies a template's candidateOf)`,
        );
      }
      const t0 = performance.now();
      const hash = await traceHash(candidate.trace);
      timings.source += (performance.now() - t0) / 1000;
      const old = seen.get(hash) ?? recorded.get(hash);
      if (old) {
        if (!seen.has(hash)) {
          seen.set(hash, old);
          count(old);
        }
        known.push({ candidate, hash });
      } else if (pending.has(hash)) {
        // Being measured in the round in flight: observed once its result is in.
        known.push({ candidate, hash });
      } else if (!inBatch.has(hash) && seen.size + pending.size + fresh.length < o.trials) {
        inBatch.add(hash);
        fresh.push({ candidate, hash });
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
      if (++idle >= patience) return await outcome("exhausted");
      continue;
    }
    idle = 0;

    // Record before building: a killed run finds these again on resume.
    const ids = timed(
      "records",
      () =>
        fresh.map(({ candidate, hash }, i) =>
          o.db.addCandidate(o.runId, {
            trial: seen.size + pending.size + i,
            trace: JSON.stringify(candidate.trace!),
            traceHash: hash,
            knobs: candidate.knobs,
          })
        ),
    );
    fresh.forEach(({ hash }) => pending.add(hash));
    const finish = (i: number, r: ResultInput) => {
      const row = timed("records", () => {
        o.db.addResult(ids[i], r);
        return o.db.measured(o.runId).get(fresh[i].hash)!;
      });
      pending.delete(fresh[i].hash);
      seen.set(fresh[i].hash, row);
      count(row);
      round.fresh.push(observationOf(fresh[i].candidate, row));
      report();
    };
    if (o.measurer) {
      const m = o.measurer;
      const previous = inFlight;
      if (previous) await previous.done;
      const cutoff = o.race !== undefined && best !== undefined
        ? { cutoffSeconds: o.race * flops / (best * 1e9) }
        : {};
      round.done = timedAsync("measure", async () => {
        await m.measure(fresh.map((f) => f.candidate), {
          ...cutoff,
          onResult: (i, r) => finish(i, r),
        });
      });
      round.done.catch(() => {});
      if (overlap) {
        await settle();
        inFlight = round;
      } else {
        inFlight = round;
        await settle();
      }
      continue;
    }
    const sources = timed(
      "source",
      () => fresh.map(({ candidate }) => (o.source ?? kernelSource)(candidate.trace!)),
    );
    reference ??= await buildReference(o.referenceBuilder ?? o.builder, o.workload);
    const toBuild = sources.flatMap((s, i) => "source" in s ? [{ i, source: s.source }] : []);
    const built = await timedAsync(
      "build",
      () => o.builder.build(toBuild.map(({ source }) => ({ source }))),
    );
    const buildOf = new Map<number, BuildResult>(toBuild.map(({ i }, j) => [i, built[j]]));
    const toRun: { i: number; input: MeasureInput }[] = [];
    // The previous round's measurement ran while this one built.
    const previous = inFlight;
    if (previous) await previous.done;
    fresh.forEach((_, i) => {
      const s = sources[i];
      if ("error" in s) {
        return finish(i, {
          errorKind: "instantiation_error",
          error: s.error,
          times: [],
          buildSeconds: 0,
          runSeconds: 0,
        });
      }
      const b = buildOf.get(i)!;
      if (b.errorKind !== "none") {
        return finish(i, {
          errorKind: b.errorKind,
          error: b.error,
          times: [],
          buildSeconds: b.buildSeconds,
          runSeconds: 0,
        });
      }
      toRun.push({
        i,
        input: {
          artifact: b.artifact!,
          ...(b.symbol ? { symbol: b.symbol } : {}),
          reference: reference!,
          signature,
          seed: o.inputSeed ?? 0,
          ...looser({ atol, rtol }, s.tolerance),
          ...(o.race !== undefined && best !== undefined
            ? { cutoffSeconds: o.race * flops / (best * 1e9) }
            : {}),
        },
      });
    });
    round.done = timedAsync("measure", async () => {
      await o.runner.run(toRun.map((t) => t.input), (j, r) => {
        const { i } = toRun[j];
        finish(i, {
          errorKind: r.errorKind,
          error: r.error,
          times: r.times,
          buildSeconds: buildOf.get(i)!.buildSeconds,
          runSeconds: r.runSeconds,
        });
      });
    });
    // A failing runner rejects when awaited, not as an unhandled rejection meanwhile.
    round.done.catch(() => {});
    if (overlap) {
      // Observe the previous round while this one is measured; the next round builds meanwhile.
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

/** Builds the reference kernel; a failure here is a bug, so it throws. */
async function buildReference(builder: Builder, w: Workload): Promise<string> {
  const [r] = await builder.build([{ source: referenceSource(w) }]);
  if (r.errorKind !== "none" || !r.artifact) {
    throw new Error(`The reference kernel of ${w.name} did not build: ${r.error}`);
  }
  return r.artifact;
}

/** The looser of two tolerances, elementwise (the second may be absent). */
function looser(
  a: { atol: number; rtol: number },
  b?: { atol: number; rtol: number },
): { atol: number; rtol: number } {
  return b ? { atol: Math.max(a.atol, b.atol), rtol: Math.max(a.rtol, b.rtol) } : a;
}
