/**
 * Abuse tests of issue 41, item 4: a network whose tensors or weights do
 * not fit the memory available is refused by `tune-network` before
 * anything is allocated: exit 2, one line naming the layer (or the input)
 * and the estimate against the memory, no stack trace, no database written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runScript, type ScriptResult, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { checkNetworkMemory, networkMemory } from "../network/memory.ts";
import { NetworkError } from "../network/network.ts";

/** Asserts exit 2 and one line on stderr matching `message`, with no stack trace. */
function assertRefused(r: ScriptResult, message: RegExp, what: string): void {
  assert.equal(r.code, 2, `${what}: exit ${r.code}\n${r.stderr}`);
  const err = r.stderr.trim();
  assert.equal(err.split("\n").length, 1, `${what}: one line, got\n${err}`);
  assert.doesNotMatch(err, /\bat .*\.ts:\d+|RangeError|Uncaught/, `${what}: no stack trace`);
  assert.match(err, message, what);
}

const conv = (name: string, input: string, channels: number) => ({
  name,
  op: "conv2d",
  inputs: [input],
  channels,
  kernel: 3,
  pad: 1,
});

/** The three oversized networks of the issue. */
const NETWORKS: Record<string, unknown> = {
  "wide_input.json": {
    name: "wide_input",
    input: { name: "x", shape: [1, 1e7, 224, 224] },
    layers: [conv("c1", "x", 64)],
  },
  "huge_dense.json": {
    name: "huge_dense",
    input: { name: "x", shape: [1, 3, 16, 16] },
    layers: [
      { name: "f", op: "flatten", inputs: ["x"] },
      { name: "fc", op: "dense", inputs: ["f"], units: 1e9 },
    ],
  },
  "wide_conv.json": {
    name: "wide_conv",
    input: { name: "x", shape: [1, 3, 56, 56] },
    layers: [conv("c1", "x", 64), conv("c2", "c1", 1e7), conv("c3", "c2", 64)],
  },
};

Deno.test("tune-network refuses the three oversized networks, naming the layer and the estimate", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-abuse-net-" });
  try {
    for (const [file, net] of Object.entries(NETWORKS)) {
      await Deno.writeTextFile(join(dir, file), JSON.stringify(net));
    }
    const cases: [string, RegExp][] = [
      [
        "wide_input.json",
        /^tune-network: Input "x" \[1, 10000000, 224, 224\] needs about [\d.]+ GiB, more than the 16 GiB available/,
      ],
      [
        "huge_dense.json",
        /^tune-network: Layer "fc" \(dense\): its output \[1, 1000000000\] and weights \([\d.]+ GiB\) bring the network to about [\d.]+ GiB .*, more than the 16 GiB available/,
      ],
      [
        "wide_conv.json",
        /^tune-network: Layer "c2" \(conv2d\): its output \[1, 10000000, 56, 56\] and weights \([\d.]+ GiB\) bring .* more than the 16 GiB available/,
      ],
    ];
    const env = { ...SHARED_KERNEL_CACHE, TUNEBOOK_MEM_AVAILABLE: String(16 * 2 ** 30) };
    for (const [file, message] of cases) {
      const start = performance.now();
      const r = await runScript(
        "cli/tune_network.ts",
        ["--network", file, "--trials", "4", "--db", "r.db", "--no-execute"],
        dir,
        env,
      );
      assertRefused(r, message, file);
      // Refused from the shapes, before any allocation: quickly, whatever the machine.
      assert.ok(performance.now() - start < 60_000, `${file}: refused at once`);
    }
    // The 2 TB input is refused against this machine's own MemAvailable too.
    const r = await runScript(
      "cli/tune_network.ts",
      ["--network", "wide_input.json", "--trials", "4", "--db", "r.db"],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assertRefused(r, /^tune-network: Input "x" .* available \(MemAvailable\)$/, "MemAvailable");
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(names, Object.keys(NETWORKS).sort(), "no database or plot written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("networkMemory sums outputs and weights in layer order; the check names the first layer past", () => {
  const net = NETWORKS["wide_conv.json"] as Parameters<typeof networkMemory>[0];
  const rows = networkMemory(net);
  assert.deepEqual(rows.map((r) => r.layer), ["x", "c1", "c2", "c3"]);
  assert.equal(rows[0].totalBytes, 4 * 3 * 56 * 56);
  assert.equal(rows[1].weightBytes, 4 * 64 * 3 * 3 * 3);
  assert.equal(rows[2].weightBytes, 4 * 1e7 * 64 * 3 * 3);
  assert.equal(rows[2].outputBytes, 4 * 1e7 * 56 * 56);
  for (let i = 1; i < rows.length; i++) {
    assert.equal(
      rows[i].totalBytes,
      rows[i - 1].totalBytes + rows[i].weightBytes + rows[i].outputBytes,
    );
  }
  // Just above c1's total: c2 is the layer named.
  assert.throws(() => checkNetworkMemory(net, rows[1].totalBytes), (e: unknown) => {
    assert.ok(e instanceof NetworkError);
    assert.match(e.message, /^Layer "c2" \(conv2d\)/);
    return true;
  });
  checkNetworkMemory(net, rows[3].totalBytes); // exactly enough: accepted
});
