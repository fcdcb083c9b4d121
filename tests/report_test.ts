/** End-to-end tests of `deno task report` on a small database made by `deno task tune`. */
import assert from "node:assert/strict";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { join } from "node:path";
import { kernelCompiler } from "../ir/target_cpu.ts";

function deno(script: string, args: string[], cwd: string) {
  return runScript(script, args, cwd, SHARED_KERNEL_CACHE);
}

async function chromium(): Promise<string | undefined> {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      const r = await new Deno.Command("which", { args: [name], stdout: "piped" }).output();
      if (r.success) return new TextDecoder().decode(r.stdout).trim();
    } catch { /* no `which` */ }
  }
  return undefined;
}

Deno.test("report writes an offline HTML page with every run, its curve and its best schedule", async () => {
  const dir = await Deno.makeTempDir();
  const db = join(dir, "runs.db");
  for (const seed of ["1", "2"]) {
    const t = await deno("cli/tune.ts", [
      "--workload",
      "matmul",
      "--shape",
      "32,32,32",
      "--trials",
      "4",
      "--seed",
      seed,
      "--db",
      db,
      "--quiet",
    ], dir);
    assert.equal(t.code, 0, t.stderr);
  }
  const r = await deno("cli/report.ts", ["--db", db, "--out", "report"], dir);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  assert.equal(summary.runs, 2);
  assert.equal(summary.out, join("report", "index.html"));
  const html = await Deno.readTextFile(join(dir, "report", "index.html"));
  assert.ok(html.startsWith("<!DOCTYPE html>"));
  assert.doesNotMatch(html, /https?:\/\//, "no external URL, not even a namespace");
  assert.doesNotMatch(html, /<script|<link|<img/);
  // The table: one row per run with strategy, seed, workload, machine, compiler and version.
  const rows = html.match(/<tr><td><a href="#run-\d+">\d+<\/a><\/td>.*<\/tr>/g) ?? [];
  assert.equal(rows.length, 2);
  assert.match(
    rows[0],
    /<td>random<\/td><td class="num">1<\/td><td>matmul:32,32,32<\/td><td>cpu<\/td>/,
  );
  assert.match(rows[1], /<td class="num">2<\/td>/);
  assert.match(rows[0], /cores/);
  // The compiler of the run: gcc unless TUNEBOOK_CC names another (`kernelCompiler`).
  assert.ok(rows[0].includes(kernelCompiler().cc), "the compiler");
  assert.match(rows[0], /<td class="num">4<\/td><td class="num">4<\/td>/, "trials and measured");
  assert.match(rows[0], /<td class="num">\d+\.\d\d<\/td><\/tr>$/, "best GFLOP/s");
  // Per run: a section, an inline SVG tuning curve and the best schedule as code.
  for (const id of [1, 2]) {
    const section = html.match(new RegExp(`<section id="run-${id}">([\\s\\S]*?)</section>`))?.[1];
    assert.ok(section, `section of run ${id}`);
    assert.match(section, /<svg width="640"/);
    assert.match(section, /<pre># matmul\(32, 32, 32\)\nsch = Schedule\(matmul\(32, 32, 32\)\)/);
  }
  const only = await deno("cli/report.ts", ["--db", db, "--out", "one", "--runs", "2"], dir);
  assert.equal(only.code, 0, only.stderr);
  const one = await Deno.readTextFile(join(dir, "one", "index.html"));
  assert.ok(one.includes('id="run-2"') && !one.includes('id="run-1"'));

  const browser = await chromium();
  if (browser) {
    const shot = await new Deno.Command(browser, {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        `--screenshot=${join(dir, "report.png")}`,
        "--window-size=1200,1600",
        `file://${join(dir, "report", "index.html")}`,
      ],
      stdout: "null",
      stderr: "null",
    }).output();
    assert.ok(shot.success, "headless chromium renders the page");
    assert.ok((await Deno.stat(join(dir, "report.png"))).size > 1000);
  } else {
    console.log("report_test: no chromium installed; the page is not screenshotted");
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("report exits with status 2 and names bad arguments", async () => {
  const dir = await Deno.makeTempDir();
  const cases: [string[], RegExp][] = [
    [[], /Missing --db/],
    [["--db", join(dir, "none.db")], /none\.db: no such records database/],
    [["--db", dir], /is not a file/],
    [["--db", join(dir, "none.db"), "--bogus"], /bogus/],
  ];
  for (const [args, message] of cases) {
    const r = await deno("cli/report.ts", args, dir);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, "");
  }
  await Deno.remove(dir, { recursive: true });
});
