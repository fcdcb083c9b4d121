import assert from "node:assert/strict";
import { sha256Hex } from "./builder.ts";
import { priorCudaResults, type RecordedCandidate, withPriorResults } from "./cuda_prior.ts";
import type { Runner } from "./runner.ts";
import type { BuildInput, BuildResult, MeasureInput, RunResult } from "./types.ts";

/** A builder naming each artifact after its source, and a runner that counts what it runs. */
function fakes() {
  const ran: string[] = [];
  const builder = {
    build: (inputs: BuildInput[]): Promise<BuildResult[]> =>
      Promise.resolve(inputs.map((i) => ({
        errorKind: "none" as const,
        artifact: `/cache/${i.source}.so`,
        buildSeconds: 0,
        cached: false,
        hash: i.source,
      }))),
    describe: () => Promise.resolve("fake nvcc"),
  };
  const runner: Runner = {
    run(inputs: MeasureInput[], onResult?: (i: number, r: RunResult) => void) {
      const rs = inputs.map((input, i) => {
        ran.push(input.artifact);
        const r: RunResult = { errorKind: "none", times: [0.5], runSeconds: 1 };
        onResult?.(i, r);
        return r;
      });
      return Promise.resolve(rs);
    },
    close: () => Promise.resolve(),
  };
  return { builder, runner, ran };
}

const input = (artifact: string): MeasureInput => ({
  artifact,
  reference: "/ref.so",
  signature: { buffers: [] } as unknown as MeasureInput["signature"],
  seed: 0,
  atol: 0,
  rtol: 0,
});

Deno.test("withPriorResults answers a program measured before the resume from its record, and runs the others", async () => {
  const f = fakes();
  const prior = new Map([[await sha256Hex("kernel-a"), {
    trial: 4,
    result: { errorKind: "none" as const, times: [0.25, 0.3], runSeconds: 2 },
  }]]);
  const { builder, runner } = withPriorResults(f.builder, f.runner, prior);
  const built = await builder.build([{ source: "kernel-b" }, { source: "kernel-a" }]);
  assert.equal(await builder.describe(), "fake nvcc", "the builder's other methods remain");
  const seen: number[] = [];
  const rs = await runner.run(built.map((b) => input(b.artifact!)), (i) => seen.push(i));
  assert.deepEqual(f.ran, ["/cache/kernel-b.so"], "only the new program ran");
  assert.deepEqual(rs[0], { errorKind: "none", times: [0.5], runSeconds: 1 });
  assert.deepEqual([rs[1].errorKind, rs[1].times, rs[1].runSeconds], ["none", [0.25, 0.3], 0]);
  assert.match(
    rs[1].error!,
    /^same CUDA program as trial 4 of this run \(measured before it was resumed\)/,
  );
  assert.deepEqual(seen.sort(), [0, 1], "onResult hears of both, by input index");
});

Deno.test("priorCudaResults keeps final measured results by source hash, the first trial of a source winning", async () => {
  const result = (errorKind: RunResult["errorKind"], times: number[] = []) => ({
    errorKind,
    error: errorKind === "none" ? null : `${errorKind} message`,
    times,
    runSeconds: 1,
  });
  const c = (trial: number, kernel: string, r: RecordedCandidate["result"]): RecordedCandidate => ({
    trial,
    trace: JSON.stringify({ kernel }),
    result: r,
  });
  const prior = await priorCudaResults([
    c(3, "same", result("none", [0.2])),
    c(1, "same", result("none", [0.1])),
    c(2, "wrong", result("wrong_answer")),
    c(4, "nodev", result("no_device")),
    c(5, "lost", result("worker_lost")),
    c(6, "pending", null),
    c(7, "broken", result("none", [0.3])),
  ], (t) => {
    const k = (t as unknown as { kernel: string }).kernel;
    return k === "broken" ? { error: "does not lower" } : { source: `src-${k}` };
  });
  assert.equal(prior.size, 2, [...prior.values()].map((p) => p.trial).join());
  const same = prior.get(await sha256Hex("src-same"))!;
  assert.deepEqual([same.trial, same.result.times], [1, [0.1]]);
  const wrong = prior.get(await sha256Hex("src-wrong"))!;
  assert.deepEqual([wrong.result.errorKind, wrong.result.error], [
    "wrong_answer",
    "wrong_answer message",
  ]);
});
