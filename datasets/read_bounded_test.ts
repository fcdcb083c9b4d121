import assert from "node:assert/strict";
import { join } from "node:path";
import { type Limit, LimitError } from "../ir/limits.ts";
import { readBounded, readBoundedText } from "./read_bounded.ts";

const cap = (value: number, name = "test size"): Limit => ({ name, value, unit: "bytes" });

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("readBounded() reads plain and gzip-compressed text within the caps", async () => {
  const dir = await Deno.makeTempDir();
  const text = '{"é": ' + "1".repeat(100_000) + "}";
  const bytes = new TextEncoder().encode(text);
  await Deno.writeFile(join(dir, "a.json"), bytes);
  await Deno.writeFile(join(dir, "a.json.gz"), await gzip(bytes));
  const bounds = { maxBytes: cap(bytes.length), maxInflatedBytes: cap(bytes.length) };
  assert.deepEqual(await readBounded(join(dir, "a.json"), bounds), { text, gzip: false });
  assert.deepEqual(await readBounded(join(dir, "a.json.gz"), bounds), { text, gzip: true });
  await Deno.writeFile(join(dir, "one"), new Uint8Array([0x1f]));
  assert.equal(await readBoundedText(join(dir, "one"), bounds), "\x1f");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("readBounded() stops at the stored cap and names the limit", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeFile(join(dir, "big"), new Uint8Array(1001));
  await assert.rejects(
    readBoundedText(join(dir, "big"), { maxBytes: cap(1000, "x size"), maxInflatedBytes: cap(1) }),
    (e) => e instanceof LimitError && /over the limit "x size"/.test(e.message),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("readBounded() stops /dev/zero at the cap though its size is unknown", async () => {
  await assert.rejects(
    readBoundedText("/dev/zero", { maxBytes: cap(1 << 20), maxInflatedBytes: cap(1 << 20) }),
    (e) => e instanceof LimitError && /the file is too large, over the limit/.test(e.message),
  );
});

Deno.test("readBounded() stops inflating a gzip bomb at the inflated cap", async () => {
  const dir = await Deno.makeTempDir();
  const bomb = await gzip(new Uint8Array(8 << 20));
  assert.ok(bomb.length < 64 << 10, `bomb of ${bomb.length} bytes`);
  await Deno.writeFile(join(dir, "bomb.gz"), bomb);
  await assert.rejects(
    readBoundedText(join(dir, "bomb.gz"), {
      maxBytes: cap(1 << 20),
      maxInflatedBytes: cap(1 << 20, "inflated"),
    }),
    (e) => e instanceof LimitError && /inflate too far, over the limit "inflated"/.test(e.message),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("readBounded() rejects a directory, a missing file and corrupt gzip data", async () => {
  const dir = await Deno.makeTempDir();
  const bounds = { maxBytes: cap(1 << 20), maxInflatedBytes: cap(1 << 20) };
  await assert.rejects(readBoundedText(dir, bounds), Deno.errors.IsADirectory);
  await assert.rejects(readBoundedText(join(dir, "nope"), bounds), Deno.errors.NotFound);
  await Deno.writeFile(join(dir, "bad.gz"), new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3]));
  await assert.rejects(readBoundedText(join(dir, "bad.gz"), bounds), TypeError);
  await Deno.remove(dir, { recursive: true });
});
