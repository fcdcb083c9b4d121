/**
 * The recorded conv2d data set (data/conv2d_cpu/) replays: each file is a
 * Kernel Tuner cache that covers its template's whole space with times.
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { readKernelTunerCache } from "../datasets/kerneltuner.ts";
import { createWorkload } from "../ir/workloads.ts";
import { replaySpace } from "../search/replay.ts";
import { templateSpace } from "../search/templates/registry.ts";

const DIR = fileURLToPath(new URL("../data/conv2d_cpu/", import.meta.url));
const LAYERS = ["conv1", "conv2", "conv3", "conv4"];

Deno.test("each recorded ResNet-18 layer replays its conv2d template's whole space", async () => {
  for (const layer of LAYERS) {
    const cache = await readKernelTunerCache(`${DIR}resnet18_${layer}_cpu.json.gz`);
    const shape = cache.problemSize as number[];
    const template = templateSpace("conv2d", createWorkload("conv2d", shape));
    assert.deepEqual(cache.tuneParamsKeys, template.space.knobs.map((k) => k.name), layer);
    assert.equal(cache.cache.size, template.space.size, `${layer}: every point measured`);
    const replay = replaySpace(cache);
    assert.equal(replay.validCount, template.space.size, `${layer}: no failed point`);
    // Times are plausible: a layer's FLOPs at 0.1 to 500 GFLOP/s.
    const flops = createWorkload("conv2d", shape).flops;
    const gflops = flops / replay.optimum / 1e9;
    assert.ok(gflops > 0.1 && gflops < 500, `${layer}: best ${gflops} GFLOP/s`);
  }
});
