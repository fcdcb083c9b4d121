/**
 * Property test of scheduling, lowering and C code generation: random legal
 * schedules of matmul, dense and conv2d (odd and prime sizes, imperfect
 * tiles) are compiled and run in worker processes against the default
 * schedule's kernel, whose output is itself checked against the JavaScript
 * interpreter `ir/evaluate.ts`. The runner checks each kernel on buffers
 * placed against inaccessible guard pages (`measure/buffers.ts`), so a kernel
 * that reads or writes past a buffer crashes (`runtime_crash`) every time.
 * The builder's flags turn GCC's loop if-conversion off, so sound C never
 * compiles to a read past a buffer (`compiler_overread_test.ts`): every
 * crash is a failure.
 *
 * A failure prints the test seed, the failing schedule's own seed (which
 * `randomSchedule(workload, createPrng(seed))` rebuilds), its primitives as
 * trace JSON and its C source. Rerun with `TB_PROPERTY_SEED=<seed> deno test
 * --allow-all tests/codegen_property_test.ts`; `TB_PROPERTY_COUNT` sets the
 * schedules per workload (default 35).
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { generateC } from "../ir/codegen_c.ts";
import { evaluate } from "../ir/evaluate.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { assertTraceRoundTrip, newRandomScheduleStats, randomSchedule } from "../ir/testing.ts";
import { createWorkload, type Workload } from "../ir/workloads.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { alignedFloat32, pointerTable } from "../measure/buffers.ts";
import { createBuilder, createRunner, type KernelSignature } from "../measure/mod.ts";
import { fillUniform } from "../measure/prng.ts";
import { pinOpenMP } from "../measure/cpu_worker.ts";

const SEED = Number(Deno.env.get("TB_PROPERTY_SEED") ?? 20261122);
const PER_WORKLOAD = Number(Deno.env.get("TB_PROPERTY_COUNT") ?? 35);
const CACHE_DIR = fileURLToPath(new URL("../.cache/test-kernels", import.meta.url));
/** Float32 sums of up to ~100 products of values in [-1, 1) against float32 (or float64) sums. */
const ATOL = 1e-4, RTOL = 1e-4;
const INPUT_SEED = 12345;

/** Workloads with odd and prime sizes, padding, stride 2, and extents of 1. */
const WORKLOADS: [string, number[]][] = [
  ["matmul", [37, 29, 23]],
  ["matmul", [16, 48, 8]],
  ["dense", [13, 17, 19]],
  ["dense", [1, 7, 33]],
  ["conv2d", [1, 3, 11, 13, 5, 3, 3, 2, 1]],
  ["conv2d", [2, 4, 9, 9, 6, 3, 3, 1, 1]],
  ["conv2d", [1, 2, 12, 11, 4, 3, 3, 2, 0]],
];

/** Fixed schedules that once produced wrong code (checked along with the random ones). */
/** A `conv2d-packed` point with the padded input in phases. */
const PHASED = {
  fr: 4,
  yr: 2,
  xr: 16,
  pack: "W",
  order: 0,
  unroll_kw: 1,
  parallel: "f",
  phases: 1,
};

const REGRESSIONS: { name: string; workload: [string, number[]]; apply(sch: Schedule): void }[] = [
  {
    name: "a fused loop split imperfectly (its % would wrap around)",
    workload: ["matmul", [16, 48, 8]],
    apply(sch) {
      sch.split("C", sch.fuse("C", ["i", "j"]), [null, 10]);
    },
  },
  {
    name: "the inner loop of a split split imperfectly (reduction iterations repeated)",
    workload: ["matmul", [37, 29, 23]],
    apply(sch) {
      const [, k1] = sch.split("C", "k", [null, 5]);
      sch.split("C", k1, [2, 3]);
    },
  },
  {
    name: "compute_at, compute_inline then compute_root of the padding",
    workload: ["conv2d", [1, 3, 11, 13, 5, 3, 3, 2, 1]],
    apply(sch) {
      sch.computeAt("P", "O", "y");
      sch.computeInline("P");
      sch.computeRoot("P");
    },
  },
  {
    name: "a cache computed at the copy, which is computed at its consumer",
    workload: ["dense", [13, 17, 19]],
    apply(sch) {
      sch.cacheWrite("D");
      const [, j1] = sch.split("Y", "j", [null, 8]);
      sch.computeAt("D", "Y", "i");
      sch.computeAt("D_local", "D", "i");
      sch.vectorize("Y", j1);
    },
  },
  {
    // 16 rows in tiles of 6: rows 16 and 17 of the last tile are past C. Its
    // accumulators, kept in vector variables over k, were loaded from and
    // stored to them (found by the guard pages of the runner's check).
    name: "a register tile promoted over k whose last tile runs past the matrix",
    workload: ["matmul", [16, 48, 8]],
    apply(sch) {
      const [i0, i1] = sch.split("C", "i", [null, 6]);
      const [j0, j1] = sch.split("C", "j", [null, 16]);
      sch.reorder("C", [i0, j0, "k", i1, j1]);
      sch.unroll("C", i1);
      sch.vectorize("C", j1);
    },
  },
  // Packed operands and register tiles whose sizes do not divide the extents (edge tiles).
  ...packedCases([37, 29, 23], [
    { mr: 6, nr: 16, mc: 2, nc: 1, pack: "AB", order: 0, unroll_k: 4, parallel: 1 },
    { mr: 8, nr: 32, mc: 1, nc: 2, pack: "B", order: 1, unroll_k: 2, parallel: 1 },
    // A register tile clipped to the matrix (32 columns of 29): the copy keeps its guards.
    { mr: 6, nr: 32, mc: 4, nc: 1, pack: "none", order: 1, unroll_k: 4, parallel: 1 },
    // KC blocks (256 > K = 23: one partial block), C accumulated in promoted vectors.
    { mr: 6, nr: 16, mc: 2, nc: 2, pack: "AB", order: 0, unroll_k: 2, parallel: 1, kc: 256 },
  ]),
  ...packedCases([100, 70, 50], [
    { mr: 6, nr: 64, mc: 8, nc: 4, pack: "AB", order: 0, unroll_k: 1, parallel: 1 },
    { mr: 8, nr: 48, mc: 8, nc: 2, pack: "AB", order: 0, unroll_k: 1, parallel: 1 },
    { mr: 8, nr: 16, mc: 4, nc: 2, pack: "AB", order: 1, unroll_k: 4, parallel: 0 },
    { mr: 4, nr: 48, mc: 32, nc: 16, pack: "none", order: 0, unroll_k: 2, parallel: 1 },
    { mr: 6, nr: 64, mc: 8, nc: 1, pack: "AB", order: 0, unroll_k: 1, parallel: 1, kc: 256 },
    { mr: 8, nr: 32, mc: 2, nc: 2, pack: "B", order: 1, unroll_k: 4, parallel: 1, kc: 512 },
  ]),
  // Direct convolution register tiles clipped on every axis (37 columns: masked
  // vector edges), strided and unpadded.
  ...packedCases([1, 5, 9, 37, 13, 3, 3, 1, 1], [
    { fr: 6, yr: 2, xr: 32, pack: "W", order: 0, unroll_kw: 1, parallel: "f", pad_parallel: 1 },
    { fr: 8, yr: 4, xr: 16, pack: "none", order: 1, unroll_kw: 0, parallel: "fy" },
    { fr: 16, yr: 1, xr: 48, pack: "W", order: 1, unroll_kw: 1, parallel: "fy", pad_parallel: 1 },
    { fr: 4, yr: 2, xr: 16, pack: "W", order: 1, unroll_kw: 1, parallel: "f", prefetch: 2 },
  ], ["conv2d-packed", "conv2d"]),
  ...packedCases([1, 3, 11, 13, 5, 3, 3, 2, 1], [
    { fr: 4, yr: 2, xr: 16, pack: "W", order: 0, unroll_kw: 1, parallel: "f" },
    // The padded input in phases (deinterleave), its copy masked at odd edges.
    PHASED,
    { ...PHASED, fr: 6, yr: 1, xr: 32, pack: "none", order: 1, unroll_kw: 0, parallel: "fy" },
    { ...PHASED, yr: 1, pad_parallel: 1 },
  ], ["conv2d-packed", "conv2d"]),
  ...packedCases([1, 2, 19, 21, 4, 5, 5, 3, 2], [{ ...PHASED, pad_parallel: 1 }], [
    "conv2d-packed",
    "conv2d",
  ]),
  ...packedCases([2, 4, 8, 20, 6, 3, 3, 1, 0], [
    { fr: 4, yr: 1, xr: 16, pack: "W", order: 0, unroll_kw: 1, parallel: "fy" },
  ], ["conv2d-packed", "conv2d"]),
];

/** Fixed points of a packed template (`matmul-packed` by default) on one shape. */
function packedCases(
  shape: number[],
  points: Record<string, unknown>[],
  [template, workload] = ["matmul-packed", "matmul"],
): { name: string; workload: [string, number[]]; apply(sch: Schedule): void }[] {
  const t = templateSpace(template, createWorkload(workload, shape));
  return points.map((values) => ({
    name: `${template} ${shape} ${JSON.stringify(values)}`,
    workload: [workload, shape],
    apply(sch) {
      const point = t.space.knobs.map((k) => k.options.indexOf(values[k.name] ?? k.options[0]));
      for (const inst of t.candidateOf(point).trace!.insts) sch.apply(inst);
    },
  }));
}

function workloadKey(w: Workload): string {
  return `${w.name}:${w.shape.join(",")}`;
}

function signatureOf(sch: Schedule): KernelSignature {
  const kernel = lower(sch);
  return {
    buffers: kernel.params.map((p) => ({ name: p.tensor, size: p.size, role: p.role })),
  };
}

function defaultSchedule(w: Workload): Schedule {
  return new Schedule(w, { prng: createPrng(0) });
}

Deno.test("the default schedule's C matches ir/evaluate.ts for every workload", async () => {
  pinOpenMP();
  const builder = createBuilder({ cacheDir: CACHE_DIR, parallel: 2 });
  const workloads = WORKLOADS.map(([name, shape]) => createWorkload(name, shape));
  const sources = workloads.map((w) => generateC(lower(defaultSchedule(w))));
  const built = await builder.build(sources.map((source) => ({ source })));
  for (const [i, w] of workloads.entries()) {
    const b = built[i];
    assert.equal(b.errorKind, "none", `${workloadKey(w)}: ${b.error}\n${sources[i]}`);
    const lib = Deno.dlopen(b.artifact!, {
      tb_kernel: { parameters: ["buffer"], result: "void" },
    });
    try {
      const inputs = w.inputs.map((t) => alignedFloat32(t.size));
      fillUniform(INPUT_SEED, inputs);
      const outputs = w.outputs.map((t) => alignedFloat32(t.size).fill(NaN));
      lib.symbols.tb_kernel(pointerTable([...inputs, ...outputs]));
      const expected = evaluate(w, new Map(w.inputs.map((t, j) => [t.name, inputs[j]])));
      w.outputs.forEach((t, j) => {
        const want = expected.get(t.name)!;
        const got = outputs[j];
        assert.equal(got.length, want.length);
        let bad = 0, first = "";
        for (let k = 0; k < got.length; k++) {
          const err = Math.abs(got[k] - want[k]);
          if (err <= ATOL + RTOL * Math.abs(want[k])) continue; // NaN fails
          if (bad++ === 0) first = `index ${k}: got ${got[k]}, expected ${want[k]}`;
        }
        assert.equal(bad, 0, `${workloadKey(w)} output ${t.name}: ${bad} wrong, ${first}`);
        // The check is not vacuous: outputs are mostly non-zero.
        assert.ok(want.some((v) => Math.abs(v) > 0.1), `${workloadKey(w)}: trivial output`);
      });
    } finally {
      lib.close();
    }
  }
});

Deno.test("random legal schedules compile and match the default schedule's kernel, with 16 and 8 lanes", async () => {
  const stats = newRandomScheduleStats();
  interface Case {
    w: Workload;
    seed: number;
    sch: Schedule;
    source: string;
    ref: number;
    /** Floats per vector of the C (every second random schedule gets 8). */
    lanes: 8 | 16;
  }
  // Regressions may use shapes of their own (with their own reference kernels).
  const shapes = [...WORKLOADS];
  for (const r of REGRESSIONS) {
    if (!shapes.some(([n, sh]) => n === r.workload[0] && sh.join() === r.workload[1].join())) {
      shapes.push(r.workload);
    }
  }
  const workloads = shapes.map(([name, shape]) => createWorkload(name, shape));
  const refSources = workloads.map((w) => generateC(lower(defaultSchedule(w))));
  const cases: Case[] = [];
  let imperfect = 0;
  workloads.slice(0, WORKLOADS.length).forEach((w, wi) => {
    for (let j = 0; j < PER_WORKLOAD; j++) {
      const seed = (SEED * 1009 + wi * 100003 + j) >>> 0;
      const sch = randomSchedule(w, createPrng(seed), { stats });
      assertTraceRoundTrip(sch);
      if (
        sch.stages.some((s) =>
          s.relations.some((r) => r.k === "split" && r.parent.extent % r.factor !== 0)
        )
      ) imperfect++;
      const lanes = j % 2 === 0 ? 16 : 8;
      cases.push({ w, seed, sch, source: generateC(lower(sch), { lanes }), ref: wi, lanes });
    }
  });
  for (const [n, r] of REGRESSIONS.entries()) {
    const wi = shapes.findIndex(([name, shape]) =>
      name === r.workload[0] && shape.join() === r.workload[1].join()
    );
    const w = workloads[wi];
    const sch = defaultSchedule(w);
    r.apply(sch);
    assertTraceRoundTrip(sch);
    cases.push({ w, seed: -1 - n, sch, source: generateC(lower(sch)), ref: wi, lanes: 16 });
  }
  const builder = createBuilder({ cacheDir: CACHE_DIR, parallel: 2 });
  const [refs, builds] = await Promise.all([
    builder.build(refSources.map((source) => ({ source }))),
    builder.build(cases.map((c) => ({ source: c.source }))),
  ]);
  refs.forEach((r, i) => assert.equal(r.errorKind, "none", `${refSources[i]}\n${r.error}`));
  const runner = createRunner({
    workers: 2,
    timeoutSeconds: 20,
    timing: { number: 1, repeat: 1, warmup: 0, minRepeatMs: 0 },
  });
  let results;
  try {
    results = await runner.run(cases.map((c, i) => ({
      artifact: builds[i].artifact ?? "/nonexistent.so",
      reference: refs[c.ref].artifact!,
      signature: signatureOf(c.sch),
      seed: INPUT_SEED,
      atol: ATOL,
      rtol: RTOL,
    })));
  } finally {
    await runner.close();
  }
  const failures: string[] = [];
  cases.forEach((c, i) => {
    const b = builds[i], r = results[i];
    if (b.errorKind === "none" && r.errorKind === "none") return;
    const what = b.errorKind !== "none"
      ? `build ${b.errorKind}: ${b.error}`
      : `run ${r.errorKind}: ${r.error}`;
    const label = c.seed < 0
      ? `regression "${REGRESSIONS[-1 - c.seed].name}"`
      : `schedule seed ${c.seed} (TB_PROPERTY_SEED=${SEED}), ${c.lanes} lanes`;
    failures.push(
      `${workloadKey(c.w)} ${label}: ${what}\n` +
        `primitives: ${JSON.stringify(c.sch.trace)}` +
        (failures.length < 3 ? `\n${c.source}` : ""),
    );
  });
  const passed = cases.length - failures.length;
  console.log(
    `${passed}/${cases.length} schedules passed (${REGRESSIONS.length} fixed regressions, ` +
      `seed ${SEED}); ` +
      `${imperfect} with imperfect splits, ${stats.lowerRetries} redrawn after lower() ` +
      `rejected them, ${stats.rejectedPrimitives} primitives rejected; applied ${
        JSON.stringify(stats.applied)
      }`,
  );
  assert.equal(failures.length, 0, `${failures.length} failures:\n${failures.join("\n\n")}`);
  // The generator covers every primitive, and imperfect tiles.
  for (
    const op of [
      "split",
      "fuse",
      "reorder",
      "parallel",
      "vectorize",
      "unroll",
      "auto_unroll",
      "cache_write",
      "compute_at",
      "compute_inline",
      "compute_root",
      "cache_read",
      "transform_layout",
      "deinterleave",
      "sample_perfect_tile",
      "sample_categorical",
      "sample_compute_location",
    ]
  ) assert.ok((stats.applied[op] ?? 0) > 0, `no schedule used ${op}`);
  assert.ok(imperfect > cases.length / 4, `only ${imperfect} schedules with imperfect tiles`);
  assert.ok(cases.length - REGRESSIONS.length >= 200);
});
