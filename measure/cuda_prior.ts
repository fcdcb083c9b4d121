/**
 * Identical CUDA measured once per run, across `--resume`: the CUDA runner
 * copies the result of a program it measured before (same artifact), but
 * only within one process. A resumed run starts a new process, so the
 * session looks the programs up among the run's records instead: it
 * regenerates the CUDA source of every recorded candidate with a final,
 * measured result ({@link priorCudaResults}, keyed by the SHA-256 of the
 * source the builder is given), and {@link withPriorResults} answers a
 * candidate whose source is one of them from that record, without running
 * it, with a message naming the trial it repeats.
 *
 * @example
 * ```ts
 * import { REUSABLE_KINDS } from "./cuda_prior.ts";
 * // A wrong answer is reused; a missing device or a lost worker is measured again.
 * console.log(REUSABLE_KINDS.has("wrong_answer"), REUSABLE_KINDS.has("no_device")); // true false
 * ```
 * @module
 */
import type { ErrorKind } from "../ir/error_kind.ts";
import type { Trace } from "../ir/trace.ts";
import { sha256Hex } from "./builder.ts";
import type { KernelSource } from "./kernel_source.ts";
import type { Runner } from "./runner.ts";
import type { BuildInput, BuildResult, RunResult } from "./types.ts";

/** A result of this run recorded before it was resumed. */
export interface PriorResult {
  /** Its trial number in the run. */
  trial: number;
  result: RunResult;
}

/**
 * Result kinds measuring the same program again would repeat: a time, a
 * wrong answer, a crash, an error, a timeout. Not `no_device` (a resumed run
 * may have a GPU), `unknown` (the reference failed) or the transient kinds.
 */
export const REUSABLE_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  "none",
  "wrong_answer",
  "runtime_crash",
  "runtime_error",
  "run_timeout",
]);

/** A recorded candidate as the records store returns it (the fields used here). */
export interface RecordedCandidate {
  trial: number;
  /** Trace JSON. */
  trace: string;
  result: {
    errorKind: ErrorKind;
    error: string | null;
    times: number[];
    runSeconds: number;
  } | null;
}

/**
 * The run's reusable results by SHA-256 of their CUDA source, generated again
 * with `source` (the session's code generator) from each recorded trace. A
 * trace that no longer generates code is left out; on two candidates with
 * the same source the first trial wins.
 */
export async function priorCudaResults(
  candidates: readonly RecordedCandidate[],
  source: (trace: Trace) => KernelSource,
): Promise<Map<string, PriorResult>> {
  const out = new Map<string, PriorResult>();
  const sorted = [...candidates].sort((a, b) => a.trial - b.trial);
  for (const c of sorted) {
    if (!c.result || !REUSABLE_KINDS.has(c.result.errorKind)) continue;
    let k: KernelSource;
    try {
      k = source(JSON.parse(c.trace) as Trace);
    } catch {
      continue;
    }
    if (!("source" in k)) continue;
    const key = await sha256Hex(k.source);
    if (out.has(key)) continue;
    const { errorKind, error, times, runSeconds } = c.result;
    out.set(key, {
      trial: c.trial,
      result: { errorKind, ...(error !== null ? { error } : {}), times, runSeconds },
    });
  }
  return out;
}

/** A builder as {@link withPriorResults} needs it. */
export interface SourceBuilder {
  build(
    inputs: BuildInput[],
    onDone?: (index: number, r: BuildResult) => void,
  ): Promise<BuildResult[]>;
}

/**
 * Wraps a builder and a runner so that a program whose source is in `prior`
 * is not run: its result is the recorded one, with `runSeconds` 0 and a
 * message `same CUDA program as trial N of this run (measured before it was
 * resumed): its result, not measured again`. Other programs go to `runner`.
 */
export function withPriorResults<B extends SourceBuilder, R extends Runner>(
  builder: B,
  runner: R,
  prior: ReadonlyMap<string, PriorResult>,
): { builder: B; runner: R } {
  if (prior.size === 0) return { builder, runner };
  /** Artifact -> the prior result of its source. */
  const known = new Map<string, PriorResult>();
  const wrappedBuilder = Object.assign(Object.create(builder), {
    async build(inputs: BuildInput[], onDone?: (index: number, r: BuildResult) => void) {
      const results = await builder.build(inputs, onDone);
      await Promise.all(results.map(async (r, i) => {
        if (!r.artifact) return;
        const p = prior.get(await sha256Hex(inputs[i].source));
        if (p) known.set(r.artifact, p);
      }));
      return results;
    },
  }) as B;
  const wrappedRunner = Object.assign(Object.create(runner), {
    async run(...[inputs, onResult]: Parameters<Runner["run"]>) {
      const out: RunResult[] = new Array(inputs.length);
      const fresh: number[] = [];
      inputs.forEach((input, i) => {
        const p = known.get(input.artifact);
        if (!p) return fresh.push(i);
        const note = `same CUDA program as trial ${p.trial} of this run (measured before it ` +
          `was resumed): its result, not measured again`;
        const r = p.result;
        out[i] = {
          ...r,
          error: r.error ? `${note}; ${r.error}` : note,
          times: [...r.times],
          runSeconds: 0,
        };
        onResult?.(i, out[i]);
      });
      if (fresh.length > 0) {
        const rs = await runner.run(fresh.map((i) => inputs[i]), (j, r) => onResult?.(fresh[j], r));
        rs.forEach((r, j) => out[fresh[j]] = r);
      }
      return out;
    },
  }) as R;
  return { builder: wrappedBuilder, runner: wrappedRunner };
}
