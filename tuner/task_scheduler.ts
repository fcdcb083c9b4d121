/**
 * Task schedulers: how one trial budget is shared among the tasks of a
 * network (Ansor, Zheng et al. OSDI 2020, section 6; TVM's
 * `auto_scheduler.TaskScheduler`). The objective is the end-to-end latency
 * estimate `f = sum_i w_i * g_i`, with `w_i` a task's weight (how many layers
 * run it) and `g_i` its best latency so far.
 *
 * - `round-robin` gives each live task a round in turn.
 * - `gradient` first gives every task one round (warm-up; a task warm-started
 *   from the records database skips it), then gives each round to the task
 *   with the most negative estimated gradient `df/dt_i`:
 *
 *   `w_i * (alpha * (g_i(t_i) - g_i(t_i - window)) / window
 *          + (1 - alpha) * (min(g_i - g_i / t_i, beta * C_i / max_{k in N(i)} V_k) - g_i))`
 *
 *   with `t_i` the rounds task i has had, `C_i` its flops, and `N(i)` the
 *   tasks of the same group (same operator) whose best throughput `V_k` says
 *   how fast task i could become; ties are broken by the seeded PRNG. One
 *   departure from Ansor (`dropBoundWhenStalled`, default on): a task whose
 *   best has not improved in its last `window` rounds loses the similar-task
 *   bound. Ansor keeps it, so a layer its design space cannot make as fast as
 *   its siblings (ResNet-18's 512x7x7 convolution beside the 64x56x56 one of
 *   the same flops) keeps the most negative gradient and takes almost every
 *   round (312 of 400 trials in one run); without the bound its gradient
 *   decays as `g / t_i`, as for a task with no siblings. An optional second
 *   one (`paceStalled`): a stalled task's forward estimate is at most the
 *   gain per round it has averaged this session, `(g_i(1) - g_i) / (t_i - 1)`
 *   over this session's rounds, instead of `g_i / t_i`, which keeps a heavy
 *   layer near its limit ahead of a light one that has had one round. It is
 *   off: in replays of ResNet-18 it reached round robin's estimate later
 *   (README, "Tuning a whole network").
 *
 * A round is `perRound` trials of one task, tuned by the caller's `tuneTask`
 * (so any strategy, any measurer); a task that measures nothing new is dead
 * (its space is exhausted). The scheduler knows nothing of kernels, which
 * lets tests drive it with fake latency curves.
 *
 * @example
 * ```ts
 * import { scheduleTasks } from "./task_scheduler.ts";
 * // Two tasks whose latency halves with every round; task 0 runs 10 times per inference.
 * const best = [8e-3, 8e-3];
 * const r = await scheduleTasks({
 *   tasks: [{ weight: 10, flops: 1e9 }, { weight: 1, flops: 1e9 }],
 *   trials: 40,
 *   perRound: 4,
 *   scheduler: "gradient",
 *   tuneTask: (i, n) => {
 *     best[i] /= 2;
 *     return Promise.resolve({ measured: n, bestSeconds: best[i], exhausted: false });
 *   },
 * });
 * if (r.trialsPerTask[0] <= r.trialsPerTask[1]) throw new Error("the heavy task gets more");
 * ```
 * @module
 */
import type { RecordsDB } from "../datasets/db.ts";
import { confirmedBests } from "./finalists.ts";
import { createPrng } from "../ir/prng.ts";
import type { Workload } from "../ir/workloads.ts";

/** Names of the task schedulers. */
export const TASK_SCHEDULERS = ["gradient", "round-robin"] as const;
/** A task scheduler's name. */
export type TaskSchedulerName = typeof TASK_SCHEDULERS[number];

/** What the scheduler knows of a task. */
export interface SchedulerTask {
  /** How many times the network runs it (its weight in the objective). */
  weight: number;
  /** Floating-point operations of one run (the `C_i` of the forward gradient). */
  flops: number;
  /** Tasks of one group are similar (same operator): their throughputs bound each other. */
  group?: string;
}

/** Where a task starts: from records of earlier runs ({@link warmStart}). */
export interface TaskStart {
  /** Best latency recorded, seconds. */
  bestSeconds?: number;
  /** Trials recorded. */
  trials: number;
}

/** A task's start with the trace of its best record (JSON), to run the network with. */
export interface RecordedStart extends TaskStart {
  /** The best record's trace (JSON text), when one is valid. */
  bestTrace?: string;
}

/**
 * Warm start: each workload's best latency and trial count over every run of
 * `target` in the records database (Ansor's `_restore_status`); the best is
 * that of the workload's newest re-timed finalists when it has some
 * (`confirmedBest`), and re-timings are not trials.
 *
 * @example
 * ```ts
 * import { RecordsDB } from "../datasets/db.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { warmStart } from "./task_scheduler.ts";
 * const db = RecordsDB.open(":memory:", { mode: "create" });
 * const [s] = warmStart(db, [matmul(8, 8, 8)]);
 * if (s.trials !== 0 || s.bestSeconds !== undefined) throw new Error();
 * db.close();
 * ```
 */
export function warmStart(db: RecordsDB, workloads: Workload[], target = "cpu"): RecordedStart[] {
  return confirmedBests(db, workloads, { target }).map((b) => ({
    trials: b.trials,
    ...(b.seconds !== undefined ? { bestSeconds: b.seconds, bestTrace: b.trace } : {}),
  }));
}

/** What tuning a task for a round gave. */
export interface TaskRoundResult {
  /** Distinct candidates measured in the round (failures count). */
  measured: number;
  /** The task's best latency after the round, seconds (undefined: no valid kernel yet). */
  bestSeconds?: number;
  /** The task's space is exhausted: it gets no more rounds. */
  exhausted: boolean;
}

/** One round, as {@link TaskSchedulerOptions.onRound} sees it. */
export interface SchedulerRound {
  /** Round number, from 1. */
  round: number;
  /** The task tuned. */
  task: number;
  /** Trials measured this round. */
  measured: number;
  /** Trials measured so far in all tasks (this session). */
  trialsUsed: number;
  /** Each task's best latency so far, seconds. */
  bestSeconds: (number | undefined)[];
  /** `sum w_i * g_i` in seconds; NaN while a task has no latency. */
  objective: number;
}

/** Options of {@link scheduleTasks}. */
export interface TaskSchedulerOptions {
  /** The network's tasks, with weights and FLOPs. */
  tasks: SchedulerTask[];
  /** Trial budget over all tasks. */
  trials: number;
  /** Trials of one round (Ansor's `num_measures_per_round`); the last round may get fewer. */
  perRound: number;
  /** Which scheduler picks the next task: `"gradient"` or `"round-robin"` (required). */
  scheduler: TaskSchedulerName;
  /** Tunes task `task` for `trials` more trials. */
  tuneTask: (task: number, trials: number) => Promise<TaskRoundResult>;
  /** Each task's start from the records database. Default: nothing recorded. */
  warm?: (TaskStart | undefined)[];
  /** Weight of the backward gradient. Default 0.2 (Ansor). */
  alpha?: number;
  /** How much faster than its similar tasks a task may become. Default 2 (Ansor). */
  beta?: number;
  /** Rounds of the backward gradient. Default 3 (Ansor). */
  backwardWindow?: number;
  /**
   * Drop the similar-task bound of a task that has stalled (no better latency
   * in its last `backwardWindow` rounds). Default true; false is Ansor's rule.
   * See {@link taskGradients}.
   */
  dropBoundWhenStalled?: boolean;
  /**
   * A stalled task's forward estimate is at most the gain per round it has
   * averaged this session. See {@link taskGradients}. Default false.
   */
  paceStalled?: boolean;
  /** Seed of the tie-breaking PRNG. Default 1. */
  seed?: number;
  /** Called after every round. Default: nothing. */
  onRound?: (r: SchedulerRound) => void;
}

/** What {@link scheduleTasks} reports. */
export interface ScheduleOutcome {
  /** Every round in order. */
  rounds: SchedulerRound[];
  /** Trials measured per task (this session). */
  trialsPerTask: number[];
  /** Each task's best latency at the end, seconds. */
  bestSeconds: (number | undefined)[];
  /** The objective at the end, seconds (NaN while a task has no latency). */
  objective: number;
}

/** Ansor's stand-in latency of a task without a valid kernel (seconds): it is tuned first. */
const NO_LATENCY = 1e10;

/**
 * `sum w_i * g_i` (seconds); NaN while a task has no latency.
 *
 * @example
 * ```ts
 * import { objectiveOf } from "./task_scheduler.ts";
 * const tasks = [{ weight: 4, flops: 1e9 }, { weight: 1, flops: 1e9 }];
 * if (objectiveOf(tasks, [1e-3, 2e-3]) !== 6e-3) throw new Error();
 * ```
 */
export function objectiveOf(tasks: SchedulerTask[], best: (number | undefined)[]): number {
  return tasks.reduce((a, t, i) => a + t.weight * (best[i] ?? NaN), 0);
}

/** State the gradient reads: per task, rounds had and best latency after each round of this session. */
export interface GradientState {
  tasks: SchedulerTask[];
  /** Rounds each task has had (warm-started ones included). */
  rounds: number[];
  /** Best latency after each round of this session, per task. */
  history: number[][];
  /** Best latency so far per task. */
  best: (number | undefined)[];
}

/**
 * Ansor's estimate of `df/dt_i` for every task (seconds per round, <= 0):
 * the more negative, the more a round of that task is expected to cut the
 * objective.
 *
 * @example
 * ```ts
 * import { taskGradients } from "./task_scheduler.ts";
 * const g = taskGradients({
 *   tasks: [{ weight: 4, flops: 1e9 }, { weight: 1, flops: 1e9 }],
 *   rounds: [1, 1], history: [[1e-3], [1e-3]], best: [1e-3, 1e-3],
 * });
 * if (!(g[0] < g[1])) throw new Error();
 * ```
 */
export function taskGradients(
  s: GradientState,
  o: {
    alpha?: number;
    beta?: number;
    backwardWindow?: number;
    dropBoundWhenStalled?: boolean;
    paceStalled?: boolean;
  } = {},
): number[] {
  const alpha = o.alpha ?? 0.2, beta = o.beta ?? 2, window = o.backwardWindow ?? 3;
  const dropWhenStalled = o.dropBoundWhenStalled ?? true;
  return s.tasks.map((task, i) => {
    const g = s.best[i] ?? NO_LATENCY;
    const h = s.history[i];
    const backward = h.length > window ? (h[h.length - 1] - h[h.length - 1 - window]) / window : 0;
    let next = g - g / Math.max(1, s.rounds[i]);
    const stalled = h.length > window && backward === 0;
    if (task.group !== undefined && !(dropWhenStalled && stalled)) {
      const similar = s.tasks.flatMap((t, k) =>
        t.group === task.group && s.best[k] !== undefined ? [t.flops / s.best[k]!] : []
      );
      if (similar.length > 1) next = Math.min(next, beta * task.flops / Math.max(...similar));
    }
    let forward = next - g;
    if (o.paceStalled && stalled) {
      // Gain per round this task has averaged since its first round of the session.
      const pace = (h[0] - g) / (h.length - 1);
      forward = Math.max(forward, -pace);
    }
    return task.weight * (alpha * backward + (1 - alpha) * forward);
  });
}

/**
 * Runs the rounds of a task scheduler until the budget is spent or every task is dead.
 *
 * @example
 * ```ts
 * import { scheduleTasks } from "./task_scheduler.ts";
 * const order: number[] = [];
 * await scheduleTasks({
 *   tasks: [{ weight: 1, flops: 1e9 }, { weight: 1, flops: 1e9 }],
 *   trials: 8,
 *   perRound: 2,
 *   scheduler: "round-robin",
 *   tuneTask: (i, n) => {
 *     order.push(i);
 *     return Promise.resolve({ measured: n, bestSeconds: 1e-3, exhausted: false });
 *   },
 * });
 * if (order.join() !== "0,1,0,1") throw new Error();
 * ```
 */
export async function scheduleTasks(o: TaskSchedulerOptions): Promise<ScheduleOutcome> {
  const n = o.tasks.length;
  if (!(o.perRound >= 1)) throw new RangeError(`perRound must be >= 1, got ${o.perRound}`);
  const prng = createPrng(o.seed ?? 1);
  const best = o.tasks.map((_, i) => o.warm?.[i]?.bestSeconds);
  // Ansor counts restored records as rounds of the current size.
  const roundsHad = o.tasks.map((_, i) => Math.round((o.warm?.[i]?.trials ?? 0) / o.perRound));
  const warmUp = o.tasks.map((_, i) => i).filter((i) => roundsHad[i] === 0);
  const history: number[][] = o.tasks.map(() => []);
  const dead = new Set<number>();
  const trialsPerTask = o.tasks.map(() => 0);
  const rounds: SchedulerRound[] = [];
  let used = 0, robin = -1;

  const next = (): number => {
    if (o.scheduler === "round-robin") {
      do robin = (robin + 1) % n; while (dead.has(robin));
      return robin;
    }
    while (warmUp.length > 0) {
      const i = warmUp.shift()!;
      if (!dead.has(i)) return i;
    }
    const grads = taskGradients({ tasks: o.tasks, rounds: roundsHad, history, best }, o)
      .map((g, i) => dead.has(i) ? Infinity : g);
    const lowest = Math.min(...grads);
    const ties = grads.flatMap((g, i) => g === lowest ? [i] : []);
    return ties.length === 1 ? ties[0] : prng.pick(ties);
  };

  while (used < o.trials && dead.size < n) {
    const task = next();
    const r = await o.tuneTask(task, Math.min(o.perRound, o.trials - used));
    used += r.measured;
    trialsPerTask[task] += r.measured;
    roundsHad[task]++;
    if (r.bestSeconds !== undefined && !(best[task]! <= r.bestSeconds)) best[task] = r.bestSeconds;
    history[task].push(best[task] ?? NO_LATENCY);
    if (r.exhausted || r.measured === 0) dead.add(task);
    const round: SchedulerRound = {
      round: rounds.length + 1,
      task,
      measured: r.measured,
      trialsUsed: used,
      bestSeconds: [...best],
      objective: objectiveOf(o.tasks, best),
    };
    rounds.push(round);
    o.onRound?.(round);
  }
  return { rounds, trialsPerTask, bestSeconds: best, objective: objectiveOf(o.tasks, best) };
}
