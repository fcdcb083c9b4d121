/**
 * The benches keep the commands' rule for bad input: an unknown flag is one
 * line on stderr naming it (`NAME: ...`) and exit status 2, never a stack
 * trace; `--help` prints the usage and exits 0.
 */
import assert from "node:assert/strict";
import { runScript } from "./_cli.ts";

/** Every bench with a main entry that reads flags or positional arguments. */
const BENCHES = [
  "below_random",
  "bo_ablation",
  "bo_diagnose",
  "bo_speed",
  "cli_throughput",
  "compile_cost",
  "conditions_cost",
  "costmodel_bench",
  "cuda_check_cost",
  "distributed",
  "finalists_in_pass",
  "finalists_tune",
  "gpu_peers",
  "harness_agreement",
  "if_conversion",
  "matmul_kernels",
  "methodology_random",
  "network_estimate",
  "network_peers",
  "network_study",
  "network_throughput",
  "peers",
  "replay_throughput",
  "rl_overhead",
  "scheduler_latency",
  "scheduler_replay",
  "slow_spells",
  "strategy_study",
  "tiles",
  "tuning_throughput",
  "unity_code",
];

// Nothing is installed on the way (the flags are checked before any setup anyway).
const ENV = { TUNEBOOK_NO_SETUP: "1" };

Deno.test("every bench refuses an unknown flag in one line with status 2", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const runs = await Promise.all(
      BENCHES.map((b) => runScript(`bench/${b}.ts`, ["--bogus-flag"], dir, ENV)),
    );
    BENCHES.forEach((b, i) => {
      const r = runs[i];
      assert.equal(r.code, 2, `${b}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /Uncaught/, b);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `${b}: ${r.stderr}`);
      assert.ok(lines[0].startsWith(`${b}: `), `${b}: ${r.stderr}`);
      assert.match(lines[0], /--bogus-flag/, b);
      assert.equal(r.stdout, "", `${b} printed nothing else`);
    });
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing written into the current folder");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every bench answers --help with its usage and status 0", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const runs = await Promise.all(
      BENCHES.map((b) => runScript(`bench/${b}.ts`, ["--help"], dir, ENV)),
    );
    BENCHES.forEach((b, i) => {
      const r = runs[i];
      assert.equal(r.code, 0, `${b}: ${r.stderr}`);
      assert.match(r.stdout, /usage/i, b);
      assert.ok(r.stdout.includes(`bench/${b}.ts`), `${b}'s usage names it: ${r.stdout}`);
      assert.equal(r.stderr, "", b);
    });
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing written into the current folder");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("below_random names a compare output it cannot read, in one line with status 2", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/empty.json`, "{}\n");
    for (const file of ["missing.json", "empty.json"]) {
      const r = await runScript("bench/below_random.ts", [file], dir, ENV);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr.trim(), new RegExp(`^below_random: [^\\n]*"${file}"[^\\n]*$`));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("benches name a bad shape, network or space in one line with status 2", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cases: [string, string[], RegExp][] = [
      ["tuning_throughput", ["--shape", "1,x"], /--shape: dimension 2 "x"/],
      ["unity_code", ["--shape", "1,2"], /--shape: .*3 dimensions/],
      ["finalists_tune", ["--shape", "0,0,0"], /--shape: .*positive integer/],
      ["network_throughput", ["--network", "nope"], /--network: Unknown network "nope"/],
      ["bo_diagnose", ["nope_space"], /cannot open space "nope_space"/],
    ];
    const runs = await Promise.all(
      cases.map(([b, args]) => runScript(`bench/${b}.ts`, args, dir, ENV)),
    );
    cases.forEach(([b, , pattern], i) => {
      const r = runs[i];
      assert.equal(r.code, 2, `${b}: ${r.stderr}`);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `${b}: ${r.stderr}`);
      assert.ok(lines[0].startsWith(`${b}: `), r.stderr);
      assert.match(lines[0], pattern, b);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
