/**
 * bench/network_peers.ts runs on tiny inputs: a JSON network (no PyTorch
 * model: the peer says why) with its convolution tuned in a records
 * database and timed against oneDNN, and ResNet-18 at 32x32 against PyTorch
 * when Debian's python3-torch is installed.
 */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { join } from "node:path";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

const TORCH = (() => {
  try {
    return new Deno.Command("/usr/bin/python3", {
      args: ["-c", "import torch, torchvision"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
})();

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);

Deno.test("bench/network_peers.ts times a tuned network and its convolutions against oneDNN", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-network-peers-" });
  try {
    await Deno.writeTextFile(
      join(dir, "one.json"),
      JSON.stringify({
        name: "one",
        input: { name: "x", shape: [1, 8, 8, 8] },
        layers: [{ name: "c", op: "conv2d", inputs: ["x"], channels: 8, kernel: 3, pad: 1 }],
      }),
    );
    const tuned = await runScript(
      "cli/tune_network.ts",
      ["--network", "one.json", "--trials", "2", "--db", "n.db", "--no-execute"],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(tuned.code, 0, tuned.stderr);
    const r = await runScript("bench/network_peers.ts", [
      "--network",
      "one.json",
      "--db",
      "n.db",
      "--rounds",
      "2",
      "--repeat",
      "2",
      "--plot",
      "layers.svg",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    const j = lastJson(r.stdout);
    assert.equal(j.tunedTasks, 1);
    // The plot: the one convolution's bar, labelled with its ratio, and the 0.9 line.
    const svg = await Deno.readTextFile(join(dir, "layers.svg"));
    assert.ok(svg.includes("conv2d(1,8,8,8,8,3,3,1,1)"));
    if (j.layers[0].onednn.gflops) {
      assert.ok(svg.includes((j.layers[0].tunebook.gflops / j.layers[0].onednn.gflops).toFixed(2)));
    }
    const bad = await runScript("bench/network_peers.ts", ["--plot", "x.pdf"], dir);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim(), 'network_peers: --plot "x.pdf" must end in .svg or .png');
    // An unknown network and a missing records database: one line each, no stack.
    const net = await runScript("bench/network_peers.ts", ["--network", "nope"], dir);
    assert.equal(net.code, 2);
    assert.match(net.stderr.trim(), /^network_peers: --network: Unknown network "nope": [^\n]*$/);
    const db = await runScript(
      "bench/network_peers.ts",
      ["--network", "one.json", "--db", "no.db"],
      dir,
    );
    assert.equal(db.code, 2);
    assert.equal(
      db.stderr.trim(),
      'network_peers: --db: Cannot open records database "no.db": no such file',
    );
    assert.equal(j.matchesReference, true);
    assert.equal(j.rounds.length, 2);
    assert.ok(j.rounds.every((x: { tunedMs: number }) => x.tunedMs > 0));
    assert.match(j.torch.unavailable, /not a torchvision model/);
    assert.equal(j.layers.length, 1);
    assert.ok(j.layers[0].tunebook.gflops > 0, JSON.stringify(j.layers));
    assert.ok(j.layers[0].onednn.gflops > 0 || j.layers[0].onednn.unavailable);
    if (j.layers[0].onednn.gflops) {
      // The one convolution against oneDNN, summed up: the target and the weighted time.
      const ratio = j.layers[0].tunebook.gflops / j.layers[0].onednn.gflops;
      assert.deepEqual(j.convolutions, {
        atTarget: ratio >= 0.9 ? 1 : 0,
        of: 1,
        target: 0.9,
        weightedSpeed: j.layers[0].onednn.seconds / j.layers[0].tunebook.seconds,
      });
      assert.match(r.stdout, /convolutions at 0\.9 of oneDNN or better: [01] of 1;/);
      // Beside the best rounds, the ratio round by round: the two rounds' median and range.
      const p = j.layers[0].pairedRatio;
      assert.equal(p.rounds, 2);
      assert.ok(p.min <= p.median && p.median <= p.max && p.min > 0, JSON.stringify(p));
      assert.ok(r.stdout.includes(
        `| ${p.median.toFixed(2)} (${p.min.toFixed(2)}-${p.max.toFixed(2)}) |`,
      ));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bench/network_peers.ts --layout NCHW16c runs and times the blocked convolutions tune-network tuned, depthwise too", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-network-peers-" });
  try {
    await Deno.writeTextFile(
      join(dir, "two.json"),
      JSON.stringify({
        name: "two",
        input: { name: "x", shape: [1, 16, 8, 8] },
        layers: [
          { name: "c", op: "conv2d", inputs: ["x"], channels: 16, kernel: 3, pad: 1, bias: true },
          { name: "r", op: "relu", inputs: ["c"] },
          { name: "w", op: "conv2d", inputs: ["r"], channels: 16, kernel: 3, pad: 1, groups: 16 },
          { name: "d", op: "conv2d", inputs: ["w"], channels: 16, kernel: 1, bias: true },
        ],
      }),
    );
    const tuned = await runScript(
      "cli/tune_network.ts",
      ["--network", "two.json", "--trials", "6", "--db", "n.db", "--layout", "nchw16c"],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(tuned.code, 0, tuned.stderr);
    const summary = lastJsonLine(tuned.stdout);
    assert.equal(summary.layout, "NCHW16c");
    assert.equal(summary.sessions[0].measured.matchesReference, true);
    assert.deepEqual(
      summary.sessions[0].tasks.map((t: { task: string }) => t.task),
      [
        "conv2d_nchwc(1,16,8,8,16,3,3,1,1,16,16)",
        "depthwise_conv2d_nchwc(1,16,8,8,3,3,1,1,16)",
        "conv2d_nchwc(1,16,8,8,16,1,1,1,0,16,16)",
      ],
    );
    const r = await runScript("bench/network_peers.ts", [
      "--network",
      "two.json",
      "--db",
      "n.db",
      "--rounds",
      "1",
      "--repeat",
      "1",
      "--layout",
      "NCHW16c",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    const j = lastJson(r.stdout);
    assert.equal(j.layout, "NCHW16c");
    assert.equal(j.tunedTasks, 3);
    assert.equal(j.matchesReference, true);
    assert.deepEqual(
      j.layers.map((l: { task: string }) => l.task),
      summary.sessions[0].tasks.map((t: { task: string }) => t.task),
    );
    assert.ok(j.layers.every((l: { tunebook: { gflops: number } }) => l.tunebook.gflops > 0));
    // The depthwise layer against oneDNN's grouped convolution (or why oneDNN is missing).
    const dw = j.layers[1].onednn;
    assert.ok(dw.gflops > 0 || /libdnnl/.test(dw.unavailable), JSON.stringify(dw));
    const bad = await runScript("bench/network_peers.ts", ["--layout", "NHWC"], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr.trim(), /^network_peers: --layout: Unknown layout "NHWC"/);
    assert.equal(bad.stderr.trim().split("\n").length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "bench/network_peers.ts times ResNet-18 in PyTorch beside the executor, as ratios",
  ignore: !TORCH,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "tb-network-peers-" });
    try {
      const r = await runScript("bench/network_peers.ts", [
        "--network",
        "resnet18",
        "--size",
        "32",
        "--rounds",
        "1",
        "--repeat",
        "1",
        "--no-layers",
      ], dir);
      assert.equal(r.code, 0, r.stderr);
      const j = lastJson(r.stdout);
      assert.ok(j.torch.version);
      assert.ok(j.rounds[0].torchMs > 0 && j.rounds[0].defaultMs > 0);
      assert.equal(j.torchOverTunebook.length, 1);
      assert.equal(j.matchesReference, true);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
