/**
 * Command-line parsing for `tune`: every bad argument becomes a
 * {@link UsageError} whose message names the problem (exit status 2).
 * @module
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { DatabaseError } from "../datasets/db.ts";
import { laneOverride, LanesError } from "../ir/target_cpu.ts";
import { mediaError } from "../datasets/io_errors.ts";
import { createWorkload, type Workload, WORKLOADS } from "../ir/workloads.ts";
import { checkWorkloadMemory } from "../ir/limits.ts";
import { ALL_MATH, type MathKind, parseMath } from "../ir/gemm_math.ts";
import { resolveTarget } from "../ir/target.ts";
import { templateNamesOf } from "../search/target_space.ts";
import { TEMPLATE_NAMES } from "../search/templates/registry.ts";
import { GPU_TEMPLATE_NAMES } from "../search/templates/registry_gpu.ts";
import { STRATEGY_NAMES, strategyHelp } from "../tuner/strategies.ts";
import { parseStrategyName } from "../tuner/presets.ts";
import { DEFAULTS, RANGES } from "../ir/defaults.ts";
import { didYouMean, unknownSpace } from "./names.ts";

const TUNE = DEFAULTS.tune;

/** A bad command line; the CLI prints the message and exits with status 2. */
export class UsageError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * `--help` was given: the CLI prints the message (the usage text) on stdout
 * and exits with status 0.
 */
export class HelpRequest extends Error {
  /** Creates the request; `usage` is what the CLI prints. */
  constructor(usage: string) {
    super(usage);
    this.name = "HelpRequest";
  }
}

/**
 * Parses a command's flags strictly, with `--help` added: a malformed or
 * unknown flag is a {@link UsageError}, `--help` a {@link HelpRequest}
 * carrying `usage`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HelpRequest, parseFlags } from "./args.ts";
 * const v = parseFlags(["--db", "x.db"], { db: { type: "string" } }, "usage: ...");
 * assert.equal(v.db, "x.db");
 * assert.throws(() => parseFlags(["--help"], {}, "usage: ..."), HelpRequest);
 * ```
 */
export function parseFlags<const O extends ParseArgsOptionsConfig>(
  argv: string[],
  options: O,
  usage: string,
): ReturnType<typeof parseArgs<{ args: string[]; strict: true; options: O }>>["values"] {
  const { values, positionals } = parseCommandLine(argv, options, usage);
  if (positionals.length > 0) {
    throw new UsageError(
      `Unexpected argument '${positionals[0]}'. This command does not take positional arguments`,
    );
  }
  return values;
}

/**
 * {@link parseFlags} for a script that takes positional arguments too (a
 * bench's files, say): the flags, and the arguments in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCommandLine, UsageError } from "./args.ts";
 * const c = parseCommandLine(["a.json", "--margin", "0.1"], { margin: { type: "string" } }, "usage: ...");
 * assert.deepEqual(c.positionals, ["a.json"]);
 * assert.equal(c.values.margin, "0.1");
 * assert.throws(() => parseCommandLine(["--bogus"], {}, "usage: ..."), UsageError);
 * ```
 */
export function parseCommandLine<const O extends ParseArgsOptionsConfig>(
  argv: string[],
  options: O,
  usage: string,
): {
  values: ReturnType<typeof parseArgs<{ args: string[]; strict: true; options: O }>>["values"];
  positionals: string[];
} {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { ...options, help: { type: "boolean", default: false } },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if ((parsed.values as { help?: boolean }).help) throw new HelpRequest(usage);
  return {
    values: parsed.values as ReturnType<
      typeof parseArgs<{ args: string[]; strict: true; options: O }>
    >["values"],
    positionals: parsed.positionals,
  };
}

/**
 * Reads a script's positional arguments (a bench's `[seeds] [space]`, say):
 * any flag but `--help` is a {@link UsageError}, `--help` a
 * {@link HelpRequest} carrying `usage`, and more than `max` arguments a
 * {@link UsageError}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { positionalArgs, UsageError } from "./args.ts";
 * assert.deepEqual(positionalArgs(["5", "gemm_RTX_3090"], "usage: ...", 3), ["5", "gemm_RTX_3090"]);
 * assert.throws(() => positionalArgs(["--seeds", "5"], "usage: ...", 3), UsageError);
 * assert.throws(() => positionalArgs(["1", "2"], "usage: ...", 1), UsageError);
 * ```
 */
export function positionalArgs(argv: string[], usage: string, max = Infinity): string[] {
  const { positionals } = parseCommandLine(argv, {}, usage);
  if (positionals.length > max) {
    throw new UsageError(
      `at most ${max} argument(s), got ${positionals.length}: ${positionals.join(" ")}`,
    );
  }
  return positionals;
}

/**
 * A positive integer from a positional argument, or `fallback` when it is
 * absent; anything else is a {@link UsageError} naming `what`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { positiveArg } from "./args.ts";
 * assert.equal(positiveArg(undefined, "seeds", 5), 5);
 * assert.equal(positiveArg("3", "seeds", 5), 3);
 * assert.throws(() => positiveArg("0", "seeds", 5), /seeds must be a positive integer, got "0"/);
 * ```
 */
export function positiveArg(text: string | undefined, what: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`${what} must be a positive integer, got "${text}"`);
  }
  return n;
}

/** Targets `tune` knows. */
export const TARGETS = ["cpu", "cuda"] as const;

/** Parsed arguments of `tune`. */
export interface TuneArgs {
  workload?: string;
  shape?: number[];
  target: string;
  strategy: string;
  trials?: number;
  seed: number;
  db: string;
  resume: boolean;
  /** With `--resume`: the run to continue (default the last unfinished one). */
  run?: number;
  /** Flags given on the command line (without `--`), so `--resume` can check them against the run. */
  given: string[];
  trace?: string;
  /** A Kernel Tuner cache (name or path) replayed instead of measuring a workload (`--space`). */
  space?: string;
  template?: string;
  batch: number;
  timeout: number;
  number: number;
  repeat: number;
  minRepeatMs: number;
  /** Target cuda: overwrite the L2 cache before each timed repeat (`--flush-l2`). */
  flushL2: boolean;
  /** Target cuda: the arithmetic allowed (`--math`; absent: every kind). */
  math?: MathKind[];
  /** Target cuda: measure the GEMM configurations first (false with `--no-configs`). */
  configs: boolean;
  /** Build round k+1 while round k is measured (`--overlap`). */
  overlap: boolean;
  /** Candidates compiled together per compiler process (`--unity`). */
  unity: number;
  /** Racing factor (`--race`): one repeat for candidates this much slower than the best. */
  race?: number;
  /** Finalists re-timed after the search (`--finalists`; undefined: the session's default). */
  finalists?: number;
  /** Rounds of their re-timing (`--finalist-rounds`). */
  finalistRounds?: number;
  /** Least milliseconds of a finalist's repeat (`--finalist-min-repeat-ms`; absent: the session's). */
  finalistMinRepeatMs?: number;
  /** Strategy sa's re-timing margin (`--remeasure-margin`). */
  remeasureMargin?: number;
  /** Redis of a queue of measurement workers (`--queue`): measure there instead of here. */
  queue?: string;
  /** With `--queue`: the machine key of the workers to measure on. */
  machine?: string;
  quiet: boolean;
}

/**
 * Default of `--unity`: candidates compiled together per compiler process
 * (ir/defaults.ts); target cuda builds one per nvcc process.
 */
export const UNITY_DEFAULT: number = TUNE.unity;

/** Usage text of `tune`. */
export const TUNE_USAGE = `usage: deno task tune --workload NAME --shape D1,D2,... [options]

  --workload NAME     ${Object.keys(WORKLOADS).join(" | ")}
  --shape D1,D2,...   ${
  Object.entries(WORKLOADS).map(([n, d]) => `${n}: ${d.params.join(",")}`).join("; ")
}
  --target cpu|cuda   target (default ${TUNE.target}); cuda builds with nvcc (sm_90) and, without a
                      GPU, stops after building with a "no CUDA device/driver" error (exit 3)
  --strategy NAME     search strategy (default ${TUNE.strategy}), one of the table below; random
                      and ansor search the sketch space (random: the template's knobs when
                      --template is given), the others the knob template; NAME@PRESET
                      runs it with a preset's settings (tune-strategy's runs/presets/PRESET.json,
                      a path ending in .json, or random@kt) on a knob space
  --template NAME     knob template of the knob strategies (default the workload's: ${
  TEMPLATE_NAMES.join(", ")
}; cuda: ${GPU_TEMPLATE_NAMES.join(", ")})
  --trials N          distinct candidates to measure (default ${TUNE.trials})
  --seed N            seed of the search (default ${TUNE.seed})
  --db PATH           records database (default ${TUNE.db})
  --resume            continue the last unfinished run in --db with its stored options
                      (a flag that contradicts them is an error); a finished run has its
                      transient results (worker_lost, run_timeout_transient,
                      build_timeout_transient) measured again
  --run ID            with --resume: continue run ID instead
  --trace FILE        measure the trace(s) in FILE (one trace or a JSON list) instead of searching
  --space CACHE       replay a Kernel Tuner cache (a name from data/kerneltuner such as
                      pnpoly_RTX_3090, or a path) instead of measuring a workload
  --batch N           candidates per round (default ${TUNE.batch})
  --timeout S         seconds one measurement may take (default ${TUNE.timeoutSeconds})
  --number N --repeat N --min-repeat-ms MS   timing of each trial (default ${TUNE.timing.number}, ${TUNE.timing.repeat}, ${TUNE.timing.minRepeatMs};
                      target cuda ${TUNE.finalistTiming.minRepeatMs} ms): a screening, the finalists are timed again
  --flush-l2          target cuda: overwrite the GPU's L2 cache before each timed repeat (cold
                      L2, as after another layer; stored with the run)
  --math KINDS        target cuda: the arithmetic kernels may use, from ${ALL_MATH.join(",")}
                      (default all; fp32: FP32 FMA only, as cuBLAS by default; tf32, fp16,
                      bf16: tensor cores with those inputs); stored with the run
  --no-configs        target cuda: do not measure the GEMM template's hand-written
                      configurations (search/gemm_configs.ts) before the search
  --overlap           build the next round while this one is measured, the compilers at the
                      lowest CPU priority (nice 19 and their session's autogroup at 19)
  --unity N           compile up to N of a round's candidates in one file and compiler
                      process (default ${UNITY_DEFAULT}, target cuda 1; 1: one file each)
  --finalists K       after the search, time its K fastest distinct valid candidates again
                      (default ${TUNE.finalists}; 0: none; a --trace run: none unless given) and
                      report the best median over the rounds beside its first figure
  --finalist-rounds R rounds of that re-timing, every finalist once per round in an order
                      rotated each round (default ${TUNE.finalistRounds})
  --finalist-min-repeat-ms MS   least milliseconds of each repeat of that re-timing
                      (default ${TUNE.finalistTiming.minRepeatMs}, or --min-repeat-ms where longer)
  --remeasure-margin F  strategy sa: a newcomer faster than the current point by less than
                      the fraction F waits for the current point to be timed again (not a
                      trial, not recorded; default 0: never)
  --race F            racing: a candidate whose first repeat is more than F times slower
                      than the run's best so far gets no more repeats (default: off)
  --queue URL         measure on workers (deno task worker) through Redis at URL,
                      redis://HOST:PORT (target cpu); the records stay here
  --machine KEY       with --queue: the machine whose workers measure, when workers of
                      several machines are announced
  --quiet             no progress bar
  --help              this text

Strategies (tuner/strategies.ts; compare takes the same names but ansor):
${strategyHelp(2)}

Ctrl-C or SIGTERM stops after the round in flight (a second one at once) and prints the
command that resumes the run. Exit status: 0 done; 2 bad arguments, file or database;
3 target cuda without a device; 130/143 interrupted (resumable). With --queue: 2 also when
no worker is announced or Redis is lost mid-run (resumable: the message says how).`;

/** Parses `tune`'s arguments; throws UsageError on any problem. */
export function parseTuneArgs(argv: string[]): TuneArgs {
  let v, tokens;
  try {
    ({ values: v, tokens } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      tokens: true,
      options: {
        workload: { type: "string" },
        shape: { type: "string" },
        target: { type: "string", default: TUNE.target },
        strategy: { type: "string", default: TUNE.strategy },
        trials: { type: "string" },
        seed: { type: "string", default: String(TUNE.seed) },
        db: { type: "string", default: TUNE.db },
        resume: { type: "boolean", default: false },
        run: { type: "string" },
        trace: { type: "string" },
        space: { type: "string" },
        template: { type: "string" },
        batch: { type: "string", default: String(TUNE.batch) },
        timeout: { type: "string", default: String(TUNE.timeoutSeconds) },
        number: { type: "string", default: String(TUNE.timing.number) },
        repeat: { type: "string", default: String(TUNE.timing.repeat) },
        "min-repeat-ms": { type: "string", default: String(TUNE.timing.minRepeatMs) },
        "flush-l2": { type: "boolean", default: false },
        math: { type: "string" },
        "no-configs": { type: "boolean", default: false },
        overlap: { type: "boolean", default: false },
        unity: { type: "string", default: String(UNITY_DEFAULT) },
        race: { type: "string" },
        finalists: { type: "string" },
        "finalist-rounds": { type: "string" },
        "finalist-min-repeat-ms": { type: "string" },
        "remeasure-margin": { type: "string" },
        queue: { type: "string" },
        machine: { type: "string" },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (v.help) throw new HelpRequest(TUNE_USAGE);
  const given = [
    ...new Set(tokens.flatMap((t) => t.kind === "option" ? [t.name] : [])),
  ];
  const args: TuneArgs = {
    given,
    target: v.target!,
    strategy: v.strategy!,
    seed: integer(v.seed!, "--seed", RANGES.seed),
    db: v.db!,
    resume: v.resume!,
    trace: v.trace,
    template: v.template,
    batch: integer(v.batch!, "--batch", RANGES.batch),
    timeout: positive(v.timeout!, "--timeout"),
    number: integer(v.number!, "--number", RANGES.number),
    repeat: integer(v.repeat!, "--repeat", RANGES.repeat),
    minRepeatMs: nonNegative(v["min-repeat-ms"]!, "--min-repeat-ms"),
    flushL2: v["flush-l2"]!,
    configs: !v["no-configs"],
    overlap: v.overlap!,
    unity: integer(v.unity!, "--unity", RANGES.unity),
    quiet: v.quiet!,
  };
  if (v.trials !== undefined) args.trials = integer(v.trials, "--trials", RANGES.trials);
  if (v.finalists !== undefined) {
    args.finalists = integer(v.finalists, "--finalists", RANGES.finalists);
  }
  if (v["remeasure-margin"] !== undefined) {
    args.remeasureMargin = nonNegative(v["remeasure-margin"], "--remeasure-margin");
    if (args.remeasureMargin >= 1) {
      throw new UsageError(
        `--remeasure-margin must be a fraction below 1, got ${v["remeasure-margin"]}`,
      );
    }
    const named = parseStrategyName(args.strategy).strategy;
    if (args.remeasureMargin > 0 && !args.resume && named !== "sa") {
      throw new UsageError(
        `--remeasure-margin: only strategy sa re-times its incumbent, not ${args.strategy}`,
      );
    }
  }
  if (v["finalist-rounds"] !== undefined) {
    args.finalistRounds = integer(v["finalist-rounds"], "--finalist-rounds", RANGES.finalistRounds);
  }
  if (v["finalist-min-repeat-ms"] !== undefined) {
    args.finalistMinRepeatMs = nonNegative(
      v["finalist-min-repeat-ms"],
      "--finalist-min-repeat-ms",
    );
  }
  if (v.queue !== undefined) args.queue = v.queue;
  if (v.machine !== undefined) {
    if (v.queue === undefined) throw new UsageError("--machine needs --queue");
    args.machine = v.machine;
  }
  if (!(TARGETS as readonly string[]).includes(args.target)) {
    throw new UsageError(`Unknown target "${args.target}"; known: ${TARGETS.join(", ")}`);
  }
  const target = resolveTarget(args.target);
  if (args.queue !== undefined && !target.host) {
    throw new UsageError("--queue measures target cpu only (workers build with gcc)");
  }
  if (v.race !== undefined) {
    args.race = positive(v.race, "--race");
    if (args.race < 1) throw new UsageError(`--race must be a factor >= 1, got ${v.race}`);
  }
  // nvcc builds one candidate per process and the CUDA runner times every repeat.
  if (target.nvcc && args.unity > 1) {
    if ((given as string[]).includes("unity")) {
      throw new UsageError("--unity: target cuda builds one candidate per nvcc process");
    }
    args.unity = 1; // the default is the C compiler's
  }
  if (args.flushL2 && !args.resume && !target.nvcc) {
    throw new UsageError("--flush-l2: only target cuda flushes the L2 cache between repeats");
  }
  if (v.math !== undefined) {
    try {
      args.math = parseMath(v.math);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  for (const flag of ["math", "no-configs"] as const) {
    if (given.includes(flag) && !args.resume && !target.nvcc) {
      throw new UsageError(
        `--${flag}: only target cuda has GPU arithmetic and GEMM configurations`,
      );
    }
  }
  if (target.nvcc && args.race !== undefined) {
    throw new UsageError("--race: target cuda times every repeat (no racing on the GPU)");
  }
  // STRATEGY@PRESET: the table's name here; the preset is read and checked by strategyProblem.
  const strategy = parseStrategyName(args.strategy).strategy;
  if (!STRATEGY_NAMES.includes(strategy)) {
    throw new UsageError(
      `Unknown strategy "${strategy}"${didYouMean(strategy, STRATEGY_NAMES)}; known: ${
        STRATEGY_NAMES.join(", ")
      }`,
    );
  }
  const templates = templateNamesOf(target);
  if (args.template !== undefined && !templates.includes(args.template)) {
    throw new UsageError(
      `Unknown template "${args.template}" for target ${args.target}; known: ${
        templates.join(", ")
      }`,
    );
  }
  if (args.db.trim() === "") throw new UsageError("--db must name a records database file");
  if (v.run !== undefined) {
    if (!args.resume) throw new UsageError("--run needs --resume (the run to continue)");
    args.run = integer(v.run, "--run", { min: 1, max: Number.MAX_SAFE_INTEGER });
  }
  if (args.resume) {
    if (v.space !== undefined) args.space = v.space;
    if (v.workload !== undefined) args.workload = v.workload;
    if (v.shape !== undefined) args.shape = parseShape(v.shape);
    if (args.trace !== undefined) {
      throw new UsageError("--trace cannot be given with --resume: the run stores its traces");
    }
    return args;
  }
  if (v.space !== undefined) {
    // A replay measures nothing: what only a measurement honours is refused, not ignored.
    const clash = [
      "workload",
      "shape",
      "trace",
      "template",
      "target",
      "timeout",
      "number",
      "repeat",
      "min-repeat-ms",
      "flush-l2",
      "math",
      "no-configs",
      "overlap",
      "unity",
      "race",
      "finalists",
      "finalist-rounds",
      "finalist-min-repeat-ms",
      "remeasure-margin",
      "queue",
    ].find((f) => (given as string[]).includes(f));
    if (clash) throw new UsageError(`--${clash} cannot be given with --space (a replayed cache)`);
    if (v.space.trim() === "") throw new UsageError("--space must name a Kernel Tuner cache");
    const unknown = unknownSpace(v.space);
    if (unknown) throw new UsageError(unknown);
    args.space = v.space;
    return args;
  }
  if (v.workload !== undefined) args.workload = v.workload;
  if (v.shape !== undefined) args.shape = parseShape(v.shape);
  for (const flag of ["strategy", "template", "seed", "math", "no-configs"] as const) {
    if (args.trace !== undefined && given.includes(flag)) {
      throw new UsageError(
        `--${flag} cannot be given with --trace: the run measures the file's traces`,
      );
    }
  }
  if (args.trace === undefined) {
    if (args.workload === undefined) {
      throw new UsageError("Missing --workload (or --resume, --trace, --space)");
    }
    if (args.shape === undefined) throw new UsageError("Missing --shape");
  }
  if (args.workload !== undefined && !Object.hasOwn(WORKLOADS, args.workload)) {
    const known = Object.keys(WORKLOADS);
    throw new UsageError(
      `Unknown workload ${JSON.stringify(args.workload)}${didYouMean(args.workload, known)}; ` +
        `known: ${known.join(", ")}`,
    );
  }
  if (args.workload !== undefined && args.shape !== undefined) {
    let w;
    try {
      w = createWorkload(args.workload, args.shape);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    try {
      checkWorkloadMemory(w);
    } catch (e) {
      throw new UsageError(`--shape: ${(e as Error).message}`);
    }
  } else if (args.workload !== undefined || args.shape !== undefined) {
    throw new UsageError("Give --workload and --shape together");
  }
  return args;
}

/**
 * The workload `name` at the shape `text` (`256,256,256`) for a script's
 * `--shape` flag: a shape that is not integers, or that the workload
 * refuses, is a {@link UsageError} naming the flag.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shapeFlag, UsageError } from "./args.ts";
 * assert.deepEqual(shapeFlag("matmul", "64,64,64").shape, [64, 64, 64]);
 * assert.throws(() => shapeFlag("matmul", "64,x,64"), UsageError);
 * assert.throws(() => shapeFlag("matmul", "64,64"), UsageError);
 * ```
 */
export function shapeFlag(name: string, text: string): Workload {
  const shape = parseShape(text);
  try {
    return createWorkload(name, shape);
  } catch (e) {
    throw new UsageError(`--shape: ${(e as Error).message}`);
  }
}

/** Parses `512,512,512`; a dimension that is not an integer is named. */
export function parseShape(text: string): number[] {
  const parts = text.split(",").map((s) => s.trim());
  return parts.map((p, i) => {
    if (!/^-?\d+$/.test(p)) {
      throw new UsageError(`--shape: dimension ${i + 1} ${JSON.stringify(p)} is not an integer`);
    }
    return Number(p);
  });
}

function integer(text: string, flag: string, { min, max }: { min: number; max: number }): number {
  if (!/^-?\d+$/.test(text.trim())) {
    throw new UsageError(`${flag} must be an integer, got "${text}"`);
  }
  const n = Number(text);
  if (n < min || n > max) {
    throw new UsageError(`${flag} must be between ${min} and ${max}, got ${n}`);
  }
  return n;
}

/**
 * The positive integer of flag `--flag` (`def` when absent); a UsageError naming the flag otherwise.
 *
 * @example
 * ```ts
 * import { positiveInt } from "./args.ts";
 * if (positiveInt("trials", "64") !== 64 || positiveInt("trials", undefined, 8) !== 8) throw new Error();
 * ```
 */
export function positiveInt(flag: string, v: string | undefined, def: number): number;
export function positiveInt(flag: string, v: string | undefined, def?: number): number | undefined;
export function positiveInt(flag: string, v: string | undefined, def?: number): number | undefined {
  return intAtLeast(1, "a positive integer", flag, v, def);
}

/**
 * The integer >= 0 of flag `--flag` (`def` when absent); a UsageError naming the flag otherwise.
 *
 * @example
 * ```ts
 * import { nonNegativeInt } from "./args.ts";
 * if (nonNegativeInt("warmup", "0") !== 0 || nonNegativeInt("warmup", undefined, 1) !== 1) throw new Error();
 * ```
 */
export function nonNegativeInt(flag: string, v: string | undefined, def: number): number;
export function nonNegativeInt(
  flag: string,
  v: string | undefined,
  def?: number,
): number | undefined;
export function nonNegativeInt(
  flag: string,
  v: string | undefined,
  def?: number,
): number | undefined {
  return intAtLeast(0, "an integer >= 0", flag, v, def);
}

function intAtLeast(
  min: number,
  what: string,
  flag: string,
  v: string | undefined,
  def?: number,
): number | undefined {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) {
    throw new UsageError(`--${flag} must be ${what}, got "${v}"`);
  }
  return n;
}

function positive(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) {
    throw new UsageError(`${flag} must be a positive number, got "${text}"`);
  }
  return n;
}

function nonNegative(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) {
    throw new UsageError(`${flag} must be a number >= 0, got "${text}"`);
  }
  return n;
}

/**
 * Runs a command (of `import.meta.main`) whose result is one line of JSON on
 * stdout; errors as in {@link runCommand}.
 *
 * @param name command name for messages, e.g. `"compare"`
 * @param command parses `argv`, does the work and returns the JSON summary
 */
export async function runJsonCommand(
  name: string,
  command: (argv: string[]) => Promise<unknown>,
): Promise<void> {
  await runCommand(name, async (argv) => console.log(JSON.stringify(await command(argv))));
}

/**
 * Runs a command (of `import.meta.main`) on `Deno.args`. A
 * {@link HelpRequest} prints the usage on stdout and exits with status 0; a
 * {@link UsageError}, a `DatabaseError` or a `LanesError` (a bad flag, file,
 * database or `TUNEBOOK_LANES`) prints `name: message` on stderr and exits with status 2, as does an
 * error of full or read-only media (naming the path and the cause); any other error
 * propagates.
 *
 * @param name command name for messages, e.g. `"scheduler_replay"`
 * @param command parses `argv` and does the work, printing what it reports
 */
export async function runCommand(
  name: string,
  command: (argv: string[]) => Promise<void>,
): Promise<void> {
  try {
    laneOverride(); // a bad TUNEBOOK_LANES is refused before anything runs
    await command(Deno.args);
  } catch (e) {
    if (e instanceof HelpRequest) {
      console.log(e.message);
      Deno.exit(0);
    }
    if (e instanceof UsageError || e instanceof DatabaseError || e instanceof LanesError) {
      console.error(`${name}: ${oneLine(e.message)}`);
      Deno.exit(2);
    }
    const media = mediaError(e) ?? permissionDenied(e); // the path and the cause
    if (media) {
      console.error(`${name}: ${oneLine(media)}`);
      Deno.exit(2);
    }
    throw e;
  }
}

/**
 * For a Deno permission refusal (`NotCapable`: a path, program or variable
 * outside what the `deno task` grants): its message and what the tasks
 * allow; undefined for any other error.
 *
 * @example
 * ```ts
 * import { permissionDenied } from "./args.ts";
 * const e = new Deno.errors.NotCapable('Requires read access to "/data/runs.db"');
 * if (!/\/data\/runs\.db.*deno task/.test(permissionDenied(e)!)) throw new Error();
 * if (permissionDenied(new Error("x")) !== undefined) throw new Error();
 * ```
 */
export function permissionDenied(e: unknown): string | undefined {
  if (!(e instanceof Deno.errors.NotCapable)) return undefined;
  return `${e.message.replace(/, run again with.*$/, "")}: the deno task reads and writes only ` +
    `the repository, /tmp and the system's files, and runs only the compilers and helpers it ` +
    `needs (README, "Permissions"); for other paths run the script with deno run and your flags`;
}

/**
 * A message on one line: line breaks become "; " (bad input is reported in one line).
 *
 * @example
 * ```ts
 * import { oneLine } from "./args.ts";
 * if (oneLine("bad --db\n  it is read-only") !== "bad --db; it is read-only") throw new Error();
 * ```
 */
export function oneLine(message: string): string {
  return message.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).join("; ");
}
