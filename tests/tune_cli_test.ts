/**
 * End-to-end tests of `deno task tune`: argument errors, a real run whose
 * summary matches the database, and a run killed with SIGKILL then resumed.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { exists } from "../measure/builder.ts";
import { kernelCompiler } from "../ir/target_cpu.ts";
import { ROOT, runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

const TUNE = join(ROOT, "cli/tune.ts");

/** Runs `tune` in `cwd`, sharing one kernel cache unless `env` says otherwise. */
const tune = (args: string[], cwd: string, env: Record<string, string> = SHARED_KERNEL_CACHE) =>
  runScript("cli/tune.ts", args, cwd, env);

Deno.test("tune exits with status 2 and names the problem for bad arguments", async () => {
  const dir = await Deno.makeTempDir();
  const base = ["--target", "cpu", "--trials", "2", "--db", join(dir, "r.db")];
  const cases: [string[], RegExp][] = [
    [["--workload", "matmull", "--shape", "8,8,8"], /Unknown workload "matmull"/],
    [["--workload", "matmul", "--shape", "8,0,8"], /Dimension N .* positive integer, got 0/],
    [["--workload", "matmul", "--shape", "8,-3,8"], /Dimension N .* got -3/],
    [["--workload", "matmul", "--shape", "8,8"], /takes 3 dimensions .* got 2/],
    [["--workload", "matmul", "--shape", "8,x,8"], /dimension 2 "x" is not an integer/],
    [["--workload", "matmul", "--shape", "8,8,8", "--trials", "0"], /--trials must be between 1/],
    [["--workload", "matmul", "--shape", "8,8,8", "--target", "tpu"], /Unknown target "tpu"/],
    [["--workload", "matmul", "--shape", "8,8,8", "--strategy", "magic"], /Unknown strategy/],
    [["--workload", "matmul", "--shape", "8,8,8", "--bogus"], /bogus/],
  ];
  for (const [args, message] of cases) {
    const r = await tune([...base, ...args], dir);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, "");
  }
  await Deno.writeTextFile(join(dir, "file"), "x");
  const r = await tune(
    ["--workload", "matmul", "--shape", "8,8,8", "--db", join(dir, "file", "r.db")],
    dir,
  );
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Cannot open records database ".*file\/r\.db"/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("tune rejects a malformed trace file before building anything", async () => {
  const dir = await Deno.makeTempDir();
  const cases: [string, RegExp][] = [
    ["{not json", /not valid JSON/],
    [
      `{"version": 1, "workload": {"name": "matmul", "shape": [8, 8, 8]}, "insts": [{"op": "split", "args": {"stage": "C", "loop": "i); system(\\"rm\\"", "factors": [2, 4]}}]}`,
      /args\.loop must be a stage or loop name/,
    ],
    [
      `{"version": 1, "workload": {"name": "matmul;", "shape": [8, 8, 8]}, "insts": []}`,
      /not a known workload/,
    ],
    [
      `{"version": 1, "workload": {"name": "matmul", "shape": [8, 8, 8]}, "insts": [{"op": "explode", "args": {}}]}`,
      /not a known instruction/,
    ],
    [
      `{"version": 2, "workload": {"name": "matmul", "shape": [8, 8, 8]}, "insts": []}`,
      /version must be 1/,
    ],
  ];
  for (const [text, message] of cases) {
    await Deno.writeTextFile(join(dir, "t.json"), text);
    const r = await tune(["--trace", "t.json", "--db", "r.db"], dir, {});
    assert.equal(r.code, 2);
    assert.match(r.stderr, message);
    assert.equal(await exists(join(dir, ".cache")), false, "nothing may be built");
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("tune runs a cost-model strategy on a template, compiling rounds as unity builds", async () => {
  const dir = await Deno.makeTempDir();
  const r = await tune(
    [
      ...["--workload", "matmul", "--shape", "40,48,24", "--strategy", "xgb"],
      ...["--template", "matmul-packed", "--trials", "6", "--batch", "3", "--unity", "3"],
      ...["--db", "r.db", "--quiet"],
    ],
    dir,
    { TUNEBOOK_CACHE: join(dir, "kernels") },
  );
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout.trim());
  assert.equal(s.strategy, "xgb");
  assert.equal(s.trials, 6);
  assert.equal(s.valid, 6);
  // Each round of 3 went through one compiler process: the kernel cache holds batch objects.
  const cache = [...Deno.readDirSync(join(dir, "kernels"))].map((e) => e.name);
  assert.ok(cache.some((n) => /^batch-[0-9a-f]{64}\.so$/.test(n)), cache.join(" "));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("tune's summary matches the best record in the database", async () => {
  const dir = await Deno.makeTempDir();
  const r = await tune(
    ["--workload", "matmul", "--shape", "48,40,24", "--trials", "6", "--seed", "3", "--db", "r.db"],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, 1);
  const s = JSON.parse(lines[0]);
  assert.deepEqual(Object.keys(s), [
    "workload",
    "shape",
    "target",
    "strategy",
    "trials",
    "valid",
    "errors",
    "best_gflops",
    "best_seconds",
    "best_trace_id",
    "db",
    "ranking",
    "first_gflops",
    "confirmed_gflops",
    "finalists",
  ]);
  // The noise decision is in the JSON, with its figures; a warning line on stderr when uncertain.
  assert.equal(typeof s.ranking.uncertain, "boolean");
  assert.equal(s.ranking.best.seconds, s.best_seconds);
  assert.equal(s.ranking.cores, navigator.hardwareConcurrency);
  assert.equal(r.stderr.includes("tune: warning: ranking uncertain: best "), s.ranking.uncertain);
  if (s.ranking.uncertain) assert.ok(r.stderr.includes(`tune: ${s.ranking.warning}`), r.stderr);
  assert.equal(s.trials, 6);
  assert.equal(s.valid + s.errors, 6);
  assert.ok(s.valid > 0);
  assert.match(r.stderr, /\[#+\] 6\/6/);
  // By default the search's 3 fastest are timed again in 3 rounds (run 2, strategy finalists):
  // the best reported is the finalist with the lowest median over the rounds.
  assert.deepEqual(s.finalists, { count: 3, rounds: 3, run_id: 2 });
  assert.match(
    r.stderr,
    /tune: best [\d.]+ GFLOP\/s confirmed over 3 rounds \(first [\d.]+; 3 finalists, run 2\)/,
  );
  const db = new DatabaseSync(join(dir, "r.db"));
  const confirmed = db.prepare(
    "SELECT c.trace_hash, r.seconds FROM results r JOIN candidates c ON c.id = r.candidate_id WHERE c.run_id = 2 AND r.error_kind = 'none' ORDER BY r.seconds LIMIT 1",
  ).get() as { trace_hash: string; seconds: number };
  const first = db.prepare(
    "SELECT c.id, r.gflops FROM results r JOIN candidates c ON c.id = r.candidate_id WHERE c.run_id = 1 AND c.trace_hash = ?",
  ).get(confirmed.trace_hash) as { id: number; gflops: number };
  assert.equal(s.best_trace_id, first.id);
  assert.equal(s.best_seconds, confirmed.seconds);
  assert.equal(s.confirmed_gflops, s.best_gflops);
  assert.ok(
    Math.abs(s.best_gflops - (48 * 40 * 24 * 2) / confirmed.seconds / 1e9) < 1e-9 * s.best_gflops,
  );
  assert.ok(Math.abs(s.first_gflops - first.gflops) < 1e-9 * first.gflops);
  // The tuning run keeps its 6 trials.
  const n = db.prepare("SELECT COUNT(*) AS n FROM candidates WHERE run_id = 1").get() as {
    n: number;
  };
  assert.equal(n.n, 6);
  const run = db.prepare("SELECT status, strategy, seed, machine, compiler FROM runs")
    .get() as Record<
      string,
      string
    >;
  assert.equal(run.status, "finished");
  assert.ok(run.compiler.includes(kernelCompiler().cc), run.compiler); // gcc unless TUNEBOOK_CC
  assert.match(JSON.parse(run.machine).cpu, /./);
  // A live run records the parts of each valid result's time, and the load where Linux tells it
  // (the search's results: run 2's are the finalists' rounds).
  const parts = db.prepare(
    "SELECT verify_seconds, run_seconds, strategy_seconds, framework_seconds, load1, steal FROM results r JOIN candidates c ON c.id = r.candidate_id WHERE c.run_id = 1 AND error_kind = 'none'",
  ).all() as Record<string, number | null>[];
  for (const p of parts) {
    assert.ok(p.verify_seconds! > 0 && p.verify_seconds! <= p.run_seconds!, JSON.stringify(p));
    assert.ok(p.strategy_seconds! >= 0 && p.framework_seconds! >= 0, JSON.stringify(p));
    // Steal needs a clock tick between the batch start and the result: absent on a quick one.
    if (Deno.build.os === "linux") {
      assert.ok(p.load1! >= 0 && (p.steal ?? 0) >= 0, JSON.stringify(p));
    }
  }
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a run killed with SIGKILL resumes to exactly the requested trials, measuring nothing twice", async () => {
  const dir = await Deno.makeTempDir();
  const trials = 14;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      TUNE,
      "--workload",
      "matmul",
      "--shape",
      "40,36,20",
      "--trials",
      String(trials),
      "--batch",
      "4",
      "--seed",
      "7",
      "--db",
      "r.db",
      "--quiet",
    ],
    cwd: dir,
    env: SHARED_KERNEL_CACHE,
    stdout: "null",
    stderr: "null",
  }).spawn();
  const dbPath = join(dir, "r.db");
  const count = () => {
    try {
      const db = new DatabaseSync(dbPath);
      try {
        return (db.prepare("SELECT count(*) AS n FROM results").get() as { n: number }).n;
      } finally {
        db.close();
      }
    } catch {
      return 0;
    }
  };
  const deadline = Date.now() + 120_000;
  while (count() < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  child.kill("SIGKILL");
  await child.status;
  const db = new DatabaseSync(dbPath);
  const before = db.prepare(
    "SELECT r.id, r.candidate_id, r.timestamp, c.trace_hash FROM results r JOIN candidates c ON c.id = r.candidate_id ORDER BY r.id",
  ).all() as { id: number; candidate_id: number; timestamp: string; trace_hash: string }[];
  assert.ok(before.length >= 5 && before.length < trials, `killed after ${before.length}`);
  assert.equal(
    (db.prepare("SELECT status FROM runs").get() as { status: string }).status,
    "running",
  );
  db.close();

  const r = await tune(["--resume", "--db", "r.db", "--quiet"], dir);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  assert.equal(s.valid + s.errors, trials);
  const db2 = new DatabaseSync(dbPath);
  // Run 1's records (run 2 holds its finalists, timed again after the search).
  const after = db2.prepare(
    "SELECT r.id, r.candidate_id, r.timestamp, c.trace_hash FROM results r JOIN candidates c ON c.id = r.candidate_id WHERE c.run_id = 1 ORDER BY r.id",
  ).all() as typeof before;
  assert.equal(after.length, trials);
  assert.equal(new Set(after.map((x) => x.trace_hash)).size, trials, "no candidate twice");
  assert.deepEqual(after.slice(0, before.length), before, "earlier records untouched");
  assert.deepEqual(
    db2.prepare("SELECT id, strategy, status FROM runs ORDER BY id").all().map((x) => ({ ...x })),
    [
      { id: 1, strategy: "random", status: "finished" },
      { id: 2, strategy: "finalists", status: "finished" },
    ],
  );
  db2.close();

  const again = await tune(["--resume", "--db", "r.db"], dir);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /No unfinished run/);
  await Deno.remove(dir, { recursive: true });
});
