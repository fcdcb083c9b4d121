/**
 * Abuse tests of the records database and of bad input, run as a user would
 * (through the CLI): every bad flag, file or database exits with status 2
 * and one line naming it, and every database involved is left intact or
 * byte-identical; `--help` exits 0; an interrupted run stays resumable.
 */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { ROOT, runScript, type ScriptResult, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { scriptArgs } from "../cli/script.ts";

function cli(script: string, args: string[], cwd: string): Promise<ScriptResult> {
  return runScript(script, args, cwd, SHARED_KERNEL_CACHE);
}

/** Exit status 2 and one line on stderr (no stack trace) matching `pattern`. */
function assertBadInput(r: ScriptResult, pattern: RegExp, what: string): void {
  assert.equal(r.code, 2, `${what}: exit ${r.code}\n${r.stderr}`);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `${what}: one line expected, got:\n${r.stderr}`);
  assert.match(lines[0], pattern, what);
  assert.doesNotMatch(r.stderr, /^\s+at /m, `${what}: stack trace`);
}

/** Every file of a directory (by name) with its bytes. */
function listing(dir: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const e of Deno.readDirSync(dir)) {
    if (e.isFile) out.set(e.name, Deno.readFileSync(join(dir, e.name)));
  }
  return out;
}

/** A records database with one unfinished run whose stored config `tune --resume` accepts. */
function recordsDB(path: string): string {
  const db = RecordsDB.open(path);
  const wl = db.upsertWorkload({ name: "matmul", shape: [12, 10, 8], flops: 2 * 12 * 10 * 8 });
  const run = db.startRun({
    strategy: "random",
    seed: 1,
    trials: 60,
    target: "cpu",
    workloadId: wl,
    config: {
      workload: "matmul",
      shape: [12, 10, 8],
      strategy: "random",
      seed: 1,
      trials: 60,
      target: "cpu",
      batch: 4,
      timeoutSeconds: 10,
      timing: { number: 1, repeat: 1, minRepeatMs: 0, warmup: 1 },
    },
    machine: {},
    compiler: "gcc",
    tunebookVersion: "test",
  });
  for (let i = 0; i < 40; i++) {
    const c = db.addCandidate(run, {
      trial: i,
      trace: JSON.stringify({ pad: "x".repeat(200), i }),
      traceHash: `h${i}`,
    });
    db.addResult(c, { errorKind: "none", times: [1e-5 * (i + 1)], buildSeconds: 0, runSeconds: 0 });
  }
  db.close();
  return path;
}

/** A SQLite file of another program (rollback journal, as most are). */
function foreignDB(path: string): string {
  const raw = new DatabaseSync(path);
  raw.exec("CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT)");
  raw.exec("INSERT INTO contacts (name) VALUES ('Ada'), ('Grace')");
  raw.close();
  return path;
}

Deno.test("output commands refuse an --out that is the database, a link to it, a side file, another SQLite file or a directory", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const db = recordsDB(join(dir, "runs.db"));
    const other = foreignDB(join(dir, "other.sqlite"));
    await Deno.symlink(db, join(dir, "link.csv"));
    await Deno.mkdir(join(dir, "adir"));
    await Deno.mkdir(join(dir, "rep"));
    await Deno.symlink(db, join(dir, "rep", "index.html"));
    await Deno.writeTextFile(join(dir, "afile"), "keep me\n");
    const before = listing(dir);
    const cases: [string, string[], RegExp][] = [
      ["cli/export.ts", ["--format", "csv", "--out", "runs.db"], /--out "runs.db" is the records/],
      ["cli/export.ts", ["--format", "jsonl", "--out", "./sub/../runs.db"], /is the records/],
      ["cli/export.ts", ["--format", "csv", "--out", "link.csv"], /is the records database/],
      ["cli/export.ts", ["--format", "csv", "--out", "runs.db-wal"], /its -wal file/],
      ["cli/export.ts", ["--format", "parquet", "--out", "other.sqlite"], /SQLite database/],
      ["cli/export.ts", ["--format", "csv", "--out", "adir"], /--out "adir" is a directory/],
      ["cli/export.ts", ["--format", "csv", "--out", "afile/x.csv"], /is a file, not a dir/],
      ["cli/report.ts", ["--out", "afile"], /--out "afile" is a file, not a directory/],
      ["cli/report.ts", ["--out", "rep"], /index.html" is the records database/],
    ];
    for (const [script, args, pattern] of cases) {
      const r = await cli(script, ["--db", "runs.db", ...args], dir);
      assertBadInput(r, pattern, `${script} ${args.join(" ")}`);
    }
    assert.deepEqual(listing(dir), before, "every file byte-identical, none added");
    assert.equal(new DatabaseSync(other).prepare("SELECT count(*) AS n FROM contacts").get()!.n, 2);
    const ok = await cli(
      "cli/export.ts",
      ["--db", "runs.db", "--format", "csv", "--out", "afile"],
      dir,
    );
    assert.equal(ok.code, 0, ok.stderr); // an ordinary file may be replaced by an export
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reading commands refuse a missing database and create none", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cases: [string, string[]][] = [
      ["cli/export.ts", ["--db", "nope.db", "--format", "csv", "--out", "x.csv"]],
      ["cli/report.ts", ["--db", "nope.db", "--out", "rep"]],
      ["cli/reproduce.ts", ["--db", "nope.db", "--run", "1"]],
      ["cli/costmodel_eval.ts", ["--db", "nope.db"]],
      ["cli/tune.ts", ["--resume", "--db", "nope.db"]],
      ["cli/tune.ts", ["--resume", "--db", "sub/nope.db"]],
    ];
    for (const [script, args] of cases) {
      assertBadInput(await cli(script, args, dir), /nope\.db/, `${script} ${args.join(" ")}`);
    }
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing created");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no command writes to another program's SQLite file or to a non-SQLite file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    foreignDB(join(dir, "app.db"));
    await Deno.writeTextFile(join(dir, "notes.db"), "id,name\n1,Ada\n");
    const before = listing(dir);
    const files: [string, RegExp][] = [
      ["app.db", /another program's SQLite/],
      ["notes.db", /not an SQLite/],
    ];
    for (const [file, pattern] of files) {
      const cases: [string, string[]][] = [
        ["cli/tune.ts", [
          "--workload",
          "matmul",
          "--shape",
          "8,8,8",
          "--trials",
          "1",
          "--db",
          file,
        ]],
        ["cli/tune.ts", ["--resume", "--db", file]],
        ["cli/export.ts", ["--db", file, "--format", "csv", "--out", "x.csv"]],
        ["cli/report.ts", ["--db", file, "--out", "rep"]],
        ["cli/reproduce.ts", ["--db", file, "--run", "1"]],
        ["cli/costmodel_eval.ts", ["--db", file, "--out", "cm"]],
      ];
      for (const [script, args] of cases) {
        const r = await cli(script, args as string[], dir);
        assertBadInput(r, pattern as RegExp, `${script} ${args.join(" ")}`);
        assert.match(r.stderr, new RegExp(file.replace(".", "\\.")));
      }
    }
    assert.deepEqual(listing(dir), before, "both files byte-identical, nothing added");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a garbled page or bad JSON in runs.config exits 2 naming the file or the field", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const garbled = recordsDB(join(dir, "garbled.db"));
    const bytes = Deno.readFileSync(garbled);
    for (let i = 4096; i < bytes.length; i++) bytes[i] = (i * 131) & 0xff;
    Deno.writeFileSync(garbled, bytes);
    const badJson = recordsDB(join(dir, "badjson.db"));
    const raw = new DatabaseSync(badJson);
    raw.exec("UPDATE runs SET config = '{\"workload\": '");
    raw.close();
    const before = listing(dir);
    for (
      const [db, pattern] of [
        ["garbled.db", /garbled\.db.*damaged/],
        ["badjson.db", /badjson\.db.*run 1: field config is not valid JSON/],
      ] as const
    ) {
      const cases: [string, string[]][] = [
        ["cli/tune.ts", ["--resume", "--db", db]],
        ["cli/export.ts", ["--db", db, "--format", "csv", "--out", "x.csv"]],
        ["cli/report.ts", ["--db", db, "--out", "rep"]],
        ["cli/reproduce.ts", ["--db", db, "--run", "1"]],
      ];
      if (db === "garbled.db") cases.push(["cli/costmodel_eval.ts", ["--db", db, "--out", "cm"]]);
      for (const [script, args] of cases) {
        assertBadInput(await cli(script, args, dir), pattern as RegExp, `${script} ${db}`);
      }
    }
    const after = listing(dir);
    assert.deepEqual(after.get("garbled.db"), before.get("garbled.db"), "garbled db untouched");
    assert.deepEqual(after.get("badjson.db"), before.get("badjson.db"), "bad-JSON db untouched");
    assert.ok(!after.has("x.csv") && !after.has("rep") && !after.has("cm"), "no output written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** The command line to run a script as user nobody when this process is root (file modes bind only other users). */
async function asUnprivileged(): Promise<string[] | undefined> {
  if (Deno.uid() !== 0) return [];
  try {
    const r = await new Deno.Command("setpriv", { args: ["--version"], stdout: "null" }).output();
    return r.success ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : undefined;
  } catch {
    return undefined;
  }
}

Deno.test("a read-only database can be exported but not resumed, and stays byte-identical", async () => {
  const prefix = await asUnprivileged();
  if (prefix === undefined) {
    throw new Error("running as root without setpriv: cannot make a file read-only");
  }
  const dir = await Deno.makeTempDir();
  try {
    await Deno.chmod(dir, 0o777);
    const db = recordsDB(join(dir, "ro.db"));
    await Deno.chmod(db, 0o444);
    const before = Deno.readFileSync(db);
    const run = async (script: string, args: string[]) => {
      const [cmd, ...pre] = [...prefix, Deno.execPath()];
      const out = await new Deno.Command(cmd, {
        args: [...pre, ...scriptArgs(script, args)],
        cwd: dir,
        env: SHARED_KERNEL_CACHE,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const dec = new TextDecoder();
      return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
    };
    const resumed = await run("cli/tune.ts", ["--resume", "--db", "ro.db", "--quiet"]);
    assertBadInput(resumed, /ro\.db.*read-only/, "tune --resume on a read-only database");
    const exported = await run("cli/export.ts", [
      "--db",
      "ro.db",
      "--format",
      "csv",
      "--out",
      "ro.csv",
    ]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.equal(lastJsonLine(exported.stdout).rows, 40);
    assert.deepEqual(Deno.readFileSync(db), before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--help prints the usage on stdout and exits 0 for every command", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (
      const script of [
        "cli/tune.ts",
        "cli/export.ts",
        "cli/report.ts",
        "cli/reproduce.ts",
        "cli/costmodel_eval.ts",
        "cli/compare.ts",
        "cli/study.ts",
      ]
    ) {
      const r = await cli(script, ["--help"], dir);
      assert.equal(r.code, 0, `${script}: ${r.stderr}`);
      assert.match(r.stdout, /^usage: deno task [\w-]+ /, script);
      assert.match(r.stdout, /--help/, script);
      assert.equal(r.stderr, "", script);
    }
    assert.deepEqual([...Deno.readDirSync(dir)], [], "--help writes nothing");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compare names the flag of a bad value and refuses an empty strategy list", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cases: [string[], RegExp][] = [
      [["--budget", "abc"], /^compare: --budget: value 1 "abc" is not an integer$/],
      [["--budget", "10,x"], /--budget: value 2 "x"/],
      [["--seeds", "-3"], /--seeds/],
      [["--strategies", ""], /--strategies names no strategy/],
      [["--strategies", " , "], /--strategies names no strategy/],
      [["--space", "matmul:16,16,16", "--template", "nope"], /--template nope/],
    ];
    for (const [args, pattern] of cases) {
      const full = args.includes("--space") ? args : ["--space", "gemm_RTX_3090", ...args];
      assertBadInput(
        await cli("cli/compare.ts", [...full, "--quiet"], dir),
        pattern,
        args.join(" "),
      );
    }
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Starts `tune` as a child process (stdout and stderr to files in `dir`). */
function spawnTune(
  args: string[],
  dir: string,
  viaTask = false,
  { script = "cli/tune.ts", cache = "cache" } = {},
): Deno.ChildProcess {
  const out = Deno.openSync(join(dir, "tune.out"), { write: true, create: true, truncate: true });
  const err = Deno.openSync(join(dir, "tune.err"), { write: true, create: true, truncate: true });
  out.close();
  err.close();
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const line = viaTask
    ? `cd ${quote(ROOT)} && exec ${quote(Deno.execPath())} task --quiet tune ${
      args.map(quote).join(" ")
    }`
    : `exec ${[Deno.execPath(), ...scriptArgs(script, args)].map(quote).join(" ")}`;
  return new Deno.Command("sh", {
    args: ["-c", `${line} > ${quote(join(dir, "tune.out"))} 2> ${quote(join(dir, "tune.err"))}`],
    cwd: dir,
    env: { TUNEBOOK_CACHE: join(dir, cache) },
    stdin: "null",
  }).spawn();
}

/** Results recorded so far in `path` (0 while it does not exist yet). */
function results(path: string): number {
  try {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return Number(db.prepare("SELECT count(*) AS n FROM results").get()!.n);
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

async function waitFor(what: string, ok: () => boolean, seconds = 240): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether process `pid` still runs (a zombie waiting to be reaped does not). */
function alive(pid: number): boolean {
  const ps = new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)], stdout: "piped" });
  const state = new TextDecoder().decode(ps.outputSync().stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

const TUNE_ARGS = [
  "--workload",
  "matmul",
  "--shape",
  "24,20,16",
  "--trials",
  "30",
  "--batch",
  "2",
  "--repeat",
  "1",
  "--min-repeat-ms",
  "0",
  "--unity",
  "2",
  "--quiet",
];

Deno.test("Ctrl-C stops tune resumably and prints the resume command; the resume refuses contradicting flags", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const db = join(dir, "r.db");
    const child = spawnTune([...TUNE_ARGS, "--db", db], dir);
    await waitFor("two results", () => results(db) >= 2);
    Deno.kill(child.pid, "SIGINT");
    assert.equal((await child.status).code, 130, Deno.readTextFileSync(join(dir, "tune.err")));
    const err = Deno.readTextFileSync(join(dir, "tune.err"));
    const resume = err.match(/resume with: deno task tune (--resume --run 1 --db \S+)$/m);
    assert.ok(resume, err);
    const raw = new DatabaseSync(db, { readOnly: true });
    const row = raw.prepare("SELECT status, config FROM runs").get()!;
    const before = raw.prepare("SELECT * FROM results ORDER BY id").all();
    raw.close();
    assert.equal(row.status, "running");
    assert.equal(JSON.parse(String(row.config)).unity, 2, "--unity is stored");
    assert.ok(before.length < 30, `${before.length} results`);

    const env = { TUNEBOOK_CACHE: join(dir, "cache") };
    for (
      const [args, pattern] of [
        [["--trials", "31"], /--trials 31 contradicts run 1, which was started with --trials 30/],
        [["--shape", "8,8,8"], /--shape 8,8,8 contradicts/],
        [["--unity", "1"], /--unity 1 contradicts/],
        [["--timeout", "3"], /--timeout 3 contradicts/],
        [["--run", "2"], /--run 2: no run 2/],
      ] as const
    ) {
      const r = await runScript("cli/tune.ts", ["--resume", "--db", db, ...args], dir, env);
      assertBadInput(r, pattern, args.join(" "));
    }
    const args = resume[1].split(" ").slice(0, -1).concat(db);
    const r = await runScript("cli/tune.ts", [...args, "--unity", "2", "--quiet"], dir, env);
    assert.equal(r.code, 0, r.stderr);
    const summary = lastJsonLine(r.stdout);
    assert.equal(summary.valid + summary.errors, 30);
    const after = new DatabaseSync(db, { readOnly: true });
    // Run 1's records (run 2 holds its finalists, timed again after the search).
    const rows = after.prepare(
      "SELECT r.* FROM results r JOIN candidates c ON c.id = r.candidate_id WHERE c.run_id = 1 ORDER BY r.id",
    ).all();
    const hashes = after.prepare("SELECT trace_hash FROM candidates WHERE run_id = 1").all().map((
      x,
    ) => x.trace_hash);
    assert.equal(after.prepare("SELECT status FROM runs WHERE id = 1").get()!.status, "finished");
    after.close();
    assert.equal(rows.length, 30);
    assert.deepEqual(rows.slice(0, before.length), before, "earlier records untouched");
    assert.equal(new Set(hashes).size, hashes.length, "no candidate twice");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM to deno task reaches tune, which stops resumably", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const db = join(dir, "r.db");
    const child = spawnTune([...TUNE_ARGS, "--db", db], dir, true);
    await waitFor("two results", () => results(db) >= 2);
    Deno.kill(child.pid, "SIGTERM"); // sh exec'd deno task: this is the task runner
    await child.status;
    const err = Deno.readTextFileSync(join(dir, "tune.err"));
    assert.match(err, /tune: terminated \(SIGTERM\)/);
    assert.match(err, /resume with: deno task tune --resume --run 1 --db /);
    const raw = new DatabaseSync(db, { readOnly: true });
    assert.equal(raw.prepare("SELECT status FROM runs").get()!.status, "running");
    raw.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("killing deno task with SIGKILL does not leave tune running", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const db = join(dir, "r.db");
    const child = spawnTune([...TUNE_ARGS, "--db", db], dir, true);
    await waitFor("two results", () => results(db) >= 2);
    const ps = await new Deno.Command("ps", {
      args: ["-o", "pid=", "--ppid", String(child.pid)],
      stdout: "piped",
    }).output();
    const tunePids = new TextDecoder().decode(ps.stdout).trim().split(/\s+/).map(Number);
    assert.equal(tunePids.length, 1, `children of deno task: ${tunePids}`);
    Deno.kill(child.pid, "SIGKILL");
    await child.status;
    await waitFor("tune to exit", () => !alive(tunePids[0]), 120);
    const err = Deno.readTextFileSync(join(dir, "tune.err"));
    assert.match(err, /the parent process \d+ exited/);
    assert.match(err, /resume with: deno task tune --resume --run 1 --db /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a second Ctrl-C stops tune at once, the database intact and the run resumable", async () => {
  // Rounds of slow timing (3 repeats of >= 300 ms) leave time for the second signal; should the
  // round in flight still end first (a loaded machine), the attempt is made again.
  const args = [...TUNE_ARGS, "--repeat", "3", "--min-repeat-ms", "300"];
  for (let attempt = 1;; attempt++) {
    const dir = await Deno.makeTempDir();
    try {
      const db = join(dir, "r.db");
      const child = spawnTune([...args, "--db", db], dir);
      await waitFor("two results", () => results(db) >= 2);
      Deno.kill(child.pid, "SIGINT");
      const err = () => Deno.readTextFileSync(join(dir, "tune.err"));
      await waitFor("the first stop", () => err().includes("stopping after the round in flight"));
      Deno.kill(child.pid, "SIGINT");
      assert.equal((await child.status).code, 130, err());
      if (!err().includes("stopped at once") && attempt < 3) continue;
      assert.match(err(), /interrupted \(SIGINT\): stopped at once; every finished record is kept/);
      assert.match(err(), /resume with: deno task tune --resume --run 1 --db /);
      const raw = new DatabaseSync(db, { readOnly: true });
      assert.equal(raw.prepare("PRAGMA integrity_check").get()!.integrity_check, "ok");
      assert.equal(raw.prepare("SELECT status FROM runs").get()!.status, "running");
      raw.close();
      return;
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("Ctrl-C stops reproduce resumably and prints the command that resumes its new run", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const db = join(dir, "r.db");
    const tune = spawnTune([...TUNE_ARGS, "--db", db], dir);
    await waitFor("two results", () => results(db) >= 2);
    Deno.kill(tune.pid, "SIGINT");
    assert.equal((await tune.status).code, 130);
    const before = results(db);
    // A fresh kernel cache: the rerun compiles again, so it is still running when stopped.
    const child = spawnTune(["--db", db, "--run", "1", "--quiet"], dir, false, {
      script: "cli/reproduce.ts",
      cache: "cache2",
    });
    await waitFor("two results of the rerun", () => results(db) >= before + 2);
    Deno.kill(child.pid, "SIGINT");
    const err = () => Deno.readTextFileSync(join(dir, "tune.err"));
    assert.equal((await child.status).code, 130, err());
    assert.match(err(), /reproduce: interrupted \(SIGINT\): stopping after the round in flight/);
    assert.match(
      err(),
      /reproduce: run 2 stopped .* resume with: deno task tune --resume --run 2 --db /,
    );
    const raw = new DatabaseSync(db, { readOnly: true });
    const status = raw.prepare("SELECT status FROM runs ORDER BY id").all().map((r) => r.status);
    raw.close();
    assert.deepEqual(status, ["running", "running"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Files in `dir` (none when it does not exist). */
function filesIn(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name);
  } catch {
    return [];
  }
}

Deno.test("Ctrl-C stops compare on a live space: exit 130, one line saying nothing was written", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = join(dir, "curves");
    const child = spawnTune(
      ["--space", "matmul:48,40,32", "--strategies", "random", "--seeds", "20", "--budget", "40"]
        .concat(["--out", out, "--quiet"]),
      dir,
      false,
      { script: "cli/compare.ts" },
    );
    // Kernels in the cache: the comparison is measuring.
    await waitFor(
      "two kernels built",
      () => filesIn(join(dir, "cache")).filter((f) => f.endsWith(".so")).length >= 2,
    );
    Deno.kill(child.pid, "SIGINT");
    const err = () => Deno.readTextFileSync(join(dir, "tune.err"));
    assert.equal((await child.status).code, 130, err());
    assert.match(err(), /compare: interrupted \(SIGINT\): stopping at the next evaluation/);
    assert.match(
      err(),
      /compare: stopped \(interrupted \(SIGINT\)\); nothing was written to .*; its records were in memory/,
    );
    assert.equal(Deno.readTextFileSync(join(dir, "tune.out")), "", "no JSON summary");
    assert.deepEqual(filesIn(out), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM stops compare on a replayed space within its run: exit 143 and one line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = join(dir, "curves");
    // xgb runs of 400 evaluations take seconds each: the stop comes inside one.
    const child = spawnTune(
      ["--space", "gemm_RTX_3090", "--strategies", "xgb", "--seeds", "20", "--budget", "400"]
        .concat(["--out", out]),
      dir,
      false,
      { script: "cli/compare.ts" },
    );
    const err = () => Deno.readTextFileSync(join(dir, "tune.err"));
    await waitFor("the first run", () => err().includes("runs (strategy x seed)"));
    Deno.kill(child.pid, "SIGTERM");
    assert.equal((await child.status).code, 143, err());
    assert.match(err(), /compare: stopped \(terminated \(SIGTERM\)\); .*nothing was written/);
    assert.deepEqual(filesIn(out), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM stops costmodel-eval after its fit: exit 143, one line, no plot written", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = join(dir, "plots");
    const child = spawnTune(["--space", "gemm_RTX_3090", "--out", out], dir, false, {
      script: "cli/costmodel_eval.ts",
    });
    const err = () => Deno.readTextFileSync(join(dir, "tune.err"));
    await waitFor("the fit", () => err().includes("costmodel-eval: fitting"));
    Deno.kill(child.pid, "SIGTERM");
    assert.equal((await child.status).code, 143, err());
    assert.match(err(), /costmodel-eval: stopped \(terminated \(SIGTERM\)\); no plot written/);
    assert.equal(Deno.readTextFileSync(join(dir, "tune.out")), "", "no JSON summary");
    assert.deepEqual(filesIn(out), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
