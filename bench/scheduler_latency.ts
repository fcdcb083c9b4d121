/**
 * Task schedulers compared by the network their kernels run, not by the
 * estimate: after `tune-network --scheduler gradient,round-robin` has
 * recorded both sessions in one database, each session's kernels at a
 * checkpoint (each task's best record among the session's first N trials)
 * run the whole network in the executor, every kernel set in turn each
 * round, and the latencies are compared round by round.
 *
 * ```sh
 * deno task tune-network --network resnet18 --trials 2000 --strategy xgb \
 *   --template conv2d-blocked,matmul-packed --layout NCHW16c \
 *   --scheduler gradient,round-robin --finalists 0 --no-execute --db S
 * deno run -A bench/scheduler_latency.ts --db S --network resnet18 --layout NCHW16c
 * ```
 *
 * Why: the estimate (`sum weight x best recorded latency`) is the minimum
 * of noisy measurements, and the minimum of more samples is lower. Round
 * robin spreads its trials evenly, so at the end every task's best is the
 * luckiest of many near-equal kernels; a scheduler that spent fewer trials
 * on a flat task has fewer lucky draws there although its kernel is as
 * fast. Timed together in one run, the two kernel sets show whether the
 * gradient scheduler's kernels after half the trials make the network as
 * fast as round robin's after all of them (the issue's target, measured on
 * the network rather than on the estimate).
 *
 * Beside the network, each task's kernels of every set are timed again
 * alone (the harness the tuner measures with, `--kernel-rounds` rounds, every
 * distinct kernel of a task once per round, as tune-network's finalists):
 * the estimate re-timed, set by set, against the estimate as recorded shows
 * how much of the recorded figure is the luck of the minimum.
 *
 * By default each session is checkpointed at half and all of the round
 * robin session's trials (`--at 0.5,1`); the last line is JSON with every
 * figure. Each kernel set's output is checked against the reference.
 * @module
 */
import { nonNegativeInt, parseFlags, positiveInt, runCommand, UsageError } from "../cli/args.ts";
import { type CandidateRow, RecordsDB } from "../datasets/db.ts";
import { parseTrace, type Trace } from "../ir/trace.ts";
import { createExecutor } from "../network/executor.ts";
import { measureEndToEnd } from "../network/end_to_end.ts";
import { layoutName, parseLayout } from "../network/layout.ts";
import { loadNetwork } from "../network/load.ts";
import { sizeOf } from "../network/network.ts";
import { extractTasks, taskKey } from "../network/tasks.ts";
import { randomWeights } from "../network/weights.ts";
import { fillUniform } from "../measure/prng.ts";
import { FINALISTS_STRATEGY, retimeFinalists } from "../tuner/finalists.ts";
import { median } from "../ir/stats.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import { createBuilder } from "../measure/builder.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import { createRunner } from "../measure/runner.ts";

/** One `tune-network` session in a records database. */
export interface RecordedSession {
  /** Its task scheduler (`gradient`, `round-robin`). */
  scheduler: string;
  /** The strategy its tasks were tuned with (the run's strategy name). */
  strategy: string;
  /** Its runs, one per task, in the order the tasks were first tuned. */
  runIds: number[];
  /** Trials it measured, all tasks together. */
  trials: number;
}

interface NetworkConfig {
  network?: { task?: number; scheduler?: string };
}

/**
 * The `tune-network` sessions of a database, oldest first: runs whose config
 * names a network task, grouped by scheduler; a session has one run per task
 * (started when the task is first tuned), so a run of a task the scheduler's
 * current session already has starts a new session. Re-timed finalists are
 * not sessions' trials.
 *
 * @example
 * ```ts
 * import { type CandidateRow, RecordsDB } from "../datasets/db.ts";
 * import { recordedSessions } from "./scheduler_latency.ts";
 * const db = RecordsDB.open(":memory:", { mode: "create" });
 * if (recordedSessions(db).length !== 0) throw new Error();
 * db.close();
 * ```
 */
export function recordedSessions(db: RecordsDB): RecordedSession[] {
  const sessions: RecordedSession[] = [];
  const open = new Map<string, { session: RecordedSession; tasks: Set<number> }>();
  for (const run of db.runs()) {
    const n = (run.config as NetworkConfig).network;
    if (run.strategy === FINALISTS_STRATEGY || n?.task === undefined) continue;
    const scheduler = n.scheduler ?? "gradient";
    let s = open.get(scheduler);
    if (!s || s.tasks.has(n.task)) {
      s = {
        session: { scheduler, strategy: run.strategy, runIds: [], trials: 0 },
        tasks: new Set(),
      };
      open.set(scheduler, s);
      sessions.push(s.session);
    }
    s.tasks.add(n.task);
    s.session.runIds.push(run.id);
    s.session.trials += db.counts(run.id).measured;
  }
  return sessions;
}

/** Each task's kernel at a checkpoint of a session. */
export interface Checkpoint {
  /** Trials of the session counted (all tasks together, in the order measured). */
  trials: number;
  /** Best record's trace (JSON text, as recorded) by task key (`taskKey`). */
  traces: Map<string, string>;
  /** Best recorded latency by task key, seconds. */
  seconds: Map<string, number>;
}

type Fastest = Map<string, { seconds: number; trace: string }>;

/** Keeps `c` as task `key`'s fastest when it is valid and faster than the one kept. */
function keepFastest(fastest: Fastest, key: string, c: CandidateRow): void {
  const seconds = c.result?.errorKind === "none" ? c.result.seconds : null;
  if (seconds && seconds < (fastest.get(key)?.seconds ?? Infinity)) {
    fastest.set(key, { seconds, trace: c.trace });
  }
}

/**
 * A session's kernels after each of its first `trials[k]` trials: per task,
 * the fastest valid record among them, or, for a task the session had not
 * reached, among the runs recorded before `before` (a warm start's records).
 * The session's trials are its measured candidates in the order they were
 * recorded; the database is read once for all checkpoints.
 *
 * @example
 * ```ts
 * import { type CandidateRow, RecordsDB } from "../datasets/db.ts";
 * import { checkpoints } from "./scheduler_latency.ts";
 * const db = RecordsDB.open(":memory:", { mode: "create" });
 * const [c] = checkpoints(db, { scheduler: "gradient", strategy: "xgb", runIds: [], trials: 0 }, [0]);
 * if (c.traces.size !== 0) throw new Error();
 * db.close();
 * ```
 */
export function checkpoints(
  db: RecordsDB,
  session: RecordedSession,
  trials: readonly number[],
  before = session.runIds[0] ?? 0,
): Checkpoint[] {
  const keyOf = (workloadId: number) => {
    const w = db.workload(workloadId)!;
    return taskKey({ name: w.name, shape: w.shape } as Parameters<typeof taskKey>[0]);
  };
  const earlier: Fastest = new Map();
  for (const run of db.runs()) {
    if (run.id >= before || run.strategy === FINALISTS_STRATEGY) continue;
    const key = keyOf(run.workloadId);
    for (const c of db.candidates(run.id)) keepFastest(earlier, key, c);
  }
  const rows = session.runIds.flatMap((id) => {
    const key = keyOf(db.run(id)!.workloadId);
    return db.candidates(id).filter((c) => c.result).map((c) => ({ key, c }));
  }).sort((a, b) => a.c.id - b.c.id);
  return trials.map((n) => {
    const best: Fastest = new Map();
    const counted = rows.slice(0, n);
    for (const { key, c } of counted) keepFastest(best, key, c);
    for (const [key, e] of earlier) if (!best.has(key)) best.set(key, e);
    return {
      trials: counted.length,
      traces: new Map([...best].map(([k, b]) => [k, b.trace])),
      seconds: new Map([...best].map(([k, b]) => [k, b.seconds])),
    };
  });
}

/**
 * Times every task's kernels of every set again, alone, in `rounds` rounds
 * (each distinct kernel of a task once per round, {@link retimeFinalists}),
 * and sets each set's `retimedMs`: `sum weight x median` over the tasks.
 * Returns each task's medians (ms), set by set.
 */
async function retimeKernels(
  tasks: ReturnType<typeof extractTasks>,
  sets: { label: string; recorded: Map<string, string>; retimedMs?: number }[],
  rounds: number,
): Promise<{ task: string; weight: number; retimedMs: (number | null)[] }[]> {
  const perTask: { task: string; weight: number; retimedMs: (number | null)[] }[] = [];
  const builder = createBuilder({ cacheDir: Deno.env.get("TUNEBOOK_CACHE") });
  const runner = createRunner({ timing: DEFAULTS.tune.finalistTiming, timeoutSeconds: 10 });
  const sums = sets.map(() => 0);
  try {
    for (const [n, t] of tasks.entries()) {
      const key = taskKey(t.workload);
      const traces = [...new Set(sets.flatMap((s) => s.recorded.get(key) ?? []))];
      if (traces.length === 0) {
        sums.fill(NaN);
        continue;
      }
      const measurer = createNativeMeasurer({
        workload: t.workload,
        builder,
        runner,
        closeRunner: false,
      });
      let retimed;
      try {
        retimed = await retimeFinalists(
          traces.map((trace) => ({ trace, seconds: 0 })),
          measurer,
          rounds,
        );
      } finally {
        await measurer.close?.();
      }
      const medians = new Map(retimed.map((r) => [r.trace, r.medianSeconds * 1e3]));
      const ms = sets.map((s) => {
        const trace = s.recorded.get(key);
        return trace === undefined ? NaN : medians.get(trace)!;
      });
      ms.forEach((m, i) => sums[i] += t.weight * m);
      perTask.push({
        task: key,
        weight: t.weight,
        retimedMs: ms.map((m) => Number.isFinite(m) ? +m.toFixed(5) : null),
      });
      console.error(
        `[scheduler_latency] task ${
          n + 1
        }/${tasks.length} ${key}: ${traces.length} kernels timed ${rounds} times`,
      );
    }
  } finally {
    await runner.close();
  }
  sets.forEach((s, i) => s.retimedMs = sums[i]);
  return perTask;
}

const USAGE = `usage: deno run -A bench/scheduler_latency.ts --db FILE [options]
  --db FILE          a tune-network database holding a gradient and a round-robin session
  --network NAME     the network they tuned: resnet18|mobilenet_v2|squeezenet1_1|FILE.json|FILE.onnx (default resnet18)
  --layout L         NCHW or NCHW16c, as tuned (default NCHW)
  --at F[,F]         checkpoints, as fractions of the round robin session's trials (default 0.5,1)
  --rounds N         rounds; each times every kernel set once (default 10)
  --repeat N         forward passes per set and round, their median taken (default 5)
  --kernel-rounds N  rounds of each task's kernels timed alone; 0: not timed (default 5)
  --threads N        OMP_NUM_THREADS (default 2)`;

/** The command: a bad flag or a database without both sessions is a UsageError (exit 2). */
async function schedulerLatencyCommand(argv: string[]): Promise<void> {
  const v = parseFlags(argv, {
    db: { type: "string" },
    network: { type: "string", default: "resnet18" },
    layout: { type: "string", default: "NCHW" },
    at: { type: "string", default: "0.5,1" },
    rounds: { type: "string", default: "10" },
    repeat: { type: "string", default: "5" },
    threads: { type: "string", default: "2" },
    "kernel-rounds": { type: "string", default: "5" },
  }, USAGE);
  const rounds = positiveInt("rounds", v.rounds, 10), repeat = positiveInt("repeat", v.repeat, 5);
  const threads = positiveInt("threads", v.threads, 2);
  const kernelRounds = nonNegativeInt("kernel-rounds", v["kernel-rounds"], 5);
  const at = v.at!.split(",").map((s) => {
    const f = Number(s);
    if (!(f > 0 && f <= 1)) throw new UsageError(`--at takes fractions in (0, 1], got "${s}"`);
    return f;
  });
  if (!v.db) throw new UsageError("Missing --db FILE (a tune-network database)");
  let block: number;
  try {
    block = parseLayout(v.layout!);
  } catch (e) {
    throw new UsageError(`--layout: ${(e as Error).message}`);
  }
  Deno.env.set("OMP_NUM_THREADS", String(threads));
  const { network: net, weights: given } = await loadNetwork(v.network!, { size: 224 });
  const weights = given ?? randomWeights(net, 1);
  const db = RecordsDB.open(v.db, { mode: "read" });
  const sets: {
    label: string;
    scheduler: string;
    trials: number;
    traces: Map<string, Trace>;
    /** The recorded traces (JSON text) by task key. */
    recorded: Map<string, string>;
    estimateMs: number;
    retimedMs?: number;
  }[] = [];
  const tasks = extractTasks(net, block);
  try {
    const sessions = recordedSessions(db);
    const last = (s: string) => sessions.findLast((x) => x.scheduler === s);
    const rr = last("round-robin"), grad = last("gradient");
    if (!rr || !grad) {
      throw new UsageError(
        `${v.db} must hold a gradient and a round-robin session of tune-network (found: ${
          sessions.map((s) => s.scheduler).join(", ") || "none"
        })`,
      );
    }
    const before = Math.min(rr.runIds[0], grad.runIds[0]);
    for (const s of [rr, grad]) {
      for (const c of checkpoints(db, s, at.map((f) => Math.round(f * rr.trials)), before)) {
        const missing = tasks.filter((t) => !c.seconds.has(taskKey(t.workload)));
        if (missing.length === tasks.length) {
          throw new UsageError(
            `${v.db}: the ${s.scheduler} session tuned no task of ${net.name} (${
              layoutName(block)
            }); is --network or --layout not the one tuned?`,
          );
        }
        const estimateMs = tasks.reduce(
          (a, t) => a + t.weight * (c.seconds.get(taskKey(t.workload)) ?? NaN) * 1e3,
          0,
        );
        sets.push({
          label: `${s.scheduler} at ${c.trials}`,
          scheduler: s.scheduler,
          trials: c.trials,
          traces: new Map([...c.traces].map(([k, t]) => [k, parseTrace(JSON.parse(t))])),
          recorded: c.traces,
          estimateMs,
        });
      }
    }
  } finally {
    db.close();
  }
  console.log(
    `scheduler_latency: ${net.name}, ${layoutName(block)}, ${threads} threads; ${
      sets.map((s) => s.label).join(", ")
    }; ${rounds} rounds of ${repeat} passes; load average ${
      Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
    }`,
  );
  const input = new Float32Array(sizeOf(net.input.shape));
  fillUniform(1, [input]);
  const checks: boolean[] = [];
  for (const s of sets) {
    const e = await measureEndToEnd(net, weights, {
      traces: s.traces,
      check: true,
      repeat: 1,
      block,
    });
    checks.push(e.matchesReference === true);
    console.error(
      `[scheduler_latency] ${s.label}: output matches the reference: ${e.matchesReference}`,
    );
  }
  const perTask = kernelRounds > 0 ? await retimeKernels(tasks, sets, kernelRounds) : [];
  const executors = [];
  for (const s of sets) {
    const ex = await createExecutor(net, weights, { traces: s.traces, block });
    ex.run(input);
    executors.push(ex);
  }
  const times: number[][] = sets.map(() => []);
  try {
    for (let r = 0; r < rounds; r++) {
      // Each round starts with the next set, so no set always runs first.
      for (let k = 0; k < sets.length; k++) {
        const i = (k + r) % sets.length;
        times[i].push(executors[i].latency({ repeat, warmup: 1 }).medianMs);
      }
      console.error(
        `[scheduler_latency] round ${r + 1}/${rounds}: ${
          sets.map((s, i) => `${s.label} ${times[i].at(-1)!.toFixed(3)} ms`).join(", ")
        }`,
      );
    }
  } finally {
    for (const ex of executors) ex.close();
  }
  // The round robin session's kernels after all its trials.
  const rrTrials = Math.max(
    ...sets.filter((x) => x.scheduler === "round-robin").map((x) => x.trials),
  );
  const reference = sets.findIndex((s) => s.scheduler === "round-robin" && s.trials === rrTrials);
  const rows = sets.map((s, i) => {
    const ratios = times[i].map((t, r) => t / times[reference][r]);
    return {
      kernels: s.label,
      scheduler: s.scheduler,
      trials: s.trials,
      estimateMs: +s.estimateMs.toFixed(4),
      ...(s.retimedMs !== undefined ? { retimedEstimateMs: +s.retimedMs.toFixed(4) } : {}),
      latencyMs: +median(times[i]).toFixed(4),
      bestMs: +Math.min(...times[i]).toFixed(4),
      overReference: {
        median: +median(ratios).toFixed(4),
        min: +Math.min(...ratios).toFixed(4),
        max: +Math.max(...ratios).toFixed(4),
      },
      matchesReference: checks[i],
    };
  });
  console.log(
    `| kernels | estimate as recorded (ms) | estimate, kernels re-timed (ms) | network, median of rounds (ms) | / ${
      sets[reference].label
    }, round by round: median (range) |`,
  );
  console.log("| --- | --- | --- | --- | --- |");
  for (const r of rows) {
    console.log(
      `| ${r.kernels} | ${r.estimateMs.toFixed(3)} | ${r.retimedEstimateMs?.toFixed(3) ?? "-"} | ${
        r.latencyMs.toFixed(3)
      } | ${r.overReference.median.toFixed(3)} (${r.overReference.min.toFixed(3)}-${
        r.overReference.max.toFixed(3)
      }) |`,
    );
  }
  console.log(JSON.stringify({
    network: net.name,
    layout: layoutName(block),
    rounds,
    repeat,
    threads,
    reference: sets[reference].label,
    checkpoints: rows,
    ...(kernelRounds > 0 ? { kernelRounds, tasks: perTask } : {}),
  }));
  if (checks.some((c) => !c)) Deno.exitCode = 1;
}

if (import.meta.main) {
  await runCommand("scheduler_latency", schedulerLatencyCommand);
}
