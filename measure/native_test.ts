import assert from "node:assert/strict";
import type { Trace } from "../ir/trace.ts";
import { createWorkload } from "../ir/workloads.ts";
import type { Builder } from "./builder.ts";
import { toleranceOf } from "./kernel_source.ts";
import { createNativeMeasurer, type NativeMeasurerOptions } from "./native.ts";
import type { Runner } from "./runner.ts";
import type { BuildResult, MeasureInput, RunResult } from "./types.ts";

const workload = createWorkload("matmul", [8, 8, 8]);

/** A trace that only serves as an identity: `n` picks what the fakes do with it. */
const traceOf = (n: number) => ({ version: 1, insts: [], n }) as unknown as Trace;
const nOf = (t: Trace) => (t as unknown as { n: number }).n;

/**
 * Fakes that log: sources `bad-N` fail to compile, `N` builds; the runner
 * answers kernel N with N ms. `gate` holds a call's runner until released.
 */
function fakes(events: string[]) {
  let builds = 0, runs = 0, references = 0;
  const inputs: MeasureInput[] = [];
  const gates: (() => void)[] = [];
  const waits: Promise<void>[] = [];
  const builder: Builder = {
    async build(batch) {
      const k = builds++;
      events.push(`build ${k} start`);
      await Promise.resolve();
      events.push(`build ${k} end`);
      return batch.map(({ source }): BuildResult => {
        // The reference is real C (referenceSource); candidates are the fakes' short strings.
        if (source.includes("{")) source = "reference";
        if (source === "reference") references++;
        return source.startsWith("bad")
          ? {
            errorKind: "compile_host",
            error: "syntax",
            buildSeconds: 0.5,
            cached: false,
            hash: "",
          }
          : {
            errorKind: "none",
            artifact: source,
            buildSeconds: 0.25,
            cached: false,
            hash: source,
          };
      });
    },
    describe: () => Promise.resolve("fake"),
  };
  const runner: Runner = {
    async run(batch, onResult) {
      const k = runs++;
      events.push(`run ${k} start`);
      inputs.push(...batch);
      await (waits[k] ?? Promise.resolve());
      const out = batch.map((input, i): RunResult => {
        const r = {
          errorKind: "none" as const,
          times: [Number(input.artifact) / 1e3],
          runSeconds: 1,
        };
        onResult?.(i, r);
        return r;
      });
      events.push(`run ${k} end`);
      return out;
    },
    close: () => Promise.resolve(),
  };
  const hold = (k: number) => waits[k] = new Promise<void>((r) => gates[k] = r);
  return {
    builder,
    runner,
    inputs,
    hold,
    release: (k: number) => gates[k](),
    references: () => references,
  };
}

function options(f: ReturnType<typeof fakes>, extra: Partial<NativeMeasurerOptions> = {}) {
  return {
    workload,
    builder: f.builder,
    runner: f.runner,
    source: (t: Trace) => {
      const n = nOf(t);
      if (n < 0) return { error: `cannot split loop: ${n}` };
      return n >= 100 ? { source: `bad-${n}` } : { source: String(n) };
    },
    ...extra,
  };
}

Deno.test("createNativeMeasurer() returns one result per candidate in batch order, faults as error kinds", async () => {
  const f = fakes([]);
  const m = createNativeMeasurer(options(f));
  const arrived: number[] = [];
  const rs = await m.measure(
    [traceOf(3), traceOf(-1), traceOf(100), traceOf(5)].map((trace) => ({ trace })),
    {
      onResult: (i) => arrived.push(i),
    },
  );
  assert.deepEqual(rs.map((r) => r.errorKind), [
    "none",
    "instantiation_error",
    "compile_host",
    "none",
  ]);
  assert.deepEqual(rs[0], { errorKind: "none", times: [3e-3], buildSeconds: 0.25, runSeconds: 1 });
  assert.equal(rs[1].error, "cannot split loop: -1");
  assert.equal(rs[2].buildSeconds, 0.5);
  assert.deepEqual(arrived.sort(), [0, 1, 2, 3]);
  // Every input is checked against the same reference with the workload's tolerance.
  assert.ok(
    f.inputs.every((i) => i.reference === "reference" && i.atol === toleranceOf(workload).atol),
  );
  await m.measure([{ trace: traceOf(7) }]);
  assert.equal(f.references(), 1, "the reference is built once");
  assert.ok(m.timings.build >= 0 && m.timings.run >= 0);
  await m.close();
});

Deno.test("createNativeMeasurer() builds a second call's batch while the first is run, and runs them in call order", async () => {
  const events: string[] = [];
  const f = fakes(events);
  const m = createNativeMeasurer(options(f));
  f.hold(0);
  const first = m.measure([{ trace: traceOf(1) }]);
  const second = m.measure([{ trace: traceOf(2) }]);
  // The first call's runner waits for the gate; the second call's build finishes meanwhile.
  for (let i = 0; !events.includes("build 2 end"); i++) {
    assert.ok(i < 10_000, `the second batch was not built while the first was run: ${events}`);
    await new Promise((r) => setTimeout(r, 1));
  }
  assert.ok(!events.includes("run 1 start"), events.join("\n"));
  f.release(0);
  const [[a], [b]] = await Promise.all([first, second]);
  assert.equal(a.times[0], 1e-3);
  assert.equal(b.times[0], 2e-3);
  assert.ok(events.indexOf("run 0 end") < events.indexOf("run 1 start"), events.join("\n"));
  await m.close();
});

Deno.test("createNativeMeasurer() passes the racing cutoff and the looser of a source's tolerance and the workload's", async () => {
  const f = fakes([]);
  const loose = { atol: 0.5, rtol: 1e-4 };
  const m = createNativeMeasurer(options(f, {
    source: (t) => ({ source: String(nOf(t)), tolerance: loose }),
  }));
  await m.measure([{ trace: traceOf(1) }], { cutoffSeconds: 2e-3 });
  await m.measure([{ trace: traceOf(2) }]);
  assert.equal(f.inputs[0].cutoffSeconds, 2e-3);
  assert.equal(f.inputs[1].cutoffSeconds, undefined);
  assert.equal(f.inputs[0].atol, 0.5);
  assert.equal(f.inputs[0].rtol, toleranceOf(workload).rtol);
  await m.close();
});

Deno.test("createNativeMeasurer() throws for a candidate without a trace, and a failed call does not block the next", async () => {
  const f = fakes([]);
  const m = createNativeMeasurer(options(f));
  await assert.rejects(m.measure([{ knobs: [1] }]), /has no trace/);
  const [r] = await m.measure([{ trace: traceOf(4) }]);
  assert.equal(r.errorKind, "none");
  await m.close();
});
