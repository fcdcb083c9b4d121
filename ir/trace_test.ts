import assert from "node:assert/strict";
import { TraceError } from "./errors.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import {
  canonicalJSON,
  parseTrace,
  printTrace,
  replayTrace,
  samplingInsts,
  traceHash,
  traceOf,
  withDecision,
} from "./trace.ts";
import { matmul } from "./workloads.ts";
import { defaultSpace } from "../search/sketch.ts";
import { createWorkload } from "./workloads.ts";

function sampleTrace(seed: number) {
  return defaultSpace(createWorkload("conv2d", [1, 8, 14, 14, 16, 3, 3, 1, 1])).sample(
    createPrng(seed),
  );
}

Deno.test("a trace round-trips through JSON and replays to the same schedule", () => {
  for (let seed = 0; seed < 20; seed++) {
    const t = sampleTrace(seed);
    const parsed = parseTrace(JSON.stringify(t));
    assert.deepEqual(parsed, t);
    const replayed = traceOf(replayTrace(parsed, { prng: createPrng(seed + 1000) }));
    assert.deepEqual(replayed, t);
  }
});

Deno.test("replaying with a decision removed samples it afresh from the injected PRNG", () => {
  const t = sampleTrace(3);
  // The last tile sampler: no later instruction depends on the extents it decides.
  const i = samplingInsts(t).filter((i) => t.insts[i].op === "sample_perfect_tile").at(-1)!;
  const stripped = withDecision(t, i, undefined);
  assert.equal("decision" in stripped.insts[i], false);
  const a = traceOf(replayTrace(stripped, { prng: createPrng(11) }));
  const b = traceOf(replayTrace(stripped, { prng: createPrng(11) }));
  assert.deepEqual(a, b, "same PRNG seed, same fresh decision");
  const decisions = new Set<string>();
  for (let seed = 0; seed < 30; seed++) {
    const r = traceOf(replayTrace(stripped, { prng: createPrng(seed) }));
    decisions.add(JSON.stringify(r.insts[i].decision));
    // Every other decision is kept.
    r.insts.forEach((inst, j) => j !== i && assert.deepEqual(inst, t.insts[j]));
  }
  assert.ok(decisions.size > 1, "fresh decisions vary with the PRNG");
});

Deno.test("a changed decision replays into a different schedule; an invalid one is a ScheduleError", () => {
  const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(1) });
  const [, j1] = sch.split("C", "j", sch.samplePerfectTile("C", "j", 2, 64));
  sch.vectorize("C", j1);
  const t = traceOf(sch);
  const other = withDecision(t, 0, [2, 32]);
  assert.deepEqual(replayTrace(other, { prng: createPrng(0) }).loops("C"), [
    "i",
    "j.0",
    "j.1",
    "k",
  ]);
  assert.equal(replayTrace(other, { prng: createPrng(0) }).stage("C").leaves[2].extent, 32);
  assert.throws(
    () => replayTrace(withDecision(t, 0, [3, 32]), { prng: createPrng(0) }),
    /sample_perfect_tile on loop "j" of "C": product 96 is not the extent 64/,
  );
});

Deno.test("parseTrace names what is wrong", () => {
  const good = JSON.stringify(sampleTrace(1));
  const cases: [unknown, RegExp][] = [
    ["[", /not valid JSON/],
    [42, /trace must be an object/],
    [{ ...JSON.parse(good), extra: 1 }, /unknown field "extra"/],
    [{ ...JSON.parse(good), workload: { name: "matmul", shape: [8, 8] } }, /takes 3 dimensions/],
    [
      { ...JSON.parse(good), insts: [{ op: "split", args: { stage: "C" } }] },
      /args\.loop is missing/,
    ],
    [
      {
        ...JSON.parse(good),
        insts: [{ op: "split", args: { stage: "C", loop: "i", factors: { $ref: 0 } } }],
      },
      /\$ref must point to an earlier instruction/,
    ],
    [
      {
        ...JSON.parse(good),
        insts: [{ op: "split", args: { stage: "C", loop: "i", factors: [2, 4] }, decision: 1 }],
      },
      /has a decision but is not a sampler/,
    ],
    [
      {
        ...JSON.parse(good),
        insts: [{ op: "parallel", args: { stage: "C", loop: "i\n#include" } }],
      },
      /must be a stage or loop name/,
    ],
  ];
  for (const [input, message] of cases) {
    assert.throws(
      () => parseTrace(typeof input === "string" ? input : JSON.stringify(input)),
      (e) => {
        assert.ok(e instanceof TraceError, String(e));
        assert.match((e as Error).message, message);
        return true;
      },
    );
  }
});

Deno.test("printTrace shows schedule code with sampled values and decisions", () => {
  const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(1) });
  const v = sch.samplePerfectTile("C", "i", 2, 8);
  sch.split("C", "i", v);
  sch.parallel("C", "i.0");
  const text = printTrace(traceOf(sch));
  assert.match(text, /^# matmul\(64, 64, 64\)/);
  assert.match(
    text,
    /v0 = sch\.sample_perfect_tile\("C", "i", n=2, max_innermost=8\) {2}# decision=\[\d+,\d+\]/,
  );
  assert.match(text, /sch\.split\("C", "i", factors=v0\)/);
  assert.match(text, /sch\.parallel\("C", "i\.0"\)/);
});

Deno.test("traceHash is stable under key order and differs between traces", async () => {
  const t = sampleTrace(2);
  const shuffled = JSON.parse(canonicalJSON(t));
  assert.equal(await traceHash(t), await traceHash(shuffled));
  assert.notEqual(await traceHash(t), await traceHash(sampleTrace(4)));
});

/** A matmul 64³ trace holding `insts`. */
function traceWith(insts: unknown[]): unknown {
  return { version: 1, workload: { name: "matmul", shape: [64, 64, 64] }, insts };
}

const split = (factors: unknown, loop = "i") => ({
  op: "split",
  args: { stage: "C", loop, factors },
});

Deno.test("parseTrace refuses inputs past the limits of ir/limits.ts, naming the limit", () => {
  const refused: [unknown, RegExp][] = [
    [
      traceWith([split([null, ...new Array(1999).fill(1)])]),
      /^trace\.insts\[0\]\.args\.factors has 2000 factors, over the limit "split factors" of 16$/,
    ],
    [traceWith([split([null, 2 ** 32])]), /factors\[1\] must be a factor from 1 to 2147483647/],
    [traceWith([split([null, 1e300])]), /got 1e\+300/],
    [
      traceWith([{ op: "auto_unroll", args: { stage: "C", max_step: 1e300 } }]),
      /max_step must be an integer of at most 2147483647/,
    ],
    [
      traceWith([{ op: "sample_categorical", args: { candidates: [1e300], probs: [1] } }]),
      /candidates must be a list of numbers, each at most 2147483647/,
    ],
    [
      traceWith([{ op: "unroll", args: { stage: "C", loop: "k" } }].concat(
        new Array(1000).fill({ op: "unroll", args: { stage: "C", loop: "k" } }),
      )),
      /trace\.insts has 1001 instructions, over the limit "instructions per trace" of 1,000/,
    ],
    [
      traceWith([{
        op: "sample_perfect_tile",
        args: { stage: "C", loop: "i", n: 17, max_innermost: 64 },
      }]),
      /args\.n is 17, over the limit "split factors" of 16/,
    ],
    [
      traceWith([{
        op: "sample_perfect_tile",
        args: { stage: "C", loop: "i", n: 2, max_innermost: 64 },
        decision: new Array(17).fill(1),
      }]),
      /decision must be an integer or a list of at most 16 integers/,
    ],
    [
      traceWith(new Array(18).fill(split(new Array(16).fill(null)))),
      /split and fuse into 270 loops, over the limit "split and fuse loops per trace" of 256/,
    ],
    [traceWith([split([null, 2], "i".repeat(257))]), /loop must be a stage or loop name/],
  ];
  for (const [t, re] of refused) {
    assert.throws(
      () => parseTrace(t),
      (e) => e instanceof TraceError && re.test(e.message),
      `${re}`,
    );
  }
});

Deno.test("parseTrace accepts traces at the limits", () => {
  parseTrace(traceWith(new Array(1000).fill({ op: "unroll", args: { stage: "C", loop: "k" } })));
  parseTrace(traceWith([split([null, ...new Array(15).fill(1)])]));
  parseTrace(traceWith([split([null, 2 ** 31 - 1])]));
  parseTrace(traceWith(new Array(17).fill(split(new Array(16).fill(null)))));
});
