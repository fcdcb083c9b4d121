import assert from "node:assert/strict";
import {
  createBuilder,
  createRunner,
  DEFAULT_FLAGS,
  type KernelSignature,
} from "../measure/mod.ts";
import { compilerOverreads } from "./_compiler_overread.ts";

const SIGNATURE: KernelSignature = {
  buffers: [{ name: "in", size: 130, role: "input" }, { name: "out", size: 136, role: "output" }],
};

function kernel(body: string): string {
  return `void tb_kernel(float **bufs) {
  const float *restrict in = bufs[0];
  float *restrict out = bufs[1];
${body}
}
`;
}

/** Zero-padding as a packed copy's edge writes it: sound C, 136 iterations, 130 loads. */
const PADDED = kernel("  for (int i = 0; i < 136; i++) out[i] = (i < 130) ? in[i] : 0.0f;");
const REFERENCE = kernel(
  "  for (int i = 0; i < 130; i++) out[i] = in[i];\n  for (int i = 130; i < 136; i++) out[i] = 0.0f;",
);
/** The generator's kind of bug: loads and stores one float past both buffers. */
const OVERRUN = kernel(
  "  for (int i = 0; i < 131; i++) out[i] = in[i];\n  for (int i = 130; i < 137; i++) out[i] = 0.0f;",
);

Deno.test("the default flags build a zero-padded edge that reads nothing past its input; a crash is the compiler's only when the kernel passes built without if-conversion", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-overread-" });
  try {
    const [ref, padded] = await createBuilder({ cacheDir: dir }).build([
      { source: REFERENCE },
      { source: PADDED },
    ]);
    const ifConverted = DEFAULT_FLAGS.filter((f) => f !== "-fno-tree-loop-if-convert");
    const [converted] = await createBuilder({ cacheDir: dir, flags: ifConverted }).build([
      { source: PADDED },
    ]);
    assert.equal(ref.errorKind, "none", ref.error ?? "");
    const input = { reference: ref.artifact!, signature: SIGNATURE, seed: 1, atol: 0, rtol: 0 };
    // With if-conversion on, GCC 12 with AVX-512 reads in[128..135] in one vblendps.
    const runner = createRunner({
      workers: 1,
      timeoutSeconds: 300,
      timing: { number: 1, repeat: 1, warmup: 0, minRepeatMs: 0 },
    });
    let r, c;
    try {
      [r, c] = await runner.run([
        { ...input, artifact: padded.artifact! },
        { ...input, artifact: converted.artifact! },
      ]);
    } finally {
      await runner.close();
    }
    assert.ok(["none", "runtime_crash"].includes(c.errorKind), `${c.errorKind}: ${c.error}`);
    console.log(`the padded copy with if-conversion on: ${c.errorKind} ${c.error ?? ""}`);
    // The builder's default flags turn GCC's loop if-conversion off: no read past `in`.
    assert.equal(r.errorKind, "none", `the padded copy as compiled by default: ${r.error}`);
    const fromGcc = await compilerOverreads(
      [{ source: PADDED, input }, { source: OVERRUN, input }],
      dir,
    );
    assert.deepEqual(fromGcc, [true, false]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a kernel that writes one float past its output crashes in the runner's check every time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-overrun-" });
  const runner = createRunner({
    workers: 1,
    timeoutSeconds: 300,
    timing: { number: 1, repeat: 1, warmup: 0, minRepeatMs: 0 },
  });
  try {
    // Correct values, and one store past `out` (into allocator slack without guard pages).
    const past = kernel(
      "  for (int i = 0; i < 130; i++) out[i] = in[i];\n" +
        "  for (int i = 130; i < 136; i++) out[i] = 0.0f;\n  out[136] = 0.0f;",
    );
    const [ref, bad] = await createBuilder({ cacheDir: dir }).build([
      { source: REFERENCE },
      { source: past },
    ]);
    assert.equal(bad.errorKind, "none", bad.error ?? "");
    const input = { reference: ref.artifact!, signature: SIGNATURE, seed: 1, atol: 0, rtol: 0 };
    const runs = await runner.run(Array(3).fill({ ...input, artifact: bad.artifact! }));
    assert.deepEqual(runs.map((r) => r.errorKind), Array(3).fill("runtime_crash"));
    assert.match(runs[0].error!, /SIGSEGV/);
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});
