/**
 * The blocked depthwise convolution `depthwise_conv2d_nchwc` (input and
 * output `[N][C/B][H][W][B]`) and its template `depthwise-blocked`: the
 * workload is the depthwise convolution on blocked tensors, and the
 * template's points compute the naive output (16 and 8 lanes, with and
 * without AVX-512), their tile in vectors of the block's channels; a padded
 * input is read in place (`pad_at` `inline`) with the taps in the padding
 * skipped, and the plain `conv2d` template's inlined padding vectorizes.
 */
import assert from "node:assert/strict";
import { checkBothTargets, templateSource } from "./_conv_check.ts";
import { evaluate } from "../ir/evaluate.ts";
import { depthwiseConv2d } from "../ir/nn.ts";
import { pointOfValues } from "../ir/knobs.ts";
import { createPrng } from "../ir/prng.ts";
import { createWorkload } from "../ir/workloads.ts";
import { defaultTemplate, templateSpace } from "../search/templates/registry.ts";
import { fromBlocked, toBlocked } from "../network/layout.ts";
import { compileSchedules } from "../network/native.ts";

const random = (n: number, seed: number) => {
  const prng = createPrng(seed);
  return Float32Array.from({ length: n }, () => prng.next() * 2 - 1);
};

Deno.test("depthwise_conv2d_nchwc is the depthwise convolution on channel-blocked input and output", () => {
  for (const [N, C, H, W, K, s, p, B] of [[1, 32, 7, 6, 3, 1, 1, 16], [2, 12, 9, 9, 5, 2, 2, 4]]) {
    const plain = depthwiseConv2d(N, C, H, W, K, K, s, p);
    const blocked = createWorkload("depthwise_conv2d_nchwc", [N, C, H, W, K, K, s, p, B]);
    assert.equal(blocked.channelBlock, B);
    const x = random(N * C * H * W, 1), wt = random(C * K * K, 2);
    const want = Float32Array.from(evaluate(plain, new Map([["I", x], ["Wt", wt]])).get("O")!);
    const got = evaluate(blocked, new Map([["I", toBlocked(x, [N, C, H, W], B)], ["Wt", wt]]))
      .get("O")!;
    const outShape = plain.outputs[0].shape;
    assert.deepEqual(fromBlocked(Float32Array.from(got), outShape, B), want, `${[N, C, K, s, B]}`);
    assert.equal(blocked.flops, plain.flops);
  }
  assert.throws(() => depthwiseConv2d(1, 24, 8, 8, 3, 3, 1, 1, 16), /Block 16 does not divide 24/);
});

Deno.test("depthwise-blocked is the blocked depthwise convolution's default template; its tile is vectors of channels", () => {
  const w = createWorkload("depthwise_conv2d_nchwc", [1, 32, 14, 14, 3, 3, 1, 1, 16]);
  assert.equal(defaultTemplate(w), "depthwise-blocked");
  const space = templateSpace("depthwise-blocked", w);
  assert.deepEqual(space.space.knobs.map((k) => k.name), [
    "xr",
    "parallel",
    "unroll_kw",
    "pad_parallel",
    "pad_at",
  ]);
  // The padding copy's own knob is left out of the space when the padding is read in place.
  const ks = space.space;
  const at = (pad_parallel: number, pad_at: string) =>
    ks.isValid(
      pointOfValues(ks.knobs, { xr: 4, parallel: "cy", unroll_kw: 1, pad_parallel, pad_at })!,
    );
  assert.deepEqual([at(1, "inline"), at(0, "inline"), at(1, "root"), at(0, "root")], [
    true,
    false,
    true,
    true,
  ]);
  for (const pad_at of ["root", "inline"]) {
    const { source } = templateSource(
      "depthwise-blocked",
      [1, 32, 14, 14, 3, 3, 1, 1, 16],
      { xr: 7, parallel: "cy", unroll_kw: 1, pad_at },
      "depthwise_conv2d_nchwc",
    );
    const compute = source.split("void tb_compute(float **bufs) {")[1];
    // Accumulators in vector registers, the packed taps read as vectors; no scalar simd loop.
    assert.match(compute, /tb_loadu\(&T_Wt_global\[/);
    assert.doesNotMatch(compute, /omp simd/);
    if (pad_at === "root") assert.match(compute, /T_O_local_v0 \+= \(tb_loadu\(&T_P\[/);
    else {
      // No padded copy: the input read in place, a tap in the padding skipped
      // by one test for the whole vector, with no masked code.
      assert.doesNotMatch(compute, /T_P/);
      assert.match(compute, /if \(.* >= 1\).*\) \{\n\s+T_O_local_v0 \+= \(tb_loadu\(&T_I\[/);
      assert.doesNotMatch(compute, /tb_maskz/);
    }
  }
});

for (
  const [shape, point] of [
    [[1, 32, 9, 9, 3, 3, 1, 1, 16], { xr: 4, parallel: "cy", unroll_kw: 1, pad_parallel: 1 }],
    [[1, 32, 9, 11, 3, 3, 2, 1, 16], {
      xr: 7,
      parallel: "c",
      unroll_kw: 0,
      pad_parallel: 0,
      pad_at: "root",
    }],
    [[1, 32, 9, 11, 3, 3, 2, 1, 16], { xr: 4, parallel: "cy", pad_at: "inline" }],
    [[1, 16, 8, 8, 5, 5, 1, 2, 8], { xr: 2, parallel: "cy", unroll_kw: 1, pad_at: "root" }],
    [[1, 16, 8, 8, 5, 5, 1, 2, 8], { xr: 7, parallel: "c", unroll_kw: 1, pad_at: "inline" }],
  ] as const
) {
  Deno.test(`depthwise-blocked ${JSON.stringify(point)} computes the naive output of ${shape}`, async () => {
    await checkBothTargets(
      templateSource("depthwise-blocked", [...shape], point, "depthwise_conv2d_nchwc"),
    );
  });
}

Deno.test("a padding read in place skips the taps in the padding: no 0 x Infinity in a depthwise tile", async () => {
  // 6x6 input, 3x3 taps, padding 1, a tile of 4 columns (a partial last tile).
  // Every channel's top-left tap is Infinity: an output whose top-left tap
  // reads the padding (first row or column) gets the sum of the other taps.
  const { schedule, source } = templateSource(
    "depthwise-blocked",
    [1, 16, 6, 6, 3, 3, 1, 1, 16],
    { xr: 4, parallel: "cy", pad_at: "inline" },
    "depthwise_conv2d_nchwc",
  );
  assert.doesNotMatch(source, /T_P\b/);
  const [kernel] = await compileSchedules([schedule]);
  try {
    const input = new Float32Array(16 * 36).fill(1);
    const taps = new Float32Array(16 * 9).fill(1);
    for (let i = 0; i < taps.length; i += 9) taps[i] = Infinity;
    const out = new Float32Array(16 * 36).fill(-1);
    kernel.run([input, taps, out]);
    for (let y = 0; y < 6; y++) {
      for (let x = 0; x < 6; x++) {
        for (let c = 0; c < 16; c++) {
          const got = out[(y * 6 + x) * 16 + c];
          if (y > 0 && x > 0) assert.equal(got, Infinity, `(${y}, ${x}, ${c})`);
          else {
            const rows = y === 0 || y === 5 ? 2 : 3, cols = x === 0 || x === 5 ? 2 : 3;
            assert.equal(got, rows * cols, `(${y}, ${x}, ${c})`);
          }
        }
      }
    }
  } finally {
    kernel.close();
  }
});

Deno.test("the plain conv2d template's inlined padding runs in vectors, one test per vector of columns", async () => {
  // The zero-padding select leaves the product (select(c, I, 0) * W becomes
  // select(c, I * W, 0)), so the vectorized column loop tests whole vectors
  // and masks only the edge ones, where it used to select lane by lane.
  const t = templateSource("conv2d", [1, 4, 16, 16, 8, 3, 3, 1, 1], {});
  assert.doesNotMatch(t.source, /omp simd/);
  assert.match(t.source, /tb_loadu\(&T_I\[/);
  assert.match(t.source, /tb_maskz\(\(tb_loadu_m\(&T_I\[/);
  await checkBothTargets(t);
});
