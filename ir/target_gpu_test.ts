import assert from "node:assert/strict";
import type { Kernel } from "./ast.ts";
import { ScheduleError } from "./errors.ts";
import { lower } from "./lower.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { gpuLaunches, H100, verifyGpu, walk } from "./target_gpu.ts";
import { parseTrace, printTrace, replayTrace, traceOf } from "./trace.ts";
import { sharedTileMatmul } from "./testing_gpu.ts";
import { matmul } from "./workloads.ts";

const sched = () => new Schedule(matmul(64, 64, 64), { prng: createPrng(0) });

Deno.test("H100 limits", () => {
  assert.equal(H100.arch, "sm_90");
  assert.equal(H100.maxThreadsPerBlock, 1024);
  assert.equal(H100.maxSharedBytesPerBlock, 48 * 1024);
  assert.equal(H100.maxSharedBytesPerBlockOptin, 227 * 1024);
  assert.equal(H100.registersPerSM, 65536);
  assert.equal(H100.warpSize, 32);
});

Deno.test("verifyGpu rejects more threads per block than the target allows", () => {
  const sch = sched();
  sch.bind("C", "i", "threadIdx.y");
  sch.bind("C", "j", "threadIdx.x");
  assert.deepEqual(gpuLaunches(lower(sch))[0].block, [64, 64, 1]);
  // 64 x 64 = 4096 threads: over 1024.
  assert.throws(
    () => verifyGpu(sch),
    (e) =>
      e instanceof ScheduleError &&
      /4096 threads per block \(threadIdx extents 64 x 64 x 1\), more than the 1024 of H100/.test(
        e.message,
      ),
  );
});

Deno.test("verifyGpu accepts 1024 threads and rejects a block dimension over its limit", () => {
  const ok = sched();
  const [i0, i1] = ok.split("C", "i", [null, 16]);
  ok.reorder("C", [i0, "j", i1]);
  ok.bind("C", i0, "blockIdx.x");
  ok.bind("C", i1, "threadIdx.y");
  ok.bind("C", "j", "threadIdx.x");
  assert.deepEqual(verifyGpu(ok).launches[0].block, [64, 16, 1]);
  const z = new Schedule(matmul(128, 8, 8), { prng: createPrng(0) });
  z.bind("C", "i", "threadIdx.z");
  assert.throws(() => verifyGpu(z), /threadIdx\.z extent 128 exceeds 64/);
});

Deno.test("bound loops must be spatial, bound once per axis, and not split afterwards", () => {
  const sch = sched();
  assert.throws(
    () => sch.bind("C", "k", "threadIdx.x"),
    /Cannot bind loop "k" of stage "C" to threadIdx.x: it is a reduction loop/,
  );
  sch.bind("C", "i", "blockIdx.x");
  assert.throws(() => sch.bind("C", "j", "blockIdx.x"), /loop "i" is bound to it already/);
  assert.throws(
    () => sch.bind("C", "j", "warp.x" as "blockIdx.x"),
    /unknown thread axis "warp.x"/,
  );
  assert.throws(() => sch.split("C", "i", [null, 4]), /it is marked bind/);
  assert.throws(() => sch.parallel("C", "i"), /already marked bind/);
  assert.equal(sch.trace.filter((i) => i.op === "bind").length, 1, "failed binds are not recorded");
});

Deno.test("verifyGpu rejects unbound stages, parallel loops and racing stores", () => {
  assert.throws(() => verifyGpu(sched()), /binds no loop to a GPU thread axis/);
  const par = sched();
  par.bind("C", "i", "blockIdx.x");
  par.parallel("C", "j");
  assert.throws(() => verifyGpu(par), /marked parallel, a CPU annotation/);
  // A store outside the thread loop of its kernel: every thread would accumulate into C.
  const racing: Kernel = {
    params: [{ buf: "C", tensor: "C", size: 4, role: "output" }],
    temps: [],
    body: [
      { k: "for", v: "t", extent: 4, kind: "bind", thread: "threadIdx.x", body: [] },
      {
        k: "store",
        buf: "C",
        index: { k: "int", v: 0 },
        value: { k: "float", v: 1 },
        accumulate: true,
      },
    ],
  };
  assert.throws(
    () => verifyGpu(racing),
    /accumulates into C outside loops bound to threadIdx.x: .*the reduction would race/,
  );
  assert.equal(gpuLaunches(racing)[0].block[0], 4);
});

Deno.test("a stage computed at a loop in per-thread memory may not bind loops", () => {
  const sch = sched();
  const local = sch.cacheWrite("C");
  sch.bind("C", "i", "blockIdx.x");
  sch.bind("C", "j", "threadIdx.x");
  sch.computeAt(local, "C", "i");
  sch.bind(local, "j", "threadIdx.y");
  assert.throws(() => verifyGpu(sch), /in per-thread memory but binds thread axes/);
});

Deno.test("bind is recorded in the trace, printed, parsed and replayed", () => {
  const sch = sched();
  const [i0, i1] = sch.split("C", "i", [null, 8]);
  sch.bind("C", i0, "blockIdx.x");
  sch.bind("C", i1, "threadIdx.x");
  const trace = parseTrace(JSON.stringify(traceOf(sch)));
  assert.deepEqual(trace.insts[1], {
    op: "bind",
    args: { stage: "C", loop: "i.0", thread_axis: "blockIdx.x" },
  });
  assert.match(printTrace(trace), /sch\.bind\("C", "i\.1", "threadIdx\.x"\)/);
  const again = replayTrace(trace, { prng: createPrng(5) });
  assert.deepEqual(verifyGpu(again).launches[0].block, [8, 1, 1]);
  assert.throws(
    () =>
      parseTrace({
        ...trace,
        insts: [{ op: "bind", args: { stage: "C", loop: "i", thread_axis: 3 } }],
      }),
    /thread_axis must be a stage or loop name/,
  );
});

Deno.test("shared-memory tiles cover the whole block: regions relax the thread indices", () => {
  const sch = sharedTileMatmul();
  // Per k0 step the block needs 32 rows of A (8 threads x 4) and 8 columns of k.
  assert.deepEqual(sch.stage("A_shared").roots.map((l) => l.extent), [32, 8]);
  assert.deepEqual(sch.stage("B_shared").roots.map((l) => l.extent), [8, 32]);
  const { kernel, launches } = verifyGpu(sch);
  assert.deepEqual([launches[0].grid, launches[0].block], [[2, 2, 1], [8, 8, 1]]);
  assert.equal(launches[0].sharedBytes, 2 * 32 * 8 * 4);
  let syncs = 0;
  walk(kernel.body, (s) => {
    if (s.k === "sync") syncs++;
  });
  assert.equal(syncs, 4, "a barrier before and after each copy");
  assert.match(printTrace(traceOf(sch)), /sch\.cache_read\("A", "shared", readers=\["C_local"\]\)/);
  const again = replayTrace(parseTrace(JSON.stringify(traceOf(sch))), { prng: createPrng(3) });
  assert.equal(verifyGpu(again).launches[0].sharedBytes, 2048);
});

Deno.test("verifyGpu rejects divergent barriers, too much shared memory and misplaced copies", () => {
  // 37 rows in 4x2 tiles: the thread tiles overshoot and the copy sits under a thread guard.
  assert.throws(
    () => verifyGpu(sharedTileMatmul(37, 29, 23, 4, 2)),
    /barrier is inside code only some threads of a block run/,
  );
  // 32 threads x 4 rows x 128-deep k tiles of A and B: 2 x 64 KiB.
  const big = new Schedule(matmul(128, 128, 128), { prng: createPrng(0) });
  const as = big.cacheRead("A", "shared", ["C"]);
  const [i0, i1] = big.split("C", "i", [null, 32]);
  big.reorder("C", [i0, i1, "j", "k"]);
  big.bind("C", i0, "blockIdx.x");
  big.bind("C", i1, "threadIdx.x");
  big.computeAt(as, "C", i0);
  assert.deepEqual(big.stage(as).roots.map((l) => l.extent), [32, 128]);
  const [, tx] = big.split(as, "ax0", [null, 32]);
  big.bind(as, tx, "threadIdx.x");
  assert.equal(verifyGpu(big).launches[0].sharedBytes, 16384);
  const huge = new Schedule(matmul(256, 8, 256), { prng: createPrng(0) });
  const hs = huge.cacheRead("A", "shared", ["C"]);
  const [h0, h1] = huge.split("C", "i", [null, 64]);
  huge.bind("C", h0, "blockIdx.x");
  huge.bind("C", h1, "threadIdx.x");
  huge.computeAt(hs, "C", h0);
  huge.bind(hs, huge.split(hs, "ax0", [null, 64])[1], "threadIdx.x");
  assert.throws(
    () => verifyGpu(huge),
    /uses 65536 bytes of shared memory per block, more than the 49152 of H100/,
  );
  assert.equal(verifyGpu(huge, H100, { sharedOptin: true }).launches[0].sharedBytes, 65536);
  // A copy left at the root, and one bound to blocks.
  const root = sched();
  root.cacheRead("A", "shared", ["C"]);
  root.bind("C", "i", "blockIdx.x");
  assert.throws(() => verifyGpu(root), /must be computed at a loop of its reader/);
  // A copy that leaves threadIdx.y out: threads would write the same elements.
  const partial = sharedTileMatmul();
  const p2 = new Schedule(matmul(64, 64, 32), { prng: createPrng(0) });
  const trace = traceOf(partial).insts.filter((x) =>
    !(x.op === "bind" && x.args.stage === "B_shared" && x.args.thread_axis === "threadIdx.y")
  );
  for (const inst of trace) p2.apply(inst);
  assert.throws(() => verifyGpu(p2), /copy into shared T_B_shared is not bound to threadIdx.y/);
});

Deno.test("cache_read names what it cannot do", () => {
  const sch = sched();
  assert.throws(() => sch.cacheRead("X", "shared", ["C"]), /"X" .*no such input or stage/);
  assert.throws(
    () => sch.cacheRead("A", "local" as "shared", ["C"]),
    /unknown scope "local"/,
  );
  sch.cacheRead("A", "shared", ["C"]);
  assert.throws(() => sch.cacheRead("A", "shared", ["C"]), /"A_shared" exists/);
  assert.throws(() => sch.cacheRead("B", "shared", ["A_shared"]), /does not read it/);
});
