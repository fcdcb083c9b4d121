/**
 * The strategy table (tuner/strategies.ts) through the commands: every name
 * runs in `tune` on matmul 64, on the CPU and (building strategies, no GPU
 * needed) for `--target cuda`; what a strategy or target cannot honour exits
 * 2 with one line; both help texts list the table; choosing `random` loads
 * no tfjs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { main as tuneMain } from "../cli/tune.ts";
import { createWorkload } from "../ir/workloads.ts";
import {
  KNOB_STRATEGY_NAMES,
  STRATEGIES,
  STRATEGY_NAMES,
  TRANSFER_STRATEGIES,
} from "../tuner/strategies.ts";
import { strategyFor, strategyProblem } from "../tuner/tune_strategy.ts";
import { ROOT, runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { scriptArgs } from "../cli/script.ts";

// No finalists: the four results counted are the search's (tuner/confirm_test.ts tests them).
const FAST = [
  ...["--trials", "4", "--batch", "4", "--repeat", "1", "--min-repeat-ms", "0", "--quiet"],
  ...["--finalists", "0"],
];
const MATMUL = ["--workload", "matmul", "--shape", "64,64,64"];

/** Runs tune's `main` in this process (one Deno start for all names), stdout captured. */
async function tuneInProcess(argv: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...xs: unknown[]) => void lines.push(xs.map(String).join(" "));
  try {
    return { code: await tuneMain(argv), lines };
  } finally {
    console.log = log;
  }
}

Deno.test("tune --strategy S --trials 4 finishes on matmul 64 for every name of the table", async () => {
  const dir = await Deno.makeTempDir();
  const cache = Deno.env.get("TUNEBOOK_CACHE");
  Deno.env.set("TUNEBOOK_CACHE", SHARED_KERNEL_CACHE.TUNEBOOK_CACHE);
  try {
    for (const name of STRATEGY_NAMES.filter((n) => !TRANSFER_STRATEGIES.includes(n))) {
      const db = join(dir, `${name}.db`);
      const r = await tuneInProcess([...MATMUL, "--strategy", name, "--db", db, ...FAST]);
      assert.equal(r.code, 0, name);
      const summary = JSON.parse(r.lines.at(-1)!);
      assert.equal(summary.strategy, name);
      const rows = new DatabaseSync(db).prepare("SELECT COUNT(*) AS n FROM results").get() as {
        n: number;
      };
      assert.equal(rows.n, 4, `${name}: ${rows.n} results`);
    }
  } finally {
    if (cache === undefined) Deno.env.delete("TUNEBOOK_CACHE");
    else Deno.env.set("TUNEBOOK_CACHE", cache);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every name of the table builds a strategy for --target cuda (sketches or the GPU template)", async () => {
  const workload = createWorkload("matmul", [64, 64, 64]);
  for (const strategy of STRATEGY_NAMES.filter((n) => !TRANSFER_STRATEGIES.includes(n))) {
    const r = { strategy, workload, target: "cuda", seed: 1 };
    assert.equal(strategyProblem(r), undefined, strategy);
    const proposed = (await strategyFor(r)).propose(4);
    assert.ok(proposed.length > 0 && proposed.every((c) => c.trace), strategy);
    // Knob strategies search the GPU template; random and ansor the GPU sketches.
    assert.equal(proposed.every((c) => c.knobs), !STRATEGIES[strategy].traces, strategy);
  }
  // random with --template samples that template's knobs (it used to ignore the template).
  const random = await strategyFor({
    strategy: "random",
    workload,
    target: "cuda",
    template: "matmul-gpu",
    seed: 1,
  });
  assert.ok(random.propose(4).every((c) => c.knobs));
});

Deno.test("tune refuses with status 2 and one line what a strategy or target cannot honour", async () => {
  const dir = await Deno.makeTempDir();
  const base = [...MATMUL, "--db", join(dir, "r.db"), ...FAST];
  const cases: [string[], RegExp][] = [
    [["--strategy", "ansor", "--template", "matmul"], /--template matmul: strategy ansor searches/],
    [["--strategy", "xgb-transfer"], /--strategy xgb-transfer needs records .* compare/],
    [["--strategy", "sa", "--template", "conv2d"], /--template conv2d: Template "conv2d"/],
    [["--strategy", "magic"], /Unknown strategy "magic"; known: random, grid/],
  ];
  for (const [args, message] of cases) {
    const r = await runScript("cli/tune.ts", [...base, ...args], dir);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  const traced = await runScript(
    "cli/tune.ts",
    ["--trace", join(ROOT, "no.json"), "--strategy", "sa", "--db", join(dir, "r.db")],
    dir,
  );
  assert.equal(traced.code, 2);
  assert.match(traced.stderr, /--strategy cannot be given with --trace/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compare refuses with status 2 what its strategies cannot honour", async () => {
  const dir = await Deno.makeTempDir();
  const base = ["--space", "pnpoly_RTX_3090", "--budget", "4", "--seeds", "1", "--quiet"];
  const cases: [string[], RegExp][] = [
    [["--strategies", "random,ansor"], /ansor searches sketches .* knob spaces/],
    [["--strategies", "random,sa", "--plan-size", "8"], /--plan-size: none of random, sa plans/],
    [["--strategies", "sa", "--transfer-from", "pnpoly_A100"], /--transfer-from: none of sa/],
    [["--strategies", "sa", "--template", "matmul"], /--template matmul: .* recorded space/],
  ];
  for (const [args, message] of cases) {
    const r = await runScript("cli/compare.ts", [...base, ...args, "--out", dir], dir);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the help texts of tune and compare list the strategy table", async () => {
  const dir = await Deno.makeTempDir();
  const tune = await runScript("cli/tune.ts", ["--help"], dir);
  const compare = await runScript("cli/compare.ts", ["--help"], dir);
  for (const name of STRATEGY_NAMES) {
    const line = new RegExp(
      `^  ${name.replace(/[-]/g, "\\-")} +${STRATEGIES[name].about.replace(/[()+.?]/g, "\\$&")}$`,
      "m",
    );
    assert.match(tune.stdout, line, name);
    if (KNOB_STRATEGY_NAMES.includes(name)) assert.match(compare.stdout, line, name);
    else assert.doesNotMatch(compare.stdout, line, name);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("random search loads no tfjs; mlp does (the probe sees tfjs's engine global)", async () => {
  const dir = await Deno.makeTempDir();
  const probe = join(dir, "probe.ts");
  const url = (p: string) => new URL(p, `file://${ROOT}/`).href;
  await Deno.writeTextFile(
    probe,
    `import { createStrategy } from "${url("tuner/strategies.ts")}";
import "${url("cli/tune.ts")}";
import "${url("cli/compare.ts")}";
import { KnobSpace } from "${url("ir/knobs.ts")}";
const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3] }]);
const loaded = () => "_tfengine" in globalThis;
(await createStrategy("random", space, { seed: 1 })).propose(1);
const afterRandom = loaded();
(await createStrategy("mlp", space, { seed: 1 })).propose(1);
console.log(JSON.stringify({ afterRandom, afterMlp: loaded() }));
`,
  );
  const out = await runAbsolute(probe, dir);
  assert.equal(out.code, 0, out.stderr);
  assert.deepEqual(JSON.parse(out.stdout.trim()), { afterRandom: false, afterMlp: true });
  await Deno.remove(dir, { recursive: true });
});

/** Runs a script given by absolute path with the repository's config. */
async function runAbsolute(path: string, cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: scriptArgs(path),
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("what a replay or the GPU cannot honour is refused with status 2", async () => {
  const dir = await Deno.makeTempDir();
  const db = ["--db", join(dir, "r.db"), "--quiet"];
  const cases: [string[], RegExp][] = [
    [["--space", "pnpoly_RTX_3090", "--repeat", "5"], /--repeat cannot be given with --space/],
    [["--space", "pnpoly_RTX_3090", "--unity", "2"], /--unity cannot be given with --space/],
    [["--space", "pnpoly_RTX_3090", "--strategy", "ansor"], /--space: strategy ansor searches/],
    [[...MATMUL, "--target", "cuda", "--unity", "2"], /--unity: target cuda builds one/],
    [[...MATMUL, "--target", "cuda", "--race", "2"], /--race: target cuda times every repeat/],
  ];
  for (const [args, message] of cases) {
    const r = await runScript("cli/tune.ts", [...args, ...db], dir);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  await Deno.remove(dir, { recursive: true });
});
