/**
 * `deno task compare`: run strategies on one space with many seeds and
 * budgets, print a table, write tuning curves (SVG and PNG) and end with one
 * line of JSON on stdout.
 *
 * A space is a Kernel Tuner cache (a name from data/kerneltuner such
 * as `gemm_RTX_3090`, or a path), replayed; or a workload such as
 * `matmul:256,256,256`, measured live on this CPU through its knob template
 * (each configuration is measured once and shared by all strategies, and the
 * optimum is the best measured in the comparison).
 *
 * Every run (strategy x seed) goes through the tuning loop of `tuner/` and
 * keeps its records: in memory by default, in a SQLite records database with
 * `--db F`, where `--resume` continues the comparison (finished runs are read
 * back, an unfinished one continues, missing ones start).
 * @module
 */
import { join } from "node:path";
import { limitMessage, LIMITS } from "../ir/limits.ts";
import { RecordsDB } from "../datasets/db.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { type RecordStore, sqliteRecordStore } from "../datasets/record_store.ts";
import type { Measurer } from "../measure/measurer.ts";
import {
  type CompareManyOutput,
  type CompareOutput,
  compareTable,
  fractionBand,
  fractionOverWall,
  reachTable,
  type RunTrace,
} from "../search/comparison.ts";
import { runTrace } from "../tuner/run_strategy.ts";
import {
  KNOB_STRATEGY_NAMES,
  STRATEGIES,
  STRATEGY_NAMES,
  strategyHelp,
  TRANSFER_STRATEGIES,
} from "../tuner/strategies.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import { ALL_SPACES } from "../search/replay.ts";
import { rankAcrossSpaces, rankTable } from "../search/score.ts";
import {
  isWorkloadSpec,
  type OpenedSpace,
  openSpace,
  OpenSpaceError,
  transferSamples,
} from "../tuner/open_space.ts";
import {
  compareStrategies,
  type Comparison,
  type RunJobRequest,
} from "../tuner/compare_strategies.ts";
import { cacheName } from "../datasets/cache_names.ts";
import { stderrProgress } from "../tuner/progress.ts";
import { bandCurveSVG, svgToPNG } from "../plots/tuning_curve.ts";
import { bandCurveSpec } from "../plots/vegalite.ts";
import { parseFlags, runJsonCommand, UsageError } from "./args.ts";

export type { CompareManyOutput, CompareOutput };
import { checkOutputDir, printResult } from "./output.ts";
import { didYouMean, unknownSpace } from "./names.ts";
import { parseQueueUrl, QueueLostError } from "../remote/connection.ts";
import { isPostgresUrl, loadPostgresStore } from "../datasets/postgres_url.ts";
import { createRemoteMeasurer, NoWorkerError } from "../remote/remote_measurer.ts";
import { createRunQueue, RunJobFailed } from "../remote/run_queue.ts";
import { recordRun } from "../remote/run_job.ts";
import { tunebookVersion } from "../datasets/machine.ts";
import { stopPoints, StopRequested, watchStop } from "./stop.ts";
// Tuning-time budgets and the methodology score (issue 45): flags parsed in parseTimeFlags,
// the library called in compareOn's marked blocks.
import {
  budgetedRun,
  endLeverage,
  liveRunTrace,
  methodologyRanking,
  methodologyTable,
  runIdsOf,
  type TimeCompareOptions,
  timeResults,
  timeSpace,
} from "../tuner/compare_time.ts";
import { type TimeRow, timeRows, timeTable } from "../search/tuning_time.ts";
import { parseStrategyName, resolveStrategy } from "../tuner/presets.ts";
import { type RankedResult, rankingOfStrategies } from "../tuner/ranking_noise.ts";

const C = DEFAULTS.compare;

/** Usage text of `compare`. */
export const COMPARE_USAGE = `usage: deno task compare --space SPACE [options]

  --space SPACE          a Kernel Tuner cache (name from data/kerneltuner, or a path), or a
                         workload measured live, e.g. matmul:256,256,256
  --strategies A,B,...   strategies to compare (default ${C.strategies.join(",")})
  --budget N,N,...       evaluations at which to compare (default ${C.budgets.join(",")})
  --budget-time S,S,...  also compare in tuning time (replayed spaces): a run stops once its
                         clock (each configuration's recorded compile, verification,
                         benchmark and framework time, plus the strategy's own time) passes
                         the largest S seconds; \`auto\`: the methodology's budget of each
                         space. Prints fractions over time and the methodology score
                         (Willemsen et al., FGCS 2024) beside the count-based score. On a
                         live space: the runs (not stopped) tabled at S seconds of their
                         recorded build, run, framework and strategy seconds
  --no-strategy-time     with --budget-time: leave the strategy's own time off the clock
  --seeds N              seeds per strategy (default ${C.seeds})
  --absent KIND          invalid | restricted: configurations a cache lacks (default ${C.absent};
                         restricted with --budget-time, as the methodology and Kernel Tuner have it)
  --template NAME        knob template of a live workload space
  --transfer-from CACHE  records of the same kernel on another device (transfer strategies)
  --plan-size N          plan size of the planning strategies (default ${DEFAULTS.planSize})
  --out DIR              directory of the tuning curves (default ${C.out})
  --db FILE              keep the records of every run in this SQLite records database, or
                         a PostgreSQL one (postgres://...) (default: in memory, lost at exit)
  --resume               with --db: continue the comparison recorded there (finished runs
                         are read back, an unfinished one continues, missing ones start)
  --queue URL            run on workers (deno task worker) through Redis at URL: a cache
                         (by name) sends whole strategy x seed runs, a live workload its
                         measurements; the records stay here
  --quiet                no progress bar
  --help                 this text

A strategy may carry a preset, NAME@PRESET: a file of tune-strategy (runs/presets/PRESET.json,
or a path ending in .json), or random@kt (Kernel Tuner's random_sample, a tenth of the space).

Strategies (tuner/strategies.ts; tune takes the same names, and ansor):
${strategyHelp(2, KNOB_STRATEGY_NAMES)}`;

/** A comma-separated list of positive integers; a bad value is named with its flag. */
function list(text: string, flag: string): number[] {
  return text.split(",").map((raw, i) => {
    const p = raw.trim();
    if (!/^-?\d+$/.test(p)) {
      throw new UsageError(`${flag}: value ${i + 1} ${JSON.stringify(p)} is not an integer`);
    }
    const x = Number(p);
    if (x < 1) throw new UsageError(`${flag} values must be positive, got ${p}`);
    return x;
  });
}

/** The flag of each input `openSpace` and `transferSamples` may blame. */
const FLAG_OF = { space: "--space", template: "--template", transferFrom: "--transfer-from" };

/** `f()`, with an {@link OpenSpaceError} as a usage error naming its flag. */
async function flagged<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof OpenSpaceError) {
      throw new UsageError(`${FLAG_OF[e.option]} ${e.value}: ${e.detail}`);
    }
    throw e;
  }
}

/** Opens `--space` (tuner/open_space.ts), with the command's checks of `--queue`. */
function openCompareSpace(
  spec: string,
  absent: "invalid" | "restricted",
  template?: string,
  queue?: string,
): Promise<OpenedSpace> {
  if (!isWorkloadSpec(spec) && queue !== undefined && !/^[A-Za-z0-9_.-]+$/.test(spec)) {
    throw new UsageError(
      `--space ${spec}: with --queue, a cache is named (from data/kerneltuner), never a path`,
    );
  }
  const unknown = isWorkloadSpec(spec) ? undefined : unknownSpace(spec);
  if (unknown) throw new UsageError(unknown);
  return flagged(() =>
    openSpace(spec, {
      absent,
      template,
      ...(queue !== undefined
        ? {
          liveMeasurer: (_w, timing) =>
            queued(() =>
              createRemoteMeasurer({
                url: queue,
                options: { timing, timeoutSeconds: 10, inputSeed: 0 },
              })
            ),
        }
        : {}),
    })
  );
}

/** Runs the comparison; returns the JSON summary. */
export async function compare(
  argv: string[],
): Promise<CompareOutput | CompareManyOutput> {
  const v = parseFlags(
    argv,
    {
      space: { type: "string" },
      strategies: { type: "string", default: C.strategies.join(",") },
      budget: { type: "string", default: C.budgets.join(",") },
      "budget-time": { type: "string" },
      "no-strategy-time": { type: "boolean", default: false },
      seeds: { type: "string", default: String(C.seeds) },
      absent: { type: "string" },
      template: { type: "string" },
      "transfer-from": { type: "string" },
      "plan-size": { type: "string" },
      out: { type: "string", default: C.out },
      db: { type: "string" },
      resume: { type: "boolean", default: false },
      queue: { type: "string" },
      quiet: { type: "boolean", default: false },
    },
    COMPARE_USAGE,
  );
  if (v.queue !== undefined) {
    try {
      parseQueueUrl(v.queue);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    if (v["transfer-from"]) throw new UsageError("--transfer-from cannot be given with --queue");
  }
  if (v.resume && !v.db) {
    throw new UsageError("--resume needs --db (the records database of the comparison)");
  }
  if (v.db !== undefined && v.db.trim() === "") {
    throw new UsageError("--db must name a records database file");
  }
  if (!v.space) {
    throw new UsageError("Missing --space (a Kernel Tuner cache name or path, or workload:shape)");
  }
  // In tuning time, the methodology's and Kernel Tuner's semantics: a configuration the
  // space's restrictions exclude is never evaluated (no time, no evaluation).
  v.absent ??= v["budget-time"] !== undefined ? "restricted" : C.absent;
  if (v.absent !== "invalid" && v.absent !== "restricted") {
    throw new UsageError(`--absent must be "invalid" or "restricted", got "${v.absent}"`);
  }
  const strategies = v.strategies!.split(",").map((s) => s.trim()).filter(Boolean);
  if (strategies.length === 0) {
    throw new UsageError(`--strategies names no strategy; known: ${STRATEGY_NAMES.join(", ")}`);
  }
  for (const s of strategies.map((x) => parseStrategyName(x).strategy)) {
    if (!STRATEGY_NAMES.includes(s)) {
      throw new UsageError(
        `Unknown strategy "${s}"${didYouMean(s, KNOB_STRATEGY_NAMES)}; known: ${
          KNOB_STRATEGY_NAMES.join(", ")
        }`,
      );
    }
    if (!KNOB_STRATEGY_NAMES.includes(s)) {
      throw new UsageError(
        `--strategies: ${s} searches sketches (traces), and compare's spaces are knob spaces (tune --strategy ${s} searches a workload's sketches)`,
      );
    }
  }
  // STRATEGY@PRESET (tuner/presets.ts): a strategy of the table with a preset's settings.
  checkPresets(strategies, v.queue);
  if (strategies.some((s) => TRANSFER_STRATEGIES.includes(s)) && !v["transfer-from"]) {
    throw new UsageError(
      `${
        TRANSFER_STRATEGIES.join(" and ")
      } need --transfer-from (a cache of the same kernel on another device)`,
    );
  }
  const budgets = list(v.budget!, "--budget").sort((a, b) => a - b);
  const planSize = v["plan-size"] === undefined
    ? undefined
    : list(v["plan-size"], "--plan-size")[0];
  if (v["transfer-from"] && !strategies.some((s) => TRANSFER_STRATEGIES.includes(s))) {
    throw new UsageError(
      `--transfer-from: none of ${strategies.join(", ")} pretrains; it serves ${
        TRANSFER_STRATEGIES.join(" and ")
      }`,
    );
  }
  if (
    planSize !== undefined &&
    !strategies.some((s) => STRATEGIES[parseStrategyName(s).strategy].plans)
  ) {
    throw new UsageError(
      `--plan-size: none of ${strategies.join(", ")} plans; it sets the plan of ${
        KNOB_STRATEGY_NAMES.filter((s) => STRATEGIES[s].plans).join(", ")
      }`,
    );
  }
  const [seeds] = list(v.seeds!, "--seeds");
  if (seeds > LIMITS.seeds.value) {
    throw new UsageError(`--seeds: ${limitMessage(`${seeds} seeds`, LIMITS.seeds)}`);
  }
  const store: RecordStore = v.db === undefined
    ? createMemoryRecordStore()
    : isPostgresUrl(v.db)
    ? await (await loadPostgresStore()).openPostgresRecordStore(v.db)
    : sqliteRecordStore(RecordsDB.open(v.db, { mode: v.resume ? "write" : "create" }));
  const time = parseTimeFlags(v);
  const flags: CompareFlags = {
    ...v,
    time,
    absent: v.absent,
    strategies,
    budgets,
    planSize,
    seeds,
    store,
    resume: v.resume,
  };
  // A workload (`matmul:24,16,8`) is one space; otherwise commas separate caches.
  const specs = v.space === "all"
    ? [...ALL_SPACES]
    : v.space.includes(":")
    ? [v.space]
    : v.space.split(",").map((x) => x.trim()).filter(Boolean);
  // Ctrl-C / SIGTERM: stop at the next evaluation (a second one: at once), say what was written.
  const outputs: CompareOutput[] = [];
  const records = v.db
    ? `the records are in ${v.db}: the same command with --resume continues it`
    : "its records were in memory (--db F keeps them, and --resume continues)";
  const kept = () =>
    outputs.length === 0
      ? `nothing was written to ${v.out}; ${records}`
      : `the curves of the ${outputs.length} space(s) done are in ${v.out} (${
        outputs.map((o) => o.space).join(", ")
      }); ${records}`;
  const stop = watchStop({
    onStop: (why) =>
      console.error(`\ncompare: ${why}: stopping at the next evaluation (again: at once)`),
    onHardStop: (why, code) => {
      console.error(`compare: ${why}: stopped at once; ${kept()}`);
      Deno.exit(code);
    },
  });
  flags.checkStop = stopPoints(stop.signal);
  try {
    if (specs.length === 1) return await compareOn(specs[0], flags);
    for (const spec of specs) {
      outputs.push(await compareOn(spec, { ...flags, several: true }));
    }
  } catch (e) {
    if (!(e instanceof StopRequested)) throw e;
    console.error(`compare: stopped (${stop.reason()}); ${kept()}`);
    Deno.exit(stop.exitCode());
  } finally {
    stop.dispose();
    await store.close();
  }
  const ranking = rankAcrossSpaces(Object.fromEntries(
    outputs.map((o, k) => [
      cacheName(specs[k]),
      Object.fromEntries(Object.entries(o.scores).filter(([, x]) => x !== null)) as Record<
        string,
        number
      >,
    ]),
  ));
  printResult(
    `\nRanking over ${outputs.length} spaces (score over budgets ${budgets[0]}..${
      budgets[budgets.length - 1]
    }; 0 = random search, 1 = optimum at once):\n`,
  );
  printResult(rankTable(ranking));
  // --budget-time: the methodology score aggregated over the spaces, by grid index.
  const timed = outputs.flatMap((o) => {
    const c = timeCurves.get(o);
    return c ? [c] : [];
  });
  if (timed.length > 0) {
    const rows = methodologyRanking(timed);
    printResult(
      `\nMethodology score over ${timed.length} spaces (Willemsen et al., FGCS 2024: tuning time, ` +
        `0 = calculated random search, 1 = optimum at once):\n`,
    );
    printResult(methodologyTable(rows));
    return {
      spaces: outputs,
      ranking,
      methodology: rows.map((r) => ({ ...r, score: round3(r.score), error: round3(r.error) })),
    } as CompareManyOutput;
  }
  return { spaces: outputs, ranking };
}

/** What --budget-time adds to a space's output (and a live space's ranking noise). */
interface TimedOutput extends CompareOutput {
  /**
   * A live space: whether the two fastest strategies' final bests are within
   * their measured noise (tuner/ranking_noise.ts); null when none is valid.
   */
  ranking?: ReturnType<typeof rankingOfStrategies>;
  /**
   * `--budget-time S,...` on a live space: fractions of the optimum at those
   * tuning seconds, the runs on the replay's clock (tuner/compare_time.ts liveClock).
   */
  liveTime?: { rows: TimeRow[]; strategyTime: boolean };
  time?: {
    rows: TimeRow[];
    /** Methodology score per strategy (null: no valid evaluation within the range). */
    scores: Record<string, number | null>;
    range: { start: number; end: number; limit: number; strategyTime: boolean };
    /** What a configuration the cache lacks was in these runs (restricted unless `--absent invalid`). */
    absent: "invalid" | "restricted";
    /** Standardised curves (kept in {@link timeCurves}, not in the JSON). */
    curves: Record<string, number[]>;
  };
}

/** Each timed space output's standardised curves per strategy, for the aggregation over spaces. */
const timeCurves = new WeakMap<CompareOutput, Record<string, number[]>>();

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** Checks the `STRATEGY@PRESET` names among `names` (tuner/presets.ts); a bad one is a usage error. */
function checkPresets(names: readonly string[], queue?: string): void {
  for (const n of names) {
    if (parseStrategyName(n).preset === undefined) continue;
    if (queue !== undefined) {
      throw new UsageError(`--strategies ${n}: presets cannot be sent to --queue workers`);
    }
    try {
      resolveStrategy(n);
    } catch (e) {
      throw new UsageError(`--strategies ${n}: ${(e as Error).message}`);
    }
  }
}

/** `--budget-time` and `--no-strategy-time`: the comparison in tuning time, or undefined. */
function parseTimeFlags(
  v: { "budget-time"?: string; "no-strategy-time"?: boolean; queue?: string },
): TimeCompareOptions | undefined {
  if (v["budget-time"] === undefined) {
    if (v["no-strategy-time"]) throw new UsageError("--no-strategy-time needs --budget-time");
    return undefined;
  }
  if (v.queue !== undefined) {
    throw new UsageError("--budget-time cannot be given with --queue (workers count evaluations)");
  }
  const text = v["budget-time"].trim();
  const budgets = text === "auto" ? "auto" as const : text.split(",").map((raw, i) => {
    const x = Number(raw.trim());
    if (raw.trim() === "" || !Number.isFinite(x) || x <= 0) {
      throw new UsageError(
        `--budget-time: value ${i + 1} ${
          JSON.stringify(raw.trim())
        } is not a positive number of seconds (or give auto)`,
      );
    }
    return x;
  });
  return { budgets, strategyTime: !v["no-strategy-time"] };
}

/** What {@link compareOn} needs of the parsed flags. */
interface CompareFlags {
  absent: "invalid" | "restricted";
  template?: string;
  "transfer-from"?: string;
  out?: string;
  quiet?: boolean;
  strategies: string[];
  budgets: number[];
  planSize?: number;
  seeds: number;
  /** Several spaces are compared: budgets above a space's size are clipped to it. */
  several?: boolean;
  /** Throws `StopRequested` once a stop was asked (see cli/stop.ts `stopPoints`). */
  checkStop?: () => Promise<void>;
  /** Where every run's records go. */
  store: RecordStore;
  /** Continue the runs recorded in `store` (see `--resume`). */
  resume?: boolean;
  /** Redis of a queue of workers (`--queue`). */
  queue?: string;
  /** `--budget-time`: also compare in tuning time. */
  time?: TimeCompareOptions;
}

/**
 * Awaits `f()`, turning a lost queue or a missing worker into a one-line
 * usage error (exit 2; the records of finished runs are kept, `--resume`
 * continues).
 */
async function queued<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof QueueLostError || e instanceof NoWorkerError || e instanceof RunJobFailed) {
      throw new UsageError(
        `${e.message}; finished runs are kept in the records (with --db, --resume continues)`,
      );
    }
    throw e;
  }
}

/** Compares the strategies on one space: tables on stdout, curves in files, the summary returned. */
async function compareOn(spec: string, v: CompareFlags): Promise<CompareOutput> {
  const { strategies, planSize, seeds } = v;
  let budgets = v.budgets;
  const stem = cacheName(spec).replace(/[^A-Za-z0-9_.-]/g, "_");
  checkOutputDir(
    v.out!,
    [
      ".svg",
      ".png",
      ".vl.json",
      "_wall.svg",
      "_wall.png",
      ...(v.time ? ["_time.svg", "_time.png"] : []),
    ]
      .map((x) => stem + x),
    { flag: "--out" },
  );
  const space = await openCompareSpace(spec, v.absent, v.template, v.queue);
  const size = space.space.size;
  if (budgets[budgets.length - 1] > size && v.several) {
    // Several spaces: a small one is searched to its size (or until the strategy is done).
    budgets = [...new Set(budgets.map((b) => Math.min(b, size)))];
    console.error(
      `compare: ${space.name} has ${size} configurations; budgets above that are clipped to ${size}`,
    );
  } else if (budgets[budgets.length - 1] > size) {
    await space.close();
    throw new UsageError(
      `--budget ${
        budgets[budgets.length - 1]
      } is more than the ${size} configurations of the space (a budget counts distinct configurations)`,
    );
  }
  if (space.nonPositiveTimes) {
    console.error(
      `compare: ${space.nonPositiveTimes} entries of the cache have time 0 ms; replayed as invalid configurations`,
    );
  }
  const pretrain = v["transfer-from"]
    ? await flagged(() => transferSamples(v["transfer-from"]!, space.space))
    : undefined;
  const maxBudget = budgets[budgets.length - 1];
  // --budget-time: runs stop at the tuning-time limit instead (up to every configuration).
  let ts: ReturnType<typeof timeSpace> | undefined;
  if (v.time) {
    if (!space.replay && v.time.budgets === "auto") {
      await space.close();
      throw new UsageError(
        `--budget-time auto: ${space.name} is measured live and has no recorded range; give the budgets in seconds`,
      );
    }
  }
  if (v.time && space.replay) {
    try {
      ts = timeSpace(space.replay, v.time);
    } catch (e) {
      await space.close();
      throw new UsageError(`--budget-time on ${space.name}: ${(e as Error).message}`);
    }
    if (!(ts.range.tEnd > 0)) {
      await space.close();
      throw new UsageError(`--budget-time: ${space.name} records no measuring times`);
    }
  }
  const trials = ts ? size : maxBudget;
  const timeConfig = v.time
    ? { budgetTime: v.time.budgets, strategyTime: v.time.strategyTime !== false }
    : {};
  const localConfig = {
    compare: spec,
    absent: v.absent,
    ...(v.template ? { template: v.template } : {}),
    ...(v["transfer-from"] ? { transferFrom: v["transfer-from"] } : {}),
    ...(planSize !== undefined ? { planSize } : {}),
    budget: maxBudget,
    ...timeConfig,
    // A replayed space's knobs, so that export (kerneltuner, t4) can name the configurations.
    ...(space.replay
      ? {
        knobSpace: space.replay.space.knobs.map(({ name, kind, options }) => ({
          name,
          kind,
          options,
        })),
      }
      : {}),
  };
  const progress = v.quiet ? undefined : stderrProgress();
  const started = performance.now();
  const check = v.checkStop ?? (() => Promise.resolve());
  // A stop asked for is seen before the next batch is measured (the run stays resumable).
  const measurer: Measurer = {
    name: space.measurer.name,
    measure: async (batch, options) => {
      await check();
      return await space.measurer.measure(batch, options);
    },
  };
  const runQueue = v.queue !== undefined && space.optimum !== undefined
    ? await queued(() => createRunQueue({ url: v.queue! }))
    : undefined;
  // Whole runs on the workers (all sent at once); their records are written here in order.
  const execute = runQueue &&
    (async (job: RunJobRequest): Promise<RunTrace> => {
      const result = runQueue.run({
        space: spec,
        absent: v.absent,
        strategy: job.strategy,
        seed: job.seed,
        budget: job.budget,
        ...(planSize !== undefined ? { planSize } : {}),
      });
      const { runId, wallOf } = await recordRun(v.store, {
        strategy: job.strategy,
        seed: job.seed,
        trials: job.budget,
        target: space.measurer.name,
        config: job.config,
        machine: { queue: v.queue },
        compiler: "",
        tunebookVersion: await tunebookVersion(),
        workload: space.workload,
      }, await queued(() => result));
      return await runTrace(v.store, runId, wallOf);
    });
  // The run config as stored (compareStrategies adds the largest budget, already in its place).
  const { transferFrom: _, ...queueConfig } = localConfig;
  const runConfig: Record<string, unknown> = runQueue ? queueConfig : localConfig;
  let c: Comparison;
  try {
    c = await compareStrategies(space, strategies, {
      budgets,
      seeds,
      db: v.store,
      measurer,
      resume: v.resume,
      pretrain,
      planSize,
      config: runConfig,
      ...(ts ? { trials, wrap: (strategy, m) => budgetedRun(strategy, m, ts!, maxBudget) } : {}),
      ...(execute ? { execute } : {}),
      onRun: ({ done, total }) =>
        progress?.update({
          done,
          total,
          unit: "runs (strategy x seed)",
          elapsed: (performance.now() - started) / 1000,
        }),
    });
  } finally {
    progress?.done();
    await space.close();
    await runQueue?.close();
  }
  const { optimum, rows, traces: runs } = c;
  const reach = c.reachRows;
  printResult(`\n${space.name}: optimum ${(optimum * 1e3).toPrecision(4)} ms, ${seeds} seeds\n`);
  printResult(compareTable(rows));
  printResult(`\nSamples to reach 95% of the optimum (within ${maxBudget} evaluations):\n`);
  printResult(reachTable(reach));
  // The band reads the same statistics as the table (fractionBand), so they agree at each budget.
  const evaluations = Array.from({ length: maxBudget }, (_, i) => i + 1);
  const series = [...runs].map(([label, rs]) => ({
    label,
    ...fractionBand(rs, optimum, evaluations),
  }));
  // Random search's exact expectation (a cache), drawn as a dashed line.
  const expected = space.randomCurve?.(1, maxBudget);
  const svg = bandCurveSVG(series, {
    title: `${space.name}: median and quartiles over ${seeds} seeds`,
    ...(expected
      ? { baseline: { label: "random search (expected)", x: evaluations, y: expected } }
      : {}),
  });
  await Deno.mkdir(v.out!, { recursive: true });
  const base = join(v.out!, stem);
  await Deno.writeTextFile(`${base}.svg`, svg);
  const vlSpec = bandCurveSpec(series, {
    title: `${space.name}: median and quartiles over ${seeds} seeds`,
  });
  await Deno.writeTextFile(`${base}.vl.json`, JSON.stringify(vlSpec));
  await Deno.writeFile(`${base}.png`, await svgToPNG(svg));
  const until = Math.max(...[...runs.values()].flat().map((r) => r.wall.at(-1) ?? 0), 1e-6);
  const wallSVG = bandCurveSVG(
    [...runs].map(([label, rs]) => ({ label, ...fractionOverWall(rs, optimum, until) })),
    {
      title: `${space.name}: by wall time, ${seeds} seeds`,
      x: "wall seconds",
    },
  );
  await Deno.writeTextFile(`${base}_wall.svg`, wallSVG);
  await Deno.writeFile(`${base}_wall.png`, await svgToPNG(wallSVG));
  printResult(
    `\ntuning curves: ${base}.svg, ${base}.png, ${base}.vl.json (Vega-Lite); against wall seconds: ${base}_wall.png`,
  );
  const lo = budgets[0];
  const scores = c.scoreOf;
  printResult(
    `\nBudget-aggregated score (area under the mean fraction curve, budgets ${lo}..${maxBudget}; ` +
      `0 = random search${c.exactRandom ? " (exact expectation)" : ""}, 1 = optimum at once):\n`,
  );
  printResult(
    [
      "| strategy | score |",
      "| --- | --- |",
      ...Object.entries(scores).map(([n, x]) => `| ${n} | ${x === null ? "n/a" : x.toFixed(3)} |`),
    ].join("\n"),
  );
  // --budget-time on a live space: the recorded runs on the replay's clock (their recorded parts).
  let liveTime: TimedOutput["liveTime"];
  if (v.time && !space.replay) {
    const strategyTime = v.time.strategyTime !== false;
    const clocks = new Map<string, RunTrace[]>();
    for (const [name, ids] of await runIdsOf(v.store, strategies, seeds, runConfig)) {
      const list: RunTrace[] = [];
      for (const id of ids) list.push(await liveRunTrace(v.store, id, { strategyTime }));
      clocks.set(name, list);
    }
    const rows = timeRows(clocks, v.time.budgets as number[], optimum);
    printResult(
      `\nIn tuning time (the live runs' recorded build, run and framework seconds${
        strategyTime ? " plus the strategy's" : ""
      }; runs are not stopped by it):\n`,
    );
    printResult(timeTable(rows));
    liveTime = { rows, strategyTime };
  }
  // --budget-time: the same runs on the tuning clock, tabled over time and scored by the methodology.
  let time: TimedOutput["time"];
  if (ts) {
    const ids = await runIdsOf(v.store, strategies, seeds, localConfig);
    const out = await timeResults(v.store, ids, runs, ts);
    const { tStart, tEnd, timeLimit } = ts.range;
    const clockNote = v.time!.strategyTime === false
      ? "recorded times only"
      : "recorded times plus the strategy's own";
    printResult(
      `\nIn tuning time (${clockNote}; runs stop after ${timeLimit.toFixed(1)} s):\n`,
    );
    printResult(timeTable(out.rows));
    printResult(
      `\nMethodology score (Willemsen et al., FGCS 2024; range ${tStart.toFixed(2)}..${
        tEnd.toFixed(2)
      } s, calculated random-search baseline; 0 = random search, 1 = optimum at once):\n`,
    );
    printResult(
      [
        "| strategy | methodology score | count-based score |",
        "| --- | --- | --- |",
        ...Object.entries(out.scores).map(([n, x]) =>
          `| ${n} | ${Number.isNaN(x) ? "n/a" : x.toFixed(3)} | ${
            scores[n] === null ? "n/a" : scores[n]!.toFixed(3)
          } |`
        ),
      ].join("\n"),
    );
    const leverage = endLeverage(ts);
    if (leverage < -1) {
      printResult(
        `\nnote: at the end of the range the baseline is ${
          ((ts.baseline.at(-1)! / ts.range.optimum - 1) * 100).toFixed(2)
        }% from the optimum and the next configuration far behind: one configuration behind random search there scores ${
          leverage.toFixed(1)
        } at those grid points, so this space's methodology score swings by whole units (the score is unbounded below)`,
      );
    }
    const timeSVG = bandCurveSVG(
      [...out.clocks].map(([label, rs]) => ({
        label,
        ...fractionOverWall(rs, optimum, timeLimit),
      })),
      { title: `${space.name}: by tuning time, ${seeds} seeds`, x: "tuning seconds" },
    );
    await Deno.writeTextFile(`${base}_time.svg`, timeSVG);
    await Deno.writeFile(`${base}_time.png`, await svgToPNG(timeSVG));
    printResult(`\nagainst tuning seconds: ${base}_time.png`);
    time = {
      rows: out.rows,
      scores: Object.fromEntries(
        Object.entries(out.scores).map(([n, x]) => [n, Number.isNaN(x) ? null : round3(x)]),
      ),
      range: {
        start: tStart,
        end: tEnd,
        limit: timeLimit,
        strategyTime: v.time!.strategyTime !== false,
      },
      absent: v.absent,
      curves: out.curves,
    };
  }
  // A live space: are the two fastest strategies' final bests apart by more than the noise?
  let ranking: TimedOutput["ranking"];
  if (!space.replay) {
    const finals = new Map<string, RankedResult | undefined>();
    for (const [name, ids] of await runIdsOf(v.store, strategies, seeds, runConfig)) {
      for (const id of ids) {
        const b = (await v.store.best(id))?.result;
        if (!b || b.seconds === null) continue;
        if ((finals.get(name)?.seconds ?? Infinity) <= b.seconds) continue;
        finals.set(name, { seconds: b.seconds, times: b.times, conditions: b.conditions });
      }
    }
    ranking = rankingOfStrategies(finals);
    if (ranking?.warning) printResult(`\n${ranking.warning}`);
  }
  const output: TimedOutput = {
    space: space.name,
    spec,
    optimum,
    results: rows.map(({ wall_seconds: _, ...r }) => r),
    reach: reach.map((r) => ({
      ...r,
      median_samples: Number.isFinite(r.median_samples) ? r.median_samples : null,
      p25: Number.isFinite(r.p25) ? r.p25 : null,
      p75: Number.isFinite(r.p75) ? r.p75 : null,
    })),
    scores,
    ...(ranking !== undefined ? { ranking } : {}),
    ...(liveTime ? { liveTime } : {}),
  };
  if (time) {
    const { curves, ...shown } = time;
    output.time = shown as TimedOutput["time"];
    timeCurves.set(output, curves);
  }
  return output;
}

if (import.meta.main) await runJsonCommand("compare", compare);
