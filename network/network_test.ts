import assert from "node:assert/strict";
import { join } from "node:path";
import { builtinNetwork } from "./builtin.ts";
import { loadNetwork } from "./load.ts";
import { inferShapes, NetworkError, parseNetwork } from "./network.ts";
import { convOutputBlock, extractTasks, inputBlock, outputBlock, taskKey } from "./tasks.ts";
import { foldBatchNorm, randomWeights } from "./weights.ts";

const tasksOf = (name: string) =>
  extractTasks(builtinNetwork(name)).map((t) =>
    `${t.workload.name}(${t.workload.shape})x${t.weight}`
  );

Deno.test("the built-in networks end in 1000 classes from 224x224 inputs", () => {
  for (const name of ["resnet18", "mobilenet_v2", "squeezenet1_1"]) {
    const net = builtinNetwork(name);
    const shapes = inferShapes(net);
    assert.deepEqual(shapes.get(net.layers[net.layers.length - 1].name), [1, 1000], name);
  }
  const sq = inferShapes(builtinNetwork("squeezenet1_1"));
  assert.deepEqual(sq.get("features2"), [1, 64, 55, 55]);
  assert.deepEqual(sq.get("features12_concat"), [1, 512, 13, 13]);
  assert.deepEqual(inferShapes(builtinNetwork("mobilenet_v2")).get("features18_relu6"), [
    1,
    1280,
    7,
    7,
  ]);
});

Deno.test("ResNet-18's tasks are its 12 distinct convolutions and the dense layer, weighted", () => {
  const tasks = tasksOf("resnet18");
  assert.deepEqual(tasks, [
    "conv2d(1,3,224,224,64,7,7,2,3)x1",
    "conv2d(1,64,56,56,64,3,3,1,1)x4",
    "conv2d(1,64,56,56,128,3,3,2,1)x1",
    "conv2d(1,128,28,28,128,3,3,1,1)x3",
    "conv2d(1,64,56,56,128,1,1,2,0)x1",
    "conv2d(1,128,28,28,256,3,3,2,1)x1",
    "conv2d(1,256,14,14,256,3,3,1,1)x3",
    "conv2d(1,128,28,28,256,1,1,2,0)x1",
    "conv2d(1,256,14,14,512,3,3,2,1)x1",
    "conv2d(1,512,7,7,512,3,3,1,1)x3",
    "conv2d(1,256,14,14,512,1,1,2,0)x1",
    "matmul(1,1000,512)x1",
  ]);
  // 1.8 GFLOP, as usually quoted for ResNet-18 (multiply-adds counted twice: 3.6 GFLOP).
  const gflop = extractTasks(builtinNetwork("resnet18")).reduce(
    (a, t) => a + t.weight * t.workload.flops,
    0,
  ) / 1e9;
  assert.ok(gflop > 3.5 && gflop < 3.7, `${gflop}`);
});

Deno.test("blocked (NCHW16c), ResNet-18's convolutions are conv2d_nchwc tasks: the image read NCHW, the rest in blocks of 16", () => {
  const tasks = extractTasks(builtinNetwork("resnet18"), 16);
  assert.equal(tasks.length, 12);
  assert.equal(tasks[0].workload.name, "conv2d_nchwc");
  assert.deepEqual(tasks[0].workload.shape, [1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 16]);
  for (const t of tasks.slice(1, 11)) {
    assert.equal(t.workload.name, "conv2d_nchwc");
    assert.deepEqual(t.workload.shape.slice(9), [16, 16]);
  }
  assert.equal(tasks[11].workload.name, "matmul");
  // The same layers, weights and FLOPs as the NCHW tasks.
  const plain = extractTasks(builtinNetwork("resnet18"));
  assert.deepEqual(tasks.map((t) => t.weight), plain.map((t) => t.weight));
  assert.deepEqual(tasks.map((t) => t.workload.flops), plain.map((t) => t.workload.flops));
  assert.equal(inputBlock(3, 16), 1);
  assert.equal(inputBlock(24, 16), 8); // the block a 24-channel convolution writes
  assert.equal(inputBlock(20, 16), 10);
  assert.equal(inputBlock(32, 16), 16);
  assert.equal(inputBlock(17, 16), 1);
});

Deno.test("blocked, a convolution whose channels 16 does not divide pads them to blocks of 16, or writes blocks of 8", () => {
  assert.deepEqual([64, 1000, 24, 10, 8].map((F) => outputBlock(F, 16)), [16, 8, 8, 1, 8]);
  assert.equal(outputBlock(24, 8), 8);
  assert.equal(outputBlock(12, 8), 1);
  // Padding to whole blocks of 16 where it adds at most an eighth.
  // 40 and 24 would grow by a fifth and a third: blocks of 8.
  const F = [64, 1000, 24, 10, 136, 130, 40];
  assert.deepEqual(F.map((f) => convOutputBlock(f, 16)), [16, 16, 8, 1, 16, 16, 8]);
  assert.equal(convOutputBlock(1000, 1), 1);
  assert.equal(inputBlock(1000, 16), 16);
  // SqueezeNet 1.1's last convolution (1,000 classes: 1,008 in 63 blocks of 16) and
  // MobileNet-v2's 24-channel ones (blocks of 8).
  const sq = extractTasks(builtinNetwork("squeezenet1_1"), 16).map((t) => taskKey(t.workload));
  assert.ok(sq.includes("conv2d_nchwc(1,512,13,13,1008,1,1,1,0,16,16)"), sq.join("\n"));
  assert.ok(sq.every((k) => k.startsWith("conv2d_nchwc(")), sq.join("\n"));
  const mb = extractTasks(builtinNetwork("mobilenet_v2"), 16).map((t) => taskKey(t.workload));
  assert.ok(mb.includes("conv2d_nchwc(1,144,56,56,24,1,1,1,0,16,8)"), mb.join("\n"));
  assert.ok(mb.includes("conv2d_nchwc(1,24,56,56,144,1,1,1,0,8,16)"), mb.join("\n"));
});

Deno.test("MobileNet-v2's tasks include depthwise convolutions; SqueezeNet's pointwise ones", () => {
  const mb = tasksOf("mobilenet_v2");
  assert.ok(mb.includes("depthwise_conv2d(1,32,112,112,3,3,1,1)x1"), mb.join("\n"));
  assert.ok(mb.includes("depthwise_conv2d(1,144,56,56,3,3,2,1)x1"));
  // 17 depthwise layers (one per inverted residual block), 10 distinct shapes.
  const dw = extractTasks(builtinNetwork("mobilenet_v2")).filter((t) =>
    t.workload.name === "depthwise_conv2d"
  );
  assert.equal(dw.length, 10);
  assert.equal(dw.reduce((a, t) => a + t.weight, 0), 17);
  const sq = tasksOf("squeezenet1_1");
  assert.ok(sq.includes("conv2d(1,64,55,55,16,1,1,1,0)x1"), sq.join("\n"));
  assert.ok(sq.includes("conv2d(1,16,55,55,64,3,3,1,1)x2"));
});

Deno.test("parseNetwork rejects bad networks naming the layer and field", () => {
  const base = { name: "n", input: { name: "x", shape: [1, 3, 8, 8] } };
  const bad = (layers: unknown[], re: RegExp) =>
    assert.throws(
      () => parseNetwork({ ...base, layers }),
      (e) => e instanceof NetworkError && re.test(e.message),
    );
  bad([{ name: "a", op: "conv3d", inputs: ["x"] }], /Layer "a": unknown op "conv3d"/);
  bad(
    [{ name: "a", op: "conv2d", inputs: ["y"], channels: 4, kernel: 3 }],
    /input "y" is not an earlier layer/,
  );
  bad(
    [{ name: "a", op: "conv2d", inputs: ["x"], kernel: 3 }],
    /Layer "a" \(conv2d\): field "channels"/,
  );
  bad([{ name: "a", op: "conv2d", inputs: ["x"], channels: 4, kernel: 3, groups: 2 }], /groups 2/);
  bad([{ name: "a", op: "max_pool2d", inputs: ["x"], kernel: 9 }], /does not fit/);
  bad([{ name: "a", op: "add", inputs: ["x"] }], /takes 2 input/);
  assert.throws(() => parseNetwork({ name: "n", layers: [] }), /"input"/);
});

Deno.test("loadNetwork reads a JSON file and names a bad one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const good = join(dir, "tiny.json"), broken = join(dir, "broken.json");
    await Deno.writeTextFile(
      good,
      JSON.stringify({
        name: "tiny",
        input: { name: "x", shape: [1, 3, 8, 8] },
        layers: [
          { name: "c", op: "conv2d", inputs: ["x"], channels: 8, kernel: 3, pad: 1 },
          { name: "b", op: "batch_norm", inputs: ["c"] },
        ],
      }),
    );
    await Deno.writeTextFile(broken, "{ nope");
    const { network } = await loadNetwork(good);
    assert.equal(network.layers.length, 2);
    const folded = foldBatchNorm(network, randomWeights(network, 1));
    assert.deepEqual(folded.network.layers.map((l) => [l.name, l.bias]), [["c", true]]);
    assert.equal(folded.network.output, "c");
    await assert.rejects(() => loadNetwork(broken), /broken\.json is not JSON/);
    await assert.rejects(() => loadNetwork(join(dir, "none.onnx")), /Cannot read network file/);
    await assert.rejects(() => loadNetwork("resnet50"), /Unknown network "resnet50"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
