/**
 * configSeeds: a GPU run's GEMM configurations as the candidates its strategy
 * would propose, shared with it where they are points of its space.
 */
import assert from "node:assert/strict";
import { matmul } from "../ir/workloads.ts";
import { cudaKernelSource } from "../measure/cuda.ts";
import { gemmConfigs } from "../search/gemm_configs.ts";
import { gpuTemplateSpace } from "../search/templates/registry_gpu.ts";
import { configSeeds, strategyFor, strategyProblem } from "./tune_strategy.ts";
import { writePreset } from "./presets.ts";
import { join } from "node:path";

const w = matmul(1024, 1024, 1024);
const math = ["fp32"] as const;

Deno.test("configSeeds gives a knob strategy on gemm-gpu each configuration as the template point with its values and its kernel", () => {
  const configs = gemmConfigs(w, { math });
  assert.ok(configs.length >= 5);
  const { seeds, share } = configSeeds(
    { strategy: "xgb", workload: w, target: "cuda", math },
    configs,
  );
  assert.equal(share, true);
  const t = gpuTemplateSpace("gemm-gpu", w, { math });
  assert.equal(seeds.length, configs.length);
  seeds.forEach((s, i) => {
    assert.ok(s.knobs, configs[i].name);
    assert.ok(t.space.isValid(s.knobs));
    const values = t.space.values(s.knobs);
    for (const [k, v] of Object.entries(configs[i].values)) {
      assert.equal(values[k.slice("gemm.".length)], v, `${configs[i].name}: ${k}`);
    }
    // The same CUDA as the configuration's sketch sample.
    const source = cudaKernelSource(s.trace!);
    assert.ok("source" in source, configs[i].name);
    assert.deepEqual(source, cudaKernelSource(configs[i].candidate.trace!), configs[i].name);
  });
});

Deno.test("configSeeds shares the sketch samples with a search of the sketches and holds them back from a loop-nest template", () => {
  const configs = gemmConfigs(w, { math });
  const sketches = configSeeds({ strategy: "ansor", workload: w, target: "cuda", math }, configs);
  assert.equal(sketches.share, true);
  assert.deepEqual(sketches.seeds, configs.map((c) => c.candidate));
  const loopNest = configSeeds(
    { strategy: "xgb", workload: w, target: "cuda", math, template: "matmul-gpu" },
    configs,
  );
  assert.equal(loopNest.share, false);
  assert.deepEqual(loopNest.seeds, configs.map((c) => c.candidate));
});

Deno.test("simulated annealing on gemm-gpu starts next to the fastest configuration it was seeded with", async () => {
  const request = { strategy: "sa", workload: w, target: "cuda", math };
  const configs = gemmConfigs(w, { math });
  const { seeds } = configSeeds(request, configs);
  const s = await strategyFor({ ...request, seed: 3, configs });
  const first = s.propose(seeds.length);
  assert.deepEqual(first, seeds);
  const fastest = 2;
  await s.observe(first.map((candidate, i) => ({
    candidate,
    errorKind: "none" as const,
    seconds: i === fastest ? 1e-3 : 1e-2,
  })));
  // The configurations are 9 of the 10 points of its initial design: one random point completes it.
  assert.equal(seeds.length, 9);
  const [last] = s.propose(4);
  await s.observe([{ candidate: last, errorKind: "none", seconds: 1e-2 }]);
  const next = s.propose(4);
  assert.equal(next.length, 4);
  for (const c of next) {
    const differ = c.knobs!.filter((x, j) => x !== seeds[fastest].knobs![j]).length;
    assert.equal(differ, 1, `${c.knobs} against ${seeds[fastest].knobs}`);
  }
});

Deno.test("strategyProblem takes STRATEGY@PRESET: a knob space runs it, the sketches, a missing preset and a bad setting are refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = await writePreset(
      { name: "p", strategy: "random", hyper: { fraction: 0.05 } },
      join(dir, "p.json"),
    );
    const small = matmul(64, 64, 64);
    assert.match(
      strategyProblem({ strategy: "sa@" + path, workload: small, target: "cpu" })!,
      /sets strategy "random", not sa/,
    );
    assert.equal(
      strategyProblem({ strategy: "random@kt", replay: true, target: "replay" }),
      undefined,
    );
    assert.match(
      strategyProblem({ strategy: "random@kt", workload: small, target: "cpu" })!,
      /--strategy random@kt: its settings \({"fraction":0.1}\) apply to a knob space, and this run searches the sketches/,
    );
    assert.equal(
      strategyProblem({
        strategy: `random@${path}`,
        workload: small,
        target: "cpu",
        template: "matmul",
      }),
      undefined,
    );
    assert.match(
      strategyProblem({ strategy: "sa@nothing", workload: small, target: "cpu" })!,
      /Preset "nothing" of sa@nothing: no file/,
    );
    assert.match(
      strategyProblem({ strategy: "sa@x", hyper: { t0: 9 }, workload: small, target: "cpu" })!,
      /sa\.t0 must be one of/,
    );
    // The preset's settings reach the strategy: random@kt stops after a tenth of the space.
    const s = await strategyFor({
      strategy: `random@${path}`,
      workload: small,
      target: "cpu",
      template: "matmul",
      seed: 1,
    });
    let n = 0;
    for (let k = 0; k < 1000; k++) {
      const got = s.propose(64).length;
      if (got === 0) break;
      n += got;
    }
    const plain = await strategyFor({
      strategy: "random",
      workload: small,
      target: "cpu",
      template: "matmul",
      seed: 1,
    });
    assert.ok(n > 0, `${n} proposed`);
    assert.equal(plain.propose(2 * n).length, 2 * n);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
