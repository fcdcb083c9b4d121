import assert from "node:assert/strict";
import { add, type AExpr, forEachLoad, int, mul, vr } from "./ast.ts";

Deno.test("forEachLoad visits every load, outermost first, through selects and comparisons", () => {
  const load = (buf: string, index: AExpr): AExpr => ({ k: "load", buf, index });
  const e: AExpr = {
    k: "select",
    cond: { k: "cmp", op: "<", a: vr("i"), b: int(4) },
    t: mul(load("A", vr("i")), load("B", add(vr("i"), int(1)))),
    f: { k: "float", v: 0 },
  };
  const seen: string[] = [];
  forEachLoad(e, (l) => seen.push(l.buf));
  assert.deepEqual(seen, ["A", "B"]);
});
