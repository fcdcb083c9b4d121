/**
 * `deno task tune-network`: tunes the tasks of a whole network under one
 * trial budget shared by a task scheduler, prints a progress line per round
 * on stderr and one JSON summary on stdout (each task's best latency,
 * GFLOP/s and trials; the end-to-end estimate and, measured by the executor
 * with the tuned kernels, the real end-to-end latency and its check against
 * the reference), and writes a plot of the estimate against trials, one line
 * per scheduler and strategy.
 *
 * Exit status: 0 done; 2 bad arguments, network file or database (one line
 * on stderr); 1 the executor's output does not match the reference, or an
 * unexpected error.
 * @module
 */
import { parseTrace, type Trace } from "../ir/trace.ts";
import { measureEndToEnd, type NetworkEstimate, networkEstimate } from "../network/end_to_end.ts";
import { layoutName, parseLayout } from "../network/layout.ts";
import { loadNetwork } from "../network/load.ts";
import { BUILTIN_NETWORKS } from "../network/builtin.ts";
import { checkNetworkMemory, checkTaskMemory } from "../network/memory.ts";
import { type Network, NetworkError } from "../network/network.ts";
import { extractTasks, type Task } from "../network/tasks.ts";
import { randomWeights, type Weights } from "../network/weights.ts";
import { tuningCurveSVG } from "../plots/tuning_curve.ts";
import { writePlot } from "../plots/figure.ts";
import { RecordsDB } from "../datasets/db.ts";
import {
  checkNetworkPreset,
  defaultPerRound,
  estimateCurve,
  type NetworkTuningOutcome,
  type TaskOutcome,
  tuneNetwork,
} from "../tuner/network_tuning.ts";
import { TASK_SCHEDULERS, type TaskSchedulerName, warmStart } from "../tuner/task_scheduler.ts";
import { trialsToReach } from "../tuner/trials_used.ts";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { checkOutputFile, printResult } from "./output.ts";
import { didYouMean } from "./names.ts";
import type { MeasureResult } from "../measure/measurer.ts";
import { TEMPLATE_NAMES } from "../search/templates/registry.ts";
import { nonNegativeInt, parseFlags, positiveInt, runJsonCommand, UsageError } from "./args.ts";
import { STRATEGY_NAMES, TRANSFER_STRATEGIES } from "../tuner/strategies.ts";
import { parseStrategyName, resolveStrategy } from "../tuner/presets.ts";
import { DEFAULTS, RANGES } from "../ir/defaults.ts";

/** Strategies a network's tasks can be tuned with: the table's, but those that need records to pretrain on. */
const STRATEGIES = STRATEGY_NAMES.filter((s) => !TRANSFER_STRATEGIES.includes(s));

/** Usage text of `tune-network`. */
export const TUNE_NETWORK_USAGE =
  `usage: deno task tune-network --network NAME|FILE.json|FILE.onnx [options]
  --network N         resnet18, mobilenet_v2, squeezenet1_1, a FILE.json of layers or a FILE.onnx
  --trials N          trial budget over all tasks, per scheduler and strategy (default ${DEFAULTS.tune.trials})
  --strategy S[,S]    strategy of every task (default random); several: one session each;
                      S@PRESET runs S with a preset's settings (tune-strategy's runs/presets/)
  --template T[,T]    knob templates of the knob strategies: a task takes the first that
                      schedules it (e.g. conv2d-packed,matmul-packed), else its default one
  --scheduler X[,X]   gradient or round-robin (default gradient); several: one session each
  --layout L          NCHW (default) or NCHW16c: convolutions on channel blocks
                      (conv2d_nchwc, template conv2d-blocked), the activations kept
                      blocked between them
  --db PATH           records database; its records warm-start the tasks (default runs.db)
  --per-round N       trials per round of a task (default: 1 to 8, the warm-up round of
                      every task within an eighth of the budget)
  --seed N            seed of strategies, scheduler, weights and input (default 1)
  --size N            input height and width of a built-in network (default 224)
  --plot FILE         plot of the estimate against trials, .svg or .png (default
                      tune_network_<network>.svg beside --db, or under runs/ when --db
                      is left at runs.db)
  --no-seed-default   do not measure each task's default schedule as its first trial
                      (by default it is, so no task ends slower than untuned)
  --no-transfer       do not pretrain a task's cost model (xgb, xgb-rank) on the other
                      tasks' measurements and the earlier records in --db
  --finalists N       after the last round, time each task's N fastest candidates again,
                      every one once per round, and keep the fastest over the rounds
                      (0: keep the fastest single record; default 8 when those timings
                      are at most a quarter of --trials, else 0)
  --finalist-rounds N rounds of that re-timing (default 3)
  --unity N           compile up to N of a round's candidates in one file and compiler
                      process (default 8; 1 compiles each alone)
  --repeat N          timed forward passes of the tuned network (default 5)
  --no-execute        skip running the tuned network (estimate only)
  --quiet             no line per round on stderr`;

/** Parsed arguments of `tune-network`. */
export interface TuneNetworkArgs {
  network: string;
  trials: number;
  strategies: string[];
  templates: string[];
  schedulers: TaskSchedulerName[];
  db: string;
  perRound?: number;
  seed: number;
  size: number;
  plot?: string;
  repeat: number;
  execute: boolean;
  /** Measure each task's default schedule first (`--no-seed-default`: false). */
  seedDefault: boolean;
  /**
   * Pretrain each task's cost model on the other tasks' samples and the earlier
   * records in `--db` (`--no-transfer`: false).
   */
  transfer: boolean;
  /** Finalists re-timed per task (0: none; undefined: {@link defaultFinalists}). */
  finalists?: number;
  /** Rounds of their re-timing. */
  finalistRounds: number;
  /** No line per round on stderr (`--quiet`). */
  quiet: boolean;
  /** Channel block of the convolutions' activations (`--layout`; 1: NCHW). */
  block: number;
  /** Candidates compiled together per compiler process (`--unity`). */
  unity: number;
}

function list<T extends string>(flag: string, v: string, known: readonly T[]): T[] {
  const items = v.split(",").map((s) => s.trim());
  for (const s of items) {
    if (!known.includes(s as T)) {
      throw new UsageError(`--${flag} "${s}" is not one of ${known.join(", ")}`);
    }
  }
  return [...new Set(items)] as T[];
}

/**
 * `--strategy`'s names, each a table name or `NAME@PRESET` (tuner/presets.ts), checked here:
 * an unknown name, a missing preset or a bad setting is a usage error naming it.
 */
function strategyList(v: string): string[] {
  const items = v.split(",").map((s) => s.trim());
  for (const s of items) {
    const { strategy, preset } = parseStrategyName(s);
    if (!STRATEGIES.includes(strategy)) {
      throw new UsageError(`--strategy "${strategy}" is not one of ${STRATEGIES.join(", ")}`);
    }
    if (preset === undefined) continue;
    try {
      checkNetworkPreset(resolveStrategy(s));
    } catch (e) {
      throw new UsageError(`--strategy ${s}: ${(e as Error).message}`);
    }
  }
  return [...new Set(items)];
}

/**
 * Where `tune-network` writes its plot when `--plot` is not given: beside
 * `--db`, or under `runs/` when `--db` is left at its default `runs.db`;
 * never into the current folder unasked.
 *
 * @example
 * ```ts
 * import { defaultPlot } from "./tune_network.ts";
 * if (defaultPlot("runs.db", "resnet18") !== "runs/tune_network_resnet18.svg") throw new Error();
 * if (defaultPlot("/tmp/x/n.db", "two") !== "/tmp/x/tune_network_two.svg") throw new Error();
 * ```
 */
export function defaultPlot(db: string, network: string): string {
  return join(db === "runs.db" ? "runs" : dirname(db), `tune_network_${network}.svg`);
}

/**
 * Parses the command line; a bad flag is a {@link UsageError}.
 *
 * @example
 * ```ts
 * import { parseTuneNetworkArgs } from "./tune_network.ts";
 * const a = parseTuneNetworkArgs(["--network", "resnet18", "--scheduler", "gradient,round-robin"]);
 * if (a.trials !== 64 || a.schedulers.length !== 2 || a.db !== "runs.db") throw new Error();
 * ```
 */
export function parseTuneNetworkArgs(argv: string[]): TuneNetworkArgs {
  const v = parseFlags(argv, {
    network: { type: "string" },
    trials: { type: "string" },
    strategy: { type: "string", default: "random" },
    template: { type: "string" },
    scheduler: { type: "string", default: "gradient" },
    db: { type: "string", default: "runs.db" },
    "per-round": { type: "string" },
    seed: { type: "string" },
    size: { type: "string" },
    plot: { type: "string" },
    repeat: { type: "string" },
    "no-execute": { type: "boolean", default: false },
    "no-seed-default": { type: "boolean", default: false },
    "no-transfer": { type: "boolean", default: false },
    finalists: { type: "string" },
    "finalist-rounds": { type: "string" },
    unity: { type: "string" },
    layout: { type: "string", default: "NCHW" },
    quiet: { type: "boolean", default: false },
  }, TUNE_NETWORK_USAGE);
  if (!v.network) {
    throw new UsageError(
      "Missing --network resnet18|mobilenet_v2|squeezenet1_1|FILE.json|FILE.onnx",
    );
  }
  const builtins = Object.keys(BUILTIN_NETWORKS);
  if (!builtins.includes(v.network) && !/\.(json|onnx)$/.test(v.network)) {
    throw new UsageError(
      `Unknown network ${JSON.stringify(v.network)}${didYouMean(v.network, builtins)}; give ${
        builtins.join(", ")
      }, FILE.json or FILE.onnx`,
    );
  }
  if (v.db!.trim() === "") throw new UsageError("--db must name a records database file");
  let block: number;
  try {
    block = parseLayout(v.layout!);
  } catch (e) {
    throw new UsageError(`--layout: ${(e as Error).message}`);
  }
  const unity = positiveInt("unity", v.unity, DEFAULTS.tune.unity);
  if (unity > RANGES.unity.max) {
    throw new UsageError(`--unity must be at most ${RANGES.unity.max}, got ${unity}`);
  }
  if (v.plot !== undefined && !/\.(svg|png)$/.test(v.plot)) {
    throw new UsageError(`--plot "${v.plot}" must end in .svg or .png`);
  }
  return {
    network: v.network,
    trials: positiveInt("trials", v.trials, DEFAULTS.tune.trials)!,
    strategies: strategyList(v.strategy!),
    templates: v.template === undefined ? [] : list("template", v.template, TEMPLATE_NAMES),
    schedulers: list("scheduler", v.scheduler!, TASK_SCHEDULERS),
    db: v.db!,
    perRound: positiveInt("per-round", v["per-round"]),
    seed: positiveInt("seed", v.seed, 1)!,
    size: positiveInt("size", v.size, 224)!,
    plot: v.plot,
    repeat: positiveInt("repeat", v.repeat, 5)!,
    execute: !v["no-execute"],
    seedDefault: !v["no-seed-default"],
    transfer: !v["no-transfer"],
    finalists: nonNegativeInt("finalists", v.finalists),
    quiet: v.quiet!,
    finalistRounds: positiveInt("finalist-rounds", v["finalist-rounds"], DEFAULT_FINALIST_ROUNDS)!,
    block,
    unity,
  };
}

/**
 * Rounds of the finalists' re-timing by default. Eight finalists in 3 rounds
 * found a kernel 1.3x faster than the 4 finalists in 5 rounds had for
 * ResNet-18's first layer, which tuning had recorded 7th (README, "Flat
 * positions").
 */
export const DEFAULT_FINALIST_ROUNDS = 3;

/** Finalists per task by default, when {@link defaultFinalists} finds room for them. */
export const DEFAULT_FINALISTS = 8;

/**
 * Finalists per task when `--finalists` is not given: 8, when their re-timing
 * (`tasks x 8 x rounds` measurements) is at most a quarter of the trial
 * budget; else none, so a short session is not mostly re-timing.
 *
 * @example
 * ```ts
 * import { defaultFinalists } from "./tune_network.ts";
 * if (defaultFinalists(2000, 12, 3) !== 8 || defaultFinalists(400, 12, 3) !== 0) throw new Error();
 * ```
 */
export function defaultFinalists(trials: number, tasks: number, rounds: number): number {
  return tasks * DEFAULT_FINALISTS * rounds <= trials / 4 ? DEFAULT_FINALISTS : 0;
}

/** Seconds as milliseconds to 5 significant digits; null for none. */
const ms = (s: number | undefined) =>
  s === undefined || Number.isNaN(s) ? null : +(s * 1e3).toPrecision(5);

/** The best trace of each task, by task key. */
function tunedTraces(o: NetworkTuningOutcome): Map<string, Trace> {
  return new Map(
    o.tasks.flatMap((t) => t.bestTrace ? [[t.key, parseTrace(JSON.parse(t.bestTrace))]] : []),
  );
}

/** How soon the gradient scheduler reached round robin's result (the issue's target: half the budget). */
export interface SchedulerComparison {
  /** Round robin's estimate at the end of its budget, ms. */
  roundRobinMs: number;
  /** Trials round robin used. */
  budget: number;
  /** First trial after which the gradient scheduler's estimate was at most that; null: never. */
  gradientTrials: number | null;
}

/**
 * Compares the estimate curves (ms after each trial) of a gradient and a
 * round-robin session of one strategy; undefined unless both ran and round
 * robin reached an estimate.
 *
 * @example
 * ```ts
 * import { schedulerComparison } from "./tune_network.ts";
 * const c = schedulerComparison([NaN, 9, 6, 5, 5], [NaN, NaN, 8, 7, 6]);
 * if (c?.gradientTrials !== 3 || c.roundRobinMs !== 6 || c.budget !== 5) throw new Error();
 * ```
 */
export function schedulerComparison(
  gradient: number[] | undefined,
  roundRobin: number[] | undefined,
): SchedulerComparison | undefined {
  const target = roundRobin?.at(-1);
  if (!gradient || !roundRobin || target === undefined || !Number.isFinite(target)) {
    return undefined;
  }
  return {
    roundRobinMs: target,
    budget: roundRobin.length,
    gradientTrials: trialsToReach(gradient, target) ?? null,
  };
}

/** One session's part of the summary. */
async function sessionSummary(
  label: { strategy: string; scheduler: string },
  o: NetworkTuningOutcome,
  net: Network,
  weights: Weights,
  a: TuneNetworkArgs,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {
    ...label,
    trials: o.tasks.reduce((s, t) => s + t.trials, 0),
    rounds: o.rounds.length,
    estimateMs: ms(o.objectiveSeconds),
    warmEstimateMs: ms(o.warmObjectiveSeconds),
    ...(o.finalistsObjectiveSeconds !== undefined
      ? { finalistsEstimateMs: ms(o.finalistsObjectiveSeconds) }
      : {}),
    tasks: o.tasks.map((t) => ({
      task: t.key,
      weight: t.weight,
      strategy: t.strategy,
      trials: t.trials,
      warmTrials: t.warmTrials,
      bestMs: ms(t.bestSeconds),
      gflops: t.bestSeconds ? +(t.workload.flops / t.bestSeconds / 1e9).toFixed(2) : null,
      runId: t.runId ?? null,
      ...(t.finalists
        ? {
          finalists: {
            count: t.finalists.count,
            rounds: t.finalists.rounds,
            recordedBestMs: ms(t.finalists.recordedSeconds),
            runId: t.finalists.runId,
            ...(t.finalists.noise
              ? {
                rankingUncertain: t.finalists.noise.uncertain,
                load1: t.finalists.noise.best.load1,
              }
              : {}),
          },
        }
        : {}),
    })),
  };
  if (a.execute) {
    const e = await measureEndToEnd(net, weights, {
      traces: tunedTraces(o),
      repeat: a.repeat,
      seed: a.seed,
      check: true,
      block: a.block,
      isolated: true,
    });
    const tunerSeconds = o.finalistsObjectiveSeconds ?? o.objectiveSeconds;
    const estimate = e.isolated && Number.isFinite(tunerSeconds)
      ? networkEstimate(tunerSeconds * 1e3, e.isolated.hot, e.isolated.inPass)
      : undefined;
    const flushed = e.isolated && estimate
      ? networkEstimate(tunerSeconds * 1e3, e.isolated.hot, e.isolated.cold)
      : undefined;
    let shown:
      | (NetworkEstimate & { ratio: number; retimedRatio: number; flushedCacheStateMs: number })
      | undefined;
    if (estimate) {
      const ratio = estimate.networkMs / e.latencyMs;
      const retimedRatio = estimate.retimedMs / e.latencyMs;
      printResult(
        `[${label.scheduler} ${label.strategy}] network estimate ${
          estimate.networkMs.toFixed(2)
        } ms (tuned kernels ${estimate.tunerMs.toFixed(2)} + other steps ${
          estimate.otherStepsMs.toFixed(2)
        } + cache state in a pass ${estimate.coldExtraMs.toFixed(2)}); measured ${
          e.latencyMs.toFixed(2)
        } ms (estimate / measured ${ratio.toFixed(3)}); with the tuned kernels re-timed now ${
          estimate.retimedMs.toFixed(2)
        } ms (${retimedRatio.toFixed(3)})`,
      );
      shown = {
        ...estimate,
        ratio: +ratio.toFixed(3),
        retimedRatio: +retimedRatio.toFixed(3),
        flushedCacheStateMs: flushed!.coldExtraMs,
      };
    }
    out.measured = {
      latencyMs: +e.latencyMs.toFixed(3),
      ...(shown ? { estimate: shown } : {}),
      timesMs: e.timesMs.map((t) => +t.toFixed(3)),
      kernels: e.kernels,
      tunedKernels: e.tuned,
      matchesReference: e.matchesReference,
      maxRelativeError: e.maxRelativeError,
    };
  }
  return out;
}

/** Over the rounds, a finalist this much slower than the task's best as recorded gets a warning. */
export const FINALISTS_SLOWDOWN_WARNING = 1.5;

/**
 * Warnings on a task's re-timed finalists: their ranking within the noise
 * (tuner/ranking_noise.ts), and the fastest over the rounds
 * {@link FINALISTS_SLOWDOWN_WARNING} times or more slower than the task's
 * best as the tuning recorded it (the machine ran slower during the rounds:
 * the estimate after the finalists then overstates the network, and the
 * re-timed estimate does not).
 *
 * @example
 * ```ts
 * import { finalistsWarnings } from "./tune_network.ts";
 * const t = { bestSeconds: 3e-3, finalists: { runId: 1, count: 4, rounds: 3, recordedSeconds: 1e-3 } };
 * const [w] = finalistsWarnings(t);
 * if (!w.startsWith("warning: the fastest finalist ran 3.00x slower over its rounds")) throw new Error(w);
 * ```
 */
export function finalistsWarnings(t: Pick<TaskOutcome, "bestSeconds" | "finalists">): string[] {
  const f = t.finalists;
  if (!f) return [];
  const out = f.noise?.warning ? [f.noise.warning] : [];
  const recorded = f.recordedSeconds, best = t.bestSeconds;
  if (recorded && best && best >= FINALISTS_SLOWDOWN_WARNING * recorded) {
    const load = f.noise?.best.load1;
    out.push(
      `warning: the fastest finalist ran ${(best / recorded).toFixed(2)}x slower over its rounds (${
        ms(best)
      } ms) than the best as recorded (${ms(recorded)} ms)${
        load != null ? `, load ${load.toFixed(2)}` : ""
      }: the machine was slower; the estimate re-timed after tuning does not depend on it`,
    );
  }
  return out;
}

/**
 * Runs `tune-network` and returns its summary.
 *
 * @example
 * ```ts ignore
 * import { tuneNetworkCommand } from "./tune_network.ts";
 * const summary = await tuneNetworkCommand(["--network", "squeezenet1_1", "--trials", "36"]);
 * console.log(summary.sessions);
 * ```
 */
export async function tuneNetworkCommand(argv: string[]): Promise<Record<string, unknown>> {
  const a = parseTuneNetworkArgs(argv);
  let loaded;
  try {
    loaded = await loadNetwork(a.network, { size: a.size });
    // Every layer's tensors and weights are sized before any is allocated.
    checkNetworkMemory(loaded.network);
  } catch (e) {
    if (e instanceof NetworkError) throw new UsageError(e.message);
    throw e;
  }
  const net = loaded.network;
  const plot = a.plot ?? defaultPlot(a.db, net.name);
  if (a.plot === undefined) await Deno.mkdir(dirname(plot), { recursive: true });
  checkOutputFile(plot, { flag: "--plot", db: a.db });
  if (!existsSync(dirname(resolve(plot)))) {
    throw new UsageError(`--plot "${plot}": no directory ${dirname(resolve(plot))}`);
  }
  const tasks: Task[] = extractTasks(net, a.block);
  if (tasks.length === 0) throw new UsageError(`--network ${a.network} has no tunable layer`);
  try {
    for (const t of tasks) checkTaskMemory(t.layers[0], t.workload);
  } catch (e) {
    if (e instanceof NetworkError) throw new UsageError(e.message);
    throw e;
  }
  const weights = loaded.weights ?? randomWeights(net, a.seed);
  // Every session starts from the records there before the first.
  const db = RecordsDB.open(a.db, { mode: "create" });
  let warm, recordsUpTo;
  try {
    warm = warmStart(db, tasks.map((t) => t.workload));
    recordsUpTo = db.runs().at(-1)?.id ?? 0;
  } finally {
    db.close();
  }
  const perRound = a.perRound ?? defaultPerRound(a.trials, tasks.length);
  const finalists = a.finalists ?? defaultFinalists(a.trials, tasks.length, a.finalistRounds);
  const note = a.quiet ? () => {} : (line: string) => console.error(line);
  note(
    `tune-network: ${net.name}, ${tasks.length} tasks, ${a.trials} trials per session, ${perRound} per round, ${
      finalists > 0
        ? `then ${finalists} finalists per task timed ${a.finalistRounds} times`
        : "no finalists"
    }`,
  );
  const sessions: Record<string, unknown>[] = [];
  // Sessions share their measurements: a candidate two sessions try has one time.
  const shared = new Map<string, Map<string, MeasureResult>>();
  const series: { label: string; values: number[] }[] = [];
  for (const scheduler of a.schedulers) {
    for (const strategy of a.strategies) {
      const label = `${scheduler} ${strategy}`;
      const o = await tuneNetwork({
        tasks,
        db: a.db,
        trials: a.trials,
        strategy,
        templates: a.templates,
        scheduler,
        perRound,
        seed: a.seed,
        warm,
        recordsUpTo,
        shared,
        seedDefault: a.seedDefault,
        transfer: a.transfer,
        unity: a.unity,
        ...(finalists > 0 ? { finalists: { top: finalists, rounds: a.finalistRounds } } : {}),
        onFinalists: (i, t) => {
          for (const w of finalistsWarnings(t)) {
            console.error(`tune-network: [${label}] task ${i} ${t.key}: ${w}`);
          }
          note(
            `[${label}] finalists of task ${i} ${t.key}: ${t.finalists!.count} timed ${
              t.finalists!.rounds
            } times; best ${ms(t.finalists!.recordedSeconds) ?? "-"} ms as recorded, ${
              ms(t.bestSeconds) ?? "-"
            } ms over the rounds`,
          );
        },
        onRound: (r, t) =>
          note(
            `[${label}] ${r.trialsUsed}/${a.trials} trials: task ${r.task} ${t.key} x${t.weight} +${r.measured} (${t.trials} in all), best ${
              ms(t.bestSeconds) ?? "-"
            } ms; estimate ${ms(r.objective) ?? "-"} ms`,
          ),
      });
      series.push({ label, values: estimateCurve(o) });
      sessions.push(await sessionSummary({ strategy, scheduler }, o, net, weights, a));
    }
  }
  const svg = tuningCurveSVG(series, {
    title: `${net.name}: end-to-end estimate (tunable layers) against trials`,
    y: "estimate (ms)",
    // Log scale, as bench/network_study.ts draws it: a linear axis from zero flattened the
    // last percents between schedulers into one line.
    logY: true,
  });
  await writePlot(plot, svg, { scale: 2 });
  // The same network with every kernel on its default schedule: what tuning is measured against.
  const untuned = a.execute
    ? await measureEndToEnd(net, weights, { repeat: a.repeat, seed: a.seed, block: a.block })
    : undefined;
  const summary = {
    network: net.name,
    input: net.input.shape,
    layout: layoutName(a.block),
    tasks: tasks.length,
    gflop: +(tasks.reduce((s, t) => s + t.weight * t.workload.flops, 0) / 1e9).toFixed(3),
    trials: a.trials,
    perRound,
    finalists: {
      perTask: finalists,
      rounds: a.finalistRounds,
      chosen: a.finalists === undefined ? "default" : "--finalists",
    },
    transfer: a.transfer,
    unity: a.unity,
    db: a.db,
    plot,
    note: "estimateMs sums weight x best latency over the tunable layers; finalistsEstimateMs " +
      "the same after each task's finalists were timed again in rounds (the kernels the network " +
      "runs); measured.latencyMs is the whole network run by the executor with the tuned " +
      "kernels, untunedLatencyMs with default schedules; measured.estimate adds to the tuner's " +
      "figure the steps outside the tuned kernels and what a forward pass's cache state costs " +
      "each step, timed inside passes (networkMs; ratio = networkMs / latencyMs); retimedMs the " +
      "same with the tuned kernels timed again now; flushedCacheStateMs the cache state " +
      "emulated by a flush between isolated calls",
    ...(untuned ? { untunedLatencyMs: +untuned.latencyMs.toFixed(3) } : {}),
    sessions,
    schedulers: a.strategies.flatMap((strategy) => {
      const curve = (scheduler: string) =>
        series.find((s) => s.label === `${scheduler} ${strategy}`)?.values;
      const c = schedulerComparison(curve("gradient"), curve("round-robin"));
      if (c) {
        printResult(
          `[${strategy}] gradient reaches round robin's ${
            ms(c.roundRobinMs / 1e3)
          } ms (at ${c.budget} trials) ${
            c.gradientTrials === null ? "never" : `after ${c.gradientTrials} trials`
          }`,
        );
      }
      return c ? [{ strategy, ...c, roundRobinMs: ms(c.roundRobinMs / 1e3) }] : [];
    }),
  };
  if (
    sessions.some((s) => (s.measured as { matchesReference?: boolean })?.matchesReference === false)
  ) {
    Deno.exitCode = 1;
  }
  return summary;
}

if (import.meta.main) {
  await runJsonCommand("tune-network", tuneNetworkCommand);
}
