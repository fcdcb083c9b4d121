import assert from "node:assert/strict";
import { alignedFloat32, BUFFER_ALIGN, guardedFloat32, pointerTable } from "./buffers.ts";

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

Deno.test("guardedFloat32 ends every buffer where an inaccessible page begins", () => {
  const g = guardedFloat32([1, 7, 1024, 5000, 0]);
  try {
    assert.equal(g.guarded, Deno.build.os === "linux");
    assert.deepEqual(g.buffers.map((b) => b.length), [1, 7, 1024, 5000, 0]);
    if (!g.guarded) return;
    for (const b of g.buffers.slice(0, 4)) {
      const end = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b))) + BigInt(b.byteLength);
      assert.equal(end % 4096n, 0n);
      b.fill(1); // every element is writable
    }
  } finally {
    g.release();
  }
  assert.throws(() => guardedFloat32([-1]), /bad buffer size/);
});

/** Exit signal of a child that reads element `index` of a guarded buffer of 7 floats. */
async function readGuarded(index: number): Promise<string | null> {
  const code = `import { guardedFloat32 } from ${
    JSON.stringify(import.meta.resolve("./buffers.ts"))
  };
    const b = guardedFloat32([7]).buffers[0];
    console.log(new Deno.UnsafePointerView(Deno.UnsafePointer.of(b)!).getFloat32(${index * 4}));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", code],
    stdout: "null",
    stderr: "null",
  }).output();
  return out.signal;
}

Deno.test({
  name: "a native read one float past a guarded buffer faults every time",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    assert.equal(await readGuarded(6), null);
    for (let i = 0; i < 3; i++) assert.equal(await readGuarded(7), "SIGSEGV");
  },
});
