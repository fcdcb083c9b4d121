import assert from "node:assert/strict";
import { createBuilder } from "./builder.ts";
import { createRunner, defaultOmpThreads } from "./runner.ts";
import {
  SLOW_REFERENCE_SECONDS,
  VADD_GOOD,
  VADD_HANG,
  VADD_NOTHING,
  VADD_ONE_THREAD,
  VADD_REFERENCE,
  VADD_SEGFAULT,
  VADD_SIGNATURE,
  VADD_SLOW_REFERENCE,
  VADD_WRONG,
} from "./test_kernels.ts";
import type { ErrorKind, MeasureInput } from "./types.ts";

/** Builds the named kernels plus the reference (as `reference`) into a temp dir. */
async function buildAll(
  sources: Record<string, string>,
): Promise<{ dir: string; reference: string; artifacts: Record<string, string> }> {
  const dir = await Deno.makeTempDir({ prefix: "tb-runner-" });
  const all: Record<string, string> = { reference: VADD_REFERENCE, ...sources };
  const names = Object.keys(all);
  const built = await createBuilder({ cacheDir: dir }).build(
    names.map((n) => ({ source: all[n] })),
  );
  for (const b of built) assert.equal(b.errorKind, "none", b.error ?? "");
  const artifacts: Record<string, string> = {};
  names.forEach((n, i) => artifacts[n] = built[i].artifact!);
  return { dir, reference: artifacts.reference, artifacts };
}

function input(artifact: string, reference: string): MeasureInput {
  return { artifact, reference, signature: VADD_SIGNATURE, seed: 42, atol: 1e-6, rtol: 1e-5 };
}

Deno.test("runner measures good kernels and survives crashes, hangs and wrong answers", async () => {
  const { dir, reference, artifacts } = await buildAll({
    good: VADD_GOOD,
    segfault: VADD_SEGFAULT,
    hang: VADD_HANG,
    wrong: VADD_WRONG,
    nothing: VADD_NOTHING,
  });
  const runner = createRunner({ timeoutSeconds: 2, timing: { repeat: 4 } });
  try {
    const plan: [string, ErrorKind][] = [
      ["good", "none"],
      ["segfault", "runtime_crash"],
      ["good", "none"],
      ["hang", "run_timeout"],
      ["good", "none"],
      ["wrong", "wrong_answer"],
      ["good", "none"],
      ["nothing", "wrong_answer"],
      ["good", "none"],
    ];
    const seen: number[] = [];
    const results = await runner.run(
      plan.map(([name]) => input(artifacts[name], reference)),
      (index) => seen.push(index),
    );
    assert.deepEqual(seen, plan.map((_, i) => i));
    results.forEach((r, i) => assert.equal(r.errorKind, plan[i][1], `#${i}: ${r.error}`));
    for (const [i, r] of results.entries()) {
      assert.ok(r.runSeconds > 0);
      if (plan[i][1] === "none") {
        assert.equal(r.times.length, 4);
        // Seconds per call: within the request's wall time, whatever the load.
        assert.ok(r.times.every((t) => t > 0 && t <= r.runSeconds), `times ${r.times}`);
        assert.equal(r.error, undefined);
        // The output check is timed, and is a part of the run's seconds.
        assert.ok(r.verifySeconds! > 0 && r.verifySeconds! <= r.runSeconds, `${r.verifySeconds}`);
        // The harness's speed probe ran around the repeats.
        assert.ok(r.probeGBps! > 0, `probe ${r.probeGBps}`);
      } else {
        assert.deepEqual(r.times, []);
      }
      // A wrong answer was checked (its check timed); a crash or a hang never finished one.
      if (plan[i][1] === "wrong_answer") assert.ok(r.verifySeconds! > 0);
      if (plan[i][1] === "runtime_crash") assert.equal(r.verifySeconds, undefined);
      // Nothing timed, no probe.
      if (plan[i][1] !== "none") assert.equal(r.probeGBps, undefined);
    }
    assert.match(results[1].error!, /SIGSEGV/);
    assert.doesNotMatch(results[1].error!, /reference/);
    assert.match(results[3].error!, /2 s/);
    assert.doesNotMatch(results[3].error!, /reference/);
    assert.match(results[5].error!, /index 7: got .*, expected .*; 2 of 1024 elements wrong/);
    assert.match(results[7].error!, /index 0: got NaN, expected .*; 1024 of 1024 elements wrong/);
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner reports bad artifacts as runtime_error and spreads work over workers", async () => {
  const { dir, reference, artifacts } = await buildAll({ good: VADD_GOOD });
  const runner = createRunner({ workers: 2, timing: { number: 2, repeat: 2, warmup: 0 } });
  try {
    const results = await runner.run([
      input(artifacts.good, reference),
      input(`${dir}/missing.so`, reference),
      input(reference, reference), // the reference, built by the builder, also has tb_time
      input(artifacts.good, `${dir}/missing-reference.so`),
      input(artifacts.good, reference),
    ]);
    assert.deepEqual(results.map((r) => r.errorKind), [
      "none",
      "runtime_error",
      "none",
      "runtime_error",
      "none",
    ]);
    assert.match(results[1].error!, /missing\.so/);
    assert.match(results[3].error!, /missing-reference\.so/);
    assert.equal(results[0].times.length, 2);
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner gives the reference its own time limit and names it on failure", async () => {
  const { dir, reference, artifacts } = await buildAll({
    good: VADD_GOOD,
    slowReference: VADD_SLOW_REFERENCE,
    hangReference: VADD_HANG,
    crashReference: VADD_SEGFAULT,
  });
  // Both runners at once, to keep the wall time near the slow reference's.
  const slow = createRunner({ timeoutSeconds: 1, timing: { repeat: 2 } });
  const broken = createRunner({ timeoutSeconds: 1, referenceTimeoutSeconds: 2 });
  try {
    const [slowResults, brokenResults] = await Promise.all([
      slow.run([
        input(artifacts.good, artifacts.slowReference),
        input(artifacts.good, artifacts.slowReference), // reference output now cached
      ]),
      broken.run([
        input(artifacts.good, artifacts.hangReference),
        input(artifacts.good, artifacts.crashReference),
        input(artifacts.good, reference),
      ]),
    ]);
    // The second is right only if the worker kept the reference output: the slow reference
    // writes zeros on every call after its first.
    slowResults.forEach((r, i) => assert.equal(r.errorKind, "none", `slow #${i}: ${r.error}`));
    assert.ok(slowResults[0].runSeconds >= SLOW_REFERENCE_SECONDS - 0.1);
    assert.equal(slowResults[0].times.length, 2);
    assert.deepEqual(brokenResults.map((r) => r.errorKind), [
      "run_timeout",
      "runtime_crash",
      "none",
    ]);
    assert.match(brokenResults[0].error!, /reference kernel timed out.* 2 s/);
    assert.match(brokenResults[1].error!, /reference kernel crashed.*SIGSEGV/);
  } finally {
    await Promise.all([slow.close(), broken.close()]);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner refuses work after close", async () => {
  const runner = createRunner();
  await runner.close();
  await assert.rejects(runner.run([]), /closed/);
});

Deno.test("runner sets OpenMP threads per worker; by default the cores are shared among workers", async () => {
  const { dir, reference, artifacts } = await buildAll({ oneThread: VADD_ONE_THREAD });
  const measure = async (options: { workers: number; ompThreads?: number }) => {
    const runner = createRunner({ ...options, timing: { repeat: 1 } });
    try {
      const [r] = await runner.run([input(artifacts.oneThread, reference)]);
      return r.errorKind;
    } finally {
      await runner.close();
    }
  };
  try {
    assert.equal(await measure({ workers: 1, ompThreads: 1 }), "none");
    assert.equal(await measure({ workers: 1, ompThreads: 3 }), "wrong_answer");
    // As many workers as cores: one thread each, whatever libgomp would pick.
    const cores = navigator.hardwareConcurrency;
    assert.equal(defaultOmpThreads(cores), 1);
    assert.equal(defaultOmpThreads(1), cores);
    if (Deno.env.get("OMP_NUM_THREADS") === undefined) {
      assert.equal(await measure({ workers: cores }), "none");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("racing: a candidate slower than the cutoff gets its first repeat only", async () => {
  const { dir, reference, artifacts } = await buildAll({ good: VADD_GOOD });
  const runner = createRunner({ timing: { repeat: 4, minRepeatMs: 1 } });
  try {
    const [raced, kept, plain] = await runner.run([
      // No kernel of 1024 additions takes a picosecond: cut after one repeat.
      { ...input(artifacts.good, reference), cutoffSeconds: 1e-12 },
      // Nor an hour: every repeat.
      { ...input(artifacts.good, reference), cutoffSeconds: 3600 },
      input(artifacts.good, reference),
    ]);
    for (const r of [raced, kept, plain]) assert.equal(r.errorKind, "none", r.error ?? "");
    assert.equal(raced.times.length, 1);
    assert.equal(kept.times.length, 4);
    assert.equal(plain.times.length, 4);
    for (const r of [raced, kept]) {
      for (const t of r.times) assert.ok(t > 0 && t <= r.runSeconds, `time ${t}`);
    }
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("noisy repeats: a candidate whose repeats spread past noisySpread gets as many again, all kept", async () => {
  // Correct, but every other call busy-waits 2 ms: its repeats alternate slow and fast.
  const uneven = "#include <time.h>\n#define N 1024\nvoid tb_kernel(float **bufs) {\n" +
    "  static int calls = 0;\n  if (calls++ % 2 == 0) {\n    struct timespec t0, t;\n" +
    "    clock_gettime(CLOCK_MONOTONIC, &t0);\n    do clock_gettime(CLOCK_MONOTONIC, &t);\n" +
    "    while ((t.tv_sec - t0.tv_sec) * 1e9 + (t.tv_nsec - t0.tv_nsec) < 2e6);\n  }\n" +
    "  for (int i = 0; i < N; i++) bufs[2][i] = bufs[0][i] + bufs[1][i];\n}\n";
  const { dir, reference, artifacts } = await buildAll({ good: VADD_GOOD, uneven });
  const timing = { number: 1, repeat: 3, minRepeatMs: 0 };
  const noisy = createRunner({ timing: { ...timing, noisySpread: 1.25 } });
  const plain = createRunner({ timing });
  try {
    const [extended] = await noisy.run([input(artifacts.uneven, reference)]);
    assert.equal(extended.errorKind, "none", extended.error ?? "");
    assert.equal(extended.times.length, 6);
    assert.ok(Math.max(...extended.times) > 1.25 * Math.min(...extended.times));
    const [once] = await plain.run([input(artifacts.uneven, reference)]);
    assert.equal(once.times.length, 3, "no noisySpread: never more repeats");
    // Repeats of at least 1 ms of a vector add do not differ 1000-fold: 3 repeats, no more.
    const strict = createRunner({ timing: { ...timing, minRepeatMs: 1, noisySpread: 1000 } });
    try {
      const [kept] = await strict.run([input(artifacts.good, reference)]);
      assert.equal(kept.times.length, 3);
    } finally {
      await strict.close();
    }
  } finally {
    await noisy.close();
    await plain.close();
    await Deno.remove(dir, { recursive: true });
  }
  assert.throws(
    () => createRunner({ timing: { noisySpread: 0.5 } }),
    /timing\.noisySpread must be a number >= 1/,
  );
});
