import assert from "node:assert/strict";
import { fromBlocked, layoutName, parseLayout, toBlocked } from "./layout.ts";

Deno.test("toBlocked puts a block's channels side by side and fromBlocked undoes it", () => {
  const shape = [2, 6, 2, 3];
  const x = Float32Array.from({ length: 72 }, (_, i) => i);
  const b = toBlocked(x, shape, 3);
  // Batch 1, block 1 (channels 3-5), row 1, column 2: channel 4 is at offset 1 of its block.
  const at = (n: number, c: number, y: number, xx: number) => ((n * 6 + c) * 2 + y) * 3 + xx;
  assert.equal(b[((((1 * 2 + 1) * 2 + 1) * 3 + 2) * 3) + 1], x[at(1, 4, 1, 2)]);
  assert.deepEqual(fromBlocked(b, shape, 3), x);
  // One-channel blocks and whole-tensor blocks are the NCHW and NHWC layouts.
  assert.deepEqual(toBlocked(x, shape, 1), x);
  assert.equal(toBlocked(x, [1, 6, 12, 1], 6)[1], x[12]);
});

Deno.test("a block that does not divide the channels is padded with zeros and dropped again", () => {
  const shape = [2, 6, 2, 2];
  const x = Float32Array.from({ length: 48 }, (_, i) => i + 1);
  const b = toBlocked(x, shape, 4); // 6 channels in 2 blocks of 4: channels 6 and 7 are padding
  assert.equal(b.length, 2 * 8 * 4);
  // Batch 0, block 1, position 0 holds channels 4, 5, then two zeros.
  assert.deepEqual([...b.subarray(16, 20)], [x[16], x[20], 0, 0]);
  assert.equal(b.filter((v) => v === 0).length, 2 * 2 * 4);
  assert.deepEqual(fromBlocked(b, shape, 4), x);
});

Deno.test("toBlocked and fromBlocked refuse a length that does not fill the shape", () => {
  assert.throws(
    () => toBlocked(new Float32Array(23), [1, 6, 2, 2], 4),
    /23 values do not fill 1x6x2x2/,
  );
  assert.throws(() => fromBlocked(new Float32Array(23), [1, 6, 2, 2], 3), /23 values do not fill/);
  assert.throws(
    () => fromBlocked(new Float32Array(24), [1, 6, 2, 2], 4),
    /24 values do not fill 1x8x2x2/,
  );
});

Deno.test("layouts are named NCHW or NCHW<b>c, any case; other names are refused", () => {
  assert.equal(parseLayout("NCHW"), 1);
  assert.equal(parseLayout("nchw16c"), 16);
  assert.equal(parseLayout("NCHW8c"), 8);
  for (const bad of ["NHWC", "NCHW0c", "NCHW16", "NCHW128c", ""]) {
    assert.throws(() => parseLayout(bad), /Unknown layout/, bad);
  }
  assert.equal(layoutName(1), "NCHW");
  assert.equal(layoutName(16), "NCHW16c");
});
