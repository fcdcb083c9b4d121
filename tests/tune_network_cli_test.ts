/**
 * `deno task tune-network` end to end on a tiny JSON network (three tasks):
 * the summary, the plot, the executor's check against the reference, the
 * warm start of a second invocation from the first one's records, and bad
 * input exiting 2 with one line.
 * @module
 */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { join } from "node:path";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import onnxProto from "npm:onnx-proto@8.0.1";
import { estimateCurve } from "../tuner/network_tuning.ts";
import { finalistsWarnings } from "../cli/tune_network.ts";
import { rankingNoise } from "../tuner/ranking_noise.ts";

const TINY = {
  name: "tiny",
  input: { name: "x", shape: [1, 3, 12, 12] },
  layers: [
    { name: "c", op: "conv2d", inputs: ["x"], channels: 8, kernel: 3, pad: 1 },
    { name: "r", op: "relu", inputs: ["c"] },
    { name: "c2", op: "conv2d", inputs: ["r"], channels: 8, kernel: 3, pad: 1 },
    { name: "r2", op: "relu", inputs: ["c2"] },
    { name: "c3", op: "conv2d", inputs: ["r2"], channels: 8, kernel: 3, pad: 1 },
    { name: "g", op: "global_avg_pool2d", inputs: ["c3"] },
    { name: "f", op: "flatten", inputs: ["g"] },
    { name: "fc", op: "dense", inputs: ["f"], units: 4 },
  ],
};

interface Session {
  strategy: string;
  scheduler: string;
  trials: number;
  estimateMs: number | null;
  warmEstimateMs: number | null;
  finalistsEstimateMs?: number | null;
  tasks: {
    task: string;
    weight: number;
    trials: number;
    warmTrials: number;
    bestMs: number;
    finalists?: {
      count: number;
      rounds: number;
      recordedBestMs: number;
      runId: number;
      rankingUncertain?: boolean;
      load1?: number | null;
    };
  }[];
  measured: {
    latencyMs: number;
    matchesReference: boolean;
    tunedKernels: number;
    estimate: {
      tunerMs: number;
      otherStepsMs: number;
      coldExtraMs: number;
      networkMs: number;
      tunedNowMs: number;
      retimedMs: number;
      ratio: number;
      retimedRatio: number;
      flushedCacheStateMs: number;
    };
  };
}

Deno.test("tune-network tunes every task of a network, runs it tuned, plots, and warm-starts from its records", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-tune-network-" });
  try {
    await Deno.writeTextFile(join(dir, "tiny.json"), JSON.stringify(TINY));
    const run = (args: string[]) =>
      runScript("cli/tune_network.ts", ["--network", "tiny.json", ...args], dir, {
        ...SHARED_KERNEL_CACHE,
      });
    const first = await run([
      "--trials",
      "6",
      "--db",
      "n.db",
      "--scheduler",
      "gradient,round-robin",
      "--plot",
      "curve.svg",
      "--repeat",
      "2",
      "--finalists",
      "2",
      "--finalist-rounds",
      "2",
      "--unity",
      "1",
    ]);
    assert.equal(first.code, 0, first.stderr);
    const s = lastJsonLine(first.stdout);
    assert.equal(s.unity, 1);
    assert.equal(s.tasks, 3);
    assert.equal(s.perRound, 1);
    assert.deepEqual(s.finalists, { perTask: 2, rounds: 2, chosen: "--finalists" });
    assert.match(first.stderr, /then 2 finalists per task timed 2 times/);
    assert.ok(s.untunedLatencyMs > 0);
    const sessions: Session[] = s.sessions;
    assert.deepEqual(sessions.map((x) => x.scheduler), ["gradient", "round-robin"]);
    for (const x of sessions) {
      assert.equal(x.trials, 6);
      assert.deepEqual(x.tasks.map((t) => t.weight), [1, 2, 1]);
      assert.equal(x.tasks.reduce((a, t) => a + t.trials, 0), 6);
      assert.ok(x.tasks.every((t) => t.trials >= 1 && t.warmTrials === 0), JSON.stringify(x));
      // The estimate as tuned sums the recorded bests; after the re-timing, the finalists' bests.
      const near = (a: number, b: number) => Math.abs(a - b) <= 1e-3 * b;
      const recorded = x.tasks.reduce((a, t) => a + t.weight * t.finalists!.recordedBestMs, 0);
      assert.ok(near(recorded, x.estimateMs!), JSON.stringify(x));
      const estimate = x.tasks.reduce((a, t) => a + t.weight * t.bestMs, 0);
      assert.ok(near(estimate, x.finalistsEstimateMs!), JSON.stringify(x));
      assert.ok(x.tasks.every((t) => t.finalists!.rounds === 2 && t.finalists!.count >= 1));
      // Each task's finalists say whether their ranking is within the noise, and the load then.
      assert.ok(x.tasks.every((t) => typeof t.finalists!.rankingUncertain === "boolean"));
      assert.ok(x.tasks.every((t) => Number.isFinite(t.finalists!.load1)), JSON.stringify(x.tasks));
      assert.equal(x.measured.matchesReference, true);
      assert.equal(x.measured.tunedKernels, 3);
      assert.ok(x.measured.latencyMs > 0);
      // The network estimate starts from the finalists' figure and adds the other steps and the cache state.
      const e = x.measured.estimate;
      assert.ok(near(e.tunerMs, x.finalistsEstimateMs!), JSON.stringify(e));
      assert.ok(e.otherStepsMs >= 0 && Number.isFinite(e.coldExtraMs), JSON.stringify(e));
      assert.ok(Math.abs(e.networkMs - (e.tunerMs + e.otherStepsMs + e.coldExtraMs)) < 1e-3);
      // Re-timed: the tuned kernels' steps timed now in place of the records' figures.
      assert.ok(e.tunedNowMs > 0, JSON.stringify(e));
      assert.ok(Math.abs(e.retimedMs - (e.tunedNowMs + e.otherStepsMs + e.coldExtraMs)) < 1e-3);
      assert.ok(
        Math.abs(e.retimedRatio - e.retimedMs / x.measured.latencyMs) <= 0.02 * e.retimedRatio,
      );
      assert.ok(Number.isFinite(e.flushedCacheStateMs), JSON.stringify(e));
      assert.ok(
        // (latencyMs is rounded to 3 decimals: on a 0.1 ms network that moves the ratio by up to 1%.)
        Math.abs(e.ratio - e.networkMs / x.measured.latencyMs) <= 0.02 * e.ratio,
        JSON.stringify(x.measured),
      );
    }
    assert.match(
      first.stdout,
      /\[gradient random\] network estimate [\d.]+ ms \(tuned kernels [\d.]+ \+ other steps [\d.]+ \+ cache state in a pass -?[\d.]+\); measured [\d.]+ ms \(estimate \/ measured [\d.]+\); with the tuned kernels re-timed now [\d.]+ ms/,
    );
    // Round robin gives each of the three tasks two rounds of one trial.
    assert.deepEqual(sessions[1].tasks.map((t) => t.trials), [2, 2, 2]);
    assert.match(
      first.stderr,
      /\[gradient random\] 1\/6 trials: task 0 conv2d\(1,3,12,12,8,3,3,1,1\)/,
    );
    // Both warm-ups try the same candidates (same seeds), measured once: the same estimate.
    const afterWarmUp = (label: string) =>
      first.stderr.match(new RegExp(`\\[${label}\\] 3/6 trials: .*estimate ([\\d.]+) ms`))?.[1];
    assert.ok(afterWarmUp("gradient random"), first.stderr);
    assert.equal(afterWarmUp("gradient random"), afterWarmUp("round-robin random"));
    // The issue's target in the summary: when the gradient session first reached round robin's end.
    const [cmp] = s.schedulers;
    assert.equal(cmp.strategy, "random");
    assert.equal(cmp.budget, 6);
    assert.equal(cmp.roundRobinMs, sessions[1].estimateMs);
    assert.ok(
      cmp.gradientTrials === null || (cmp.gradientTrials >= 3 && cmp.gradientTrials <= 6),
      JSON.stringify(cmp),
    );
    assert.match(
      first.stdout,
      /\[random\] gradient reaches round robin's [\d.]+ ms \(at 6 trials\)/,
    );
    const svg = await Deno.readTextFile(join(dir, "curve.svg"));
    assert.match(svg, /^<svg/);
    assert.match(svg, /gradient random/);
    assert.match(svg, /round-robin random/);
    // A log axis: no tick at zero, where a linear one from zero flattened the curves.
    const ticks = [...svg.matchAll(/<text[^>]*>([\d,.]+)<\/text>/g)].map((m) => m[1]);
    assert.ok(ticks.length > 0 && !ticks.includes("0"), ticks.join());

    const second = await run([
      "--trials",
      "3",
      "--db",
      "n.db",
      "--no-execute",
      "--plot",
      "c.png",
      "--finalists",
      "0",
    ]);
    assert.equal(second.code, 0, second.stderr);
    const [w]: Session[] = lastJsonLine(second.stdout).sessions;
    assert.deepEqual(w.tasks.map((t) => t.warmTrials), [
      sessions[0].tasks[0].trials + sessions[1].tasks[0].trials,
      sessions[0].tasks[1].trials + sessions[1].tasks[1].trials,
      sessions[0].tasks[2].trials + sessions[1].tasks[2].trials,
    ]);
    // The warm start reads the newest finalists: round robin's, re-timed last.
    assert.ok(
      Math.abs(w.warmEstimateMs! - sessions[1].finalistsEstimateMs!) <= 1e-3 * w.warmEstimateMs!,
      JSON.stringify([w, sessions[1]]),
    );
    assert.equal(w.measured, undefined);
    assert.deepEqual(lastJsonLine(second.stdout).schedulers, []);
    const png = await Deno.readFile(join(dir, "c.png"));
    assert.equal(png[1], 80); // "\x89PNG"
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A one-convolution ONNX model (1x3x8x8 in, 4 filters of 3x3 with bias, then ReLU), as bytes. */
function oneConvOnnx(): Uint8Array {
  const { onnx } = onnxProto;
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const floats = (name: string, dims: number[]) =>
    onnx.TensorProto.create({
      name,
      dims,
      dataType: FLOAT,
      floatData: Array.from(
        { length: dims.reduce((a, b) => a * b, 1) },
        (_, i) => (i % 7) / 7 - 0.4,
      ),
    });
  const info = (name: string, dims: number[]) =>
    onnx.ValueInfoProto.create({
      name,
      type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => ({ dimValue: d })) } } },
    });
  const graph = onnx.GraphProto.create({
    name: "oneconv",
    node: [
      onnx.NodeProto.create({
        opType: "Conv",
        input: ["x", "w", "b"],
        output: ["c"],
        name: "c",
        attribute: [
          onnx.AttributeProto.create({
            name: "kernel_shape",
            ints: [3, 3],
            type: onnx.AttributeProto.AttributeType.INTS,
          }),
          onnx.AttributeProto.create({
            name: "pads",
            ints: [1, 1, 1, 1],
            type: onnx.AttributeProto.AttributeType.INTS,
          }),
        ],
      }),
      onnx.NodeProto.create({ opType: "Relu", input: ["c"], output: ["y"], name: "y" }),
    ] as never,
    input: [info("x", [1, 3, 8, 8])],
    output: [info("y", [1, 4, 8, 8])],
    initializer: [floats("w", [4, 3, 3, 3]), floats("b", [4])],
  });
  const model = onnx.ModelProto.create({ irVersion: 7, graph, opsetImport: [{ version: 13 }] });
  return onnx.ModelProto.encode(model).finish();
}

Deno.test("tune-network tunes an ONNX model and runs it with the model's own weights", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-tune-network-" });
  try {
    await Deno.writeFile(join(dir, "oneconv.onnx"), oneConvOnnx());
    const r = await runScript(
      "cli/tune_network.ts",
      ["--network", "oneconv.onnx", "--trials", "2", "--db", "o.db", "--repeat", "1"],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(r.code, 0, r.stderr);
    const s = lastJsonLine(r.stdout);
    assert.equal(s.network, "oneconv");
    assert.equal(s.tasks, 1);
    assert.equal(s.unity, 8); // tune's default
    const [x]: Session[] = s.sessions;
    assert.equal(x.tasks[0].task, "conv2d(1,3,8,8,4,3,3,1,1)");
    assert.equal(x.tasks[0].trials, 2);
    assert.equal(x.measured.matchesReference, true);
    // Two trials: re-timing 8 finalists 3 times would be most of the session, so by default none.
    assert.deepEqual(s.finalists, { perTask: 0, rounds: 3, chosen: "default" });
    assert.equal(x.tasks[0].finalists, undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tune-network: bad input exits 2 with one line naming the flag or file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-tune-network-" });
  try {
    await Deno.writeTextFile(join(dir, "bad.json"), "{ not json");
    const cases: [string[], RegExp][] = [
      [["--network", "resnet18", "--trials", "0"], /--trials must be a positive integer/],
      [["--network", "resnet18", "--finalists", "x"], /--finalists must be an integer >= 0/],
      [["--network", "resnet18", "--finalist-rounds", "0"], /--finalist-rounds must be a positive/],
      [["--network", "resnet18", "--unity", "0"], /--unity must be a positive integer/],
      [["--network", "resnet18", "--unity", "5000"], /--unity must be at most 1024, got 5000/],
      [["--network", "resnet18", "--strategy", "nope"], /--strategy "nope" is not one of/],
      [["--network", "resnet18", "--scheduler", "fifo"], /--scheduler "fifo" is not one of/],
      [["--network", "resnet18", "--template", "nope"], /--template "nope" is not one of/],
      [["--network", "resnet18", "--layout", "NHWC"], /--layout: Unknown layout "NHWC"/],
      [["--network", "alexnet"], /Unknown network "alexnet"/],
      [["--network", "bad.json"], /bad\.json is not JSON/],
      [["--network", "missing.onnx"], /Cannot read network file missing\.onnx/],
      [["--network", "resnet18", "--plot", "x.pdf"], /--plot "x\.pdf" must end in \.svg or \.png/],
      [
        ["--network", "resnet18", "--plot", "no/dir/x.svg"],
        /--plot "no\/dir\/x\.svg": no directory/,
      ],
      [["--trials", "4"], /Missing --network/],
    ];
    for (const [args, re] of cases) {
      const r = await runScript("cli/tune_network.ts", args, dir);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], /^tune-network: /);
      assert.match(lines[0], re);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("estimateCurve steps at the end of each round, from the warm start's estimate", () => {
  const round = (trialsUsed: number, objective: number) => ({
    round: 0,
    task: 0,
    measured: 2,
    trialsUsed,
    bestSeconds: [],
    objective,
  });
  const curve = estimateCurve({
    tasks: [],
    rounds: [round(2, 4e-3), round(4, NaN), round(5, 1e-3)],
    objectiveSeconds: 1e-3,
    warmObjectiveSeconds: 5e-3,
  });
  assert.deepEqual(curve, [5, 4, 4, NaN, 1]);
});

Deno.test("finalistsWarnings: a ranking within the noise, and rounds far slower than the record", () => {
  const f = { runId: 1, count: 2, rounds: 3 };
  // Steady rounds, 10% apart, near the record: no warning.
  const calm = rankingNoise(
    { seconds: 1e-3, times: [1e-3, 1e-3, 1e-3], conditions: { load1: 0.5 } },
    { seconds: 1.1e-3, times: [1.1e-3, 1.1e-3, 1.1e-3] },
    { cores: 2, labels: ["fastest finalist", "next"] },
  );
  assert.deepEqual(
    finalistsWarnings({
      bestSeconds: 1e-3,
      finalists: { ...f, recordedSeconds: 0.9e-3, noise: calm },
    }),
    [],
  );
  // Rounds that scatter by more than the two are apart, on a loaded machine, 2.5x the record.
  const noisy = rankingNoise(
    { seconds: 2.5e-3, times: [1e-3, 2.5e-3, 5e-3], conditions: { load1: 3 } },
    { seconds: 2.6e-3, times: [1.2e-3, 2.6e-3, 6e-3] },
    { cores: 2, labels: ["fastest finalist", "next"] },
  );
  const w = finalistsWarnings({
    bestSeconds: 2.5e-3,
    finalists: { ...f, recordedSeconds: 1e-3, noise: noisy },
  });
  assert.equal(w.length, 2, JSON.stringify(w));
  assert.match(
    w[0],
    /^warning: ranking uncertain: fastest finalist 2\.500 ms .* vs next 2\.600 ms/,
  );
  assert.match(
    w[1],
    /^warning: the fastest finalist ran 2\.50x slower over its rounds \(2\.5 ms\) than the best as recorded \(1 ms\), load 3\.00/,
  );
  // No finalists, no warning.
  assert.deepEqual(finalistsWarnings({ bestSeconds: 1e-3 }), []);
});
