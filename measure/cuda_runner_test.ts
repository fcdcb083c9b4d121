import assert from "node:assert/strict";
import { join } from "node:path";
import { generateC } from "../ir/codegen_c.ts";
import { generateCuda } from "../ir/codegen_cuda.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { matmul } from "../ir/workloads.ts";
import { referenceSource, signatureOf, toleranceOf } from "./kernel_source.ts";
import { createBuilder } from "./builder.ts";
import { cudaHarness } from "./cuda_harness.ts";
import { createCudaRunner, deviceMessage } from "./cuda_runner.ts";
import { createNvccBuilder } from "./nvcc_builder.ts";
import { referencePath } from "./reference_cache.ts";
import type { MeasureInput } from "./types.ts";

const W = matmul(24, 20, 12);

function schedule(): Schedule {
  const sch = new Schedule(W, { prng: createPrng(0) });
  sch.bind("C", "i", "blockIdx.x");
  sch.bind("C", "j", "threadIdx.x");
  return sch;
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tb-cuda-runner-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Measurement inputs of `artifact` against the C reference built in `dir`. */
async function inputsFor(dir: string, artifact: string, n: number): Promise<MeasureInput[]> {
  const [ref] = await createBuilder({ cacheDir: dir }).build([{ source: referenceSource(W) }]);
  assert.equal(ref.errorKind, "none", ref.error ?? "");
  const { atol, rtol } = toleranceOf(W);
  return Array.from({ length: n }, (_, seed) => ({
    artifact,
    reference: ref.artifact!,
    signature: signatureOf(W),
    seed,
    atol,
    rtol,
  }));
}

Deno.test("a generated program runs where the device status says: no_device without one, checked and timed with one", async () => {
  await withDir(async (dir) => {
    const kernel = lower(schedule());
    const [built] = await createNvccBuilder({ cacheDir: dir }).build([
      { source: generateCuda(kernel) + cudaHarness(kernel) },
    ]);
    assert.equal(built.errorKind, "none", built.error ?? "");
    const runner = createCudaRunner({ referenceDir: join(dir, "ref"), minRepeatMs: 1 });
    const device = await runner.device(built.artifact!);
    assert.ok(device);
    const results = await runner.run(await inputsFor(dir, built.artifact!, 3));
    assert.equal(results.length, 3);
    if (!device.ok) {
      // No driver or device (this machine): nothing runs, one message for the batch.
      assert.match(device.message, /^(no CUDA driver|no CUDA device|CUDA runtime unusable)/);
      for (const r of results) {
        assert.equal(r.errorKind, "no_device");
        assert.deepEqual(r.times, []);
        assert.equal(r.runSeconds, 0);
        assert.equal(r.error, device.message);
      }
      if (device.code === 35) {
        assert.match(
          device.message,
          /^no CUDA driver \(cudaErrorInsufficientDriver, 35\): CUDA driver version is insufficient/,
        );
      }
    } else {
      // A device: every seed is checked against the reference and timed.
      for (const r of results) {
        assert.equal(r.errorKind, "none", r.error ?? "");
        assert.equal(r.times.length, 3);
        for (const t of r.times) assert.ok(t > 0 && Number.isFinite(t), `time ${t}`);
      }
    }
    await runner.close();
  });
});

Deno.test("deviceMessage names the CUDA error", () => {
  assert.match(deviceMessage(100, "no CUDA-capable device is detected"), /^no CUDA device/);
  assert.match(deviceMessage(35, "x"), /^no CUDA driver \(cudaErrorInsufficientDriver, 35\)/);
  assert.match(deviceMessage(999, "x"), /CUDA runtime unusable \(error 999\)/);
});

/**
 * A stand-in for a device: the host API of a program with the timing
 * harness, running the kernel's C twin. It fails (code 3) unless every output
 * arrives filled with NaN, and reports `number`, `min_repeat_ms` and
 * `flush_l2` back through its times.
 */
function mockProgram(body: string): string {
  return `${generateC(lower(schedule()))}
#include <math.h>
int tb_cuda_device_count(void) { return 1; }
const char *tb_cuda_error_string(int code) { return code ? "mock failure" : "no error"; }
int tb_cuda_measure(float **host, const long *sizes, int nbufs, int number, int repeat,
                    double min_ms, int flush, double *times_ms, int *number_used) {
  if (nbufs != 3 || sizes[2] != ${24 * 20}) return 1;
  for (long i = 0; i < sizes[2]; ++i) if (!isnan(host[2][i])) return 3;
${body}
  for (int r = 0; r < repeat; ++r) times_ms[r] = number * 10.0 + min_ms + flush * 0.5 + r;
  *number_used = 2 * number;
  return 0;
}
`;
}

async function gcc(dir: string, name: string, src: string): Promise<string> {
  const c = join(dir, `${name}.c`), so = join(dir, `${name}.so`);
  await Deno.writeTextFile(c, src);
  const out = await new Deno.Command("gcc", {
    args: ["-O1", "-std=gnu11", "-fPIC", "-shared", "-o", so, c, "-lm"],
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return so;
}

Deno.test("with a device the runner checks NaN-filled outputs and reports event times (mock device)", async () => {
  await withDir(async (dir) => {
    const good = await gcc(dir, "good", mockProgram("  tb_kernel(host);"));
    const wrong = await gcc(dir, "wrong", mockProgram("  tb_kernel(host);\n  host[2][7] += 1.0f;"));
    const failing = await gcc(dir, "failing", mockProgram("  return 2;"));
    const untouched = await gcc(dir, "untouched", mockProgram(""));
    const runner = createCudaRunner({
      number: 4,
      repeat: 2,
      minRepeatMs: 7,
      flushL2: true,
      referenceDir: join(dir, "ref"),
    });
    const [a] = await inputsFor(dir, good, 1);
    const results = await runner.run([
      a,
      { ...a, artifact: wrong },
      { ...a, artifact: failing },
      { ...a, artifact: untouched },
    ]);
    assert.deepEqual(results.map((r) => r.errorKind), [
      "none",
      "wrong_answer",
      "runtime_error",
      "wrong_answer",
    ]);
    // number 4, min_repeat_ms 7, flush 1: 40 + 7 + 0.5 + r milliseconds.
    assert.deepEqual(results[0].times, [0.0475, 0.0485]);
    assert.match(results[1].error!, /output "C" index 7/);
    assert.match(results[2].error!, /tb_cuda_measure: mock failure \(CUDA error 2\)/);
    assert.match(results[3].error!, /NaN|nan/i, "outputs left unwritten stay NaN and fail");
    assert.equal((await runner.device())?.ok, true);
  });
});

Deno.test("the reference output of a seed is computed once and read from disk afterwards", async () => {
  await withDir(async (dir) => {
    const good = await gcc(dir, "good", mockProgram("  tb_kernel(host);"));
    const referenceDir = join(dir, "ref");
    const [a] = await inputsFor(dir, good, 1);
    const first = await createCudaRunner({ referenceDir }).run([a]);
    assert.equal(first[0].errorKind, "none", first[0].error ?? "");
    const path = await referencePath(referenceDir, a);
    const about = JSON.parse(await Deno.readTextFile(path.replace(/\.f32$/, ".json")));
    assert.deepEqual([about.seed, about.outputs], [0, ["C"]]);
    // Spoil the stored output: a new runner sharing the directory reads it instead of
    // running the reference, so the same correct program now looks wrong.
    const bytes = await Deno.readFile(path);
    new Float32Array(bytes.buffer)[5] += 100;
    await Deno.writeFile(path, bytes);
    const again = await createCudaRunner({ referenceDir }).run([a, { ...a, seed: 1 }]);
    assert.equal(again[0].errorKind, "wrong_answer");
    assert.match(again[0].error!, /index 5/);
    assert.equal(again[1].errorKind, "none", "another seed gets its own reference output");
  });
});

Deno.test("a program measured once is not measured again: the repeat points to its result", async () => {
  await withDir(async (dir) => {
    const good = await gcc(dir, "good", mockProgram("  tb_kernel(host);"));
    const runner = createCudaRunner({ referenceDir: join(dir, "ref") });
    const [a] = await inputsFor(dir, good, 1);
    const [r1, r2] = await runner.run([a, { ...a }]);
    assert.equal(r1.errorKind, "none");
    assert.equal(r1.error, undefined);
    assert.equal(r2.errorKind, "none");
    assert.deepEqual(r2.times, r1.times);
    assert.equal(r2.runSeconds, 0);
    assert.match(r2.error!, /^same CUDA program as an earlier candidate \(good\)/);
  });
});
