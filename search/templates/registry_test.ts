import assert from "node:assert/strict";
import { createPrng } from "../../ir/prng.ts";
import { lower } from "../../ir/lower.ts";
import { parseTrace, replayTrace } from "../../ir/trace.ts";
import { createWorkload } from "../../ir/workloads.ts";
import { templateSpace } from "./registry.ts";

const CASES: [string, string, number[]][] = [
  ["matmul", "matmul", [512, 512, 512]],
  ["matmul", "matmul", [37, 29, 23]],
  ["matmul-packed", "matmul", [1024, 1024, 1024]],
  ["matmul-packed", "matmul", [37, 29, 23]],
  ["matmul-packed", "matmul", [1, 7, 3]],
  ["dense", "dense", [64, 100, 48]],
  ["conv2d", "conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]],
  ["conv2d", "conv2d", [1, 3, 224, 224, 64, 7, 7, 2, 3]],
  ["conv2d-packed", "conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]],
  ["conv2d-packed", "conv2d", [1, 3, 224, 224, 64, 7, 7, 2, 3]],
  ["conv2d-packed", "conv2d", [1, 5, 9, 37, 13, 3, 3, 1, 0]],
  ["conv2d-rich", "conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]],
  ["conv2d-rich", "conv2d", [1, 3, 11, 13, 5, 3, 3, 2, 1]],
];

Deno.test("every sampled point of every template is a legal schedule whose trace replays", () => {
  for (const [name, workload, shape] of CASES) {
    const t = templateSpace(name, createWorkload(workload, shape));
    const prng = createPrng(2);
    for (let i = 0; i < 40; i++) {
      const point = t.space.random(prng);
      const c = t.candidateOf(point);
      assert.deepEqual(c.knobs, point);
      const trace = parseTrace(JSON.stringify(c.trace));
      assert.ok(trace.insts.every((inst) => !inst.op.startsWith("sample_")), "no sampling");
      assert.doesNotThrow(
        () => lower(replayTrace(trace, { prng: createPrng(0) })),
        `${name} ${point}`,
      );
    }
  }
});

Deno.test("the conv2d template has the four knobs of the RL study", () => {
  const t = templateSpace("conv2d", createWorkload("conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]));
  assert.deepEqual(t.space.knobs.map((k) => k.name), [
    "tile_ic",
    "tile_oc",
    "tile_ow",
    "unroll_kw",
  ]);
  // 64 has 7 divisors, 56 has 8: 7 * 7 * 8 * 2 points.
  assert.equal(t.space.size, 7 * 7 * 8 * 2);
  assert.deepEqual(t.space.entity(t.space.point(0))[0], ["tile_ic", "sp", [1, 64]]);
});

Deno.test("templateSpace names unknown templates and mismatched workloads", () => {
  const w = createWorkload("matmul", [8, 8, 8]);
  assert.throws(() => templateSpace("nope", w), /Unknown template "nope"/);
  assert.throws(() => templateSpace("conv2d", w), /schedules conv2d, not matmul/);
});

Deno.test("matmul-packed exposes register tile, cache blocks, packing and parallel knobs", () => {
  const t = templateSpace("matmul-packed", createWorkload("matmul", [1024, 1024, 1024]));
  const names = t.space.knobs.map((k) => k.name);
  assert.deepEqual(names, ["mr", "nr", "mc", "nc", "pack", "order", "unroll_k", "parallel", "kc"]);
  const knob = (n: string) => t.space.knobs.find((k) => k.name === n)!.options;
  assert.ok(knob("mr").includes(6) && knob("mr").includes(8));
  assert.ok(knob("nr").includes(32) && knob("nr").includes(64));
  // The recommended point packs both operands into k-major panels.
  const point = t.space.knobs.map((k) =>
    k.options.indexOf(
      ({
        mr: 6,
        nr: 64,
        mc: 8,
        nc: 4,
        pack: "AB",
        order: 0,
        unroll_k: 1,
        parallel: 1,
        kc: 0,
      } as Record<
        string,
        unknown
      >)[k.name],
    )
  );
  const ops = t.candidateOf(point).trace!.insts.map((i) => i.op);
  assert.equal(ops.filter((o) => o === "cache_read").length, 2);
  assert.equal(ops.filter((o) => o === "transform_layout").length, 2);
  assert.ok(ops.includes("cache_write") && ops.includes("parallel"));
  // KC blocks: no cache_write; the reduction is split and B is packed per block.
  const kc = t.candidateOf(point.map((p, i) => t.space.knobs[i].name === "kc" ? 2 : p));
  assert.ok(!kc.trace!.insts.some((i) => i.op === "cache_write"));
  assert.ok(kc.trace!.insts.some((i) => i.op === "compute_at" && i.args.loop === "k.0"));
});

Deno.test("conv2d-packed exposes a register tile, filter packing and the parallel loop", () => {
  const conv2 = templateSpace(
    "conv2d-packed",
    createWorkload("conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]),
  );
  assert.deepEqual(conv2.space.knobs.map((k) => k.name), [
    "fr",
    "yr",
    "xr",
    "pack",
    "order",
    "unroll_kw",
    "parallel",
    "prefetch",
    "pad_parallel",
  ]);
  // Register tiles beyond the 32 vector registers are not in the space.
  const at = (values: Record<string, unknown>) =>
    conv2.space.knobs.map((k) => k.options.indexOf(values[k.name] ?? k.options[0]));
  assert.ok(conv2.space.isValid(at({ fr: 16, yr: 2, xr: 16 })));
  assert.ok(!conv2.space.isValid(at({ fr: 16, yr: 4, xr: 64 })));
  // Without padding there is no padding copy to parallelize.
  const unpadded = templateSpace(
    "conv2d-packed",
    createWorkload("conv2d", [1, 8, 9, 9, 8, 3, 3, 1, 0]),
  );
  assert.ok(!unpadded.space.knobs.some((k) => k.name === "pad_parallel"));
  const first = conv2.space.knobs.map(() => 0);
  const packW = conv2.space.knobs.map((k) => k.name === "pack" ? k.options.indexOf("W") : 0);
  const ops = (p: number[]) => conv2.candidateOf(p).trace!.insts.map((i) => i.op);
  assert.ok(ops(first).includes("cache_write") && !ops(first).includes("cache_read"));
  assert.deepEqual(
    ops(packW).filter((o) => o === "cache_read" || o === "transform_layout"),
    ["cache_read", "transform_layout"],
  );
});
