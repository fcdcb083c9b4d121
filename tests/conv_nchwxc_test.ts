/**
 * The `conv2d-nchwxc` template: `conv2d-nchwc`'s register tile reading a copy
 * of its input blocked by `ic_bn` channels (`[C/CB][H][W][CB]`, the padding
 * copy or, unpadded, a copy at the root), the block innermost in the
 * reduction; `ic_bn` 0 reads the NCHW input. Each point computes the naive
 * output on odd shapes, with and without AVX-512, 16 and 8 lanes.
 */
import assert from "node:assert/strict";
import { checkBothTargets, templateSource } from "./_conv_check.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { createWorkload } from "../ir/workloads.ts";
import { generateC } from "../ir/codegen_c.ts";
import { lower } from "../ir/lower.ts";

const POINT = {
  fr: 16,
  yr: 1,
  xr: 6,
  ic_bn: 8,
  unroll_kw: 0,
  parallel: "fy",
  pad_parallel: 1,
};

Deno.test("conv2d-nchwxc's channel blocks divide the input channels, or are all of them", () => {
  const blocks = (c: number) => {
    const t = templateSpace(
      "conv2d-nchwxc",
      createWorkload("conv2d", [1, c, 8, 8, 16, 3, 3, 1, 1]),
    );
    return t.space.knobs.find((k) => k.name === "ic_bn")!.options;
  };
  assert.deepEqual(blocks(64), [0, 4, 8, 16]);
  assert.deepEqual(blocks(20), [0, 4]);
  assert.deepEqual(blocks(8), [0, 4]);
  assert.deepEqual(blocks(3), [0, 3]);
  // An unpadded convolution has no padding copy, so no knob for its parallel loop.
  const unpadded = templateSpace(
    "conv2d-nchwxc",
    createWorkload("conv2d", [1, 8, 8, 8, 16, 1, 1, 2, 0]),
  );
  assert.ok(!unpadded.space.knobs.some((k) => k.name === "pad_parallel"));
});

Deno.test("conv2d-nchwxc writes the padded input in channel blocks and reads a block's channels in order", () => {
  const { source } = templateSource("conv2d-nchwxc", [1, 16, 9, 9, 32, 3, 3, 1, 1], POINT);
  const compute = source.split("void tb_compute(float **bufs) {")[1];
  // The padding copy: 2 blocks of 8 channels of 11 x 11 padded positions, a block's channels innermost.
  assert.match(
    compute,
    /T_P\[\(\(\(\(v_P_c_0 \* 968\) \+ \(v_P_y \* 88\)\) \+ \(v_P_x \* 8\)\) \+ v_P_c_1\)\] =/,
  );
  // The tile's broadcasts: the channel within the block is the innermost index.
  assert.match(
    compute,
    /T_O_local_v0 \+= \(T_P\[[^\]]*\+ v_O_local_rc_1(_\d+)?\)\] \* tb_loadu\(&T_Wt_global\[/,
  );
  // The filters, rewritten once: [C/8][F/16][3][3][8][16].
  assert.match(
    source,
    /\(v_Wt_global_ax1 \/ 8\) \* 2304\) \+ \(\(v_Wt_global_ax0 \/ 16\) \* 1152\)[^=]*\(\(v_Wt_global_ax1 % 8\) \* 16\)\) \+ \(v_Wt_global_ax0 % 16\)\)\] = T_Wt\[/,
  );
});

Deno.test("conv2d-nchwxc's padding copy is written as register transposes when a block fills vectors", () => {
  const { schedule } = templateSource("conv2d-nchwxc", [1, 32, 9, 21, 16, 3, 3, 1, 1], {
    ...POINT,
    ic_bn: 16,
  });
  for (const lanes of [8, 16] as const) {
    const copy = generateC(lower(schedule), { lanes }).split("void tb_compute(float **bufs) {")[1]
      .split("#pragma omp parallel for")[1];
    // 23 padded columns: blocks of `lanes` along x, then a masked tail of 23 % lanes.
    assert.match(
      copy,
      new RegExp(`for \\(int v_P_x = 0; v_P_x < ${23 - (23 % lanes)}; v_P_x \\+= ${lanes}\\)`),
    );
    assert.match(copy, new RegExp(`const int v_P_x = ${23 - (23 % lanes)};`));
    assert.match(copy, new RegExp(`tb_transpose${lanes}\\(tb_t\\);`));
    // The rows read along x, masked where padding or the tail cuts lanes.
    assert.match(copy, /tb_t\[1\] = tb_loadu_m\(&T_I\[/);
    assert.match(copy, /tb_storeu\(&T_P\[/);
    assert.doesNotMatch(copy, /T_P\[[^\]]*\] =/);
  }
});

Deno.test("conv2d-nchwxc's edge tiles are copied out by register transposes, their columns masked", () => {
  // 13 columns in tiles of 6: the third tile holds one column; its guard is per column.
  const { schedule } = templateSource("conv2d-nchwxc", [1, 16, 9, 13, 16, 3, 3, 1, 1], POINT);
  for (const lanes of [8, 16] as const) {
    const compute =
      generateC(lower(schedule), { lanes }).split("void tb_compute(float **bufs) {")[1];
    const guard = compute.match(/const unsigned tb_g = ([^;]*);/);
    assert.ok(guard, "a mask of the guarded columns");
    assert.equal(guard[1].split(" | ").length, 6);
    assert.match(compute, /tb_t\[5\] = \(tb_g >> 5 & 1u\) \? /);
    assert.match(
      compute,
      new RegExp(`tb_storeu_m\\(&T_O\\[[^\\]]*\\], tb_t\\[${lanes - 1}\\], tb_g\\);`),
    );
    // No column is stored by the scalar copy any more.
    assert.doesNotMatch(compute, /\bT_O\[[^\]]*\] =/);
  }
});

Deno.test("conv2d-nchwxc's parallel \"y\" runs rows in parallel and the channel blocks inside a tile's columns", () => {
  const { source } = templateSource("conv2d-nchwxc", [1, 24, 14, 14, 48, 1, 1, 2, 0], {
    ...POINT,
    ic_bn: 0,
    xr: 7,
    parallel: "y",
  });
  assert.match(
    source,
    /#pragma omp parallel for[^\n]*\n\s*for \(int v_O_n_y_0_fused = 0; v_O_n_y_0_fused < 7;[^\n]*\n\s*\{\n\s*const int v_O_x_0 = 0;\n\s*for \(int v_O_f_0 = 0; v_O_f_0 < 3;/,
  );
});

Deno.test("conv2d-nchwxc's flat positions tile rows and columns as one axis, one row of tiles", () => {
  const t = templateSpace(
    "conv2d-nchwxc",
    createWorkload("conv2d", [1, 24, 14, 14, 48, 1, 1, 2, 0]),
  );
  assert.deepEqual(t.space.knobs.at(-1), { name: "flat", kind: "other", options: [0, 1] });
  // Flat positions have no rows of tiles: yr is 1.
  const v = { fr: 16, yr: 2, xr: 6, ic_bn: 0, unroll_kw: 0, parallel: "y", flat: 1 };
  assert.equal(
    t.space.isValid(t.space.knobs.map((k) => k.options.indexOf(v[k.name as "fr"]))),
    false,
  );
  const { source } = templateSource("conv2d-nchwxc", [1, 24, 14, 14, 48, 1, 1, 2, 0], {
    ...v,
    yr: 1,
  });
  // 49 positions in 9 tiles of 6 in parallel; the tile reads row (p / 7) * 2, column (p % 7) * 2.
  assert.match(source, /for \(int v_O_n_yx_0_fused = 0; v_O_n_yx_0_fused < 9;/);
  assert.match(source, /\/ 7\) \* 28\)/);
  assert.match(source, /% 7\) \* 2\)/);
});

Deno.test("conv2d-nchwxc copies an unpadded input into channel blocks at the root", () => {
  const { source } = templateSource("conv2d-nchwxc", [1, 24, 14, 14, 48, 1, 1, 2, 0], {
    ...POINT,
    xr: 7,
  });
  const compute = source.split("void tb_compute(float **bufs) {")[1];
  assert.match(compute, /#pragma omp parallel for[^\n]*\n\s*for \(int v_I_global_ax1_0 = 0;/);
  assert.match(compute, /T_I_global\[[^\]]*v_I_global_ax1_1\)\] = T_I\[/);
  assert.doesNotMatch(compute, /\bT_P\[/);
});

for (
  const [name, shape, point] of [
    // 20 filters: a full 16-channel block, then a masked one; 13 columns by 9 rows in tiles of 6.
    ["channel and column edges, blocks of 4", [1, 8, 9, 13, 20, 3, 3, 1, 1], {
      ...POINT,
      ic_bn: 4,
    }],
    ["two vectors of channels, 3 columns, 2 rows", [1, 16, 11, 10, 40, 3, 3, 1, 1], {
      ...POINT,
      fr: 32,
      yr: 2,
      xr: 3,
      unroll_kw: 1,
      parallel: "f",
      pad_parallel: 0,
    }],
    ["stride 2, 7x7 filters, 3 input channels in one block", [1, 3, 30, 30, 16, 7, 7, 2, 3], {
      ...POINT,
      ic_bn: 3,
      xr: 4,
    }],
    ["1x1 stride 2, an unpadded input copied", [1, 24, 14, 14, 48, 1, 1, 2, 0], {
      ...POINT,
      fr: 48,
      xr: 7,
    }],
    // 16-channel blocks: the padding copy transposed in 16 x 16 (AVX-512) and 8 x 8 blocks,
    // 23 padded columns a masked tail either way.
    ["blocks of 16, 21 columns", [1, 32, 9, 21, 16, 3, 3, 1, 1], { ...POINT, ic_bn: 16 }],
    // Rows in parallel, the output-channel blocks innermost of the output loops.
    ["rows in parallel, 1x1 stride 2", [1, 24, 14, 14, 48, 1, 1, 2, 0], {
      ...POINT,
      ic_bn: 0,
      xr: 7,
      parallel: "y",
    }],
    ["rows in parallel, channel edges", [1, 8, 9, 13, 20, 3, 3, 1, 1], {
      ...POINT,
      ic_bn: 4,
      parallel: "y",
    }],
    ["the NCHW input (ic_bn 0)", [1, 5, 9, 13, 20, 3, 3, 1, 1], { ...POINT, ic_bn: 0 }],
    // Flat positions: 7 x 7 outputs in tiles of 6 positions that span rows, one edge tile.
    ["flat positions, 1x1 stride 2, rows in parallel", [1, 24, 14, 14, 48, 1, 1, 2, 0], {
      ...POINT,
      ic_bn: 0,
      parallel: "y",
      flat: 1,
    }],
    ["flat positions, an unpadded input copied", [1, 24, 14, 14, 40, 1, 1, 2, 0], {
      ...POINT,
      flat: 1,
      parallel: "f",
    }],
    ["flat positions, padded 3x3, tiles in parallel", [1, 8, 9, 13, 20, 3, 3, 1, 1], {
      ...POINT,
      ic_bn: 4,
      xr: 4,
      flat: 1,
    }],
    ["flat positions, stride 2 7x7", [1, 3, 30, 30, 16, 7, 7, 2, 3], {
      ...POINT,
      ic_bn: 3,
      xr: 4,
      flat: 1,
      parallel: "y",
    }],
  ] as const
) {
  Deno.test(`conv2d-nchwxc with ${name} computes the naive output with and without AVX-512`, async () => {
    await checkBothTargets(templateSource("conv2d-nchwxc", [...shape], point));
  });
}
