/**
 * Unity builds (`createBuilder({ batch })`): a round's kernels compiled
 * together into one shared object, each measured under its own symbol; a
 * batch that does not compile falls back to one file per kernel.
 */
import assert from "node:assert/strict";
import { generateC } from "../ir/codegen_c.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { replayTrace } from "../ir/trace.ts";
import { createWorkload } from "../ir/workloads.ts";
import { createBuilder, createRunner, type KernelSignature } from "../measure/mod.ts";
import {
  VADD_COMPILE_ERROR,
  VADD_GOOD,
  VADD_REFERENCE,
  VADD_SIGNATURE,
  VADD_WRONG,
} from "../measure/test_kernels.ts";
import { templateSpace } from "../search/templates/registry.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tb-unity-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Kernels with work space and the vector prelude: packed matmuls and a packed convolution. */
function generated(): { sources: string[]; reference: string; signature: KernelSignature }[] {
  const matmul = createWorkload("matmul", [37, 29, 23]);
  const conv = createWorkload("conv2d", [1, 5, 9, 37, 13, 3, 3, 1, 1]);
  const at = (template: string, w: typeof matmul, values: Record<string, unknown>[]) => {
    const t = templateSpace(template, w);
    return values.map((v) => {
      const point = t.space.knobs.map((k) => k.options.indexOf(v[k.name] ?? k.options[0]));
      return generateC(lower(replayTrace(t.candidateOf(point).trace!, { prng: createPrng(0) })));
    });
  };
  const naive = (w: typeof matmul) => lower(new Schedule(w, { prng: createPrng(0) }));
  const signature = (w: typeof matmul) => ({
    buffers: naive(w).params.map((p) => ({ name: p.tensor, size: p.size, role: p.role })),
  });
  return [
    {
      sources: at("matmul-packed", matmul, [
        { mr: 6, nr: 16, mc: 2, nc: 1, pack: "AB", order: 0, unroll_k: 4, parallel: 1 },
        { mr: 8, nr: 32, mc: 2, nc: 2, pack: "B", order: 1, unroll_k: 4, parallel: 1, kc: 256 },
      ]),
      reference: generateC(naive(matmul)),
      signature: signature(matmul),
    },
    {
      sources: at("conv2d-packed", conv, [
        { fr: 6, yr: 2, xr: 32, pack: "W", order: 0, unroll_kw: 1, parallel: "f", pad_parallel: 1 },
      ]),
      reference: generateC(naive(conv)),
      signature: signature(conv),
    },
  ];
}

Deno.test("a unity build puts a round in one shared object, each kernel under its own symbol", async () => {
  await withDir(async (cacheDir) => {
    const sets = generated();
    const builder = createBuilder({ cacheDir, parallel: 1, batch: 8 });
    const sources = [VADD_GOOD, VADD_WRONG, ...sets.flatMap((s) => s.sources)];
    const built = await builder.build(sources.map((source) => ({ source })));
    for (const b of built) assert.equal(b.errorKind, "none", b.error ?? "");
    assert.equal(new Set(built.map((b) => b.artifact)).size, 1, "one shared object");
    assert.match(built[0].artifact!, /batch-[0-9a-f]{64}\.so$/);
    assert.deepEqual(
      built.map((b) => b.symbol),
      built.map((b) => `tb_kernel_${b.hash.slice(0, 16)}`),
    );
    // A reference (one kernel alone) is its own tb_kernel.
    const one = async (source: string) => (await builder.build([{ source }]))[0];
    const vaddRef = await one(VADD_REFERENCE);
    const refs = await Promise.all(sets.map((s) => one(s.reference)));
    for (const r of [vaddRef, ...refs]) assert.equal(r.symbol, undefined);

    const runner = createRunner({ workers: 1, timing: { repeat: 1, warmup: 0 } });
    try {
      const tolerance = { seed: 5, atol: 1e-4, rtol: 1e-4 };
      const inputs = [
        ...[0, 1].map((i) => ({
          artifact: built[i].artifact!,
          symbol: built[i].symbol,
          reference: vaddRef.artifact!,
          signature: VADD_SIGNATURE,
          ...tolerance,
        })),
        ...sets.flatMap((s, k) =>
          s.sources.map((source) => {
            const b = built[sources.indexOf(source)];
            return {
              artifact: b.artifact!,
              symbol: b.symbol,
              reference: refs[k].artifact!,
              signature: s.signature,
              ...tolerance,
            };
          })
        ),
      ];
      const results = await runner.run(inputs);
      assert.deepEqual(results.map((r) => r.errorKind), [
        "none",
        "wrong_answer",
        ...sets.flatMap((s) => s.sources.map(() => "none")),
      ]);
      assert.ok(results[0].times.length === 1 && results[0].times[0] > 0);
    } finally {
      await runner.close();
    }

    // Served from the cache by a new builder, same object and symbols.
    const again = await createBuilder({ cacheDir, batch: 8 }).build(
      sources.map((source) => ({ source })),
    );
    assert.deepEqual(
      again.map((b) => [b.cached, b.artifact, b.symbol]),
      built.map((b) => [true, b.artifact, b.symbol]),
    );
  });
});

Deno.test("a batch that does not compile is built one kernel at a time", async () => {
  await withDir(async (cacheDir) => {
    const builder = createBuilder({ cacheDir, parallel: 1, batch: 4 });
    const built = await builder.build([{ source: VADD_GOOD }, { source: VADD_COMPILE_ERROR }]);
    assert.equal(built[0].errorKind, "none");
    assert.equal(built[0].symbol, undefined, "rebuilt alone: tb_kernel");
    assert.equal(built[1].errorKind, "compile_host");
    assert.match(built[1].error!, /undeclared_variable_xyz/);
  });
});
