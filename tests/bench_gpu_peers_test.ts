import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RecordsDB } from "../datasets/db.ts";
import { traceHash } from "../ir/trace.ts";
import { matmul } from "../ir/workloads.ts";
import { gemmConfigs } from "../search/gemm_configs.ts";
import { bestCudaGflops, comparableBest } from "../bench/gpu_peers.ts";

const BENCH = fileURLToPath(new URL("../bench/gpu_peers.ts", import.meta.url));
const dec = new TextDecoder();

async function bench(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("bench/gpu_peers.ts says there is no GPU and exits 0, or prints cuBLAS and cuDNN beside tunebook", async () => {
  const r = await bench([
    ...["--sizes", "256", "--dense", "64,64,64", "--convs", "conv2"],
    ...["--repeat", "2", "--min-repeat-ms", "1"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  if (r.stdout.startsWith("no GPU: ")) {
    assert.match(r.stdout, /^no GPU: no CUDA (driver|device).*; nothing measured\n$/);
  } else {
    assert.match(
      r.stdout,
      /^\| workload \| peer \| tunebook FP32 \| peer FP32 \| ratio \| tunebook FP32\/TF32 /,
    );
    assert.match(r.stdout, /^\| matmul:256,256,256 \| cuBLAS \| none \| /m);
    assert.match(r.stdout, /^\| dense:64,64,64 \| cuBLAS \| none \| /m);
    assert.match(r.stdout, /^\| conv2d:1,64,56,56,64,3,3,1,1 \| cuDNN \| none \| /m);
    const json = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    assert.equal(json.rows.length, 3);
  }
});

Deno.test("bench/gpu_peers.ts refuses bad sizes, shapes, convolutions and databases with exit 2", async () => {
  for (
    const [args, why] of [
      [["--sizes", "abc"], /^gpu_peers: --sizes takes some integers in 1\.\.16384/],
      [["--dense", "64,64"], /^gpu_peers: --dense takes 3 integers/],
      [["--convs", "vgg"], /^gpu_peers: --convs takes resnet18, conv2 or none, got "vgg"/],
      [["--db", "/nonexistent/x.db"], /^gpu_peers: --db \/nonexistent\/x\.db: no such file/],
      [["--repeat", "0"], /^gpu_peers: --repeat takes an integer >= 1/],
    ] as const
  ) {
    const r = await bench([...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, why);
  }
});

Deno.test("bestCudaGflops keeps each kind of arithmetic apart: FP32 stands against FP32, FP32 or TF32 against TF32", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-peers-math-" });
  try {
    const path = join(dir, "r.db");
    const db = RecordsDB.open(path, { mode: "create" });
    const w = matmul(1024, 1024, 1024);
    const configs = Object.fromEntries(gemmConfigs(w).map((c) => [c.name, c.candidate.trace!]));
    const run = (target: string, records: [string, number, string][]) => {
      const id = db.startRun({
        strategy: "ansor",
        seed: 1,
        trials: records.length,
        target,
        workloadId: db.upsertWorkload({ name: w.name, shape: w.shape, flops: w.flops }),
        config: {},
        machine: {},
        compiler: "",
        tunebookVersion: "0",
      });
      return Promise.all(records.map(async ([name, seconds, kind], trial) => {
        const trace = configs[name];
        const c = db.addCandidate(id, {
          trial,
          trace: JSON.stringify(trace),
          traceHash: await traceHash(trace),
        });
        db.addResult(c, {
          errorKind: kind as "none",
          times: kind === "none" ? [seconds] : [],
          buildSeconds: 0,
          runSeconds: 0,
        });
      }));
    };
    await run("cuda", [
      ["fp32-128x128x16-regs", 2e-3, "none"],
      ["fp32-128x64x16-regs", 1e-3, "none"],
      ["tf32-128x128x32-cp.async2", 0.5e-3, "none"],
      ["fp16-128x128x32-cp.async2", 0.25e-3, "none"],
      ["bf16-128x128x32-cp.async2", 0.1e-3, "wrong_answer"],
    ]);
    // A CPU record, however fast, is not a CUDA kernel.
    await run("cpu", [["fp32-64x64x16-regs", 0.05e-3, "none"]]);
    db.close();
    const g = (s: number) => w.flops / s / 1e9;
    const best = bestCudaGflops(path).get("matmul:1024,1024,1024")!;
    assert.deepEqual(best, { fp32: g(1e-3), tf32: g(0.5e-3), fp16: g(0.25e-3) });
    assert.equal(comparableBest(best, "fp32"), g(1e-3));
    assert.equal(comparableBest(best, "tf32"), g(0.5e-3));
    assert.equal(comparableBest({ fp16: 1 }, "tf32"), null);
    assert.equal(comparableBest(undefined, "fp32"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
