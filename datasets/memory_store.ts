/**
 * A {@link RecordStore} in memory: the records of `compare` when no `--db`
 * is given, and of tests. It keeps the promises of the SQLite store (unique
 * trace hash per run, transient results replaced, other results final,
 * `seconds` the median of the repeats) and loses everything when the
 * process ends.
 *
 * @example
 * ```ts
 * import { createMemoryRecordStore } from "./memory_store.ts";
 * const store = createMemoryRecordStore();
 * const workloadId = await store.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
 * const run = await store.startRun({
 *   strategy: "random", seed: 1, trials: 1, target: "cpu", workloadId,
 *   config: {}, machine: {}, compiler: "gcc", tunebookVersion: "0",
 * });
 * const id = await store.addCandidate(run, { trial: 0, trace: "{}", traceHash: "h" });
 * await store.addResult(id, { errorKind: "none", times: [1e-6], buildSeconds: 0, runSeconds: 0 });
 * if ((await store.best(run))?.result.gflops !== 1.024) throw new Error();
 * ```
 * @module
 */
import { ERROR_KINDS, isTransient } from "../ir/error_kind.ts";
import {
  type CandidateRow,
  DatabaseError,
  median,
  optionalParts,
  type ResultRow,
  type RunRow,
  workloadKey,
  type WorkloadRow,
} from "./db.ts";
import type { RecordStore } from "./record_store.ts";

const LOCATION = ":memory:";
const KINDS: ReadonlySet<string> = new Set(ERROR_KINDS);

/** Creates an empty in-memory {@link RecordStore}. */
export function createMemoryRecordStore(): RecordStore {
  const workloads: WorkloadRow[] = [];
  const runs: RunRow[] = [];
  /** Candidates by id (1-based: index id - 1), each with its run's hash index. */
  const candidates: CandidateRow[] = [];
  const byHash = new Map<number, Map<string, CandidateRow>>();
  let results = 0;
  const now = () => new Date().toISOString();
  const fail = (message: string): never => {
    throw new DatabaseError(LOCATION, message);
  };
  const copy = <T>(x: T): T => structuredClone(x);
  // The hot path (a result per trial, a run's candidates) copies by hand: structuredClone is slow.
  const copyResult = (r: ResultRow): ResultRow => ({
    ...r,
    times: [...r.times],
    ...(r.conditions ? { conditions: { ...r.conditions } } : {}),
  });
  const copyCandidate = (c: CandidateRow): CandidateRow => ({
    ...c,
    knobs: c.knobs && [...c.knobs],
    result: c.result && copyResult(c.result),
  });
  const ofRun = (runId: number) =>
    [...(byHash.get(runId)?.values() ?? [])].sort((a, b) => a.trial - b.trial || a.id - b.id);
  const later = <T>(f: () => T): Promise<T> => Promise.resolve().then(f);

  return {
    location: LOCATION,
    upsertWorkload: (w) =>
      later(() => {
        const key = workloadKey(w.name, w.shape);
        const old = workloads.find((x) => x.key === key);
        if (old) return old.id;
        workloads.push({ ...copy(w), id: workloads.length + 1, key });
        return workloads.length;
      }),
    workload: (id) => later(() => copy(workloads[id - 1])),
    startRun: (info) =>
      later(() => {
        if (!workloads[info.workloadId - 1]) fail(`No workload ${info.workloadId} in ${LOCATION}`);
        runs.push({
          ...copy(info),
          id: runs.length + 1,
          created: now(),
          finished: null,
          status: "running",
        });
        byHash.set(runs.length, new Map());
        return runs.length;
      }),
    finishRun: (runId) =>
      later(() => {
        const run = runs[runId - 1] ?? fail(`No run ${runId} in records database "${LOCATION}"`);
        run.status = "finished";
        run.finished = now();
      }),
    run: (runId) => later(() => copy(runs[runId - 1])),
    lastUnfinishedRun: () => later(() => copy(runs.findLast((r) => r.status === "running"))),
    runs: () => later(() => copy(runs)),
    addCandidate: (runId, c) =>
      later(() => {
        const hashes = byHash.get(runId) ?? fail(`No run ${runId} in ${LOCATION}`);
        const old = hashes.get(c.traceHash);
        if (old) return old.id;
        const row: CandidateRow = {
          id: candidates.length + 1,
          runId,
          trial: c.trial,
          trace: c.trace,
          traceHash: c.traceHash,
          knobs: c.knobs === undefined ? null : [...c.knobs],
          created: now(),
          result: null,
        };
        candidates.push(row);
        hashes.set(c.traceHash, row);
        return row.id;
      }),
    addResult: (candidateId, r) =>
      later(() => {
        if (!KINDS.has(r.errorKind)) fail(`Unknown error kind "${r.errorKind}"`);
        const c = candidates[candidateId - 1] ??
          fail(`No candidate ${candidateId} in records database "${LOCATION}"`);
        if (c.result && !isTransient(c.result.errorKind)) {
          fail(`Candidate ${candidateId} already has a result in records database "${LOCATION}"`);
        }
        const flops = workloads[runs[c.runId - 1].workloadId - 1].flops;
        const seconds = r.errorKind === "none" && r.times.length > 0 ? median(r.times) : null;
        c.result = {
          id: ++results,
          candidateId,
          errorKind: r.errorKind,
          error: r.error ?? null,
          times: [...r.times],
          seconds,
          gflops: seconds !== null && seconds > 0 ? flops / seconds / 1e9 : null,
          buildSeconds: r.buildSeconds,
          runSeconds: r.runSeconds,
          ...optionalParts({
            verifySeconds: r.verifySeconds,
            strategySeconds: r.strategySeconds,
            frameworkSeconds: r.frameworkSeconds,
          }, {
            load1: r.conditions?.load1,
            steal: r.conditions?.steal,
            cpuMhz: r.conditions?.cpuMhz,
            probeGBps: r.conditions?.probeGBps,
          }),
          timestamp: now(),
        };
        return copyResult(c.result);
      }),
    measured: (runId) =>
      later(() =>
        new Map(
          ofRun(runId).flatMap((c) =>
            c.result ? [[c.traceHash, copyResult(c.result)] as const] : []
          ),
        )
      ),
    candidates: (runId) => later(() => ofRun(runId).map(copyCandidate)),
    counts: (runId) =>
      later(() => {
        const measured = ofRun(runId).filter((c) => c.result);
        const valid = measured.filter((c) => c.result!.errorKind === "none").length;
        return { measured: measured.length, valid, errors: measured.length - valid };
      }),
    best: (runId) =>
      later(() => {
        let best: (CandidateRow & { result: ResultRow }) | undefined;
        for (const c of ofRun(runId)) {
          const s = c.result?.errorKind === "none" ? c.result.seconds : null;
          if (s !== null && s !== undefined && (!best || s < best.result.seconds!)) {
            best = c as CandidateRow & { result: ResultRow };
          }
        }
        return best && (copyCandidate(best) as CandidateRow & { result: ResultRow });
      }),
    close: () => Promise.resolve(),
  };
}
