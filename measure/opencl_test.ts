import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { traceOf } from "../ir/trace.ts";
import { matmul } from "../ir/workloads.ts";
import { registerTiledMatmul } from "../ir/testing_gpu.ts";
import { createOpenCLMeasurer } from "./opencl.ts";

/** A GPU matmul: blocks and threads bound, accumulator in registers. */
const tiled = (M: number, N: number, K: number) =>
  registerTiledMatmul(M, N, K, { threads: [4, 8], tile: [3, 2] });

Deno.test("createOpenCLMeasurer() checks GPU schedules on PoCL: correct ones are valid, a CPU schedule is rejected", async () => {
  const m = createOpenCLMeasurer({ seed: 3 });
  try {
    const arrived: number[] = [];
    const [good, cpu] = await m.measure([
      { trace: traceOf(tiled(37, 29, 23)) },
      { trace: traceOf(new Schedule(matmul(8, 8, 8), { prng: createPrng(0) })) },
    ], { onResult: (i) => arrived.push(i) });
    assert.equal(good.errorKind, "none", good.error ?? "");
    assert.deepEqual(good.times, [], "PoCL on the CPU is not timed");
    assert.equal(cpu.errorKind, "instantiation_error");
    assert.match(cpu.error!, /binds no loop to a GPU thread axis/);
    assert.deepEqual(arrived.sort(), [0, 1]);
    await assert.rejects(m.measure([{ knobs: [1] }]), /has no trace/);
  } finally {
    await m.close();
  }
});
