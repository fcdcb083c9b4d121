/**
 * What checking one CUDA candidate costs beyond its own timing, without a
 * GPU: the CUDA worker (`measure/cuda_worker.ts run`, one subprocess, as the
 * runner starts it) with the reference output and inputs already on disk,
 * against a stand-in device program (C, built with gcc) that copies the
 * expected output into the output buffer and reports 1 ms repeats. The
 * figure is the subprocess's wall time: start, read inputs and expected
 * output, NaN fill, the call, the comparison, the reply (issue 15 asks for
 * under a second at matmul 4096³).
 *
 * ```sh
 * deno run -A bench/cuda_check_cost.ts [M,N,K, default 4096,4096,4096] [runs, default 3]
 * ```
 * @module
 */
import { join } from "node:path";
import { matmul } from "../ir/workloads.ts";
import { CUDA_WORKER_PATH } from "../measure/cuda_runner.ts";
import type { CudaReply, CudaRequest } from "../measure/cuda_worker.ts";
import { writeReference } from "../measure/reference_cache.ts";
import { signatureOf } from "../measure/kernel_source.ts";
import { positionalArgs, positiveArg, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints. */
const USAGE = `usage:
  deno run -A bench/cuda_check_cost.ts [M,N,K, default 4096,4096,4096] [runs, default 3]`;

const STAND_IN = `#include <stdio.h>
#include <stdlib.h>
int tb_cuda_device_count(void) { return 1; }
const char *tb_cuda_error_string(int code) { return code ? "stand-in failure" : "no error"; }
int tb_cuda_measure(float **host, const long *sizes, int nbufs, int number, int repeat,
                    double min_ms, int flush, double *times_ms, int *number_used) {
  FILE *f = fopen(getenv("TB_EXPECTED"), "rb");
  if (!f) return 1;
  size_t n = fread(host[nbufs - 1], sizeof(float), sizes[nbufs - 1], f);
  fclose(f);
  if (n != (size_t)sizes[nbufs - 1]) return 2;
  for (int r = 0; r < repeat; ++r) times_ms[r] = 1.0;
  *number_used = number;
  return 0;
}
`;

/** Wall seconds of each check of a matmul `shape` candidate (stand-in device). */
export async function checkCost(shape: [number, number, number], runs: number): Promise<number[]> {
  const dir = await Deno.makeTempDir({ prefix: "tb-check-cost-" });
  try {
    const so = join(dir, "stand_in.so");
    await Deno.writeTextFile(join(dir, "stand_in.c"), STAND_IN);
    const cc = await new Deno.Command("gcc", {
      args: ["-O2", "-fPIC", "-shared", "-o", so, join(dir, "stand_in.c")],
    }).output();
    if (!cc.success) throw new Error("gcc failed on the stand-in device");
    const w = matmul(...shape);
    const signature = signatureOf(w);
    const expected = join(dir, "ref.f32");
    const buffers = signature.buffers.map((b) => new Float32Array(b.size).fill(0.5));
    await writeReference(expected, { reference: so, signature, seed: 0 }, buffers);
    const req: CudaRequest = {
      artifact: so,
      expected,
      signature,
      seed: 0,
      atol: 1e-3,
      rtol: 1e-3,
      number: 1,
      repeat: 3,
      minRepeatMs: 0,
      flushL2: false,
    };
    const seconds: number[] = [];
    for (let r = 0; r < runs; r++) {
      const start = performance.now();
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", "--no-config", "-A", CUDA_WORKER_PATH, "run"],
        env: { TB_EXPECTED: expected },
        stdin: "piped",
        stdout: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(JSON.stringify(req)));
      await writer.close();
      const out = await child.output();
      seconds.push((performance.now() - start) / 1000);
      const reply = JSON.parse(new TextDecoder().decode(out.stdout)) as CudaReply;
      if (reply.errorKind !== "none") throw new Error(`check failed: ${reply.error}`);
    }
    return seconds;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  await runCommand("cuda_check_cost", async (argv) => {
    const args = positionalArgs(argv, USAGE, 2);
    const shape = (args[0] ?? "4096,4096,4096").split(",").map(Number);
    if (shape.length !== 3 || !shape.every((x) => Number.isInteger(x) && x > 0)) {
      throw new UsageError(`shape must be M,N,K positive integers, got "${args[0]}"`);
    }
    const runs = positiveArg(args[1], "runs", 3);
    const s = await checkCost(shape as [number, number, number], runs);
    console.log(
      `matmul ${shape.join("x")}: check ${s.map((x) => x.toFixed(2)).join(", ")} s per candidate`,
    );
  });
}
