/** End-to-end tests of `deno task reproduce` on a tiny run. */
import assert from "node:assert/strict";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { DEFAULTS } from "../ir/defaults.ts";

function deno(script: string, args: string[], cwd: string) {
  return runScript(script, args, cwd, SHARED_KERNEL_CACHE);
}

Deno.test("reproduce reruns a run into a new run and compares the curves", async () => {
  const dir = await Deno.makeTempDir();
  const db = join(dir, "runs.db");
  const tune = await deno("cli/tune.ts", [
    "--workload",
    "matmul",
    "--shape",
    "32,32,32",
    "--trials",
    "4",
    "--seed",
    "3",
    "--db",
    db,
    "--quiet",
  ], dir);
  assert.equal(tune.code, 0, tune.stderr);
  const r = await deno("cli/reproduce.ts", ["--db", db, "--run", "1", "--quiet"], dir);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  assert.equal(s.run, 1);
  // Run 2 holds run 1's finalists (timed again after its search; none without a valid candidate).
  assert.equal(s.new_run, s.old_best_gflops === null ? 2 : 3);
  assert.equal(s.workload, "matmul:32,32,32");
  assert.equal(s.strategy, "random");
  assert.equal(s.seed, 3);
  assert.equal(s.old_trials, 4);
  assert.equal(s.new_trials, 4);
  assert.equal(s.identical_candidates, 4, "the same seed proposes the same schedules");
  assert.equal(s.same_position, 4);
  assert.equal(s.same_order, true);
  assert.equal(s.per_trial_ratio.length, 4);
  // Which candidates are valid depends on the machine (a candidate may time out under load), so
  // each ratio is checked against the two curves it compares: new / old where both runs have a
  // valid candidate by that trial, null otherwise.
  for (let i = 0; i < 4; i++) {
    const [old, fresh, x] = [s.old_curve[i], s.new_curve[i], s.per_trial_ratio[i]];
    if (old && fresh !== null) {
      assert.ok(x > 0 && Math.abs(x - fresh / old) < 1e-9, `trial ${i}: ratio ${x}`);
    } else assert.equal(x, null, `trial ${i}: no ratio without both curves`);
  }
  if (s.old_best_gflops && s.new_best_gflops !== null) {
    assert.ok(Math.abs(s.final_best_ratio - s.new_best_gflops / s.old_best_gflops) < 1e-9);
  } else assert.equal(s.final_best_ratio, null);
  // The best so far after the last trial is the best of the run.
  assert.equal(s.per_trial_ratio[3], s.final_best_ratio);
  assert.match(r.stdout, /\| trial \| old best GFLOP\/s \| new best GFLOP\/s \| new \/ old \|/);
  assert.match(r.stdout, /identical candidates 4 of 4/);
  // Trials are numbered from 1, as in the progress bar and every other output.
  assert.match(r.stdout, /^\| 1 \| /m);
  assert.match(r.stdout, /^\| 4 \| /m);
  assert.doesNotMatch(r.stdout, /^\| 0 \| /m);

  if (s.old_best_gflops !== null && s.new_best_gflops !== null) {
    assert.ok(s.old_confirmed_gflops > 0 && s.new_confirmed_gflops > 0, r.stdout);
    assert.match(r.stdout, /; confirmed [\d.]+ -> [\d.]+ GFLOP\/s/);
  }
  const records = RecordsDB.open(db);
  const [old, fresh] = records.runs().filter((x) => x.strategy !== "finalists");
  // The rerun's finalists are confirmed as the original's were.
  assert.deepEqual(fresh.config.finalists, old.config.finalists);
  assert.deepEqual(
    (fresh.config.finalists as { timing: unknown }).timing,
    DEFAULTS.tune.finalistTiming,
  );
  assert.equal(fresh.strategy, old.strategy);
  assert.equal(fresh.seed, old.seed);
  assert.equal(fresh.trials, old.trials);
  assert.deepEqual(fresh.config, old.config);
  assert.equal(fresh.status, "finished");
  records.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("reproduce exits with status 2 and names bad arguments", async () => {
  const dir = await Deno.makeTempDir();
  const db = join(dir, "runs.db");
  const records = RecordsDB.open(db);
  const wl = records.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
  records.startRun({
    workloadId: wl,
    strategy: "random",
    seed: 1,
    trials: 1,
    target: "cpu",
    config: {},
    machine: {},
    compiler: "gcc",
    tunebookVersion: "0",
  });
  records.close();
  const cases: [string[], RegExp][] = [
    [["--run", "1"], /Missing --db/],
    [["--db", db], /--run must be a run id/],
    [["--db", db, "--run", "x"], /--run must be a run id/],
    [["--db", join(dir, "none.db"), "--run", "1"], /no such records database/],
    [["--db", db, "--run", "7"], /No run 7 in records database/],
    [["--db", db, "--run", "1"], /Run 1 stores no reproducible configuration/],
  ];
  for (const [args, message] of cases) {
    const r = await deno("cli/reproduce.ts", args, dir);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, "");
  }
  await Deno.remove(dir, { recursive: true });
});
