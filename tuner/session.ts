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
import { createRunner } from "../measure/runner.ts";
import { isTransient, type TimingOptions } from "../measure/types.ts";
import type { Candidate, Strategy } from "../search/strategy.ts";
import { type RecordStore, sqliteRecordStore } from "../datasets/record_store.ts";
import { isPostgresUrl, loadPostgresStore } from "../datasets/postgres_url.ts";
import { checkStoredCandidates } from "../datasets/integrity.ts";
import type { Measurer } from "../measure/measurer.ts";
import { createCudaMeasurer, cudaKernelSource } from "../measure/cuda.ts";
import { priorCudaResults } from "../measure/cuda_prior.ts";
import { type KernelSource, kernelSource } from "../measure/kernel_source.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import { type ReplaySpace, replaySpaceFromFile } from "../search/replay.ts";
import { basename } from "node:path";
import { ALL_MATH, type MathKind } from "../ir/gemm_math.ts";
import { gemmConfigs } from "../search/gemm_configs.ts";
import { tune } from "./loop.ts";
import { describeMachine, tunebookVersion } from "../datasets/machine.ts";
import type { Progress } from "./progress.ts";
import { strategyFor, strategyProblem } from "./tune_strategy.ts";
import { DEFAULTS, inRange, type RANGES } from "./defaults.ts";

/** What a session needs; `resume` takes everything else from the stored run. */
export interface SessionOptions {
  /** Path of the records database (SQLite), or a `postgres://` URL (a shared PostgreSQL one). */
  db: string;
  /**
   * Continue the last unfinished run of the database (or run `runId`) with
   * its stored options; an option given here that contradicts one of them
   * throws {@link ResumeConflictError}. A finished run (`runId`, or the
   * database's last run when none is unfinished) that holds results of a
   * transient error kind has exactly those candidates measured again, then
   * is finished again.
   */
  resume?: boolean;
  /** With `resume`: the run to continue. */
  runId?: number;
  /** Stops the run after the round in flight; it stays unfinished, so resumable. */
  signal?: AbortSignal;
  /** Called with the run id once the run is opened or created. */
  onStart?: (runId: number) => void;
  workload?: { name: string; shape: number[] };
  /**
   * A Kernel Tuner cache (a name from data/kerneltuner or a path) replayed
   * instead of measuring a workload: knob strategies search its space and
   * every record is a lookup (`target` "replay").
   */
  space?: string;
  strategy?: string;
  /** Knob template for the knob strategies (grid, sa, ga, ...). */
  template?: string;
  seed?: number;
  trials?: number;
  /** Measure exactly these traces instead of searching. */
  traces?: Trace[];
  target?: string;
  batch?: number;
  /** Build round k+1 while round k is measured (see `TuneOptions.overlap` in loop.ts). Default false. */
  overlap?: boolean;
  /** Racing factor (see `TuneOptions.race` in loop.ts). Default: off. */
  race?: number;
  timeoutSeconds?: number;
  timing?: Partial<TimingOptions>;
  /** Target `cuda`: overwrite the L2 cache before each timed repeat (stored with the run). */
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
  onProgress?: (p: Progress) => void;
  /** Stop after this many seconds (the run stays resumable). */
  timeLimitSeconds?: number;
  /** Directory of the kernel cache. Default `$TUNEBOOK_CACHE`, else `.cache/kernels`. */
  cacheDir?: string;
  /**
   * Most candidates compiled together in one file by one compiler process (a
   * unity build, see measure/builder.ts). Default 1.
   */
  unity?: number;
  /** Replaces code generation (tests inject faulty kernels). */
  source?: (trace: Trace) => KernelSource;
  /** Target `cuda`: called with one line per candidate built by nvcc (its ptxas resources). */
  onBuilt?: (line: string) => void;
  /**
   * Measures with this instead of the local builder and runner (target cpu):
   * called with the run's stored configuration, e.g. a remote queue of
   * workers (`tune --queue`). `machine` and `compiler` describe where it
   * measures, for a new run's record.
   */
  measurer?: (config: MeasurerConfig) => Promise<RemoteMeasurement>;
}

/** What a {@link SessionOptions.measurer} factory is given: how the run measures. */
export interface MeasurerConfig {
  target: string;
  timing: TimingOptions;
  timeoutSeconds: number;
  inputSeed: number;
}

/** A measurer made by {@link SessionOptions.measurer}, with where it measures. */
export interface RemoteMeasurement {
  measurer: Measurer;
  machine?: Record<string, unknown>;
  compiler?: string;
}

/** The one-line summary `tune` prints. */
export interface Summary {
  workload: string;
  shape: number[];
  target: string;
  strategy: string;
  trials: number;
  valid: number;
  errors: number;
  best_gflops: number | null;
  best_seconds: number | null;
  best_trace_id: number | null;
  db: string;
  run_id: number;
  /** True when `signal` stopped the run before its end (it is resumable). */
  interrupted?: boolean;
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
  // A PostgreSQL URL (a team's shared records) or a SQLite file.
  const db: RecordStore = isPostgresUrl(o.db)
    ? await (await loadPostgresStore()).openPostgresRecordStore(o.db)
    : sqliteRecordStore(RecordsDB.open(o.db, { mode: o.resume ? "write" : "create" }));
  try {
    let runId: number, config: RunConfig;
    /** Resuming a finished run: the traces of its transient results, measured again. */
    let remeasure: Trace[] | undefined;
    if (o.resume) {
      const run = o.runId === undefined
        ? await db.lastUnfinishedRun() ?? (await db.runs()).at(-1)
        : await db.run(o.runId);
      if (!run && o.runId !== undefined) {
        throw new ResumeConflictError(`--run ${o.runId}: no run ${o.runId} in ${o.db}`);
      }
      if (!run) throw new NothingToResumeError(o.db);
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
        ? { name: basename(o.space).replace(/\.json(\.gz)?$/, ""), shape: [] }
        : o.workload ?? o.traces?.[0]?.workload;
      if (!w) throw new RangeError("A session needs a workload, traces or a space");
      const target = o.space !== undefined ? "replay" : o.target ?? DEFAULTS.tune.target;
      if (o.flushL2 && target !== "cuda") {
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
        unity: o.unity ?? DEFAULTS.tune.unity,
        timeoutSeconds: o.timeoutSeconds ?? DEFAULTS.tune.timeoutSeconds,
        timing: { ...DEFAULTS.tune.timing, ...o.timing },
        ...(o.flushL2 ? { flushL2: true } : {}),
        ...(o.math ? { math: o.math } : {}),
        ...(target === "cuda" && !o.traces && o.configs !== false ? { configs: true } : {}),
        traces: o.traces,
        ...(o.template ? { template: o.template } : {}),
      };
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
    const source = recordingFailures(
      o.source ?? (config.target === "cuda" ? (t) => cudaKernelSource(t) : kernelSource),
    );
    const cuda = config.target === "cuda"
      ? createCudaMeasurer({
        workload: workload!,
        referenceBuilder: builder,
        source,
        cacheDir: cudaCacheDir(o.cacheDir ?? Deno.env.get("TUNEBOOK_CACHE")),
        timeoutSeconds: config.timeoutSeconds,
        timing: config.timing,
        flushL2: config.flushL2 ?? false,
        onBuilt: o.onBuilt,
        // Identical CUDA measured before the run was resumed is not measured again.
        ...(o.resume ? { prior: await priorCudaResults(await db.candidates(runId!), source) } : {}),
      })
      : undefined;
    const remote = o.measurer
      ? await o.measurer({
        target: config.target,
        timing: config.timing,
        timeoutSeconds: config.timeoutSeconds,
        inputSeed: 0,
      })
      : undefined;
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
        compiler: remote?.compiler ??
          (replay ? `none (replay of ${replay.name})` : await (cuda ?? builder).describe()),
        tunebookVersion: await tunebookVersion(),
      });
    }
    o.onStart?.(runId!);
    const measurer: Measurer = remote?.measurer ?? replay?.measurer ?? cuda ??
      createNativeMeasurer({
        workload: workload!,
        builder,
        runner: createRunner({ timing: config.timing, timeoutSeconds: config.timeoutSeconds }),
        source,
      });
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
      if (outcome.stop !== "time" && !interrupted) await db.finishRun(runId!);
      const device = await cuda?.device();
      if (device && !device.ok) noDevice = device.message;
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
  // The ranges the command line enforces (tuner/defaults.ts) hold for a stored run too.
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
  const targets = typeof c.space === "string" ? ["replay"] : ["cpu", "cuda"];
  if (typeof c.target !== "string" || !targets.includes(c.target)) bad("target");
  if (typeof c.timing !== "object" || c.timing === null) bad("timing");
  for (const k of ["number", "repeat", "minRepeatMs"] as const) {
    within(`timing.${k}`, k, (c.timing as Partial<TimingOptions>)[k]);
  }
  if (c.template !== undefined && typeof c.template !== "string") bad("template");
  if (c.strategy === "trace-file" && !Array.isArray(c.traces)) bad("traces");
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

/** The summary of a run, read back from the database. */
export async function summarize(
  db: RecordStore,
  runId: number,
  path: string,
): Promise<Summary & { bestTrace?: string }> {
  const run = (await db.run(runId))!;
  const w = (await db.workload(run.workloadId))!;
  const counts = await db.counts(runId);
  const best = await db.best(runId);
  return {
    workload: w.name,
    shape: w.shape,
    target: run.target,
    strategy: run.strategy,
    trials: run.trials,
    valid: counts.valid,
    errors: counts.errors,
    best_gflops: w.flops > 0 ? best?.result.gflops ?? null : null,
    best_seconds: best?.result.seconds ?? null,
    best_trace_id: best?.id ?? null,
    db: path,
    run_id: runId,
    ...(best && best.trace !== "null" ? { bestTrace: printTrace(JSON.parse(best.trace)) } : {}),
  };
}
