/**
 * A kernel that segfaults, hangs, computes a wrong result, does not compile
 * or cannot be instantiated is recorded with its error kind, and the run goes
 * on to measure the others.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import type { Trace } from "../ir/trace.ts";
import { type KernelSource, kernelSource } from "../measure/kernel_source.ts";
import { runSession } from "../tuner/session.ts";

const FAULTS: KernelSource[] = [
  { source: "void tb_kernel(float **bufs) { (void)bufs; *(volatile int *)0 = 1; }" },
  { source: "void tb_kernel(float **bufs) { (void)bufs; volatile int x = 1; while (x) {} }" },
  {
    source: "void tb_kernel(float **bufs) { for (int i = 0; i < 24 * 20; i++) bufs[2][i] = 1.0f; }",
  },
  { source: "void tb_kernel(float **bufs) { this is not C; }" },
  { error: 'Cannot split loop "i" of stage "C": injected' },
];
const KINDS = [
  "runtime_crash",
  "run_timeout",
  "wrong_answer",
  "compile_host",
  "instantiation_error",
];

Deno.test("faulty kernels are recorded with their error kind and the run goes on", async () => {
  const dir = await Deno.makeTempDir();
  let n = 0;
  const source = (trace: Trace): KernelSource => {
    const i = n++;
    // Faults at trials 1, 3, 5, 7, 9; correct kernels in between.
    return i % 2 === 1 && (i - 1) / 2 < FAULTS.length ? FAULTS[(i - 1) / 2] : kernelSource(trace);
  };
  const s = await runSession({
    db: join(dir, "r.db"),
    workload: { name: "matmul", shape: [24, 20, 16] },
    strategy: "random",
    seed: 5,
    trials: 12,
    batch: 12,
    timeoutSeconds: 2,
    timing: { number: 1, repeat: 2, minRepeatMs: 0 },
    cacheDir: join(dir, "cache"),
    source,
  });
  assert.equal(s.valid + s.errors, 12);
  assert.equal(s.errors, FAULTS.length);
  const db = RecordsDB.open(join(dir, "r.db"));
  const rows = db.candidates(s.run_id);
  const kinds = rows.map((c) => c.result?.errorKind);
  assert.deepEqual(kinds.filter((k) => k !== "none"), KINDS);
  for (const c of rows) {
    if (c.result?.errorKind === "runtime_crash") assert.match(c.result.error ?? "", /SIGSEGV/);
    if (c.result?.errorKind === "wrong_answer") assert.match(c.result.error ?? "", /index/);
    if (c.result?.errorKind === "compile_host") assert.match(c.result.error ?? "", /error/);
  }
  assert.equal(db.run(s.run_id)?.status, "finished");
  db.close();
  await Deno.remove(dir, { recursive: true });
});
