import assert from "node:assert/strict";
import {
  GEMM_DEFAULTS,
  GEMM_KNOBS,
  gemmPlan,
  gemmProblemOf,
  hasGemmPragmas,
} from "../ir/gemm_gpu.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { H100 } from "../ir/target_gpu.ts";
import { replayTrace, type Trace, traceOf } from "../ir/trace.ts";
import { conv2d, matmul, type Workload } from "../ir/workloads.ts";
import { gpuSpace } from "../search/sketch_gpu.ts";
import {
  FEATURE_VERSION,
  FIXED_FEATURE_DOCS,
  FIXED_FEATURE_NAMES,
  fixedFeatures,
  LOOP_FEATURE_NAMES,
  loopFeatures,
} from "./features.ts";
import { GEMM_FEATURE_NAMES, gemmFeatures } from "./gemm_features.ts";

/** A GEMM-template trace: the defaults with `changes` applied. */
function gemmTrace(w: Workload, changes: Record<string, number> = {}): Trace {
  const sch = new Schedule(w, { prng: createPrng(0) });
  const stage = w.outputs[0].name;
  for (const [k, v] of Object.entries({ ...GEMM_DEFAULTS, ...changes })) sch.annotate(stage, k, v);
  return traceOf(sch);
}

const gemmPart = (v: number[], names: readonly string[]) =>
  v.slice(names.length - GEMM_FEATURE_NAMES.length);

Deno.test("two GEMM candidates differing in one pragma get different loop and fixed features", () => {
  const w = matmul(1024, 1024, 1024);
  const problem = gemmProblemOf(w)!;
  const base = gemmTrace(w);
  const plan = (c: Record<string, number>) => {
    try {
      return JSON.stringify(gemmPlan(problem, { ...GEMM_DEFAULTS, ...c }, H100));
    } catch {
      return undefined; // the target refuses it
    }
  };
  let compared = 0;
  for (const [key, values] of Object.entries(GEMM_KNOBS)) {
    for (const v of values) {
      // Every valid single-pragma change that changes the kernel's plan (gemm.stages only
      // matters with cp.async, so it is varied on load 2).
      const context: Record<string, number> = key === "gemm.stages" ? { "gemm.load": 2 } : {};
      const a = plan(context), b = plan({ ...context, [key]: v });
      if (a === undefined || b === undefined || a === b) continue;
      const ta = key === "gemm.stages" ? gemmTrace(w, context) : base;
      const tb = gemmTrace(w, { ...context, [key]: v });
      assert.notDeepEqual(loopFeatures(ta), loopFeatures(tb), `${key} ${v}: loop features`);
      assert.notDeepEqual(fixedFeatures(ta), fixedFeatures(tb), `${key} ${v}: fixed features`);
      compared++;
    }
  }
  // Every knob took part.
  assert.ok(compared >= Object.keys(GEMM_KNOBS).length, `${compared} changes compared`);
});

Deno.test("the GEMM features of a trace read its pragmas: tiles, mma kind, shared memory, blocks vs SMs", () => {
  const f = (t: Trace, name: string) => fixedFeatures(t)[FIXED_FEATURE_NAMES.indexOf(name)];
  const t = gemmTrace(matmul(1024, 1024, 1024), {
    "gemm.mma": 1,
    "gemm.load": 2,
    "gemm.stages": 3,
  });
  assert.equal(f(t, "gemm.present"), 1);
  assert.equal(f(t, "gemm.block_m.log2"), 7);
  assert.equal(f(t, "gemm.mma.tf32"), 1);
  assert.equal(f(t, "gemm.mma.fp32"), 0);
  assert.equal(f(t, "gemm.load.cp_async"), 1);
  assert.equal(f(t, "gemm.stages"), 3);
  assert.equal(f(t, "gemm.threads.log2"), 8); // 128x128 in 64x32 warp tiles: 8 warps
  // 1024 / 128 squared = 64 blocks on 132 SMs.
  assert.equal(f(t, "gemm.blocks.log2"), 6);
  assert.equal(f(t, "gemm.sm_fill"), Math.fround(64 / 132));
  // Values agree with the loop-feature copy of the same columns.
  assert.deepEqual(
    gemmPart(loopFeatures(t), LOOP_FEATURE_NAMES),
    gemmPart(fixedFeatures(t), FIXED_FEATURE_NAMES),
  );
});

Deno.test("schedules without gemm pragmas, and plans the target refuses, have all-zero GEMM features", () => {
  const space = gpuSpace(conv2d(1, 16, 14, 14, 16, 3, 3, 1, 1));
  const prng = createPrng(3);
  let plain = 0, gemm = 0;
  for (let i = 0; i < 24; i++) {
    const t = space.sample(prng);
    const sch = replayTrace(t, { prng: createPrng(0) });
    const part = gemmPart(fixedFeatures(t), FIXED_FEATURE_NAMES);
    if (hasGemmPragmas(sch)) {
      gemm++;
      assert.equal(part[0], 1);
    } else {
      plain++;
      assert.ok(part.every((x) => x === 0));
    }
  }
  assert.ok(plain > 0 && gemm > 0, `${plain} loop-nest and ${gemm} GEMM samples`);
  // 1024 threads in 32x16 warp tiles of a 256x256 block: over the target's limit.
  const refused = new Schedule(matmul(512, 512, 512), { prng: createPrng(0) });
  for (
    const [k, v] of Object.entries({ ...GEMM_DEFAULTS, "gemm.block_m": 256, "gemm.block_n": 256 })
  ) {
    refused.annotate("C", k, v);
  }
  for (const [k, v] of Object.entries({ "gemm.warp_m": 16, "gemm.warp_n": 16 })) {
    refused.annotate("C", k, v);
  }
  assert.ok(gemmFeatures(refused).every((x) => x === 0));
});

Deno.test("every GEMM feature is named, documented and versioned", () => {
  assert.equal(FEATURE_VERSION, "tb-features-2");
  assert.equal(new Set(GEMM_FEATURE_NAMES).size, GEMM_FEATURE_NAMES.length);
  assert.deepEqual(LOOP_FEATURE_NAMES.slice(-GEMM_FEATURE_NAMES.length), [...GEMM_FEATURE_NAMES]);
  assert.deepEqual(FIXED_FEATURE_NAMES.slice(-GEMM_FEATURE_NAMES.length), [...GEMM_FEATURE_NAMES]);
  for (const n of GEMM_FEATURE_NAMES) assert.ok(FIXED_FEATURE_DOCS[n], n);
});
