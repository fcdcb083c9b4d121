import assert from "node:assert/strict";
import { join } from "node:path";
import { generateC } from "../ir/codegen_c.ts";
import { generateCuda } from "../ir/codegen_cuda.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { matmul } from "../ir/workloads.ts";
import { referenceSource, signatureOf, toleranceOf } from "../tuner/kernel.ts";
import { createBuilder } from "./builder.ts";
import { createCudaRunner, deviceMessage } from "./cuda_runner.ts";
import { createNvccBuilder } from "./nvcc_builder.ts";
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

Deno.test("without a driver every candidate is no_device with one clear message, none runs", async () => {
  await withDir(async (dir) => {
    const [built] = await createNvccBuilder({ cacheDir: dir }).build([
      { source: generateCuda(lower(schedule())) },
    ]);
    assert.equal(built.errorKind, "none", built.error ?? "");
    const runner = createCudaRunner();
    const results = await runner.run(await inputsFor(dir, built.artifact!, 3));
    assert.equal(results.length, 3);
    for (const r of results) {
      assert.equal(r.errorKind, "no_device");
      assert.deepEqual(r.times, []);
      assert.equal(r.runSeconds, 0);
    }
    assert.equal(new Set(results.map((r) => r.error)).size, 1, "one message for the batch");
    assert.match(
      results[0].error!,
      /^no CUDA driver \(cudaErrorInsufficientDriver, 35\): CUDA driver version is insufficient/,
    );
    const device = await runner.device();
    assert.deepEqual({ ok: device?.ok, code: device?.code }, { ok: false, code: 35 });
    await runner.close();
  });
});

Deno.test("deviceMessage names the CUDA error", () => {
  assert.match(deviceMessage(100, "no CUDA-capable device is detected"), /^no CUDA device/);
  assert.match(deviceMessage(35, "x"), /^no CUDA driver \(cudaErrorInsufficientDriver, 35\)/);
  assert.match(deviceMessage(999, "x"), /CUDA runtime unusable \(error 999\)/);
});

/** A stand-in for a device: the host API of a generated program, running its C twin. */
function mockProgram(body: string, count = 1): string {
  return `${generateC(lower(schedule()))}
int tb_cuda_device_count(void) { return ${count}; }
const char *tb_cuda_error_string(int code) { return code ? "mock failure" : "no error"; }
int tb_cuda_run(float **host, const long *sizes, int nbufs, int repeat, double *times_ms) {
  if (nbufs != 3 || sizes[2] != ${24 * 20}) return 1;
${body}
  for (int r = 0; r < repeat; ++r) times_ms[r] = 0.25 * (r + 1);
  return 0;
}
`;
}

Deno.test("with a device the runner checks outputs and reports event times (mock device)", async () => {
  await withDir(async (dir) => {
    const build = async (name: string, src: string) => {
      const c = join(dir, `${name}.c`), so = join(dir, `${name}.so`);
      await Deno.writeTextFile(c, src);
      const out = await new Deno.Command("gcc", {
        args: ["-O1", "-std=gnu11", "-fPIC", "-shared", "-o", so, c],
        stderr: "piped",
      }).output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      return so;
    };
    const good = await build("good", mockProgram("  tb_kernel(host);"));
    const wrong = await build("wrong", mockProgram("  tb_kernel(host);\n  host[2][7] += 1.0f;"));
    const failing = await build("failing", mockProgram("  return 2;"));
    const runner = createCudaRunner({ repeat: 2 });
    const [a] = await inputsFor(dir, good, 1);
    const results = await runner.run([
      a,
      { ...a, artifact: wrong },
      { ...a, artifact: failing },
    ]);
    assert.deepEqual(results.map((r) => r.errorKind), ["none", "wrong_answer", "runtime_error"]);
    assert.deepEqual(results[0].times, [0.00025, 0.0005]);
    assert.match(results[1].error!, /output "C" index 7/);
    assert.match(results[2].error!, /tb_cuda_run: mock failure \(CUDA error 2\)/);
    assert.equal((await runner.device())?.ok, true);
  });
});
