/**
 * `tune --space`: a Kernel Tuner cache replayed through the tuning loop
 * writes one record per trial, stops and resumes like a live run, and bad
 * input exits with status 2 and one line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { runSession } from "../tuner/session.ts";
import { runScript } from "./_cli.ts";

Deno.test("tune --space pnpoly_RTX_3090 --strategy sa --trials 50 writes 50 records", async () => {
  const dir = await Deno.makeTempDir();
  const db = join(dir, "r.db");
  const args = ["--space", "pnpoly_RTX_3090", "--strategy", "sa", "--trials", "50", "--db", db];
  const r = await runScript("cli/tune.ts", [...args, "--quiet"], dir);
  assert.equal(r.code, 0, r.stderr);
  const line = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  assert.equal(line.workload, "pnpoly_RTX_3090");
  assert.equal(line.target, "replay");
  assert.equal(line.valid + line.errors, 50);
  const records = RecordsDB.open(db, { mode: "read" });
  assert.equal(records.counts(1).measured, 50);
  assert.equal(records.run(1)?.status, "finished");
  // Each record is the cache's time of its knobs: one time, no build or run.
  const best = records.best(1)!;
  assert.equal(best.result.seconds, line.best_seconds);
  assert.deepEqual(best.result.times, [line.best_seconds]);
  assert.equal(best.knobs?.length, 4);
  records.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("tune --space exits with status 2 and one line for a missing cache or a clashing flag", async () => {
  const dir = await Deno.makeTempDir();
  const db = ["--db", join(dir, "r.db")];
  const cases: [string[], RegExp][] = [
    [["--space", "no_such_cache"], /^tune: --space no_such_cache: no recorded space of that name/],
    [
      ["--space", "pnpoly_RTX_3090", "--workload", "matmul"],
      /--workload cannot be given with --space/,
    ],
    [["--space", "pnpoly_RTX_3090", "--target", "cuda"], /--target cannot be given with --space/],
  ];
  for (const [args, message] of cases) {
    const r = await runScript("cli/tune.ts", [...args, ...db], dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a replayed run stopped after 20 records resumes to the records of an uninterrupted one", async () => {
  const dir = await Deno.makeTempDir();
  const options = { space: "pnpoly_RTX_3090", strategy: "ga", trials: 60, seed: 3, batch: 8 };
  const whole = await runSession({ ...options, db: join(dir, "whole.db") });
  assert.equal(whole.valid + whole.errors, 60);
  const stop = new AbortController();
  const cut = join(dir, "cut.db");
  const first = await runSession({
    ...options,
    db: cut,
    signal: stop.signal,
    onProgress: (p) => p.done >= 20 && stop.abort(),
  });
  assert.equal(first.interrupted, true);
  const resumed = await runSession({ db: cut, resume: true });
  assert.equal(resumed.valid + resumed.errors, 60);
  const rows = (path: string) => {
    const db = RecordsDB.open(path, { mode: "read" });
    const out = db.candidates(1).map((c) => [c.trial, c.knobs, c.result?.seconds ?? null]);
    db.close();
    return out;
  };
  assert.deepEqual(rows(cut), rows(join(dir, "whole.db")));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a STRATEGY@PRESET run stores the preset's settings and resumes with them after the file is gone", async () => {
  const dir = await Deno.makeTempDir();
  const preset = join(dir, "cold.json");
  await Deno.writeTextFile(
    preset,
    JSON.stringify({ name: "cold", strategy: "sa", hyper: { t0: 0.5, init: 5 } }),
  );
  const options = { space: "pnpoly_RTX_3090", strategy: `sa@${preset}`, trials: 40, seed: 2 };
  const whole = await runSession({ ...options, db: join(dir, "whole.db") });
  assert.equal(whole.valid + whole.errors, 40);
  const stop = new AbortController();
  const cut = join(dir, "cut.db");
  await runSession({
    ...options,
    db: cut,
    signal: stop.signal,
    onProgress: (p) => p.done >= 16 && stop.abort(),
  });
  await Deno.remove(preset);
  const resumed = await runSession({ db: cut, resume: true });
  assert.equal(resumed.valid + resumed.errors, 40);
  const rows = (path: string) => {
    const db = RecordsDB.open(path, { mode: "read" });
    const out = db.candidates(1).map((c) => [c.trial, c.knobs, c.result?.seconds ?? null]);
    const hyper = db.run(1)?.config.hyper;
    db.close();
    return { out, hyper };
  };
  assert.deepEqual(rows(cut), rows(join(dir, "whole.db")));
  assert.deepEqual(rows(cut).hyper, { t0: 0.5, init: 5 });
  // A new run given the recorded settings (as reproduce gives them) needs no preset file either.
  await runSession({ ...options, hyper: { t0: 0.5, init: 5 }, db: join(dir, "again.db") });
  assert.deepEqual(rows(join(dir, "again.db")), rows(cut));
  // Other settings than the defaults: the plain strategy's run differs.
  const plain = await runSession({ ...options, strategy: "sa", db: join(dir, "plain.db") });
  assert.notDeepEqual(rows(join(dir, "plain.db")).out, rows(cut).out, String(plain.trials));
  await Deno.remove(dir, { recursive: true });
});
