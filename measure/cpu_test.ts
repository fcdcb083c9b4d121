import assert from "node:assert/strict";
import { cpuFlags, laneOverride, LanesError, registerFile, vectorLanes } from "../ir/target_cpu.ts";

/** Runs `fn` with TUNEBOOK_LANES set to `value` (unset: undefined), restoring it after. */
function withLanes(value: string | undefined, fn: () => void): void {
  const before = Deno.env.get("TUNEBOOK_LANES");
  try {
    if (value === undefined) Deno.env.delete("TUNEBOOK_LANES");
    else Deno.env.set("TUNEBOOK_LANES", value);
    fn();
  } finally {
    if (before === undefined) Deno.env.delete("TUNEBOOK_LANES");
    else Deno.env.set("TUNEBOOK_LANES", before);
  }
}

Deno.test("TUNEBOOK_LANES sets this machine's vector width and register file; flags given are not overridden", () => {
  const machine = cpuFlags().has("avx512f") ? 16 : 8;
  withLanes(undefined, () => {
    assert.equal(laneOverride(), undefined);
    assert.equal(vectorLanes(), machine);
  });
  withLanes("8", () => {
    assert.equal(vectorLanes(), 8);
    assert.deepEqual(registerFile(), { lanes: 8, registers: 16 });
    assert.equal(vectorLanes(new Set(["avx512f"])), 16);
  });
  withLanes(" 16 ", () => {
    assert.equal(vectorLanes(), 16);
    assert.deepEqual(registerFile(), { lanes: 16, registers: 32 });
    assert.equal(vectorLanes(new Set(["avx2"])), 8);
  });
  withLanes("", () => assert.equal(vectorLanes(), machine));
});

Deno.test("TUNEBOOK_LANES other than 8 or 16 is a LanesError naming the variable and the value", () => {
  for (const bad of ["4", "32", "8.0", "avx2", "-16"]) {
    withLanes(bad, () => {
      for (const f of [laneOverride, () => vectorLanes(), () => registerFile()]) {
        assert.throws(f, (e: unknown) => {
          assert.ok(e instanceof LanesError && e instanceof RangeError, String(e));
          assert.equal(
            e.message,
            `TUNEBOOK_LANES must be 8 or 16 (floats per vector), got "${bad}"`,
          );
          return true;
        });
      }
    });
  }
});
