/**
 * The tuning loop: the one module that wires search, measurement and
 * records together.
 *
 * Each round asks the strategy for a batch, drops candidates this run has
 * already measured (their recorded result is observed again at no cost),
 * records the new ones before building them, builds them in parallel,
 * measures them one at a time in the worker pool, records each result as it
 * arrives, and tells the strategy. A run killed at any moment resumes from
 * the database: the strategy is replayed from its seed, recorded results are
 * fed back instead of measured, and nothing finished is measured twice.
 * @module
 */
import { type Trace, traceHash } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import type { RecordsDB, ResultInput, ResultRow } from "../datasets/db.ts";
import type { Builder } from "../measure/builder.ts";
import type { Runner } from "../measure/runner.ts";
import type { BuildResult, ErrorKind, MeasureInput } from "../measure/types.ts";
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
}

/** What a finished (or stopped) tuning loop reports. */
export interface TuneOutcome {
  /** Distinct candidates measured in this run, including earlier sessions. */
  measured: number;
  /** Why the loop stopped. */
  stop: "trials" | "exhausted" | "time";
}

/** Runs the tuning loop; see the module documentation. */
export async function tune(o: TuneOptions): Promise<TuneOutcome> {
  const batchSize = o.batchSize ?? 8;
  const patience = o.patience ?? 20;
  const started = performance.now();
  const flops = o.workload.flops;
  const recorded = o.db.measured(o.runId);
  const seen = new Map<string, ResultRow>();
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
  while (seen.size < o.trials) {
    if (o.timeLimitSeconds && (performance.now() - started) / 1000 > o.timeLimitSeconds) {
      return { measured: seen.size, stop: "time" };
    }
    const proposals = o.strategy.propose(Math.min(batchSize, o.trials - seen.size));
    const observations: Observation[] = [];
    const fresh: { candidate: Candidate; hash: string }[] = [];
    const inBatch = new Set<string>();
    for (const candidate of proposals) {
      if (!candidate.trace) {
        throw new TypeError(
          `Strategy "${o.strategy.name}" proposed a candidate without a trace: live tuning builds schedules (give knob strategies a template's candidateOf)`,
        );
      }
      const hash = await traceHash(candidate.trace);
      const old = seen.get(hash) ?? recorded.get(hash);
      if (old) {
        if (!seen.has(hash)) {
          seen.set(hash, old);
          count(old);
        }
        observations.push(observationOf(candidate, old));
      } else if (!inBatch.has(hash) && seen.size + fresh.length < o.trials) {
        inBatch.add(hash);
        fresh.push({ candidate, hash });
      }
    }
    if (fresh.length === 0) {
      // Only re-proposals: tell the strategy again, and give up on a stuck or exhausted space.
      await o.strategy.observe(observations);
      if (++idle >= patience) return { measured: seen.size, stop: "exhausted" };
      continue;
    }
    idle = 0;

    // Record before building: a killed run finds these again on resume.
    const ids = fresh.map(({ candidate, hash }, i) =>
      o.db.addCandidate(o.runId, {
        trial: seen.size + i,
        trace: JSON.stringify(candidate.trace!),
        traceHash: hash,
        knobs: candidate.knobs,
      })
    );
    const sources = fresh.map(({ candidate }) => (o.source ?? kernelSource)(candidate.trace!));
    reference ??= await buildReference(o.referenceBuilder ?? o.builder, o.workload);
    const toBuild = sources.flatMap((s, i) => "source" in s ? [{ i, source: s.source }] : []);
    const built = await o.builder.build(toBuild.map(({ source }) => ({ source })));
    const buildOf = new Map<number, BuildResult>(toBuild.map(({ i }, j) => [i, built[j]]));
    const toRun: { i: number; input: MeasureInput }[] = [];
    const finish = (i: number, r: ResultInput) => {
      o.db.addResult(ids[i], r);
      const row = o.db.measured(o.runId).get(fresh[i].hash)!;
      seen.set(fresh[i].hash, row);
      count(row);
      observations.push(observationOf(fresh[i].candidate, row));
      report();
    };
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
          reference: reference!,
          signature,
          seed: o.inputSeed ?? 0,
          atol,
          rtol,
        },
      });
    });
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
    await o.strategy.observe(observations);
  }
  return { measured: seen.size, stop: "trials" };
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
