import assert from "node:assert/strict";
import { openclProgram } from "../ir/codegen_opencl.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { matmul } from "../ir/workloads.ts";
import { registerTiledMatmul } from "../ir/testing_gpu.ts";
import { OpenCLError } from "./_opencl_ffi.ts";
import { fileURLToPath } from "node:url";
import { checkGpuSchedules, OpenCLCompilerCrash, OpenCLRuntime } from "./opencl_runner.ts";

/** A GPU matmul: 4x8 threads per block, a 3x2 register tile, k unrolled by 4. */
const tiled = (M: number, N: number, K: number) =>
  registerTiledMatmul(M, N, K, { threads: [4, 8], tile: [3, 2], kInner: 4 });

Deno.test("OpenCL on PoCL: a tiled GPU matmul matches the reference; a wrong one does not", () => {
  const rt = OpenCLRuntime.open();
  try {
    assert.ok(rt.platformName.length > 0 && rt.maxWorkGroupSize >= 256);
    const [ok, rejected] = checkGpuSchedules(rt, [
      tiled(37, 29, 23),
      new Schedule(matmul(8, 8, 8), { prng: createPrng(0) }),
    ]);
    assert.equal(ok.ok, true, ok.message);
    assert.equal(rejected.ok, false);
    assert.match(rejected.message, /binds no loop to a GPU thread axis/);
    // The same program with its accumulation dropped computes something else.
    const program = openclProgram(lower(tiled(9, 10, 11)));
    const broken = { ...program, source: program.source.replace("+=", "=") };
    const built = rt.build(broken.source);
    const a = new Float32Array(99).fill(1), b = new Float32Array(110).fill(1);
    const [c] = rt.execute(built, broken, [a, b]);
    rt.release(built);
    assert.equal(c.length, 90);
    assert.equal(c[0], 1, "only the last product is kept");
    const good = rt.build(program.source);
    assert.equal(rt.execute(good, program, [a, b])[0][0], 11);
    rt.release(good);
  } finally {
    rt.close();
  }
});

Deno.test("an OpenCL build error carries the build log", () => {
  const rt = OpenCLRuntime.open();
  try {
    assert.throws(
      () => rt.build("__kernel void k(__global float *x) { x[0] = undeclared_name; }"),
      (e) =>
        e instanceof OpenCLError && /CL_BUILD_PROGRAM_FAILURE \(-11\)/.test(e.message) &&
        /undeclared_name/.test(e.message),
    );
  } finally {
    rt.close();
  }
});

Deno.test("a compiler crash fails only its program's check: the process and the batch's other programs go on", () => {
  // A probe that aborts on the batch's second program, as LLVM's assertions abort PoCL.
  const buildProbe = fileURLToPath(new URL("./_crashing_opencl_probe.ts", import.meta.url));
  const rt = OpenCLRuntime.open({ buildProbe });
  try {
    const [a, b, c] = checkGpuSchedules(rt, [tiled(37, 29, 23), tiled(9, 10, 11), tiled(16, 8, 4)]);
    assert.equal(a.ok, true, a.message);
    assert.equal(c.ok, true, c.message);
    assert.equal(b.ok, false);
    assert.equal(b.failure, "build");
    assert.match(
      b.message,
      /^the OpenCL compiler crashed \(killed by SIGABRT\): Could not find a dominating alternative variable/,
    );
    const p1 = openclProgram(lower(tiled(9, 10, 11)), { prefix: "p1" });
    assert.throws(() => rt.build(p1.source), OpenCLCompilerCrash);
  } finally {
    rt.close();
  }
});
