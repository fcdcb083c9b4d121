import assert from "node:assert/strict";
import { fmaPeak, peakSource } from "./matmul_kernels.ts";
import { vectorLanes } from "../ir/target_cpu.ts";

Deno.test("the FMA peak's C uses vectors of the width asked, counting 2 flops per lane", () => {
  for (const lanes of [8, 16] as const) {
    const c = peakSource(lanes);
    assert.match(c, new RegExp(`vector_size\\(${lanes * 4}\\)`));
    assert.match(c, new RegExp(`50000000\\.0 \\* 12 \\* ${2 * lanes} \\* threads`));
    assert.doesNotMatch(c, lanes === 8 ? /vector_size\(64\)/ : /vector_size\(32\)/);
  }
});

Deno.test("fmaPeak measures with this machine's vector width and gives positive figures", async () => {
  const [one, two] = await fmaPeak(vectorLanes());
  assert.ok(Number.isFinite(one) && one > 0, `${one}`);
  assert.ok(Number.isFinite(two) && two > 0, `${two}`);
});
