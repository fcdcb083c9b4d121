/** End-to-end tests of `deno task report` on a small database made by `deno task tune`. */
import assert from "node:assert/strict";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { join } from "node:path";
import { kernelCompiler } from "../ir/target_cpu.ts";
import { decodePNG, distinctColours, inkFraction } from "../plots/png.ts";
import { PALETTE } from "../plots/tuning_curve.ts";

function deno(script: string, args: string[], cwd: string) {
  return runScript(script, args, cwd, SHARED_KERNEL_CACHE);
}

/** Headless Chromium's screenshot of an HTML file, with no network, profile or GPU. */
async function screenshot(browser: string, html: string, png: string, size: string) {
  const profile = await Deno.makeTempDir();
  try {
    return await new Deno.Command(browser, {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
        `--screenshot=${png}`,
        `--window-size=${size}`,
        `file://${html}`,
      ],
      stdout: "null",
      stderr: "null",
    }).output();
  } finally {
    await Deno.remove(profile, { recursive: true });
  }
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
  // The finalists of each tune (runs 2 and 4) are timed again: the row shows the best's first
  // figure, then the confirmed one, and no row of their own.
  assert.match(
    rows[0],
    /<td class="num">\d+\.\d\d<\/td><td class="num">\d+\.\d\d<\/td><\/tr>$/,
    "first and best GFLOP/s",
  );
  assert.deepEqual(rows.map((row) => row.match(/#run-(\d+)/)![1]), ["1", "3"]);
  assert.match(html, /<th>first GFLOP\/s<\/th><th>best GFLOP\/s<\/th>/);
  // Per run: a section, an inline SVG tuning curve and the best schedule as code.
  for (const id of [1, 3]) {
    const section = html.match(new RegExp(`<section id="run-${id}">([\\s\\S]*?)</section>`))?.[1];
    assert.ok(section, `section of run ${id}`);
    assert.match(section, /<svg width="\d+"/);
    assert.match(section, /<pre># matmul\(32, 32, 32\)\nsch = Schedule\(matmul\(32, 32, 32\)\)/);
    assert.match(
      section,
      /Best schedule \(trial \d+, [\d.]+ GFLOP\/s confirmed over 3 rounds in run \d+, first [\d.]+\)/,
    );
  }
  // A run whose ranking is within the noise says so in its section, on stdout and in the JSON.
  assert.ok(Array.isArray(summary.uncertain));
  for (const id of [1, 3]) {
    const section = html.match(new RegExp(`<section id="run-${id}">([\\s\\S]*?)</section>`))![1];
    const u = summary.uncertain.find((x: { run: number }) => x.run === id);
    assert.equal(section.includes('<p class="warning">warning: ranking uncertain: '), !!u);
    if (u) assert.ok(r.stdout.includes(`run ${id}: ${u.warning}`));
  }
  const only = await deno("cli/report.ts", ["--db", db, "--out", "one", "--runs", "3"], dir);
  assert.equal(only.code, 0, only.stderr);
  const one = await Deno.readTextFile(join(dir, "one", "index.html"));
  assert.ok(one.includes('id="run-3"') && !one.includes('id="run-1"'));

  const browser = await chromium();
  if (browser) {
    const shot = await screenshot(
      browser,
      join(dir, "report", "index.html"),
      join(dir, "report.png"),
      "1200,1600",
    );
    assert.ok(shot.success, "headless chromium renders the page");
    assert.ok((await Deno.stat(join(dir, "report.png"))).size > 1000);
  } else {
    console.log("report_test: no chromium installed; the page is not screenshotted");
  }
  await Deno.remove(dir, { recursive: true });
});

/** Pixels of `image` within 24 of the colour `hex` in each channel. */
function pixelsNear(image: ReturnType<typeof decodePNG>, hex: string): number {
  const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  let n = 0;
  for (let i = 0; i < image.width * image.height; i++) {
    const p = i * image.channels;
    if (want.every((c, k) => Math.abs(image.pixels[p + k] - c) <= 24)) n++;
  }
  return n;
}

Deno.test("report of a comparison: one page per space, bands per strategy, score and reach tables, screenshotted", async () => {
  const dir = await Deno.makeTempDir();
  const db = join(dir, "F.db");
  const c = await deno("cli/compare.ts", [
    "--space",
    "gemm_RTX_3090",
    "--strategies",
    "random,sa,bo",
    "--seeds",
    "4",
    "--db",
    db,
    "--out",
    join(dir, "curves"),
    "--quiet",
  ], dir);
  assert.equal(c.code, 0, c.stderr);
  const compared = JSON.parse(c.stdout.trim().split("\n").at(-1)!);
  const r = await deno("cli/report.ts", ["--db", db], dir);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  // Beside the database, not in the current folder.
  assert.equal(summary.out, join(dir, "F_report", "index.html"));
  assert.equal(summary.runs, 12);
  assert.equal(summary.spaces, 1);
  const html = await Deno.readTextFile(summary.out);
  assert.doesNotMatch(html, /https?:\/\//);
  assert.doesNotMatch(html, /<script|<link|<img/);
  // One page for the space, none per seed, and no 0.00 GFLOP/s row of a replayed run.
  assert.equal((html.match(/<section class="space"/g) ?? []).length, 1);
  assert.doesNotMatch(html, /<section id="run-/);
  assert.doesNotMatch(html, /0\.00 GFLOP\/s|>null<|\{\}/);
  const page = html.match(/<section class="space" id="space-gemm_RTX_3090">([\s\S]*?)<\/section>/)
    ?.[1];
  assert.ok(page, "the page of gemm_RTX_3090");
  // The figure: a band and a median line for each strategy, the random expectation dashed.
  for (const colour of PALETTE.slice(0, 3)) {
    assert.match(page, new RegExp(`<path[^>]*fill="${colour}"`), `band ${colour}`);
    assert.match(page, new RegExp(`<path[^>]*stroke="${colour}"`), `median ${colour}`);
  }
  assert.match(page, /stroke-dasharray="6,4"/);
  assert.match(page, /random search \(expected\)/);
  // The tables agree with what compare printed: medians at each budget, reach, score.
  for (const row of compared.results) {
    const cells = `<tr><td>${row.strategy}</td><td class="num">${row.budget}</td>` +
      `<td class="num">${row.mean_fraction.toFixed(3)}</td>` +
      `<td class="num">${row.median_fraction.toFixed(3)}</td>`;
    assert.ok(page.includes(cells), `fraction row ${row.strategy} ${row.budget}`);
  }
  for (const row of compared.reach) {
    assert.ok(
      page.includes(`<tr><td>${row.strategy}</td><td class="num">${row.reached}/${row.seeds}</td>`),
      `reach row ${row.strategy}`,
    );
  }
  for (const [name, score] of Object.entries(compared.scores)) {
    assert.ok(
      page.includes(`<tr><td>${name}</td><td class="num">${(score as number).toFixed(3)}</td>`),
      `score of ${name}`,
    );
  }
  assert.match(page, /optimum 5\.\d+ ms, the cache's best/);

  const browser = await chromium();
  if (browser) {
    const png = join(dir, "F_report.png");
    const shot = await screenshot(browser, summary.out, png, "1100,1800");
    assert.ok(shot.success, "headless chromium renders the page");
    const image = decodePNG(await Deno.readFile(png));
    assert.deepEqual([image.width, image.height], [1100, 1800]);
    assert.ok(inkFraction(image) > 0.02, `not blank: ${inkFraction(image)}`);
    assert.ok(distinctColours(image) > 200, "text, tables and a figure");
    // Each strategy's colour is on screen (its band and median line), not only in the SVG.
    for (const colour of PALETTE.slice(0, 3)) {
      assert.ok(pixelsNear(image, colour) > 200, `${colour} drawn: ${pixelsNear(image, colour)}`);
    }
    const keep = Deno.env.get("TUNEBOOK_REPORT_SCREENSHOT");
    if (keep) await Deno.copyFile(png, keep);
  } else {
    console.log("report_test: no chromium installed (bash scripts/setup.sh test installs it)");
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("report of a live comparison shows best GFLOP/s against evaluations", async () => {
  const dir = await Deno.makeTempDir();
  const db = join(dir, "live.db");
  const c = await deno("cli/compare.ts", [
    "--space",
    "matmul:24,16,8",
    "--strategies",
    "random,sa",
    "--seeds",
    "2",
    "--budget",
    "4",
    "--db",
    db,
    "--out",
    join(dir, "curves"),
    "--quiet",
  ], dir);
  assert.equal(c.code, 0, c.stderr);
  const compared = JSON.parse(c.stdout.trim().split("\n").at(-1)!);
  const r = await deno("cli/report.ts", ["--db", db, "--out", join(dir, "page"), "--quiet"], dir);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim().split("\n").length, 1, "--quiet: the JSON line alone");
  const html = await Deno.readTextFile(join(dir, "page", "index.html"));
  const page = html.match(/<section class="space" id="space-matmul_24_16_8">([\s\S]*?)<\/section>/)
    ?.[1];
  assert.ok(page, "the page of matmul:24,16,8");
  assert.match(page, /measured live on this CPU/);
  // The page says whether the two strategies' final bests are within their noise, as compare did.
  const summary = JSON.parse(r.stdout.trim());
  const spaceWarning = page.includes('<p class="warning">warning: ranking uncertain: ');
  assert.equal(spaceWarning, (summary.uncertainSpaces ?? []).length === 1);
  assert.equal(typeof compared.ranking.uncertain, "boolean");
  // The optimum is the best measured, in ms and GFLOP/s (the workload's flops / seconds).
  const gflops = (2 * 24 * 16 * 8 / compared.optimum / 1e9).toFixed(2);
  assert.ok(page.includes(`(${gflops} GFLOP/s), the best measured in these runs`), gflops);
  const figures = page.match(/<svg[\s\S]*?<\/svg>\s*<\/svg>/g) ?? [];
  assert.equal(figures.length, 2, "fraction of the optimum, and best GFLOP/s");
  assert.match(page, /<h3>Best GFLOP\/s so far<\/h3>/);
  assert.match(figures[1], /best GFLOP\/s so far/);
  // No random expectation on a live space: the score's reference is the random runs.
  assert.match(page, /0 = random search \(random runs\)/);
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
