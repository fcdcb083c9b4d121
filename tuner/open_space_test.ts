import assert from "node:assert/strict";
import { join } from "node:path";
import { isWorkloadSpec, openSpace, OpenSpaceError, transferSamples } from "./open_space.ts";
import { cacheFile, KERNELTUNER_DIR, nearestCacheNames } from "../datasets/cache_names.ts";

Deno.test("openSpace opens a cache by name and by path, the same space", async () => {
  const byName = await openSpace("pnpoly_RTX_3090");
  const byPath = await openSpace(cacheFile("pnpoly_RTX_3090"));
  assert.equal(byName.space.size, byPath.space.size);
  assert.equal(byName.optimum, byPath.optimum);
  assert.equal(byName.workload.name, "pnpoly_RTX_3090");
  assert.equal(byPath.workload.name, "pnpoly_RTX_3090");
  assert.ok(byName.randomCurve!(1, 3).every((f, i, a) => i === 0 || f >= a[i - 1]));
  await byName.close();
  await byPath.close();
});

Deno.test("openSpace names the nearest known caches for an unknown name", async () => {
  const e = await openSpace("pnpoly_RTX3090").catch((e) => e);
  assert.ok(e instanceof OpenSpaceError && e instanceof RangeError);
  assert.equal(e.option, "space");
  assert.match(e.message, /^space "pnpoly_RTX3090": no such cache; did you mean pnpoly_RTX_3090,/);
  assert.deepEqual(nearestCacheNames("convolution_A10", undefined, 2), [
    "convolution_A100",
    "convolution_A4000",
  ]);
});

Deno.test("openSpace refuses bad input, naming the option", async () => {
  await assert.rejects(() => openSpace(undefined as unknown as string), TypeError);
  await assert.rejects(() => openSpace(""), /spec must be a cache name/);
  await assert.rejects(
    () => openSpace("pnpoly_RTX_3090", { absent: "maybe" as "invalid" }),
    /absent must be "invalid" or "restricted", got "maybe"/,
  );
  await assert.rejects(
    () => openSpace("pnpoly_RTX_3090", { template: "matmul" }),
    /template "matmul": pnpoly_RTX_3090 is a recorded space/,
  );
  await assert.rejects(() => openSpace("matmul:8,x,8"), /space "matmul:8,x,8": dimension 2/);
  await assert.rejects(
    () => openSpace(join(KERNELTUNER_DIR, "missing.json.gz")),
    OpenSpaceError,
  );
});

Deno.test("a workload spec is told from a cache name", () => {
  assert.ok(isWorkloadSpec("matmul:64,64,64"));
  assert.ok(!isWorkloadSpec("pnpoly_RTX_3090"));
  assert.ok(!isWorkloadSpec("nosuch:1,2"));
});

Deno.test("transferSamples matches another device's configurations and refuses other knobs", async () => {
  const target = await openSpace("convolution_A4000");
  const samples = await transferSamples("convolution_A100", target.space);
  assert.ok(samples.length > 0 && samples.every((s) => s.candidate.knobs!.length > 0));
  await assert.rejects(
    () => transferSamples("pnpoly_RTX_3090", target.space),
    /transferFrom "pnpoly_RTX_3090": its knobs differ/,
  );
});
