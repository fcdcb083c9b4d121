import assert from "node:assert/strict";
import onnxProto from "npm:onnx-proto@8.0.1";
import { fillUniform } from "../measure/prng.ts";
import { createExecutor } from "./executor.ts";
import { NetworkError, sizeOf } from "./network.ts";
import { importOnnx } from "./onnx.ts";
import { referenceRun } from "./reference.ts";
import { extractTasks } from "./tasks.ts";

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT, INT64 = onnx.TensorProto.DataType.INT64;

let seed = 100;
/** A float initializer of random values (raw little-endian bytes, as exporters write). */
function init(name: string, dims: number[]) {
  const v = new Float32Array(sizeOf(dims));
  fillUniform(seed++, [v]);
  for (let i = 0; i < v.length; i++) {
    v[i] = dims.length === 1 && name.endsWith("var") ? 1 + v[i] * 0.5 : v[i] * 0.5;
  }
  return onnx.TensorProto.create({
    name,
    dims,
    dataType: FLOAT,
    rawData: new Uint8Array(v.buffer),
  });
}
const ints = (name: string, values: number[]) =>
  onnx.AttributeProto.create({ name, ints: values, type: onnx.AttributeProto.AttributeType.INTS });
const int = (name: string, i: number) =>
  onnx.AttributeProto.create({ name, i, type: onnx.AttributeProto.AttributeType.INT });
const node = (opType: string, input: string[], output: string, attribute: unknown[] = []) =>
  onnx.NodeProto.create({ opType, input, output: [output], name: output, attribute } as never);
const valueInfo = (name: string, dims: number[]) =>
  onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => ({ dimValue: d })) } },
    },
  });

/** A small model using every supported node kind, as ONNX bytes. */
function smallModel(extra: unknown[] = []): Uint8Array {
  const nodes = [
    node("Conv", ["x", "c1_w", "c1_b"], "c1", [
      ints("kernel_shape", [3, 3]),
      ints("pads", [1, 1, 1, 1]),
    ]),
    node("BatchNormalization", ["c1", "bn_g", "bn_b", "bn_m", "bn_var"], "bn"),
    node("Relu", ["bn"], "r1"),
    node("MaxPool", ["r1"], "mp", [
      ints("kernel_shape", [3, 3]),
      ints("strides", [2, 2]),
      int("ceil_mode", 1),
    ]),
    node("Conv", ["mp", "dw_w"], "dw", [
      int("group", 4),
      ints("kernel_shape", [3, 3]),
      ints("pads", [1, 1, 1, 1]),
    ]),
    node("Clip", ["dw", "zero", "six"], "r6"),
    node("Identity", ["r6"], "id"),
    node("Add", ["id", "mp"], "sum"),
    node("Conv", ["sum", "pw_w"], "pw", [ints("kernel_shape", [1, 1])]),
    node("Concat", ["pw", "sum"], "cat", [int("axis", 1)]),
    node("AveragePool", ["cat"], "ap", [ints("kernel_shape", [2, 2]), ints("strides", [2, 2])]),
    node("GlobalAveragePool", ["ap"], "gap"),
    node("Reshape", ["gap", "shape"], "flat"),
    node("Gemm", ["flat", "fc_w", "fc_b"], "fc", [int("transB", 1)]),
    node("MatMul", ["fc", "mm_w"], "mm"),
    node("Add", ["mm", "mm_b"], "out"),
    ...extra,
  ];
  const graph = onnx.GraphProto.create({
    name: "small",
    node: nodes as never,
    input: [valueInfo("x", [1, 3, 10, 10])],
    output: [valueInfo("out", [1, 5])],
    initializer: [
      init("c1_w", [4, 3, 3, 3]),
      init("c1_b", [4]),
      init("bn_g", [4]),
      init("bn_b", [4]),
      init("bn_m", [4]),
      init("bn_var", [4]),
      init("dw_w", [4, 1, 3, 3]),
      onnx.TensorProto.create({ name: "zero", dims: [], dataType: FLOAT, floatData: [0] }),
      onnx.TensorProto.create({ name: "six", dims: [], dataType: FLOAT, floatData: [6] }),
      init("pw_w", [6, 4, 1, 1]),
      onnx.TensorProto.create({ name: "shape", dims: [2], dataType: INT64, int64Data: [1, -1] }),
      init("fc_w", [7, 10]),
      init("fc_b", [7]),
      init("mm_w", [7, 5]),
      init("mm_b", [5]),
    ],
  });
  const model = onnx.ModelProto.create({ irVersion: 7, graph, opsetImport: [{ version: 13 }] });
  return onnx.ModelProto.encode(model).finish();
}

Deno.test("importOnnx reads every supported node kind, with initializers as weights", () => {
  const { network, weights } = importOnnx(smallModel(), "small");
  assert.deepEqual(network.layers.map((l) => `${l.name}:${l.op}`), [
    "c1:conv2d",
    "bn:batch_norm",
    "r1:relu",
    "mp:max_pool2d",
    "dw:conv2d",
    "r6:relu6",
    "sum:add",
    "pw:conv2d",
    "cat:concat",
    "ap:avg_pool2d",
    "gap:global_avg_pool2d",
    "flat:flatten",
    "fc:dense",
    "mm:dense",
  ]);
  assert.deepEqual(network.layers[6].inputs, ["r6", "mp"]); // through the Identity
  assert.equal(network.output, "mm"); // the bias Add became mm's bias
  assert.equal(network.layers[3].ceil, true); // 10 rows, 3-wide stride 2: 5 windows (floor: 4)
  assert.equal(network.layers[4].groups, 4);
  assert.equal(weights.get("c1.weight")!.length, 4 * 27);
  assert.equal(weights.get("mm.bias")!.length, 5);
  // Gemm with transB keeps [N, K]; MatMul's [K, N] is transposed to it.
  assert.equal(weights.get("fc.weight")!.length, 70);
  const tasks = extractTasks(network).map((t) =>
    `${t.workload.name}(${t.workload.shape})x${t.weight}`
  );
  assert.deepEqual(tasks, [
    "conv2d(1,3,10,10,4,3,3,1,1)x1",
    "depthwise_conv2d(1,4,5,5,3,3,1,1)x1",
    "conv2d(1,4,5,5,6,1,1,1,0)x1",
    "matmul(1,7,10)x1",
    "matmul(1,5,7)x1",
  ]);
});

Deno.test("an imported ONNX network runs natively and matches the reference executor", async () => {
  const { network, weights } = importOnnx(smallModel());
  const x = new Float32Array(3 * 100);
  fillUniform(9, [x]);
  const want = referenceRun(network, weights, x);
  const ex = await createExecutor(network, weights);
  try {
    const got = ex.run(x);
    const scale = Math.max(...want.map(Math.abs));
    assert.ok(scale > 1e-3);
    got.forEach((v, i) =>
      assert.ok(Math.abs(v - want[i]) <= 1e-4 * scale, `out[${i}]: ${v} vs ${want[i]}`)
    );
  } finally {
    ex.close();
  }
  // The MatMul weights were transposed: a hand check of the last layer on its input.
  const fc = referenceRun({ ...network, output: "fc" }, weights, x);
  const w = weights.get("mm.weight")!, b = weights.get("mm.bias")!;
  const direct = Array.from(
    { length: 5 },
    (_, n) => fc.reduce((a, v, k) => a + v * w[n * 7 + k], b[n]),
  );
  direct.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-5));
});

Deno.test("importOnnx names the node of an unsupported operator or attribute", () => {
  assert.throws(
    () => importOnnx(smallModel([node("Softmax", ["out"], "sm")])),
    (e) =>
      e instanceof NetworkError &&
      /node "sm" \(Softmax\): this operator is not supported/.test(e.message),
  );
  assert.throws(
    () =>
      importOnnx(smallModel([node("Conv", ["out", "pw_w"], "bad", [ints("dilations", [2, 2])])])),
    /node "bad" \(Conv\): dilations must be 1/,
  );
  assert.throws(() => importOnnx(new Uint8Array([1, 2, 3])), NetworkError);
});
