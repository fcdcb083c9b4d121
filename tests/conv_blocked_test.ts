/**
 * The blocked convolution `conv2d_nchwc` (input `[N][C/CB][H][W][CB]`,
 * output `[N][F/FB][OH][OW][FB]`) and its template `conv2d-blocked`: the
 * workload is conv2d on blocked tensors, the template's points compute the
 * naive output (16 and 8 lanes, with and without AVX-512), and a kernel
 * neither copies its input into blocks nor its output out of them.
 */
import assert from "node:assert/strict";
import { checkBothTargets, templateSource } from "./_conv_check.ts";
import { evaluate } from "../ir/evaluate.ts";
import { createPrng } from "../ir/prng.ts";
import { pointOfValues, withDefaults } from "../ir/knobs.ts";
import { conv2d, conv2dNCHWc, createWorkload } from "../ir/workloads.ts";
import { defaultTemplate, templateSpace } from "../search/templates/registry.ts";
import { fromBlocked, toBlocked } from "../network/layout.ts";

const random = (n: number, seed: number) => {
  const prng = createPrng(seed);
  return Float32Array.from({ length: n }, () => prng.next() * 2 - 1);
};

Deno.test("conv2d_nchwc is conv2d on channel-blocked input and output", () => {
  for (
    const [N, C, H, W, F, K, s, p, CB, FB] of [
      [1, 8, 7, 6, 16, 3, 1, 1, 4, 8],
      [2, 6, 9, 9, 4, 1, 2, 0, 3, 2],
      [1, 3, 11, 11, 8, 5, 2, 2, 3, 8],
    ]
  ) {
    const plain = conv2d(N, C, H, W, F, K, K, s, p);
    const blocked = conv2dNCHWc(N, C, H, W, F, K, K, s, p, CB, FB);
    const x = random(N * C * H * W, 1), wt = random(F * C * K * K, 2);
    const want = Float32Array.from(
      evaluate(plain, new Map([["I", x], ["Wt", wt]])).get("O")!,
    );
    const got = evaluate(blocked, new Map([["I", toBlocked(x, [N, C, H, W], CB)], ["Wt", wt]]))
      .get("O")!;
    const outShape = plain.outputs[0].shape;
    assert.deepEqual(blocked.outputs[0].shape, [N, F / FB, outShape[2], outShape[3], FB]);
    assert.deepEqual(
      fromBlocked(Float32Array.from(got), outShape, FB),
      want,
      `${[N, C, H, W, F, K, s, p, CB, FB]}`,
    );
    assert.equal(blocked.flops, plain.flops);
  }
});

Deno.test("conv2d_nchwc refuses blocks that do not divide the channels", () => {
  assert.throws(
    () => createWorkload("conv2d_nchwc", [1, 12, 8, 8, 16, 3, 3, 1, 1, 8, 16]),
    /Input block 8 does not divide 12 channels/,
  );
  assert.throws(
    () => createWorkload("conv2d_nchwc", [1, 16, 8, 8, 24, 3, 3, 1, 1, 8, 16]),
    /Output block 16 does not divide 24 channels/,
  );
});

Deno.test("conv2d-blocked is the blocked convolution's default template; its knobs have no channel tile", () => {
  const w = createWorkload("conv2d_nchwc", [1, 32, 14, 14, 64, 1, 1, 2, 0, 16, 16]);
  assert.equal(defaultTemplate(w), "conv2d-blocked");
  const names = templateSpace("conv2d-blocked", w).space.knobs.map((k) => k.name);
  // 4 output blocks: tiles of 1, 2 or 4 of them (`oc_blocks`); of 6 blocks, 1, 2 or 3.
  assert.deepEqual(names, ["yr", "xr", "unroll_kw", "parallel", "flat", "oc_blocks"]);
  assert.deepEqual(templateSpace("conv2d-blocked", w).space.knobs.at(-1)?.options, [1, 2, 4]);
  const six = createWorkload("conv2d_nchwc", [1, 32, 14, 14, 96, 1, 1, 2, 0, 16, 16]);
  assert.deepEqual(templateSpace("conv2d-blocked", six).space.knobs.at(-1)?.options, [1, 2, 3]);
  // An NCHW image (a block of 1) adds gcc's predictive commoning; its copy is always parallel.
  // One output block: no `oc_blocks`.
  const image = createWorkload("conv2d_nchwc", [1, 3, 20, 20, 16, 7, 7, 2, 3, 1, 16]);
  assert.deepEqual(
    templateSpace("conv2d-blocked", image).space.knobs.map((k) => k.name),
    ["yr", "xr", "unroll_kw", "parallel", "flat", "predictive_commoning"],
  );
  assert.throws(
    () => templateSpace("conv2d-blocked", conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1)),
    /not conv2d/,
  );
});

Deno.test("conv2d-blocked stores its tile straight into the blocked output and reads the caller's blocks", () => {
  const { source } = templateSource(
    "conv2d-blocked",
    [1, 32, 14, 14, 64, 1, 1, 2, 0, 16, 16],
    { yr: 1, xr: 6, parallel: "y", flat: 1 },
    "conv2d_nchwc",
  );
  const compute = source.split("void tb_compute(float **bufs) {")[1];
  // No copy of the input: the broadcasts read T_I, 32 floats (two blocked positions) apart per column.
  assert.doesNotMatch(compute, /T_I_global|T_P/);
  assert.match(compute, /T_O_local_v0 \+= \(T_I\[[^\]]*\* 32\)\) \+ v_O_local_rci_\d+\)\]/);
  // The accumulators go to the output as they are: one store per position, 16 floats apart.
  assert.match(compute, /tb_storeu\(&T_O\[[^\]]*\+ 16\)\], T_O_local_v1\);/);
  assert.doesNotMatch(compute, /tb_transpose/);
});

Deno.test("conv2d-blocked with oc_blocks shares a step's broadcast between blocks; its register rule counts every block", () => {
  const { source } = templateSource(
    "conv2d-blocked",
    [1, 32, 14, 14, 64, 1, 1, 2, 0, 16, 16],
    { yr: 1, xr: 6, parallel: "y", flat: 1, oc_blocks: 2 },
    "conv2d_nchwc",
  );
  const compute = source.split("void tb_compute(float **bufs) {")[1];
  // 6 positions x 2 blocks = 12 accumulators; the tile loop steps over pairs of blocks.
  assert.match(compute, /tb_v16 T_O_local_v0, [^;]*T_O_local_v11;/);
  assert.doesNotMatch(compute, /T_O_local_v12/);
  assert.match(compute, /for \(int v_O_fo_0 = 0; v_O_fo_0 < 2; \+\+v_O_fo_0\)/);
  // The accumulators are [block][position]; the updates go position by position, both blocks in
  // turn (v0, v6, v1, v7, ...), so one broadcast of an input float serves two filter vectors.
  const order = [...compute.matchAll(/T_O_local_v(\d+) \+= /g)].slice(0, 4).map((m) => m[1]);
  assert.deepEqual(order, ["0", "6", "1", "7"]);
  // The register rule counts both blocks: 2 x 14 accumulators + 2 filter vectors + 1 fit AVX-512's
  // 32 registers, 2 x 16 do not.
  const validIn = (shape: number[]) => {
    const w = createWorkload("conv2d_nchwc", shape);
    const { space } = templateSpace("conv2d-blocked", w, { lanes: 16, registers: 32 });
    return (values: Record<string, unknown>) =>
      space.isValid(space.knobs.map((k) => k.options.indexOf(values[k.name] ?? k.options[0])));
  };
  const valid = validIn([1, 32, 28, 28, 64, 3, 3, 1, 1, 16, 16]);
  assert.equal(valid({ xr: 14, oc_blocks: 2 }), true);
  assert.equal(valid({ xr: 16, oc_blocks: 2 }), false);
  assert.equal(valid({ xr: 16, oc_blocks: 1 }), true);
  assert.equal(valid({ xr: 6, oc_blocks: 4 }), true);
  assert.equal(valid({ xr: 7, oc_blocks: 4 }), false);
  // A block of 8 is a vector of its own where vectors hold 16: 3 blocks x 8 positions + 3 + 1 fit,
  // 3 x 14 do not.
  const valid8 = validIn([1, 16, 28, 28, 24, 1, 1, 1, 0, 16, 8]);
  assert.equal(valid8({ flat: 1, xr: 8, oc_blocks: 3 }), true);
  assert.equal(valid8({ flat: 1, xr: 14, oc_blocks: 3 }), false);
  assert.equal(valid8({ flat: 1, xr: 14, oc_blocks: 1 }), true);
});

for (
  const [shape, point] of [
    [[1, 32, 9, 9, 32, 3, 3, 1, 1, 16, 16], {
      yr: 1,
      xr: 6,
      parallel: "fy",
      flat: 1,
      pad_parallel: 1,
    }],
    [[1, 32, 9, 9, 32, 3, 3, 1, 1, 16, 16], { yr: 2, xr: 3, parallel: "y", pad_parallel: 0 }],
    [[1, 16, 14, 14, 32, 1, 1, 2, 0, 8, 16], { yr: 1, xr: 6, parallel: "y", flat: 1 }],
    [[1, 3, 17, 17, 16, 7, 7, 2, 3, 3, 16], { yr: 1, xr: 4, parallel: "f", unroll_kw: 1 }],
    [[1, 3, 19, 21, 32, 7, 7, 2, 3, 1, 16], { yr: 1, xr: 4, parallel: "fy" }],
    [[1, 3, 19, 21, 32, 7, 7, 2, 3, 1, 16], {
      yr: 1,
      xr: 6,
      parallel: "y",
      predictive_commoning: 0,
    }],
    [[1, 16, 7, 7, 16, 3, 3, 1, 1, 16, 8], { yr: 1, xr: 6, parallel: "fy", flat: 1 }],
    [[1, 32, 9, 9, 64, 3, 3, 2, 1, 16, 16], {
      yr: 1,
      xr: 3,
      parallel: "y",
      pad_parallel: 1,
      oc_blocks: 2,
    }],
    [[1, 32, 9, 9, 64, 3, 3, 1, 1, 16, 16], { yr: 2, xr: 3, parallel: "f", oc_blocks: 2 }],
    [[1, 16, 14, 14, 64, 1, 1, 2, 0, 16, 16], {
      yr: 1,
      xr: 6,
      parallel: "fy",
      flat: 1,
      oc_blocks: 4,
    }],
    [[1, 16, 7, 7, 32, 3, 3, 1, 1, 16, 8], { yr: 1, xr: 4, parallel: "y", oc_blocks: 4 }],
    [[1, 16, 9, 9, 24, 1, 1, 1, 0, 16, 8], { yr: 1, xr: 7, parallel: "f", flat: 1, oc_blocks: 3 }],
    // The padding read in place: a tile covering the row, partial tiles, flat positions.
    [[1, 32, 9, 9, 64, 3, 3, 2, 1, 16, 16], {
      yr: 1,
      xr: 6,
      parallel: "y",
      pad_parallel: 1,
      oc_blocks: 2,
      pad_at: "inline",
      unroll_kw: 1,
    }],
    [[1, 32, 9, 9, 32, 3, 3, 1, 1, 16, 16], {
      yr: 2,
      xr: 3,
      parallel: "f",
      pad_parallel: 1,
      pad_at: "inline",
    }],
    [[1, 16, 7, 7, 16, 3, 3, 1, 1, 16, 8], {
      yr: 1,
      xr: 6,
      parallel: "fy",
      flat: 1,
      pad_parallel: 1,
      pad_at: "inline",
    }],
  ] as const
) {
  Deno.test(`conv2d-blocked ${JSON.stringify(point)} computes the naive output of ${shape}`, async () => {
    await checkBothTargets(templateSource("conv2d-blocked", [...shape], point, "conv2d_nchwc"));
  });
}

Deno.test("conv2d-blocked with pad_at inline reads a padded input in place, its padded taps skipped", () => {
  const shape = [1, 32, 9, 9, 64, 3, 3, 2, 1, 16, 16];
  const w = createWorkload("conv2d_nchwc", shape);
  const space = templateSpace("conv2d-blocked", w).space;
  assert.deepEqual(space.knobs.at(-1), {
    name: "pad_at",
    kind: "annotate",
    options: ["root", "inline"],
  });
  const point = { yr: 1, xr: 6, parallel: "y", pad_parallel: 1, oc_blocks: 2, unroll_kw: 1 };
  const copy = templateSource("conv2d-blocked", shape, point, "conv2d_nchwc").source;
  const inline =
    templateSource("conv2d-blocked", shape, { ...point, pad_at: "inline" }, "conv2d_nchwc")
      .source.split("void tb_compute(float **bufs) {")[1];
  assert.match(copy, /T_P\[/);
  assert.doesNotMatch(inline, /T_P/);
  // Each row of taps is tested once per tile, not per broadcast; no select per lane.
  assert.match(inline, /if \(\(\(\(\(\(m_O_local_2 \+ 0\) \* 2\) \+ v_O_local_ry\) >= 1\) && /);
  assert.doesNotMatch(inline, / \? T_I\[/);
  // Without the copy, `pad_parallel` has no meaning: only its option 1 is in the space.
  const valid = (v: Record<string, unknown>) =>
    space.isValid(
      pointOfValues(space.knobs, withDefaults(space.knobs, v))!,
    );
  assert.equal(valid({ ...point, oc_blocks: 1, pad_at: "inline" }), true);
  assert.equal(valid({ ...point, oc_blocks: 1, pad_parallel: 0, pad_at: "inline" }), false);
});

/** conv2d-blocked's heuristic tile on a register file: rows x columns x blocks, parallel loop, pad_at. */
function heuristicTile(shape: number[], target: { lanes: 8 | 16; registers: number }) {
  const t = templateSpace("conv2d-blocked", createWorkload("conv2d_nchwc", shape), target);
  const c = t.heuristic?.();
  const v = c && t.space.values(c.knobs!);
  return v && `${v.yr}x${v.xr}x${v.oc_blocks} ${v.parallel} ${v.pad_at ?? "-"}`;
}

Deno.test("conv2d-blocked's heuristic point: the padding in place, a row tile of 2 blocks, half a row of 2, or a row of 1 where it fits (unpadded too), as many rows as fit, else 14 x 2", () => {
  const rule = (shape: number[]) => heuristicTile(shape, { lanes: 16, registers: 32 });
  // ResNet-18's 3x3 layers: 56-wide rows (no tile covers them), 28 (half a row of 2 blocks
  // before a row of 1), 14 and 7 (two rows fit).
  assert.equal(rule([1, 64, 56, 56, 64, 3, 3, 1, 1, 16, 16]), "1x14x2 y inline");
  assert.equal(rule([1, 64, 56, 56, 128, 3, 3, 2, 1, 16, 16]), "1x14x2 f inline");
  assert.equal(rule([1, 128, 28, 28, 128, 3, 3, 1, 1, 16, 16]), "1x14x2 f inline");
  assert.equal(rule([1, 256, 14, 14, 256, 3, 3, 1, 1, 16, 16]), "1x14x2 f inline");
  assert.equal(rule([1, 256, 14, 14, 512, 3, 3, 2, 1, 16, 16]), "2x7x2 f inline");
  assert.equal(rule([1, 512, 7, 7, 512, 3, 3, 1, 1, 16, 16]), "2x7x2 f inline");
  // SqueezeNet's 13-wide rows: a tile of 14 covers them.
  assert.equal(rule([1, 48, 13, 13, 192, 3, 3, 1, 1, 16, 16]), "1x14x2 f inline");
  // Three blocks of output channels (2 does not divide them) on 7-wide rows: four rows of one fit.
  assert.equal(rule([1, 16, 7, 7, 48, 3, 3, 1, 1, 16, 16]), "4x7x1 y inline");
  // Unpadded (ResNet-18's 1x1/2 projections): the same rule without the padding.
  assert.equal(rule([1, 64, 56, 56, 128, 1, 1, 2, 0, 16, 16]), "1x14x2 f -");
  assert.equal(rule([1, 128, 28, 28, 256, 1, 1, 2, 0, 16, 16]), "1x14x2 f -");
  assert.equal(rule([1, 256, 14, 14, 512, 1, 1, 2, 0, 16, 16]), "2x7x2 f -");
  // No rule for NCHW images.
  assert.equal(rule([1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 16]), undefined);
});

Deno.test("conv2d-blocked's heuristic point with AVX2's 16 registers: a row of 1 block where it fits, else the most columns of 1 block (of 2 for a 1x1 kernel)", () => {
  const avx2 = { lanes: 8 as const, registers: 16 };
  const rule = (shape: number[]) => heuristicTile(shape, avx2);
  // A block of 16 is two vectors of 8: 14 x 2 blocks (56 accumulators) no longer fits, nor a
  // 7-wide row of 2 blocks (28); 7 columns of 1 block (14) do, and 3 of 2 blocks (12).
  assert.equal(rule([1, 64, 56, 56, 64, 3, 3, 1, 1, 16, 16]), "1x7x1 f inline");
  assert.equal(rule([1, 128, 28, 28, 256, 3, 3, 2, 1, 16, 16]), "1x7x1 f inline");
  assert.equal(rule([1, 512, 7, 7, 512, 3, 3, 1, 1, 16, 16]), "1x7x1 f inline");
  // 1x1 kernels: 2 blocks a broadcast, unless a row of 1 block fits.
  assert.equal(rule([1, 64, 56, 56, 128, 1, 1, 2, 0, 16, 16]), "1x3x2 f -");
  assert.equal(rule([1, 128, 28, 28, 256, 1, 1, 2, 0, 16, 16]), "1x3x2 f -");
  assert.equal(rule([1, 256, 14, 14, 512, 1, 1, 2, 0, 16, 16]), "1x7x1 f -");
  // Three blocks (2 does not divide them), in parallel over rows.
  assert.equal(rule([1, 16, 7, 7, 48, 3, 3, 1, 1, 16, 16]), "1x7x1 y inline");
  assert.equal(rule([1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 16]), undefined);
  // Every tile it picks fits: its accumulators and a broadcast in 16 registers.
  for (const width of [5, 9, 13, 28, 112]) {
    const w = createWorkload("conv2d_nchwc", [1, 32, width, width, 64, 3, 3, 1, 1, 16, 16]);
    const t = templateSpace("conv2d-blocked", w, avx2);
    const c = t.heuristic?.();
    assert.ok(c?.knobs && t.space.isValid(c.knobs), `width ${width}`);
  }
});

for (
  const shape of [
    [1, 32, 9, 9, 64, 3, 3, 1, 1, 16, 16],
    [1, 16, 15, 15, 128, 3, 3, 2, 1, 16, 16],
    [1, 32, 7, 7, 64, 3, 3, 1, 1, 16, 16],
    [1, 32, 28, 28, 64, 1, 1, 2, 0, 16, 16],
  ]
) {
  Deno.test(`conv2d-blocked's heuristic points (AVX-512's and AVX2's) compute the naive output of ${shape}`, async () => {
    for (
      const target of [{ lanes: 16 as const, registers: 32 }, { lanes: 8 as const, registers: 16 }]
    ) {
      const t = templateSpace("conv2d-blocked", createWorkload("conv2d_nchwc", shape), target);
      const rule = t.heuristic?.();
      assert.ok(rule?.knobs, `no heuristic point for ${shape}`);
      const values = t.space.values(rule.knobs);
      await checkBothTargets(templateSource("conv2d-blocked", shape, values, "conv2d_nchwc"));
    }
  });
}

Deno.test("conv2d-blocked copies an NCHW input (a block of 1) along its rows, a vector of 16 columns", () => {
  const { source } = templateSource(
    "conv2d-blocked",
    [1, 3, 20, 20, 16, 7, 7, 2, 3, 1, 16],
    { yr: 1, xr: 4, parallel: "fy" },
    "conv2d_nchwc",
  );
  const copy =
    source.split("void tb_compute(float **bufs) {")[1].split("#pragma omp parallel for")[1];
  // In parallel over its 3 x 26 rows, not its 3 channels (uneven on two threads).
  assert.match(copy, /^ schedule\(static\)\n\s*for \(int v_P_c_y_fused = 0; v_P_c_y_fused < 78; /);
  assert.match(copy, /for \(int v_P_x_0 = 0; v_P_x_0 < 2; \+\+v_P_x_0\)/); // 26 padded columns
  assert.match(copy, /tb_storeu\(&T_P\[/);
  assert.doesNotMatch(source, /optimize/);
  const off = templateSource(
    "conv2d-blocked",
    [1, 3, 20, 20, 16, 7, 7, 2, 3, 1, 16],
    { yr: 1, xr: 6, parallel: "y", predictive_commoning: 0 },
    "conv2d_nchwc",
  ).source;
  assert.match(off, /__attribute__\(\(optimize\("no-predictive-commoning"\)\)\) void tb_compute/);
});
