/**
 * bench/peers.ts runs on a tiny size: every peer gives a positive figure, a
 * clear `unavailable: <reason>`, or `n/a` for a workload it does not support.
 * Harnesses and Halide pipelines are cached under .cache/peers/, so only the
 * first run compiles them.
 */
import assert from "node:assert/strict";
import { UsageError } from "../cli/args.ts";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { createWorkload } from "../ir/workloads.ts";
import { defaultSpace } from "../search/sketch.ts";
import { randomSearch } from "../search/random.ts";
import {
  avx512Missing,
  compileFailure,
  DEFAULT_CACHE,
  pairedRatio,
  parsePeersArgs,
  PeerHarnesses,
  PEERS,
  peersTable,
  problemArgs,
  referencePeer,
  runPeers,
  workloadLabel,
} from "../bench/peers.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("bench/peers.ts measures every peer on matmul 64 or says why it cannot", async () => {
  const dir = await Deno.makeTempDir();
  const [c] = randomSearch(defaultSpace(createWorkload("matmul", [64, 64, 64])), { seed: 3 })
    .propose(1);
  await Deno.writeTextFile(join(dir, "t.json"), JSON.stringify(c.trace));
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "bench/peers.ts",
      "--sizes",
      "64",
      "--convs",
      "none",
      "--repeat",
      "2",
      "--min-repeat-ms",
      "1",
      "--rounds",
      "2",
      "--trace",
      join(dir, "t.json"),
    ],
    cwd: ROOT,
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  assert.match(stdout, /best of 2 round\(s\) over the peers/);
  assert.match(stdout, /\| workload \| tunebook \| openblas-avx512 \|/);
  assert.match(stdout, /\| matmul 64x64x64 \|/);
  // On a CPU without AVX-512 that peer says so, and OpenBLAS's default kernels are the reference.
  const reference = avx512Missing() ? "openblas-default" : "openblas-avx512";
  assert.match(
    stdout,
    new RegExp(`tunebook / ${reference}, matmul 64x64x64, round by round: median \\d`),
  );
  if (avx512Missing()) {
    assert.match(stdout, /openblas-avx512: unavailable: this CPU has no AVX-512/);
  }
  const { results } = JSON.parse(stdout.trim().split("\n").at(-1)!);
  assert.deepEqual(results.map((r: { peer: string }) => r.peer), [...PEERS]);
  for (const r of results) {
    if ("unavailable" in r) assert.match(r.unavailable, /\w{3,}/, r.peer);
    else assert.ok(r.gflops > 0, `${r.peer}: ${JSON.stringify(r)}`);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("grouped and depthwise convolutions are timed as oneDNN's grouped convolution", async () => {
  const group = createWorkload("group_conv2d", [1, 8, 6, 6, 8, 3, 3, 1, 1, 2]);
  const dw = createWorkload("depthwise_conv2d_nchwc", [1, 16, 6, 6, 3, 3, 2, 1, 16]);
  assert.deepEqual(problemArgs(group), ["gconv", "1", "8", "6", "6", "8", "3", "3", "1", "1", "2"]);
  assert.equal(problemArgs(createWorkload("max_pool2d", [1, 8, 6, 6, 3, 2, 1, 0])), undefined);
  const rows = await runPeers({
    workloads: [group, dw],
    peers: ["naive", "onednn", "halide-li2018"],
    threads: 1,
    timing: { warmup: 1, repeat: 1, minRepeatMs: 1 },
    tunebook: { cacheDir: DEFAULT_CACHE },
  });
  for (const row of rows) {
    const { naive, onednn } = row.figures;
    assert.ok(naive && "gflops" in naive && naive.gflops > 0, JSON.stringify(naive));
    assert.ok(onednn && ("gflops" in onednn ? onednn.gflops > 0 : "unavailable" in onednn));
    assert.deepEqual(row.figures["halide-li2018"], {
      na: "the Halide pipeline has no grouped convolution",
    });
  }
  // A harness refuses groups that do not divide the channels, with exit 2 and one line.
  const naive = await new PeerHarnesses().harness("naive");
  assert.ok("path" in naive, JSON.stringify(naive));
  const bad = await new Deno.Command(naive.path, {
    args: "gconv 1 8 6 6 8 3 3 1 1 3 1 1 1".split(" "),
    stderr: "piped",
  }).output();
  assert.equal(bad.code, 2);
  assert.equal(new TextDecoder().decode(bad.stderr), "groups 3 must divide C 8 and F 8\n");
});

Deno.test("--convs takes other convolution workloads as NAME:SHAPE, and names the bad ones", () => {
  const a = parsePeersArgs([
    "--sizes",
    "none",
    "--convs",
    "conv2,depthwise_conv2d_nchwc:1,32,14,14,3,3,1,1,16;group_conv2d:1,8,6,6,8,3,3,1,1,2",
  ]);
  assert.deepEqual(a.workloads.map((w) => workloadLabel(w)), [
    "conv2d 1x64x56x56, 64 filters 3x3, stride 1, pad 1",
    "depthwise_conv2d_nchwc 1,32,14,14,3,3,1,1,16",
    "group_conv2d 1,8,6,6,8,3,3,1,1,2",
  ]);
  assert.throws(
    () => parsePeersArgs(["--convs", "max_pool2d:1,8,6,6,3,2,1,0"]),
    (e) => e instanceof UsageError && /max_pool2d is not one of conv2d, /.test(e.message),
  );
  assert.throws(
    () => parsePeersArgs(["--convs", "group_conv2d:1,8,6,6,8,3,3,1,1,3"]),
    (e) => e instanceof UsageError && /--convs "group_conv2d:.*": .*groups 3/.test(e.message),
  );
});

Deno.test("a peer whose library is missing is reported with the package to install", () => {
  const msg = compileFailure(
    "openblas harness",
    "openblas.c:3:10: fatal error: cblas.h: No such file or directory\ncompilation terminated.",
    "libopenblas-dev",
  );
  assert.equal(
    msg,
    "openblas harness: cblas.h not found (apt-get install libopenblas-dev, or bash scripts/setup.sh peers)",
  );
  assert.match(
    compileFailure(
      "onednn harness",
      "/usr/bin/ld: cannot find -ldnnl: No such file",
      "libdnnl-dev",
    ),
    /-ldnnl not found \(apt-get install libdnnl-dev/,
  );
});

Deno.test("tunebook's ratio to its reference is taken round by round", () => {
  const workload = createWorkload("conv2d", [1, 3, 16, 16, 8, 3, 3, 1, 1]);
  assert.equal(referencePeer(workload), "onednn");
  assert.equal(referencePeer(createWorkload("matmul", [8, 8, 8])), "openblas-avx512");
  // Round 2 was slow for both: its ratio is still 0.8; a round without oneDNN is left out.
  const row = {
    workload,
    figures: {},
    rounds: { tunebook: [80, 40, 90, 99], onednn: [100, 50, 90, NaN] },
  };
  assert.deepEqual(pairedRatio(row, "tunebook", "onednn"), {
    median: 0.8,
    min: 0.8,
    max: 1,
    rounds: 3,
  });
  assert.equal(pairedRatio({ workload, figures: {} }, "tunebook", "onednn"), undefined);
});

Deno.test("OpenBLAS's AVX-512 kernels are not run on a CPU without avx512f", () => {
  assert.match(avx512Missing(new Set(["sse2", "avx2", "fma"]))!, /no AVX-512/);
  assert.equal(avx512Missing(new Set(["sse2", "avx2", "avx512f"])), undefined);
  // Flags that cannot be read say nothing: the harness runs and reports what happens.
  assert.equal(avx512Missing(new Set()), undefined);
});

Deno.test("matmul is judged against OpenBLAS's default kernels when the AVX-512 peer has no figure", () => {
  const workload = createWorkload("matmul", [8, 8, 8]);
  const figures = {
    tunebook: { gflops: 50, seconds: 2e-5 },
    "openblas-avx512": { unavailable: "this CPU has no AVX-512" },
    "openblas-default": { gflops: 100, seconds: 1e-5 },
  };
  assert.equal(referencePeer(workload, figures), "openblas-default");
  const row = {
    workload,
    figures,
    rounds: { tunebook: [50, 40], "openblas-default": [100, 100] },
  };
  const table = peersTable([row], ["tunebook", "openblas-avx512", "openblas-default"]);
  assert.match(table, /\| matmul 8x8x8 \| 50\.0 \(0\.50x\) \| unavailable \| 100\.0 \(1\.00x\) \|/);
  assert.match(table, /tunebook \/ openblas-default, matmul 8x8x8, round by round: median 0\.45x/);
  assert.match(table, /openblas-avx512: unavailable: this CPU has no AVX-512/);
});

Deno.test("bench/peers.ts checks its arguments: a bad one exits with 2 and one line naming it", async () => {
  const a = parsePeersArgs([
    "--sizes",
    "8",
    "--convs",
    "conv1;1,8,8,8,8,3,3,1,1",
    "--threads",
    "1",
  ]);
  assert.deepEqual(a.workloads.map((w) => w.name), ["matmul", "conv2d", "conv2d"]);
  assert.equal(a.threads, 1);
  for (
    const [args, message] of [
      [["--peers", "onednn,nope"], /Unknown peer "nope"/],
      [["--rounds", "0"], /--rounds must be a positive integer, got "0"/],
      [["--threads", "two"], /--threads must be a positive integer, got "two"/],
      [["--repeat", "1.5"], /--repeat must be a positive integer, got "1.5"/],
      [["--sizes", "0"], /--sizes "0": Dimension M of "matmul" must be a positive integer, got 0/],
      [["--convs", "1,8,8"], /--convs "1,8,8": Workload "conv2d" takes 9 dimensions/],
      [["--bogus", "1"], /Unknown option '--bogus'/],
    ] as const
  ) {
    assert.throws(() => parsePeersArgs([...args]), message, args.join(" "));
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(ROOT, "bench/peers.ts"),
      "--sizes",
      "none",
      "--trace",
      "/nonexistent/t.json",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 2);
  const err = new TextDecoder().decode(out.stderr).trim();
  assert.equal(err.split("\n").length, 1, err);
  assert.match(err, /^peers: --trace \/nonexistent\/t\.json: /);
});
