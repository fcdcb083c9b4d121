/**
 * `deno task reproduce --db runs.db --run ID`: reruns the configuration a
 * run stored (workload, strategy, template, seed, trials, target, batch,
 * timing; or its trace list) as a new run in the same database, then
 * reports how the new run differs from the old one: whether the same
 * candidates were proposed (identical traces, and in the same trial), the
 * best GFLOP/s so far of both after each trial and their ratio (new / old),
 * and the ratio of the final bests. A table goes to stderr; the last line
 * on stdout is one JSON object (see {@link Reproduction}).
 *
 * Search is deterministic given the seed, so the same candidates are
 * expected; the times differ by measurement noise and machine load.
 * @module
 */
import { RecordsDB } from "../datasets/db.ts";
import { isPostgresUrl } from "../datasets/postgres_url.ts";
import { openRecordsReader, type RecordsReader } from "../datasets/records_reader.ts";
import type { Trace } from "../ir/trace.ts";
import type { TimingOptions } from "../measure/types.ts";
import { bestSoFar } from "../plots/tuning_curve.ts";
import { stderrProgress } from "../tuner/progress.ts";
import { runSession } from "../tuner/session.ts";
import { confirmationIn } from "../tuner/confirm.ts";
import { parseFlags, runJsonCommand, UsageError } from "./args.ts";
import { printResult } from "./output.ts";
import { watchRuns } from "./stop.ts";

/** Usage text of `reproduce`. */
export const REPRODUCE_USAGE = `usage: deno task reproduce --db PATH --run ID [--quiet]

  --db PATH    records database holding the run (must exist); the rerun is added to it
  --run ID     the run to rerun with its stored configuration
  --quiet      no progress bar
  --help       this text`;

/** How a rerun compares with the original run. */
export interface RunDiff {
  /** Trials of the old and the new run (candidates recorded). */
  old_trials: number;
  new_trials: number;
  /** Candidates (by trace hash) both runs proposed, in any trial. */
  identical_candidates: number;
  /** Trials whose candidate is the same in both runs. */
  same_position: number;
  /** True when both runs proposed exactly the same candidates in the same order. */
  same_order: boolean;
  /** Best GFLOP/s of each run (null when none was valid). */
  old_best_gflops: number | null;
  new_best_gflops: number | null;
  /** new best / old best (null when either has none). */
  final_best_ratio: number | null;
  /** Best GFLOP/s so far after each trial, old and new (null before the first valid one). */
  old_curve: (number | null)[];
  new_curve: (number | null)[];
  /** new / old best so far after each trial (null where either is missing). */
  per_trial_ratio: (number | null)[];
  /**
   * Confirmed best GFLOP/s of each run: its finalists' best median over the
   * rounds they were timed again in (tuner/confirm.ts; null when it has none).
   */
  old_confirmed_gflops: number | null;
  new_confirmed_gflops: number | null;
}

/** What `reproduce` prints as JSON. */
export interface Reproduction extends RunDiff {
  db: string;
  run: number;
  new_run: number;
  workload: string;
  strategy: string;
  seed: number;
}

/** The stored configuration of a run (see tuner/session.ts), as far as reproduction needs it. */
interface StoredConfig {
  workload: string;
  shape: number[];
  strategy: string;
  /** A `STRATEGY@PRESET` run's settings. */
  hyper?: Record<string, number | string>;
  seed: number;
  trials: number;
  target?: string;
  batch?: number;
  timeoutSeconds?: number;
  timing?: Partial<TimingOptions>;
  traces?: Trace[];
  template?: string;
  unity?: number;
  overlap?: boolean;
  race?: number;
  finalists?: { top: number; rounds: number; timing?: TimingOptions };
}

const nullIfNaN = (v: number) => (Number.isFinite(v) ? v : null);

/** Compares two runs of a database candidate by candidate, trial by trial. */
export function diffRuns(db: RecordsReader, oldRun: number, newRun: number): RunDiff {
  const a = db.candidates(oldRun), b = db.candidates(newRun);
  const inA = new Set(a.map((c) => c.traceHash));
  const identical = b.filter((c) => inA.has(c.traceHash)).length;
  const n = Math.min(a.length, b.length);
  let samePosition = 0;
  for (let i = 0; i < n; i++) if (a[i].traceHash === b[i].traceHash) samePosition++;
  const curveA = bestSoFar(a.map((c) => c.result?.gflops ?? NaN));
  const curveB = bestSoFar(b.map((c) => c.result?.gflops ?? NaN));
  const len = Math.max(curveA.length, curveB.length);
  const perTrial = Array.from({ length: len }, (_, i) => {
    const x = curveA[i] ?? NaN, y = curveB[i] ?? NaN;
    return nullIfNaN(y / x);
  });
  const oldBest = db.best(oldRun)?.result.gflops ?? null;
  const newBest = db.best(newRun)?.result.gflops ?? null;
  const confirmed = (id: number) => {
    const s = confirmationIn(db, id)?.best?.seconds;
    const flops = db.workload(db.run(id)!.workloadId)?.flops ?? 0;
    return s && flops > 0 ? flops / s / 1e9 : null;
  };
  return {
    old_trials: a.length,
    new_trials: b.length,
    identical_candidates: identical,
    same_position: samePosition,
    same_order: a.length === b.length && samePosition === a.length,
    old_best_gflops: oldBest,
    new_best_gflops: newBest,
    final_best_ratio: oldBest && newBest !== null ? newBest / oldBest : null,
    old_curve: curveA.map(nullIfNaN),
    new_curve: curveB.map(nullIfNaN),
    per_trial_ratio: perTrial,
    old_confirmed_gflops: confirmed(oldRun),
    new_confirmed_gflops: confirmed(newRun),
  };
}

/** The diff as a Markdown table, one row per trial (numbered from 1), and a closing summary line. */
export function diffTable(d: RunDiff, sameAt: (i: number) => boolean): string {
  const f = (v: number | null | undefined, digits = 2) => (v == null ? "-" : v.toFixed(digits));
  const lines = [
    "| trial | old best GFLOP/s | new best GFLOP/s | new / old | same candidate |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (let i = 0; i < d.per_trial_ratio.length; i++) {
    lines.push(
      `| ${i + 1} | ${f(d.old_curve[i])} | ${f(d.new_curve[i])} | ${f(d.per_trial_ratio[i], 3)} | ${
        sameAt(i) ? "yes" : "no"
      } |`,
    );
  }
  lines.push(
    "",
    `identical candidates ${d.identical_candidates} of ${d.old_trials} (same trial: ${d.same_position}); ` +
      `final best ${f(d.old_best_gflops)} -> ${f(d.new_best_gflops)} GFLOP/s (ratio ${
        f(d.final_best_ratio, 3)
      })` +
      (d.old_confirmed_gflops !== null || d.new_confirmed_gflops !== null
        ? `; confirmed ${f(d.old_confirmed_gflops)} -> ${f(d.new_confirmed_gflops)} GFLOP/s`
        : ""),
  );
  return lines.join("\n");
}

/** Reruns a run and compares; returns the JSON summary. */
export async function reproduce(argv: string[]): Promise<Reproduction> {
  const v = parseFlags(
    argv,
    {
      db: { type: "string" },
      run: { type: "string" },
      quiet: { type: "boolean", default: false },
    },
    REPRODUCE_USAGE,
  );
  if (!v.db) throw new UsageError("Missing --db (a records database)");
  if (!v.run || !/^\d+$/.test(v.run)) throw new UsageError("--run must be a run id");
  try {
    if (!isPostgresUrl(v.db)) await Deno.stat(v.db);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e; // outside what the deno task grants
    throw new UsageError(`--db ${v.db}: no such records database`);
  }
  const runId = Number(v.run);
  let config: StoredConfig;
  {
    const db = isPostgresUrl(v.db)
      ? await openRecordsReader(v.db)
      : RecordsDB.open(v.db, { mode: "write" });
    try {
      const run = db.run(runId);
      if (!run) throw new UsageError(`No run ${runId} in records database "${v.db}"`);
      config = run.config as unknown as StoredConfig;
      if (
        typeof config.workload !== "string" || !Array.isArray(config.shape) ||
        typeof config.seed !== "number" || typeof config.trials !== "number"
      ) {
        throw new UsageError(
          `Run ${runId} stores no reproducible configuration (workload, shape, seed, trials)`,
        );
      }
    } finally {
      db.close();
    }
  }
  const progress = v.quiet ? undefined : stderrProgress();
  const stop = watchRuns("reproduce", v.db, () => progress?.done());
  let summary;
  try {
    summary = await runSession({
      db: v.db,
      signal: stop.signal,
      onStart: stop.onStart,
      ...(config.unity !== undefined ? { unity: config.unity } : {}),
      ...(config.overlap !== undefined ? { overlap: config.overlap } : {}),
      ...(config.race !== undefined ? { race: config.race } : {}),
      workload: { name: config.workload, shape: config.shape },
      ...(config.strategy === "trace-file" ? { traces: config.traces ?? [] } : {
        strategy: config.strategy,
        // A STRATEGY@PRESET run: the settings it recorded, whatever the preset file says now.
        ...(config.hyper !== undefined ? { hyper: config.hyper } : {}),
      }),
      template: config.template,
      seed: config.seed,
      trials: config.trials,
      target: config.target,
      batch: config.batch,
      timeoutSeconds: config.timeoutSeconds,
      timing: config.timing,
      // The finalists the run had (none for a run recorded before they existed).
      finalists: config.finalists?.top ?? 0,
      ...(config.finalists ? { finalistRounds: config.finalists.rounds } : {}),
      // Their timing as recorded: a run from before they had their own timed them as its trials.
      ...(config.finalists ? { finalistTiming: config.finalists.timing ?? config.timing } : {}),
      onProgress: progress?.update,
    });
  } finally {
    progress?.done();
    stop.dispose();
  }
  if (stop.stopped(summary)) Deno.exit(stop.exitCode());
  if (summary.noDevice) console.error(`reproduce: ${summary.noDevice}`);
  const db = await openRecordsReader(v.db);
  try {
    const d = diffRuns(db, runId, summary.run_id);
    const a = db.candidates(runId), b = db.candidates(summary.run_id);
    printResult(
      `\nrun ${runId} reproduced as run ${summary.run_id} (${config.workload} ${
        config.shape.join(",")
      }, ${config.strategy}, seed ${config.seed}, ${config.trials} trials)\n`,
    );
    printResult(diffTable(d, (i) => a[i] !== undefined && a[i].traceHash === b[i]?.traceHash));
    return {
      db: v.db,
      run: runId,
      new_run: summary.run_id,
      workload: `${config.workload}:${config.shape.join(",")}`,
      strategy: config.strategy,
      seed: config.seed,
      ...d,
    };
  } finally {
    db.close();
  }
}

if (import.meta.main) await runJsonCommand("reproduce", reproduce);
