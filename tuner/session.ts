/**
 * A tuning session: opens or resumes a run in the records database, sets up
 * builder, runner and strategy, runs {@link tune}, and summarises the run
 * from what the database holds.
 * @module
 */
import { DatabaseError, RecordsDB } from "../datasets/db.ts";
import { printTrace, type Trace } from "../ir/trace.ts";
import { createWorkload, type Workload } from "../ir/workloads.ts";
import { createBuilder } from "../measure/builder.ts";
import { isTransient, type TimingOptions } from "../measure/types.ts";
import type { Candidate, Observation, Strategy } from "../search/strategy.ts";
import { type RecordStore, sqliteRecordStore } from "../datasets/record_store.ts";
import { isPostgresUrl, loadPostgresStore } from "../datasets/postgres_url.ts";
import { checkStoredCandidates } from "../datasets/integrity.ts";
import type { Measurer } from "../measure/measurer.ts";
import { withConditions } from "../measure/conditions.ts";
import { type RankingNoise, rankingOfResults } from "./ranking_noise.ts";
import { priorCudaResults, type PriorResult } from "../measure/cuda_prior.ts";
import type { KernelSource } from "../measure/kernel_source.ts";
import { type ReplaySpace, replaySpaceFromFile } from "../search/replay.ts";
import { cacheName } from "../datasets/cache_names.ts";
import { recordTarget, resolveTarget } from "../ir/target.ts";
import { ALL_MATH, type MathKind } from "../ir/gemm_math.ts";
import { gemmConfigs } from "../search/gemm_configs.ts";
import { tune } from "./loop.ts";
import { type Confirmation, confirmedRunOf, confirmRun, readConfirmation } from "./confirm.ts";
import { describeMachine, tunebookVersion } from "../datasets/machine.ts";
import type { Progress } from "./progress.ts";
import { strategyFor, strategyProblem } from "./tune_strategy.ts";
import { parseStrategyName, resolveStrategy } from "./presets.ts";
import { targetMeasurer, targetSource } from "./target_measurer.ts";
import { DEFAULTS, finalistTimingOf, inRange, RANGES } from "../ir/defaults.ts";
import {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkKnown,
  checkNumber,
  checkObject,
  checkString,
  described,
} from "../ir/check.ts";

/**
 * What a session needs; `resume` takes everything else from the stored run.
 * Only `db` and one of `workload`, `space` or `traces` are required; every
 * other option has `tune`'s default (ir/defaults.ts `DEFAULTS.tune`), so a
 * call and the command with the same flags record the same run.
 */
export interface SessionOptions {
  /**
   * Path of the records database (SQLite), or a `postgres://` URL (a shared
   * PostgreSQL one). Required (the command's default is `DEFAULTS.tune.db`, `runs.db`).
   */
  db: string;
  /**
   * Continue the last unfinished run of the database (or run `runId`) with
   * its stored options; an option given here that contradicts one of them
   * throws {@link ResumeConflictError}. A finished run (`runId`, or the
   * database's last run when none is unfinished) that holds results of a
   * transient error kind has exactly those candidates measured again, then
   * is finished again. Default false.
   */
  resume?: boolean;
  /** With `resume`: the run to continue. Default: the last unfinished run. */
  runId?: number;
  /** Stops the run after the round in flight; it stays unfinished, so resumable. Default: none. */
  signal?: AbortSignal;
  /** Called with the run id once the run is opened or created. Default: nothing. */
  onStart?: (runId: number) => void;
  /**
   * The workload to tune, by library name and shape (`{ name: "matmul",
   * shape: [64, 64, 64] }`, see `WORKLOADS`). Default: that of `traces`.
   */
  workload?: { name: string; shape: number[] };
  /**
   * A Kernel Tuner cache (a name from data/kerneltuner or a path) replayed
   * instead of measuring a workload: knob strategies search its space and
   * every record is a lookup (`target` "replay"). Default: none (a workload is measured).
   */
  space?: string;
  /**
   * Strategy name (`STRATEGY_NAMES`, or `ansor`), or `STRATEGY@PRESET`
   * (tuner/presets.ts; the run stores the preset's settings as `config.hyper`).
   * Default `DEFAULTS.tune.strategy` (`"random"`).
   */
  strategy?: string;
  /**
   * The settings of a `STRATEGY@PRESET` strategy as a run recorded them
   * (`config.hyper`; `reproduce` passes them): given, the preset is not read
   * again. Default: the preset's.
   */
  hyper?: Record<string, number | string>;
  /** Knob template for the knob strategies (grid, sa, ga, ...). Default: the workload's. */
  template?: string;
  /** Seed of the strategy and of the inputs. Default `DEFAULTS.tune.seed` (1). */
  seed?: number;
  /** Distinct candidates to measure. Default `DEFAULTS.tune.trials` (64), or the number of `traces`. */
  trials?: number;
  /** Measure exactly these traces instead of searching. Default: search. */
  traces?: Trace[];
  /** `"cpu"`, `"cuda"` or `"opencl"` (`"replay"` with `space`). Default `DEFAULTS.tune.target` (`"cpu"`). */
  target?: string;
  /** Candidates per round. Default `DEFAULTS.tune.batch` (8). */
  batch?: number;
  /** Build round k+1 while round k is measured (see `TuneOptions.overlap` in loop.ts). Default false. */
  overlap?: boolean;
  /** Racing factor (see `TuneOptions.race` in loop.ts). Default: off. */
  race?: number;
  /** Seconds one measurement may take. Default `DEFAULTS.tune.timeoutSeconds` (10). */
  timeoutSeconds?: number;
  /**
   * How each trial is timed; missing fields take the defaults. Default
   * `DEFAULTS.tune.timing` (1 call per repeat, 3 repeats of at least 10 ms, 1
   * warmup call), on target cuda `DEFAULTS.tune.finalistTiming` (40 ms).
   */
  timing?: Partial<TimingOptions>;
  /**
   * How the finalists are timed again; missing fields take the trials'
   * timing. Default `finalistTimingOf(timing)` (ir/defaults.ts): each repeat
   * at least 40 ms, or the trials' own minimum where that is longer. Stored
   * with the run.
   */
  finalistTiming?: Partial<TimingOptions>;
  /** Target `cuda`: overwrite the L2 cache before each timed repeat (stored with the run). Default false. */
  flushL2?: boolean;
  /**
   * Target `cuda`: the arithmetic the kernels may use (`ir/gemm_math.ts`;
   * stored with the run). Default every kind.
   */
  math?: MathKind[];
  /**
   * Target `cuda`: measure the GEMM template's hand-written configurations
   * first (`search/gemm_configs.ts`, Triton-style configs), for a workload the
   * template covers; stored with the run. Default true; false leaves them out.
   */
  configs?: boolean;
  /** Called after every recorded result. Default: nothing. */
  onProgress?: (p: Progress) => void;
  /** Stop after this many seconds (the run stays resumable). Default: no limit. */
  timeLimitSeconds?: number;
  /** Directory of the kernel cache. Default `$TUNEBOOK_CACHE`, else `.cache/kernels`. */
  cacheDir?: string;
  /**
   * Most candidates compiled together in one file by one compiler process (a
   * unity build, see measure/builder.ts). Default `DEFAULTS.tune.unity` (8),
   * 1 on target cuda.
   */
  unity?: number;
  /** Replaces code generation (tests inject faulty kernels). Default: `kernelSource`. */
  source?: (trace: Trace) => KernelSource;
  /** Target `cuda`: called with one line per candidate built by nvcc (its ptxas resources). Default: nothing. */
  onBuilt?: (line: string) => void;
  /**
   * Measures with this instead of the local builder and runner (target cpu):
   * called with the run's stored configuration, e.g. a remote queue of
   * workers (`tune --queue`). `machine` and `compiler` describe where it
   * measures, for a new run's record. Called a second time, with the
   * finalists' timing, for their re-timing when that differs from the
   * trials'. Default: the local builder and runner.
   */
  measurer?: (config: MeasurerConfig) => Promise<RemoteMeasurement>;
  /**
   * Finalists: after the search, the run's this many fastest distinct valid
   * candidates are timed again in `finalistRounds` interleaved rounds with
   * the run's harness at `finalistTiming` (tuner/confirm.ts), and the summary's best is the
   * one with the best median over those rounds (stored with the run; 0:
   * none). Default `DEFAULTS.tune.finalists` (3) for a search, 0 for a
   * trace-file run or a replayed cache.
   */
  finalists?: number;
  /** Rounds of the finalists' re-timing. Default `DEFAULTS.tune.finalistRounds` (3). */
  finalistRounds?: number;
  /**
   * Strategy `sa`: a newcomer that beats the incumbent by less than this
   * fraction of its time waits for the incumbent to be timed again
   * (search/annealing.ts; the re-timing is not a trial and is not recorded,
   * so a resumed run may move differently after its first one). Stored with
   * the run. Default 0: never.
   */
  remeasureMargin?: number;
}

/** The options {@link runSession} knows (any other is refused, naming it). */
const SESSION_OPTIONS: readonly string[] = [
  "db",
  "resume",
  "runId",
  "signal",
  "onStart",
  "workload",
  "space",
  "strategy",
  "hyper",
  "template",
  "seed",
  "trials",
  "traces",
  "target",
  "batch",
  "overlap",
  "race",
  "timeoutSeconds",
  "timing",
  "flushL2",
  "math",
  "configs",
  "onProgress",
  "timeLimitSeconds",
  "cacheDir",
  "unity",
  "source",
  "onBuilt",
  "measurer",
  "finalists",
  "finalistRounds",
  "finalistTiming",
  "remeasureMargin",
];

/** Throws a TypeError/RangeError naming the first option of `o` that {@link runSession} cannot take. */
function checkSessionOptions(o: unknown): void {
  const x = checkObject(o, "session options");
  checkKnown(x, SESSION_OPTIONS, "session options");
  checkString(x.db, "db", { what: "a records database path or postgres:// URL" });
  if (x.workload !== undefined) {
    const w = checkObject(x.workload, "workload");
    checkString(w.name, "workload.name", {
      what: 'a workload name such as "matmul"',
      allowEmpty: true,
    });
    if (!Array.isArray(w.shape) || !w.shape.every(Number.isInteger)) {
      throw new TypeError(`workload.shape must be a list of integers, got ${described(w.shape)}`);
    }
  }
  for (const k of ["space", "strategy", "template", "target", "cacheDir"]) {
    checkString(x[k], k, { optional: true });
  }
  for (const k of ["resume", "overlap", "flushL2", "configs"]) {
    checkBoolean(x[k], k, { optional: true });
  }
  checkInteger(x.runId, "runId", { min: 1, optional: true });
  for (const k of ["seed", "trials", "batch", "unity", "finalists", "finalistRounds"] as const) {
    const r = RANGES[k];
    if (r) checkInteger(x[k], k, { min: r.min, max: r.max, optional: true });
    else checkInteger(x[k], k, { optional: true });
  }
  checkNumber(x.timeoutSeconds, "timeoutSeconds", { min: 0, above: true, optional: true });
  checkNumber(x.timeLimitSeconds, "timeLimitSeconds", { min: 0, above: true, optional: true });
  checkNumber(x.remeasureMargin, "remeasureMargin", { min: 0, optional: true });
  const named = x.strategy === undefined ? undefined : String(x.strategy).split("@")[0];
  if (x.remeasureMargin && (x.resume ? named !== undefined && named !== "sa" : named !== "sa")) {
    throw new RangeError(
      `remeasureMargin: only strategy sa re-times its incumbent, not ${described(x.strategy)}`,
    );
  }
  if (x.timing !== undefined) checkObject(x.timing, "timing");
  if (x.finalistTiming !== undefined) checkObject(x.finalistTiming, "finalistTiming");
  if (x.hyper !== undefined) checkObject(x.hyper, "hyper");
  if (x.traces !== undefined && !Array.isArray(x.traces)) {
    throw new TypeError(`traces must be a list of traces, got ${described(x.traces)}`);
  }
  for (const k of ["onStart", "onProgress", "source", "onBuilt", "measurer"]) {
    checkFunction(x[k], k, { optional: true });
  }
}

/** What a {@link SessionOptions.measurer} factory is given: how the run measures. */
export interface MeasurerConfig {
  /** The run's target (`"cpu"`, ...). */
  target: string;
  /** Timing of each measurement. */
  timing: TimingOptions;
  /** Seconds one measurement may take. */
  timeoutSeconds: number;
  /** Seed of the kernels' input data (0 today). */
  inputSeed: number;
}

/** A measurer made by {@link SessionOptions.measurer}, with where it measures. */
export interface RemoteMeasurement {
  /** Measures the run's candidates. */
  measurer: Measurer;
  /** The machine it measures on, as recorded. Default: this machine. */
  machine?: Record<string, unknown>;
  /**
   * The compiler it builds with, as recorded. Needed by a new run (not a resumed one): with a
   * remote measurer there is no local builder to describe.
   */
  compiler?: string;
}

/** The one-line summary `tune` prints. */
export interface Summary {
  /** Workload name. */
  workload: string;
  /** Workload shape. */
  shape: number[];
  /** Target of the run. */
  target: string;
  /** Strategy of the run. */
  strategy: string;
  /** Candidates recorded. */
  trials: number;
  /** Candidates that ran and were correct. */
  valid: number;
  /** Candidates that failed. */
  errors: number;
  /** GFLOP/s of the best record (median of its repeats); null when none is valid. */
  best_gflops: number | null;
  /** Seconds per call of the best record; null when none is valid. */
  best_seconds: number | null;
  /** Trial number of the best record; null when none is valid. */
  best_trace_id: number | null;
  /** The records database. */
  db: string;
  /** Id of the run in it. */
  run_id: number;
  /** True when `signal` stopped the run before its end (it is resumable). */
  interrupted?: boolean;
  /**
   * With finalists re-timed (tuner/confirm.ts): the best's GFLOP/s as the
   * search recorded it (its first figure); `best_gflops` is then its
   * confirmed figure.
   */
  first_gflops?: number | null;
  /** With finalists: the best's median GFLOP/s over the rounds (as `best_gflops`). */
  confirmed_gflops?: number | null;
  /** With finalists: how many were re-timed, in how many rounds, and their run's id. */
  finalists?: { count: number; rounds: number; run_id: number };
  /**
   * Whether the best's lead over the runner-up is within the measured noise
   * (tuner/ranking_noise.ts); null when no candidate is valid.
   */
  ranking: RankingNoise | null;
}

/** Raised when `--resume` finds nothing to resume (no unfinished run, no transient result). */
export class NothingToResumeError extends Error {
  /** Creates the error. */
  constructor(db: string) {
    super(`No unfinished run in ${db} to resume, and its last run holds no transient result`);
    this.name = "NothingToResumeError";
  }
}

/** Raised when `resume` is asked with an option that contradicts the stored run, or a finished run. */
export class ResumeConflictError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ResumeConflictError";
  }
}

/** Runs (or resumes) one tuning run and returns its summary. */
export async function runSession(
  o: SessionOptions,
): Promise<Summary & { bestTrace?: string; noDevice?: string }> {
  checkSessionOptions(o);
  // A PostgreSQL URL (a team's shared records) or a SQLite file.
  const db: RecordStore = isPostgresUrl(o.db)
    ? await (await loadPostgresStore()).openPostgresRecordStore(o.db)
    : sqliteRecordStore(RecordsDB.open(o.db, { mode: o.resume ? "write" : "create" }));
  try {
    let runId: number, config: RunConfig;
    /** Resuming a finished run: the traces of its transient results, measured again. */
    let remeasure: Trace[] | undefined;
    if (o.resume) {
      let run = o.runId === undefined
        ? await db.lastUnfinishedRun() ?? (await db.runs()).at(-1)
        : await db.run(o.runId);
      if (!run && o.runId !== undefined) {
        throw new ResumeConflictError(`--run ${o.runId}: no run ${o.runId} in ${o.db}`);
      }
      if (!run) throw new NothingToResumeError(o.db);
      // A tuning run's finalists run (unfinished when it was stopped mid-write): resume its run.
      const confirmed = confirmedRunOf(run);
      if (confirmed !== undefined) {
        const of = await db.run(confirmed);
        if (!of) throw new NothingToResumeError(o.db);
        run = of;
      }
      runId = run.id;
      config = storedConfig(o.db, run.id, run.config);
      // A stored trace that does not parse or match its hash would lend its result to another.
      await checkStoredCandidates(await db.candidates(run.id), o.db);
      checkResume(config, o, run.id);
      // Before the strategy table named Ansor's trace search `ansor`, tune stored it as
      // `evolutionary`: a run whose candidates are all traces without knobs continues with it.
      if (config.strategy === "evolutionary" && config.space === undefined) {
        const cs = await db.candidates(run.id);
        if (cs.length > 0 && cs.every((c) => c.knobs === null)) {
          config = { ...config, strategy: "ansor" };
        }
      }
      if (run.status === "finished") {
        remeasure = await transientTraces(db, o.db, run.id);
        if (remeasure.length === 0) {
          if (o.runId === undefined) throw new NothingToResumeError(o.db);
          throw new ResumeConflictError(
            `--run ${run.id}: run ${run.id} of ${o.db} is finished and holds no transient result to measure again`,
          );
        }
      }
    } else {
      const w = o.space !== undefined
        ? { name: cacheName(o.space), shape: [] }
        : o.workload ?? o.traces?.[0]?.workload;
      if (!w) throw new RangeError("A session needs a workload, traces or a space");
      const target = o.space !== undefined ? "replay" : o.target ?? DEFAULTS.tune.target;
      const facts = resolveTarget(target);
      if (o.flushL2 && !facts.nvcc) {
        throw new RangeError("flushL2: only target cuda flushes the L2 cache between repeats");
      }
      config = {
        workload: w.name,
        shape: w.shape,
        ...(o.space !== undefined ? { space: o.space } : {}),
        strategy: o.traces ? "trace-file" : o.strategy ?? DEFAULTS.tune.strategy,
        seed: o.seed ?? DEFAULTS.tune.seed,
        trials: o.trials ?? o.traces?.length ?? DEFAULTS.tune.trials,
        target,
        batch: o.batch ?? DEFAULTS.tune.batch,
        ...(o.overlap ? { overlap: true } : {}),
        ...(o.race !== undefined ? { race: o.race } : {}),
        // nvcc builds one candidate per process: the default is the C compiler's.
        unity: o.unity ?? (facts.nvcc ? 1 : DEFAULTS.tune.unity),
        timeoutSeconds: o.timeoutSeconds ?? DEFAULTS.tune.timeoutSeconds,
        // Target cuda times its trials as its finalists (10 ms was not measured on a GPU).
        timing: {
          ...(facts.nvcc ? DEFAULTS.tune.finalistTiming : DEFAULTS.tune.timing),
          ...o.timing,
        },
        ...(o.flushL2 ? { flushL2: true } : {}),
        ...(o.math ? { math: o.math } : {}),
        ...(facts.nvcc && !o.traces && o.configs !== false ? { configs: true } : {}),
        traces: o.traces,
        ...(o.template ? { template: o.template } : {}),
      };
      if (o.remeasureMargin) config.remeasureMargin = o.remeasureMargin;
      const top = o.finalists ??
        (o.traces || o.space !== undefined ? 0 : DEFAULTS.tune.finalists);
      if (top > 0) {
        config.finalists = {
          top,
          rounds: o.finalistRounds ?? DEFAULTS.tune.finalistRounds,
          timing: finalistTimingOf(config.timing, o.finalistTiming),
        };
      }
      // STRATEGY@PRESET: the preset's settings are stored with the run, which resumes with them.
      if (parseStrategyName(config.strategy).preset !== undefined) {
        config.hyper = resolveStrategy(config.strategy, { hyper: o.hyper }).hyper;
      }
    }
    let workload: Workload | undefined;
    let replay: ReplaySpace | undefined;
    if (config.space !== undefined) replay = await replaySpaceFromFile(config.space);
    else {
      try {
        workload = createWorkload(config.workload, config.shape);
      } catch (e) {
        if (!o.resume) throw e;
        throw new DatabaseError(
          o.db,
          `Records database "${o.db}": run ${runId!}: field config: ${(e as Error).message}`,
        );
      }
    }
    // A strategy the target or template cannot serve is refused before anything is built.
    const problem = config.strategy === "trace-file"
      ? undefined
      : strategyProblem({ ...config, workload, replay });
    if (problem && o.resume) {
      throw new DatabaseError(
        o.db,
        `Records database "${o.db}": run ${runId!}: field config.strategy: ${problem}`,
      );
    }
    if (problem) throw new RangeError(problem);
    const builder = createBuilder({
      cacheDir: o.cacheDir ?? Deno.env.get("TUNEBOOK_CACHE"),
      batch: config.unity ?? 1,
      // Builds overlapping a measurement take only the cycles it leaves idle.
      background: config.overlap ?? false,
    });
    // Target cuda: nvcc builds the candidates, the C builder only the reference.
    const target = resolveTarget(config.target);
    const source = recordingFailures(o.source ?? targetSource(target));
    // The remote factory, called with the trials' timing and again with the finalists'.
    const remoteWith = (timing: TimingOptions) =>
      o.measurer!({
        target: config.target,
        timing,
        timeoutSeconds: config.timeoutSeconds,
        inputSeed: 0,
      });
    const remote = o.measurer ? await remoteWith(config.timing) : undefined;
    const targetWith = (timing: TimingOptions, prior?: ReadonlyMap<string, PriorResult>) =>
      targetMeasurer(target, {
        workload,
        replay,
        builder,
        source,
        timing,
        timeoutSeconds: config.timeoutSeconds,
        cuda: {
          cacheDir: cudaCacheDir(o.cacheDir ?? Deno.env.get("TUNEBOOK_CACHE")),
          flushL2: config.flushL2 ?? false,
          onBuilt: o.onBuilt,
          ...(prior ? { prior } : {}),
        },
      });
    // The target's own measurer, unless the run measures on remote workers.
    const local = remote ? undefined : targetWith(
      config.timing,
      // Identical CUDA measured before the run was resumed is not measured again.
      o.resume && target.nvcc
        ? await priorCudaResults(await db.candidates(runId!), source)
        : undefined,
    );
    /** A measurer like the run's, timing as `timing` (the finalists'), built kernels reused. */
    const finalistMeasurer = async (timing: TimingOptions): Promise<Measurer> =>
      o.measurer
        ? (await remoteWith(timing)).measurer
        : withConditions(targetWith(timing).measurer);
    if (!o.resume) {
      runId = await db.startRun({
        strategy: config.strategy,
        seed: config.seed,
        trials: config.trials,
        target: config.target,
        workloadId: await db.upsertWorkload(
          workload
            ? { name: workload.name, shape: workload.shape, flops: workload.flops }
            // A replayed cache: no flops known (its records have no GFLOP/s).
            : { name: config.workload, shape: [], flops: 0 },
        ),
        config: config as unknown as Record<string, unknown>,
        machine: remote?.machine ?? describeMachine(),
        compiler: remote ? remote.compiler ?? "" : await local!.describe(),
        tunebookVersion: await tunebookVersion(),
      });
    }
    o.onStart?.(runId!);
    // A live measurer here records the machine's conditions with each result (not a replay).
    const measurer: Measurer = remote?.measurer ??
      (target.replay ? local!.measurer : withConditions(local!.measurer));
    let noDevice: string | undefined;
    let interrupted = false;
    try {
      const strategy = remeasure
        ? traceList(remeasure)
        : await makeStrategy(config, workload, replay);
      const outcome = await tune({
        strategy: o.signal ? stoppable(strategy, o.signal) : strategy,
        measurer,
        store: db,
        runId: runId!,
        trials: remeasure?.length ?? config.trials,
        ...(workload ? { flops: workload.flops } : {}),
        batchSize: config.batch,
        overlap: config.overlap ?? false,
        ...(config.race !== undefined ? { race: config.race } : {}),
        onProgress: o.onProgress,
        timeLimitSeconds: o.timeLimitSeconds,
      });
      interrupted = o.signal?.aborted ?? false;
      const device = await local?.device?.();
      if (device && !device.ok) noDevice = device.message;
      if (outcome.stop !== "time" && !interrupted) {
        // The run is finished once its finalists are recorded: one stopped before resumes them.
        const f = config.finalists;
        if (f && workload && !noDevice && !await readConfirmation(db, runId!)) {
          // Runs recorded before the finalists had a timing of their own time them as their trials.
          const timing = f.timing ?? config.timing;
          const own = sameTiming(timing, config.timing)
            ? undefined
            : await finalistMeasurer(timing);
          try {
            interrupted = await confirmSession(db, {
              runId: runId!,
              workload,
              measurer: own ?? measurer,
              top: f.top,
              rounds: f.rounds,
              target: config.target,
              machine: (await db.run(runId!))?.machine,
              compiler: (await db.run(runId!))?.compiler,
              config: { timing },
            }, o.signal);
          } finally {
            await own?.close?.();
          }
        }
        if (!interrupted) await db.finishRun(runId!);
      }
    } finally {
      await measurer.close?.();
    }
    return {
      ...await summarize(db, runId!, db.location),
      ...(noDevice ? { noDevice } : {}),
      ...(interrupted ? { interrupted } : {}),
    };
  } finally {
    await db.close();
  }
}

/**
 * Re-times a run's finalists ({@link confirmRun}); true when `signal`
 * stopped it between rounds (nothing recorded, the run stays resumable).
 */
async function confirmSession(
  db: RecordStore,
  o: Parameters<typeof confirmRun>[1],
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const stopped = new Error("stopped");
  try {
    await confirmRun(db, {
      ...o,
      onRound: () => {
        if (signal?.aborted) throw stopped;
      },
    });
    return false;
  } catch (e) {
    if (e === stopped) return true;
    throw e;
  }
}

/**
 * The traces of a run's candidates whose result is of a transient error kind
 * (`isTransient`: the worker lost, a timeout under load), in trial order.
 */
async function transientTraces(db: RecordStore, path: string, runId: number): Promise<Trace[]> {
  return (await db.candidates(runId))
    .filter((c) => c.result && isTransient(c.result.errorKind))
    .map((c) => {
      try {
        return JSON.parse(c.trace) as Trace;
      } catch {
        throw new DatabaseError(
          path,
          `Records database "${path}": run ${runId}: candidate ${c.id}: field trace is not JSON`,
        );
      }
    });
}

/** The nvcc cache: `cuda/` under the kernel cache when one is given (default `.cache/cuda`). */
function cudaCacheDir(kernelCache: string | undefined): string | undefined {
  return kernelCache ? `${kernelCache.replace(/\/+$/, "")}/cuda` : undefined;
}

/** What a run stores as its configuration (enough to resume it). */
interface RunConfig {
  workload: string;
  shape: number[];
  strategy: string;
  /** A `STRATEGY@PRESET` run's settings, as read when it started (absent: none). */
  hyper?: Record<string, number | string>;
  seed: number;
  trials: number;
  target: string;
  batch: number;
  /** Pipelined rounds (absent in runs recorded before the option existed: false). */
  overlap?: boolean;
  /** Racing factor (absent: every candidate gets every repeat). */
  race?: number;
  /** Candidates per compiler process (absent in runs recorded before it was stored: 1). */
  unity?: number;
  timeoutSeconds: number;
  timing: TimingOptions;
  /** Target cuda: L2 flushed before each repeat (absent: not flushed). */
  flushL2?: boolean;
  /** Target cuda: the arithmetic allowed (absent: every kind). */
  math?: MathKind[];
  /**
   * Target cuda: the GEMM configurations measured first (absent in runs
   * recorded before they existed, or with `configs: false`: none).
   */
  configs?: boolean;
  traces?: Trace[];
  /** Knob template of the knob strategies (default: the workload's). */
  template?: string;
  /** The Kernel Tuner cache replayed (absent: a workload measured). */
  space?: string;
  /** Finalists re-timed after the search (absent: none, as in runs recorded before 2026-12-02). */
  finalists?: {
    top: number;
    rounds: number;
    /** Their timing (absent in runs recorded before 2026-12-03: the trials' timing). */
    timing?: TimingOptions;
  };
  /** Strategy `sa`: its re-timing margin (absent: 0, none). */
  remeasureMargin?: number;
}

/** A stored run's configuration, checked enough to resume it (a bad one is a DatabaseError). */
function storedConfig(path: string, runId: number, config: unknown): RunConfig {
  const c = config as Partial<RunConfig> | null;
  const bad = (field: string, why = "is missing or invalid"): never => {
    throw new DatabaseError(
      path,
      `Records database "${path}": run ${runId}: field config.${field} ${why}`,
    );
  };
  if (typeof c !== "object" || c === null || Array.isArray(c)) return bad("(object)");
  if (typeof c.workload !== "string") bad("workload");
  if (!Array.isArray(c.shape) || !c.shape.every(Number.isInteger)) bad("shape");
  if (typeof c.strategy !== "string") bad("strategy");
  if (
    c.hyper !== undefined &&
    (typeof c.hyper !== "object" || c.hyper === null || Array.isArray(c.hyper))
  ) bad("hyper");
  // The ranges the command line enforces (ir/defaults.ts) hold for a stored run too.
  const within = (field: string, range: keyof typeof RANGES, value: unknown) => {
    const why = inRange(range, value);
    if (why) bad(field, `${why}, got ${JSON.stringify(value) ?? "nothing"}`);
  };
  for (const k of ["seed", "trials", "batch", "timeoutSeconds"] as const) within(k, k, c[k]);
  if (c.unity !== undefined) within("unity", "unity", c.unity);
  if (c.race !== undefined) within("race", "race", c.race);
  if (c.overlap !== undefined && typeof c.overlap !== "boolean") bad("overlap");
  if (c.flushL2 !== undefined && typeof c.flushL2 !== "boolean") bad("flushL2");
  if (c.configs !== undefined && typeof c.configs !== "boolean") bad("configs");
  if (
    c.math !== undefined &&
    (!Array.isArray(c.math) || c.math.length === 0 ||
      !c.math.every((k) => (ALL_MATH as readonly string[]).includes(k)))
  ) bad("math");
  // A replayed space is target replay; a workload's run is measured natively (cpu or cuda).
  const target = recordTarget(String(c.target));
  const tunable = target && (target.host || target.nvcc || target.replay);
  if (!target || !tunable || (typeof c.space === "string") !== target.replay) {
    bad("target");
  }
  // The trials' timing and the finalists': the same fields, the same ranges.
  const timing = (field: string, t: unknown) => {
    if (typeof t !== "object" || t === null) bad(field);
    for (const k of ["number", "repeat", "minRepeatMs"] as const) {
      within(`${field}.${k}`, k, (t as Partial<TimingOptions>)[k]);
    }
    const spread = (t as Partial<TimingOptions>).noisySpread;
    if (spread !== undefined && !(typeof spread === "number" && spread >= 1)) {
      bad(`${field}.noisySpread`, `must be a number >= 1, got ${JSON.stringify(spread)}`);
    }
  };
  timing("timing", c.timing);
  if (c.template !== undefined && typeof c.template !== "string") bad("template");
  if (c.strategy === "trace-file" && !Array.isArray(c.traces)) bad("traces");
  if (
    c.remeasureMargin !== undefined &&
    !(typeof c.remeasureMargin === "number" && c.remeasureMargin >= 0)
  ) bad("remeasureMargin");
  if (c.finalists !== undefined) {
    const f = c.finalists as Partial<RunConfig["finalists"] & object> | null;
    if (typeof f !== "object" || f === null) bad("finalists");
    within("finalists.top", "finalists", f!.top);
    within("finalists.rounds", "finalistRounds", f!.rounds);
    if (f!.timing !== undefined) timing("finalists.timing", f!.timing);
  }
  return c as RunConfig;
}

/** Session options, their flags, and their stored values (`undefined`: not given). */
function resumeChecks(c: RunConfig, o: SessionOptions): [string, unknown, unknown][] {
  const t = c.timing;
  return [
    ["--workload", o.workload?.name || undefined, c.workload],
    ["--shape", o.workload?.shape.join(",") || undefined, c.shape.join(",")],
    ["--space", o.space, c.space],
    ["--strategy", o.strategy, c.strategy],
    ["--template", o.template, c.template],
    ["--seed", o.seed, c.seed],
    ["--trials", o.trials, c.trials],
    ["--target", o.target, c.target],
    ["--batch", o.batch, c.batch],
    ["--overlap", o.overlap, c.overlap ?? false],
    ["--race", o.race, c.race],
    ["--unity", o.unity, c.unity ?? 1],
    ["--timeout", o.timeoutSeconds, c.timeoutSeconds],
    ["--number", o.timing?.number, t.number],
    ["--repeat", o.timing?.repeat, t.repeat],
    ["--min-repeat-ms", o.timing?.minRepeatMs, t.minRepeatMs],
    ["--flush-l2", o.flushL2, c.flushL2 ?? false],
    ["--math", o.math?.join(","), (c.math ?? ALL_MATH).join(",")],
    ["--no-configs", o.configs === undefined ? undefined : !o.configs, !(c.configs ?? false)],
    ["--finalists", o.finalists, c.finalists?.top ?? 0],
    ["--remeasure-margin", o.remeasureMargin, c.remeasureMargin ?? 0],
    ["--finalist-rounds", o.finalistRounds, c.finalists?.rounds],
    [
      "--finalist-min-repeat-ms",
      o.finalistTiming?.minRepeatMs,
      (c.finalists?.timing ?? t).minRepeatMs,
    ],
  ];
}

/** Throws {@link ResumeConflictError} for the first given option that differs from the stored run. */
function checkResume(c: RunConfig, o: SessionOptions, runId: number): void {
  if (o.traces) {
    throw new ResumeConflictError(
      "--trace cannot be given with --resume: the run stores its traces",
    );
  }
  for (const [flag, given, stored] of resumeChecks(c, o)) {
    if (given === undefined || given === stored) continue;
    throw new ResumeConflictError(
      `${flag} ${given} contradicts run ${runId}, which was started with ${
        stored === undefined ? "no " + flag : `${flag} ${stored}`
      }; drop ${flag} to resume it, or start a new run`,
    );
  }
}

/**
 * The code generator of a session, with any failure to lower or generate a
 * candidate returned as its error (recorded as `instantiation_error`): no
 * candidate can stop a run, so none can make it unresumable.
 */
function recordingFailures(source: (trace: Trace) => KernelSource): (trace: Trace) => KernelSource {
  return (trace) => {
    try {
      return source(trace);
    } catch (e) {
      const why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      return { error: `code generation failed: ${why}` };
    }
  };
}

/** The strategy, proposing nothing once `signal` is aborted (the loop then ends). */
function stoppable(strategy: Strategy, signal: AbortSignal): Strategy {
  return {
    name: strategy.name,
    propose: (n) => signal.aborted ? [] : strategy.propose(n),
    observe: (results) => strategy.observe(results),
    ...(strategy.remeasure
      ? {
        remeasure: () => signal.aborted ? [] : strategy.remeasure!(),
        observeRemeasured: (results: Observation[]) => strategy.observeRemeasured?.(results),
      }
      : {}),
  };
}

/**
 * The strategy of a run: the trace list of a trace-file run, else the
 * table's strategy on the space tune_strategy.ts picks for its target
 * (sketches, or a knob template), preceded on target cuda by the GEMM
 * template's configurations the run allows (points of the strategy's space
 * where they can be, which it learns from: tune_strategy.ts's `configSeeds`).
 */
async function makeStrategy(
  c: RunConfig,
  workload: Workload | undefined,
  replay: ReplaySpace | undefined,
): Promise<Strategy> {
  if (c.strategy === "trace-file") return traceList(c.traces ?? []);
  // Hand-written GEMM configurations first, as the strategy's own candidates where they are
  // points of its space (the sketches, or the gemm-gpu template), so that it learns from them.
  const configs = c.configs && workload ? gemmConfigs(workload, { math: c.math }) : [];
  return await strategyFor({ ...c, workload, replay, configs });
}

/** Proposes the given traces in order, then nothing. */
function traceList(traces: Trace[]): Strategy {
  let next = 0;
  return {
    name: "trace-file",
    propose(n: number): Candidate[] {
      const out = traces.slice(next, next + n).map((trace) => ({ trace }));
      next += out.length;
      return out;
    },
    observe() {},
  };
}

/** The summary's fields of a confirmation. */
function confirmedFields(
  c: Confirmation,
  gflops: (s: number | null | undefined) => number | null,
): Pick<Summary, "first_gflops" | "confirmed_gflops" | "finalists"> {
  return {
    first_gflops: gflops(c.best?.firstSeconds),
    confirmed_gflops: gflops(c.best?.seconds),
    finalists: { count: c.finalists.length, rounds: c.rounds, run_id: c.runId },
  };
}

/** The summary of a run, read back from the database. */
export async function summarize(
  db: RecordStore,
  runId: number,
  path: string,
): Promise<Summary & { bestTrace?: string }> {
  const run = (await db.run(runId))!;
  const w = (await db.workload(run.workloadId))!;
  const counts = await db.counts(runId);
  const searched = await db.best(runId);
  const confirmation = await readConfirmation(db, runId);
  const confirmed = confirmation?.best;
  // The reported best is the confirmed one: the tuning run's candidate of that trace.
  const best = confirmed?.candidateId != null
    ? (await db.candidates(runId)).find((c) => c.id === confirmed.candidateId) as typeof searched
    : searched;
  const gflops = (s: number | null | undefined) => w.flops > 0 && s ? w.flops / s / 1e9 : null;
  return {
    workload: w.name,
    shape: w.shape,
    target: run.target,
    strategy: run.strategy,
    trials: run.trials,
    valid: counts.valid,
    errors: counts.errors,
    best_gflops: confirmed
      ? gflops(confirmed.seconds)
      : w.flops > 0
      ? best?.result.gflops ?? null
      : null,
    best_seconds: confirmed ? confirmed.seconds : best?.result.seconds ?? null,
    best_trace_id: best?.id ?? null,
    db: path,
    // With finalists, best and runner-up are judged by their re-timed rounds (the finalists run).
    ranking: rankingOfResults(
      (await db.candidates(confirmation?.runId ?? runId)).flatMap((c) => c.result ?? []),
    ),
    run_id: runId,
    ...(confirmation ? confirmedFields(confirmation, gflops) : {}),
    ...(best && best.trace !== "null" ? { bestTrace: printTrace(JSON.parse(best.trace)) } : {}),
  };
}

/** Whether two timings time alike. */
function sameTiming(a: TimingOptions, b: TimingOptions): boolean {
  return a.number === b.number && a.repeat === b.repeat && a.minRepeatMs === b.minRepeatMs &&
    a.warmup === b.warmup && a.noisySpread === b.noisySpread;
}
