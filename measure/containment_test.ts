/**
 * Contained kernels and transient failures, end to end through the runner:
 * a kernel that forks, one that asks for 6 GiB, one that spins after the
 * tuner is killed, and workers killed from outside.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createBuilder } from "./builder.ts";
import { createRunner } from "./runner.ts";
import {
  VADD_ALLOC_6G,
  VADD_FORK,
  VADD_GOOD,
  VADD_REFERENCE,
  VADD_SIGKILL,
  VADD_SIGNATURE,
  vaddOnceStuck,
} from "./test_kernels.ts";
import type { MeasureInput } from "./types.ts";

async function build(dir: string, sources: string[]): Promise<string[]> {
  const built = await createBuilder({ cacheDir: dir }).build(sources.map((source) => ({ source })));
  for (const b of built) assert.equal(b.errorKind, "none", b.error ?? "");
  return built.map((b) => b.artifact!);
}

function input(artifact: string, reference: string): MeasureInput {
  return { artifact, reference, signature: VADD_SIGNATURE, seed: 7, atol: 1e-6, rtol: 1e-5 };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Polls `done` (every 50 ms, up to `seconds`: only a failing test waits that long). */
async function until(done: () => Promise<boolean>, seconds = 120): Promise<boolean> {
  for (let i = 0; i < seconds * 20; i++) {
    if (await done()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "null" }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

/** Pids of the live children of `pid`. */
async function childrenOf(pid: number): Promise<number[]> {
  return (await run("pgrep", ["-P", String(pid)])).split(/\s+/).filter(Boolean).map(Number);
}

/** True when `pid` has exited (gone, or a zombie nobody reaped yet). */
async function gone(pid: number): Promise<boolean> {
  const stat = await run("ps", ["-o", "stat=", "-p", String(pid)]);
  return stat === "" || stat.startsWith("Z");
}

Deno.test("a kernel cannot fork: no child outlives the run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-contain-" });
  const [reference, fork] = await build(dir, [VADD_REFERENCE, VADD_FORK]);
  const runner = createRunner({ timing: { repeat: 2 } });
  try {
    // VADD_FORK is right only when its fork() fails.
    const [r] = await runner.run([input(fork, reference)]);
    assert.equal(r.errorKind, "none", r.error ?? "");
    assert.equal(await run("pgrep", ["-x", "tbforkchild"]), "");
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a kernel's 6 GiB allocation fails under the worker's memory limit", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-contain-" });
  const [reference, alloc] = await build(dir, [VADD_REFERENCE, VADD_ALLOC_6G]);
  // VADD_ALLOC_6G is right only when malloc fails (it never touches the memory it gets).
  const limited = createRunner({ memoryBytes: 2 ** 30, timing: { repeat: 1 } });
  const roomy = createRunner({ memoryBytes: 64 * 2 ** 30, timing: { repeat: 1 } });
  try {
    const [capped] = await limited.run([input(alloc, reference)]);
    assert.equal(capped.errorKind, "none", capped.error ?? "");
    const [uncapped] = await roomy.run([input(alloc, reference)]);
    assert.equal(uncapped.errorKind, "wrong_answer", "the limit, not the machine, refused it");
  } finally {
    await Promise.all([limited.close(), roomy.close()]);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a worker killed from outside is worker_lost, measured again at once, and valid", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-contain-" });
  const marker = join(dir, "started");
  const [reference, stuck, selfKill, good] = await build(dir, [
    VADD_REFERENCE,
    vaddOnceStuck(marker),
    VADD_SIGKILL,
    VADD_GOOD,
  ]);
  const runner = createRunner({ timeoutSeconds: 600, timing: { repeat: 2 } });
  try {
    const pending = runner.run([input(stuck, reference)]);
    assert.ok(await until(() => exists(marker)), "the kernel started");
    const workers = await childrenOf(Deno.pid);
    assert.ok(workers.length > 0);
    for (const pid of workers) Deno.kill(pid, "SIGKILL");
    const [r] = await pending;
    // The second measurement, in a fresh worker, finds the marker and is right.
    assert.equal(r.errorKind, "none", r.error ?? "");
    assert.equal(r.times.length, 2);
    // SIGKILL both times: lost twice, and the message says so.
    const [lost, after] = await runner.run([input(selfKill, reference), input(good, reference)]);
    assert.equal(lost.errorKind, "worker_lost");
    assert.match(
      lost.error!,
      /SIGKILL.*from outside the kernel.*measured twice; first: worker_lost/,
    );
    assert.equal(after.errorKind, "none", after.error ?? "");
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a reference killed from outside (as by the OOM killer) is worker_lost, then valid", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-contain-" });
  const marker = join(dir, "reference-started");
  const [reference, good] = await build(dir, [vaddOnceStuck(marker), VADD_GOOD]);
  const runner = createRunner({ timing: { repeat: 1 } });
  try {
    const pending = runner.run([input(good, reference)]);
    assert.ok(await until(() => exists(marker)), "the reference started");
    for (const pid of await childrenOf(Deno.pid)) Deno.kill(pid, "SIGKILL");
    const [r] = await pending;
    assert.equal(r.errorKind, "none", r.error ?? "");
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a timeout of a worker starved of CPU is run_timeout_transient and measured again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-contain-" });
  const marker = join(dir, "sleeping");
  // A sleeping kernel gets no CPU, as one on a loaded machine gets too little: the limit waits
  // for CPU time up to 4x, then calls the timeout transient. The next measurement is valid.
  const [reference, sleepsOnce, sleeps] = await build(dir, [
    VADD_REFERENCE,
    vaddOnceStuck(marker),
    vaddOnceStuck(join(dir, "never-created/x")),
  ]);
  const runner = createRunner({ timeoutSeconds: 0.5, timing: { repeat: 1 } });
  try {
    const [again, starved] = await runner.run([
      input(sleepsOnce, reference),
      input(sleeps, reference),
    ]);
    assert.equal(again.errorKind, "none", again.error ?? "");
    assert.equal(starved.errorKind, "run_timeout_transient");
    assert.match(starved.error!, /machine loaded.*measured twice; first: run_timeout_transient/);
  } finally {
    await runner.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a kernel spinning when the tuner is killed dies with it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-contain-" });
  const marker = join(dir, "spinning");
  const [reference, spin] = await build(dir, [VADD_REFERENCE, vaddOnceStuck(marker, true)]);
  const script = join(dir, "tuner.ts");
  const runnerUrl = new URL("./runner.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    `import { createRunner } from ${JSON.stringify(runnerUrl)};
const runner = createRunner({ timeoutSeconds: 600 });
await runner.run([${JSON.stringify(input(spin, reference))}]);`,
  );
  const tuner = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", script],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let workers: number[] = [];
  try {
    assert.ok(await until(() => exists(marker)), "the kernel started spinning");
    workers = await childrenOf(tuner.pid);
    assert.ok(workers.length > 0);
    tuner.kill("SIGKILL");
    await tuner.status;
    for (const pid of workers) {
      assert.ok(await until(() => gone(pid), 30), `worker ${pid} still runs`);
    }
  } finally {
    try {
      tuner.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await tuner.status;
    for (const pid of workers) {
      try {
        Deno.kill(pid, "SIGKILL"); // A failed test leaves no spinning worker behind.
      } catch {
        // Gone, as it should be.
      }
    }
    await Deno.remove(dir, { recursive: true });
  }
});
