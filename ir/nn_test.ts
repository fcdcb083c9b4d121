import assert from "node:assert/strict";
import { evaluate } from "./evaluate.ts";
import {
  avgPool2d,
  batchMatmul,
  biasAct,
  concat,
  depthwiseConv2d,
  eltwise,
  globalAvgPool2d,
  groupConv2d,
  layoutTransform,
  maxPool2d,
  paddedChannels,
  pooledExtent,
} from "./nn.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { randomSchedule } from "./testing.ts";
import { replayTrace } from "./trace.ts";
import { createWorkload, type Workload } from "./workloads.ts";
import { defaultSpace } from "../search/sketch.ts";
import { alignedFloat32 } from "../measure/buffers.ts";
import { fillUniform } from "../measure/prng.ts";
import { compileSchedules } from "../network/native.ts";
import { toBlocked } from "../network/layout.ts";

const ATOL = 1e-4, RTOL = 1e-4;

function randomInputs(w: Workload, seed = 7): Float32Array[] {
  const xs = w.inputs.map((t) => alignedFloat32(t.size));
  fillUniform(seed, xs);
  return xs;
}

function reference(w: Workload, xs: Float32Array[]): Float64Array {
  return evaluate(w, new Map(w.inputs.map((t, i) => [t.name, xs[i]]))).get(w.outputs[0].name)!;
}

function assertClose(got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    const err = Math.abs(got[i] - want[i]);
    assert.ok(err <= ATOL + RTOL * Math.abs(want[i]), `${what}[${i}]: ${got[i]} vs ${want[i]}`);
  }
}

/** Naive grouped convolution over flat NCHW / OIHW arrays (independent of te). */
function naiveConv(
  x: Float32Array,
  wt: Float32Array,
  [N, C, H, W, F, KH, KW, s, p, G]: number[],
): Float64Array {
  const OH = pooledExtent(H, KH, s, p), OW = pooledExtent(W, KW, s, p), Cg = C / G, Fg = F / G;
  const out = new Float64Array(N * F * OH * OW);
  for (let n = 0; n < N; n++) {
    for (let f = 0; f < F; f++) {
      const g = Math.floor(f / Fg);
      for (let y = 0; y < OH; y++) {
        for (let xo = 0; xo < OW; xo++) {
          let acc = 0;
          for (let c = 0; c < Cg; c++) {
            for (let ky = 0; ky < KH; ky++) {
              for (let kx = 0; kx < KW; kx++) {
                const iy = y * s + ky - p, ix = xo * s + kx - p;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += x[((n * C + g * Cg + c) * H + iy) * W + ix] *
                  wt[((f * Cg + c) * KH + ky) * KW + kx];
              }
            }
          }
          out[((n * F + f) * OH + y) * OW + xo] = acc;
        }
      }
    }
  }
  return out;
}

/** Naive pooling (max ignores padding; average counts it). */
function naivePool(
  x: Float32Array,
  [N, C, H, W, K, s, p, ceil]: number[],
  kind: "max" | "avg",
): Float64Array {
  const OH = pooledExtent(H, K, s, p, ceil === 1), OW = pooledExtent(W, K, s, p, ceil === 1);
  const out = new Float64Array(N * C * OH * OW);
  for (let nc = 0; nc < N * C; nc++) {
    for (let y = 0; y < OH; y++) {
      for (let xo = 0; xo < OW; xo++) {
        let acc = kind === "max" ? -Infinity : 0;
        for (let ky = 0; ky < K; ky++) {
          for (let kx = 0; kx < K; kx++) {
            const iy = y * s + ky - p, ix = xo * s + kx - p;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            const v = x[(nc * H + iy) * W + ix];
            acc = kind === "max" ? Math.max(acc, v) : acc + v / (K * K);
          }
        }
        out[(nc * OH + y) * OW + xo] = acc;
      }
    }
  }
  return out;
}

Deno.test("depthwise and grouped conv2d agree with a naive grouped convolution", () => {
  for (
    const s of [[1, 4, 9, 8, 4, 3, 3, 2, 1, 4], [1, 6, 7, 7, 4, 3, 3, 1, 1, 2], [
      2,
      4,
      5,
      5,
      8,
      1,
      1,
      1,
      0,
      4,
    ]]
  ) {
    const w = s[9] === s[1] && s[4] === s[1]
      ? depthwiseConv2d(s[0], s[1], s[2], s[3], s[5], s[6], s[7], s[8])
      : groupConv2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9]);
    const xs = randomInputs(w);
    assertClose(reference(w, xs), naiveConv(xs[0], xs[1], s), `${w.name}(${s})`);
  }
  // Depthwise is grouped convolution with groups == channels.
  const dw = depthwiseConv2d(1, 5, 6, 6, 3, 3, 1, 1),
    gc = groupConv2d(1, 5, 6, 6, 5, 3, 3, 1, 1, 5);
  const xs = randomInputs(dw);
  assertClose(reference(dw, xs), reference(gc, xs), "depthwise vs groups = C");
});

Deno.test("max and average pooling agree with naive pooling, ceil mode and padding included", () => {
  for (const s of [[1, 3, 9, 9, 3, 2, 1, 0], [1, 2, 8, 7, 3, 2, 0, 1], [2, 2, 6, 6, 2, 2, 0, 0]]) {
    const mp = maxPool2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    const xs = randomInputs(mp);
    assertClose(reference(mp, xs), naivePool(xs[0], s, "max"), `max_pool2d(${s})`);
    if (s[7] === 0) {
      const ap = avgPool2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
      assertClose(reference(ap, xs), naivePool(xs[0], s, "avg"), `avg_pool2d(${s})`);
    }
  }
  // Ceil mode adds the partial window PyTorch adds: 8 rows, 3-wide stride 2 -> 4 (floor 3).
  assert.equal(pooledExtent(8, 3, 2, 0, true), 4);
  assert.equal(pooledExtent(8, 3, 2, 0, false), 3);
  assert.equal(pooledExtent(111, 3, 2, 0, true), 55);
});

Deno.test("element-wise operators, global pooling, concat and batch matmul compute what they say", () => {
  const relu6 = biasAct(1, 2, 3, "relu6");
  const x = new Float32Array([-1, 2, 7, 0.5, -3, 9]), b = new Float32Array([0.5, -1]);
  assert.deepEqual([...reference(relu6, [x, b])], [0, 2.5, 6, 0, 0, 6]);
  const add = eltwise(3, "relu");
  assert.deepEqual([
    ...reference(add, [new Float32Array([1, -2, 3]), new Float32Array([1, 1, -4])]),
  ], [
    2,
    0,
    0,
  ]);
  const gap = globalAvgPool2d(1, 2, 2, 2);
  assertClose(reference(gap, [new Float32Array([1, 2, 3, 4, 0, 0, 0, 8])]), [2.5, 2], "gap");
  const cat = concat(1, [1, 2], 2);
  assert.deepEqual(
    [...reference(cat, [new Float32Array([1, 2]), new Float32Array([3, 4, 5, 6])])],
    [1, 2, 3, 4, 5, 6],
  );
  const bmm = batchMatmul(2, 1, 1, 2);
  assert.deepEqual(
    [...reference(bmm, [new Float32Array([1, 2, 3, 4]), new Float32Array([5, 6, 7, 8])])],
    [17, 53],
  );
});

Deno.test("layout_transform blocks channels as toBlocked does; a blocked bias adds each channel's own", () => {
  const x = Float32Array.from({ length: 48 * 15 }, (_, i) => i);
  const blocked = toBlocked(x, [1, 48, 3, 5], 16);
  assert.deepEqual(Float32Array.from(reference(layoutTransform(1, 48, 3, 5, 1, 16), [x])), blocked);
  assert.deepEqual(Float32Array.from(reference(layoutTransform(1, 48, 3, 5, 16, 1), [blocked])), x);
  assert.deepEqual(
    Float32Array.from(reference(layoutTransform(1, 48, 3, 5, 16, 12), [blocked])),
    toBlocked(x, [1, 48, 3, 5], 12),
  );
  const bias = Float32Array.from({ length: 48 }, (_, c) => -c);
  const plain = reference(biasAct(1, 48, 15, "none"), [x, bias]);
  const inBlocks = reference(biasAct(1, 48, 15, "none", 16), [blocked, bias]);
  assert.deepEqual(
    Float32Array.from(inBlocks),
    toBlocked(Float32Array.from(plain), [1, 48, 3, 5], 16),
  );
});

Deno.test("layout_transform pads a block that does not divide the channels with zeros, and drops them", () => {
  const x = Float32Array.from({ length: 24 * 6 }, (_, i) => i + 1);
  const shape = [1, 24, 2, 3];
  const padded = reference(layoutTransform(1, 24, 2, 3, 1, 16), [x]);
  assert.equal(paddedChannels(24, 16), 32);
  assert.deepEqual(Float32Array.from(padded), toBlocked(x, shape, 16));
  assert.equal(padded.filter((v) => v === 0).length, 8 * 6);
  // Padded blocks of 16 to blocks of 8 (no padding), and back to NCHW.
  const eights = reference(layoutTransform(1, 24, 2, 3, 16, 8), [Float32Array.from(padded)]);
  assert.deepEqual(Float32Array.from(eights), toBlocked(x, shape, 8));
  assert.deepEqual(
    Float32Array.from(reference(layoutTransform(1, 24, 2, 3, 16, 1), [Float32Array.from(padded)])),
    x,
  );
  // The global pool of padded blocks pools every lane; a conversion of its `[N][32]`, seen as
  // one padded 1x1 block pair, leaves the padding out.
  const pooled = reference(globalAvgPool2d(1, 32, 2, 3, 16), [Float32Array.from(padded)]);
  const dropped = reference(layoutTransform(1, 24, 1, 1, 16, 1), [Float32Array.from(pooled)]);
  assertClose(dropped, [...reference(globalAvgPool2d(1, 24, 2, 3), [x])], "padded global pool");
});

Deno.test("blocked max and global pooling pool each channel of a block as NCHW pooling does", () => {
  const x = Float32Array.from({ length: 32 * 9 * 11 }, (_, i) => Math.sin(i * 1.7));
  const shape = [1, 32, 9, 11];
  for (const [K, s, p, ceil] of [[3, 2, 1, 0], [3, 2, 0, 1], [2, 2, 0, 0]]) {
    const plain = maxPool2d(1, 32, 9, 11, K, s, p, ceil);
    const blocked = maxPool2d(1, 32, 9, 11, K, s, p, ceil, 16);
    assert.deepEqual(blocked.shape, [1, 32, 9, 11, K, s, p, ceil, 16]);
    const [, , OH, OW] = plain.outputs[0].shape;
    assert.deepEqual(
      Float32Array.from(reference(blocked, [toBlocked(x, shape, 16)])),
      toBlocked(Float32Array.from(reference(plain, [x])), [1, 32, OH, OW], 16),
    );
  }
  assertClose(
    reference(globalAvgPool2d(1, 32, 9, 11, 8), [toBlocked(x, shape, 8)]),
    [...reference(globalAvgPool2d(1, 32, 9, 11), [x])],
    "global pool",
  );
});

const TUNABLE: [string, number[]][] = [
  ["depthwise_conv2d", [1, 8, 11, 13, 3, 3, 2, 1]],
  ["depthwise_conv2d", [1, 5, 9, 9, 3, 3, 1, 1]],
  ["group_conv2d", [1, 8, 9, 9, 12, 3, 3, 1, 1, 4]],
  ["conv2d", [1, 6, 7, 7, 10, 1, 1, 1, 0]], // pointwise
  ["conv2d", [1, 3, 15, 15, 8, 7, 7, 2, 3]], // strided stem
  ["batch_matmul", [3, 7, 13, 9]],
  ["max_pool2d", [1, 4, 13, 13, 3, 2, 1, 0]],
  ["max_pool2d", [1, 3, 14, 14, 3, 2, 0, 1]],
  ["avg_pool2d", [1, 4, 9, 9, 3, 2, 1]],
  ["global_avg_pool2d", [1, 16, 7, 7]],
];

const HELPERS: Workload[] = [
  biasAct(1, 5, 17, "relu"),
  biasAct(1, 32, 5, "relu6", 16),
  layoutTransform(1, 48, 3, 5, 1, 16),
  layoutTransform(1, 48, 3, 5, 16, 1),
  layoutTransform(1, 48, 3, 5, 16, 12),
  layoutTransform(1, 24, 3, 5, 1, 16),
  layoutTransform(1, 24, 3, 5, 16, 1),
  layoutTransform(2, 24, 1, 1, 16, 1),
  maxPool2d(1, 32, 13, 13, 3, 2, 1, 0, 16),
  globalAvgPool2d(1, 32, 7, 7, 16),
  biasAct(2, 3, 10, "none"),
  eltwise(37, "relu6", 2),
  eltwise(29, "relu", 1),
  concat(1, [3, 5, 2], 9),
];

Deno.test("new workloads compile and match ir/evaluate.ts with default, sketch and random schedules", async () => {
  const cases: { w: Workload; sch: Schedule; how: string }[] = [];
  for (const [name, shape] of TUNABLE) {
    const w = createWorkload(name, shape);
    cases.push({ w, sch: new Schedule(w, { prng: createPrng(0) }), how: "default" });
    const space = defaultSpace(w);
    for (let seed = 1; seed <= 4; seed++) {
      const trace = space.sample(createPrng(seed));
      cases.push({ w, sch: replayTrace(trace, { prng: createPrng(seed) }), how: `sketch ${seed}` });
    }
    cases.push({ w, sch: randomSchedule(w, createPrng(99)), how: "random 99" });
  }
  for (const w of HELPERS) {
    cases.push({ w, sch: new Schedule(w, { prng: createPrng(0) }), how: "default" });
    cases.push({ w, sch: randomSchedule(w, createPrng(5)), how: "random 5" });
  }
  const kernels = await compileSchedules(cases.map((c) => c.sch));
  try {
    for (const [i, { w, how }] of cases.entries()) {
      const xs = randomInputs(w);
      const out = alignedFloat32(w.outputs[0].size).fill(NaN);
      kernels[i].run([...xs, out]);
      const want = reference(w, xs);
      assertClose(out, want, `${w.name}(${w.shape}) ${how}`);
      assert.ok(want.some((v) => Math.abs(v) > 0.05), `${w.name}: trivial output`);
    }
  } finally {
    kernels.forEach((k) => k.close());
  }
});

Deno.test("createWorkload registers the network workloads with their parameters", () => {
  assert.equal(
    createWorkload("depthwise_conv2d", [1, 32, 112, 112, 3, 3, 1, 1]).flops,
    2 * 32 * 112 * 112 * 9,
  );
  assert.throws(() => createWorkload("group_conv2d", [1, 6, 8, 8, 6, 3, 3, 1, 1, 4]), /groups 4/);
  assert.throws(() => createWorkload("max_pool2d", [1, 3, 8, 8, 3, 2, -1, 0]), /pad/);
  assert.throws(() => createWorkload("max_pool2d", [1, 3, 8, 8, 3, 2, 0, 2]), /Invalid ceil 2/);
});
