/**
 * `compare --db F` keeps the records of every run (strategy x seed) in a
 * SQLite records database, and `--resume` continues the comparison: finished
 * runs are read back, an unfinished one continues where it stopped, missing
 * ones start.
 */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

function compare(args: string[], cwd: string) {
  return runScript("cli/compare.ts", [...args, "--quiet"], cwd, SHARED_KERNEL_CACHE);
}

/** Runs of the database: [strategy, seed, status, results]. */
function runsOf(path: string): [string, number, string, number][] {
  const db = new DatabaseSync(path, { readOnly: true });
  const rows = db.prepare(
    `SELECT r.strategy, r.seed, r.status,
       (SELECT COUNT(*) FROM candidates c JOIN results x ON x.candidate_id = c.id
        WHERE c.run_id = r.id) AS n
     FROM runs r ORDER BY r.id`,
  ).all().map((r) => [r.strategy, r.seed, r.status, r.n] as [string, number, string, number]);
  db.close();
  return rows;
}

/** Marks run `id` unfinished and drops its last `n` results, as a kill would leave it. */
function cut(path: string, id: number, n: number): void {
  const db = new DatabaseSync(path);
  db.exec(`UPDATE runs SET status = 'running', finished = NULL WHERE id = ${id}`);
  db.exec(
    `DELETE FROM results WHERE candidate_id IN (SELECT id FROM candidates WHERE run_id = ${id}
     ORDER BY trial DESC LIMIT ${n})`,
  );
  db.close();
}

Deno.test("compare --db on a replayed cache records every run, and --resume continues a cut one to the same results", async () => {
  const dir = await Deno.makeTempDir();
  const db = join(dir, "c.db");
  const args = [
    "--space",
    "pnpoly_RTX_3090",
    "--strategies",
    "random,sa",
    "--budget",
    "10,30",
    "--seeds",
    "2",
    "--out",
    join(dir, "out"),
  ];
  const first = await compare([...args, "--db", db], dir);
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(runsOf(db), [
    ["random", 0, "finished", 30],
    ["random", 1, "finished", 30],
    ["sa", 0, "finished", 30],
    ["sa", 1, "finished", 30],
  ]);
  const inMemory = await compare(args, dir);
  assert.deepEqual(lastJsonLine(inMemory.stdout).results, lastJsonLine(first.stdout).results);
  cut(db, 3, 12);
  const resumed = await compare([...args, "--db", db, "--resume"], dir);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(runsOf(db).length, 4, "no run started again");
  assert.deepEqual(runsOf(db)[2], ["sa", 0, "finished", 30]);
  assert.deepEqual(lastJsonLine(resumed.stdout).results, lastJsonLine(first.stdout).results);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compare --space matmul:64,64,64 --db F writes records and --resume continues it", async () => {
  const dir = await Deno.makeTempDir();
  const db = join(dir, "live.db");
  const args = ["--space", "matmul:64,64,64", "--strategies", "random,grid", "--budget", "3"];
  const first = await compare([...args, "--seeds", "1", "--db", db], dir);
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(runsOf(db), [["random", 0, "finished", 3], ["grid", 0, "finished", 3]]);
  cut(db, 2, 1);
  // One more seed: the cut run continues, the random run is read back, two runs start.
  const resumed = await compare([...args, "--seeds", "2", "--db", db, "--resume"], dir);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(runsOf(db), [
    ["random", 0, "finished", 3],
    ["grid", 0, "finished", 3],
    ["random", 1, "finished", 3],
    ["grid", 1, "finished", 3],
  ]);
  assert.equal(lastJsonLine(resumed.stdout).results[0].seeds, 2);
  // Each configuration was measured once: every record of it holds the same times.
  const sqlite = new DatabaseSync(db, { readOnly: true });
  const timesOf = new Map<string, Set<string>>();
  for (
    const r of sqlite.prepare(
      "SELECT c.knobs, x.times FROM candidates c JOIN results x ON x.candidate_id = c.id",
    ).all()
  ) {
    const k = String(r.knobs);
    if (!timesOf.has(k)) timesOf.set(k, new Set());
    timesOf.get(k)!.add(String(r.times));
  }
  sqlite.close();
  assert.ok([...timesOf.values()].every((t) => t.size === 1), "a configuration measured twice");
  assert.ok(timesOf.size < 12, "runs share configurations (grid's are the same for every seed)");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compare --resume without --db exits with status 2 and names the flag", async () => {
  const dir = await Deno.makeTempDir();
  const r = await compare(["--space", "pnpoly_RTX_3090", "--resume"], dir);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--resume needs --db/);
  await Deno.remove(dir, { recursive: true });
});
