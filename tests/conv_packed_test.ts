/**
 * The `conv2d-packed` template's edge tiles: columns that do not fill the
 * register tile run masked vector code (AVX-512 masked loads and stores) and
 * stay in vector variables; a stride-2 convolution reads its input rows as
 * two vector loads and a permute, or, with the padded input stored in phases
 * (`deinterleave`), as plain vector loads. Built for a target without AVX-512, the
 * portable lane loops of the same source compute the same output.
 */
import assert from "node:assert/strict";
import { checkBothTargets, type TemplateSource, templateSource } from "./_conv_check.ts";

/** 37 output columns: one full 32-column tile, then 5 columns of a masked edge tile. */
const SHAPE = [1, 5, 9, 37, 13, 3, 3, 1, 1];
/** ResNet's first layer, smaller: 7x7 stride 2, 20 output columns (16 full, 4 masked). */
const STRIDED = [1, 3, 40, 40, 8, 7, 7, 2, 3];
const POINT = {
  fr: 6,
  yr: 2,
  xr: 32,
  pack: "W",
  order: 0,
  unroll_kw: 1,
  parallel: "f",
  prefetch: 2,
  pad_parallel: 1,
};

function packedSource(
  shape = SHAPE,
  values: Record<string, unknown> = POINT,
): TemplateSource {
  return templateSource("conv2d-packed", shape, values);
}

Deno.test("conv2d-packed edge tiles stay in vector variables with masked loads", () => {
  const { source } = packedSource();
  // Both copies of the nest (full and edge tiles) keep 6 x 2 x 2 accumulators in vectors.
  assert.equal(source.match(/tb_v16 T_O_local_v0, [^;]*T_O_local_v23;/g)?.length, 2);
  assert.doesNotMatch(source, /float T_O_local\[/);
  // The edge tile reads the padded input through masks and stores only its 5 columns.
  assert.match(source, /T_O_local_v\d+ \+= [^;]*tb_loadu_m\(&T_P\[/);
  assert.match(source, /tb_storeu_m\(&T_O\[/);
  assert.match(source, /tb_lanes_lt\(/);
  // The padding copy (pad_parallel) runs in vectors too, zeros and edges masked.
  assert.match(source, /tb_storeu_m\(&T_P\[[^;]*tb_maskz\(tb_loadu_m\(&T_I\[/);
});

Deno.test("conv2d-packed prefetches the input rows two channels ahead", () => {
  const { source } = packedSource();
  // Padded input 11 x 39 per channel: two channels ahead is +858 floats. A tile of 2 rows of 32
  // columns with a 3x3 kernel reads rows 39 apart: 39 * 3 + 33 = 150 floats, 10 cache lines.
  const lines = source.split("\n").filter((l) => l.includes("__builtin_prefetch"));
  assert.equal(lines.length, 2, "in the full and the edge copy of the reduction loop");
  for (const l of lines) {
    assert.match(l, /const float \*tb_pf = &T_P\[.*v_O_local_rc(_2)? \* 429\).* \+ 858\)\]/);
    assert.equal(l.match(/__builtin_prefetch\(/g)?.length, 10);
  }
  const { source: none } = packedSource(SHAPE, { ...POINT, prefetch: 0 });
  assert.doesNotMatch(none, /__builtin_prefetch/);
});

Deno.test("a tile under the fused parallel loop (f / rows) stays in vector variables", () => {
  const { source } = packedSource(SHAPE, { ...POINT, parallel: "fy" });
  assert.match(source, /_fused = 0;/);
  assert.doesNotMatch(source, /float T_O_local\[/);
  // Filters packed once per call: the tile reads its 6-filter panel without dividing.
  const tile = source.split("\n").filter((l) => /T_O_local_v\d+ \+=/.test(l));
  assert.ok(tile.length > 0 && tile.every((l) => l.includes("T_Wt_global[")));
  assert.ok(tile.every((l) => !/[/%] 6\)/.test(l)), tile[0]);
});

Deno.test("a stride-2 convolution's tile reads its input with stride-2 vector loads", () => {
  const { source } = packedSource(STRIDED, { ...POINT, fr: 8, yr: 1, xr: 16 });
  assert.match(source, /T_O_local_v\d+ \+= \(tb_loadu_s2\(&T_P\[/);
  assert.match(source, /tb_loadu_s2_m\(&T_P\[/);
  assert.doesNotMatch(source, /float T_O_local\[/);
});

Deno.test("with its padded input in phases a stride-2 tile reads plain vector loads", () => {
  const { source } = packedSource(STRIDED, { ...POINT, fr: 8, yr: 1, xr: 16, phases: 1 });
  // P[c][y][x % 2][x / 2]: the tile's loads are contiguous, the copy writes each phase.
  assert.match(source, /T_O_local_v\d+ \+= \(tb_loadu\(&T_P\[/);
  assert.doesNotMatch(source, /tb_loadu_s2(_m)?\(&T_P\[/);
  assert.match(source, /tb_storeu\(&T_P\[.*tb_loadu_s2\(&T_I\[/);
  // The copy's edge chunk is masked: lanes bounded through 2 * lane.
  assert.match(source, /tb_storeu_m\(&T_P\[/);
});

Deno.test("vector kernels use the compiler's masked-move builtins, not immintrin.h", () => {
  const { source } = packedSource(STRIDED, { ...POINT, fr: 8, yr: 1, xr: 16 });
  // immintrin.h alone costs gcc about 0.25 s per compile: most of a small kernel's build.
  assert.doesNotMatch(source, /#include <immintrin\.h>/);
  assert.match(source, /__builtin_ia32_loadups512_mask/);
  assert.match(source, /__builtin_shufflevector/);
});

for (
  const [name, shape, point] of [
    ["masked edges", SHAPE, POINT],
    ["stride-2 loads", STRIDED, { ...POINT, fr: 8, yr: 1, xr: 16 }],
    ["input phases", STRIDED, { ...POINT, fr: 8, yr: 1, xr: 32, phases: 1 }],
  ] as const
) {
  Deno.test(`${name} compute the naive output with and without AVX-512`, async () => {
    await checkBothTargets(packedSource([...shape], point));
  });
}
