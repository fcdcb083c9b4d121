/**
 * bench/rl_overhead.ts runs on a tiny size and prints agent milliseconds per
 * trial for every RL strategy.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { rlOverhead } from "../bench/rl_overhead.ts";

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
  assert.ok(rows[0].cpuMsPerTrial >= 0);
});
