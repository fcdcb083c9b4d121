import assert from "node:assert/strict";
import { createNvccBuilder, formatResources, parsePtxas } from "./nvcc_builder.ts";

const PTXAS = `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'p0_k0' for 'sm_90'
ptxas info    : Function properties for p0_k0
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 376 bytes cmem[0]
ptxas info    : Compile time = 15.140 ms
ptxas info    : Compiling entry function 'p0_k1' for 'sm_90'
ptxas info    : Function properties for p0_k1
    280 bytes stack frame, 228 bytes spill stores, 264 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 380 bytes cmem[0]
`;

Deno.test("parsePtxas reads registers, shared memory, spills and stack per kernel", () => {
  assert.deepEqual(parsePtxas(PTXAS), [
    {
      kernel: "p0_k0",
      registers: 32,
      sharedBytes: 0,
      spillStores: 0,
      spillLoads: 0,
      stackBytes: 0,
    },
    {
      kernel: "p0_k1",
      registers: 255,
      sharedBytes: 4096,
      spillStores: 228,
      spillLoads: 264,
      stackBytes: 280,
    },
  ]);
  assert.equal(
    formatResources(parsePtxas(PTXAS)),
    "p0_k0 32 regs, 0 B smem, spills 0/0 B; p0_k1 255 regs, 4096 B smem, spills 228/264 B",
  );
  assert.deepEqual(parsePtxas(""), []);
});

Deno.test("an nvcc compile error is a compile_host record with the message", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "tb-nvcc-" });
  try {
    const builder = createNvccBuilder({ cacheDir });
    const [r] = await builder.build([
      { source: 'extern "C" __global__ void k(float *x) { x[0] = undeclared; }\n' },
    ]);
    assert.equal(r.errorKind, "compile_host");
    assert.match(r.error!, /identifier "undeclared" is undefined/);
    assert.deepEqual(r.resources, []);
    assert.equal(r.artifact, undefined);
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("a missing nvcc is a clear error", async () => {
  const builder = createNvccBuilder({ nvcc: "/nonexistent/nvcc" });
  await assert.rejects(builder.build([{ source: "" }]), /nvcc "\/nonexistent\/nvcc" not found/);
});

Deno.test("nvcc runs `parallel` compiles at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-nvcc-parallel-" });
  try {
    // A stand-in nvcc: each compile waits (at most 60 s) until `parallel` compiles run at
    // once and prints how many it saw, so serial builds would report 1, not 3.
    const nvcc = `${dir}/nvcc`;
    await Deno.writeTextFile(
      nvcc,
      `#!/bin/bash
if [ "$1" = --version ]; then echo "Cuda compilation tools, release 0.0, stand-in"; exit 0; fi
out=""; prev=""; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
touch "${dir}/running.$$"
for i in $(seq 600); do
  n=$(ls "${dir}" | grep -c '^running\\.')
  [ "$n" -ge 3 ] && break
  sleep 0.1
done
echo "ptxas info    : Compiling entry function 'seen_$n' for 'sm_90'" >&2
echo "ptxas info    : Used $n registers, used 0 barriers" >&2
touch "$out"
`,
    );
    await Deno.chmod(nvcc, 0o755);
    const builder = createNvccBuilder({ nvcc, cacheDir: `${dir}/cache`, parallel: 3 });
    const results = await builder.build([0, 1, 2].map((i) => ({ source: `// ${i}` })));
    for (const r of results) {
      assert.equal(r.errorKind, "none", r.error ?? "");
      assert.equal(r.resources[0].registers, 3, "three compiles ran at once");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
