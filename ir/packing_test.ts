import assert from "node:assert/strict";
import { join } from "node:path";
import { generateC } from "./codegen_c.ts";
import { generateCuda } from "./codegen_cuda.ts";
import { ScheduleError } from "./errors.ts";
import { lower } from "./lower.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { assertTraceRoundTrip } from "./testing.ts";
import { parseTrace, printTrace, traceOf } from "./trace.ts";
import { createWorkload, matmul } from "./workloads.ts";

const sched = (M: number, N: number, K: number) =>
  new Schedule(matmul(M, N, K), { prng: createPrng(1) });

/**
 * The schedule of the `matmul-packed` template, written out: register tile
 * MR x NR in `C_local` at the tile loop, B packed at root in NR panels, A
 * packed per MC block (at `io`, a loop of the stage the tile is computed in).
 */
function packed(M: number, N: number, K: number, MR = 6, NR = 32, mc = 2, nc = 2): Schedule {
  const sch = sched(M, N, K);
  const local = sch.cacheWrite("C");
  const bp = sch.cacheRead("B", "global", [local]);
  const ap = sch.cacheRead("A", "global", [local]);
  const [io, ir, ii] = sch.split("C", "i", [null, mc, MR]);
  const [jo, jr, ji] = sch.split("C", "j", [null, nc, NR]);
  sch.reorder("C", [io, jo, ir, jr, ii, ji]);
  sch.parallel("C", io);
  sch.computeAt(local, "C", jr);
  sch.unroll("C", ii);
  sch.vectorize("C", ji);
  sch.reorder(local, ["k", "i", "j"]);
  sch.unroll(local, "i");
  sch.vectorize(local, "j");
  sch.transformLayout(bp, 1, NR);
  const [b0, b1] = sch.split(bp, "ax1", [null, NR]);
  sch.reorder(bp, [b0, "ax0", b1]);
  sch.vectorize(bp, b1);
  sch.transformLayout(ap, 0, MR);
  sch.computeAt(ap, "C", io);
  const [a0, a1] = sch.split(ap, "ax0", [null, MR]);
  sch.reorder(ap, [a0, "ax1", a1]);
  return sch;
}

Deno.test("cache_read global and transform_layout store k-major panels, zero-padded", () => {
  const sch = packed(24, 64, 16);
  const src = generateC(lower(sch));
  // B(16, 64) in 32-column panels: [2][16][32]; A(12-row block, 16) in 6-row panels: [2][16][6].
  assert.match(src, /tb_ws\.T_B_global_bytes < \(size_t\)4096\)/);
  assert.match(src, /float \*restrict T_B_global = tb_ws\.T_B_global;/);
  assert.match(src, /float T_A_global\[192\] __attribute__\(\(aligned\(64\)\)\)/);
  // The register tile reads both panels with unit strides: 6 x 32 accumulators in 12 vectors.
  assert.match(src, /tb_v16 T_C_local_v0, [^;]*T_C_local_v11;/);
  assert.doesNotMatch(src, /T_C_local_v12/);
  assert.match(src, /T_C_local_v\d+ \+= \(T_A_global\[[^\]]*\] \* tb_loadu\(&T_B_global\[/);
  // A 37-row matrix pads its last A panel with zeros instead of skipping those rows.
  const edge = generateC(lower(packed(37, 64, 16)));
  assert.match(edge, /\? T_A\[[^\n]*: 0\.0f\)/);
  assertTraceRoundTrip(sch);
});

Deno.test("an edge tile that reads only packed copies computes as a full one; only its write-back is guarded", () => {
  const src = generateC(lower(packed(37, 64, 16)));
  // The tile at rows 36..41 of 37 reads zero-padded panels: one nest of accumulators
  // serves every tile position, and the write-back has a full and a guarded version.
  assert.equal(src.match(/tb_v16 T_C_local_v0/g)?.length, 1);
  assert.equal(src.match(/T_C_local_v0 \+= /g)?.length, 1);
  assert.match(src, /if \(\(\(m_C_local_0 \+ 5\) < 37\)\) \{\n[^]*tb_storeu\(&T_C\[/);
  assert.match(src, /if \(\(\(\(m_C_local_0 \+ 5\) < 37\) \? 0 : 1\)\) \{\n[^]*\) < 37\)\) \{/);
});

Deno.test("an edge tile that reads an unpacked tensor keeps a guarded copy of the nest", () => {
  // Without a packed copy of A the tile reads A itself, which ends at the matrix's edge.
  const sch = sched(37, 64, 16);
  const local = sch.cacheWrite("C");
  const bp = sch.cacheRead("B", "global", [local]);
  const [io, ii] = sch.split("C", "i", [null, 6]);
  const [jo, ji] = sch.split("C", "j", [null, 32]);
  sch.reorder("C", [io, jo, ii, ji]);
  sch.computeAt(local, "C", jo);
  sch.vectorize("C", ji);
  sch.reorder(local, ["k", "i", "j"]);
  sch.unroll(local, "i");
  sch.vectorize(local, "j");
  sch.transformLayout(bp, 1, 32);
  const src = generateC(lower(sch));
  // One tile for the full positions, one guarded for the edge (rows 36..41 of 37).
  assert.equal(src.match(/float T_C_local\[192\]/g)?.length, 2);
  assert.match(src, /if \(\(\(\(m_C_local_0 \+ 5\) < 37\) \? 0 : 1\)\) \{/);
});

Deno.test("a packed copy computed outside its reader's tile covers every tile inside", () => {
  const sch = packed(48, 64, 8, 6, 16, 4, 1);
  // A at io: 4 register tiles of 6 rows -> a 24 x 8 block, not one 6 x 8 tile.
  assert.deepEqual(sch.stage("A_global").leaves.map((l) => l.extent), [4, 8, 6]);
  const s2 = sched(48, 64, 8);
  const local = s2.cacheWrite("C");
  const ap = s2.cacheRead("A", "global", [local]);
  const [io, ii] = s2.split("C", "i", [null, 8]);
  s2.computeAt(local, "C", io);
  assert.throws(() => s2.computeAt(ap, "C", ii), /computed at loop "i.0", outside it/);
  // Reordering the reader's loop outside the copy's afterwards is caught when lowering.
  const s4 = sched(48, 64, 8);
  const l4 = s4.cacheWrite("C");
  const a4 = s4.cacheRead("A", "global", [l4]);
  const [i0, i1] = s4.split("C", "i", [null, 8]);
  s4.computeAt(l4, "C", i1);
  s4.computeAt(a4, "C", i0);
  s4.reorder("C", [i1, i0]);
  assert.throws(() => lower(s4), /inside loop "i.1" where its reader "C_local" is computed/);
  // Only a packed copy may skip its direct reader.
  const s3 = sched(48, 64, 8);
  const l3 = s3.cacheWrite("C");
  s3.computeAt(l3, "C", "i");
  const shared = s3.cacheRead("B", "shared", [l3]);
  assert.throws(() => s3.computeAt(shared, "C", "i"), /its consumers are "C_local"/);
});

Deno.test("transform_layout names what it cannot do", () => {
  const sch = sched(16, 16, 16);
  assert.throws(() => sch.transformLayout("C", 0, 4), /not a cache_read\(\.\.\., "global"\) copy/);
  const b = sch.cacheRead("B", "global", ["C"]);
  assert.throws(() => sch.transformLayout(b, 2, 4), /axis 2 not in \[0, 1\]/);
  assert.throws(() => sch.transformLayout(b, 0, 0), /factor 0 not in/);
  sch.transformLayout(b, 1, 5);
  assert.throws(() => sch.transformLayout(b, 1, 4), /axis 1 is tiled already/);
  assert.deepEqual(sch.stage(b).roots.map((l) => l.extent), [16, 20]);
  sch.split(b, "ax0", [null, 4]);
  assert.throws(() => sch.transformLayout(b, 0, 2), /before transforming its loops/);
  assert.throws(() => sch.cacheRead("B", "global", ["C"]), /"B_global" exists/);
  assert.throws(() => sch.cacheRead("A", "local" as "global", ["C"]), /unknown scope "local"/);
});

Deno.test("transform_layout blocks a stage computed into its own buffer, not an inlined one", () => {
  const w = createWorkload("conv2d", [1, 6, 5, 5, 4, 3, 3, 1, 1]);
  const sch = new Schedule(w, { prng: createPrng(0) });
  sch.transformLayout("P", 1, 4);
  assert.deepEqual(sch.stage("P").layout, [{ axis: 1, factor: 4 }]);
  // Its buffer holds two blocks of 4 channels (6 rounded up) of 7 x 7 padded positions.
  assert.ok(
    generateC(lower(sch)).includes(
      "T_P[(((((v_P_c / 4) * 196) + (v_P_y * 28)) + (v_P_x * 4)) + (v_P_c % 4))] =",
    ),
  );
  const inlined = new Schedule(w, { prng: createPrng(0) });
  inlined.computeInline("P");
  assert.throws(
    () => inlined.transformLayout("P", 1, 4),
    /Cannot transform_layout stage "P": it is not a cache_read/,
  );
  assert.throws(() => sch.transformLayout("O", 1, 4), /it is not a cache_read/);
});

Deno.test("deinterleave stores a dimension as phases and names what it cannot do", () => {
  const w = createWorkload("conv2d", [1, 2, 9, 9, 3, 3, 3, 2, 1]);
  const sch = new Schedule(w, { prng: createPrng(0) });
  assert.throws(
    () => sch.deinterleave("O", 3, 2),
    /Cannot deinterleave stage "O": it is an output/,
  );
  assert.throws(() => sch.deinterleave("P", 4, 2), /axis 4 not in \[0, 3\]/);
  assert.throws(() => sch.deinterleave("P", 3, 1), /factor 1 not in \[2, 16\]/);
  sch.deinterleave("P", 3, 2);
  assert.throws(() => sch.deinterleave("P", 3, 2), /axis 3 is tiled already/);
  assert.throws(() => sch.computeInline("P"), /its buffer's layout was transformed/);
  // P is 11 columns wide: two phases of 6 (one padding slot), and O reads
  // phase rx % 2 at position x + rx / 2.
  const kernel = lower(sch);
  assert.equal(kernel.temps[0].size, 2 * 11 * 12);
  assert.match(generateC(kernel), /\(\(v_O_rx % 2\) \* 6\)\) \+ \(v_O_x \+ \(v_O_rx \/ 2\)\)\)\]/);
  const plain = new Schedule(w, { prng: createPrng(0) });
  plain.split("P", "x", [null, 2]);
  assert.throws(() => plain.deinterleave("P", 3, 2), /before transforming its loops/);
  assertTraceRoundTrip(sch);
});

Deno.test("traces with cache_read global and transform_layout parse, print and replay", () => {
  const sch = packed(20, 40, 12, 4, 16, 2, 1);
  const t = parseTrace(JSON.stringify(traceOf(sch)));
  const text = printTrace(t);
  assert.match(text, /sch\.cache_read\("B", "global", readers=\["C_local"\]\)/);
  assert.match(text, /sch\.transform_layout\("B_global", 1, factor=16\)/);
  assertTraceRoundTrip(sch);
});

Deno.test("GPU code generators reject a CPU packing copy by name", () => {
  const sch = sched(16, 16, 16);
  sch.cacheRead("B", "global", ["C"]);
  sch.bind("C", "i", "blockIdx.x");
  sch.bind("C", "j", "threadIdx.x");
  assert.throws(
    () => generateCuda(lower(sch)),
    (e) => e instanceof ScheduleError && /cache_read\("B", "global"\)/.test(e.message),
  );
});

Deno.test("a large private buffer comes from a pool kept across calls, a slice per thread", () => {
  const sch = sched(128, 64, 1024);
  const ap = sch.cacheRead("A", "global", ["C"]);
  const [io] = sch.split("C", "i", [null, 64]);
  sch.parallel("C", io);
  sch.computeAt(ap, "C", io);
  const src = generateC(lower(sch)); // 64 x 1024 floats: 256 KiB
  assert.match(
    src,
    /tb_ws\.T_A_global_pool_bytes = \(size_t\)omp_get_max_threads\(\) \* 262144;\n.*aligned_alloc\(64, tb_ws\.T_A_global_pool_bytes\);/,
  );
  assert.match(src, /T_A_global = T_A_global_pool \+ \(size_t\)omp_get_thread_num\(\) \* 65536;/);
  // Freed when the library is unloaded, not at the end of each call.
  assert.match(
    src,
    /destructor\)\) static void tb_release\(void\) \{\n {2}free\(tb_ws\.T_A_global_pool\);/,
  );
  assert.doesNotMatch(src.slice(src.indexOf("omp parallel")), /free\(/);
  assert.doesNotMatch(src.slice(src.indexOf("omp parallel")), /aligned_alloc/);
});

Deno.test("the register tile compiles to broadcast FMAs on accumulators kept in registers", async () => {
  const src = generateC(lower(packed(48, 64, 64)));
  const dir = await Deno.makeTempDir({ prefix: "tb-packing-" });
  try {
    const c = join(dir, "k.c"), s = join(dir, "k.s");
    await Deno.writeTextFile(c, src);
    const out = await new Deno.Command("gcc", {
      args: ["-O3", "-march=native", "-fopenmp", "-std=gnu11", "-S", "-o", s, c],
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const asm = await Deno.readTextFile(s);
    // The k loop: 6 x 2 multiply-adds on vector registers, none of them through memory.
    const fmas = asm.match(/\tv?fmadd\d*ps\t[^\n]*/g) ?? [];
    assert.ok(fmas.length >= 12, `${fmas.length} packed FMAs`);
    assert.ok(fmas.every((f) => !/\(/.test(f.split(",").pop()!)), "an FMA accumulates in memory");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("accumulations into C over a reduction loop stay in vector variables", () => {
  // BLIS order: k blocks outside the register tile, C += per block.
  const sch = sched(24, 64, 64);
  const [io, ii] = sch.split("C", "i", [null, 6]);
  const [jo, ji] = sch.split("C", "j", [null, 32]);
  const [ko, ki] = sch.split("C", "k", [null, 16]);
  sch.reorder("C", [ko, io, jo, ki, ii, ji]);
  sch.unroll("C", ii);
  sch.vectorize("C", ji);
  const src = generateC(lower(sch));
  // 6 x 2 accumulators loaded before the k loop, stored after it, added to inside it.
  assert.match(src, /tb_v16 T_C_acc11 = tb_loadu\(&T_C\[/);
  assert.match(src, /T_C_acc0 \+= \(T_A\[[^\n]*\] \* tb_loadu\(&T_B\[/);
  assert.match(src, /tb_storeu\(&T_C\[[^\n]*\], T_C_acc11\);/);
  assert.doesNotMatch(src, /tb_storeu\(&T_C\[[^\n]*tb_loadu\(&T_C/);
  assertTraceRoundTrip(sch);
});

Deno.test("a root packed copy of a layout-free input (weights) is a layout rewrite; of another input it is not", () => {
  // dense: W is layout-free (a layer's weights); matmul's B is an ordinary input.
  const dense = new Schedule(createWorkload("dense", [4, 32, 8]), { prng: createPrng(1) });
  const wp = dense.cacheRead("W", "global", ["D"]);
  dense.transformLayout(wp, 0, 16);
  const k = lower(dense);
  assert.ok(k.prologue && k.prologue.length > 0);
  assert.match(generateC(k), /void tb_layout\(float \*\*bufs\)/);
  const mm = sched(4, 32, 8);
  mm.cacheRead("B", "global", ["C"]);
  const m = lower(mm);
  assert.equal(m.prologue, undefined);
  assert.doesNotMatch(generateC(m), /tb_layout|TB_LAYOUT_REWRITE/);
  // Computed inside the loop nest (per block), a copy of the weights stays in the timed part.
  const inner = new Schedule(createWorkload("dense", [4, 32, 8]), { prng: createPrng(1) });
  const wi = inner.cacheRead("W", "global", ["D"]);
  const [io] = inner.split("D", "i", [null, 2]);
  inner.computeAt(wi, "D", io);
  assert.equal(lower(inner).prologue, undefined);
});

Deno.test("transform_layout stores a cache_write tile with the tiled axis innermost", () => {
  const sch = sched(8, 32, 4);
  const local = sch.cacheWrite("C");
  sch.transformLayout(local, 0, 2); // C_local[i][j] -> [i / 2][j][i % 2]
  const [io, ii] = sch.split("C", "i", [null, 2]);
  const [jo, ji] = sch.split("C", "j", [null, 16]);
  sch.reorder("C", [io, jo, ii, ji]);
  sch.computeAt(local, "C", jo);
  const src = generateC(lower(sch));
  // A 2 x 16 tile stored column by column: element (i, j) at 2 * j + i.
  assert.match(src, /T_C_local\[\(\(v_C_local_j \* 2\) \+ v_C_local_i\)\] = 0\.0f;/);
  assert.match(src, /T_C_local\[\(\(v_C_local_j \* 2\) \+ v_C_local_i\)\] \+= /);
});
