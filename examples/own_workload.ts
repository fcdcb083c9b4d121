/**
 * Your own workload: a tensor expression written with `placeholder` and `compute` (ir/te.ts, TVM's
 * te), here a matrix-vector product with bias and ReLU, `y[i] = max(sum_k A[i,k] x[k] + b[i], 0)`.
 * The default design space (Ansor-style sketches) applies to any such expression: the script
 * samples schedules of it, prints one as schedule code, lowers each to a loop nest and C, compiles
 * that C with gcc to check it builds, and evaluates the expression with the JavaScript reference
 * interpreter. (Measuring it with `tune` or `runSession` needs the workload in the registry,
 * `WORKLOADS` of ir/workloads.ts, since measurement workers rebuild a workload from its name.)
 *
 * Run: `deno run -A examples/own_workload.ts [OUT_DIR]` (outside this repository, import
 * `<clone>/mod.ts` by path or file URL instead of "../mod.ts"). Needs gcc.
 */
import { createPrng, lower, printTrace, Schedule, traceOf, type Workload } from "../mod.ts";
import { compute, evaluate, generateC, max, placeholder, reduceAxis, sum } from "../ir/mod.ts";
import { sketchesOf } from "../search/mod.ts";

const out = Deno.args[0] ?? ".";
const M = 64, K = 128;
const A = placeholder([M, K], "A"), x = placeholder([K], "x"), b = placeholder([M], "b");
const k = reduceAxis(K, "k");
const dot = compute([M], (i) => sum(A.at(i, k).mul(x.at(k)), [k]), "dot", ["i"]);
const y = compute([M], (i) => max(dot.at(i).add(b.at(i)), 0), "y", ["i"]);
const workload: Workload = {
  name: "matvec_bias_relu",
  shape: [M, K],
  inputs: [A, x, b],
  outputs: [y],
  flops: 2 * M * K + 2 * M,
};

// The reference interpreter: inputs by tensor name, every computed tensor back.
const prng = createPrng(1);
const inputs = new Map([A, x, b].map((t) => {
  const v = new Float32Array(t.size);
  for (let i = 0; i < v.length; i++) v[i] = prng.next() * 2 - 1;
  return [t.name, v];
}));
const reference = evaluate(workload, inputs).get("y")!;
console.log(`y[0..3] = ${Array.from(reference.slice(0, 4), (v) => v.toFixed(4)).join(", ")}`);

// Sample schedules from each sketch, print the first, and compile each one's C.
const sketches = sketchesOf(workload);
console.log(`sketches: ${Object.keys(sketches).join(", ")}`);
let shown = false;
for (const [name, sketch] of Object.entries(sketches)) {
  const sch = new Schedule(workload, { prng: createPrng(7) });
  sketch(sch);
  if (!shown) {
    console.log(`a schedule of sketch ${name}:\n${printTrace(traceOf(sch))}`);
    shown = true;
  }
  const c = generateC(lower(sch));
  const file = `${out}/${name.replace(/\W/g, "_")}.c`;
  await Deno.writeTextFile(file, c);
  const gcc = await new Deno.Command("gcc", {
    args: ["-O3", "-march=native", "-fopenmp", "-c", file, "-o", `${file}.o`],
    stderr: "piped",
  }).output();
  if (!gcc.success) {
    throw new Error(`gcc failed on ${name}: ${new TextDecoder().decode(gcc.stderr)}`);
  }
  console.log(`sketch ${name}: ${c.split("\n").length} lines of C, compiled`);
}
