import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("./run.ts", import.meta.url));

async function run(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", SCRIPT, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("network/run.ts runs a JSON network, checks it against the reference and reports latency", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "tiny.json");
    await Deno.writeTextFile(
      file,
      JSON.stringify({
        name: "tiny",
        input: { name: "x", shape: [1, 3, 12, 12] },
        layers: [
          { name: "c", op: "conv2d", inputs: ["x"], channels: 8, kernel: 3, pad: 1, stride: 2 },
          { name: "b", op: "batch_norm", inputs: ["c"] },
          { name: "r", op: "relu6", inputs: ["b"] },
          { name: "d", op: "conv2d", inputs: ["r"], channels: 8, kernel: 3, pad: 1, groups: 8 },
          { name: "a", op: "add", inputs: ["d", "r"] },
          { name: "p", op: "max_pool2d", inputs: ["a"], kernel: 2 },
          { name: "g", op: "global_avg_pool2d", inputs: ["p"] },
          { name: "f", op: "flatten", inputs: ["g"] },
          { name: "fc", op: "dense", inputs: ["f"], units: 4 },
        ],
      }),
    );
    const r = await run(["--network", file, "--repeat", "2", "--check"]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.network, "tiny");
    assert.equal(report.tasks, 3); // conv2d, depthwise_conv2d, matmul
    assert.equal(report.matchesReference, true);
    assert.equal(report.timesMs.length, 2);
    assert.equal(report.profile, undefined);
    // --profile: each kernel call's time, and the sums of the tunable steps and the rest.
    const p = JSON.parse((await run(["--network", file, "--repeat", "2", "--profile"])).stdout);
    assert.equal(p.profile.steps.length, p.kernelCalls);
    assert.deepEqual(
      p.profile.steps.filter((s: { tunable: boolean }) => s.tunable).map((s: { kernel: string }) =>
        s.kernel.split("(")[0]
      ),
      ["conv2d", "depthwise_conv2d", "matmul"],
    );
    const sum = (t: boolean) =>
      p.profile.steps.filter((s: { tunable: boolean }) => s.tunable === t)
        .reduce((a: number, s: { medianMs: number }) => a + s.medianMs, 0);
    assert.ok(Math.abs(p.profile.tunableMs - sum(true)) < 0.01);
    assert.ok(Math.abs(p.profile.otherMs - sum(false)) < 0.01);
    const bad = await run(["--network", file, "--repeat", "0"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim(), 'network/run: --repeat must be a positive integer, got "0"');
    const missing = await run(["--network", join(dir, "no.json")]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^network\/run: Cannot read network file .*no\.json/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
