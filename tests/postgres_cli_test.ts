/**
 * `--db postgres://...`: tune writes, export, report and reproduce read a
 * real PostgreSQL server started on a free port of 127.0.0.1.
 */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { join } from "node:path";
import { postgresMissing, startPostgres } from "../remote/testing.ts";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

const missing = postgresMissing();
if (missing) console.warn(missing);

Deno.test({
  name:
    "tune and compare --db postgres:// record runs that export, report and reproduce read; --resume works there",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = await startPostgres();
    const dir = await Deno.makeTempDir();
    const tune = [
      "--workload",
      "matmul",
      "--shape",
      "16,16,16",
      "--repeat",
      "1",
      "--min-repeat-ms",
      "0",
      "--quiet",
      "--db",
      server.url,
    ];
    try {
      const one = await runScript(
        "cli/tune.ts",
        [...tune, "--trials", "4"],
        dir,
        SHARED_KERNEL_CACHE,
      );
      assert.equal(one.code, 0, one.stderr);
      const summary = lastJsonLine(one.stdout);
      assert.equal(summary.valid + summary.errors, 4);
      assert.equal(summary.db, server.url);
      // The finalists are timed again and recorded in PostgreSQL too (the export and the
      // report below leave their run out: 7 rows, 2 runs).
      assert.equal(summary.finalists.rounds, 3);
      assert.equal(summary.finalists.run_id, 2);
      const two = await runScript(
        "cli/tune.ts",
        [...tune, "--trials", "3", "--seed", "2"],
        dir,
        SHARED_KERNEL_CACHE,
      );
      assert.equal(two.code, 0, two.stderr);
      const resume = await runScript(
        "cli/tune.ts",
        ["--db", server.url, "--resume", "--quiet"],
        dir,
      );
      assert.equal(resume.code, 2);
      assert.match(resume.stderr, /^tune: No unfinished run/);

      const out = join(dir, "r.jsonl");
      const exp = await runScript(
        "cli/export.ts",
        ["--db", server.url, "--format", "jsonl", "--out", out],
        dir,
      );
      assert.equal(exp.code, 0, exp.stderr);
      assert.equal(lastJsonLine(exp.stdout).rows, 7);
      assert.equal((await Deno.readTextFile(out)).trim().split("\n").length, 7);

      const rep = await runScript(
        "cli/report.ts",
        ["--db", server.url, "--out", join(dir, "report")],
        dir,
      );
      assert.equal(rep.code, 0, rep.stderr);
      assert.equal(lastJsonLine(rep.stdout).runs, 2);

      const cmp = ["--space", "pnpoly_RTX_3090", "--strategies", "random,sa", "--seeds", "2"];
      const compared = await runScript(
        "cli/compare.ts",
        [...cmp, "--budget", "10", "--quiet", "--out", join(dir, "c"), "--db", server.url],
        dir,
      );
      assert.equal(compared.code, 0, compared.stderr);
      const resumed = await runScript(
        "cli/compare.ts",
        [
          ...cmp,
          "--budget",
          "10",
          "--quiet",
          "--out",
          join(dir, "c"),
          "--db",
          server.url,
          "--resume",
        ],
        dir,
      );
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(lastJsonLine(resumed.stdout).results, lastJsonLine(compared.stdout).results);

      const again = await runScript(
        "cli/reproduce.ts",
        ["--db", server.url, "--run", "1", "--quiet"],
        dir,
        SHARED_KERNEL_CACHE,
      );
      assert.equal(again.code, 0, again.stderr);
      const d = lastJsonLine(again.stdout);
      // 2 tune runs, each with its finalists' run, 4 compare runs, then this one.
      assert.equal(d.new_run, 9);
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
