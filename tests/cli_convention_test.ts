/**
 * The one command-line convention of cli/: every command takes `--quiet`;
 * tables on stdout before the final JSON line (so `compare ... > out.txt`
 * keeps the tables); unknown names get a did-you-mean, not a file-not-found
 * with an absolute path.
 */
import assert from "node:assert/strict";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { lastJsonLine } from "../cli/output.ts";

/** Every command, and arguments that make it stop at once with a usage error (status 2). */
const COMMANDS: [string, string[]][] = [
  ["cli/tune.ts", []],
  ["cli/compare.ts", []],
  ["cli/report.ts", []],
  ["cli/export.ts", []],
  ["cli/reproduce.ts", []],
  ["cli/costmodel_eval.ts", []],
  ["cli/study.ts", ["--trials", "0"]],
  ["cli/tune_network.ts", []],
  ["cli/queue_worker.ts", []],
  ["cli/tune_strategy.ts", []],
];

Deno.test("every command documents and accepts --quiet", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const [script, stop] of COMMANDS) {
      const help = await runScript(script, ["--help"], dir);
      assert.equal(help.code, 0, `${script}: ${help.stderr}`);
      assert.match(help.stdout, /--quiet/, `${script} --help lists --quiet`);
      const r = await runScript(script, ["--quiet", ...stop], dir);
      assert.equal(r.code, 2, `${script} --quiet: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /quiet/, `${script} knows --quiet: ${r.stderr}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing written into the current folder");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compare prints its tables on stdout, then the JSON line: > out.txt keeps both", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await runScript(
      "cli/compare.ts",
      [
        "--space",
        "pnpoly_RTX_3090",
        "--strategies",
        "random,sa",
        "--budget",
        "10,20",
        "--seeds",
        "2",
        "--out",
        "curves",
        "--quiet",
      ],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\| strategy \| budget \| mean \| median/);
    assert.match(r.stdout, /Samples to reach 95% of the optimum/);
    assert.match(r.stdout, /Budget-aggregated score/);
    assert.doesNotMatch(r.stderr, /\| strategy \|/, "no table on stderr");
    const s = lastJsonLine(r.stdout) as { results: unknown[]; scores: Record<string, unknown> };
    assert.equal(s.results.length, 4);
    assert.deepEqual(Object.keys(s.scores), ["random", "sa"]);
    // The JSON is the last line: everything before it is for people.
    assert.ok(r.stdout.trimEnd().split("\n").at(-2)!.startsWith("|"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an unknown space or strategy gets a did-you-mean, not a path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cases: [string, string[], RegExp][] = [
      ["cli/compare.ts", ["--space", "pnpoly"], /did you mean pnpoly_RTX_3090\?/],
      ["cli/compare.ts", ["--space", "gemm_RTX_3909"], /did you mean gemm_RTX_3090\?/],
      [
        "cli/tune.ts",
        ["--space", "pnpoly", "--db", "x.db"],
        /--space pnpoly: no recorded space of that name; did you mean pnpoly_RTX_3090\?/,
      ],
      [
        "cli/tune.ts",
        ["--workload", "matmull", "--shape", "8,8,8"],
        /Unknown workload "matmull"; did you mean matmul\?; known: matmul, /,
      ],
      [
        "cli/compare.ts",
        ["--space", "pnpoly_RTX_3090", "--strategies", "random,sx"],
        /Unknown strategy "sx"; did you mean sa/,
      ],
      [
        "cli/tune_network.ts",
        ["--network", "resnet1"],
        /^tune-network: Unknown network "resnet1"; did you mean resnet18\?; give resnet18, mobilenet_v2, /,
      ],
      [
        "cli/tune_network.ts",
        ["--network", "squeezenet"],
        /did you mean squeezenet1_1\?/,
      ],
    ];
    for (const [script, args, message] of cases) {
      const r = await runScript(script, args, dir);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /No such file|os error|\/data\/kerneltuner\//, r.stderr);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
    // A space of no close name still lists the known ones.
    const far = await runScript("cli/compare.ts", ["--space", "zzzz"], dir);
    assert.equal(far.code, 2);
    assert.match(far.stderr, /no recorded space of that name \(known: .*gemm_RTX_3090/);
    const farNet = await runScript("cli/tune_network.ts", ["--network", "zzzz"], dir);
    assert.equal(farNet.code, 2);
    assert.match(
      farNet.stderr,
      /^tune-network: Unknown network "zzzz"; give resnet18, mobilenet_v2, squeezenet1_1,/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
