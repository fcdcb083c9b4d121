import assert from "node:assert/strict";
import {
  rankingNoise,
  rankingOfResults,
  rankingOfStrategies,
  SLOW_SPEED,
} from "./ranking_noise.ts";

const r = (ms: number[], load1?: number) => ({
  seconds: [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)] * 1e-3,
  times: ms.map((x) => x * 1e-3),
  ...(load1 !== undefined ? { conditions: { load1 } } : {}),
});

Deno.test("rankingNoise: two results closer than their spread are uncertain, with the figures", () => {
  // Best: quartiles 0.8 and 0.85 around 0.812 (spread 6.2%); runner-up 2.2% slower.
  const n = rankingNoise(r([0.78, 0.8, 0.812, 0.85, 0.9]), r([0.81, 0.82, 0.83, 0.84, 0.85]), {
    cores: 2,
  });
  assert.equal(n.uncertain, true);
  assert.deepEqual(n.reasons, ["close"]);
  assert.ok(Math.abs(n.apart! - (0.83 / 0.812 - 1)) < 1e-12);
  assert.equal(
    n.warning,
    "warning: ranking uncertain: best 0.812 ms (spread 6.2%) vs runner-up 0.830 ms (spread 2.4%), 2.2% apart",
  );
});

Deno.test("rankingNoise: results further apart than either spread are certain, no warning", () => {
  const n = rankingNoise(r([1, 1.01, 1.02]), r([2, 2.01, 2.02]), { cores: 2 });
  assert.equal(n.uncertain, false);
  assert.deepEqual(n.reasons, []);
  assert.equal(n.warning, undefined);
  assert.ok(Math.abs(n.apart! - (2.01 / 1.01 - 1)) < 1e-12);
});

Deno.test("rankingNoise: the larger of the two spreads decides", () => {
  // Best steady (spread 0), runner-up noisy (spread 20%), 10% apart: uncertain.
  const n = rankingNoise(r([1, 1, 1]), r([1, 1.1, 1.3]), { cores: 8 });
  assert.deepEqual(n.reasons, ["close"]);
});

Deno.test("rankingNoise: a load above the cores during the best's measurement is uncertain", () => {
  const n = rankingNoise(r([1, 1.01, 1.02], 3.1), r([2, 2, 2]), { cores: 2 });
  assert.deepEqual(n.reasons, ["load"]);
  assert.match(n.warning!, /; load 3.1 on 2 cores$/);
  // The same load on more cores is fine; a load equal to the cores is too.
  assert.equal(rankingNoise(r([1, 1.01, 1.02], 3.1), r([2, 2, 2]), { cores: 4 }).uncertain, false);
  assert.equal(rankingNoise(r([1, 1.01, 1.02], 2), r([2, 2, 2]), { cores: 2 }).uncertain, false);
});

Deno.test("rankingNoise: one repeat has no spread (null) and no runner-up no closeness", () => {
  const one = rankingNoise(r([1]), r([1.001]), { cores: 2 });
  assert.equal(one.best.spread, null);
  assert.equal(one.uncertain, false);
  const alone = rankingNoise(r([1, 1.2, 1.4], 5), undefined, { cores: 2 });
  assert.equal(alone.runnerUp, null);
  assert.equal(alone.apart, null);
  assert.deepEqual(alone.reasons, ["load"]);
  assert.equal(
    alone.warning,
    "warning: ranking uncertain: best 1.200 ms (spread 16.7%); load 5 on 2 cores",
  );
});

Deno.test("rankingNoise: labels name the sides; bad cores are a RangeError", () => {
  const n = rankingNoise(r([1, 1.1, 1.2]), r([1.05, 1.1, 1.2]), {
    cores: 2,
    labels: ["ga", "random"],
  });
  assert.match(n.warning!, /^warning: ranking uncertain: ga 1\.100 ms .* vs random 1\.100 ms/);
  assert.throws(() => rankingNoise(r([1]), undefined, { cores: 0 }), RangeError);
  // The default is this machine's core count.
  assert.equal(rankingNoise(r([1]), undefined).cores, navigator.hardwareConcurrency);
});

Deno.test("rankingOfResults picks the best and runner-up among valid results", () => {
  const rows = [
    { errorKind: "none", seconds: 3e-3, times: [3e-3, 3e-3] },
    { errorKind: "runtime_crash", seconds: null, times: [] },
    { errorKind: "none", seconds: 1e-3, times: [1e-3, 1e-3] },
    { errorKind: "none", seconds: 2e-3, times: [2e-3, 2e-3] },
  ];
  const n = rankingOfResults(rows, { cores: 2 })!;
  assert.equal(n.best.seconds, 1e-3);
  assert.equal(n.runnerUp!.seconds, 2e-3);
  assert.equal(rankingOfResults([rows[1]], { cores: 2 }), null);
});

Deno.test("rankingOfStrategies compares the two fastest final bests, by name", () => {
  const finals = new Map([
    ["slow", r([5, 5, 5])],
    ["none", undefined],
    ["ga", r([1, 1.1, 1.2])],
    ["random", r([1.05, 1.1, 1.2])],
  ]);
  const n = rankingOfStrategies(finals, { cores: 2 })!;
  assert.deepEqual(n.strategies, ["ga", "random"]);
  assert.equal(n.uncertain, true);
  assert.match(n.warning!, /: ga 1\.100 ms \(spread 9\.1%\) vs random 1\.100 ms/);
  const one = rankingOfStrategies(new Map([["ga", r([1, 1, 1])]]), { cores: 2 })!;
  assert.deepEqual(one.strategies, ["ga", null]);
  assert.equal(one.uncertain, false);
  assert.equal(rankingOfStrategies(new Map([["x", undefined]]), { cores: 2 }), null);
});

Deno.test("rankingNoise prints small times in µs or ns and the load to two decimals", () => {
  const n = rankingNoise(
    { seconds: 1.6e-7, times: [1.5e-7, 1.6e-7, 1.7e-7], conditions: { load1: 3.27392578125 } },
    { seconds: 2.5e-5, times: [2.5e-5, 2.5e-5] },
    { cores: 2 },
  );
  assert.match(n.warning!, /best 0\.160 µs .* vs runner-up 25\.000 µs .*; load 3\.27 on 2 cores$/);
  const ns = rankingNoise({ seconds: 5e-8, times: [5e-8, 6e-8] }, undefined, { cores: 1 });
  assert.equal(ns.uncertain, false);
  assert.equal(
    rankingNoise({ seconds: 5e-8, times: [5e-8], conditions: { load1: 2 } }, undefined, {
      cores: 1,
    }).warning,
    "warning: ranking uncertain: best 50.000 ns (spread n/a); load 2 on 1 cores",
  );
});

Deno.test("a best or runner-up timed while the machine ran slow makes the ranking uncertain", () => {
  const r = (ms: number, probeGBps?: number) => ({
    errorKind: "none",
    seconds: ms * 1e-3,
    times: [ms * 1e-3, ms * 1e-3],
    ...(probeGBps !== undefined ? { conditions: { probeGBps } } : {}),
  });
  // Eight results at the usual 40 GB/s, the runner-up in a slow spell at 21.
  const run = [r(1.0, 40), r(1.2, 21), ...[1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.1].map((s) => r(s, 40))];
  const n = rankingOfResults(run, { cores: 2 })!;
  assert.deepEqual(n.reasons, ["slow"]);
  assert.equal(n.usualProbeGBps, 40);
  assert.equal(n.runnerUp!.probeGBps, 21);
  assert.deepEqual(n.slowTrials, { slow: 1, probed: 9 });
  assert.match(n.warning!, /runner-up timed at 0\.53 of the usual speed/);
  assert.match(n.warning!, /usual 40\.0 GB\/s\); 1 of 9 results timed slow$/);
  // The same spell on a trial that ranks neither first nor second: counted, not a reason.
  const later = rankingOfResults([r(1.0, 40), r(1.2, 40), r(1.5, 21), r(1.6, 40)], { cores: 2 })!;
  assert.equal(later.uncertain, false);
  assert.deepEqual(later.slowTrials, { slow: 1, probed: 4 });
  // Within SLOW_SPEED of the usual is the usual; without probes nothing is judged.
  const mild = rankingOfResults([r(1.0, 40), r(1.2, SLOW_SPEED * 40 + 0.1)], { cores: 2 })!;
  assert.equal(mild.uncertain, false);
  const none = rankingOfResults([r(1.0), r(1.2)], { cores: 2 })!;
  assert.equal(none.usualProbeGBps, null);
  assert.equal(none.slowTrials, undefined);
});

Deno.test("strategies' final bests judge a slow one against the usual of their own probes", () => {
  const f = (ms: number, probeGBps?: number) => ({
    seconds: ms * 1e-3,
    times: [ms * 1e-3, ms * 1e-3],
    ...(probeGBps !== undefined ? { conditions: { probeGBps } } : {}),
  });
  const n = rankingOfStrategies(
    new Map([["ga", f(1, 52)], ["random", f(1.3, 30)], ["sa", f(1.5, 52)], ["bo", f(2, 51)]]),
    { cores: 2 },
  )!;
  assert.deepEqual(n.reasons, ["slow"]);
  assert.match(n.warning!, /random timed at 0\.58 of the usual speed/);
  // Two probes are too few to tell what is usual.
  const two = rankingOfStrategies(new Map([["ga", f(1, 52)], ["random", f(1.3, 30)]]), {
    cores: 2,
  })!;
  assert.equal(two.usualProbeGBps, null);
  assert.equal(two.uncertain, false);
});
