/**
 * Reading PNG files back: enough of the format (8-bit greyscale, RGB, grey
 * with alpha and RGBA, not interlaced: what resvg writes) to check that a
 * figure that reached a notebook or an HTML page holds a picture and not a
 * blank frame.
 *
 * @example
 * ```ts
 * import { svgToPNG } from "./figure.ts";
 * import { decodePNG, distinctColours, inkFraction } from "./png.ts";
 * const png = await svgToPNG('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="4"><rect width="4" height="4" fill="red"/></svg>');
 * const image = decodePNG(png);
 * if (image.width !== 8 || distinctColours(image) !== 2 || inkFraction(image) !== 0.5) throw new Error();
 * ```
 * @module
 */
import { Buffer } from "node:buffer";
import { inflateSync } from "node:zlib";

/** A decoded image: `channels` bytes per pixel, rows top to bottom. */
export interface DecodedPNG {
  width: number;
  height: number;
  /** 1 grey, 2 grey and alpha, 3 RGB, 4 RGBA. */
  channels: number;
  pixels: Uint8Array;
}

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/** True when the bytes start with the PNG signature. */
export function isPNG(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && SIGNATURE.every((b, i) => bytes[i] === b);
}

/**
 * Decodes a PNG (8-bit, not interlaced, not palette). Throws a `RangeError`
 * naming what it cannot read (not a PNG, a missing chunk, another format).
 */
export function decodePNG(bytes: Uint8Array): DecodedPNG {
  if (!isPNG(bytes)) throw new RangeError("Not a PNG: the signature is missing");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let width = 0, height = 0, channels = 0;
  const idat: Uint8Array[] = [];
  for (let at = 8; at + 8 <= bytes.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const [depth, colour, , , interlace] = data.subarray(8, 13);
      channels = CHANNELS[colour] ?? 0;
      if (depth !== 8 || channels === 0 || interlace !== 0) {
        throw new RangeError(
          `Cannot read a PNG of bit depth ${depth}, colour type ${colour}, interlace ${interlace}`,
        );
      }
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
    at += 12 + length;
  }
  if (width === 0 || idat.length === 0) throw new RangeError("Not a PNG: no IHDR or IDAT chunk");
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length < height * (stride + 1)) {
    throw new RangeError(`PNG data too short: ${raw.length} bytes for ${width}x${height}`);
  }
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) unfilter(raw, y, stride, channels, pixels);
  return { width, height, channels, pixels };
}

/** Undoes the filter of row `y` (PNG filter types 0-4) into `out`. */
function unfilter(raw: Uint8Array, y: number, stride: number, bpp: number, out: Uint8Array) {
  const filter = raw[y * (stride + 1)], src = y * (stride + 1) + 1, row = y * stride;
  for (let x = 0; x < stride; x++) {
    const a = x >= bpp ? out[row + x - bpp] : 0;
    const b = y > 0 ? out[row - stride + x] : 0;
    const c = x >= bpp && y > 0 ? out[row - stride + x - bpp] : 0;
    let predictor = 0;
    if (filter === 1) predictor = a;
    else if (filter === 2) predictor = b;
    else if (filter === 3) predictor = (a + b) >> 1;
    else if (filter === 4) {
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    } else if (filter !== 0) throw new RangeError(`Unknown PNG filter type ${filter} in row ${y}`);
    out[row + x] = (raw[src + x] + predictor) & 0xff;
  }
}

/** A pixel's value as one number (up to four 8-bit channels). */
function pixelAt(image: DecodedPNG, i: number): number {
  let v = 0;
  for (let c = 0; c < image.channels; c++) v = v * 256 + image.pixels[i * image.channels + c];
  return v;
}

/** How many different pixel values an image holds (1 for a blank frame). */
export function distinctColours(image: DecodedPNG): number {
  const seen = new Set<number>();
  for (let i = 0; i < image.width * image.height; i++) seen.add(pixelAt(image, i));
  return seen.size;
}

/**
 * The fraction of pixels that differ from the most common one (the
 * background): 0 for a blank frame, a few percent for a line chart.
 */
export function inkFraction(image: DecodedPNG): number {
  const counts = new Map<number, number>();
  const n = image.width * image.height;
  for (let i = 0; i < n; i++) {
    const v = pixelAt(image, i);
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return n === 0 ? 0 : 1 - Math.max(...counts.values()) / n;
}
