/**
 * A tuning run's best, confirmed: after the search, the run's `top` fastest
 * distinct valid candidates are timed again in rounds, interleaved, with the
 * same measurer (harness, repeats and minimum repeat time) as the search
 * ({@link retimeFinalists} of finalists.ts, as a network's finalists are).
 * The confirmed figure of each is the median of its rounds; the run reports
 * the finalist with the best confirmed figure, and its first figure beside it.
 *
 * The re-timing is recorded as a finished run of strategy `finalists` whose
 * `config.confirms` is the tuning run's id: the tuning run keeps its trials,
 * its tuning curve and its budget as they were (a re-measurement is not a
 * trial). The tuning run is finished only once its finalists are recorded,
 * so a run stopped during the re-timing resumes and does it again.
 *
 * @example
 * ```ts
 * import { confirmRun } from "./confirm.ts";
 * import { RecordsDB } from "../datasets/db.ts";
 * import type { Measurer } from "../measure/measurer.ts";
 * import { createPrng } from "../ir/prng.ts";
 * import { Schedule } from "../ir/schedule.ts";
 * import { traceHash, traceOf } from "../ir/trace.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const w = matmul(8, 8, 8);
 * const db = RecordsDB.open(":memory:");
 * const run = db.startRun({
 *   strategy: "random", seed: 1, trials: 2, target: "cpu", config: {}, machine: {},
 *   compiler: "gcc", tunebookVersion: "0",
 *   workloadId: db.upsertWorkload({ name: w.name, shape: w.shape, flops: w.flops }),
 * });
 * // Two traces: [0] recorded at a lucky 1 ms, [1] at 2 ms; re-timed, [0] takes 3 ms, [1] 2 ms.
 * for (const k of [0, 1]) {
 *   const sch = new Schedule(w, { prng: createPrng(0) });
 *   sch.split("C", "i", [null, 2 ** k]);
 *   const t = traceOf(sch);
 *   const id = db.addCandidate(run, { trial: k, trace: JSON.stringify(t), traceHash: await traceHash(t), knobs: [k] });
 *   db.addResult(id, { errorKind: "none", times: [(k + 1) * 1e-3], buildSeconds: 0, runSeconds: 0 });
 * }
 * const measurer: Measurer = {
 *   name: "fake",
 *   measure: (batch) =>
 *     Promise.resolve(batch.map((c) => ({
 *       errorKind: "none" as const, times: [c.knobs![0] === 0 ? 3e-3 : 2e-3], buildSeconds: 0, runSeconds: 0,
 *     }))),
 * };
 * const c = await confirmRun(db, { runId: run, workload: w, measurer, top: 3, rounds: 3 });
 * if (c?.best?.trial !== 1 || c.best.seconds !== 2e-3 || c.best.firstSeconds !== 2e-3) throw new Error();
 * if (db.counts(run).measured !== 2) throw new Error("a re-measurement is not a trial");
 * db.close();
 * ```
 * @module
 */
import type { CandidateRow, RunRow } from "../datasets/db.ts";
import { describeMachine, tunebookVersion } from "../datasets/machine.ts";
import type { Measurer } from "../measure/measurer.ts";
import type { Workload } from "../ir/workloads.ts";
import { canonicalJSON } from "../ir/trace.ts";
import {
  fastestDistinct,
  FINALISTS_STRATEGY,
  type FinalistsWriter,
  recordFinalists,
  retimeFinalists,
} from "./finalists.ts";

/** One finalist of a tuning run, as confirmed. */
export interface ConfirmedFinalist {
  /** Trace hash, as the finalists run recorded it. */
  traceHash: string;
  /** Its candidate in the tuning run (null when the tuning run has none with that hash). */
  candidateId: number | null;
  /** Its trial in the tuning run, from 0 (null as `candidateId`). */
  trial: number | null;
  /** Seconds as the search recorded them (its first figure). */
  firstSeconds: number | null;
  /** Median over the re-timed rounds, seconds; null when it failed a round. */
  seconds: number | null;
  /** Its figure of each round, seconds. */
  rounds: number[];
}

/** A tuning run's confirmation: its finalists run read back. */
export interface Confirmation {
  /** Id of the finalists run. */
  runId: number;
  /** Rounds of the re-timing. */
  rounds: number;
  /** The finalists, best confirmed figure first (failed ones last). */
  finalists: ConfirmedFinalist[];
  /** The finalist with the best confirmed figure (undefined when all failed). */
  best?: ConfirmedFinalist;
}

/**
 * The newest finished finalists run that confirms run `runId`, if any.
 *
 * @example
 * ```ts
 * import { confirmingRun } from "./confirm.ts";
 * if (confirmingRun([], 1) !== undefined) throw new Error();
 * ```
 */
export function confirmingRun(runs: readonly RunRow[], runId: number): RunRow | undefined {
  return runs.findLast((r) =>
    r.strategy === FINALISTS_STRATEGY && r.status === "finished" && r.config?.confirms === runId
  );
}

/**
 * The run a finalists run confirms (its `config.confirms`), or undefined for
 * any other run (a network's finalists confirm no one run).
 *
 * @example
 * ```ts
 * import { confirmedRunOf } from "./confirm.ts";
 * if (confirmedRunOf({ strategy: "random", config: { confirms: 1 } }) !== undefined) throw new Error();
 * ```
 */
export function confirmedRunOf(run: Pick<RunRow, "strategy" | "config">): number | undefined {
  const id = run.config?.confirms;
  return run.strategy === FINALISTS_STRATEGY && typeof id === "number" ? id : undefined;
}

/**
 * Reads a confirmation from its finalists run's candidates and those of the
 * tuning run it confirms.
 *
 * @example
 * ```ts
 * import { confirmationOf } from "./confirm.ts";
 * const run = { id: 2, config: { finalists: { rounds: 3 } } };
 * const c = confirmationOf(run, [], []);
 * if (c.runId !== 2 || c.rounds !== 3 || c.best !== undefined) throw new Error();
 * ```
 */
export function confirmationOf(
  finalistsRun: Pick<RunRow, "id" | "config">,
  tuned: readonly CandidateRow[],
  finals: readonly CandidateRow[],
): Confirmation {
  // Matched by the trace itself (a run may key its candidates by another hash).
  const same = (c: CandidateRow) =>
    c.trace === "null" ? c.traceHash : canonicalJSON(JSON.parse(c.trace));
  const byTrace = new Map(tuned.map((c) => [same(c), c]));
  const finalists = finals.map((f): ConfirmedFinalist => {
    const t = byTrace.get(same(f));
    const ok = f.result?.errorKind === "none" && f.result.seconds !== null;
    return {
      traceHash: f.traceHash,
      candidateId: t?.id ?? null,
      trial: t?.trial ?? null,
      firstSeconds: t?.result?.seconds ?? null,
      seconds: ok ? f.result!.seconds : null,
      rounds: ok ? f.result!.times : [],
    };
  }).sort((a, b) => (a.seconds ?? Infinity) - (b.seconds ?? Infinity));
  const config = finalistsRun.config?.finalists as { rounds?: number } | undefined;
  return {
    runId: finalistsRun.id,
    rounds: config?.rounds ?? 0,
    finalists,
    ...(finalists[0]?.seconds != null ? { best: finalists[0] } : {}),
  };
}

/**
 * The confirmation of run `runId` in a synchronous reader (a `RecordsDB`,
 * a `RecordsReader`), if it has one.
 *
 * @example
 * ```ts
 * import { confirmationIn } from "./confirm.ts";
 * import { RecordsDB } from "../datasets/db.ts";
 * const db = RecordsDB.open(":memory:");
 * if (confirmationIn(db, 1) !== undefined) throw new Error();
 * db.close();
 * ```
 */
export function confirmationIn(
  db: { runs(): RunRow[]; candidates(runId: number): CandidateRow[] },
  runId: number,
): Confirmation | undefined {
  const run = confirmingRun(db.runs(), runId);
  return run ? confirmationOf(run, db.candidates(runId), db.candidates(run.id)) : undefined;
}

type Awaitable<T> = T | Promise<T>;

/** What {@link readConfirmation} and {@link confirmRun} read: a `RecordsDB` or a `RecordStore`. */
export interface ConfirmationReader {
  /** All runs, oldest first. */
  runs(): Awaitable<RunRow[]>;
  /** The candidates of a run with their results. */
  candidates(runId: number): Awaitable<CandidateRow[]>;
}

/**
 * The confirmation of run `runId` (its newest finalists run), if it has one.
 *
 * @example
 * ```ts
 * import { readConfirmation } from "./confirm.ts";
 * import { RecordsDB } from "../datasets/db.ts";
 * const db = RecordsDB.open(":memory:");
 * if (await readConfirmation(db, 1) !== undefined) throw new Error();
 * db.close();
 * ```
 */
export async function readConfirmation(
  store: ConfirmationReader,
  runId: number,
): Promise<Confirmation | undefined> {
  const run = confirmingRun(await store.runs(), runId);
  if (!run) return undefined;
  return confirmationOf(run, await store.candidates(runId), await store.candidates(run.id));
}

/** Options of {@link confirmRun}. */
export interface ConfirmOptions {
  /** The tuning run whose finalists are re-timed. */
  runId: number;
  /** Its workload. */
  workload: Workload;
  /** The run's own measurer (the search's harness and timing). */
  measurer: Measurer;
  /** Finalists: the run's fastest distinct valid candidates. */
  top: number;
  /** Rounds; each times every finalist once, the order rotated by one each round. */
  rounds: number;
  /** Target of the run. Default `"cpu"`. */
  target?: string;
  /** Machine recorded with the finalists run. Default: this one. */
  machine?: Record<string, unknown>;
  /** Compiler recorded with it. Default `""`. */
  compiler?: string;
  /** More of the finalists run's config (the run's timing). Default none. */
  config?: Record<string, unknown>;
  /** Called after each round; a throw stops the re-timing, nothing recorded. Default nothing. */
  onRound?: (round: number) => void;
}

/**
 * Re-times run `runId`'s finalists and records them as a finalists run that
 * confirms it; returns the confirmation (undefined when the run has no valid
 * candidate). See the module documentation.
 */
export async function confirmRun(
  store: FinalistsWriter & ConfirmationReader,
  o: ConfirmOptions,
): Promise<Confirmation | undefined> {
  const tuned = await store.candidates(o.runId);
  const picked = fastestDistinct(tuned, o.top);
  if (picked.length === 0) return undefined;
  const retimed = await retimeFinalists(picked, o.measurer, o.rounds, o.onRound);
  const id = await recordFinalists(store, o.workload, retimed, {
    target: o.target ?? "cpu",
    rounds: o.rounds,
    from: [o.runId],
    machine: o.machine ?? describeMachine(),
    compiler: o.compiler ?? "",
    tunebookVersion: await tunebookVersion(),
    config: { ...o.config, confirms: o.runId },
  });
  const runs = await store.runs();
  const run = runs.find((r) => r.id === id)!;
  return confirmationOf(run, tuned, await store.candidates(id));
}
