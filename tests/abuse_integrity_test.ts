/**
 * Abuse tests of damage found early (issue 41, item 7), through the CLI: a
 * garbled page is refused by a writing command (`tune`, `reproduce`) before
 * it appends or measures anything; bad JSON in `candidates.trace`, or a trace
 * edited by hand under its old hash, is an error naming the candidate for
 * `export` and `tune --resume`. Each exits 2 with one line; the file stays
 * byte for byte as it was.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
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

const TUNE = [
  ...["--workload", "matmul", "--shape", "16,16,16", "--repeat", "1", "--min-repeat-ms", "0"],
  "--quiet",
];

/** A real run of `trials` trials left unfinished (status running), as a killed tune leaves it. */
async function tunedDB(dir: string, name: string, trials: number): Promise<string> {
  const r = await cli("cli/tune.ts", [...TUNE, "--trials", String(trials), "--db", name], dir);
  assert.equal(r.code, 0, r.stderr);
  const raw = new DatabaseSync(join(dir, name));
  raw.exec("UPDATE runs SET status = 'running', finished = NULL");
  raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  raw.close();
  return join(dir, name);
}

Deno.test("a garbled page stops tune before it appends and reproduce before it measures", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = await tunedDB(dir, "g.db", 12);
    const raw = new DatabaseSync(path);
    // The leaf page of the candidates table that holds its last rows.
    const page = Number(
      raw.prepare("SELECT max(pageno) AS p FROM dbstat WHERE name = 'candidates'").get()!.p,
    );
    raw.close();
    const bytes = Deno.readFileSync(path);
    assert.ok(page > 1 && page * 4096 <= bytes.length, `page ${page} of ${bytes.length} bytes`);
    for (let i = (page - 1) * 4096 + 8; i < (page - 1) * 4096 + 200; i++) {
      bytes[i] = (i * 37) & 0xff;
    }
    Deno.writeFileSync(path, bytes);
    const cases: [string, string[]][] = [
      ["cli/tune.ts", [...TUNE, "--trials", "2", "--db", "g.db"]],
      ["cli/tune.ts", ["--resume", "--db", "g.db", "--quiet"]],
      ["cli/reproduce.ts", ["--db", "g.db", "--run", "1", "--quiet"]],
    ];
    for (const [script, args] of cases) {
      const started = Date.now();
      const r = await cli(script, args, dir);
      assertOneLine(r, /g\.db.*damaged/, `${script} ${args.join(" ")}`);
      assert.doesNotMatch(r.stdout, /\S/, "a summary printed");
      assert.ok(Date.now() - started < 20_000, `${script} took ${Date.now() - started} ms`);
      assert.deepEqual(Deno.readFileSync(path), bytes, `${script} wrote to the damaged file`);
    }
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.startsWith("g.db")),
      ["g.db"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bad JSON in candidates.trace, or a trace edited under its old hash, is an error naming the candidate", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const good = await tunedDB(dir, "good.db", 4);
    // Real records pass the check.
    const ok = await cli(
      "cli/export.ts",
      ["--db", "good.db", "--format", "csv", "--out", "ok.csv"],
      dir,
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).rows, 4);
    const edit = (name: string, sql: string) => {
      Deno.copyFileSync(good, join(dir, name));
      const raw = new DatabaseSync(join(dir, name));
      raw.exec(sql);
      raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      raw.close();
      return Deno.readFileSync(join(dir, name));
    };
    const badJson = edit("badjson.db", `UPDATE candidates SET trace = '{"insts": [' WHERE id = 2`);
    // A split factor changed by hand: valid JSON, another trace, the old hash.
    const edited = edit(
      "edited.db",
      `UPDATE candidates SET trace = replace(trace, '"insts":[', '"insts":[{"op":"noop"},')
       WHERE id = 3`,
    );
    const raw = new DatabaseSync(join(dir, "edited.db"));
    const t = String(raw.prepare("SELECT trace FROM candidates WHERE id = 3").get()!.trace);
    raw.close();
    assert.match(t, /noop/, "the edit took");
    for (
      const [db, bytes, pattern] of [
        ["badjson.db", badJson, /badjson\.db.*candidate 2 \(run 1, trial 1\).*not valid JSON/],
        ["edited.db", edited, /edited\.db.*candidate 3 \(run 1, trial 2\).*hash does not match/],
      ] as const
    ) {
      const exported = await cli(
        "cli/export.ts",
        ["--db", db, "--format", "jsonl", "--out", `${db}.jsonl`],
        dir,
      );
      assertOneLine(exported, pattern, `export ${db}`);
      const resumed = await cli("cli/tune.ts", ["--resume", "--db", db, "--quiet"], dir);
      assertOneLine(resumed, pattern, `tune --resume ${db}`);
      assert.deepEqual(Deno.readFileSync(join(dir, db)), bytes, `${db} changed`);
      assert.ok(
        ![...Deno.readDirSync(dir)].some((e) => e.name === `${db}.jsonl`),
        "output written",
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
