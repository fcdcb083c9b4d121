import assert from "node:assert/strict";
import { evaluate } from "../ir/evaluate.ts";
import { conv2d, denseBiasRelu, matmul, type Workload } from "../ir/workloads.ts";
import { createBuilder } from "./builder.ts";
import { computeReference } from "./reference_cache.ts";
import { fillUniform } from "./prng.ts";
import { referenceSource, signatureOf, toleranceOf } from "./kernel_source.ts";

const CASES: Workload[] = [
  matmul(37, 29, 23),
  matmul(1, 5, 7),
  denseBiasRelu(13, 11, 9),
  conv2d(2, 3, 9, 7, 5, 3, 3, 2, 1),
  conv2d(1, 1, 5, 5, 1, 1, 1, 1, 0),
];

Deno.test("referenceSource is parallel (OpenMP) with the reduction outside the innermost spatial loop", () => {
  const src = referenceSource(matmul(64, 48, 32));
  assert.match(src, /#pragma omp parallel for/);
  const k = src.indexOf("for (int v_C_k"), j = src.lastIndexOf("for (int v_C_j");
  assert.ok(k > 0 && j > k, src);
});

Deno.test("the fast reference kernel computes what the interpreter computes, on every workload kind", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-reference-" });
  try {
    const built = await createBuilder({ cacheDir: dir }).build(
      CASES.map((w) => ({ source: referenceSource(w) })),
    );
    CASES.forEach((w, n) => {
      assert.equal(built[n].errorKind, "none", built[n].error ?? "");
      const signature = signatureOf(w);
      const outputs = computeReference({ reference: built[n].artifact!, signature, seed: 3 })
        .filter((_, i) => signature.buffers[i].role === "output");
      const inputs = w.inputs.map((t) => new Float32Array(t.size));
      fillUniform(3, inputs);
      const want = evaluate(w, new Map(w.inputs.map((t, i) => [t.name, inputs[i]])));
      const { atol, rtol } = toleranceOf(w);
      w.outputs.forEach((t, o) => {
        const exp = want.get(t.name)!;
        for (let i = 0; i < t.size; i++) {
          const diff = Math.abs(outputs[o][i] - exp[i]);
          assert.ok(diff <= atol + rtol * Math.abs(exp[i]), `${w.name} ${t.name}[${i}]`);
        }
      });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
