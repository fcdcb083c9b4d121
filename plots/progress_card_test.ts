import assert from "node:assert/strict";
import { progressCardSVG, progressHTML, sparklineSVG } from "./progress_card.ts";

Deno.test("sparklineSVG() skips NaN and draws a flat series mid-height", () => {
  assert.doesNotMatch(sparklineSVG([]), /polyline/);
  assert.doesNotMatch(sparklineSVG([NaN, NaN]), /polyline/);
  const flat = sparklineSVG([NaN, 5, 5], { width: 100, height: 20 });
  assert.match(flat, /points="50\.0,10\.0 98\.0,10\.0"/);
  const rising = sparklineSVG([1, 2], { width: 100, height: 20 });
  assert.match(rising, /points="2\.0,18\.0 98\.0,2\.0"/);
});

Deno.test("progressHTML() shows counts only for measured trials, a sparkline only with a value", () => {
  const runs = progressHTML("x", { done: 1, total: 4, unit: "runs", elapsed: 2 }, []);
  assert.match(runs, /1\/4 runs, 2\.0 s/);
  assert.doesNotMatch(runs, /<svg/, "no empty frame");
  const none = progressHTML("x", { done: 1, total: 4, valid: 0, errors: 1, elapsed: 2 }, [NaN]);
  assert.match(none, /valid 0, errors 1, best -, 2\.0 s/);
  assert.doesNotMatch(none, /<svg/);
  const paced = progressHTML("x", { done: 2, total: 4, unit: "runs", elapsed: 2 }, [1, 1]);
  assert.match(paced, /<span title="s per run"><svg.*<polyline/);
});

Deno.test("progressCardSVG() draws the bar, the counts and the sparkline with its range", () => {
  const p = { done: 3, total: 4, valid: 2, errors: 1, bestGflops: 7.5, elapsed: 1.25 };
  const card = progressCardSVG("matmul <64>", p, [NaN, 5, 7.5]);
  assert.match(card, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="\d+" height="92"/);
  assert.match(card, />matmul &lt;64&gt;<\/text>/);
  assert.match(card, /<rect x="10" y="30" width="150\.0" height="10"/, "bar 3/4 full");
  assert.match(card, />3\/4 trials, valid 2, errors 1, best 7\.50 GFLOP\/s, 1\.3 s<\/text>/);
  assert.match(card, /<svg x="10" y="50" [^>]*>.*<polyline/);
  assert.match(card, />best GFLOP\/s so far: 5\.00 first, 7\.50 last<\/text>/);
  const runs = progressCardSVG("r", { done: 2, total: 2, unit: "runs", elapsed: 3 }, [1, 2]);
  assert.match(runs, />s per run: 1\.00 first, 2\.00 last, 1\.00 to 2\.00<\/text>/);
  const failed = progressCardSVG("f", { done: 2, total: 2, valid: 0, errors: 2, elapsed: 1 }, [
    NaN,
    NaN,
  ]);
  assert.doesNotMatch(failed, /<polyline|<svg x=/, "no empty sparkline frame");
  assert.match(failed, />no valid candidate yet<\/text>/);
});
