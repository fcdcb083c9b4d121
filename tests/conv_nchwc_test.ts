/**
 * The `conv2d-nchwc` template: a register tile of output channels in vectors
 * (filters packed `[F/FR][C][KH][KW][FR]`, the tile stored channel-innermost)
 * computes the naive output on odd shapes (channels that do not fill the
 * last block, columns and rows that do not fill the tile, strides, 1x1),
 * with and without AVX-512; the filters' layout rewrite runs outside the
 * timed part (`tb_layout`), the tile stays in vector variables.
 */
import assert from "node:assert/strict";
import { checkBothTargets, templateSource } from "./_conv_check.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { createWorkload } from "../ir/workloads.ts";
import { compileSchedules } from "../network/native.ts";

const POINT = { fr: 16, yr: 2, xr: 7, order: 0, unroll_kw: 1, parallel: "fy", pad_parallel: 1 };

Deno.test("conv2d-nchwc keeps its tile in vector variables and rewrites the filters once", () => {
  const { source } = templateSource("conv2d-nchwc", [1, 8, 14, 14, 32, 3, 3, 1, 1], POINT);
  const [layout, compute] = source.split("void tb_compute(float **bufs) {");
  // The filters' rewrite into panels is in tb_layout only; tb_kernel runs both parts.
  assert.match(layout, /void tb_layout\(float \*\*bufs\) \{[^]*T_Wt_global\[[^\]]*\] = T_Wt\[/);
  assert.doesNotMatch(compute, /= T_Wt\[/);
  assert.match(
    compute,
    /void tb_kernel\(float \*\*bufs\) \{\n {2}tb_layout\(bufs\);\n {2}tb_compute\(bufs\);/,
  );
  assert.match(source, /^#define TB_LAYOUT_REWRITE 1/);
  // The padding copy moves rows in 16-wide vectors, masked at the edges.
  assert.match(compute, /tb_storeu\(&T_P\[[^;]*tb_loadu\(&T_I\[/);
  assert.match(compute, /tb_storeu_m\(&T_P\[/);
  // 2 rows x 7 columns of 16-channel vectors: the tile lives in 14 vector variables.
  assert.match(compute, /T_O_local_v13 \+= \(T_P\[[^;]*\* tb_loadu\(&T_Wt_global\[/);
  assert.doesNotMatch(compute, /T_O_local_v14\b|float T_O_local\[/);
  // Copied out per row: 7 channel vectors transposed in registers, 16 stores of 7 columns (a
  // first-n-lanes mask: plain stores on AVX2, see PREFIX_STORE in ir/codegen_c.ts).
  assert.equal(compute.match(/tb_transpose16\(tb_t\);/g)?.length, 2);
  assert.equal(compute.match(/tb_storeu_m\(&T_O\[[^;]*, tb_t\[\d+\], 127u\);/g)?.length, 32);
});

Deno.test("conv2d-nchwc's tiles fit the vector registers of AVX-512 and of AVX2", () => {
  const w = createWorkload("conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]);
  const avx512 = templateSpace("conv2d-nchwc", w, { lanes: 16, registers: 32 });
  const avx2 = templateSpace("conv2d-nchwc", w, { lanes: 8, registers: 16 });
  const at = (values: Record<string, unknown>) =>
    avx512.space.knobs.map((k) => k.options.indexOf(values[k.name] ?? k.options[0]));
  let valid512 = 0, valid2 = 0;
  for (let i = 0; i < avx512.space.size; i++) {
    const p = avx512.space.point(i);
    const v = avx512.space.values(p);
    const positions = (v.yr as number) * (v.xr as number);
    if (avx512.space.isValid(p)) {
      valid512++;
      // Accumulators, a step's filter vectors and one broadcast.
      const vectors = (v.fr as number) / 16;
      assert.ok(vectors * positions + vectors + 1 <= 32);
    }
    if (avx2.space.isValid(p)) {
      valid2++;
      // Accumulators and one broadcast (filter vectors may be FMA memory operands).
      assert.ok(((v.fr as number) / 8) * positions + 1 <= 16);
    }
  }
  // 64 channels by 7 columns (28 accumulators and 4 filter vectors) spills on AVX-512.
  assert.equal(avx512.space.isValid(at({ fr: 64, yr: 1, xr: 7 })), false);
  assert.equal(avx512.space.isValid(at({ fr: 32, yr: 1, xr: 7 })), true);
  // AVX2: 16 channels by 7 columns is 14 accumulators; by 4 rows and 2 columns, 16.
  assert.equal(avx2.space.isValid(at({ fr: 16, yr: 1, xr: 7 })), true);
  assert.equal(avx2.space.isValid(at({ fr: 16, yr: 4, xr: 2 })), false);
  assert.ok(valid512 > 100 && valid2 > 100 && valid2 < valid512, `${valid512} / ${valid2}`);
  // Columns past a 7-wide output are not computed: a 28-column tile holds 7.
  const small = templateSpace(
    "conv2d-nchwc",
    createWorkload("conv2d", [1, 512, 7, 7, 512, 3, 3, 1, 1]),
    {
      lanes: 8,
      registers: 16,
    },
  );
  assert.equal(small.space.isValid(at({ fr: 16, yr: 1, xr: 28 })), true);
  assert.equal(small.space.isValid(at({ fr: 16, yr: 2, xr: 28 })), false);
});

for (
  const [name, shape, point] of [
    // 20 filters: a full 16-channel block, then 4 channels of a masked block;
    // 13 columns by 9 rows: tiles of 7 columns and 2 rows with edges.
    ["channel and column edges", [1, 5, 9, 13, 20, 3, 3, 1, 1], POINT],
    ["two vectors of channels, rows of 4", [1, 6, 11, 10, 40, 3, 3, 1, 1], {
      ...POINT,
      fr: 32,
      yr: 4,
      xr: 2,
      order: 1,
      parallel: "f",
    }],
    ["stride 2, 7x7 filters", [1, 3, 30, 30, 16, 7, 7, 2, 3], { ...POINT, xr: 8, yr: 1 }],
    ["1x1 stride 2", [1, 24, 14, 14, 48, 1, 1, 2, 0], { ...POINT, fr: 48, xr: 7, yr: 1 }],
  ] as const
) {
  Deno.test(`conv2d-nchwc with ${name} computes the naive output with and without AVX-512`, async () => {
    await checkBothTargets(templateSource("conv2d-nchwc", [...shape], point));
  });
}

Deno.test("conv2d-nchwc skips the filter taps that read the padding, as oneDNN's kernels do", async () => {
  // 7x7 input, 3x3 filters, padding 1: one tile covers a row (xr 7). Every
  // filter's top-left tap is Infinity: where it meets the zero padding
  // (the first row and column of outputs) a kernel that computed 0 * Infinity
  // would write NaN; skipping those taps leaves the sum of the others.
  const { schedule, source, naive } = templateSource(
    "conv2d-nchwc",
    [1, 16, 7, 7, 16, 3, 3, 1, 1],
    {
      ...POINT,
      yr: 1,
      xr: 7,
    },
  );
  // Rows of taps outside the input are skipped per reduction step, columns per unrolled tap.
  assert.match(source, /if \(\(\(\(\(m_O_local_\d+ \+ 0\) \+ v_O_local_ry\) >= 1\)/);
  assert.match(source, /if \(\(\(\(\(m_O_local_\d+ \+ v_O_local_x\) \+ v_O_local_rx\) >= 1\)/);
  // A naive nest (the default schedule) has no such branch per multiply-add.
  assert.doesNotMatch(naive, /v_O_ry\) >= 1/);
  assert.match(naive, /T_P\[/);
  const [kernel] = await compileSchedules([schedule]);
  try {
    const input = new Float32Array(16 * 49).fill(1);
    const filters = new Float32Array(16 * 16 * 9).fill(1);
    for (let i = 0; i < filters.length; i += 9) filters[i] = Infinity;
    const out = new Float32Array(16 * 49).fill(-1);
    kernel.run([input, filters, out]);
    for (let f = 0; f < 16; f++) {
      for (let y = 0; y < 7; y++) {
        for (let x = 0; x < 7; x++) {
          const got = out[(f * 7 + y) * 7 + x];
          if (y > 0 && x > 0) assert.equal(got, Infinity, `(${f}, ${y}, ${x})`);
          else {
            // Taps inside the input: 16 channels of each in-bounds (ky, kx) but the top-left.
            const rows = y === 0 || y === 6 ? 2 : 3, cols = x === 0 || x === 6 ? 2 : 3;
            assert.equal(got, 16 * rows * cols, `(${f}, ${y}, ${x})`);
          }
        }
      }
    }
  } finally {
    kernel.close();
  }
});
