/**
 * Abuse test of `tune --db postgres://` (issue 41, item 3): PostgreSQL
 * stopped at once (`pg_ctl -m immediate`, as a crash) mid-run. `tune` exits 2
 * with one line and the command that resumes the run; after a restart that
 * command finishes the run with every record kept and none duplicated.
 */
import assert from "node:assert/strict";
import pg from "npm:pg@8.23.1";
import { postgresMissing, startPostgres } from "../remote/testing.ts";
import { scriptArgs } from "../cli/script.ts";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

const missing = postgresMissing();
if (missing) console.warn(missing);

async function rows(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.query(sql)).rows;
  } catch {
    return [];
  } finally {
    await client.end().catch(() => {});
  }
}

Deno.test({
  name:
    "tune --db postgres:// exits 2 with one line and the resume command when PostgreSQL dies mid-run, and the resume loses nothing",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = await startPostgres();
    const dir = await Deno.makeTempDir();
    try {
      const child = new Deno.Command(Deno.execPath(), {
        args: scriptArgs("cli/tune.ts", [
          ...["--workload", "matmul", "--shape", "32,32,32", "--repeat", "1"],
          ...["--min-repeat-ms", "50", "--trials", "30", "--batch", "2", "--seed", "4"],
          ...["--quiet", "--db", server.url],
        ]),
        cwd: dir,
        env: SHARED_KERNEL_CACHE,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const end = Date.now() + 120_000;
      let done = 0;
      while (done < 3 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 100));
        done = Number((await rows(server.url, "SELECT count(*) AS n FROM tb_results"))[0]?.n ?? 0);
      }
      assert.ok(done >= 3, "three results recorded");
      await server.halt();
      const out = await child.output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 2, stderr);
      const lines = stderr.trim().split("\n");
      assert.equal(lines.length, 1, stderr);
      assert.doesNotMatch(stderr, /^\s+at /m);
      assert.match(
        lines[0],
        /^tune: lost the records database postgres:\/\/.*resume with: deno task tune --resume --run 1 --db postgres:\/\//,
      );
      await server.restart();
      const kept = await rows(
        server.url,
        "SELECT c.trace_hash FROM tb_candidates c JOIN tb_results r ON r.candidate_id = c.id",
      );
      assert.ok(kept.length >= 3, `${kept.length} results kept`);
      const resume = lines[0].replace(/^.*resume with: deno task tune /, "").split(" ");
      const again = await runScript(
        "cli/tune.ts",
        [...resume, "--quiet"],
        dir,
        SHARED_KERNEL_CACHE,
      );
      assert.equal(again.code, 0, again.stderr);
      const after = await rows(
        server.url,
        `SELECT c.trace_hash, r.error_kind FROM tb_candidates c
         JOIN tb_results r ON r.candidate_id = c.id WHERE c.run_id = 1`,
      );
      assert.equal(after.length, 30);
      assert.equal(new Set(after.map((r) => r.trace_hash)).size, 30);
      const hashes = new Set(after.map((r) => r.trace_hash));
      for (const k of kept) assert.ok(hashes.has(k.trace_hash), `${k.trace_hash} lost`);
      const status = await rows(server.url, "SELECT status FROM tb_runs WHERE id = 1");
      assert.equal(status[0]?.status, "finished");
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
