/**
 * Abuse tests of full and read-only media (issue 41, item 6), through the
 * CLI: `export --out /dev/full`, a full tmpfs (export and a new `tune`
 * database), and a records database on a read-only bind mount, which the
 * reading commands open (immutable) and the writing ones refuse. Each exits
 * 2 with one line naming the path and the cause, and leaves nothing behind.
 *
 * The tmpfs and bind mount need root and a working `mount`; without them
 * those tests are ignored (a directory made read-only with chmod is no test
 * for root, who writes there anyway).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { RecordsDB } from "../datasets/db.ts";
import { runScript, type ScriptResult, SHARED_KERNEL_CACHE } from "./_cli.ts";

function cli(script: string, args: string[], cwd: string): Promise<ScriptResult> {
  return runScript(script, args, cwd, SHARED_KERNEL_CACHE);
}

/** Exit status 2 and one line on stderr (no stack trace) matching `pattern`. */
function assertOneLine(r: ScriptResult, pattern: RegExp, what: string): void {
  assert.equal(r.code, 2, `${what}: exit ${r.code}\n${r.stderr}`);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `${what}: one line expected, got:\n${r.stderr}`);
  assert.match(lines[0], pattern, what);
  assert.doesNotMatch(r.stderr, /^\s+at /m, `${what}: stack trace`);
}

/** A records database (WAL mode, as tune leaves it) with one run of `n` measured candidates. */
function recordsDB(path: string, n = 20): string {
  const db = RecordsDB.open(path);
  const wl = db.upsertWorkload({ name: "matmul", shape: [12, 10, 8], flops: 2 * 12 * 10 * 8 });
  const run = db.startRun({
    strategy: "random",
    seed: 1,
    trials: n,
    target: "cpu",
    workloadId: wl,
    config: {
      workload: "matmul",
      shape: [12, 10, 8],
      strategy: "random",
      seed: 1,
      trials: n,
      target: "cpu",
      batch: 4,
      timeoutSeconds: 10,
      timing: { number: 1, repeat: 1, minRepeatMs: 0, warmup: 1 },
    },
    machine: {},
    compiler: "gcc",
    tunebookVersion: "test",
  });
  for (let i = 0; i < n; i++) {
    const c = db.addCandidate(run, { trial: i, trace: JSON.stringify({ i }), traceHash: `h${i}` });
    db.addResult(c, { errorKind: "none", times: [1e-5 * (i + 1)], buildSeconds: 0, runSeconds: 0 });
  }
  db.close();
  return path;
}

async function sh(cmd: string, ...args: string[]): Promise<boolean> {
  try {
    const r = await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output();
    return r.success;
  } catch {
    return false;
  }
}

/** Whether this process may mount a tmpfs (root, with `mount` allowed). */
async function canMount(): Promise<boolean> {
  if (Deno.uid() !== 0) return false;
  const dir = await Deno.makeTempDir({ prefix: "tunebook-mount-probe-" });
  try {
    if (!(await sh("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir))) return false;
    await sh("umount", dir);
    return true;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const mounts = await canMount();
if (!mounts) {
  console.warn("cannot mount a tmpfs here (needs root): full-disk and read-only tests skipped");
}

Deno.test("export --out /dev/full exits 2 naming the path and ENOSPC, and leaves /dev/full a device", async () => {
  const dir = await Deno.makeTempDir();
  try {
    recordsDB(join(dir, "runs.db"));
    for (const format of ["csv", "parquet"]) {
      const r = await cli(
        "cli/export.ts",
        ["--db", "runs.db", "--format", format, "--out", "/dev/full"],
        dir,
      );
      assertOneLine(
        r,
        /^export: Cannot write "\/dev\/full": no space left on device \(ENOSPC\)$/,
        format,
      );
      assert.ok(await sh("test", "-c", "/dev/full"), "/dev/full replaced by a file");
    }
    const ok = await cli(
      "cli/export.ts",
      ["--db", "runs.db", "--format", "csv", "--out", "/dev/null"],
      dir,
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).rows, 20);
    assert.ok(await sh("test", "-c", "/dev/null"), "/dev/null replaced by a file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "on a full tmpfs, export, report, tune (its database or its kernel cache there) exit 2 naming the path and ENOSPC",
  ignore: !mounts,
  async fn() {
    const dir = await Deno.makeTempDir();
    const full = join(dir, "full");
    await Deno.mkdir(full);
    assert.ok(await sh("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full));
    try {
      recordsDB(join(dir, "runs.db"), 400);
      // Fill it up.
      await sh("dd", "if=/dev/zero", `of=${join(full, "fill")}`, "bs=4k");
      const before = [...Deno.readDirSync(full)].map((e) => e.name).sort();
      const exported = await cli(
        "cli/export.ts",
        ["--db", "runs.db", "--format", "jsonl", "--out", "full/x.jsonl"],
        dir,
      );
      assertOneLine(
        exported,
        /^export: Cannot write "full\/x\.jsonl": no space left on device \(ENOSPC\)$/,
        "export",
      );
      const tuned = await cli(
        "cli/tune.ts",
        [
          "--workload",
          "matmul",
          "--shape",
          "16,16,16",
          "--trials",
          "2",
          "--quiet",
          "--db",
          "full/t.db",
        ],
        dir,
      );
      assertOneLine(tuned, /^tune: .*"full\/t\.db".*no space left on device/, "tune");
      const report = await cli("cli/report.ts", ["--db", "runs.db", "--out", "full/rep"], dir);
      assertOneLine(
        report,
        /^report: .*full\/rep\/index\.html.*no space left on device \(ENOSPC\)$/,
        "report",
      );
      // The kernel cache on the full disk, the database elsewhere.
      const cached = await runScript(
        "cli/tune.ts",
        ["--workload", "matmul", "--shape", "16,16,16", "--trials", "2", "--quiet", "--db", "c.db"],
        dir,
        { TUNEBOOK_CACHE: join(full, "cache") },
      );
      assertOneLine(cached, /^tune: .*full\/cache\/.*no space left on device \(ENOSPC\)$/, "cache");
      await Deno.remove(join(full, "rep"), { recursive: true }).catch(() => {});
      await Deno.remove(join(full, "cache"), { recursive: true }).catch(() => {});
      const after = [...Deno.readDirSync(full)].map((e) => e.name).sort();
      assert.deepEqual(after, before, "a half-written export or an empty database left behind");
    } finally {
      await sh("umount", full);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a records database on a read-only bind mount is read by export and report, and refused by tune naming EROFS",
  ignore: !mounts,
  async fn() {
    const dir = await Deno.makeTempDir();
    const src = join(dir, "src"), ro = join(dir, "ro");
    await Deno.mkdir(src);
    await Deno.mkdir(ro);
    const db = recordsDB(join(src, "runs.db"));
    const head = Deno.readFileSync(db).subarray(18, 20);
    assert.deepEqual([...head], [2, 2], "the database is in WAL mode");
    // A copy taken while a writer held commits in its write-ahead log (not merged yet).
    const live = new DatabaseSync(recordsDB(join(dir, "live.db"), 3));
    live.exec("PRAGMA wal_autocheckpoint = 0");
    live.exec("UPDATE runs SET status = 'finished'");
    Deno.copyFileSync(join(dir, "live.db"), join(src, "pending.db"));
    Deno.copyFileSync(join(dir, "live.db-wal"), join(src, "pending.db-wal"));
    live.close();
    assert.ok(Deno.statSync(join(src, "pending.db-wal")).size > 0);
    assert.ok(await sh("mount", "--bind", "-o", "ro", src, ro));
    try {
      const before = Deno.readFileSync(join(ro, "runs.db"));
      const exported = await cli(
        "cli/export.ts",
        ["--db", "ro/runs.db", "--format", "csv", "--out", "x.csv"],
        dir,
      );
      assert.equal(exported.code, 0, exported.stderr);
      assert.equal(JSON.parse(exported.stdout).rows, 20);
      const report = await cli("cli/report.ts", ["--db", "ro/runs.db", "--out", "rep"], dir);
      assert.equal(report.code, 0, report.stderr);
      // Opened immutable, its log would be ignored: refused, saying what to do.
      const pending = await cli(
        "cli/export.ts",
        ["--db", "ro/pending.db", "--format", "csv", "--out", "y.csv"],
        dir,
      );
      assertOneLine(
        pending,
        /^export: .*"ro\/pending\.db".*not merged.*pending\.db-wal/,
        "pending",
      );
      const resumed = await cli("cli/tune.ts", ["--resume", "--db", "ro/runs.db", "--quiet"], dir);
      assertOneLine(resumed, /^tune: .*"ro\/runs\.db".*read-only file system \(EROFS\)/, "resume");
      const created = await cli(
        "cli/tune.ts",
        [
          "--workload",
          "matmul",
          "--shape",
          "16,16,16",
          "--trials",
          "2",
          "--quiet",
          "--db",
          "ro/new.db",
        ],
        dir,
      );
      assertOneLine(created, /^tune: .*"ro\/new\.db".*read-only file system \(EROFS\)/, "new db");
      assert.deepEqual(Deno.readFileSync(join(ro, "runs.db")), before);
      assert.deepEqual(
        [...Deno.readDirSync(ro)].map((e) => e.name).sort(),
        ["pending.db", "pending.db-wal", "runs.db"],
      );
    } finally {
      await sh("umount", ro);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
