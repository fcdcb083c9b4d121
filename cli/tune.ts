/**
 * `deno task tune`: tune one workload and print one line of JSON.
 *
 * Exit status: 0 done (`--help` included, printed on stdout); 2 bad
 * arguments, unreadable trace file, unusable database or a `--resume` flag
 * that contradicts the stored run (nothing is built); 3 target cuda without a
 * CUDA driver or device (every candidate was built with nvcc, its resources
 * printed, and recorded as `no_device`); 130 / 143 stopped by SIGINT /
 * SIGTERM or by the death of the parent process (the task runner): the run
 * stays resumable and the command that resumes it is printed; 1 an
 * unexpected error. With `--queue`, 2 also for a bad URL, no worker
 * announced, or Redis lost mid-run (the run stays resumable).
 * @module
 */
import { DatabaseError } from "../datasets/db.ts";
import { laneOverride, LanesError } from "../ir/target_cpu.ts";
import { DatabaseLostError } from "../datasets/postgres_url.ts";
import { mediaError } from "../datasets/io_errors.ts";
import { KernelTunerError } from "../datasets/kerneltuner.ts";
import { ScheduleError, TraceError } from "../ir/errors.ts";
import { parseTrace, replayTrace, type Trace } from "../ir/trace.ts";
import { checkWorkloadMemory, LIMITS, mentionsLimit } from "../ir/limits.ts";
import { createPrng } from "../ir/prng.ts";
import { readBoundedText } from "../datasets/read_bounded.ts";
import {
  HelpRequest,
  oneLine,
  parseTuneArgs,
  permissionDenied,
  type TuneArgs,
  UsageError,
} from "./args.ts";
import { resumeCommand, watchRuns } from "./stop.ts";
import { createWorkload } from "../ir/workloads.ts";
import { stderrProgress } from "../tuner/progress.ts";
import { strategyProblem } from "../tuner/tune_strategy.ts";
import {
  NoWorkerError,
  parseQueueUrl,
  QueueLostError,
  QueueStoppedError,
  QueueUrlError,
} from "../remote/connection.ts";
import type { RemoteMeasurerModule } from "../remote/remote_types.ts";
import {
  NothingToResumeError,
  ResumeConflictError,
  runSession,
  type SessionOptions,
  type Summary,
} from "../tuner/session.ts";

/**
 * Reads a trace file: one trace, or a JSON list of traces, within the limit
 * "trace file size" (as stored and, gzip-compressed, as inflated); its
 * workload's buffers must fit in the memory available.
 */
export async function readTraceFile(path: string): Promise<Trace[]> {
  let text: string;
  try {
    text = await readBoundedText(path, {
      maxBytes: LIMITS.traceFileBytes,
      maxInflatedBytes: LIMITS.traceFileBytes,
    });
  } catch (e) {
    throw new UsageError(`Cannot read trace file "${path}": ${(e as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new TraceError(`Trace file "${path}" is not valid JSON: ${(e as Error).message}`);
  }
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw new TraceError(`Trace file "${path}" holds no trace`);
  const traces = list.map((t, i) => {
    try {
      return parseTrace(t);
    } catch (e) {
      throw new TraceError(`Trace file "${path}", trace ${i}: ${(e as Error).message}`);
    }
  });
  try {
    checkWorkloadMemory(createWorkload(traces[0].workload.name, traces[0].workload.shape));
  } catch (e) {
    throw new UsageError(`Trace file "${path}": ${(e as Error).message}`);
  }
  traces.forEach((t, i) => {
    // A primitive refused by a limit (a split factor above its loop's extent) is bad input;
    // any other failure to apply is an instantiation_error record.
    try {
      replayTrace(t, { prng: createPrng(0) });
    } catch (e) {
      if (e instanceof ScheduleError && mentionsLimit(e.message)) {
        throw new TraceError(`Trace file "${path}", trace ${i}: ${e.message}`);
      }
    }
  });
  return traces;
}

/** The options `--resume` passes on: only those given on the command line, checked against the run. */
function resumeOptions(args: TuneArgs): Partial<SessionOptions> {
  const given = new Set(args.given);
  const timing: Partial<SessionOptions["timing"]> = {
    ...(given.has("number") ? { number: args.number } : {}),
    ...(given.has("repeat") ? { repeat: args.repeat } : {}),
    ...(given.has("min-repeat-ms") ? { minRepeatMs: args.minRepeatMs } : {}),
  };
  return {
    ...(args.workload !== undefined || args.shape !== undefined
      ? { workload: { name: args.workload ?? "", shape: args.shape ?? [] } }
      : {}),
    ...(given.has("space") ? { space: args.space } : {}),
    ...(given.has("strategy") ? { strategy: args.strategy } : {}),
    ...(given.has("template") ? { template: args.template } : {}),
    ...(given.has("seed") ? { seed: args.seed } : {}),
    ...(given.has("trials") ? { trials: args.trials } : {}),
    ...(given.has("target") ? { target: args.target } : {}),
    ...(given.has("batch") ? { batch: args.batch } : {}),
    ...(given.has("overlap") ? { overlap: args.overlap } : {}),
    ...(given.has("unity") ? { unity: args.unity } : {}),
    ...(given.has("race") ? { race: args.race } : {}),
    ...(given.has("timeout") ? { timeoutSeconds: args.timeout } : {}),
    ...(given.has("flush-l2") ? { flushL2: args.flushL2 } : {}),
    ...(args.math !== undefined ? { math: args.math } : {}),
    ...(given.has("no-configs") ? { configs: args.configs } : {}),
    ...(args.finalists !== undefined ? { finalists: args.finalists } : {}),
    ...(args.finalistRounds !== undefined ? { finalistRounds: args.finalistRounds } : {}),
    ...(args.finalistMinRepeatMs !== undefined
      ? { finalistTiming: { minRepeatMs: args.finalistMinRepeatMs } }
      : {}),
    ...(args.remeasureMargin !== undefined ? { remeasureMargin: args.remeasureMargin } : {}),
    ...(Object.keys(timing).length ? { timing } : {}),
  };
}

/** Runs the command; returns the exit status. */
export async function main(argv: string[]): Promise<number> {
  let stop: ReturnType<typeof watchRuns> | undefined;
  let runId: number | undefined;
  try {
    const args = parseTuneArgs(argv);
    laneOverride(); // a bad TUNEBOOK_LANES is refused before anything runs
    const traces = args.trace ? await readTraceFile(args.trace) : undefined;
    if (traces && args.workload) {
      const t = traces[0].workload;
      if (t.name !== args.workload || t.shape.join(",") !== args.shape?.join(",")) {
        throw new UsageError(
          `--trace holds ${t.name} ${t.shape.join(",")}, not --workload ${args.workload} ${
            args.shape?.join(",")
          }`,
        );
      }
    }
    if (traces && new Set(traces.map((t) => JSON.stringify(t.workload))).size > 1) {
      throw new TraceError(`Trace file "${args.trace}" mixes workloads`);
    }
    if (!args.resume && args.space !== undefined) {
      const problem = strategyProblem({
        strategy: args.strategy,
        replay: true,
        target: "replay",
      });
      if (problem) throw new UsageError(problem);
    }
    if (!args.resume && !traces && args.workload && args.shape) {
      // A strategy, template or target that cannot go together is refused before anything is built.
      const problem = strategyProblem({
        strategy: args.strategy,
        workload: createWorkload(args.workload, args.shape),
        target: args.target,
        template: args.template,
        ...(args.math !== undefined ? { math: args.math } : {}),
      });
      if (problem) throw new UsageError(problem);
    }
    if (args.queue !== undefined) parseQueueUrl(args.queue);
    const progress = args.quiet ? undefined : stderrProgress();
    stop = watchRuns("tune", args.db, () => progress?.done());
    const queue = args.queue;
    const common: Partial<SessionOptions> & { db: string } = {
      db: args.db,
      signal: stop.signal,
      onStart: (id) => {
        runId = id;
        stop?.onStart(id);
      },
      onProgress: progress?.update,
      onBuilt: args.quiet ? undefined : (line: string) => {
        progress?.done();
        console.error(line);
      },
      ...(queue !== undefined
        ? {
          measurer: async (c) => {
            const { createRemoteMeasurer } = await loadRemoteMeasurer();
            const m = await createRemoteMeasurer({
              url: queue,
              target: c.target,
              signal: stop?.signal,
              ...(args.machine ? { machine: args.machine } : {}),
              // Seconds Redis may be unreachable mid-run before the run stops (default 10).
              ...(Number(Deno.env.get("TUNEBOOK_QUEUE_GRACE")) > 0
                ? { graceSeconds: Number(Deno.env.get("TUNEBOOK_QUEUE_GRACE")) }
                : {}),
              options: {
                timing: c.timing,
                timeoutSeconds: c.timeoutSeconds,
                inputSeed: c.inputSeed,
              },
              onWaiting: (line) => {
                progress?.done();
                console.error(`tune: ${line}`);
              },
            });
            const { key, queue: _, lastSeen: __, host: ___, pid: ____, compiler, ...machine } =
              m.machine;
            return { measurer: m, machine: { ...machine, machineKey: key, queue }, compiler };
          },
        }
        : {}),
    };
    const summary = args.resume
      ? await runSession({ ...common, resume: true, runId: args.run, ...resumeOptions(args) })
      : await runSession({
        ...common,
        workload: args.workload && args.shape
          ? { name: args.workload, shape: args.shape }
          : undefined,
        ...(args.space !== undefined ? { space: args.space } : {}),
        strategy: args.strategy,
        template: args.template,
        seed: args.seed,
        trials: traces ? Math.min(args.trials ?? traces.length, traces.length) : args.trials,
        traces,
        target: args.target,
        batch: args.batch,
        overlap: args.overlap || undefined,
        unity: args.unity,
        ...(args.race !== undefined ? { race: args.race } : {}),
        timeoutSeconds: args.timeout,
        // --min-repeat-ms only when given: the session's default depends on the target.
        timing: {
          number: args.number,
          repeat: args.repeat,
          ...(args.given.includes("min-repeat-ms") ? { minRepeatMs: args.minRepeatMs } : {}),
        },
        ...(args.flushL2 ? { flushL2: true } : {}),
        ...(args.math !== undefined ? { math: args.math } : {}),
        ...(args.configs ? {} : { configs: false }),
        ...(args.finalists !== undefined ? { finalists: args.finalists } : {}),
        ...(args.finalistRounds !== undefined ? { finalistRounds: args.finalistRounds } : {}),
        ...(args.finalistMinRepeatMs !== undefined
          ? { finalistTiming: { minRepeatMs: args.finalistMinRepeatMs } }
          : {}),
        ...(args.remeasureMargin ? { remeasureMargin: args.remeasureMargin } : {}),
      });
    progress?.done();
    const { bestTrace: _, run_id: __, noDevice, interrupted, ...line } = summary;
    console.log(JSON.stringify(line));
    if (summary.ranking?.warning) console.error(`tune: ${summary.ranking.warning}`);
    if (!args.quiet && line.finalists && line.confirmed_gflops != null) {
      console.error(`tune: ${confirmedLine(line)}`);
    }
    if (stop.stopped({ ...summary, interrupted })) return stop.exitCode();
    if (noDevice) {
      console.error(
        `tune: ${noDevice}. Built and checked ${summary.trials} candidates with nvcc; none could run (recorded as no_device in ${summary.db}).`,
      );
      return 3;
    }
    return 0;
  } catch (e) {
    if (e instanceof HelpRequest) {
      console.log(e.message);
      return 0;
    }
    if (e instanceof QueueStoppedError && stop && runId !== undefined) {
      // The first Ctrl-C while jobs wait on the queue: stopped at once, nothing lost.
      console.error(
        `tune: run ${runId} stopped (${stop.reason()}) with jobs still on the queue; every ` +
          `finished record is kept; resume with: ${
            resumeCommand(parseTuneArgsQuiet(argv)?.db ?? "runs.db", runId)
          } --queue URL`,
      );
      return stop.exitCode();
    }
    if (e instanceof DatabaseLostError) {
      const db = parseTuneArgsQuiet(argv)?.db ?? "URL";
      const queue = parseTuneArgsQuiet(argv)?.queue !== undefined ? " --queue URL" : "";
      console.error(
        `tune: ${oneLine(e.message)}; every committed record is kept; ${
          runId !== undefined
            ? `once it is back, resume with: ${resumeCommand(db, runId)}${queue}`
            : "nothing was started"
        }`,
      );
      return 2;
    }
    if (e instanceof QueueLostError) {
      console.error(
        `tune: ${oneLine(e.message)}; the run is resumable: deno task tune --db ${
          parseTuneArgsQuiet(argv)?.db ?? "runs.db"
        } --resume --queue URL`,
      );
      return 2;
    }
    if (e instanceof KernelTunerError) {
      console.error(`tune: --space: ${oneLine(e.message)}`);
      return 2;
    }
    if (
      e instanceof UsageError || e instanceof TraceError || e instanceof DatabaseError ||
      e instanceof NothingToResumeError || e instanceof ResumeConflictError ||
      e instanceof QueueUrlError || e instanceof NoWorkerError || e instanceof LanesError
    ) {
      console.error(`tune: ${oneLine(e.message)}`);
      return 2;
    }
    const media = mediaError(e) ?? permissionDenied(e); // the path and the cause
    if (media) {
      console.error(`tune: ${oneLine(media)}`);
      return 2;
    }
    throw e;
  } finally {
    stop?.dispose();
  }
}

/**
 * Loads the remote measurer (and npm `bullmq`) only with `--queue`, through a
 * specifier the module graph does not follow: the offline bundle of `tune`
 * (scripts/bundle.sh) carries no queue client.
 */
async function loadRemoteMeasurer(): Promise<RemoteMeasurerModule> {
  const specifier = ["..", "remote", "remote_measurer.ts"].join("/");
  return await import(specifier);
}

/**
 * The line `tune` prints on stderr after re-timing finalists.
 *
 * @example
 * ```ts
 * import { confirmedLine } from "./tune.ts";
 * const line = confirmedLine({
 *   confirmed_gflops: 412.34, first_gflops: 431, finalists: { count: 3, rounds: 3, run_id: 2 },
 * });
 * if (line !== "best 412.3 GFLOP/s confirmed over 3 rounds (first 431.0; 3 finalists, run 2)") {
 *   throw new Error(line);
 * }
 * ```
 */
export function confirmedLine(
  s: Pick<Summary, "confirmed_gflops" | "first_gflops" | "finalists">,
): string {
  const f = (x: number | null | undefined) => x == null ? "-" : x.toFixed(1);
  return `best ${f(s.confirmed_gflops)} GFLOP/s confirmed over ${s.finalists?.rounds} rounds ` +
    `(first ${f(s.first_gflops)}; ${s.finalists?.count} finalists, run ${s.finalists?.run_id})`;
}

/** The parsed arguments, or undefined when they do not parse (for messages only). */
function parseTuneArgsQuiet(argv: string[]): TuneArgs | undefined {
  try {
    return parseTuneArgs(argv);
  } catch {
    return undefined;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
