/** End-to-end tests of `deno task costmodel-eval` on replayed data, and its argument errors. */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { runScript } from "./_cli.ts";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";

function run(args: string[], cwd: string) {
  return runScript("cli/costmodel_eval.ts", args, cwd);
}

Deno.test("costmodel-eval reports held-out ranking metrics and writes a scatter plot", async () => {
  const dir = await Deno.makeTempDir();
  const r = await run([
    "--space",
    "pnpoly_RTX_3090",
    "--model",
    "xgb-rank",
    "--train",
    "300",
    "--out",
    "out",
  ], dir);
  assert.equal(r.code, 0, r.stderr);
  const s = lastJsonLine(r.stdout);
  assert.equal(s.train, 300);
  assert.ok(s.test > 3000);
  for (
    const k of ["kendall_tau", "pairwise_accuracy", "top1_recall", "top10_recall", "pick_regret"]
  ) {
    assert.equal(typeof s[k], "number", k);
  }
  assert.ok(s.kendall_tau > 0.3, `a trained model ranks better than chance (tau ${s.kendall_tau})`);
  assert.match(r.stdout, /\| kendall_tau \|/);
  assert.ok(
    (await Deno.readTextFile(join(dir, "out", "xgb-rank_pnpoly_RTX_3090.svg"))).startsWith("<svg"),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("costmodel-eval exits with status 2 and names bad arguments", async () => {
  const dir = await Deno.makeTempDir();
  RecordsDB.open(join(dir, "empty.db")).close(); // a records database with no record
  const cases: [string[], RegExp][] = [
    [[], /exactly one of --db and --space/],
    [["--space", "pnpoly_RTX_3090", "--model", "svm"], /Unknown model "svm"/],
    [["--space", "pnpoly_RTX_3090", "--split", "odd"], /--split must be/],
    [["--db", join(dir, "empty.db")], /holds 0 valid records/],
    [["--db", join(dir, "missing.db")], /missing\.db.*no such file/],
    [["--space", "nope"], /--space nope/],
  ];
  for (const [args, message] of cases) {
    const r = await run(args, dir);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  await Deno.remove(dir, { recursive: true });
});
