/**
 * Your own strategy through the ask/tell protocol (`Strategy` of search/strategy.ts): a greedy
 * hill climber over a knob space. `propose(n)` returns candidates, `observe(results)` takes their
 * measurements, failures included; the tuning loop (`runStrategy`) deduplicates, records and counts
 * the budget. Here it runs on the replayed pnpoly cache beside random search.
 *
 * Run: `deno run -A examples/own_strategy.ts` (outside this repository, import `<clone>/mod.ts` by
 * path or file URL instead of "../mod.ts").
 */
import {
  compareFrame,
  createPrng,
  createStrategy,
  replaySpaceFromFile,
  type RunTrace,
  type Strategy,
} from "../mod.ts";
import type { Candidate, KnobSpace, Observation } from "../search/mod.ts";
import { runStrategy } from "../tuner/mod.ts";

/** Random start, then the untried neighbours of the best point so far; a random point when none. */
function hillClimber(space: KnobSpace, seed: number): Strategy {
  const prng = createPrng(seed);
  const tried = new Set<number>();
  let best: { point: number[]; seconds: number } | undefined;
  const fresh = (point: number[]) => !tried.has(space.index(point));
  return {
    name: "hill-climber",
    propose(n: number): Candidate[] {
      const around = best ? space.neighbours(best.point).filter(fresh) : [];
      const out: number[][] = [];
      for (const p of around) {
        if (out.length < n) out.push(p);
      }
      for (let attempts = 0; out.length < n && attempts < 100 * n; attempts++) {
        const p = space.random(prng);
        if (fresh(p) && !out.some((q) => space.index(q) === space.index(p))) out.push(p);
      }
      for (const p of out) tried.add(space.index(p));
      return out.map((knobs) => ({ knobs }));
    },
    observe(observations: Observation[]): void {
      for (const o of observations) {
        if (o.errorKind !== "none" || o.seconds === undefined || !o.candidate.knobs) continue;
        if (!best || o.seconds < best.seconds) {
          best = { point: o.candidate.knobs, seconds: o.seconds };
        }
      }
    },
  };
}

const replay = await replaySpaceFromFile("pnpoly_RTX_3090");
const runs = new Map<string, RunTrace[]>([["hill-climber", []], ["random", []]]);
for (let seed = 0; seed < 3; seed++) {
  const mine = hillClimber(replay.space, seed);
  runs.get("hill-climber")!.push(
    await runStrategy(mine, (cs) => replay.measure(cs), { budget: 50 }),
  );
  const random = await createStrategy("random", replay.space, { seed });
  runs.get("random")!.push(await runStrategy(random, (cs) => replay.measure(cs), { budget: 50 }));
}
for (const row of compareFrame(runs, [25, 50], replay.optimum).objects()) {
  const r = row as { strategy: string; budget: number; mean_fraction: number };
  console.log(`${r.strategy.padEnd(12)} budget ${r.budget}: ${r.mean_fraction.toFixed(3)}`);
}
