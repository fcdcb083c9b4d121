import assert from "node:assert/strict";
import { fillUniform } from "../measure/prng.ts";
import { builtinNetwork } from "./builtin.ts";
import { createExecutor, planSteps } from "./executor.ts";
import { type Network, parseNetwork, sizeOf } from "./network.ts";
import { referenceRun } from "./reference.ts";
import { foldBatchNorm, randomWeights } from "./weights.ts";
import { extractTasks, taskKey } from "./tasks.ts";
import { createPrng } from "../ir/prng.ts";
import { type Trace, traceOf } from "../ir/trace.ts";
import { Schedule } from "../ir/schedule.ts";
import { defaultSpace } from "../search/sketch.ts";
import { templateSpace } from "../search/templates/registry.ts";

function randomInput(net: Network, seed = 3): Float32Array {
  const x = new Float32Array(sizeOf(net.input.shape));
  fillUniform(seed, [x]);
  return x;
}

/** Max |a - b| relative to max |b|. */
function relError(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let err = 0, scale = 0;
  for (let i = 0; i < a.length; i++) {
    err = Math.max(err, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  assert.ok(scale > 1e-3, "trivial output");
  return err / scale;
}

for (
  const [name, size] of [["resnet18", 32], ["mobilenet_v2", 32], ["squeezenet1_1", 35]] as const
) {
  Deno.test(`the executor's ${name} output matches the reference executor (${size}x${size})`, async () => {
    const net = builtinNetwork(name, { size, classes: 10 });
    const weights = randomWeights(net, 11);
    const x = randomInput(net);
    const want = referenceRun(net, weights, x);
    const ex = await createExecutor(net, weights);
    try {
      const got = ex.run(x);
      assert.equal(got.length, 10);
      const e = relError(got, want);
      assert.ok(e < 1e-4, `${name}: relative error ${e}`);
      const lat = ex.latency({ repeat: 2, warmup: 0 });
      assert.equal(lat.timesMs.length, 2);
      assert.ok(lat.medianMs > 0);
      // One time per kernel call, in step order; profiling leaves the output as it was.
      const prof = ex.profile({ repeat: 2, warmup: 0 });
      assert.deepEqual(prof.map((p) => p.layer), ex.steps.map((s) => s.layer));
      assert.deepEqual(prof.map((p) => p.tunable), ex.steps.map((s) => s.tunable));
      assert.ok(prof.every((p) => p.medianMs >= 0 && Number.isFinite(p.medianMs)));
      assert.ok(prof.some((p) => p.kernel.startsWith("conv2d(")));
      // Each step by itself, warm and in a forward pass's cache state: one time per step, in order.
      for (const cold of [false, true]) {
        const iso = ex.isolated({ repeat: 2, warmup: 0, cold, flushBytes: 1 << 20 });
        assert.deepEqual(iso.map((p) => p.kernel), prof.map((p) => p.kernel));
        assert.ok(iso.every((p) => p.medianMs >= 0 && Number.isFinite(p.medianMs)));
      }
      assert.deepEqual(ex.run(x), got);
    } finally {
      ex.close();
    }
  });
}

Deno.test("the executor runs tuned kernels given by trace and still matches the reference", async () => {
  const net = builtinNetwork("mobilenet_v2", { size: 32, classes: 10 });
  const weights = randomWeights(net, 5);
  // One schedule of each task from its sketch space (a stand-in for a tuner's best).
  const traces = new Map<string, Trace>();
  const prng = createPrng(17);
  for (const t of extractTasks(net)) {
    traces.set(taskKey(t.workload), defaultSpace(t.workload).sample(prng));
  }
  const x = randomInput(net);
  const ex = await createExecutor(net, weights, { traces });
  try {
    assert.equal(ex.tracedCount, traces.size);
    const e = relError(ex.run(x), referenceRun(net, weights, x));
    assert.ok(e < 1e-4, `relative error ${e}`);
  } finally {
    ex.close();
  }
});

Deno.test("folding batch norm keeps the reference output and removes every batch_norm", () => {
  const net = builtinNetwork("mobilenet_v2", { size: 32, classes: 10 });
  const weights = randomWeights(net, 2);
  const folded = foldBatchNorm(net, weights);
  assert.equal(folded.network.layers.filter((l) => l.op === "batch_norm").length, 0);
  const x = randomInput(net);
  const e = relError(
    referenceRun(folded.network, folded.weights, x),
    referenceRun(net, weights, x),
  );
  assert.ok(e < 1e-5, `relative error ${e}`);
});

Deno.test("a dense layer runs as a matmul over transposed weights, then its bias", () => {
  const net = parseNetwork({
    name: "mlp",
    input: { name: "x", shape: [1, 2, 2, 2] },
    layers: [
      { name: "f", op: "flatten", inputs: ["x"] },
      { name: "fc", op: "dense", inputs: ["f"], units: 3 },
    ],
  });
  const { steps, views } = planSteps(net);
  assert.deepEqual(steps.map((s) => s.workload.name), ["matmul", "bias_act"]);
  assert.deepEqual(steps[0].inputs, ["x", "fc.weight.T"]);
  assert.equal(views.get("f"), "x");
});

Deno.test("layers sharing a kernel that rewrites its weights' layout each keep their own weights", async () => {
  // ResNet-18 at 32x32: its 3x3 convolutions repeat (same workload, other weights).
  const net = builtinNetwork("resnet18", { size: 32, classes: 10 });
  const weights = randomWeights(net, 7);
  const traces = new Map<string, Trace>();
  for (const t of extractTasks(net)) {
    if (t.workload.name !== "conv2d") continue;
    const space = templateSpace("conv2d-nchwc", t.workload);
    const point = space.space.knobs.map((k) => k.name === "xr" ? 1 : 0); // fr 16, yr 1, xr 2
    traces.set(taskKey(t.workload), space.candidateOf(point).trace!);
  }
  const x = randomInput(net);
  const ex = await createExecutor(net, weights, { traces });
  try {
    // Every convolution layer got its own library: more kernels than distinct workloads.
    const distinct = new Set(ex.steps.map((s) => `${s.workload.name}(${s.workload.shape})`)).size;
    assert.ok(ex.kernelCount > distinct, `${ex.kernelCount} kernels, ${distinct} workloads`);
    const want = referenceRun(net, weights, x);
    // Twice: the second pass runs on the weights rewritten by the first.
    for (let pass = 0; pass < 2; pass++) {
      const e = relError(ex.run(x), want);
      assert.ok(e < 1e-4, `pass ${pass}: relative error ${e}`);
    }
  } finally {
    ex.close();
  }
});

Deno.test("a ReLU after a bias or a residual add runs in that step unless something else reads its input", () => {
  const net = parseNetwork({
    name: "block",
    input: { name: "x", shape: [1, 4, 6, 6] },
    layers: [
      { name: "c1", op: "conv2d", inputs: ["x"], channels: 4, kernel: 3, pad: 1, bias: true },
      { name: "r1", op: "relu", inputs: ["c1"] },
      { name: "c2", op: "conv2d", inputs: ["r1"], channels: 4, kernel: 3, pad: 1, bias: true },
      { name: "sum", op: "add", inputs: ["c2", "x"] },
      { name: "r2", op: "relu", inputs: ["sum"] },
      // c3's output is read twice: its ReLU stays a step of its own.
      { name: "c3", op: "conv2d", inputs: ["r2"], channels: 4, kernel: 1, bias: true },
      { name: "r3", op: "relu", inputs: ["c3"] },
      { name: "out", op: "add", inputs: ["r3", "c3"] },
    ],
  });
  const { steps, views } = planSteps(net);
  assert.deepEqual(
    steps.map((s) => `${s.workload.name}(${s.workload.shape.join(",")})`),
    [
      "conv2d(1,4,6,6,4,3,3,1,1)",
      "bias_act(1,4,36,1)", // + ReLU
      "conv2d(1,4,6,6,4,3,3,1,1)",
      "bias_act(1,4,36,0)",
      "add(144,1,2)", // + ReLU
      "conv2d(1,4,6,6,4,1,1,1,0)",
      "bias_act(1,4,36,0)",
      "relu(144,1,1)",
      "add(144,0,2)",
    ],
  );
  assert.deepEqual(steps.map((s) => s.tunable), [
    true,
    false,
    true,
    false,
    false,
    true,
    false,
    false,
    false,
  ]);
  assert.equal(views.get("r1"), "c1");
  assert.deepEqual(steps[2].inputs, ["c1", "c2.weight"]);
  assert.deepEqual(steps[5].inputs, ["sum", "c3.weight"]);
  const weights = randomWeights(net, 2);
  const x = randomInput(net);
  return createExecutor(net, weights).then((ex) => {
    try {
      assert.ok(relError(ex.run(x), referenceRun(net, weights, x)) < 1e-5);
    } finally {
      ex.close();
    }
  });
});

Deno.test("blocked, a concat keeps its inputs' blocks where the block divides their channels, in place or not", async () => {
  const net = parseNetwork({
    name: "cat",
    input: { name: "x", shape: [1, 16, 6, 6] },
    layers: [
      { name: "a", op: "conv2d", inputs: ["x"], channels: 16, kernel: 1, bias: true },
      { name: "b", op: "conv2d", inputs: ["x"], channels: 32, kernel: 3, pad: 1 },
      { name: "cat", op: "concat", inputs: ["a", "b"] },
      // x is NCHW and read elsewhere: this concat converts it to blocks and copies.
      { name: "cat2", op: "concat", inputs: ["cat", "x"] },
      { name: "c", op: "conv2d", inputs: ["cat2"], channels: 16, kernel: 1 },
      // 4 channels (no block of 8 divides them): d writes NCHW, so this concat reads NCHW.
      { name: "d", op: "conv2d", inputs: ["c"], channels: 4, kernel: 1 },
      { name: "cat3", op: "concat", inputs: ["c", "d"] },
    ],
  });
  const plan = planSteps(net, 16);
  const conversions = plan.steps.filter((s) => s.workload.name === "layout_transform")
    .map((s) => `${s.inputs[0]}:${s.workload.shape.slice(4).join("->")}`);
  assert.deepEqual(conversions, ["x:1->16", "c:16->1"]);
  // cat in place (blocks of a, then of b); cat2 a copy of blocks: 3 + 1 blocks of 36 x 16.
  assert.deepEqual(plan.slices.get("a"), { of: "cat", offset: 0, size: 576 });
  assert.deepEqual(plan.slices.get("b"), { of: "cat", offset: 576, size: 1152 });
  const cats = plan.steps.filter((s) => s.workload.name === "concat");
  assert.deepEqual(cats.map((s) => [s.output, s.workload.shape]), [
    ["cat2", [1, 3, 1, 576]],
    ["cat3", [1, 16, 4, 36]],
  ]);
  const weights = randomWeights(net, 5);
  const x = randomInput(net);
  const ex = await createExecutor(net, weights, { block: 16 });
  try {
    assert.ok(relError(ex.run(x), referenceRun(net, weights, x)) < 1e-5);
  } finally {
    ex.close();
  }
});

Deno.test("blocked, channels that blocks of 16 do not divide are padded with zeros through convolutions, ReLUs, adds, pools and back", async () => {
  const layers = [
    // 136 channels: 9 blocks of 16, the last one half padding (convOutputBlock).
    { name: "a", op: "conv2d", inputs: ["x"], channels: 136, kernel: 1, bias: true },
    { name: "r", op: "relu", inputs: ["a"] },
    { name: "b", op: "conv2d", inputs: ["x"], channels: 136, kernel: 3, pad: 1, bias: true },
    { name: "s", op: "add", inputs: ["r", "b"] },
    { name: "p", op: "max_pool2d", inputs: ["s"], kernel: 2, stride: 2 },
    // Reads the padded blocks: its weights are padded on their input channels too.
    { name: "c", op: "conv2d", inputs: ["p"], channels: 16, kernel: 3, pad: 1 },
    // 136 + 16 channels: no block of 16 divides the first, so both are converted to NCHW.
    { name: "cat", op: "concat", inputs: ["s", "x"] },
    { name: "g", op: "global_avg_pool2d", inputs: ["s"] },
    { name: "f", op: "flatten", inputs: ["g"] },
    { name: "d", op: "dense", inputs: ["f"], units: 10 },
  ];
  for (const output of ["c", "cat", "d", "s"]) {
    const net = parseNetwork({
      name: "pad",
      input: { name: "x", shape: [1, 16, 6, 6] },
      layers,
      output,
    });
    const plan = planSteps(net, 16);
    const convs = plan.steps.filter((st) => st.workload.name === "conv2d_nchwc")
      .map((st) => `${st.layer}:${st.workload.shape.slice(1, 5).join(",")}`);
    assert.deepEqual(convs, ["a:16,6,6,144", "b:16,6,6,144", "c:144,3,3,16"]);
    const into = plan.steps.filter((st) => st.workload.name === "layout_transform")
      .map((st) => `${st.inputs[0]}:${st.workload.shape.slice(4).join("->")}`);
    assert.ok(into.includes("x:1->16"), into.join());
    const weights = randomWeights(net, 6);
    const x = randomInput(net);
    const ex = await createExecutor(net, weights, { block: 16 });
    try {
      const got = ex.run(x), want = referenceRun(net, weights, x);
      assert.equal(got.length, want.length, output);
      assert.ok(relError(got, want) < 1e-5, `${output}: ${relError(got, want)}`);
    } finally {
      ex.close();
    }
  }
});

Deno.test("blocked, a depthwise layer runs on blocks; tuned with a local tile, it fuses its bias and ReLU by channel block x 16 + lane", async () => {
  const net = parseNetwork({
    name: "dw",
    input: { name: "x", shape: [1, 16, 9, 9] },
    layers: [
      { name: "e", op: "conv2d", inputs: ["x"], channels: 32, kernel: 1, bias: true },
      { name: "re", op: "relu", inputs: ["e"] },
      {
        name: "d",
        op: "conv2d",
        inputs: ["re"],
        channels: 32,
        kernel: 3,
        stride: 2,
        pad: 1,
        groups: 32,
        bias: true,
      },
      { name: "rd", op: "relu", inputs: ["d"] },
      { name: "p", op: "conv2d", inputs: ["rd"], channels: 16, kernel: 1 },
    ],
  });
  const dw = extractTasks(net, 16).find((t) => t.workload.name === "depthwise_conv2d_nchwc")!;
  assert.deepEqual(dw.workload.shape, [1, 32, 9, 9, 3, 3, 2, 1, 16]);
  assert.equal(dw.workload.channelBlock, 16);
  // A tile of 5 columns x 16 channels in registers, copied out (where the epilogue goes).
  const sch = new Schedule(dw.workload, { prng: createPrng(1) });
  const local = sch.cacheWrite("O");
  const rows = sch.fuse("O", ["n", "c", "y"]);
  sch.parallel("O", rows);
  sch.computeAt(local, "O", rows);
  sch.vectorize("O", "b");
  sch.reorder(local, ["ry", "rx", "n", "c", "y", "x", "b"]);
  sch.vectorize(local, "b");
  const traces = new Map([[taskKey(dw.workload), traceOf(sch)]]);
  const weights = randomWeights(net, 6);
  const x = randomInput(net);
  const ex = await createExecutor(net, weights, { block: 16, traces });
  try {
    const step = ex.steps.find((s) => s.workload.name === "depthwise_conv2d_nchwc")!;
    assert.equal(step.epilogue, "relu");
    // Conversions only at the network's ends: its NCHW input and output.
    const conversions = ex.steps.filter((s) => s.workload.name === "layout_transform");
    assert.deepEqual(conversions.map((s) => s.inputs[0]), ["x", "p"]);
    assert.ok(relError(ex.run(x), referenceRun(net, weights, x)) < 1e-5);
  } finally {
    ex.close();
  }
});

Deno.test("a concat of inputs read by nothing else is written in place by their producers", async () => {
  const net = parseNetwork({
    name: "fire",
    input: { name: "x", shape: [1, 4, 5, 5] },
    layers: [
      { name: "s", op: "conv2d", inputs: ["x"], channels: 3, kernel: 1, bias: true },
      { name: "rs", op: "relu", inputs: ["s"] },
      { name: "a", op: "conv2d", inputs: ["rs"], channels: 2, kernel: 1, bias: true },
      { name: "ra", op: "relu", inputs: ["a"] },
      { name: "b", op: "conv2d", inputs: ["rs"], channels: 3, kernel: 3, pad: 1, bias: true },
      { name: "rb", op: "relu", inputs: ["b"] },
      { name: "cat", op: "concat", inputs: ["ra", "rb"] },
      // rs is read twice and by a concat: that concat stays a copy.
      { name: "cat2", op: "concat", inputs: ["cat", "rs"] },
      { name: "p", op: "max_pool2d", inputs: ["cat2"], kernel: 2, stride: 2 },
    ],
  });
  const plan = planSteps(net);
  assert.deepEqual(plan.steps.filter((s) => s.workload.name === "concat").map((s) => s.output), [
    "cat2",
  ]);
  assert.deepEqual(plan.slices.get("a"), { of: "cat", offset: 0, size: 50 });
  assert.deepEqual(plan.slices.get("b"), { of: "cat", offset: 50, size: 75 });
  assert.equal(plan.joined.get("cat"), 125);
  assert.ok(!plan.slices.has("s"));
  const weights = randomWeights(net, 4);
  const x = randomInput(net);
  const ex = await createExecutor(net, weights);
  try {
    for (let pass = 0; pass < 2; pass++) {
      assert.ok(relError(ex.run(x), referenceRun(net, weights, x)) < 1e-5);
    }
  } finally {
    ex.close();
  }
});

Deno.test("a tuned convolution computes its bias and ReLU in its own copy-out; the output is unchanged", async () => {
  const net = builtinNetwork("resnet18", { size: 32, classes: 10 });
  const weights = randomWeights(net, 9);
  const traces = new Map<string, Trace>();
  for (const t of extractTasks(net)) {
    if (t.workload.name !== "conv2d") continue;
    const space = templateSpace("conv2d-nchwc", t.workload);
    traces.set(taskKey(t.workload), space.candidateOf(space.space.knobs.map(() => 0)).trace!);
  }
  const x = randomInput(net);
  const want = referenceRun(net, weights, x);
  const fused = await createExecutor(net, weights, { traces });
  const apart = await createExecutor(net, weights, { traces, fuseEpilogues: false });
  try {
    const convs = fused.steps.filter((s) => s.workload.name === "conv2d");
    assert.ok(convs.length > 0 && convs.every((s) => s.epilogue !== undefined));
    assert.ok(convs.some((s) => s.epilogue === "relu") && convs.some((s) => s.epilogue === "none"));
    // The bias steps of the convolutions are gone; the dense layer (no trace) keeps its own.
    assert.equal(fused.steps.filter((s) => s.workload.name === "bias_act").length, 1);
    assert.equal(apart.steps.length - fused.steps.length, convs.length);
    assert.ok(apart.steps.every((s) => s.epilogue === undefined));
    for (const ex of [fused, apart]) {
      assert.ok(relError(ex.run(x), want) < 1e-4);
    }
  } finally {
    fused.close();
    apart.close();
  }
});

Deno.test("blocked (NCHW16c), ResNet-18 runs on channel blocks from its first convolution to its global pool, and matches the reference", async () => {
  const net = builtinNetwork("resnet18", { size: 32, classes: 10 });
  const weights = randomWeights(net, 9);
  const plan = planSteps(foldBatchNorm(net, weights).network, 16);
  const conversions = plan.steps.filter((s) => s.workload.name === "layout_transform")
    .map((s) => `${s.inputs[0]} -> ${s.output}`);
  // None: the image is read NCHW, the pools and adds run on blocks, the global pool writes [N][C].
  assert.deepEqual(conversions, []);
  const pools = plan.steps.filter((st) => st.workload.name.endsWith("pool2d"));
  assert.deepEqual(pools.map((st) => st.workload.shape.at(-1)), [16, 16]);
  // Tuned: each task's blocked tile (flat positions where the space allows), bias and ReLU fused.
  const traces = new Map<string, Trace>();
  for (const t of extractTasks(net, 16)) {
    if (t.workload.name !== "conv2d_nchwc") continue;
    const space = templateSpace("conv2d-blocked", t.workload);
    const flat = space.space.knobs.map((k) =>
      k.name === "flat" ? 1 : k.name === "xr" ? k.options.indexOf(6) : 0
    );
    const point = space.space.isValid(flat) ? flat : space.space.knobs.map(() => 0);
    traces.set(taskKey(t.workload), space.candidateOf(point).trace!);
  }
  const x = randomInput(net);
  const want = referenceRun(net, weights, x);
  const untuned = await createExecutor(net, weights, { block: 16 });
  const tuned = await createExecutor(net, weights, { block: 16, traces });
  try {
    assert.ok(relError(untuned.run(x), want) < 1e-4);
    const convs = tuned.steps.filter((s) => s.workload.name === "conv2d_nchwc");
    assert.equal(convs.length, 20);
    assert.ok(convs.every((s) => s.epilogue !== undefined));
    assert.ok(relError(tuned.run(x), want) < 1e-4);
    const kernels = tuned.profile({ repeat: 1, warmup: 0 }).map((p) => p.kernel);
    assert.ok(kernels.every((k) => !k.startsWith("layout_transform(")), `${kernels}`);
    assert.ok(kernels.includes("max_pool2d(1,64,16,16,3,2,1,0,16)"), `${kernels}`);
  } finally {
    untuned.close();
    tuned.close();
  }
});

Deno.test("blocked, SqueezeNet's concats and MobileNet-v2's depthwise layers keep the blocks; both match the reference", async () => {
  for (const [name, size] of [["squeezenet1_1", 35], ["mobilenet_v2", 32]] as const) {
    const net = builtinNetwork(name, { size, classes: 10 });
    const weights = randomWeights(net, 4);
    const plan = planSteps(foldBatchNorm(net, weights).network, 16);
    const into = plan.steps.filter((s) => s.workload.name === "layout_transform")
      .map((s) => s.workload.shape.slice(4).join("->"));
    if (name === "squeezenet1_1") {
      // Each fire module's two expand convolutions (64, 128, 192 or 256 channels) concatenate
      // their blocks in place; the only conversion is out of blocks before the 10-class
      // convolution (10 channels: NCHW).
      assert.deepEqual(into, ["16->1"]);
      assert.equal(plan.joined.size, 8);
      assert.ok(!plan.steps.some((s) => s.workload.name === "concat"));
    } else {
      // The depthwise layers run on blocks too (depthwise_conv2d_nchwc): no conversion at all.
      assert.deepEqual(into, []);
      const dw = plan.steps.filter((s) => s.workload.name === "depthwise_conv2d_nchwc");
      assert.equal(dw.length, 17);
      assert.ok(dw.every((s) => s.workload.shape[8] === 16));
    }
    const x = randomInput(net);
    const ex = await createExecutor(net, weights, { block: 16 });
    try {
      assert.ok(relError(ex.run(x), referenceRun(net, weights, x)) < 1e-4, name);
    } finally {
      ex.close();
    }
  }
});
