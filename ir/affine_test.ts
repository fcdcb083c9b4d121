import assert from "node:assert/strict";
import {
  coefOf,
  constEval,
  divModExact,
  divModFloor,
  fromLinear,
  linearize,
  linearizeOpaque,
  nondecreasing,
  substitute,
} from "./affine.ts";
import { add, type AExpr, div, int, mod, mul, sub, vr } from "./ast.ts";
import { expr } from "./codegen_c.ts";

const env = (pairs: [string, number, number][]) =>
  new Map<string, [number, number]>(pairs.map(([v, lo, hi]) => [v, [lo, hi]]));

Deno.test("linearize expands lets and cancels terms", () => {
  // m = io * 48 + ir * 6 (a tile start), base = io * 48 (a block start): m + i - base.
  const lets = new Map<string, AExpr>([
    ["m", add(mul(vr("io"), int(48)), mul(vr("ir"), int(6)))],
    ["base", mul(vr("io"), int(48))],
  ]);
  const l = linearize(sub(add(vr("m"), vr("i")), vr("base")), lets)!;
  assert.deepEqual([...l.terms], [["ir", 6], ["i", 1]]);
  assert.equal(l.c, 0);
  assert.equal(expr(fromLinear(l)), "((ir * 6) + i)");
  assert.equal(linearize(mul(vr("a"), vr("b"))), undefined);
  assert.equal(linearize(div(vr("a"), 4)), undefined);
});

Deno.test("divModExact splits only when the remainder is provably within the divisor", () => {
  const e = add(mul(add(mul(vr("jo"), int(4)), vr("jr")), int(64)), vr("j"));
  const dm = divModExact(e, 64, env([["jo", 0, 3], ["jr", 0, 3], ["j", 0, 63]]))!;
  assert.equal(expr(dm.div), "((jo * 4) + jr)");
  assert.equal(expr(dm.mod), "j");
  // j may reach 64: no exact split.
  assert.equal(divModExact(e, 64, env([["jo", 0, 3], ["jr", 0, 3], ["j", 0, 64]])), undefined);
  // A constant offset moves into the quotient and the remainder.
  const c = divModExact(add(mul(vr("r"), int(6)), int(13)), 6, env([["r", 0, 9]]))!;
  assert.equal(expr(c.div), "(r + 2)");
  assert.equal(expr(c.mod), "1");
});

Deno.test("divModFloor keeps a stride-2 reader's column affine when the remainder exceeds the divisor", () => {
  // 2 * x + rx with rx in [0, 6]: phase rx % 2, position x + rx / 2.
  const e = add(mul(vr("x"), int(2)), vr("rx"));
  const dm = divModFloor(e, 2, env([["x", 0, 15], ["rx", 0, 6]]))!;
  assert.equal(expr(dm.div), "(x + (rx / 2))");
  assert.equal(expr(dm.mod), "(rx % 2)");
  assert.equal(coefOf(dm.div, "x"), 1);
  // Within the divisor it is divModExact's split.
  const exact = divModFloor(e, 2, env([["x", 0, 15], ["rx", 0, 1]]))!;
  assert.equal(expr(exact.div), "x");
  assert.equal(expr(exact.mod), "rx");
  // A remainder that may be negative has no such split.
  assert.equal(
    divModFloor(sub(mul(vr("x"), int(2)), vr("rx")), 2, env([["x", 0, 15], ["rx", 0, 6]])),
    undefined,
  );
});

Deno.test("coefOf tells unit-stride, broadcast and non-affine accesses apart", () => {
  const idx = add(mul(vr("k"), int(64)), vr("j"));
  assert.equal(coefOf(idx, "j"), 1);
  assert.equal(coefOf(idx, "k"), 64);
  assert.equal(coefOf(idx, "i"), 0);
  assert.equal(coefOf(mul(vr("j"), vr("n")), "j", new Map([["n", 3]])), 3);
  assert.equal(coefOf(mod(vr("j"), 8), "j"), undefined);
  assert.equal(coefOf({ k: "load", buf: "T", index: vr("j") }, "j"), undefined);
  assert.equal(constEval(add(mul(vr("i"), int(16)), int(3)), new Map([["i", 2]])), 35);
  assert.equal(constEval(vr("x"), new Map()), undefined);
});

Deno.test("nondecreasing accepts sums, scaled and divided variables, not differences", () => {
  const vars = new Set(["i", "j"]);
  assert.ok(nondecreasing(add(mul(vr("i"), int(6)), div(vr("j"), 4)), vars));
  assert.ok(nondecreasing(sub(vr("i"), vr("m")), new Set(["i"])) === false);
  assert.ok(nondecreasing(mod(vr("m"), 4), vars), "only held variables");
  assert.ok(!nondecreasing(mod(vr("i"), 4), vars));
  const s = substitute(add(vr("m"), vr("i")), new Map([["i", int(5)]]));
  assert.equal(expr(s), "(m + 5)");
});

Deno.test("linearizeOpaque cancels equal non-affine parts, lets expanded", () => {
  const f = vr("f");
  const lets = new Map([["m", div(div(f, 56), 4)]]);
  // (f / 56 / 4) * 256 + 3 - m * 256 = 3
  const e = sub(add(mul(div(div(f, 56), 4), int(256)), int(3)), mul(vr("m"), int(256)));
  assert.equal(linearize(e, lets), undefined);
  assert.deepEqual(linearizeOpaque(e, lets), { terms: new Map(), c: 3 });
  // Different parts stay: f / 56 - f / 8 keeps two opaque terms.
  assert.equal(linearizeOpaque(sub(div(f, 56), div(f, 8))).terms.size, 2);
});

Deno.test("divModExact takes non-affine parts whole", () => {
  // (g / 56 % 4) * 16 + f, f in [0, 16): div g / 56 % 4, mod f.
  const part = mod(div(vr("g"), 56), 4);
  const e = add(mul(part, int(16)), vr("f"));
  const env = new Map<string, [number, number]>([["g", [0, 223]], ["f", [0, 15]]]);
  const dm = divModExact(e, 16, env)!;
  assert.equal(expr(dm.mod), expr(add(mul(vr("f"), int(1)), int(0))));
  assert.match(expr(dm.div), /\(\(g \/ 56\) % 4\)/);
  // f may reach 16: not exact.
  assert.equal(divModExact(e, 16, new Map([["g", [0, 223]], ["f", [0, 16]]])), undefined);
});
