/**
 * Task schedulers replayed on recorded tuning curves: each task's trials, in
 * the order one `tune-network` session measured them (`--db`, one run per
 * task), are handed out again by a task scheduler (tuner/task_scheduler.ts)
 * instead of being measured, so scheduler variants (round size, Ansor's rule
 * or ours) compare on the same measurements at no cost. A task's strategy
 * proposes the same candidates whatever the round size as long as it
 * decides per plan (xgb retrains once per plan of 16), which is what makes
 * the replay faithful for xgb. Rounds past a task's recorded trials find it
 * exhausted, so record more trials per task than any variant gives one
 * (`--scheduler round-robin` with a large budget records the same number
 * for each).
 *
 * Reported per variant: the trials the gradient scheduler needed to reach
 * round robin's final estimate, and, as a bound, the fewest an oracle
 * allocation (knowing every curve) needs ({@link oracleTrials}). Over
 * `--shuffles K` the first plan of each task (its first `--plan` trials,
 * random samples, so any order is as likely) is shuffled, giving K more
 * replays; the median and quartiles are printed.
 *
 * ```sh
 * deno task tune-network --network resnet18 --trials 2400 --per-round 8 --strategy xgb \
 *   --template conv2d-packed,matmul-packed --scheduler round-robin --db curves.db --no-execute
 * deno run -A bench/scheduler_replay.ts --db curves.db --trials 400 --shuffles 30
 * ```
 * @module
 */
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";
import { RecordsDB } from "../datasets/db.ts";
import { createPrng } from "../ir/prng.ts";
import {
  type SchedulerTask,
  scheduleTasks,
  type TaskSchedulerName,
} from "../tuner/task_scheduler.ts";
import { trialsToReach } from "../tuner/trials_used.ts";
import { FINALISTS_STRATEGY } from "../tuner/finalists.ts";

/** A task's recorded trials: seconds of each, in order (Infinity: a failure). */
export interface RecordedTask extends SchedulerTask {
  seconds: number[];
}

/** Reads a `tune-network` database: one task per run, its trials in trial order (re-timed finalists left out). */
export function recordedTasks(db: RecordsDB): RecordedTask[] {
  return db.runs().filter((run) => run.strategy !== FINALISTS_STRATEGY).map((run) => {
    const w = db.workload(run.workloadId)!;
    const cfg = run.config as { network?: { weight?: number } } | undefined;
    const rows = db.candidates(run.id);
    return {
      weight: cfg?.network?.weight ?? 1,
      flops: w.flops,
      group: w.name,
      seconds: rows.map((r) =>
        r.result?.errorKind === "none" && r.result.seconds ? r.result.seconds : Infinity
      ),
    };
  });
}

/** A scheduler variant to replay. */
export interface ReplayVariant {
  scheduler: TaskSchedulerName;
  perRound: number;
  dropBoundWhenStalled?: boolean;
  /** A stalled task's forward estimate paced by its average gain per round. */
  paceStalled?: boolean;
}

/**
 * The estimate (ms) after each trial when `v` schedules the recorded tasks
 * for `trials` trials (NaN until every task has a valid time).
 *
 * @example
 * ```ts
 * import { replaySchedule } from "./scheduler_replay.ts";
 * const tasks = [{ weight: 1, flops: 1e6, seconds: [4e-3, 2e-3] }, { weight: 1, flops: 1e6, seconds: [1e-3, 1e-3] }];
 * const c = await replaySchedule(tasks, { scheduler: "round-robin", perRound: 1 }, 3);
 * if (c.join() !== "NaN,5,3") throw new Error(c.join());
 * ```
 */
export async function replaySchedule(
  tasks: RecordedTask[],
  v: ReplayVariant,
  trials: number,
): Promise<number[]> {
  const next = tasks.map(() => 0), best = tasks.map(() => Infinity);
  const out = await scheduleTasks({
    tasks,
    trials,
    perRound: v.perRound,
    scheduler: v.scheduler,
    dropBoundWhenStalled: v.dropBoundWhenStalled,
    paceStalled: v.paceStalled,
    tuneTask: (i, n) => {
      const got = tasks[i].seconds.slice(next[i], next[i] + n);
      next[i] += got.length;
      for (const s of got) best[i] = Math.min(best[i], s);
      return Promise.resolve({
        measured: got.length,
        bestSeconds: Number.isFinite(best[i]) ? best[i] : undefined,
        exhausted: next[i] >= tasks[i].seconds.length,
      });
    },
  });
  const curve: number[] = [];
  let r = 0, value = NaN;
  for (let t = 1; t <= trials; t++) {
    while (r < out.rounds.length && out.rounds[r].trialsUsed <= t) {
      value = out.rounds[r++].objective * 1e3;
    }
    curve.push(value);
  }
  return curve;
}

/**
 * The fewest trials, in rounds of `perRound` with at least one round per
 * task, after which some allocation of them reaches `targetMs` (the best
 * of each task's first trials, weighted): what a scheduler knowing every
 * curve in advance would need. Undefined when no allocation within
 * `maxTrials` reaches it.
 *
 * @example
 * ```ts
 * import { oracleTrials } from "./scheduler_replay.ts";
 * const tasks = [{ weight: 1, flops: 1, seconds: [4e-3, 1e-3] }, { weight: 1, flops: 1, seconds: [1e-3, 1e-3] }];
 * if (oracleTrials(tasks, 1, 2, 10) !== 3) throw new Error();
 * ```
 */
export function oracleTrials(
  tasks: RecordedTask[],
  perRound: number,
  targetMs: number,
  maxTrials: number,
): number | undefined {
  const maxRounds = Math.floor(maxTrials / perRound);
  // best[r]: the lowest estimate (ms) of the tasks so far with r rounds among them.
  let best = Array.from({ length: maxRounds + 1 }, (_, r) => (r === 0 ? 0 : Infinity));
  for (const t of tasks) {
    const next = best.map(() => Infinity);
    let low = Infinity;
    const after: number[] = [];
    for (let k = 1; k * perRound <= t.seconds.length + perRound - 1; k++) {
      for (const s of t.seconds.slice((k - 1) * perRound, k * perRound)) low = Math.min(low, s);
      after.push(t.weight * low * 1e3);
    }
    for (let r = 0; r <= maxRounds; r++) {
      if (!Number.isFinite(best[r])) continue;
      after.forEach((v, k) => {
        if (r + k + 1 <= maxRounds) next[r + k + 1] = Math.min(next[r + k + 1], best[r] + v);
      });
    }
    best = next;
  }
  const r = best.findIndex((v) => v <= targetMs);
  return r < 0 ? undefined : r * perRound;
}

/** Shuffles each task's first `plan` trials (exchangeable random samples) with a seeded PRNG. */
export function shuffleFirstPlans(
  tasks: RecordedTask[],
  plan: number,
  seed: number,
): RecordedTask[] {
  const prng = createPrng(seed);
  return tasks.map((t) => {
    const head = t.seconds.slice(0, plan);
    for (let i = head.length - 1; i > 0; i--) {
      const j = prng.int(i + 1);
      [head[i], head[j]] = [head[j], head[i]];
    }
    return { ...t, seconds: [...head, ...t.seconds.slice(plan)] };
  });
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.round(q * (xs.length - 1))];

const USAGE = `usage: deno run -A bench/scheduler_replay.ts --db FILE [options]
  --db FILE                    a tune-network database (one run per task)
  --trials N                   budget of each replay (default 400)
  --per-round N[,N]            round sizes of the gradient variants (default 1,2,4,8)
  --round-robin-per-round N    round size of the round robin reference (default 8)
  --shuffles K                 replays with the first plans shuffled (default 0)
  --plan N                     trials of a task's first (random) plan (default 16)`;

/** The replay's command line; a bad flag is a {@link UsageError}. */
function replayMain(argv: string[]) {
  const v = parseFlags(argv, {
    db: { type: "string" },
    trials: { type: "string", default: "400" },
    "per-round": { type: "string", default: "1,2,4,8" },
    "round-robin-per-round": { type: "string", default: "8" },
    shuffles: { type: "string", default: "0" },
    plan: { type: "string", default: "16" },
  }, USAGE);
  const int = (flag: string, s: string, min: number) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < min) {
      throw new UsageError(`--${flag} must be an integer >= ${min}, got "${s}"`);
    }
    return n;
  };
  if (!v.db) throw new UsageError("Missing --db FILE (a tune-network database)");
  return {
    db: v.db,
    trials: int("trials", v.trials!, 1),
    shuffles: int("shuffles", v.shuffles!, 0),
    plan: int("plan", v.plan!, 1),
    rrRound: int("round-robin-per-round", v["round-robin-per-round"]!, 1),
    rounds: v["per-round"]!.split(",").map((s) => int("per-round", s, 1)),
  };
}

/** The replay's command: prints the comparison (a bad flag is a UsageError, a bad database a DatabaseError). */
async function replayCommand(argv: string[]): Promise<void> {
  const { db: path, trials, shuffles, plan, rrRound, rounds } = replayMain(argv);
  const db = RecordsDB.open(path, { mode: "read" });
  let recorded: RecordedTask[];
  try {
    recorded = recordedTasks(db);
  } finally {
    db.close();
  }
  console.log(
    `${recorded.length} tasks, ${
      Math.min(...recorded.map((t) => t.seconds.length))
    } or more trials each; ${shuffles} shuffles of the first ${plan}`,
  );
  const variants: [string, ReplayVariant][] = rounds.flatMap((perRound) => [
    [`gradient, rounds of ${perRound}`, { scheduler: "gradient", perRound }],
    [`gradient, stalled tasks paced, rounds of ${perRound}`, {
      scheduler: "gradient",
      perRound,
      paceStalled: true,
    }],
    [`gradient (Ansor's rule), rounds of ${perRound}`, {
      scheduler: "gradient",
      perRound,
      dropBoundWhenStalled: false,
    }],
  ]);
  const reach = new Map<string, number[]>(),
    oracle = new Map<number, number[]>(),
    rr: number[] = [];
  for (let k = 0; k <= shuffles; k++) {
    const tasks = k === 0 ? recorded : shuffleFirstPlans(recorded, plan, k);
    const target =
      (await replaySchedule(tasks, { scheduler: "round-robin", perRound: rrRound }, trials))
        .at(-1)!;
    rr.push(target);
    for (const [name, variant] of variants) {
      const t = trialsToReach(await replaySchedule(tasks, variant, trials), target) ?? Infinity;
      reach.set(name, [...(reach.get(name) ?? []), t]);
    }
    for (const p of rounds) {
      oracle.set(p, [...(oracle.get(p) ?? []), oracleTrials(tasks, p, target, trials) ?? Infinity]);
    }
  }
  const show = (xs: number[]) =>
    `median ${quantile(xs, 0.5)} (quartiles ${quantile(xs, 0.25)}-${quantile(xs, 0.75)})`;
  console.log(
    `round robin (rounds of ${rrRound}) at ${trials} trials: ${
      quantile(rr, 0.5).toFixed(3)
    } ms (median); trials each variant needed to reach it:`,
  );
  console.log("| variant | trials to reach round robin's final estimate |\n| --- | --- |");
  for (const [name, xs] of reach) console.log(`| ${name} | ${show(xs)} |`);
  for (const [p, xs] of oracle) console.log(`| oracle allocation, rounds of ${p} | ${show(xs)} |`);
}

if (import.meta.main) {
  await runCommand("scheduler_replay", replayCommand);
}
