import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { type Trace, traceOf } from "../ir/trace.ts";
import { createWorkload, matmul } from "../ir/workloads.ts";
import { defaultSpace } from "../search/sketch.ts";
import { templateSpace } from "../search/templates/registry.ts";
import {
  clearFeatureCache,
  FEATURE_VERSION,
  featureCacheStats,
  featurize,
  FIXED_FEATURE_DOCS,
  FIXED_FEATURE_NAMES,
  fixedFeatures,
  knobFeatureNames,
  knobFeatures,
  LOOP_FEATURE_NAMES,
  loopFeatures,
} from "./features.ts";

const SHAPES: Record<string, number[]> = {
  matmul: [128, 128, 128],
  dense: [64, 128, 256],
  conv2d: [1, 16, 14, 14, 32, 3, 3, 1, 1],
};

function sampled(name: string, seeds: number[]): Trace[] {
  const space = defaultSpace(createWorkload(name, SHAPES[name]));
  return seeds.map((s) => space.sample(createPrng(s)));
}

function templated(name: string, count: number): Trace[] {
  const t = templateSpace(name, createWorkload(name, SHAPES[name]));
  const prng = createPrng(7);
  return Array.from({ length: count }, () => t.candidateOf(t.space.random(prng)).trace!);
}

/** Builds a matmul schedule by hand. */
function manual(build: (sch: Schedule) => void): Trace {
  const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(0) });
  build(sch);
  return traceOf(sch);
}

const fixed = (t: Trace, name: string) => fixedFeatures(t)[FIXED_FEATURE_NAMES.indexOf(name)];
const loop = (t: Trace, name: string) => loopFeatures(t)[LOOP_FEATURE_NAMES.indexOf(name)];

Deno.test("names match vector lengths for every kind and workload", () => {
  assert.equal(FEATURE_VERSION, "tb-features-2");
  assert.equal(new Set(LOOP_FEATURE_NAMES).size, LOOP_FEATURE_NAMES.length);
  assert.equal(new Set(FIXED_FEATURE_NAMES).size, FIXED_FEATURE_NAMES.length);
  for (const n of FIXED_FEATURE_NAMES) assert.ok(FIXED_FEATURE_DOCS[n], n);
  for (const name of Object.keys(SHAPES)) {
    for (const t of [...sampled(name, [1, 2, 3, 4]), ...templated(name, 3)]) {
      const l = loopFeatures(t), f = fixedFeatures(t);
      assert.equal(l.length, LOOP_FEATURE_NAMES.length);
      assert.equal(f.length, FIXED_FEATURE_NAMES.length);
      assert.ok([...l, ...f].every(Number.isFinite), `${name}: non-finite feature`);
    }
    const t = templateSpace(name, createWorkload(name, SHAPES[name]));
    const point = t.space.point(Math.floor(t.space.size / 2));
    assert.equal(knobFeatures(t.space, point).length, knobFeatureNames(t.space).length);
  }
});

Deno.test("knob features: normalised index and log2 split factors", () => {
  const t = templateSpace("matmul", matmul(64, 64, 64));
  const names = knobFeatureNames(t.space);
  assert.deepEqual(names.slice(0, 4), [
    "tile_i.idx",
    "tile_i.f0.log2",
    "tile_i.f1.log2",
    "tile_i.f2.log2",
  ]);
  const point = t.space.point(t.space.size - 1);
  const f = knobFeatures(t.space, point);
  assert.ok(f.every((x) => Number.isFinite(x)));
  assert.equal(f[names.indexOf("tile_i.idx")], 1);
  const [a, b, c] = t.space.values(point).tile_i as number[];
  assert.deepEqual(f.slice(1, 4), [Math.log2(a), Math.log2(b), Math.log2(c)]);
  assert.equal(knobFeatures(t.space, t.space.point(0))[names.indexOf("parallel.idx")], 0);
  assert.throws(() => knobFeatures(t.space, [99]), RangeError);
});

Deno.test("features are deterministic", () => {
  const traces = [...sampled("matmul", [5, 6]), ...sampled("conv2d", [5, 6])];
  const a = featurize(traces, "fixed"), b = featurize(traces, "loop");
  clearFeatureCache();
  const again = sampled("matmul", [5, 6]).concat(sampled("conv2d", [5, 6]));
  assert.deepEqual(featurize(again, "fixed").data, a.data);
  assert.deepEqual(featurize(again, "loop").data, b.data);
});

Deno.test("vector width and parallel extent show in the fixed features", () => {
  const plain = manual(() => {});
  assert.equal(fixed(plain, "vector.width"), 1);
  assert.equal(fixed(plain, "parallel.log2_extent"), 0);
  const vec = manual((sch) => {
    const [, j1] = sch.split("C", "j", [8, 8]);
    sch.reorder("C", ["i", "k", "j.0", j1]);
    sch.vectorize("C", j1);
  });
  assert.equal(fixed(vec, "vector.width"), 8);
  assert.equal(fixed(vec, "vector.log2_width"), 3);
  const par = manual((sch) => sch.parallel("C", "i"));
  assert.equal(fixed(par, "parallel.log2_extent"), 6);
  assert.equal(fixed(par, "parallel.utilisation"), 1);
  assert.equal(loop(par, "l2.parallel"), 1);
  // Sampled sketches vectorize and parallelize too.
  const t = sampled("matmul", [1, 2, 3, 4, 5, 6]);
  assert.ok(t.some((x) => fixed(x, "vector.width") > 1));
  assert.ok(t.some((x) => fixed(x, "parallel.log2_extent") > 0));
});

Deno.test("loop features: strides, touch and reuse of the innermost loop", () => {
  // Default nest i, j, k: k is innermost; A[i, k] is contiguous in k, B[k, j] strided by N.
  const ijk = manual(() => {});
  assert.equal(loop(ijk, "l0.log2_extent"), Math.fround(Math.log2(65)));
  assert.equal(loop(ijk, "l0.depth"), 2);
  assert.equal(loop(ijk, "l0.serial"), 1);
  assert.equal(loop(ijk, "l0.b0.stride"), 0); // C does not move with k
  assert.equal(loop(ijk, "l0.b0.reuse"), 6);
  assert.equal(loop(ijk, "l0.b1.stride"), 1); // A: log2(1 + 1)
  assert.equal(loop(ijk, "l0.b1.touch"), 6);
  assert.equal(loop(ijk, "l0.b2.stride"), Math.fround(Math.log2(65))); // B: stride 64
  assert.equal(loop(ijk, "l1.b1.touch"), 6); // j does not move A
  assert.equal(loop(ijk, "l1.b1.reuse"), 6);
  assert.equal(loop(ijk, "l3.log2_extent"), 0); // padding
  // Reordered i, k, j: j is innermost, contiguous for C and B.
  const ikj = manual((sch) => sch.reorder("C", ["i", "k", "j"]));
  assert.equal(loop(ikj, "l0.b0.stride"), 1);
  assert.equal(loop(ikj, "l0.b1.stride"), 0);
  assert.equal(loop(ikj, "l0.b2.stride"), 1);
  assert.equal(fixed(ikj, "access.contiguous_frac"), Math.fround(2 / 3));
  assert.equal(fixed(ijk, "access.contiguous_frac"), Math.fround(1 / 3));
  // Footprint of the whole nest: 3 buffers of 64 x 64 floats.
  assert.equal(fixed(ijk, "fp.total.x27"), Math.fround(Math.log2(3 * 64 * 64 * 4)));
  assert.equal(fixed(ijk, "cache.y24"), 18); // everything fits: all 2^18 iterations
});

Deno.test("fixed features have one length across workloads", () => {
  const traces = [
    ...sampled("matmul", [1, 2]),
    ...sampled("dense", [1, 2]),
    ...sampled("conv2d", [1, 2]),
  ];
  const lengths = new Set(traces.map((t) => fixedFeatures(t).length));
  assert.deepEqual([...lengths], [FIXED_FEATURE_NAMES.length]);
  const m = featurize(traces, "fixed");
  assert.equal(m.rows, 6);
  // Different workloads give different rows.
  const row = (r: number) => Array.from(m.data.subarray(r * m.cols, (r + 1) * m.cols));
  assert.notDeepEqual(row(0), row(2));
  assert.notDeepEqual(row(2), row(4));
});

Deno.test("featurize returns a named, versioned row-major matrix", () => {
  const traces = sampled("matmul", [1, 2, 3]);
  for (const kind of ["loop", "fixed"] as const) {
    const m = featurize(traces, kind);
    const names = kind === "loop" ? LOOP_FEATURE_NAMES : FIXED_FEATURE_NAMES;
    assert.equal(m.rows, 3);
    assert.equal(m.cols, names.length);
    assert.equal(m.data.length, m.rows * m.cols);
    assert.deepEqual(m.names, [...names]);
    assert.equal(m.version, FEATURE_VERSION);
    const one = kind === "loop" ? loopFeatures(traces[1]) : fixedFeatures(traces[1]);
    assert.deepEqual(
      Array.from(m.data.subarray(m.cols, 2 * m.cols)),
      Array.from(Float32Array.from(one)),
    );
  }
  assert.equal(featurize([], "loop").data.length, 0);
  // A trace that cannot be lowered: thrown, or a zero row on request.
  const bad = manual((sch) => sch.vectorize("C", "i"));
  assert.throws(() => featurize([bad], "fixed"));
  const z = featurize([traces[0], bad], "fixed", { invalid: "zeros" });
  assert.ok(z.data.subarray(z.cols).every((x) => x === 0));
  assert.ok(z.data.subarray(0, z.cols).some((x) => x !== 0));
});

Deno.test("featurizing 1,000 matmul 512 traces analyses each once; other kinds reuse it", () => {
  const space = defaultSpace(matmul(512, 512, 512));
  const traces = Array.from({ length: 1000 }, (_, i) => space.sample(createPrng(i)));
  const distinct = new Set(traces.map((t) => JSON.stringify(t))).size;
  clearFeatureCache();
  const before = featureCacheStats();
  const t0 = performance.now();
  const m = featurize(traces, "fixed");
  const cold = performance.now() - t0;
  const afterCold = featureCacheStats();
  const t1 = performance.now();
  featurize(traces, "loop");
  const cached = performance.now() - t1;
  const afterCached = featureCacheStats();
  // Information only: speed depends on the machine and its load (bench/ measures it).
  console.log(`featurize 1000 traces: ${cold.toFixed(0)} ms cold, ${cached.toFixed(0)} ms cached`);
  assert.equal(m.rows, 1000);
  // Work, not wall time: one analysis (replay + lowering) per distinct trace, then none.
  assert.equal(afterCold.analyses - before.analyses, distinct);
  assert.equal(afterCached.analyses - afterCold.analyses, 0);
  assert.equal(afterCached.hits - afterCold.hits, 1000);
});
