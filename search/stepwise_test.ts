import assert from "node:assert/strict";
import { KnobSpace } from "../ir/knobs.ts";
import { bestOfSample, greedyDescent, neighbourhood, stepwiseStrategy } from "./stepwise.ts";
import { costOf, drive, space } from "./_testing.ts";

Deno.test("stepwiseStrategy answers known and invalid points without proposing them", () => {
  const line = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5] }], {
    isValid: (_v, p) => p[0] !== 2,
  });
  const received: number[][] = [];
  const s = stepwiseStrategy("t", line, { seed: 1 }, function* () {
    received.push(yield [[0], [1]]);
    received.push(yield [[1], [2], [3]]); // 1 is known, 2 is invalid: only 3 is proposed
    for (;;) yield [[5]];
  });
  const first = s.propose(8);
  assert.deepEqual(first.map((c) => c.knobs), [[0], [1]]);
  s.observe(first.map((c) => ({ candidate: c, errorKind: "none", seconds: 1 + c.knobs![0] })));
  const second = s.propose(8);
  assert.deepEqual(second.map((c) => c.knobs), [[3]]);
  s.observe([{ candidate: second[0], errorKind: "runtime_error" }]);
  assert.deepEqual(s.propose(8).map((c) => c.knobs), [[5]]);
  assert.deepEqual(received, [[1, 2], [2, Infinity, Infinity]]);
});

Deno.test("stepwiseStrategy restarts a loop that ends and keeps the driver busy when it waits", () => {
  let starts = 0;
  const s = stepwiseStrategy("t", space, { seed: 2 }, function* (ctx) {
    starts++;
    const p = ctx.fresh();
    if (p) yield [p];
  });
  const run = drive(s, { budget: 40, batch: 4 });
  assert.equal(run.evaluated.size, 40);
  assert.ok(starts >= 10, `the body was started ${starts} times`);
});

Deno.test("bestOfSample and greedyDescent reach a local minimum of a smooth cost", () => {
  let end: number[] = [];
  const s = stepwiseStrategy("t", space, { seed: 3 }, function* (ctx) {
    const start = yield* bestOfSample(ctx, 4);
    const local = yield* greedyDescent(ctx, start!, "hamming");
    end = local.point;
    for (;;) {
      const p = ctx.fresh();
      if (!p) return;
      yield [p];
    }
  });
  drive(s, { budget: 200, batch: 1 });
  // A local minimum: no valid Hamming neighbour is cheaper.
  for (const q of neighbourhood(space, end, "hamming")) {
    if (space.isValid(q)) assert.ok(costOf(q) >= costOf(end));
  }
});
