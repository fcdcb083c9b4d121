import assert from "node:assert/strict";
import { readLines } from "./lines.ts";

Deno.test("readLines splits chunks at newlines, across chunk boundaries", async () => {
  const encoder = new TextEncoder();
  const chunks = ["ab", "c\nde", "\n\nf", "g"].map((c) => encoder.encode(c));
  const stream = ReadableStream.from(chunks);
  const lines: string[] = [];
  for await (const line of readLines(stream)) lines.push(line);
  assert.deepEqual(lines, ["abc", "de", "", "fg"]);
});
