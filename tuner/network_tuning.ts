/**
 * Tuning a whole network: its tasks share one trial budget through a task
 * scheduler (tuner/task_scheduler.ts), each task tuned by its own strategy
 * in its own run of the records database, all through one builder and one
 * runner. The end-to-end estimate is the scheduler's objective,
 * `sum_i weight_i * best_i` over the tunable layers.
 *
 * Each task's strategy lives for the whole session, so a model-based one
 * (xgb, evolutionary) keeps learning across the rounds it is given; a round
 * is one call of the tuning loop on that task's run ({@link tuneRound}, the
 * one place this module enters the loop).
 *
 * @example
 * ```ts ignore
 * import { tuneNetwork } from "./network_tuning.ts";
 * import { extractTasks } from "../network/tasks.ts";
 * import { builtinNetwork } from "../network/builtin.ts";
 * const tasks = extractTasks(builtinNetwork("resnet18"));
 * const r = await tuneNetwork({ tasks, db: "net.db", trials: 64, strategy: "random" });
 * console.log(r.objectiveSeconds, r.tasks.map((t) => t.trials));
 * ```
 * @module
 */
import {
  checkArray,
  checkInteger,
  checkNumber,
  checkObject,
  checkString,
  described,
} from "../ir/check.ts";
import { recordTarget } from "../ir/target.ts";
import { RecordsDB, workloadKey } from "../datasets/db.ts";
import { sqliteRecordStore } from "../datasets/record_store.ts";
import type { Workload } from "../ir/workloads.ts";
import { createBuilder } from "../measure/builder.ts";
import type { MeasureResult } from "../measure/measurer.ts";
import { type MemoMeasurer, memoMeasurer } from "../measure/memo.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import { withConditions } from "../measure/conditions.ts";
import { createRunner } from "../measure/runner.ts";
import type { TimingOptions } from "../measure/types.ts";
import type { Task } from "../network/tasks.ts";
import { taskKey } from "../network/tasks.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { traceOf } from "../ir/trace.ts";
import { seededStrategy } from "../search/seeded.ts";
import { defaultSpace } from "../search/sketch.ts";
import type { Candidate, Strategy } from "../search/strategy.ts";
import type { Sample } from "../costmodel/model.ts";
import { pointOfValues } from "../ir/knobs.ts";
import { defaultTemplate, templatesOf, templateSpace } from "../search/templates/registry.ts";
import { tune } from "./loop.ts";
import { describeMachine, tunebookVersion } from "../datasets/machine.ts";
import { createStrategy, createTraceStrategy, STRATEGIES } from "./strategies.ts";
import { parseStrategyName, type ResolvedStrategy, resolveStrategy } from "./presets.ts";
import { finalistsOf, recordFinalists, retimeFinalists } from "./finalists.ts";
import { type RankingNoise, rankingNoise, usualAmong } from "./ranking_noise.ts";
import { DEFAULTS, finalistTimingOf } from "../ir/defaults.ts";
import {
  type RecordedStart,
  type SchedulerRound,
  scheduleTasks,
  type TaskSchedulerName,
  warmStart,
} from "./task_scheduler.ts";

/** Options of {@link tuneNetwork}. */
export interface NetworkTuningOptions {
  /** The network's tasks (`extractTasks`). */
  tasks: Task[];
  /** Records database (created if missing); its earlier records warm-start the tasks. */
  db: string;
  /** Trial budget over all tasks. */
  trials: number;
  /**
   * Strategy of every task (a knob strategy falls back to `random` where no
   * template exists), or `STRATEGY@PRESET` (tuner/presets.ts): the tasks on a
   * knob template run with the preset's settings, recorded as `config.hyper`.
   */
  strategy: string;
  /**
   * Knob templates of the knob strategies: a task takes the first that
   * schedules its workload, else its default template. Default none.
   */
  templates?: string[];
  /** Default `"gradient"`. */
  scheduler?: TaskSchedulerName;
  /** Trials per round. Default {@link defaultPerRound}. */
  perRound?: number;
  /** Seed of the strategies (task i gets seed + i) and of the scheduler. Default 1. */
  seed?: number;
  /**
   * Warm start: `true` reads the records of the tasks' workloads already in
   * `db`; `false` starts cold; a list gives each task's start (a comparison
   * of several sessions passes the one read before the first). Default true.
   */
  warm?: boolean | RecordedStart[];
  /**
   * With transfer, read only the earlier runs with an id up to this one (a
   * comparison of several sessions passes the last run there before the
   * first, so no session learns from another). Default: every run in `db`
   * when the session starts; none when `warm` is false.
   */
  recordsUpTo?: number;
  /** Directory of the kernel cache. Default `$TUNEBOOK_CACHE`, else `.cache/kernels`. */
  cacheDir?: string;
  /**
   * Timing of each candidate. Default `DEFAULTS.tune.timing`: 1 call per
   * repeat, 3 repeats of at least 10 ms (a screening, as `tune`'s trials).
   */
  timing?: Partial<TimingOptions>;
  /**
   * Timing of the finalists' re-timing; missing fields take `timing`'s.
   * Default `finalistTimingOf(timing)` (ir/defaults.ts): each repeat at least
   * 40 ms, or `timing`'s minimum where that is longer.
   */
  finalistTiming?: Partial<TimingOptions>;
  /** Seconds a candidate may run. Default 10. */
  timeoutSeconds?: number;
  /**
   * Most of a round's candidates compiled together in one file by one
   * compiler process (a unity build, measure/builder.ts `batch`).
   * Default `DEFAULTS.tune.unity` (8); 1 compiles each alone.
   */
  unity?: number;
  /**
   * Measure each task's default schedule (the untuned lowering the executor
   * runs without a tuned trace) as its first trial, so no task ends slower
   * than untuned; the strategy never sees it ({@link defaultScheduleCandidate}).
   * Default true.
   */
  seedDefault?: boolean;
  /** Called after each round. Default: nothing. */
  onRound?: (r: SchedulerRound, task: TaskOutcome) => void;
  /**
   * Measurements shared among sessions, by task key then candidate key (its
   * trace as JSON): a candidate found here is answered from it instead of
   * measured again, and this session's measurements are added. Sessions
   * compared in one command share one, so the same candidate has the same
   * time in each (as in a replay) and only the choices differ. Default: none (nothing shared).
   */
  shared?: Map<string, Map<string, MeasureResult>>;
  /**
   * Transfer across tasks (AutoTVM's transfer learning, Ansor's one cost
   * model for all tasks): a task tuned by a learned-model strategy with a
   * `-transfer` variant in the table (`xgb`, `xgb-rank`) starts with its
   * model trained on what this session measured on the other tasks of the
   * same template whose knobs include all of its own ({@link knobTranslator}:
   * a 1x1 convolution learns from the padded ones, not the reverse), and on
   * the records of earlier sessions in `db` whose runs recorded such a knob
   * space (its own workload's included: AutoTVM's `load_history`, Ansor's
   * model restored from its log), at most 4,096 samples, this session's
   * first; throughputs normalised per task or run, and that model picks its
   * first plan. Default true.
   */
  transfer?: boolean;
  /**
   * Finalists re-timed ({@link retimeFinalists}): after the last round, each
   * task's `top` fastest candidates (this session's and, unless `warm` is
   * false, those of the runs read for the warm start) are timed again in
   * `rounds` rounds, every finalist once per round, and the task keeps the
   * fastest over the rounds; recorded as a run of its own. Default none.
   */
  finalists?: { top: number; rounds: number };
  /** Called after each task's finalists are re-timed. Default: nothing. */
  onFinalists?: (task: number, outcome: TaskOutcome) => void;
}

/** A task at the end of a session. */
export interface TaskOutcome {
  /** `name(shape)`. */
  key: string;
  /** The task's workload. */
  workload: Workload;
  /** How often the layer occurs in the network (the objective's weight). */
  weight: number;
  /** Strategy that tuned it (may differ from the one asked: see {@link taskStrategy}). */
  strategy: string;
  /** Run of this session in the records database (undefined: never tuned this session). */
  runId?: number;
  /** Trials measured this session. */
  trials: number;
  /** Trials recorded before this session (warm start). */
  warmTrials: number;
  /** Best latency, this session or recorded, seconds. */
  bestSeconds?: number;
  /** Its trace (JSON text). */
  bestTrace?: string;
  /**
   * Its finalists' re-timing, when done: then `bestSeconds` and `bestTrace`
   * are the fastest finalist's median over the rounds and its trace.
   */
  finalists?: {
    /** The finalists run in the records database. */
    runId: number;
    /** Finalists timed. */
    count: number;
    rounds: number;
    /** The best as the tuning rounds recorded it, seconds. */
    recordedSeconds?: number;
    /**
     * Whether the fastest finalist's lead over the next is within their
     * rounds' spread, or the load during its rounds exceeded the cores
     * (tuner/ranking_noise.ts); absent with no valid finalist.
     */
    noise?: RankingNoise;
  };
}

/** What {@link tuneNetwork} reports. */
export interface NetworkTuningOutcome {
  /** Every task at the end of the session. */
  tasks: TaskOutcome[];
  /** Every round: trials used so far and the estimate after it. */
  rounds: SchedulerRound[];
  /** `sum weight * best` at the end, seconds (NaN while a task has no valid kernel). */
  objectiveSeconds: number;
  /** The estimate before the first round (from the warm start; NaN without one). */
  warmObjectiveSeconds: number;
  /** `sum weight * best` after the finalists were re-timed (undefined: not done). */
  finalistsObjectiveSeconds?: number;
}

/**
 * The estimate after each trial of a session (ms): after trial t, the
 * estimate of the last round that ended by t (before any, the warm start's;
 * NaN while a task has no latency): the points of a plot of the estimate
 * against trials.
 *
 * @example
 * ```ts
 * import { estimateCurve } from "./network_tuning.ts";
 * const r = { round: 1, task: 0, measured: 2, trialsUsed: 2, bestSeconds: [], objective: 1e-3 };
 * const curve = estimateCurve({ tasks: [], rounds: [r], objectiveSeconds: 1e-3, warmObjectiveSeconds: 2e-3 });
 * if (curve.join() !== "2,1") throw new Error();
 * ```
 */
export function estimateCurve(o: NetworkTuningOutcome): number[] {
  const x = o as Partial<NetworkTuningOutcome> | undefined;
  if (
    typeof x !== "object" || x === null || !Array.isArray(x.rounds) ||
    typeof x.warmObjectiveSeconds !== "number"
  ) {
    throw new TypeError(`outcome must be what tuneNetwork returned, got ${described(o)}`);
  }
  const curve: number[] = [];
  let value = o.warmObjectiveSeconds * 1e3, r = 0;
  for (let t = 1; t <= (o.rounds.at(-1)?.trialsUsed ?? 0); t++) {
    while (r < o.rounds.length && o.rounds[r].trialsUsed <= t) {
      value = o.rounds[r++].objective * 1e3;
    }
    curve.push(value);
  }
  return curve;
}

/**
 * Trials per round (Ansor's `num_measures_per_round`): 1 to 8, small enough
 * that the warm-up (one round per task) takes at most an eighth of the
 * budget. The gradient scheduler decides nothing during the warm-up, and
 * smaller rounds let it share the rest more finely: replaying recorded
 * ResNet-18 tuning curves (bench/scheduler_replay.ts: xgb, packed templates,
 * 400 trials) it reached round robin's final estimate after a median 192
 * trials in rounds of 4, 272 in rounds of 8 (README, "Tuning a whole network").
 *
 * @example
 * ```ts
 * import { defaultPerRound } from "./network_tuning.ts";
 * if (defaultPerRound(400, 12) !== 4 || defaultPerRound(2000, 12) !== 8) throw new Error();
 * ```
 */
export function defaultPerRound(trials: number, tasks: number): number {
  return Math.max(1, Math.min(8, Math.floor(trials / (8 * Math.max(1, tasks)))));
}

/**
 * Which strategy a task is tuned with, and on which template: a trace-only
 * strategy of the table (`ansor`) searches the workload's sketch space, the
 * knob strategies the first of `templates` that schedules the workload, else
 * its default template; a knob strategy on a workload without a template
 * falls back to `random` on the sketches. The name says which
 * (`xgb conv2d-packed`).
 */
export function taskStrategyPlan(
  name: string,
  w: Workload,
  templates: string[] = [],
): { name: string; template?: string } {
  // STRATEGY@PRESET: the table's name picks the space, the full name labels the task.
  const base = parseStrategyName(name).strategy;
  if (!STRATEGIES[base]?.knobs) return { name };
  const own = templatesOf(w);
  const template = templates.find((t) => own.includes(t)) ??
    (own.includes(defaultTemplate(w)) ? defaultTemplate(w) : undefined);
  if (base !== "random" && template) return { name: `${name} ${template}`, template };
  return { name: "random" };
}

/**
 * Refuses a preset whose settings no task of a network session would run
 * with: `random` (and any knob strategy without a template) searches the
 * sketches, where the settings of a knob space do not apply.
 *
 * @throws {RangeError} naming the preset
 */
export function checkNetworkPreset(r: ResolvedStrategy): void {
  if (r.preset && r.strategy === "random") {
    throw new RangeError(
      `${r.label}: tune-network's random searches the sketches, where the settings ${
        JSON.stringify(r.hyper)
      } of a knob space do not apply`,
    );
  }
}

/**
 * The strategy a task is tuned with (see {@link taskStrategyPlan}).
 *
 * @example
 * ```ts
 * import { taskStrategy } from "./network_tuning.ts";
 * import { conv2d } from "../ir/workloads.ts";
 * const s = await taskStrategy("ga", conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1), 1, ["matmul-packed", "conv2d-packed"]);
 * if (s.name !== "ga conv2d-packed") throw new Error(s.name);
 * ```
 */
export async function taskStrategy(
  name: string,
  w: Workload,
  seed: number,
  templates: string[] = [],
  pretrain: Sample[] = [],
): Promise<{ name: string; strategy: Strategy }> {
  const plan = taskStrategyPlan(name, w, templates);
  const r = resolveStrategy(name);
  if (plan.template === undefined) {
    const traces = STRATEGIES[r.strategy]?.knobs ? "random" : r.strategy;
    return { name: plan.name, strategy: createTraceStrategy(traces, defaultSpace(w), { seed }) };
  }
  const t = templateSpace(plan.template, w);
  // With samples of other tasks, the variant whose model learns from them first.
  const own = r.strategy;
  const transfer = pretrain.length > 0 && canTransfer(own) ? `${own}-transfer` : own;
  return {
    name: plan.name,
    strategy: await createStrategy(transfer, t.space, {
      seed,
      candidateOf: t.candidateOf,
      ...(transfer !== own ? { pretrain } : {}),
      ...(r.preset ? { hyper: r.hyper } : {}),
    }),
  };
}

/**
 * Whether a strategy learns a cost model that samples of other tasks can
 * pretrain (it has a `-transfer` variant in the table).
 *
 * @example
 * ```ts
 * import { canTransfer } from "./network_tuning.ts";
 * if (!canTransfer("xgb") || canTransfer("ga")) throw new Error();
 * ```
 */
export function canTransfer(strategy: string): boolean {
  return STRATEGIES[`${strategy}-transfer`]?.pretrain === true;
}

/**
 * A task's template and its knobs with their options, as
 * {@link knobTranslator} reads them (and as a run's config records them,
 * `knobSpace`, so that later sessions can read its knob vectors).
 */
export interface TaskSpace {
  template: string;
  knobs: readonly { name: string; options: readonly unknown[] }[];
}

/**
 * The template and knob space a task is tuned on by a knob strategy;
 * undefined for a task tuned on sketches.
 *
 * @example
 * ```ts
 * import { taskSpace } from "./network_tuning.ts";
 * import { conv2d } from "../ir/workloads.ts";
 * const w = conv2d(1, 8, 8, 8, 16, 3, 3, 1, 1);
 * if (taskSpace("xgb", w, ["conv2d-nchwc"])?.template !== "conv2d-nchwc") throw new Error();
 * if (taskSpace("ansor", w) !== undefined) throw new Error();
 * ```
 */
export function taskSpace(
  strategy: string,
  w: Workload,
  templates: string[] = [],
): TaskSpace | undefined {
  const plan = taskStrategyPlan(strategy, w, templates);
  if (plan.template === undefined) return undefined;
  const { knobs } = templateSpace(plan.template, w).space;
  return {
    template: plan.template,
    knobs: knobs.map((k) => ({ name: k.name, options: k.options })),
  };
}

/**
 * How a knob vector of task `from` reads in the space of task `to`: the same
 * template, and every knob of `to` present in `from` (matched by name, each
 * value mapped to its option index in `to`); knobs only `from` has are left
 * out (a padded convolution's `pad_parallel` means nothing to a 1x1 one).
 * Undefined when the spaces cannot be matched; the function gives undefined
 * for a vector with a value `to` does not offer.
 *
 * @example
 * ```ts
 * import { knobTranslator, taskSpace } from "./network_tuning.ts";
 * import { conv2d } from "../ir/workloads.ts";
 * const t = ["conv2d-nchwc"];
 * const padded = taskSpace("xgb", conv2d(1, 64, 56, 56, 64, 3, 3, 1, 1), t)!;
 * const pointwise = taskSpace("xgb", conv2d(1, 64, 56, 56, 128, 1, 1, 2, 0), t)!;
 * const read = knobTranslator(padded, pointwise)!;
 * // fr, yr, xr, order, unroll_kw, parallel, pad_parallel -> the first six.
 * if (read([1, 0, 2, 1, 0, 1, 1])?.join() !== "1,0,2,1,0,1") throw new Error();
 * if (knobTranslator(pointwise, padded) !== undefined) throw new Error("no pad_parallel to read");
 * ```
 */
export function knobTranslator(
  from: TaskSpace,
  to: TaskSpace,
): ((knobs: number[]) => number[] | undefined) | undefined {
  if (from.template !== to.template) return undefined;
  if (!to.knobs.every((k) => from.knobs.some((f) => f.name === k.name))) return undefined;
  return (knobs) =>
    pointOfValues(
      to.knobs,
      Object.fromEntries(from.knobs.map((k, i) => [k.name, k.options[knobs[i]]])),
    );
}

/** Most samples a task's model is pretrained on (this session's other tasks first). */
const MAX_PRETRAIN = 4096;

/**
 * What the runs of other tasks measured, as samples for a task's cost model:
 * every candidate with knobs and a result (failures too: the model learns
 * them as 0), its knobs read in the task's space, grouped by task so that
 * throughputs are normalised per task; the first {@link MAX_PRETRAIN} in the
 * order of `runs` (the runs after those are not read).
 */
function transferSamples(
  db: RecordsDB,
  runs: { runId: number; key: string; read: (knobs: number[]) => number[] | undefined }[],
): Sample[] {
  const out: Sample[] = [];
  for (const { runId, key, read } of runs) {
    if (out.length >= MAX_PRETRAIN) break;
    for (const c of db.candidates(runId)) {
      const knobs = c.knobs && c.result ? read(c.knobs) : undefined;
      if (!knobs) continue;
      const ok = c.result!.errorKind === "none" && c.result!.seconds !== null;
      out.push({
        candidate: { knobs },
        ...(ok ? { seconds: c.result!.seconds! } : {}),
        group: key,
      });
    }
  }
  return out.slice(0, MAX_PRETRAIN);
}

/**
 * The default schedule of a workload as a candidate: the trace of an
 * unscheduled `Schedule` (no instructions, no knobs), which the executor also
 * runs for a layer without a tuned trace.
 *
 * @example
 * ```ts
 * import { defaultScheduleCandidate } from "./network_tuning.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const c = defaultScheduleCandidate(matmul(8, 8, 8));
 * if (c.trace?.insts.length !== 0 || c.knobs !== undefined) throw new Error();
 * ```
 */
export function defaultScheduleCandidate(w: Workload): Candidate {
  return { trace: traceOf(new Schedule(w, { prng: createPrng(0) })) };
}

/**
 * What a network's task tries first: its default schedule (so no task ends
 * slower than untuned), then, for a knob strategy whose template has one,
 * the template's heuristic point (`TemplateSpace.heuristic`), a hand-written
 * tile that a few hundred trials of a large space may not reach (where the
 * template has one for the machine's vector width).
 *
 * @example
 * ```ts
 * import { taskSeeds } from "./network_tuning.ts";
 * import { conv2dNCHWc } from "../ir/workloads.ts";
 * const w = conv2dNCHWc(1, 32, 14, 14, 64, 3, 3, 1, 1, 16, 16);
 * const [untuned, rule] = taskSeeds(w, "xgb", ["conv2d-blocked"]);
 * if (untuned.knobs !== undefined) throw new Error();
 * // conv2d-blocked's heuristic point, its tile by this CPU's registers (AVX-512 or AVX2).
 * if (rule?.knobs === undefined) throw new Error();
 * ```
 */
export function taskSeeds(w: Workload, strategy: string, templates: string[] = []): Candidate[] {
  const template = taskStrategyPlan(strategy, w, templates).template;
  const rule = template ? templateSpace(template, w).heuristic?.() : undefined;
  return [defaultScheduleCandidate(w), ...(rule ? [rule] : [])];
}

/** A task's run, strategy and measurer, made on its first round. */
interface LiveTask {
  runId: number;
  strategy: Strategy;
  measurer: MemoMeasurer;
}

/**
 * Tunes the tasks of a network under one budget; see the module documentation.
 *
 * @example
 * ```ts ignore
 * import { tuneNetwork } from "./network_tuning.ts";
 * import { extractTasks } from "../network/tasks.ts";
 * import { builtinNetwork } from "../network/builtin.ts";
 * const tasks = extractTasks(builtinNetwork("squeezenet1_1", { size: 64 }));
 * const o = await tuneNetwork({ tasks, db: "sq.db", trials: 36, strategy: "xgb", scheduler: "round-robin" });
 * console.log(o.objectiveSeconds * 1e3, "ms");
 * ```
 */
export async function tuneNetwork(o: NetworkTuningOptions): Promise<NetworkTuningOutcome> {
  checkObject(o, "tuneNetwork options");
  checkArray(o.tasks, "tasks", "tasks (extractTasks(net))");
  checkString(o.db, "db", { what: "a records database path" });
  checkInteger(o.trials, "trials", { min: 1 });
  checkString(o.strategy, "strategy", { what: "a strategy name" });
  // STRATEGY@PRESET: read and checked once here (a missing preset or bad setting is a RangeError).
  const resolved = resolveStrategy(o.strategy);
  checkNetworkPreset(resolved);
  checkInteger(o.seed, "seed", { optional: true });
  checkInteger(o.perRound, "perRound", { min: 1, optional: true });
  checkNumber(o.timeoutSeconds, "timeoutSeconds", { min: 0, above: true, optional: true });
  checkInteger(o.unity, "unity", { min: 1, optional: true });
  const seed = o.seed ?? 1;
  const perRound = o.perRound ?? defaultPerRound(o.trials, o.tasks.length);
  const timing = { ...DEFAULTS.tune.timing, ...o.timing };
  const timeoutSeconds = o.timeoutSeconds ?? 10;
  const db = RecordsDB.open(o.db, { mode: "create" });
  const builder = createBuilder({
    cacheDir: o.cacheDir ?? Deno.env.get("TUNEBOOK_CACHE"),
    batch: o.unity ?? DEFAULTS.tune.unity,
  });
  const runner = createRunner({ timing, timeoutSeconds });
  const finalTiming = finalistTimingOf(timing, o.finalistTiming);
  // The finalists' own worker pool, started for their re-timing when it times otherwise.
  let finalRunner: ReturnType<typeof createRunner> | undefined;
  const store = sqliteRecordStore(db, { close: false });
  // Runs there when the session started: a warm-started task's finalists may come from them.
  const before = o.warm === false
    ? 0
    : Math.min(o.recordsUpTo ?? Infinity, db.runs().at(-1)?.id ?? 0);
  const live = new Map<number, LiveTask>();
  const spaces = new Map<number, TaskSpace | undefined>();
  const transferring = o.transfer !== false && canTransfer(resolved.strategy);
  // Runs there before this session, newest first (their records can pretrain a task's model).
  const earlier = !transferring || o.warm === false ? [] : db.runs()
    .filter((r) => recordTarget(r.target)?.host === true && !(r.id > (o.recordsUpTo ?? Infinity)))
    .reverse();
  try {
    const warm: RecordedStart[] = Array.isArray(o.warm)
      ? o.warm
      : o.warm === false
      ? o.tasks.map(() => ({ trials: 0 }))
      : warmStart(db, o.tasks.map((t) => t.workload));
    const outcomes: TaskOutcome[] = o.tasks.map((t, i) => ({
      key: taskKey(t.workload),
      workload: t.workload,
      weight: t.weight,
      strategy: taskStrategyPlan(o.strategy, t.workload, o.templates).name,
      trials: 0,
      warmTrials: warm[i].trials,
      ...(warm[i].bestSeconds !== undefined
        ? { bestSeconds: warm[i].bestSeconds, bestTrace: warm[i].bestTrace }
        : {}),
    }));
    const compiler = await builder.describe();
    const version = await tunebookVersion();
    const liveTask = async (i: number): Promise<LiveTask> => {
      let t = live.get(i);
      if (t) return t;
      const w = o.tasks[i].workload;
      const space = taskSpace(o.strategy, w, o.templates);
      const transfer = transferring && space !== undefined;
      const donors = !transfer ? [] : [...live].flatMap(([j, other]) => {
        const from = spaces.get(j);
        const read = j !== i && from ? knobTranslator(from, space) : undefined;
        return read ? [{ runId: other.runId, key: outcomes[j].key, read }] : [];
      });
      // Earlier sessions' runs whose config records their knob space, newest first.
      const recorded = !transfer ? [] : earlier.flatMap((run) => {
        const from = (run.config as { knobSpace?: TaskSpace }).knobSpace;
        const read = from ? knobTranslator(from, space) : undefined;
        return read ? [{ runId: run.id, key: `run ${run.id}`, read }] : [];
      });
      const pretrain = transferSamples(db, [...donors, ...recorded]);
      const own = await taskStrategy(o.strategy, w, seed + i, o.templates, pretrain);
      const name = own.name;
      const strategy = o.seedDefault === false
        ? own.strategy
        : seededStrategy(own.strategy, taskSeeds(w, o.strategy, o.templates));
      const runId = db.startRun({
        strategy: name,
        seed: seed + i,
        trials: o.trials,
        target: "cpu",
        workloadId: db.upsertWorkload({ name: w.name, shape: w.shape, flops: w.flops }),
        config: {
          workload: w.name,
          shape: w.shape,
          strategy: name,
          // A preset's settings, where the task runs them (on a knob template).
          ...(resolved.preset && space ? { hyper: resolved.hyper } : {}),
          seed: seed + i,
          network: {
            task: i,
            weight: o.tasks[i].weight,
            scheduler: o.scheduler ?? "gradient",
            seedDefault: o.seedDefault !== false,
            // Samples its model started from: how many, from how many other tasks of this
            // session and how many runs of earlier sessions.
            transfer: { samples: pretrain.length, tasks: donors.length, runs: recorded.length },
          },
          ...(space ? { knobSpace: space } : {}),
          timing,
          timeoutSeconds,
        },
        machine: describeMachine(),
        compiler,
        tunebookVersion: version,
      });
      // One runner (worker pool) for every task; each task's measurer holds its reference.
      const native = createNativeMeasurer({ workload: w, builder, runner, closeRunner: false });
      // Measured here: each result records the machine's conditions (measure/conditions.ts).
      const measurer = memoMeasurer(withConditions(native), (c) => JSON.stringify(c.trace));
      for (const [k, r] of o.shared?.get(outcomes[i].key) ?? []) measurer.remember(k, r);
      t = { runId, strategy, measurer };
      live.set(i, t);
      spaces.set(i, space);
      outcomes[i].runId = runId;
      return t;
    };
    const tuneRound = async (i: number, trials: number) => {
      const t = await liveTask(i);
      const before = db.counts(t.runId).measured;
      const r = await tune({
        strategy: t.strategy,
        measurer: t.measurer,
        store,
        runId: t.runId,
        trials,
        firstTrial: (await store.candidates(t.runId)).length,
        flops: o.tasks[i].workload.flops,
        batchSize: trials,
      });
      const measured = db.counts(t.runId).measured - before;
      const best = db.best(t.runId);
      const out = outcomes[i];
      out.trials += measured;
      const s = best?.result.seconds ?? undefined;
      if (best && s !== undefined && !(out.bestSeconds! <= s)) {
        out.bestSeconds = s;
        out.bestTrace = best.trace;
      }
      return { measured, bestSeconds: s, exhausted: r.stop === "exhausted" };
    };
    /** Re-times every task's finalists; returns the estimate with their figures. */
    const retimeTasks = async (f: { top: number; rounds: number }): Promise<number> => {
      const recorded = db.runs().map((run) => ({
        id: run.id,
        key: db.workload(run.workloadId)!.key,
      }));
      for (const [i, task] of o.tasks.entries()) {
        const own = live.get(i)?.runId;
        const key = workloadKey(task.workload.name, task.workload.shape);
        const runs = recorded.filter((run) =>
          (run.id <= before || run.id === own) && run.key === key
        )
          .map((run) => run.id);
        const picked = finalistsOf(db, task.workload, f.top, { runs });
        if (picked.length === 0) continue;
        finalRunner ??= createRunner({ timing: finalTiming, timeoutSeconds });
        // Each round's result carries the machine's conditions, recorded with the finalists.
        const measurer = withConditions(createNativeMeasurer({
          workload: task.workload,
          builder,
          runner: finalRunner,
          closeRunner: false,
        }));
        let retimed;
        try {
          retimed = await retimeFinalists(picked, measurer, f.rounds);
        } finally {
          await measurer.close?.();
        }
        const runId = await recordFinalists(db, task.workload, retimed, {
          rounds: f.rounds,
          from: runs,
          machine: describeMachine(),
          compiler,
          tunebookVersion: version,
          config: { network: { task: i, weight: task.weight }, timing: finalTiming },
        });
        const out = outcomes[i];
        const recordedSeconds = out.bestSeconds;
        if (Number.isFinite(retimed[0].medianSeconds)) {
          out.bestSeconds = retimed[0].medianSeconds;
          out.bestTrace = retimed[0].trace;
        }
        const valid = retimed.filter((r) => Number.isFinite(r.medianSeconds));
        const ranked = valid.map((r) => ({
          seconds: r.medianSeconds,
          times: r.times,
          ...(r.conditions ? { conditions: r.conditions } : {}),
        }));
        // The finalists' usual speed probe, when enough of them carry one.
        const usual = usualAmong(ranked);
        out.finalists = {
          runId,
          count: retimed.length,
          rounds: f.rounds,
          recordedSeconds,
          ...(ranked.length > 0
            ? {
              noise: rankingNoise(ranked[0], ranked[1], {
                labels: ["fastest finalist", "next"],
                ...(usual !== undefined ? { usualProbeGBps: usual } : {}),
              }),
            }
            : {}),
        };
        o.onFinalists?.(i, out);
      }
      return outcomes.reduce((a, t) => a + t.weight * (t.bestSeconds ?? NaN), 0);
    };
    const schedule = await scheduleTasks({
      tasks: o.tasks.map((t) => ({
        weight: t.weight,
        flops: t.workload.flops,
        group: t.workload.name,
      })),
      trials: o.trials,
      perRound,
      scheduler: o.scheduler ?? "gradient",
      warm,
      seed,
      tuneTask: tuneRound,
      onRound: (r) => o.onRound?.(r, outcomes[r.task]),
    });
    const finalistsObjective = o.finalists && o.finalists.top > 0
      ? await retimeTasks(o.finalists)
      : undefined;
    for (const [i, t] of live) {
      db.finishRun(t.runId);
      if (!o.shared) continue;
      const key = outcomes[i].key;
      const known = o.shared.get(key) ?? o.shared.set(key, new Map()).get(key)!;
      for (const [k, r] of t.measurer.results) known.set(k, r);
    }
    return {
      tasks: outcomes,
      rounds: schedule.rounds,
      objectiveSeconds: schedule.objective,
      warmObjectiveSeconds: o.tasks.reduce(
        (a, t, i) => a + t.weight * (warm[i].bestSeconds ?? NaN),
        0,
      ),
      ...(finalistsObjective !== undefined
        ? { finalistsObjectiveSeconds: finalistsObjective }
        : {}),
    };
  } finally {
    for (const t of live.values()) await t.measurer.close?.();
    await runner.close();
    await finalRunner?.close();
    db.close();
  }
}
