/**
 * The one defaults object: every default of `tune` and `compare` (trials,
 * batch, patience, timing, seeds, budgets, ...) and the ranges a value must
 * lie in, read by the command-line parsers, their help texts, the tuning
 * session and the check of a stored run's configuration on `--resume`.
 *
 * `tune` and `compare` differ where their jobs differ: `tune` screens each
 * candidate for its record (10 ms per repeat, rounds of 8 that a run can
 * stop between, patience 20) and times its finalists again at 40 ms per
 * repeat; `compare` runs many seeds on replayed data or
 * on a live space where every configuration is measured once (rounds of 16,
 * 20 ms per repeat), and waits longer (patience 50) for a strategy that
 * re-proposes what it has seen. The loop (tuner/loop.ts `LOOP_DEFAULTS`),
 * a comparison's runs (tuner/run_strategy.ts `RUN_DEFAULTS`), `openSpace`
 * and `compareStrategies` (tuner/) and the runner (measure/runner.ts
 * `DEFAULT_TIMING`, `timeoutSeconds`) read theirs from here, so a library
 * call and the command it stands for measure alike. It sits in `ir/`, the
 * bottom layer, so that every layer can read it.
 *
 * @example
 * ```ts
 * import { DEFAULTS, inRange } from "./defaults.ts";
 * if (DEFAULTS.tune.trials !== 64) throw new Error();
 * if (inRange("batch", 0) === undefined) throw new Error(); // batch starts at 1
 * ```
 * @module
 */

/** Timing of a measurement (measure/types.ts `TimingOptions`). */
export interface TimingDefaults {
  /** Calls per repeat (grown until a repeat lasts `minRepeatMs`). */
  readonly number: number;
  /** Repeats; one time is kept per repeat. */
  readonly repeat: number;
  /** Minimum milliseconds per repeat. */
  readonly minRepeatMs: number;
  /** Untimed calls before the first repeat. */
  readonly warmup: number;
  /** Slowest over fastest repeat above which a candidate gets as many repeats again. */
  readonly noisySpread?: number;
}

/** Defaults of `tune` and its session (tuner/session.ts). */
export interface TuneDefaults {
  /** Search strategy (`--strategy`), a name of the strategy table. */
  readonly strategy: string;
  /** Target (`--target`): `"cpu"`, `"cuda"` or `"opencl"`. */
  readonly target: string;
  /** Distinct candidates to measure (`--trials`). */
  readonly trials: number;
  /** Seed of the strategy's PRNG (`--seed`). */
  readonly seed: number;
  /** Records database (`--db`). */
  readonly db: string;
  /** Candidates per round (`--batch`). */
  readonly batch: number;
  /** Seconds one measurement may take (`--timeout`). */
  readonly timeoutSeconds: number;
  /**
   * Candidates per compiler process (`--unity`) where the target builds with
   * a C compiler (nvcc builds one per process): a round's kernels in one file
   * cost gcc 30 to 45% fewer seconds each on matmul 256, and give the same
   * machine code (bench/results/tuning_throughput.md).
   */
  readonly unity: number;
  /** Rounds in a row with nothing new before a run ends as exhausted. */
  readonly patience: number;
  /**
   * Timing of each trial (`--number`, `--repeat`, `--min-repeat-ms`): a
   * screening, whose figures rank the candidates; the run's reported best is
   * its finalists' figure at {@link TuneDefaults.finalistTiming}. A trial
   * whose slowest repeat is more than 1.25 times its fastest gets 3 repeats
   * more (`noisySpread`): at 10 ms a repeat, 6-10% of trials had such a spread
   * against 0-2.5% at 40 ms (bench/results/tuning_throughput.md). Target
   * cuda times its trials at `finalistTiming` (not measured on a GPU at 10 ms).
   */
  readonly timing: TimingDefaults;
  /**
   * Timing of the finalists' re-timing (`--finalist-min-repeat-ms`) and the
   * runner's default: TVM's time evaluator at 40 ms per repeat, as the peers'
   * harness times (bench/results/harness_agreement.md). Trials screened at
   * 10 ms with finalists timed at 40 ms tune faster at the same confirmed
   * speed (bench/results/tuning_throughput.md, "Screening at 10 ms").
   */
  readonly finalistTiming: TimingDefaults;
  /**
   * Finalists (`--finalists`): the search's fastest distinct valid candidates
   * timed again after it, in turn (0: none; a trace-file run or a replayed
   * cache has none unless asked).
   */
  readonly finalists: number;
  /** Rounds of the finalists' re-timing (`--finalist-rounds`). */
  readonly finalistRounds: number;
}

/** Defaults of `compare` and its runs. */
export interface CompareDefaults {
  /**
   * Strategies compared (`--strategies`): `bo` first, tunebook's default strategy for a
   * comparison (first by both scores over the spaces in data/: bench/results/methodology_scores.md).
   */
  readonly strategies: readonly string[];
  /** Evaluations at which strategies are compared (`--budget`). */
  readonly budgets: readonly number[];
  /** Runs (seeds) per strategy (`--seeds`). */
  readonly seeds: number;
  /**
   * What a configuration a replayed cache lacks is: `"invalid"` (costs an evaluation) or
   * `"restricted"` (rejected by the space).
   */
  readonly absent: "invalid" | "restricted";
  /** Folder of a comparison's outputs (`--out`). */
  readonly out: string;
  /** Candidates asked of a strategy per round. */
  readonly batch: number;
  /** Rounds in a row with nothing new before a run stops. */
  readonly patience: number;
  /** Timing of a live space's measurements. */
  readonly liveTiming: TimingDefaults;
}

/** Every default, by command. */
export const DEFAULTS: Readonly<{
  tune: TuneDefaults;
  compare: CompareDefaults;
  /** Plan size of the model-based tuners (AutoTVM's plan_size, 64 there; 16 for small budgets). */
  planSize: number;
}> = Object.freeze({
  tune: Object.freeze({
    strategy: "random",
    target: "cpu",
    trials: 64,
    seed: 1,
    db: "runs.db",
    batch: 8,
    timeoutSeconds: 10,
    unity: 8,
    patience: 20,
    timing: Object.freeze({ number: 1, repeat: 3, minRepeatMs: 10, warmup: 1, noisySpread: 1.25 }),
    finalistTiming: Object.freeze({ number: 1, repeat: 3, minRepeatMs: 40, warmup: 1 }),
    finalists: 3,
    finalistRounds: 3,
  }),
  compare: Object.freeze({
    strategies: Object.freeze(["bo", "random", "grid", "sa", "ga", "evolutionary"]),
    budgets: Object.freeze([25, 100, 400]),
    seeds: 20,
    absent: "invalid" as const,
    out: "runs/compare",
    batch: 16,
    patience: 50,
    liveTiming: Object.freeze({ number: 1, repeat: 3, minRepeatMs: 20, warmup: 1 }),
  }),
  planSize: 16,
});

/**
 * The finalists' timing of a run whose trials are timed by `trials`: the
 * trials' calls, repeats and warm-up, each repeat lasting at least
 * `DEFAULTS.tune.finalistTiming.minRepeatMs` (40 ms), or the trials' own
 * minimum where that is longer, and no `noisySpread` (their rounds are the
 * second look); fields of `given` override.
 *
 * @example
 * ```ts
 * import { finalistTimingOf } from "./defaults.ts";
 * const t = finalistTimingOf({ number: 1, repeat: 5, minRepeatMs: 10, warmup: 1 });
 * if (t.minRepeatMs !== 40 || t.repeat !== 5) throw new Error();
 * if (finalistTimingOf(t, { minRepeatMs: 100 }).minRepeatMs !== 100) throw new Error();
 * ```
 */
export function finalistTimingOf(
  trials: TimingDefaults,
  given: Partial<TimingDefaults> = {},
): TimingDefaults {
  const floor = DEFAULTS.tune.finalistTiming.minRepeatMs;
  // Their rounds are the finalists' second look: no more repeats for a noisy one.
  const { noisySpread: _, ...timing } = trials;
  return { ...timing, minRepeatMs: Math.max(trials.minRepeatMs, floor), ...given };
}

/** Smallest and largest value of each bounded setting (integers unless `real`). */
export const RANGES: Readonly<
  Record<string, Readonly<{ min: number; max: number; real?: boolean; above?: boolean }>>
> = Object.freeze({
  trials: { min: 1, max: 1e7 },
  batch: { min: 1, max: 1024 },
  seed: { min: -(2 ** 31), max: 2 ** 32 },
  number: { min: 1, max: 1e9 },
  repeat: { min: 1, max: 1000 },
  unity: { min: 1, max: 1024 },
  /** Seconds, above 0. */
  timeoutSeconds: { min: 0, max: Infinity, real: true, above: true },
  minRepeatMs: { min: 0, max: Infinity, real: true },
  /** A factor >= 1. */
  race: { min: 1, max: Infinity, real: true },
  finalists: { min: 0, max: 1024 },
  finalistRounds: { min: 1, max: 1000 },
});

/**
 * Why `value` is not a valid `name` of {@link RANGES} (one phrase, e.g.
 * "must be an integer between 1 and 1024"), or undefined when it is.
 */
export function inRange(name: keyof typeof RANGES & string, value: unknown): string | undefined {
  const r = RANGES[name];
  if (!r) throw new RangeError(`No range for "${name}"`);
  const ok = typeof value === "number" && Number.isFinite(value) &&
    (r.real ? true : Number.isInteger(value)) &&
    (r.above ? value > r.min : value >= r.min) && value <= r.max;
  if (ok) return undefined;
  if (!r.real) return `must be an integer between ${r.min} and ${r.max}`;
  if (r.above) return `must be a number above ${r.min}`;
  return r.max === Infinity
    ? `must be a number >= ${r.min}`
    : `must be a number between ${r.min} and ${r.max}`;
}
