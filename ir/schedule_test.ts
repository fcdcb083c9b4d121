import assert from "node:assert/strict";
import { ScheduleError } from "./errors.ts";
import { lower } from "./lower.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { parseTrace, printTrace, traceOf } from "./trace.ts";
import { generateC } from "./codegen_c.ts";
import { assertTraceRoundTrip } from "./testing.ts";
import { conv2d, denseBiasRelu, matmul, type Workload } from "./workloads.ts";

const sched = (w: Workload) => new Schedule(w, { prng: createPrng(1) });

/** Asserts `f` throws a ScheduleError whose message matches every pattern. */
function throwsSchedule(f: () => unknown, ...patterns: RegExp[]): ScheduleError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ScheduleError, `expected a ScheduleError, got ${caught}`);
  for (const p of patterns) assert.match(caught.message, p);
  return caught;
}

Deno.test("split names the loop when it is unknown or not a leaf", () => {
  const sch = sched(matmul(37, 29, 23));
  throwsSchedule(() => sch.split("C", "zz", [null, 4]), /"zz"/, /stage "C"/, /leaves: i, j, k/);
  assert.deepEqual(sch.split("C", "i", [null, 8]), ["i.0", "i.1"]);
  throwsSchedule(() => sch.split("C", "i", [null, 2]), /No leaf loop "i" in stage "C"/);
  throwsSchedule(() => sch.split("Nope", "i", [null, 2]), /No stage "Nope"/);
  assert.deepEqual(sch.loops("C"), ["i.0", "i.1", "j", "k"]);
});

Deno.test("split checks its factors", () => {
  const sch = sched(matmul(37, 29, 23));
  throwsSchedule(() => sch.split("C", "i", [2, 4]), /loop "i" of stage "C"/, /cover 8 < extent 37/);
  throwsSchedule(() => sch.split("C", "i", [null, null]), /at most one factor may be null/);
  throwsSchedule(() => sch.split("C", "i", [37]), /at least two factors/);
  throwsSchedule(() => sch.split("C", "i", [null, 0]), /positive integers/);
  throwsSchedule(() => sch.split("C", "i", [null, 2.5]), /positive integers/);
  // Imperfect tiles are allowed: 5 * 8 = 40 >= 37.
  assert.deepEqual(sch.split("C", "i", [5, 8]), ["i.0", "i.1"]);
  assert.deepEqual(sch.stage("C").leaves.map((l) => l.extent), [5, 8, 29, 23]);
  // A null factor is inferred: ceil(29 / (2 * 4)) = 4.
  sch.split("C", "j", [2, null, 4]);
  assert.deepEqual(sch.stage("C").leaves.map((l) => l.extent), [5, 8, 2, 4, 4, 23]);
  // Nothing is recorded for the failed calls.
  assert.deepEqual(sch.trace.map((t) => t.op), ["split", "split"]);
});

Deno.test("fuse needs consecutive loops of one kind", () => {
  const sch = sched(matmul(16, 16, 16));
  throwsSchedule(() => sch.fuse("C", ["i", "k"]), /loop "k" of stage "C"/, /consecutive/);
  throwsSchedule(() => sch.fuse("C", ["j", "i"]), /consecutive, outer first/);
  throwsSchedule(() => sch.fuse("C", ["j", "k"]), /spatial loop with a reduction loop/);
  throwsSchedule(() => sch.fuse("C", ["i"]), /at least two loops/);
  assert.equal(sch.fuse("C", ["i", "j"]), "i.j.fused");
  assert.deepEqual(sch.stage("C").leaves.map((l) => [l.name, l.extent]), [
    ["i.j.fused", 256],
    ["k", 16],
  ]);
});

Deno.test("reorder permutes the named loops in place and rejects duplicates", () => {
  const sch = sched(matmul(8, 8, 8));
  sch.split("C", "j", [null, 4]);
  sch.reorder("C", ["k", "i"]);
  assert.deepEqual(sch.loops("C"), ["k", "j.0", "j.1", "i"]);
  throwsSchedule(() => sch.reorder("C", ["k", "k"]), /named twice/);
  throwsSchedule(() => sch.reorder("C", ["k", "q"]), /No leaf loop "q"/);
});

Deno.test("vectorize and parallel of a reduction loop name loop and stage", () => {
  const sch = sched(matmul(16, 16, 16));
  throwsSchedule(
    () => sch.vectorize("C", "k"),
    /Cannot vectorize loop "k" of stage "C"/,
    /reduction/,
  );
  throwsSchedule(
    () => sch.parallel("C", "k"),
    /Cannot parallel loop "k" of stage "C"/,
    /reduction/,
  );
  sch.unroll("C", "k"); // unrolling a reduction is fine
  throwsSchedule(() => sch.unroll("C", "k"), /already marked unroll/);
  throwsSchedule(() => sch.split("C", "k", [null, 4]), /marked unroll/);
});

Deno.test("vectorize and unroll limits", () => {
  const sch = sched(matmul(16, 300, 16));
  throwsSchedule(() => sch.vectorize("C", "j"), /loop "j" of stage "C": extent 300 exceeds 64/);
  throwsSchedule(() => sch.unroll("C", "j"), /extent 300 exceeds 256/);
  throwsSchedule(() => sch.autoUnroll("C", 5000), /not in \[0, 4096\]/);
  throwsSchedule(() => sch.autoUnroll("C", 1.5), /integer/);
});

Deno.test("vectorize of a loop that is not innermost throws at lower()", () => {
  const sch = sched(matmul(16, 16, 16));
  sch.reorder("C", ["i", "k", "j"]);
  sch.vectorize("C", "j");
  lower(sch); // innermost: fine
  const bad = sched(matmul(16, 16, 16));
  bad.vectorize("C", "j");
  throwsSchedule(() => lower(bad), /vectorize loop "j" of stage "C"/, /not the innermost/, /"k"/);
});

Deno.test("nested parallel loops throw at lower()", () => {
  const sch = sched(matmul(16, 16, 16));
  sch.parallel("C", "i");
  sch.parallel("C", "j");
  throwsSchedule(() => lower(sch), /parallel loop "j" of stage "C"/, /nested/);
  // Also across stages: a producer's parallel loop inside its consumer's.
  const d = sched(denseBiasRelu(8, 8, 8));
  d.parallel("Y", "i");
  d.computeAt("D", "Y", "j");
  d.parallel("D", "j");
  throwsSchedule(() => lower(d), /parallel loop "j" of stage "D"/, /nested/);
});

Deno.test("compute_inline of a reduction or an output throws", () => {
  const sch = sched(denseBiasRelu(8, 8, 8));
  throwsSchedule(() => sch.computeInline("D"), /compute_inline stage "D"/, /reduction/);
  throwsSchedule(() => sch.computeInline("Y"), /compute_inline stage "Y"/, /output/);
  const conv = sched(conv2d(1, 2, 6, 6, 2, 3, 3, 1, 1));
  conv.split("P", "x", [null, 4]);
  throwsSchedule(() => conv.computeInline("P"), /already transformed/);
});

Deno.test("compute_at into a stage that does not consume the producer throws", () => {
  const sch = sched(denseBiasRelu(8, 8, 8));
  const local = sch.cacheWrite("D");
  assert.equal(local, "D_local");
  throwsSchedule(
    () => sch.computeAt(local, "Y", "i"),
    /compute_at stage "D_local" at loop "i" of "Y"/,
    /consumers are "D"/,
  );
  throwsSchedule(() => sch.computeAt("Y", "D", "i"), /"Y"/, /output/);
  throwsSchedule(() => sch.computeAt(local, "D", "q"), /No leaf loop "q" in stage "D"/);
  sch.computeAt(local, "D", "j");
  lower(sch);
});

Deno.test("compute_at resizes the producer; its attach loop can no longer be split or fused", () => {
  const sch = sched(denseBiasRelu(13, 17, 19));
  sch.split("Y", "j", [null, 8]);
  sch.computeAt("D", "Y", "j.0");
  assert.deepEqual(sch.stage("D").leaves.map((l) => l.extent), [1, 8, 19]);
  throwsSchedule(() => sch.split("Y", "j.0", [null, 2]), /split loop "j.0" of stage "Y"/, /"D"/);
  throwsSchedule(() => sch.fuse("Y", ["i", "j.0"]), /fuse loop "j.0" of stage "Y"/, /"D"/);
  sch.split("D", "k", [null, 4]); // the producer's own loops are free
  throwsSchedule(() => sch.computeAt("D", "Y", "i"), /before transforming the loops of "D"/);
  throwsSchedule(() => sch.computeRoot("D"), /transformed after compute_at/);
  lower(sch);
});

Deno.test("a stage with a producer attached to it cannot be moved", () => {
  const sch = sched(denseBiasRelu(13, 17, 19));
  const local = sch.cacheWrite("D");
  sch.computeAt(local, "D", "i");
  throwsSchedule(() => sch.computeAt("D", "Y", "j"), /"D_local" is computed at one of its loops/);
  throwsSchedule(() => sch.computeInline("D"), /another stage is attached to it/);
  // The other order works, and then D cannot go back to the root without orphaning D_local.
  const ok = sched(denseBiasRelu(13, 17, 19));
  ok.cacheWrite("D");
  ok.computeAt("D", "Y", "j");
  ok.computeAt("D_local", "D", "i");
  throwsSchedule(() => ok.computeRoot("D"), /compute_root stage "D"/, /"D_local" is computed/);
  lower(ok);
});

Deno.test("compute_inline after compute_at, then compute_root, computes the whole tensor", () => {
  const sch = sched(conv2d(1, 3, 11, 13, 5, 3, 3, 2, 1));
  sch.computeAt("P", "O", "y");
  assert.deepEqual(sch.stage("P").leaves.map((l) => l.extent), [1, 3, 3, 15]);
  sch.computeInline("P");
  sch.computeRoot("P");
  assert.deepEqual(sch.stage("P").leaves.map((l) => l.extent), [1, 3, 13, 15]);
});

Deno.test("cache_write only applies to an untransformed stage", () => {
  const sch = sched(matmul(16, 16, 16));
  sch.split("C", "i", [null, 4]);
  throwsSchedule(() => sch.cacheWrite("C"), /cache_write stage "C"/, /before other primitives/);
  const ok = sched(matmul(16, 16, 16));
  assert.equal(ok.cacheWrite("C"), "C_local");
  assert.deepEqual(ok.stages.map((s) => [s.name, s.scope]), [["C_local", "local"], [
    "C",
    "global",
  ]]);
  throwsSchedule(() => ok.cacheWrite("C_local"), /already a local cache/);
  throwsSchedule(() => ok.cacheWrite("C"), /"C_local" exists/);
});

Deno.test("fuse_axes merges an output's axes into one of their extents' product", () => {
  const sch = sched(conv2d(1, 4, 9, 9, 8, 1, 1, 2, 0));
  assert.equal(sch.fuseAxes("O", ["y", "x"]), "yx");
  const o = sch.stage("O");
  assert.deepEqual(o.shape, [1, 8, 25]);
  assert.deepEqual(sch.loops("O"), ["n", "f", "yx", "rc", "ry", "rx"]);
  // The merged axis tiles as one: 25 positions in tiles of 6, the tile spanning rows.
  const local = sch.cacheWrite("O");
  const [po, pi] = sch.split("O", "yx", [null, 6]);
  sch.computeAt(local, "O", po);
  sch.unroll("O", pi);
  assertTraceRoundTrip(sch);
  // The body reads the input at row (yx / 5) * 2 + ry of 9 columns, column (yx % 5) * 2 + rx.
  const c = generateC(lower(sch));
  assert.match(c, /\/ 5\) \* 2\) \+ v_O_local_ry(_2)?\) \* 9\)/);
  assert.match(c, /% 5\) \* 2\) \+ v_O_local_rx(_2)?\)\)\]/);
});

Deno.test("fuse_axes refuses what it cannot merge", () => {
  throwsSchedule(() => sched(matmul(8, 8, 8)).fuseAxes("C", ["i"]), /at least two axes/);
  throwsSchedule(() => sched(matmul(8, 8, 8)).fuseAxes("C", ["i", "q"]), /no axis "q"/);
  throwsSchedule(
    () => sched(conv2d(1, 2, 6, 6, 2, 1, 1, 1, 0)).fuseAxes("O", ["x", "y"]),
    /consecutive, outer first/,
  );
  const split = sched(matmul(8, 8, 8));
  split.split("C", "i", [null, 2]);
  throwsSchedule(() => split.fuseAxes("C", ["i", "j"]), /before other primitives/);
  // The padding stage is read by the convolution: its buffer's shape is not its own to change.
  throwsSchedule(
    () => sched(conv2d(1, 2, 6, 6, 2, 3, 3, 1, 1)).fuseAxes("P", ["y", "x"]),
    /stage "O" reads it/,
  );
});

Deno.test("sample_perfect_tile validates a given decision", () => {
  const sch = sched(matmul(16, 16, 16));
  const inst = (decision: unknown) => ({
    op: "sample_perfect_tile",
    args: { stage: "C", loop: "i", n: 2, max_innermost: 8 },
    decision,
  });
  throwsSchedule(() => sch.apply(inst([3, 5])), /product 15 is not the extent 16/, /loop "i"/);
  throwsSchedule(() => sch.apply(inst([1, 16])), /innermost 16 exceeds 8/);
  throwsSchedule(() => sch.apply(inst([16])), /expected 2 factors/);
  throwsSchedule(() => sch.apply(inst("x")), /expected 2 factors/);
  assert.deepEqual(sch.apply(inst([2, 8])), [2, 8]);
  // A sampled decision is recorded and can be referred to.
  const rv = sch.samplePerfectTile("C", "j", 3, 4);
  const factors = sch.value(rv) as number[];
  assert.equal(factors.reduce((a, b) => a * b, 1), 16);
  assert.deepEqual(sch.trace[rv.$ref].decision, factors);
  sch.split("C", "j", rv);
  assert.deepEqual(sch.stage("C").leaves.slice(1, 4).map((l) => l.extent), factors);
  throwsSchedule(() => sch.split("C", "i", { $ref: 99 }), /missing value \$99/);
});

Deno.test("sample_categorical and sample_compute_location validate decisions", () => {
  const sch = sched(denseBiasRelu(8, 8, 8));
  const cat = (decision: unknown) => ({
    op: "sample_categorical",
    args: { candidates: [0, 16, 64], probs: [1, 1, 1] },
    decision,
  });
  assert.equal(sch.apply(cat(2)), 64);
  throwsSchedule(() => sch.apply(cat(3)), /out of range/);
  throwsSchedule(() => sch.sampleCategorical([1, 2], [1]), /matching probabilities/);
  const loc = sch.sampleComputeLocation("D");
  assert.ok(["root", "i", "j"].includes(sch.value(loc) as string));
  throwsSchedule(
    () => sch.apply({ op: "sample_compute_location", args: { stage: "D" }, decision: 9 }),
    /out of range/,
  );
  throwsSchedule(() => sch.apply({ op: "frobnicate", args: {} }), /Unknown instruction/);
});

Deno.test("a schedule rejects duplicate tensor names", () => {
  const w = matmul(4, 4, 4);
  const twice = { ...w, inputs: [w.inputs[0], w.inputs[0]] };
  throwsSchedule(() => sched(twice), /"A" is used twice/);
});

Deno.test("prefetch records the tensor, loop and offset, and rejects what it cannot do", () => {
  const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(1) });
  const [k0] = sch.split("C", "k", [null, 8]);
  sch.prefetch("C", "B", k0, 2);
  const trace = traceOf(sch);
  assert.deepEqual(trace.insts.at(-1), {
    op: "prefetch",
    args: { stage: "C", tensor: "B", loop: k0, offset: 2 },
  });
  assert.match(printTrace(trace), /sch\.prefetch\("C", "B", loop="k\.0", offset=2\)/);
  assert.deepEqual(parseTrace(JSON.stringify(trace)), trace);
  assert.throws(() => sch.prefetch("C", "X", k0, 2), /does not read it/);
  assert.throws(() => sch.prefetch("C", "A", k0, 0), /offset 0 is not in 1\.\.64/);
});
