import assert from "node:assert/strict";
import { alignedFloat32, BUFFER_ALIGN, pointerTable } from "./buffers.ts";

Deno.test("alignedFloat32 returns aligned buffers and pointerTable their addresses", () => {
  const buffers = [1, 7, 1000, 0].map(alignedFloat32);
  assert.deepEqual(buffers.map((b) => b.length), [1, 7, 1000, 0]);
  const table = pointerTable(buffers);
  for (const [i, b] of buffers.entries()) {
    const address = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b)));
    if (b.length > 0) assert.equal(table[i], address);
    if (b.length > 0) assert.equal(address % BigInt(BUFFER_ALIGN), 0n);
  }
  assert.throws(() => alignedFloat32(-1), /bad buffer size/);
});
