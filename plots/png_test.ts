import assert from "node:assert/strict";
import { deflateSync } from "node:zlib";
import { svgToPNG } from "./figure.ts";
import { decodePNG, distinctColours, inkFraction, isPNG } from "./png.ts";

/** A PNG file of raw (already filtered) scanlines, without CRCs checked by the decoder. */
function png(width: number, height: number, colour: number, scanlines: number[]): Uint8Array {
  const chunk = (type: string, data: Uint8Array) => {
    const out = new Uint8Array(12 + data.length);
    new DataView(out.buffer).setUint32(0, data.length);
    out.set([...type].map((c) => c.charCodeAt(0)), 4);
    out.set(data, 8);
    return out;
  };
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, width);
  new DataView(ihdr.buffer).setUint32(4, height);
  ihdr.set([8, colour, 0, 0, 0], 8);
  const parts = [
    new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(new Uint8Array(scanlines))),
    chunk("IEND", new Uint8Array()),
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

Deno.test("decodePNG() undoes each of the five row filters", () => {
  // Greyscale 3x5: each row's filter predicts from the decoded left and upper neighbours.
  const image = decodePNG(png(3, 5, 0, [
    0,
    10,
    20,
    30, // none
    1,
    10,
    10,
    10, // sub: left neighbour added
    2,
    0,
    0,
    0, // up: row above added
    3,
    5,
    15,
    20, // average of left and up: 5 + 5, 15 + (10 + 20) / 2, 20 + (20 + 30) / 2
    4,
    0,
    0,
    0, // Paeth: predicts from the row above here
  ]));
  assert.deepEqual([image.width, image.height, image.channels], [3, 5, 1]);
  assert.deepEqual([...image.pixels], [10, 20, 30, 10, 20, 30, 10, 20, 30, 10, 30, 50, 10, 30, 50]);
});

Deno.test("decodePNG() reads what resvg writes, and names what it cannot read", async () => {
  const bytes = await svgToPNG(
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="10" fill="#ff0000"/></svg>',
  );
  assert.ok(isPNG(bytes));
  const image = decodePNG(bytes);
  assert.deepEqual([image.width, image.height, image.channels], [10, 10, 4]);
  const red = [255, 0, 0, 255], none = [0, 0, 0, 0];
  const row = [...Array(5).fill(red), ...Array(5).fill(none)].flat();
  assert.deepEqual([...image.pixels], Array(10).fill(row).flat(), "left half red, right clear");
  assert.equal(distinctColours(image), 2);
  assert.equal(inkFraction(image), 0.5);
  assert.throws(() => decodePNG(new TextEncoder().encode("<svg/>")), /Not a PNG/);
  assert.throws(() => decodePNG(png(1, 1, 3, [0, 0])), /colour type 3/);
  assert.throws(() => decodePNG(png(2, 2, 0, [0, 1])), /too short/);
});
