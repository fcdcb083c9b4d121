/**
 * A comparison of strategies as one library call: every strategy runs with
 * every seed through the one tuning loop (`runStrategy`) against the same
 * space, to the largest budget; the runs are tabulated at each budget
 * (search/compare.ts), scored against random search (search/score.ts) and
 * returned as arquero tables (search/compare_frame.ts) beside the plain rows.
 * `deno task compare`, notebooks 02 and 03 and the benches are this call.
 *
 * A budget counts distinct configurations evaluated; the figure at budget b
 * is the first b evaluations of each run (strategies do not know the budget).
 * Seeds are 0..n−1 (or the list given). With `db` every run's records go to
 * that store; with `resume` finished runs of the same configuration are read
 * back, an unfinished one continues and missing ones start. A strategy
 * named `STRATEGY@PRESET` runs with the preset's settings under that label.
 *
 * @example
 * ```ts
 * import { openSpace } from "./open_space.ts";
 * import { compareStrategies } from "./compare_strategies.ts";
 * const space = await openSpace("pnpoly_RTX_3090");
 * const c = await compareStrategies(space, ["random", "sa"], { budgets: [10, 20], seeds: 2 });
 * console.log(c.results.numRows(), c.scoreOf.sa, c.reach.get("reached", 0)); // 4 rows, a score
 * await space.close();
 * ```
 * @module
 */
import "npm:@uwdata/flechette@2.6.0";
import { type ColumnTable, from } from "npm:arquero@8.0.3";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import type { RecordStore } from "../datasets/record_store.ts";
import type { Measurer } from "../measure/measurer.ts";
import type { Sample } from "../costmodel/model.ts";
import {
  type CompareRow,
  compareRows,
  type ReachRow,
  reachRows,
  type RunTrace,
} from "../search/comparison.ts";
import { runsFrame } from "../search/comparison_frame.ts";
import { budgetScore, meanCurve } from "../search/score.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import type { CandidateOf, Strategy } from "../search/strategy.ts";
import { knobKey, runStrategy, runTrace } from "./run_strategy.ts";
import { createStrategy, KNOB_STRATEGY_NAMES } from "./strategies.ts";
import { parseStrategyName, type ResolvedStrategy, resolveStrategy } from "./presets.ts";
import type { OpenedSpace } from "./open_space.ts";

/** A strategy of a comparison made by the caller (a variant, a wrapped strategy). */
export interface StrategyFactory {
  /** Its label in the tables. */
  name: string;
  /** Builds the strategy of one run. */
  create(
    space: KnobSpace,
    context: { seed: number; candidateOf: CandidateOf; pretrain?: Sample[]; planSize?: number },
  ): Strategy | Promise<Strategy>;
}

/**
 * A strategy by table name (`"sa"`, `"bo"`, ...: `KNOB_STRATEGY_NAMES`), by
 * `STRATEGY@PRESET` (`"sa@mine"`, `"random@kt"`: tuner/presets.ts; its runs
 * record the preset's settings as `config.hyper`), or a {@link StrategyFactory}.
 */
export type StrategyChoice = string | StrategyFactory;

/** One finished run, as told to {@link CompareStrategiesOptions.onRun}. */
export interface RunEvent {
  /** The strategy's name. */
  strategy: string;
  /** The run's seed. */
  seed: number;
  /** Runs finished so far, this one included, and the number of runs. */
  done: number;
  /** Runs of the whole comparison. */
  total: number;
  /** What the run found, evaluation by evaluation. */
  trace: RunTrace;
  /** Read back from `db` (finished before), not run now. */
  resumed: boolean;
}

/** A run to be made elsewhere ({@link CompareStrategiesOptions.execute}). */
export interface RunJobRequest {
  /** The strategy's name. */
  strategy: string;
  /** The run's seed. */
  seed: number;
  /** Evaluations the run may make. */
  budget: number;
  /** The run's recorded configuration. */
  config: Record<string, unknown>;
}

/** Options of {@link compareStrategies}; only `budgets` and `seeds` are required. */
export interface CompareStrategiesOptions {
  /** Evaluations at which the strategies are compared (sorted; runs go to the largest). */
  budgets: readonly number[];
  /** Seeds per strategy (0..n−1), or the seeds themselves. */
  seeds: number | readonly number[];
  /** Where every run's records go. Default: a fresh in-memory store, dropped after. */
  db?: RecordStore;
  /** Measures the candidates. Default: the space's own (`space.measurer`). */
  measurer?: Measurer;
  /** Called after each run, in order (progress bars). Default: nothing. */
  onRun?: (run: RunEvent) => void;
  /** Continue the comparison recorded in `db` (see the module documentation). Default false. */
  resume?: boolean;
  /** Samples the transfer strategies pretrain on (`transferSamples`). Default none. */
  pretrain?: Sample[];
  /** Plan size of the planning strategies. Default theirs (`DEFAULTS.planSize`). */
  planSize?: number;
  /**
   * Each run's recorded configuration, before its `budget` (which is added
   * last); runs are resumed only when it is equal. Default `{ compare: space.spec }`.
   */
  config?: Record<string, unknown>;
  /**
   * Budgets above the space's size are clipped to it (else a RangeError).
   * Default false.
   */
  clip?: boolean;
  /**
   * Runs one strategy x seed elsewhere (workers) and returns its trace, its
   * records already written to `db`; all runs not finished in `db` are sent
   * at once and awaited in order. Default: each run here, in turn.
   */
  execute?: (job: RunJobRequest) => Promise<RunTrace>;
  /**
   * Evaluations each run may make, at least the largest budget (default: the largest budget). A
   * run under a tuning-time budget (`wrap`) is given the space's size and ends on its clock.
   */
  trials?: number;
  /**
   * Wraps each run's strategy and measurer before it runs (default: none), e.g. with a tuning-time
   * budget (tuner/compare_time.ts `budgetedRun`), which ends the run when its clock passes the limit.
   */
  wrap?: (strategy: Strategy, measurer: Measurer) => { strategy: Strategy; measurer: Measurer };
  /** Fraction of the optimum of the reach table. Default 0.95. */
  fraction?: number;
}

/** What {@link compareStrategies} returns. */
export interface Comparison {
  /** The space's name. */
  space: string;
  /** Best known seconds (replay), or the best measured in the runs (live). */
  optimum: number;
  /** The budgets compared at (sorted, clipped with `clip`). */
  budgets: number[];
  /** The seeds of each strategy's runs. */
  seeds: number[];
  /** Every run's tuning trace in long form (`runsFrame`: strategy, seed, evaluation, best, fraction, wall). */
  runs: ColumnTable;
  /** Per strategy and budget: mean, median and quartiles of the fraction of optimum (`compareRows`). */
  results: ColumnTable;
  /** Per strategy: the budget-aggregated score (null on a live space without `random`). */
  scores: ColumnTable;
  /** Per strategy: evaluations to reach `fraction` of the optimum (`reachRows`). */
  reach: ColumnTable;
  /** `results` as plain rows. */
  rows: CompareRow[];
  /** `reach` as plain rows. */
  reachRows: ReachRow[];
  /** `scores` as a record: strategy name to its score (null where there is none). */
  scoreOf: Record<string, number | null>;
  /** The runs of each strategy, in seed order. */
  traces: Map<string, RunTrace[]>;
  /** Whether the score's random curve is the exact expectation (replay) rather than the random runs. */
  exactRandom: boolean;
}

function positiveIntegers(xs: unknown, option: string): number[] {
  if (!Array.isArray(xs) || xs.length === 0) {
    throw new TypeError(
      `${option} must be a non-empty array of positive integers, got ${
        JSON.stringify(xs) ?? String(xs)
      }`,
    );
  }
  for (const x of xs) {
    if (!Number.isInteger(x) || x < 1) {
      throw new RangeError(`${option} must be positive integers, got ${JSON.stringify(x)}`);
    }
  }
  return [...xs] as number[];
}

function seedList(seeds: unknown): number[] {
  if (typeof seeds === "number") {
    if (!Number.isInteger(seeds) || seeds < 1) {
      throw new RangeError(`seeds must be a positive integer or a list of seeds, got ${seeds}`);
    }
    return Array.from({ length: seeds }, (_, i) => i);
  }
  if (!Array.isArray(seeds) || seeds.length === 0 || !seeds.every(Number.isInteger)) {
    throw new TypeError(
      `seeds must be a positive integer or a list of integer seeds, got ${
        JSON.stringify(seeds) ?? String(seeds)
      }`,
    );
  }
  return [...seeds];
}

/**
 * Compares strategies on one space (see the module documentation).
 *
 * @param space an opened space (`openSpace`)
 * @param strategies table names and/or {@link StrategyFactory}s; labels must differ
 * @param options budgets, seeds and the rest of {@link CompareStrategiesOptions}
 * @throws {TypeError} or {RangeError} naming the option and what it got
 */
export async function compareStrategies(
  space: OpenedSpace,
  strategies: readonly StrategyChoice[],
  options: CompareStrategiesOptions,
): Promise<Comparison> {
  if (typeof space !== "object" || space === null || !space.space || !space.measurer) {
    throw new TypeError(`space must be an opened space (openSpace), got ${String(space)}`);
  }
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`options must be an object with budgets and seeds, got ${String(options)}`);
  }
  if (!Array.isArray(strategies) || strategies.length === 0) {
    throw new TypeError(
      `strategies must be a non-empty array of strategy names, got ${
        JSON.stringify(strategies) ?? String(strategies)
      }`,
    );
  }
  // Names resolved once (STRATEGY@PRESET reads its preset here); factories are kept as given.
  const resolved = new Map<number, ResolvedStrategy>();
  for (const [k, s] of strategies.entries()) {
    if (typeof s === "string") {
      const base = parseStrategyName(s).strategy;
      if (!KNOB_STRATEGY_NAMES.includes(base)) {
        throw new RangeError(
          `strategies: unknown strategy ${JSON.stringify(base)}; known: ${
            KNOB_STRATEGY_NAMES.join(", ")
          }`,
        );
      }
      try {
        resolved.set(k, resolveStrategy(s));
      } catch (e) {
        throw new RangeError(`strategies: ${s}: ${(e as Error).message}`);
      }
    } else if (typeof s !== "object" || s === null || typeof s.create !== "function") {
      throw new TypeError(
        `strategies: each is a strategy name or { name, create }, got ${String(s)}`,
      );
    }
  }
  const names = strategies.map((s) => typeof s === "string" ? s : s.name);
  if (new Set(names).size !== names.length) {
    throw new RangeError(`strategies: a name is given twice, got ${names.join(",")}`);
  }
  let budgets = positiveIntegers(options.budgets, "budgets").sort((a, b) => a - b);
  const seeds = seedList(options.seeds);
  const size = space.space.size;
  if (budgets[budgets.length - 1] > size) {
    if (!options.clip) {
      throw new RangeError(
        `budgets: ${
          budgets[budgets.length - 1]
        } is more than the ${size} configurations of the space (a budget counts distinct configurations)`,
      );
    }
    budgets = [...new Set(budgets.map((b) => Math.min(b, size)))];
  }
  for (const k of ["onRun", "execute", "wrap"] as const) {
    if (options[k] !== undefined && typeof options[k] !== "function") {
      throw new TypeError(`${k} must be a function, got ${typeof options[k]}`);
    }
  }
  const store = options.db ?? createMemoryRecordStore();
  const measurer = options.measurer ?? space.measurer;
  const maxBudget = budgets[budgets.length - 1];
  const trials = options.trials ?? maxBudget;
  if (!Number.isInteger(trials) || trials < maxBudget) {
    throw new RangeError(
      `trials must be an integer of at least the largest budget (${maxBudget}), got ${trials}`,
    );
  }
  if (options.execute && (options.wrap || options.trials !== undefined)) {
    throw new TypeError("execute runs whole jobs elsewhere: it takes neither wrap nor trials");
  }
  const config: Record<string, unknown> = {
    ...(options.config ?? { compare: space.spec }),
    budget: maxBudget,
  };
  // A preset's run records its settings: a run of other settings under the same label is not resumed.
  const configOf = names.map((_, k) => {
    const hyper = resolved.get(k)?.preset ? resolved.get(k)!.hyper : undefined;
    return hyper ? { ...config, hyper } : config;
  });
  const recorded = options.resume ? await store.runs() : [];
  if (space.remember) {
    // A resumed live comparison measures no configuration its records already hold.
    for (const run of recorded.filter((r) => r.config.compare === config.compare)) {
      for (const c of await store.candidates(run.id)) {
        if (!c.knobs || !c.result) continue;
        const { errorKind, times, buildSeconds, runSeconds } = c.result;
        space.remember(c.knobs, { errorKind, times, buildSeconds, runSeconds });
      }
    }
  }
  const previous = (k: number, seed: number) =>
    recorded.findLast((r) =>
      r.strategy === names[k] && r.seed === seed &&
      JSON.stringify(r.config) === JSON.stringify(configOf[k])
    );
  const traces = new Map<string, RunTrace[]>();
  const total = names.length * seeds.length;
  let done = 0;
  const told = (strategy: string, seed: number, trace: RunTrace, resumed: boolean) =>
    options.onRun?.({ strategy, seed, done: ++done, total, trace, resumed });
  if (options.execute) {
    const execute = options.execute;
    const preset = [...resolved.values()].find((r) => r.preset);
    if (preset) {
      throw new RangeError(
        `strategies: ${preset.label}: a preset's settings cannot be sent to execute (workers run table names)`,
      );
    }
    const sent = names.map((strategy, k) =>
      seeds.map((seed) => {
        const before = previous(k, seed);
        const result = before?.status === "finished"
          ? undefined
          : execute({ strategy, seed, budget: maxBudget, config: configOf[k] });
        result?.catch(() => {}); // Awaited in order below.
        return { before, result };
      })
    );
    for (const [k, strategy] of names.entries()) {
      const list: RunTrace[] = [];
      for (const [j, { before, result }] of sent[k].entries()) {
        const trace = result ? await result : await runTrace(store, before!.id);
        list.push(trace);
        told(strategy, seeds[j], trace, !result);
      }
      traces.set(strategy, list);
    }
  } else {
    for (const [k, choice] of strategies.entries()) {
      const name = names[k];
      const list: RunTrace[] = [];
      for (const seed of seeds) {
        const before = previous(k, seed);
        let trace: RunTrace;
        if (before?.status === "finished") {
          trace = await runTrace(store, before.id);
        } else {
          const context = {
            seed,
            candidateOf: space.candidateOf,
            pretrain: options.pretrain,
            planSize: options.planSize,
          };
          const r = resolved.get(k);
          const strategy = r
            ? await createStrategy(r.strategy, space.space, {
              ...context,
              ...(r.preset ? { hyper: r.hyper } : {}),
            })
            : await (choice as StrategyFactory).create(space.space, context);
          const run = options.wrap?.(strategy, measurer) ?? { strategy, measurer };
          try {
            trace = await runStrategy(run.strategy, run.measurer, {
              budget: trials,
              store,
              keyOf: knobKey,
              ...(before ? { runId: before.id } : {}),
              run: {
                strategy: name,
                seed,
                trials,
                target: space.measurer.name,
                config: configOf[k],
                workload: space.workload,
              },
            });
          } finally {
            (strategy as { dispose?: () => void }).dispose?.();
          }
        }
        list.push(trace);
        told(name, seed, trace, before?.status === "finished");
      }
      traces.set(name, list);
    }
  }
  if (!options.db) await store.close();
  // Live: the best measured in any run (every measurement is some run's evaluation).
  const optimum = space.optimum ??
    Math.min(...[...traces.values()].flat().map((r) => r.best.at(-1) ?? Infinity));
  const rows = compareRows(traces, budgets, optimum);
  const reach = reachRows(traces, optimum, options.fraction ?? 0.95);
  const lo = budgets[0];
  const random = space.randomCurve?.(lo, maxBudget) ??
    (traces.has("random") ? meanCurve(traces.get("random")!, optimum, lo, maxBudget) : undefined);
  const scoreOf: Record<string, number | null> = {};
  for (const [name, rs] of traces) {
    scoreOf[name] = random ? budgetScore(meanCurve(rs, optimum, lo, maxBudget), random) : null;
  }
  return {
    space: space.name,
    optimum,
    budgets,
    seeds,
    runs: runsFrame(traces, optimum),
    results: from(rows),
    scores: from(Object.entries(scoreOf).map(([strategy, score]) => ({ strategy, score }))),
    reach: from(reach),
    rows,
    reachRows: reach,
    scoreOf,
    traces,
    exactRandom: space.randomCurve !== undefined,
  };
}
