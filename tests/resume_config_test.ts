/**
 * `tune --resume` checks the stored run configuration against the same
 * ranges and table as the command line (ir/defaults.ts,
 * tuner/strategies.ts): a stored value the flags would refuse exits 2 with
 * one line naming the field, and nothing is built or written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import { runScript } from "./_cli.ts";

const GOOD = {
  workload: "matmul",
  shape: [12, 10, 8],
  strategy: "random",
  seed: 1,
  trials: 6,
  target: "cpu",
  batch: 3,
  timeoutSeconds: 10,
  timing: { number: 1, repeat: 1, minRepeatMs: 0, warmup: 1 },
};

/** A database with one unfinished run of `config`. */
function withRun(path: string, config: Record<string, unknown>): string {
  const db = RecordsDB.open(path);
  db.startRun({
    strategy: String(config.strategy),
    seed: 1,
    trials: typeof config.trials === "number" ? config.trials : 6,
    target: "cpu",
    workloadId: db.upsertWorkload({ name: "matmul", shape: [12, 10, 8], flops: 1920 }),
    config,
    machine: {},
    compiler: "gcc",
    tunebookVersion: "test",
  });
  db.close();
  return path;
}

Deno.test("tune --resume refuses a stored configuration the flags would refuse, naming the field", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ trials: 0 }, /field config\.trials must be an integer between 1 and 10000000, got 0/],
      [{ batch: 5000 }, /field config\.batch must be an integer between 1 and 1024, got 5000/],
      [{ batch: "8" }, /field config\.batch must be an integer .*, got "8"/],
      [{ seed: 1.5 }, /field config\.seed must be an integer/],
      [{ timeoutSeconds: -1 }, /field config\.timeoutSeconds must be a number above 0, got -1/],
      [{ timing: { number: 1, repeat: 0, minRepeatMs: 0 } }, /config\.timing\.repeat must be/],
      [
        { timing: { number: 1, repeat: 3, minRepeatMs: 0, noisySpread: 0.5 } },
        /field config\.timing\.noisySpread must be a number >= 1, got 0\.5/,
      ],
      [{ target: "tpu" }, /field config\.target is missing or invalid/],
      [{ race: 0.5 }, /field config\.race must be a number >= 1, got 0\.5/],
      [
        { finalists: { top: 3, rounds: 3, timing: { number: 1, repeat: 3, minRepeatMs: -1 } } },
        /field config\.finalists\.timing\.minRepeatMs must be a number >= 0, got -1/,
      ],
      [{ finalists: { top: 3, rounds: 3, timing: "40" } }, /config\.finalists\.timing is missing/],
      [{ math: ["fp64"] }, /field config\.math is missing or invalid/],
      [{ math: [] }, /field config\.math is missing or invalid/],
      [{ configs: "yes" }, /field config\.configs is missing or invalid/],
      [{ strategy: "magic" }, /field config\.strategy: Unknown strategy "magic"/],
      [
        { strategy: "ansor", template: "matmul" },
        /config\.strategy: --template matmul: strategy ansor/,
      ],
    ];
    for (const [i, [change, message]] of cases.entries()) {
      const db = withRun(join(dir, `r${i}.db`), { ...GOOD, ...change });
      const r = await runScript("cli/tune.ts", ["--resume", "--db", db, "--quiet"], dir);
      assert.equal(r.code, 2, `${JSON.stringify(change)}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      const after = RecordsDB.open(db, { mode: "read" });
      assert.equal(after.candidates(1).length, 0, "nothing was measured");
      after.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stored configuration within the ranges resumes (the check refuses only bad values)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const db = withRun(join(dir, "ok.db"), { ...GOOD, trials: 2, batch: 2 });
    const r = await runScript("cli/tune.ts", ["--resume", "--db", db, "--quiet"], dir);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.trials, 2);
    assert.equal(summary.valid + summary.errors, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--trials gets its default from ir/defaults.ts alone", async () => {
  const r = await runScript("cli/tune.ts", ["--help"], Deno.cwd());
  assert.match(
    r.stdout,
    new RegExp(`--trials N +distinct candidates to measure \\(default ${DEFAULTS.tune.trials}\\)`),
  );
  // No other source file spells a default of --trials (the grep of the report).
  const root = new URL("..", import.meta.url).pathname;
  const spelled: string[] = [];
  for (const dirName of ["cli", "tuner", "search", "measure", "datasets"]) {
    for (const e of Deno.readDirSync(join(root, dirName))) {
      if (!e.name.endsWith(".ts") || e.name.endsWith("_test.ts")) continue;
      const src = Deno.readTextFileSync(join(root, dirName, e.name));
      if (/trials[^\n]*(\?\?|default:?)\s*"?64\b/.test(src)) spelled.push(`${dirName}/${e.name}`);
    }
  }
  assert.deepEqual(spelled, []);
});

Deno.test("a run recorded as evolutionary over traces (before ansor had its name) resumes on the traces", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = withRun(join(dir, "old.db"), { ...GOOD, strategy: "evolutionary", trials: 3 });
    const db = RecordsDB.open(path);
    const c = db.addCandidate(1, { trial: 0, trace: '{"old": 1}', traceHash: "old" });
    db.addResult(c, { errorKind: "runtime_error", times: [], buildSeconds: 0, runSeconds: 0 });
    db.close();
    const r = await runScript("cli/tune.ts", ["--resume", "--db", path, "--quiet"], dir);
    assert.equal(r.code, 0, r.stderr);
    const after = RecordsDB.open(path, { mode: "read" });
    const added = after.candidates(1).slice(1);
    after.close();
    assert.ok(added.length >= 2, `${added.length} added`);
    // The knob-space evolutionary search would have recorded knob vectors.
    assert.ok(added.every((c) => c.knobs === null && c.result), JSON.stringify(added));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
