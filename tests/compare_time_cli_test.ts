/** End-to-end tests of `compare --budget-time`: tuning-time budgets and the methodology score. */
import { lastJsonLine } from "../cli/output.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

function compare(args: string[], cwd: string) {
  return runScript("cli/compare.ts", args, cwd, SHARED_KERNEL_CACHE);
}

Deno.test("compare --budget-time prints the time-based and the count-based rankings in one run", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await compare([
      "--space",
      "pnpoly_RTX_3090,convolution_MI250X",
      "--strategies",
      "random,sa",
      "--budget",
      "10,40",
      "--seeds",
      "3",
      "--budget-time",
      "auto",
      "--quiet",
      "--out",
      "out",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    const s = lastJsonLine(r.stdout);
    assert.equal(s.spaces.length, 2);
    for (const space of s.spaces) {
      assert.deepEqual(Object.keys(space.time.scores), ["random", "sa"]);
      assert.ok(space.time.range.end > space.time.range.start);
      assert.ok(space.time.range.limit > space.time.range.end);
      // In tuning time a configuration the restrictions exclude is never evaluated (the methodology's rule).
      assert.equal(space.time.absent, "restricted");
      assert.equal(space.time.rows.length, 6);
      // A run stops at the tuning-time limit: never more evaluations than fit in it.
      for (const row of space.time.rows) assert.ok(row.mean_evals > 0);
      assert.deepEqual(Object.keys(space.scores), ["random", "sa"]);
    }
    assert.deepEqual(s.methodology.map((m: { strategy: string }) => m.strategy).sort(), [
      "random",
      "sa",
    ]);
    assert.ok(s.methodology.every((m: { spaces: number }) => m.spaces === 2));
    // Tables on stdout before the JSON line, as every command prints them (cli/output.ts).
    assert.match(r.stdout, /Ranking over 2 spaces/);
    assert.match(r.stdout, /Methodology score over 2 spaces/);
    assert.match(r.stdout, /\| strategy \| seconds \| mean \| median/);
    const png = await Deno.stat(join(dir, "out", "pnpoly_RTX_3090_time.png"));
    assert.ok(png.size > 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compare --budget-time scores count budgets past the time limit on the same runs, and says when one configuration swings the score", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // resnet18_conv1_cpu: 252 configurations; the time limit falls after about 90 random draws,
    // and its optimum and runner-up are 0.5% apart with a gap below them.
    const r = await compare([
      "--space",
      "resnet18_conv1_cpu",
      "--strategies",
      "random",
      "--budget",
      "10,200",
      "--seeds",
      "2",
      "--budget-time",
      "auto",
      "--quiet",
      "--out",
      "out",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    const s = lastJsonLine(r.stdout);
    const at200 = s.results.find((x: { budget: number }) => x.budget === 200);
    // The runs went on past the time limit until they had made the largest evaluation budget...
    assert.equal(at200.mean_evals, 200);
    // ...while the time table only sees each run up to the limit.
    for (const row of s.time.rows) assert.ok(row.mean_evals < 200, JSON.stringify(row));
    assert.match(
      r.stdout,
      /note: at the end of the range the baseline is 0\.\d+% from the optimum/,
    );
    assert.match(r.stdout, /scores -5\d\.\d at those grid points/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compare --budget-time refuses bad budgets and auto on a live space in one line, exit 2", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (
      const [args, want] of [
        [["--space", "pnpoly_RTX_3090", "--budget-time=-3"], /--budget-time: value 1 "-3"/],
        [
          ["--space", "pnpoly_RTX_3090", "--no-strategy-time"],
          /--no-strategy-time needs --budget-time/,
        ],
        [
          ["--space", "matmul:8,8,8", "--budget-time", "auto"],
          /--budget-time auto: .* measured live/,
        ],
      ] as const
    ) {
      const r = await compare([...args, "--quiet", "--out", "out"], dir);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, want);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("export --format t4 of a compare run reads back as a space that replays to its records", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const c = await compare([
      "--space",
      "pnpoly_RTX_3090",
      "--strategies",
      "sa",
      "--budget",
      "30",
      "--seeds",
      "1",
      "--db",
      "c.db",
      "--quiet",
      "--out",
      "out",
    ], dir);
    assert.equal(c.code, 0, c.stderr);
    const e = await runScript("cli/export.ts", [
      "--db",
      "c.db",
      "--format",
      "t4",
      "--out",
      "sa_T4.json",
    ], dir);
    assert.equal(e.code, 0, e.stderr);
    const { replaySpaceFromFile } = await import("../search/replay.ts");
    const { RecordsDB } = await import("../datasets/db.ts");
    const back = await replaySpaceFromFile(join(dir, "sa_T4.json"));
    const source = await replaySpaceFromFile("pnpoly_RTX_3090");
    assert.deepEqual(back.cache.tuneParams, source.cache.tuneParams);
    const db = RecordsDB.open(join(dir, "c.db"));
    try {
      const cands = db.candidates(db.runs()[0].id);
      assert.equal(cands.length, 30);
      for (const cand of cands) {
        const r = back.evaluate(cand.knobs!);
        assert.equal(r.errorKind, cand.result!.errorKind);
        if (cand.result!.seconds !== null) {
          assert.ok(Math.abs(r.seconds! - cand.result!.seconds) < 1e-15);
        }
      }
    } finally {
      db.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compare --budget-time on a live space tables the runs on the replay's clock", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await compare([
      "--space",
      "matmul:8,8,8",
      "--strategies",
      "random,grid",
      "--budget",
      "3",
      "--seeds",
      "1",
      "--budget-time",
      "0.000001,1000",
      "--quiet",
      "--out",
      "out",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /In tuning time \(the live runs' recorded build, run and framework seconds/,
    );
    const s = lastJsonLine(r.stdout);
    assert.equal(s.liveTime.strategyTime, true);
    const at = (t: number) => s.liveTime.rows.filter((x: { seconds: number }) => x.seconds === t);
    // A microsecond holds no evaluation (a build alone takes longer); 1000 s holds all three.
    for (const row of at(0.000001)) assert.equal(row.mean_evals, 0);
    for (const row of at(1000)) assert.equal(row.mean_evals, 3);
    assert.equal(s.liveTime.rows.length, 4);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
