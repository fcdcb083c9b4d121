import assert from "node:assert/strict";
import { join } from "node:path";
import { compilerVersionLine } from "../measure/compile.ts";
import { generateC, ifConvertible, vectorPrelude } from "./codegen_c.ts";
import { biasAct, maxPool2d } from "./nn.ts";
import { lower } from "./lower.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { compute, IterVar, placeholder, reduceAxis, sum } from "./te.ts";
import { randomSchedule } from "./testing.ts";
import { conv2d, createWorkload, denseBiasRelu, matmul, type Workload } from "./workloads.ts";

const sched = (w: Workload) => new Schedule(w, { prng: createPrng(1) });

/** gcc's report of its `-march=native` target options. */
async function nativeTargetReport(): Promise<string> {
  const out = await new Deno.Command("gcc", {
    args: ["-march=native", "-Q", "--help=target"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

/** The registers of the AVX level that gcc's report gives. */
function avxRegisters(report: string): "zmm|ymm" | "ymm" | "xmm" {
  const on = (flag: string) => new RegExp(`^\\s*${flag}\\s+\\[enabled\\]`, "m").test(report);
  return on("-mavx512f") ? "zmm|ymm" : on("-mavx") ? "ymm" : "xmm";
}

/** The `-march=native` target's AVX level, from gcc's own report. */
async function nativeVectorRegisters(): Promise<"zmm|ymm" | "ymm" | "xmm"> {
  return avxRegisters(await nativeTargetReport());
}

/**
 * The registers gcc's loop vectorizer uses at `-march=native`: the AVX
 * level's, or 128-bit ones where the tuning prefers that width (gcc's
 * `znver1`, AMD's Zen 1, whose AVX2 units split 256-bit operations in two).
 */
async function vectorizerRegisters(): Promise<"zmm|ymm" | "ymm" | "xmm"> {
  const report = await nativeTargetReport();
  const width = /^\s*-mprefer-vector-width=\s+(\S+)/m.exec(report)?.[1];
  return width === "128" ? "xmm" : avxRegisters(report);
}

/** Assembly of `tb_kernel` (without OpenMP outlined functions) from gcc -O3 -march=native -S. */
async function assemblyOf(source: string, flags: string[] = []): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "tb-codegen-" });
  try {
    const c = join(dir, "k.c"), s = join(dir, "k.s");
    await Deno.writeTextFile(c, source);
    const out = await new Deno.Command("gcc", {
      args: ["-O3", "-march=native", "-fopenmp", "-std=gnu11", ...flags, "-S", "-o", s, c],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const asm = await Deno.readTextFile(s);
    const start = asm.indexOf("\ntb_kernel:");
    const end = asm.indexOf(".size\ttb_kernel,", start);
    assert.ok(start >= 0 && end > start, "no tb_kernel in the assembly");
    return asm.slice(start, end);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a vectorized matmul compiles to SIMD multiply-adds on vector registers", async () => {
  const sch = sched(matmul(64, 64, 64));
  const [j0, j1] = sch.split("C", "j", [null, 16]);
  sch.reorder("C", ["i", j0, "k", j1]);
  sch.vectorize("C", j1);
  const src = generateC(lower(sch));
  // 16 lanes: explicit GCC vector code (B contiguous, A broadcast), not a pragma; the
  // accumulator C[i, j0 * 16 ...] stays in a vector variable over the k loop.
  assert.match(src, /typedef float tb_v16 __attribute__\(\(vector_size\(64\)\)\);/);
  assert.match(src, /T_C_acc0 \+= \(T_A\[[^\n]*\] \* tb_loadu\(&T_B\[/);
  assert.doesNotMatch(src, /omp simd/);
  const asm = await assemblyOf(src);
  const regs = await nativeVectorRegisters();
  const simd = new RegExp(`\\bv?(fmadd\\w*ps|mulps)\\b[^\\n]*%(${regs})\\d+`);
  assert.match(asm, simd, `no packed multiply on ${regs} registers in:\n${asm.slice(0, 3000)}`);
  // A scalar-only kernel would use ss forms; this one does its arithmetic packed.
  const packed = asm.match(/\bv?(fmadd\w*ps|mulps)\b/g)?.length ?? 0;
  const scalar = asm.match(/\bv?(fmadd\w*ss|mulss)\b/g)?.length ?? 0;
  assert.ok(packed > scalar, `packed ${packed}, scalar ${scalar}`);
});

Deno.test("a ReLU runs in vectors under the build's -fno-tree-loop-if-convert; a padded max pool keeps the flag", async () => {
  // The default nest (serial, so the loop is in tb_kernel itself, not an OpenMP outlined function).
  const src = generateC(lower(sched(biasAct(1, 4, 64, "relu"))));
  assert.match(src, /__attribute__\(\(optimize\("tree-loop-if-convert"\)\)\) void tb_kernel/);
  const asm = await assemblyOf(src, ["-fno-tree-loop-if-convert"]);
  const regs = await vectorizerRegisters();
  assert.match(asm, new RegExp(`\\bv?addps\\b[^\\n]*%(${regs})\\d+`), asm.slice(0, 3000));
  // Without the attribute the same loop stays scalar: the test would fail on the old code.
  const plain = await assemblyOf(src.replace(/__attribute__\(\(optimize\([^)]*\)\)\) /, ""), [
    "-fno-tree-loop-if-convert",
  ]);
  assert.doesNotMatch(plain, new RegExp(`\\bv?addps\\b[^\\n]*%(${regs})\\d+`));
  // Padding is a select of a load: if-converted, gcc may read past the input.
  const padded = lower(sched(maxPool2d(1, 4, 16, 16, 3, 2, 1)));
  assert.equal(ifConvertible(padded.body), false);
  assert.doesNotMatch(generateC(padded), /optimize/);
  assert.equal(ifConvertible(lower(sched(maxPool2d(1, 4, 15, 15, 3, 2, 0))).body), true);
  assert.equal(ifConvertible(lower(sched(matmul(16, 16, 16))).body), false);
});

Deno.test("gcc.* pragmas become the kernel functions' optimize options, joining if-conversion", async () => {
  const sch = sched(biasAct(1, 4, 64, "relu"));
  sch.annotate("O", "gcc.predictive_commoning", 0);
  sch.annotate("O", "gcc.unroll_loops", 1);
  sch.annotate("O", "other.key", 0); // not a gcc option
  const kernel = lower(sch);
  assert.deepEqual(kernel.gccOptions, ["no-predictive-commoning", "unroll-loops"]);
  const src = generateC(kernel);
  assert.match(
    src,
    /__attribute__\(\(optimize\("tree-loop-if-convert", "no-predictive-commoning", "unroll-loops"\)\)\) void tb_kernel/,
  );
  await assemblyOf(src); // gcc accepts the attribute
  // Without gcc pragmas a kernel that needs no if-conversion has no attribute.
  assert.equal(lower(sched(matmul(8, 8, 8))).gccOptions, undefined);
  assert.doesNotMatch(generateC(lower(sched(matmul(8, 8, 8)))), /optimize/);
});

Deno.test("parallel, vectorize and unroll annotations become pragmas", () => {
  const sch = sched(matmul(32, 32, 32));
  const [i0, i1] = sch.split("C", "i", [null, 4]);
  const [j0, j1] = sch.split("C", "j", [null, 8]);
  sch.reorder("C", [i0, j0, "k", i1, j1]);
  sch.parallel("C", i0);
  sch.unroll("C", i1);
  sch.vectorize("C", j1);
  const src = generateC(lower(sch));
  assert.match(
    src,
    /#pragma omp parallel for schedule\(static\)\n\s*for \(int v_C_i_0 = 0; v_C_i_0 < 8; /,
  );
  assert.match(src, /_Pragma\("GCC unroll 4"\)\n\s*for \(int v_C_i_1 = 0; v_C_i_1 < 4; /);
  assert.match(src, /#pragma omp simd\n\s*for \(int v_C_j_1 = 0;/);
  assert.equal(src.match(/#pragma omp parallel for/g)?.length, 1);
  // An unannotated schedule has no pragmas at all.
  assert.doesNotMatch(generateC(lower(sched(matmul(8, 8, 8)))), /pragma/i);
});

Deno.test("an imperfect split is guarded, a perfect one is not", () => {
  const perfect = sched(matmul(32, 32, 32));
  perfect.split("C", "i", [null, 8]);
  assert.doesNotMatch(generateC(lower(perfect)), /if \(/);
  const imperfect = sched(matmul(37, 32, 32));
  imperfect.split("C", "i", [null, 8]);
  assert.match(generateC(lower(imperfect)), /if \(\(\(\(v_C_i_0 \* 8\) \+ v_C_i_1\) < 37\)\)/);
  // A fused loop split imperfectly needs its own guard: the root's would let `% 48` wrap.
  const fused = sched(matmul(16, 48, 8));
  const f = fused.fuse("C", ["i", "j"]);
  fused.split("C", f, [null, 10]); // 77 * 10 = 770 > 768
  assert.match(generateC(lower(fused)), /< 768\)/);
});

/**
 * matmul(m, 32, 64) with an MR-row register tile (i split `[null, ...rows]`,
 * the last factor MR) whose 16-float accumulators stay in vector variables
 * over the k loop, as the matmul-packed sketch makes it.
 */
function promotedTile(m: number, rows: number[], k: (number | null)[] = []): string {
  const sch = sched(matmul(m, 32, 64));
  const is = sch.split("C", "i", [null, ...rows]);
  const [j0, j1] = sch.split("C", "j", [null, 16]);
  const ks = k.length > 0 ? sch.split("C", "k", k) : ["k"];
  sch.reorder("C", [...is.slice(0, -1), j0, ...ks, is.at(-1)!, j1]);
  sch.unroll("C", is.at(-1)!);
  sch.vectorize("C", j1);
  return generateC(lower(sch));
}

/** The accumulator loads and stores of `src` that run only under a guard, and those that always run. */
function accumulatorAccesses(src: string) {
  const lines = src.split("\n").map((l) => l.trim());
  const load = /^tb_v16 T_C_acc\d+ = /, store = /tb_storeu\(&T_C\[[^\n]*, T_C_acc\d+\);$/;
  return {
    guarded:
      lines.filter((l) =>
        load.test(l) ? l.includes("? tb_loadu") : store.test(l) && l.startsWith("if ")
      ).length,
    always:
      lines.filter((l) =>
        load.test(l) ? !l.includes("?") : store.test(l) && l.startsWith("tb_storeu")
      ).length,
  };
}

Deno.test("a register tile's accumulators load and store only the rows inside the matrix", () => {
  // 13 rows in tiles of 6: the last tile holds row 12 only, rows 13..17 are past C.
  const src13 = promotedTile(13, [6]);
  assert.match(src13, /T_C_acc0 \+= /);
  assert.match(
    src13,
    /tb_v16 T_C_acc5 = \(\(\(\(v_C_i_0 \* 6\) \+ 5\) < 13\)\) \? tb_loadu\(&T_C\[/,
  );
  assert.match(src13, /if \(\(\(\(v_C_i_0 \* 6\) \+ 5\) < 13\)\) tb_storeu\(&T_C\[/);
  assert.deepEqual(accumulatorAccesses(src13), { guarded: 10, always: 2 });
  // 14 rows: the tile's rows 0 and 1 are always inside.
  assert.deepEqual(accumulatorAccesses(promotedTile(14, [6])), { guarded: 8, always: 4 });
  // No row can run past: the same code as before guards existed (no test, no select).
  for (const src of [promotedTile(12, [6]), promotedTile(30, [4, 6])]) {
    // 30 rows, 5 tiles in 2 x 4: the tile guard (i0 * 4 + i1 < 5) keeps rows below 30.
    assert.deepEqual(accumulatorAccesses(src), { guarded: 0, always: 12 });
    assert.doesNotMatch(src, /\? tb_loadu|\) tb_storeu/);
  }
  // A guard of the k loop (64 = 2 * 24 + 16) does not bound the accumulator's row: no guard.
  const srcK = promotedTile(12, [6], [null, 24]);
  assert.match(srcK, /\(\(v_C_k_0 \* 24\) \+ v_C_k_1\) < 64\)/);
  assert.deepEqual(accumulatorAccesses(srcK), { guarded: 0, always: 12 });
});

Deno.test("a register tile clipped to the matrix declares every vector variable its code names", () => {
  // An MR x NR = 4 x 64 tile of a one-row matrix holds one row (4 vectors);
  // the unrolled rows 1..3 of the copy-out are guarded off but name v4..v15.
  const sch = sched(matmul(1, 97, 3));
  const local = sch.cacheWrite("C");
  const [io, ir, ii] = sch.split("C", "i", [null, 1, 4]);
  const [jo, jr, ji] = sch.split("C", "j", [null, 1, 64]);
  sch.reorder("C", [io, jo, ir, jr, ii, ji]);
  sch.computeAt(local, "C", jr);
  sch.unroll("C", ii);
  sch.vectorize("C", ji);
  sch.reorder(local, ["k", "i", "j"]);
  sch.unroll(local, "i");
  sch.vectorize(local, "j");
  const src = generateC(lower(sch));
  const declared = new Set(
    [...src.matchAll(/tb_v16 (T_C_local\w*(?:, T_C_local\w*)*);/g)].flatMap((m) =>
      m[1].split(", ")
    ),
  );
  const named = new Set(src.match(/T_C_local_v\d+/g));
  assert.ok(named.has("T_C_local_v4"), "the guarded rows name variables past the tile");
  for (const v of named) assert.ok(declared.has(v), `${v} is not declared`);
});

Deno.test("tensor, axis and workload names are checked identifiers", () => {
  assert.throws(() => placeholder([4], "A;B"), TypeError);
  assert.throws(() => placeholder([4], "A B"), TypeError);
  assert.throws(() => placeholder([4], "1A"), TypeError);
  assert.throws(() => placeholder([4], ""), TypeError);
  assert.throws(() => placeholder([4], "x".repeat(65)), TypeError);
  assert.throws(() => placeholder([4], 'A*/ system("rm"); /*'), /Invalid tensor name/);
  assert.throws(() => reduceAxis(4, "k]"), /Invalid axis name/);
  assert.throws(() => new IterVar("i\n", 4, "spatial"), TypeError);
  const A = placeholder([4], "A");
  assert.throws(() => compute([4], (i) => A.at(i), "B\\"), TypeError);
  assert.throws(() => compute([4], (i) => A.at(i), "B", ["i+1"]), TypeError);
  assert.throws(() => placeholder([0], "Z"), RangeError);
  const k = reduceAxis(4, "i");
  assert.throws(() => compute([4], (i) => sum(A.at(i).mul(A.at(k)), [k]), "C", ["i"]), /twice/);
  assert.throws(() => createWorkload("matmul;", [4, 4, 4]), /Unknown workload/);
});

/** Every identifier of a generated kernel: C words, or names derived from checked names. */
const C_WORDS = new Set([
  "include",
  "stdlib",
  "string",
  "h",
  "void",
  "tb_kernel",
  "float",
  "int",
  "const",
  "restrict",
  "bufs",
  "aligned_alloc",
  "free",
  "for",
  "if",
  "pragma",
  "omp",
  "parallel",
  "schedule",
  "static",
  "simd",
  "_Pragma",
  "__attribute__",
  "aligned",
  "typedef",
  "vector_size",
  "inline",
  "return",
  "v",
  "p",
  "size_t",
  "__builtin_memcpy",
  "tb_v16",
  "tb_loadu",
  "tb_storeu",
  "omp_get_thread_num",
  "omp_get_max_threads",
  "tb_release",
  "define",
  "TB_LAYOUT_REWRITE",
  "tb_layout",
  "tb_compute",
  "destructor",
  "struct",
  "tb_ws",
]);

Deno.test("generated C only contains C words and names derived from checked names", () => {
  const workloads = [
    matmul(37, 29, 23),
    denseBiasRelu(13, 17, 19),
    conv2d(1, 3, 11, 13, 5, 3, 3, 2, 1),
  ];
  let checked = 0;
  for (const [wi, w] of workloads.entries()) {
    const tensors = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      const sch = randomSchedule(w, createPrng(1000 * wi + seed));
      for (const s of sch.stages) tensors.add(s.name);
      for (const t of w.inputs) tensors.add(t.name);
      const src = generateC(lower(sch))
        .replace(/"GCC unroll \d+"/g, "") // the string literals
        .replace(/__attribute__\(\(optimize\("tree-loop-if-convert"\)\)\)/g, "")
        .replace(/\b\d+(\.\d+)?(e[-+]?\d+)?f?\b/g, "0"); // numbers, with float suffixes
      for (const id of src.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) {
        checked++;
        if (C_WORDS.has(id)) continue;
        // Work space kept across calls: fields <buffer> and <buffer>_bytes of tb_ws.
        const m = id.replace(/^(.*?)_bytes$/, "$1").match(/^(T|v|m)_([A-Za-z0-9_]+)$/);
        assert.ok(m, `unexpected identifier ${id}`);
        // Buffers, loop variables and region starts all start with a stage or tensor name.
        const owner = [...tensors].some((t) => m[2] === t || m[2].startsWith(`${t}_`));
        assert.ok(owner, `identifier ${id} is not derived from a tensor name`);
      }
    }
  }
  assert.ok(checked > 1000);
});

/**
 * Checks each prelude function of `lanes` floats a vector against its scalar
 * meaning; exits non-zero on a wrong lane.
 */
function preludeCheck(lanes: 8 | 16): string {
  const v = `tb_v${lanes}`;
  return `
#include <stdio.h>
#define L ${lanes}
int main(void) {
  float a[64];
  for (int i = 0; i < 64; i++) a[i] = i + 1;
  int bad = 0;
  for (unsigned m = 0; m < (1u << L); m += (L == 16 ? 37 : 1)) {
    ${v} v = tb_loadu_m(a, m);
    for (int i = 0; i < L; i++) bad += v[i] != ((m >> i & 1) ? a[i] : 0);
    float o[L];
    for (int i = 0; i < L; i++) o[i] = -1;
    tb_storeu_m(o, tb_loadu(a + 3), m);
    for (int i = 0; i < L; i++) bad += o[i] != ((m >> i & 1) ? a[3 + i] : -1);
    ${v} s = tb_loadu_s2_m(a + 1, m);
    for (int i = 0; i < L; i++) bad += s[i] != ((m >> i & 1) ? a[1 + 2 * i] : 0);
    ${v} z = tb_maskz(tb_loadu(a + 2), m);
    for (int i = 0; i < L; i++) bad += z[i] != ((m >> i & 1) ? a[2 + i] : 0);
  }
  for (int n = 0; n <= L; n++) {
    float o[L + 1];
    for (int i = 0; i <= L; i++) o[i] = -1;
    tb_storeu_n(o, tb_loadu(a + 7), n);
    for (int i = 0; i <= L; i++) bad += o[i] != (i < n ? a[7 + i] : -1);
  }
  for (long n = -1; n <= L + 1; n++) bad += tb_lanes_lt(n) != (n <= 0 ? 0u : n >= L ? (1u << L) - 1 : (1u << n) - 1);
  ${v} s = tb_loadu_s2(a + 5);
  for (int i = 0; i < L; i++) bad += s[i] != a[5 + 2 * i];
  ${v} r[L];
  for (int i = 0; i < L; i++) for (int j = 0; j < L; j++) r[i][j] = i * L + j;
  tb_transpose${lanes}(r);
  for (int i = 0; i < L; i++) for (int j = 0; j < L; j++) bad += r[i][j] != j * L + i;
  ${v} x = tb_loadu(a), y = tb_loadu(a + 8) - 12;
  ${v} hi = tb_vmax(x, y), lo = tb_vmin(x, y);
  for (int i = 0; i < L; i++) bad += hi[i] != (x[i] > y[i] ? x[i] : y[i]) || lo[i] != (x[i] < y[i] ? x[i] : y[i]);
  printf("%d wrong lanes\\n", bad);
  return bad != 0;
}
`;
}

Deno.test("the vector preludes' masked, first-n-lanes, stride-2, max/min and transpose code is right lane by lane for AVX-512, AVX2 and portable targets, 16 and 8 lanes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-prelude-" });
  try {
    const sources: [string, string][] = [];
    for (const lanes of [16, 8] as const) {
      const c = join(dir, `p${lanes}.c`);
      await Deno.writeTextFile(c, `${vectorPrelude(lanes)}\n${preludeCheck(lanes)}`);
      sources.push([c, `${lanes} lanes`]);
    }
    const native = await nativeVectorRegisters();
    const targets: string[][] = [["-march=x86-64"]];
    if (native !== "xmm") targets.push(["-march=x86-64", "-mavx2", "-mfma"]);
    if (native === "zmm|ymm") targets.push(["-march=native"]);
    const compilers = ["gcc"];
    // Absent where setup did not install it (it does only on CPUs without AVX-512).
    const clang = await compilerVersionLine("clang-14").then(() => true, () => false);
    if (clang) compilers.push("clang-14");
    for (const [c, lanes] of sources) {
      for (const cc of compilers) {
        for (const target of targets) {
          const exe = join(dir, "p");
          const built = await new Deno.Command(cc, {
            args: ["-O2", "-std=gnu11", "-w", ...target, c, "-o", exe],
            stdout: "piped",
            stderr: "piped",
          }).output();
          const what = `${lanes}, ${cc} ${target.join(" ")}`;
          assert.ok(built.success, `${what}: ${new TextDecoder().decode(built.stderr)}`);
          const ran = await new Deno.Command(exe, { stdout: "piped" }).output();
          assert.equal(new TextDecoder().decode(ran.stdout).trim(), "0 wrong lanes", what);
        }
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
