/**
 * bench/rl_overhead.ts runs on a tiny size and prints agent milliseconds per
 * trial for every RL strategy.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { rlOverhead, timed } from "../bench/rl_overhead.ts";
import type { Strategy } from "../search/strategy.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("bench/rl_overhead.ts prints ms per trial (wall and CPU) of every RL strategy", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-env",
      "bench/rl_overhead.ts",
      "8",
      "1",
      "pnpoly_RTX_3090",
    ],
    cwd: ROOT,
    stdin: "null",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const text = new TextDecoder().decode(out.stdout);
  assert.match(text, /ms\/trial \(wall\)\s+ms\/trial \(CPU\)/);
  for (const name of ["ppo", "dqn", "bandit", "bandit-linucb"]) {
    assert.match(text, new RegExp(`^${name}\\s+8\\s+\\d+\\.\\d\\d\\s+\\d+\\.\\d\\d`, "m"), name);
  }
});

Deno.test("rlOverhead() counts the distinct trials of every seed", async () => {
  const rows = await rlOverhead({
    space: "pnpoly_RTX_3090",
    strategies: ["bandit-linucb"],
    budget: 6,
    seeds: 2,
    warmup: 2,
  });
  assert.equal(rows.length, 1);
  assert.equal(rows[0].trials, 12);
  assert.ok(rows[0].msPerTrial > 0 && rows[0].worstSeedMs >= rows[0].msPerTrial - 1e-9);
  // The agent's work is real CPU time (propose and observe run in this process).
  assert.ok(rows[0].cpuMsPerTrial > 0, `${rows[0].cpuMsPerTrial}`);
});

Deno.test("timed() counts a busy propose as CPU and wall time, and a sleeping observe as wall only", async () => {
  const cpuMs = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const busyMs = 30, sleepMs = 200;
  const strategy: Strategy = {
    name: "fake",
    propose() {
      // Spin until this process has used busyMs of CPU and busyMs of wall time have passed:
      // however loaded the machine (fewer CPU ms per wall ms) or busy the runtime's own threads
      // (more), both are at least that much.
      const start = cpuMs(), t0 = performance.now();
      while (cpuMs() - start < busyMs || performance.now() - t0 < busyMs) { /* spin */ }
      return [];
    },
    observe: () => new Promise<void>((done) => setTimeout(done, sleepMs)),
  };
  const timer = { ms: 0, cpu: 0 };
  const s = timed(strategy, timer);
  s.propose(1);
  const afterPropose = { ...timer };
  await s.observe([]);
  assert.ok(afterPropose.cpu >= busyMs, `propose: ${afterPropose.cpu} ms of CPU`);
  assert.ok(afterPropose.ms >= busyMs - 1, `propose: ${afterPropose.ms} ms of wall time`);
  const observeMs = timer.ms - afterPropose.ms, observeCpu = timer.cpu - afterPropose.cpu;
  assert.ok(observeMs >= sleepMs - 1, `observe: ${observeMs} ms of wall time`);
  // Sleeping uses (almost) no CPU: far less than the sleep, even with the runtime's own threads.
  assert.ok(observeCpu < sleepMs / 2, `observe: ${observeCpu} ms of CPU while asleep`);
});
