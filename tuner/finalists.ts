/**
 * Finalists re-timed: a task's fastest recorded candidates timed again in
 * rounds, every finalist once per round (in an order rotated round by
 * round), so that the kernel a network runs is the one that is fastest and
 * not the one measured in the machine's fastest moment. A search that keeps
 * the best of hundreds of single noisy measurements keeps the luckiest (the
 * winner's curse): on ResNet-18's 128x28x28 3x3 layer a 2,000-trial session
 * kept a tile recorded at 151 GFLOP/s that ran at 0.85 of another it had
 * recorded at 131 when the two were timed in turn (README, "Finalists").
 *
 * The re-timing is a run of its own in the records database (strategy
 * {@link FINALISTS_STRATEGY}), one candidate per finalist whose `times` are
 * its figure of each round (the median of that round's repeats), so its
 * recorded seconds are the median over the rounds. {@link confirmedBest}
 * (and through it `warmStart`, the executor's and the benchmarks' choice of
 * kernel) takes a workload's best from its newest such run when it has one.
 *
 * @example
 * ```ts
 * import { retimeFinalists } from "./finalists.ts";
 * import type { Measurer } from "../measure/measurer.ts";
 * import { createPrng } from "../ir/prng.ts";
 * import { Schedule } from "../ir/schedule.ts";
 * import { traceOf } from "../ir/trace.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const trace = JSON.stringify(traceOf(new Schedule(matmul(8, 8, 8), { prng: createPrng(0) })));
 * // A fake measurer: finalist [0] takes 2 ms but 0.5 ms in a lucky first round, [1] 1 ms.
 * const seen = new Set<number>();
 * const measurer: Measurer = {
 *   name: "fake",
 *   measure: (batch) =>
 *     Promise.resolve(batch.map((c) => {
 *       const k = c.knobs![0];
 *       const s = k === 1 ? 1e-3 : seen.has(k) ? 2e-3 : 5e-4;
 *       seen.add(k);
 *       return { errorKind: "none" as const, times: [s], buildSeconds: 0, runSeconds: 0 };
 *     })),
 * };
 * const r = await retimeFinalists(
 *   [{ trace, knobs: [0], seconds: 5e-4 }, { trace, knobs: [1], seconds: 1e-3 }],
 *   measurer,
 *   3,
 * );
 * if (r[0].knobs![0] !== 1) throw new Error("[1] is the faster over the rounds");
 * ```
 * @module
 */
import { sameTarget } from "../ir/target.ts";
import type {
  CandidateInput,
  CandidateRow,
  RecordsDB,
  ResultInput,
  RunInfo,
  WorkloadInput,
} from "../datasets/db.ts";
import { workloadKey } from "../datasets/db.ts";
import { median } from "../ir/stats.ts";
import { canonicalJSON, parseTrace, traceHash } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import type { ErrorKind } from "../ir/error_kind.ts";
import type { Measurer } from "../measure/measurer.ts";
import type { MeasureConditions } from "../ir/conditions.ts";
import { SLOW_SPEED, usualSpeed } from "./ranking_noise.ts";

/** Strategy name of a run of re-timed finalists. */
export const FINALISTS_STRATEGY = "finalists";

/** A recorded candidate up for re-timing. */
export interface Finalist {
  /** Its trace (JSON text, as recorded). */
  trace: string;
  /** Its knob vector, when recorded. */
  knobs?: number[] | null;
  /** Seconds as recorded. */
  seconds: number;
  /**
   * Present when it is a second look ({@link fastestDistinct}): it was
   * timed while the machine ran slow, at this share of its usual speed.
   */
  timedSlowAt?: number;
}

/** A recorded candidate as {@link fastestDistinct} reads it (a `CandidateRow` is one). */
export type MeasuredCandidate = Pick<CandidateRow, "trace" | "knobs"> & {
  result:
    | { errorKind: string; seconds: number | null; conditions?: { probeGBps?: number } }
    | null;
};

/** A finalist after re-timing. */
export interface RetimedFinalist extends Finalist {
  /** Its figure of each round, seconds (the median of the round's repeats); empty when it failed. */
  times: number[];
  /** Median over the rounds, seconds (Infinity when it failed). */
  medianSeconds: number;
  /** `"none"`, or the error of the round where it failed. */
  errorKind: ErrorKind;
  /** Why it failed. */
  error?: string;
  /**
   * The machine's conditions during its rounds, when the measurer reported
   * them (`withConditions`): the worst of the rounds (the highest load and
   * steal, the lowest CPU frequency and speed probe).
   */
  conditions?: MeasureConditions;
}

/**
 * The `top` fastest distinct traces of workload `w` (target `target`) over
 * the given runs (default: every run of it), fastest first.
 *
 * @example
 * ```ts
 * import { RecordsDB } from "../datasets/db.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { finalistsOf } from "./finalists.ts";
 * const db = RecordsDB.open(":memory:", { mode: "create" });
 * if (finalistsOf(db, matmul(8, 8, 8), 4).length !== 0) throw new Error();
 * db.close();
 * ```
 */
export function finalistsOf(
  db: RecordsDB,
  w: Workload,
  top: number,
  o: { target?: string; runs?: readonly number[] } = {},
): Finalist[] {
  const key = workloadKey(w.name, w.shape);
  const target = o.target ?? "cpu";
  const runs = o.runs ? o.runs.flatMap((id) => db.run(id) ?? []) : db.runs();
  const candidates = runs
    .filter((run) => sameTarget(run.target, target) && db.workload(run.workloadId)?.key === key)
    .flatMap((run) => db.candidates(run.id));
  return fastestDistinct(candidates, top);
}

/**
 * The `top` fastest distinct valid traces among `candidates` (of one
 * workload), fastest first: each trace once, at its fastest record. Then,
 * as second looks, up to `top` more: traces timed while the machine ran
 * slow (the speed probe of their record under `SLOW_SPEED` of the usual,
 * tuner/ranking_noise.ts) whose figure scaled by that share of the usual
 * speed would have ranked among the first `top`, best first, each with
 * `timedSlowAt`. A candidate timed in a slow spell is then timed again
 * rather than passed over for ever; its scaled figure only nominates it, and
 * the re-timing decides.
 *
 * @example
 * ```ts
 * import { fastestDistinct } from "./finalists.ts";
 * const r = (s: number) => ({ errorKind: "none" as const, seconds: s });
 * const c = (trace: string, s: number) => ({ trace, knobs: null, result: r(s) });
 * const top = fastestDistinct([c('{"a":1}', 2), c('{"a":1}', 1), c('{"b":1}', 3)], 2);
 * if (top.length !== 2 || top[0].seconds !== 1 || top[1].seconds !== 3) throw new Error();
 * ```
 */
export function fastestDistinct(candidates: readonly MeasuredCandidate[], top: number): Finalist[] {
  const fastest = new Map<string, Finalist & { probe?: number }>();
  const probes: number[] = [];
  for (const c of candidates) {
    const s = c.result?.errorKind === "none" ? c.result.seconds : null;
    if (!s || c.trace === "null") continue;
    const p = c.result!.conditions?.probeGBps;
    const probe = typeof p === "number" && Number.isFinite(p) && p > 0 ? p : undefined;
    if (probe !== undefined) probes.push(probe);
    // One trace, one finalist: keyed by the trace itself, not by the hash a run stored
    // (finalists runs written before 2026-11-28 hashed the JSON text, tuning runs the trace).
    const same = canonicalJSON(JSON.parse(c.trace));
    const had = fastest.get(same);
    if (!had || s < had.seconds) {
      fastest.set(same, {
        trace: c.trace,
        knobs: c.knobs,
        seconds: s,
        ...(probe !== undefined ? { probe } : {}),
      });
    }
  }
  const ranked = [...fastest.values()].sort((a, b) => a.seconds - b.seconds);
  const plain = ({ probe: _, ...f }: Finalist & { probe?: number }): Finalist => f;
  const picked = ranked.slice(0, top);
  if (picked.length < top || probes.length === 0) return picked.map(plain);
  const usual = usualSpeed(probes);
  const last = picked[picked.length - 1].seconds;
  const second = ranked.slice(top).flatMap((f) => {
    const share = f.probe !== undefined ? f.probe / usual : 1;
    return share < SLOW_SPEED && f.seconds * share < last
      ? [{ ...plain(f), timedSlowAt: Number(share.toFixed(3)) }]
      : [];
  }).sort((a, b) => a.seconds * a.timedSlowAt - b.seconds * b.timedSlowAt).slice(0, top);
  return [...picked.map(plain), ...second];
}

/**
 * Times the finalists in `rounds` rounds through `measurer` (one batch per
 * round, every finalist once, the order rotated by one each round); the
 * result is sorted by median seconds over the rounds, fastest first. A
 * finalist that fails in a round (wrong output, crash, timeout) is out.
 */
export async function retimeFinalists(
  finalists: readonly Finalist[],
  measurer: Measurer,
  rounds: number,
  onRound?: (round: number) => void,
): Promise<RetimedFinalist[]> {
  const out: RetimedFinalist[] = finalists.map((f) => ({
    ...f,
    times: [],
    medianSeconds: Infinity,
    errorKind: "none",
  }));
  const n = finalists.length;
  for (let r = 0; r < rounds && n > 0; r++) {
    const order = [...Array(n).keys()].map((k) => (k + r) % n)
      .filter((k) => out[k].errorKind === "none");
    const results = await measurer.measure(
      order.map((k) => ({
        trace: parseTrace(JSON.parse(out[k].trace)),
        ...(out[k].knobs ? { knobs: out[k].knobs! } : {}),
      })),
    );
    results.forEach((res, j) => {
      const f = out[order[j]];
      if (res.errorKind !== "none" || res.times.length === 0) {
        f.errorKind = res.errorKind === "none" ? "unknown" : res.errorKind;
        f.error = res.error ?? "no time";
        f.times = [];
      } else f.times.push(median(res.times));
      if (res.conditions) f.conditions = worstConditions(f.conditions, res.conditions);
    });
    onRound?.(r + 1);
  }
  for (const f of out) {
    if (f.errorKind === "none" && f.times.length > 0) f.medianSeconds = median(f.times);
  }
  return out.sort((a, b) => a.medianSeconds - b.medianSeconds);
}

/**
 * The worse of two sets of conditions, field by field: the higher load and
 * steal, the lower CPU frequency and speed probe (a field known in one only is kept).
 *
 * @example
 * ```ts
 * import { worstConditions } from "./finalists.ts";
 * const w = worstConditions({ load1: 0.5, cpuMhz: 2600 }, { load1: 2.1, steal: 0.01, cpuMhz: 2000 });
 * if (w.load1 !== 2.1 || w.steal !== 0.01 || w.cpuMhz !== 2000) throw new Error();
 * ```
 */
export function worstConditions(
  a: MeasureConditions | undefined,
  b: MeasureConditions,
): MeasureConditions {
  const out: MeasureConditions = { ...a };
  const pick = (k: keyof MeasureConditions, f: (x: number, y: number) => number) => {
    const x = a?.[k], y = b[k];
    if (y === undefined || !Number.isFinite(y)) return;
    out[k] = x === undefined || !Number.isFinite(x) ? y : f(x, y);
  };
  pick("load1", Math.max);
  pick("steal", Math.max);
  pick("cpuMhz", Math.min);
  pick("probeGBps", Math.min);
  return out;
}

/**
 * What {@link recordFinalists} writes through: a `RecordsDB`, or any
 * `RecordStore` (datasets/record_store.ts: SQLite, PostgreSQL, memory).
 */
export interface FinalistsWriter {
  /** Records a workload once; its id. */
  upsertWorkload(w: WorkloadInput): number | Promise<number>;
  /** Starts a run; its id. */
  startRun(info: RunInfo): number | Promise<number>;
  /** Records a candidate; its id. */
  addCandidate(runId: number, c: CandidateInput): number | Promise<number>;
  /** Records a candidate's result. */
  addResult(candidateId: number, r: ResultInput): unknown | Promise<unknown>;
  /** Marks a run finished. */
  finishRun(runId: number): void | Promise<void>;
}

/** Who made a finalists run: what {@link recordFinalists} writes besides the figures. */
export interface FinalistsRunInfo {
  /** Target of the runs the finalists came from. */
  target?: string;
  /** Rounds they were timed in. */
  rounds: number;
  /** Runs they were drawn from. */
  from: readonly number[];
  /** The machine they were timed on (as the records database stores it). */
  machine: Record<string, unknown>;
  /** The compiler that built them, as recorded. */
  compiler: string;
  /** Version of tunebook that timed them. */
  tunebookVersion: string;
  /** More of the run's config (the network task, its timing). */
  config?: Record<string, unknown>;
}

/**
 * Writes re-timed finalists as a finished run of {@link FINALISTS_STRATEGY};
 * returns its id.
 */
export async function recordFinalists(
  db: FinalistsWriter,
  w: Workload,
  retimed: readonly RetimedFinalist[],
  info: FinalistsRunInfo,
): Promise<number> {
  const runId = await db.startRun({
    strategy: FINALISTS_STRATEGY,
    seed: 0,
    trials: retimed.length,
    target: info.target ?? "cpu",
    workloadId: await db.upsertWorkload({ name: w.name, shape: w.shape, flops: w.flops }),
    config: {
      ...info.config,
      workload: w.name,
      shape: w.shape,
      strategy: FINALISTS_STRATEGY,
      finalists: { count: retimed.length, rounds: info.rounds, from: info.from },
    },
    machine: info.machine,
    compiler: info.compiler,
    tunebookVersion: info.tunebookVersion,
  });
  for (const [trial, f] of retimed.entries()) {
    const id = await db.addCandidate(runId, {
      trial,
      trace: f.trace,
      // The key a tuning run gives the same trace (tuner/loop.ts).
      traceHash: await traceHash(JSON.parse(f.trace)),
      ...(f.knobs ? { knobs: f.knobs } : {}),
    });
    await db.addResult(id, {
      errorKind: f.errorKind,
      ...(f.error !== undefined ? { error: f.error } : {}),
      times: f.times,
      buildSeconds: 0,
      runSeconds: 0,
      ...(f.conditions ? { conditions: f.conditions } : {}),
    });
  }
  await db.finishRun(runId);
  return runId;
}

/** A workload's best kernel as the records say: see {@link confirmedBest}. */
export interface RecordedBest {
  /** Best latency, seconds. */
  seconds?: number;
  /** Its trace (JSON text). */
  trace?: string;
  /** Trials recorded by tuning runs (re-timings not counted). */
  trials: number;
  /** Whether the best comes from re-timed finalists. */
  confirmed: boolean;
}

/**
 * A workload's best recorded kernel on `target`: the fastest of its newest
 * finalists run when it has one (figures timed in turn, comparable with each
 * other), else the fastest record of any run; and the trials of its tuning
 * runs. Runs with an id above `upTo` are not read.
 *
 * @example
 * ```ts
 * import { RecordsDB } from "../datasets/db.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { confirmedBest } from "./finalists.ts";
 * const db = RecordsDB.open(":memory:", { mode: "create" });
 * const b = confirmedBest(db, matmul(8, 8, 8));
 * if (b.trials !== 0 || b.seconds !== undefined || b.confirmed) throw new Error();
 * db.close();
 * ```
 */
export function confirmedBest(
  db: RecordsDB,
  w: Workload,
  o: { target?: string; upTo?: number } = {},
): RecordedBest {
  return confirmedBests(db, [w], o)[0];
}

/**
 * {@link confirmedBest} of each workload, in one pass over the runs.
 *
 * @example
 * ```ts
 * import { RecordsDB } from "../datasets/db.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { confirmedBests } from "./finalists.ts";
 * const db = RecordsDB.open(":memory:", { mode: "create" });
 * if (confirmedBests(db, [matmul(8, 8, 8), matmul(4, 4, 4)]).length !== 2) throw new Error();
 * db.close();
 * ```
 */
export function confirmedBests(
  db: RecordsDB,
  workloads: readonly Workload[],
  o: { target?: string; upTo?: number } = {},
): RecordedBest[] {
  const target = o.target ?? "cpu";
  const byKey = new Map<string, { best: RecordedBest; newestFinalists?: number }>(
    workloads.map((w) => [workloadKey(w.name, w.shape), { best: { trials: 0, confirmed: false } }]),
  );
  for (const run of db.runs()) {
    if (!sameTarget(run.target, target) || run.id > (o.upTo ?? Infinity)) continue;
    const entry = byKey.get(db.workload(run.workloadId)!.key);
    if (!entry) continue;
    if (run.strategy === FINALISTS_STRATEGY) {
      entry.newestFinalists = run.id;
      continue;
    }
    const out = entry.best;
    out.trials += db.counts(run.id).measured;
    const b = db.best(run.id);
    const s = b?.result.seconds;
    if (b && s && !(out.seconds! <= s)) {
      out.seconds = s;
      out.trace = b.trace;
    }
  }
  for (const { best, newestFinalists } of byKey.values()) {
    const b = newestFinalists === undefined ? undefined : db.best(newestFinalists);
    if (b?.result.seconds) {
      best.seconds = b.result.seconds;
      best.trace = b.trace;
      best.confirmed = true;
    }
  }
  return workloads.map((w) => byKey.get(workloadKey(w.name, w.shape))!.best);
}
