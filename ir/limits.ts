/**
 * Limits on inputs, checked before anything is built: every trace, cache
 * file, command-line count and workload shape that tunebook reads is bounded
 * here, in one place. Each limit has a name, a default and a unit; a refused
 * input gets a {@link LimitError} whose message names the limit, e.g.
 * `trace.insts[0].args.factors has 2000 factors, over the limit "split
 * factors" of 16`. README.md ("Limits") lists them.
 *
 * Map: {@link LIMITS} (the table), {@link limitMessage} (the wording),
 * {@link splitLimitReason} (a split's factors against its loop),
 * {@link workloadBytes} / {@link checkWorkloadMemory} (buffers against
 * `MemAvailable`).
 *
 * @example
 * ```ts
 * import { LIMITS, splitLimitReason } from "./limits.ts";
 * if (splitLimitReason([null, 4], 64, 1) !== undefined) throw new Error();
 * if (!splitLimitReason([2 ** 32, null], 64, 1)?.includes("split factor")) throw new Error();
 * console.log(LIMITS.splitFactors.value); // 16
 * ```
 * @module
 */
import type { Workload } from "./workloads.ts";

/**
 * One limit: what it bounds, its default and its unit.
 *
 * @example
 * ```ts
 * import type { Limit } from "./limits.ts";
 * const tiny: Limit = { name: "test size", value: 1024, unit: "bytes" };
 * console.log(tiny.name);
 * ```
 */
export interface Limit {
  /** Name used in messages and in README.md, e.g. `"split factors"`. */
  readonly name: string;
  /** The bound (inclusive). */
  readonly value: number;
  /** How the value is written: a count, or bytes (printed in MiB). */
  readonly unit: "count" | "bytes";
}

const MiB = 1024 * 1024;

/**
 * Largest value of a C `int`: every integer a trace holds fits one.
 *
 * @example
 * ```ts
 * import { C_INT_MAX } from "./limits.ts";
 * if (C_INT_MAX !== 2147483647) throw new Error();
 * ```
 */
export const C_INT_MAX = 2 ** 31 - 1;

/**
 * Every limit, by key; the values are the defaults.
 *
 * @example
 * ```ts
 * import { formatLimit, LIMITS } from "./limits.ts";
 * for (const l of Object.values(LIMITS)) console.log(`${l.name}: ${formatLimit(l)}`);
 * ```
 */
export const LIMITS = {
  /** Instructions of one trace. */
  traceInsts: { name: "instructions per trace", value: 1000, unit: "count" },
  /** Factors of one split (and the `n` of one `sample_perfect_tile`). */
  splitFactors: { name: "split factors", value: 16, unit: "count" },
  /**
   * A split factor is at most the extent of the loop it splits, or this much
   * on a shorter loop (a fixed register or thread tile: the default spaces use
   * up to 1,000 on loops of extent 1).
   */
  splitFactorSlack: { name: "split factor", value: 1024, unit: "count" },
  /** Iterations of the loops one split makes (and the extent of a fused loop): a C int. */
  loopIterations: { name: "loop iterations", value: C_INT_MAX, unit: "count" },
  /** Characters of a loop's name (a fuse names its loop after the loops fused). */
  loopName: { name: "loop name length", value: 256, unit: "count" },
  /** Loops one split leaves in its stage. */
  loopsPerStage: { name: "loops per stage", value: 64, unit: "count" },
  /**
   * Loops a trace's splits and fuses make, summed (each split of n factors
   * makes n - 1, each fuse of n loops n - 1): bounds how deep lowering's
   * index expressions nest.
   */
  traceLoopRelations: { name: "split and fuse loops per trace", value: 256, unit: "count" },
  /** Bytes of a `--trace` file, as stored and as inflated. */
  traceFileBytes: { name: "trace file size", value: 16 * MiB, unit: "bytes" },
  /** Bytes of a Kernel Tuner cache or space file as stored. */
  cacheFileBytes: { name: "cache file size", value: 64 * MiB, unit: "bytes" },
  /** Bytes a gzip-compressed cache inflates to (streamed; reading stops at the cap). */
  inflatedBytes: { name: "inflated size", value: 256 * MiB, unit: "bytes" },
  /** Points of a replayed space (its Cartesian size; a table of 4 bytes per point). */
  replayPoints: { name: "replayed space points", value: 2 ** 26, unit: "count" },
  /** `compare --seeds`. */
  seeds: { name: "seeds", value: 1000, unit: "count" },
  /**
   * How deep a Kernel Tuner restriction nests (parentheses, lists, calls,
   * unary operators, and the operations of a chain such as `a + b + c`):
   * bounds the parser's and the evaluator's recursion.
   */
  expressionDepth: { name: "expression nesting depth", value: 200, unit: "count" },
  /** Items of one list an expression makes (`range`, a comprehension, `+` of lists). */
  expressionItems: { name: "expression list items", value: 100_000, unit: "count" },
  /** Steps of one evaluation of an expression (list items made, iterated or compared). */
  expressionSteps: { name: "expression evaluation steps", value: 1_000_000, unit: "count" },
} as const satisfies Record<string, Limit>;

/**
 * A value past a limit of {@link LIMITS}; the CLI reports it as bad input (exit 2).
 *
 * @example
 * ```ts
 * import { LimitError, LIMITS, limitMessage } from "./limits.ts";
 * const e = new LimitError(limitMessage("5000 seeds", LIMITS.seeds), LIMITS.seeds);
 * if (!(e instanceof RangeError) || e.limit !== LIMITS.seeds) throw new Error();
 * ```
 */
export class LimitError extends RangeError {
  /** The limit exceeded. */
  readonly limit: Limit;
  /** Creates the error; prefer {@link limitMessage} for the wording. */
  constructor(message: string, limit: Limit) {
    super(message);
    this.name = "LimitError";
    this.limit = limit;
  }
}

/**
 * A limit's value as written in messages: `16`, `1,000` or `16 MiB`.
 *
 * @example
 * ```ts
 * import { formatLimit, LIMITS } from "./limits.ts";
 * if (formatLimit(LIMITS.traceFileBytes) !== "16 MiB") throw new Error();
 * if (formatLimit(LIMITS.traceInsts) !== "1,000") throw new Error();
 * ```
 */
export function formatLimit(limit: Limit): string {
  return limit.unit === "bytes" ? formatBytes(limit.value) : limit.value.toLocaleString("en-US");
}

/**
 * Bytes as MiB or GiB with one decimal when needed, e.g. `16 MiB`, `51.2 GiB`.
 *
 * @example
 * ```ts
 * import { formatBytes } from "./limits.ts";
 * if (formatBytes(1.5 * 2 ** 30) !== "1.5 GiB") throw new Error();
 * ```
 */
export function formatBytes(bytes: number): string {
  const gib = bytes / (1024 * MiB);
  if (gib >= 1) return `${Number(gib.toFixed(1))} GiB`;
  return `${Number((bytes / MiB).toFixed(1))} MiB`;
}

/**
 * The message for `what` going past `limit`: `${what}, over the limit
 * "${name}" of ${value}`.
 *
 * @example
 * ```ts
 * import { LIMITS, limitMessage } from "./limits.ts";
 * const m = limitMessage("the trace file holds 2 MiB", LIMITS.traceFileBytes);
 * if (!m.endsWith('over the limit "trace file size" of 16 MiB')) throw new Error(m);
 * ```
 */
export function limitMessage(what: string, limit: Limit): string {
  return `${what}, over the limit "${limit.name}" of ${formatLimit(limit)}`;
}

/**
 * Whether an error message says that a limit was passed (the wording of
 * {@link limitMessage}): a schedule primitive refused by a limit throws a
 * `ScheduleError` with such a message.
 *
 * @example
 * ```ts
 * import { LIMITS, limitMessage, mentionsLimit } from "./limits.ts";
 * if (!mentionsLimit(limitMessage("17 factors", LIMITS.splitFactors))) throw new Error();
 * ```
 */
export function mentionsLimit(message: string): boolean {
  return message.includes(', over the limit "');
}

/**
 * Why a split of a loop of `extent` by `factors` goes past a limit, or
 * undefined when it does not: at most {@link LIMITS}.splitFactors factors,
 * each at most the extent (or {@link LIMITS}.splitFactorSlack on a shorter
 * loop), the loops it makes iterating at most {@link LIMITS}.loopIterations
 * times, and the stage keeping at most {@link LIMITS}.loopsPerStage loops.
 * Factors that are not positive integers are left to the caller.
 *
 * @param factors the split's factors, outermost first; one may be null (inferred)
 * @param extent extent of the loop split
 * @param leaves loops of the stage before the split
 * @example
 * ```ts
 * import { splitLimitReason } from "./limits.ts";
 * if (splitLimitReason([null, 16], 7, 2) !== undefined) throw new Error(); // a tile on a short loop
 * if (splitLimitReason([null, 2000], 512, 2) === undefined) throw new Error();
 * ```
 */
export function splitLimitReason(
  factors: readonly (number | null | unknown)[],
  extent: number,
  leaves: number,
): string | undefined {
  const L = LIMITS;
  if (factors.length > L.splitFactors.value) {
    return limitMessage(`${factors.length} factors`, L.splitFactors);
  }
  const most = Math.max(extent, L.splitFactorSlack.value);
  const known = factors.filter((f): f is number => typeof f === "number");
  const big = known.find((f) => f > most);
  if (big !== undefined) {
    return `factor ${big} is above the loop's extent ${extent}, over the limit "${L.splitFactorSlack.name}" of max(extent, ${
      formatLimit(L.splitFactorSlack)
    })`;
  }
  const product = known.reduce((p, f) => p * f, 1);
  const iterations = factors.includes(null) ? Math.ceil(extent / product) * product : product;
  if (iterations > L.loopIterations.value) {
    return limitMessage(`its loops would iterate ${iterations} times`, L.loopIterations);
  }
  if (leaves - 1 + factors.length > L.loopsPerStage.value) {
    return limitMessage(
      `the stage would have ${leaves - 1 + factors.length} loops`,
      L.loopsPerStage,
    );
  }
  return undefined;
}

/**
 * Bytes a measurement of the workload holds in float32 buffers: the
 * reference's inputs and outputs, a pristine copy of the inputs, and the
 * candidate's inputs and outputs (3 x inputs + 2 x outputs).
 *
 * @example
 * ```ts
 * import { workloadBytes } from "./limits.ts";
 * import { matmul } from "./workloads.ts";
 * if (workloadBytes(matmul(4, 4, 4)) !== 4 * (3 * 32 + 2 * 16)) throw new Error();
 * ```
 */
export function workloadBytes(w: Workload): number {
  const elements = (ts: { size: number }[]) => ts.reduce((n, t) => n + t.size, 0);
  return 4 * (3 * elements(w.inputs) + 2 * elements(w.outputs));
}

/**
 * Bytes of memory available: `TUNEBOOK_MEM_AVAILABLE` (bytes; for a
 * container whose memory limit is below the host's) when set, else
 * `MemAvailable` of `/proc/meminfo`; undefined when neither can be read.
 *
 * @example
 * ```ts
 * import { formatBytes, memAvailableBytes } from "./limits.ts";
 * const m = memAvailableBytes();
 * console.log(m === undefined ? "unknown" : formatBytes(m));
 * ```
 */
export function memAvailableBytes(): number | undefined {
  try {
    const env = Deno.env.get("TUNEBOOK_MEM_AVAILABLE");
    if (env !== undefined && /^\d+$/.test(env.trim())) return Number(env);
  } catch { /* no --allow-env: fall back to /proc */ }
  try {
    const m = /^MemAvailable:\s+(\d+) kB/m.exec(Deno.readTextFileSync("/proc/meminfo"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Refuses a workload whose buffers ({@link workloadBytes}) exceed the memory
 * available, with the estimate in the message.
 *
 * @param w the workload
 * @param available bytes available (default {@link memAvailableBytes}; unknown: no check)
 * @throws {LimitError} naming the estimate and the memory available
 * @example
 * ```ts
 * import { checkWorkloadMemory } from "./limits.ts";
 * import { matmul } from "./workloads.ts";
 * checkWorkloadMemory(matmul(64, 64, 64), 2 ** 30);
 * try {
 *   checkWorkloadMemory(matmul(4096, 4096, 4096), 2 ** 20);
 *   throw new Error("not refused");
 * } catch (e) {
 *   if (!(e as Error).message.includes("MemAvailable")) throw e;
 * }
 * ```
 */
export function checkWorkloadMemory(w: Workload, available = memAvailableBytes()): void {
  if (available === undefined) return;
  const need = workloadBytes(w);
  if (need > available) {
    throw new LimitError(
      `${w.name} ${w.shape.join(",")} needs about ${
        formatBytes(need)
      } of buffers (3 x inputs + 2 x outputs, float32), more than the ${
        formatBytes(available)
      } available (MemAvailable)`,
      { name: "memory", value: available, unit: "bytes" },
    );
  }
}
