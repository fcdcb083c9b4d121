/**
 * A {@link RecordStore} on PostgreSQL (npm `pg`), so that several tuners of a
 * team write one database: `--db postgres://USER@HOST:PORT/DB`. It keeps the
 * promises of the SQLite store: a trace hash is unique within its run (the
 * second add returns the first id, also when two tuners race), a result of a
 * transient error kind is replaced by a later one, any other result is
 * final, `seconds` is the median of the repeats.
 *
 * The tables (`tb_workloads`, `tb_runs`, `tb_candidates`, `tb_results`) are
 * created on first use (a run's config and machine as `json`, not `jsonb`:
 * their key order is kept, and `compare --resume` matches configs by their
 * text), under an advisory lock so that tuners starting
 * together do not race. The password is best given in `PGPASSWORD` (or
 * `~/.pgpass`), not in the URL; TLS with `?sslmode=require`.
 *
 * @example
 * ```ts ignore
 * import { openPostgresRecordStore } from "./postgres_store.ts";
 * const store = await openPostgresRecordStore("postgres://tuner@db.lab:5432/tunebook");
 * console.log((await store.runs()).length);
 * await store.close();
 * ```
 * @module
 */
import pg from "npm:pg@8.23.1";
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
import { DatabaseLostError, displayUrl, isConnectionLoss } from "./postgres_url.ts";
export { DatabaseLostError, displayUrl, isPostgresUrl } from "./postgres_url.ts";

const KINDS: ReadonlySet<string> = new Set(ERROR_KINDS);

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tb_workloads (
  id SERIAL PRIMARY KEY, key TEXT UNIQUE NOT NULL, name TEXT NOT NULL,
  shape INTEGER[] NOT NULL, flops DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS tb_runs (
  id SERIAL PRIMARY KEY, strategy TEXT NOT NULL, seed DOUBLE PRECISION NOT NULL,
  trials INTEGER NOT NULL, target TEXT NOT NULL,
  workload_id INTEGER NOT NULL REFERENCES tb_workloads(id), config JSON NOT NULL,
  machine JSON NOT NULL, compiler TEXT NOT NULL, tunebook_version TEXT NOT NULL,
  created TIMESTAMPTZ NOT NULL DEFAULT now(), finished TIMESTAMPTZ,
  status TEXT NOT NULL DEFAULT 'running');
CREATE TABLE IF NOT EXISTS tb_candidates (
  id SERIAL PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES tb_runs(id),
  trial INTEGER NOT NULL, trace TEXT NOT NULL, trace_hash TEXT NOT NULL, knobs INTEGER[],
  created TIMESTAMPTZ NOT NULL DEFAULT now(), UNIQUE (run_id, trace_hash));
CREATE TABLE IF NOT EXISTS tb_results (
  id SERIAL PRIMARY KEY, candidate_id INTEGER UNIQUE NOT NULL REFERENCES tb_candidates(id),
  error_kind TEXT NOT NULL, error TEXT, times DOUBLE PRECISION[] NOT NULL,
  seconds DOUBLE PRECISION, gflops DOUBLE PRECISION, build_seconds DOUBLE PRECISION NOT NULL,
  run_seconds DOUBLE PRECISION NOT NULL, timestamp TIMESTAMPTZ NOT NULL DEFAULT now());
ALTER TABLE tb_results ADD COLUMN IF NOT EXISTS verify_seconds DOUBLE PRECISION;
ALTER TABLE tb_results ADD COLUMN IF NOT EXISTS strategy_seconds DOUBLE PRECISION;
ALTER TABLE tb_results ADD COLUMN IF NOT EXISTS framework_seconds DOUBLE PRECISION;
ALTER TABLE tb_results ADD COLUMN IF NOT EXISTS load1 DOUBLE PRECISION;
ALTER TABLE tb_results ADD COLUMN IF NOT EXISTS steal DOUBLE PRECISION;
ALTER TABLE tb_results ADD COLUMN IF NOT EXISTS cpu_mhz DOUBLE PRECISION;
ALTER TABLE tb_results ADD COLUMN IF NOT EXISTS probe_gbps DOUBLE PRECISION;
`;

const CANDIDATES = `
SELECT c.id, c.run_id, c.trial, c.trace, c.trace_hash, c.knobs, c.created,
  r.id AS r_id, r.error_kind, r.error, r.times, r.seconds, r.gflops, r.build_seconds,
  r.run_seconds, r.timestamp, r.verify_seconds, r.strategy_seconds, r.framework_seconds, r.load1,
  r.steal, r.cpu_mhz, r.probe_gbps
FROM tb_candidates c LEFT JOIN tb_results r ON r.candidate_id = c.id`;

type Row = Record<string, unknown>;

/** Connects to `url`, creates the tables when missing, and returns the store. */
export async function openPostgresRecordStore(url: string): Promise<RecordStore> {
  const location = displayUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => {}); // An idle client's lost connection: the next query says so.
  // A checked-out client's lost connection: its query rejects (no uncaught "error" event).
  pool.on("connect", (client: pg.PoolClient) => client.on("error", () => {}));
  const fail = (message: string, cause?: unknown): never => {
    throw new DatabaseError(location, message, { cause });
  };
  /** An error of a query: the server gone mid-run is a {@link DatabaseLostError} (resumable). */
  const failQuery = (e: unknown): never => {
    if (e instanceof DatabaseError) throw e;
    const message = (e as Error).message;
    if (isConnectionLoss(e)) {
      throw new DatabaseLostError(
        location,
        `lost the records database ${location}: ${message}`,
        { cause: e },
      );
    }
    return fail(`Records database "${location}": ${message}`, e);
  };
  const query = async (sql: string, params: unknown[] = []): Promise<Row[]> => {
    try {
      return (await pool.query(sql, params)).rows;
    } catch (e) {
      return failQuery(e);
    }
  };
  const client = await pool.connect().catch((e: Error) =>
    fail(`Cannot open records database "${location}": ${e.message}`, e)
  );
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(74657301)");
    await client.query(SCHEMA);
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    fail(`Cannot create the tables of "${location}": ${(e as Error).message}`, e);
  } finally {
    client.release();
  }

  const num = (x: unknown) => x === null || x === undefined ? undefined : Number(x);
  const iso = (d: unknown) => d instanceof Date ? d.toISOString() : d === null ? null : String(d);
  const runOf = (r: Row): RunRow => ({
    id: r.id as number,
    strategy: r.strategy as string,
    seed: r.seed as number,
    trials: r.trials as number,
    target: r.target as string,
    workloadId: r.workload_id as number,
    config: r.config as Record<string, unknown>,
    machine: r.machine as Record<string, unknown>,
    compiler: r.compiler as string,
    tunebookVersion: r.tunebook_version as string,
    created: iso(r.created)!,
    finished: iso(r.finished),
    status: r.status as RunRow["status"],
  });
  const resultOf = (r: Row, id = "id", cid = "candidate_id"): ResultRow => ({
    id: r[id] as number,
    candidateId: r[cid] as number,
    errorKind: r.error_kind as ResultRow["errorKind"],
    error: (r.error as string | null) ?? null,
    times: r.times as number[],
    seconds: r.seconds as number | null,
    gflops: r.gflops as number | null,
    buildSeconds: r.build_seconds as number,
    runSeconds: r.run_seconds as number,
    ...optionalParts({
      verifySeconds: num(r.verify_seconds),
      strategySeconds: num(r.strategy_seconds),
      frameworkSeconds: num(r.framework_seconds),
    }, {
      load1: num(r.load1),
      steal: num(r.steal),
      cpuMhz: num(r.cpu_mhz),
      probeGBps: num(r.probe_gbps),
    }),
    timestamp: iso(r.timestamp)!,
  });
  const candidateOf = (r: Row): CandidateRow => ({
    id: r.id as number,
    runId: r.run_id as number,
    trial: r.trial as number,
    trace: r.trace as string,
    traceHash: r.trace_hash as string,
    knobs: (r.knobs as number[] | null) ?? null,
    created: iso(r.created)!,
    result: r.r_id === null ? null : resultOf(r, "r_id", "id"),
  });
  const ofRun = async (runId: number) =>
    (await query(`${CANDIDATES} WHERE c.run_id = $1 ORDER BY c.trial, c.id`, [runId]))
      .map(candidateOf);

  return {
    location,
    async upsertWorkload(w) {
      const key = workloadKey(w.name, w.shape);
      const rows = await query(
        `INSERT INTO tb_workloads (key, name, shape, flops) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key RETURNING id`,
        [key, w.name, w.shape, w.flops],
      );
      return rows[0].id as number;
    },
    async workload(id) {
      const [r] = await query("SELECT * FROM tb_workloads WHERE id = $1", [id]);
      return r
        ? {
          id: r.id as number,
          key: r.key as string,
          name: r.name as string,
          shape: r.shape as number[],
          flops: r.flops as number,
        } satisfies WorkloadRow
        : undefined;
    },
    async startRun(info) {
      const rows = await query(
        `INSERT INTO tb_runs (strategy, seed, trials, target, workload_id, config, machine,
           compiler, tunebook_version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
        [
          info.strategy,
          info.seed,
          info.trials,
          info.target,
          info.workloadId,
          JSON.stringify(info.config),
          JSON.stringify(info.machine),
          info.compiler,
          info.tunebookVersion,
        ],
      );
      return rows[0].id as number;
    },
    async finishRun(runId) {
      const rows = await query(
        "UPDATE tb_runs SET status = 'finished', finished = now() WHERE id = $1 RETURNING id",
        [runId],
      );
      if (rows.length === 0) fail(`No run ${runId} in records database "${location}"`);
    },
    async run(runId) {
      const [r] = await query("SELECT * FROM tb_runs WHERE id = $1", [runId]);
      return r ? runOf(r) : undefined;
    },
    async lastUnfinishedRun() {
      const [r] = await query(
        "SELECT * FROM tb_runs WHERE status = 'running' ORDER BY id DESC LIMIT 1",
      );
      return r ? runOf(r) : undefined;
    },
    async runs() {
      return (await query("SELECT * FROM tb_runs ORDER BY id")).map(runOf);
    },
    async addCandidate(runId, c) {
      const rows = await query(
        `INSERT INTO tb_candidates (run_id, trial, trace, trace_hash, knobs)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, trace_hash) DO NOTHING RETURNING id`,
        [runId, c.trial, c.trace, c.traceHash, c.knobs ?? null],
      );
      if (rows.length) return rows[0].id as number;
      const [old] = await query(
        "SELECT id FROM tb_candidates WHERE run_id = $1 AND trace_hash = $2",
        [runId, c.traceHash],
      );
      return old.id as number;
    },
    async addResult(candidateId, r) {
      if (!KINDS.has(r.errorKind)) fail(`Unknown error kind "${r.errorKind}"`);
      const c = await pool.connect().catch(failQuery);
      try {
        await c.query("BEGIN");
        const found = await c.query(
          `SELECT w.flops, r.error_kind FROM tb_candidates c
           JOIN tb_runs u ON u.id = c.run_id JOIN tb_workloads w ON w.id = u.workload_id
           LEFT JOIN tb_results r ON r.candidate_id = c.id WHERE c.id = $1 FOR UPDATE OF c`,
          [candidateId],
        );
        const row = found.rows[0] ??
          fail(`No candidate ${candidateId} in records database "${location}"`);
        if (row.error_kind !== null) {
          if (!isTransient(row.error_kind)) {
            fail(`Candidate ${candidateId} already has a result in records database "${location}"`);
          }
          await c.query("DELETE FROM tb_results WHERE candidate_id = $1", [candidateId]);
        }
        const seconds = r.errorKind === "none" && r.times.length > 0 ? median(r.times) : null;
        const gflops = seconds !== null && seconds > 0 ? row.flops / seconds / 1e9 : null;
        const out = await c.query(
          `INSERT INTO tb_results (candidate_id, error_kind, error, times, seconds, gflops,
             build_seconds, run_seconds, verify_seconds, strategy_seconds, framework_seconds,
             load1, steal, cpu_mhz, probe_gbps)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING *`,
          [
            candidateId,
            r.errorKind,
            r.error ?? null,
            r.times,
            seconds,
            gflops,
            r.buildSeconds,
            r.runSeconds,
            r.verifySeconds ?? null,
            r.strategySeconds ?? null,
            r.frameworkSeconds ?? null,
            r.conditions?.load1 ?? null,
            r.conditions?.steal ?? null,
            r.conditions?.cpuMhz ?? null,
            r.conditions?.probeGBps ?? null,
          ],
        );
        await c.query("COMMIT");
        return resultOf(out.rows[0]);
      } catch (e) {
        await c.query("ROLLBACK").catch(() => {});
        return failQuery(e);
      } finally {
        c.release();
      }
    },
    async measured(runId) {
      return new Map(
        (await ofRun(runId)).flatMap((c) => c.result ? [[c.traceHash, c.result] as const] : []),
      );
    },
    candidates: ofRun,
    async counts(runId) {
      const [r] = await query(
        `SELECT count(r.id)::int AS measured,
           count(r.id) FILTER (WHERE r.error_kind = 'none')::int AS valid
         FROM tb_candidates c LEFT JOIN tb_results r ON r.candidate_id = c.id
         WHERE c.run_id = $1`,
        [runId],
      );
      const measured = r.measured as number, valid = r.valid as number;
      return { measured, valid, errors: measured - valid };
    },
    async best(runId) {
      const [r] = await query(
        `${CANDIDATES} WHERE c.run_id = $1 AND r.error_kind = 'none' AND r.seconds IS NOT NULL
         ORDER BY r.seconds, c.trial, c.id LIMIT 1`,
        [runId],
      );
      return r ? candidateOf(r) as CandidateRow & { result: ResultRow } : undefined;
    },
    async close() {
      await pool.end();
    },
  };
}
