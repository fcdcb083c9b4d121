/**
 * Channel-blocked activations (`NCHW[x]c`): a tensor `[N][C][H][W]` stored
 * `[N][C/CB][H][W][CB]`, the layout of the blocked convolution's input and
 * output (`conv2dNCHWc` in ir/workloads.ts). An executor converts at the edges of a run of blocked layers; an
 * element-wise layer between two of them runs on the blocks as they are.
 *
 * @example
 * ```ts
 * import { fromBlocked, toBlocked } from "./layout.ts";
 * const x = Float32Array.from({ length: 2 * 4 * 3 }, (_, i) => i);
 * const b = toBlocked(x, [1, 4, 2, 3], 2);
 * if (b[1] !== 6) throw new Error(); // channel 1 of position 0 is next to channel 0
 * if (fromBlocked(b, [1, 4, 2, 3], 2).join() !== x.join()) throw new Error();
 * if (toBlocked(x, [1, 4, 2, 3], 3).length !== 2 * 3 * 6) throw new Error(); // 4 channels take 2 blocks of 3
 * ```
 * @module
 */
import { paddedChannels } from "../ir/nn.ts";
import { sizeOf } from "./network.ts";

function check(shape: number[], length: number): void {
  if (shape.length !== 4) throw new RangeError(`Cannot block ${shape.join("x")}: not NCHW`);
  if (length !== shape.reduce((a, b) => a * b, 1)) {
    throw new RangeError(`${length} values do not fill ${shape.join("x")}`);
  }
}

/** Copies `x` between NCHW and blocks: `toBlocked` when `blocking`, else back. */
function reblock(
  x: Float32Array,
  shape: number[],
  block: number,
  into: Float32Array,
  blocking: boolean,
): Float32Array {
  const [N, C, H, W] = shape, plane = H * W, CP = paddedChannels(C, block);
  check(blocking ? shape : [N, CP, H, W], x.length);
  for (let n = 0; n < N; n++) {
    for (let c = 0; c < C; c++) {
      const flat = (n * C + c) * plane;
      const blocked = (n * CP + (c - (c % block))) * plane + (c % block);
      for (let p = 0; p < plane; p++) {
        if (blocking) into[blocked + p * block] = x[flat + p];
        else into[flat + p] = x[blocked + p * block];
      }
    }
  }
  return into;
}

/**
 * Floats a tensor of NCHW `shape` takes in blocks of `block` channels: its
 * channels padded to whole blocks ({@link paddedChannels}); a shape that is
 * not NCHW is not blocked.
 *
 * @example
 * ```ts
 * import { blockedLength } from "./layout.ts";
 * if (blockedLength([1, 1000, 1, 1], 16) !== 1008 || blockedLength([1, 1000], 16) !== 1000) throw new Error();
 * ```
 */
export function blockedLength(shape: readonly number[], block: number): number {
  return shape.length === 4
    ? shape[0] * paddedChannels(shape[1], block) * shape[2] * shape[3]
    : sizeOf(shape);
}

/**
 * `[N][C][H][W]` to `[N][C/CB][H][W][CB]` (`shape` is the NCHW shape); `into`
 * reused if given. A block that does not divide `C` is padded: the last
 * block's channels past `C` are zeros (in a new `into`; a given one keeps
 * what it holds there).
 */
export function toBlocked(
  x: Float32Array,
  shape: number[],
  block: number,
  into: Float32Array = new Float32Array(blockedLength(shape, block)),
): Float32Array {
  return reblock(x, shape, block, into, true);
}

/**
 * `[N][C/CB][H][W][CB]` back to `[N][C][H][W]` (`shape` is the NCHW shape; a
 * padded last block's channels past `C` are left out); `into` reused if given.
 */
export function fromBlocked(
  x: Float32Array,
  shape: number[],
  block: number,
  into: Float32Array = new Float32Array(shape.reduce((a, b) => a * b, 1)),
): Float32Array {
  return reblock(x, shape, block, into, false);
}

/**
 * The channel block of a layout name: `NCHW` is 1, `NCHW16c` (TVM's
 * spelling; any case) 16. Anything else is a `RangeError` naming it.
 *
 * @example
 * ```ts
 * import { layoutName, parseLayout } from "./layout.ts";
 * if (parseLayout("nchw16c") !== 16 || layoutName(16) !== "NCHW16c") throw new Error();
 * ```
 */
export function parseLayout(name: string): number {
  const m = /^nchw(?:(\d+)c)?$/i.exec(name.trim());
  const block = m ? Number(m[1] ?? 1) : NaN;
  if (!Number.isInteger(block) || block < 1 || block > 64) {
    throw new RangeError(
      `Unknown layout "${name}": NCHW or NCHW<b>c with b from 1 to 64, e.g. NCHW16c`,
    );
  }
  return block;
}

/** The name of a channel block's layout: `NCHW` for 1, else `NCHW<b>c`. */
export const layoutName = (block: number): string => block === 1 ? "NCHW" : `NCHW${block}c`;
