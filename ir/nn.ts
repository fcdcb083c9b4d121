/**
 * Operators of convolutional networks, after TVM's `topi.nn`: the tunable
 * ones (depthwise and grouped conv2d, batch matmul) and the element-wise and
 * pooling operators around them (add, bias, ReLU/ReLU6, max/average pool,
 * global average pool, concat). All data is NCHW and every tensor is one
 * contiguous float32 buffer, so a 5-D view such as grouped conv2d's
 * `[N, G, C/G, H, W]` is the same memory as the 4-D tensor.
 *
 * Max pooling is separable: a `max` along each row of the window, then along
 * the column of those, written out (windows are small), on a padding stage
 * filled with {@link NEG_INF}: no max reducer is needed.
 *
 * @example
 * ```ts
 * import { depthwiseConv2d } from "./nn.ts";
 * const w = depthwiseConv2d(1, 32, 112, 112, 3, 3, 1, 1);
 * if (w.outputs[0].shape.join() !== "1,32,112,112") throw new Error();
 * ```
 * @module
 */
import {
  and,
  bin,
  cmp,
  compute,
  type Expr,
  type IterVar,
  max,
  min,
  placeholder,
  reduceAxis,
  select,
  sum,
  type Tensor,
} from "./te.ts";
import type { Workload } from "./workloads.ts";

/** The padding value of max pooling: the lowest finite float32. */
export const NEG_INF = -3.4028234663852886e38;

/** Output extent of a window of `k` with `stride` and `pad` over `n` (ceil mode as in ONNX). */
export function pooledExtent(n: number, k: number, stride: number, pad: number, ceil = false) {
  const span = n + 2 * pad - k;
  if (!Number.isInteger(stride) || stride < 1) throw new RangeError(`Invalid stride ${stride}`);
  if (!Number.isInteger(pad) || pad < 0) throw new RangeError(`Invalid padding ${pad}`);
  if (span < 0) throw new RangeError(`A ${k}-wide window does not fit ${n} + 2 x ${pad} padding`);
  let out = (ceil ? Math.ceil(span / stride) : Math.floor(span / stride)) + 1;
  // As in PyTorch: the last window must start inside the input or the left padding.
  if (ceil && (out - 1) * stride >= n + pad) out--;
  return out;
}

/**
 * Whether padded position (`y`, `x`) lies in the `H x W` input, `pad` rows
 * and columns from the padded tensor's edge: the condition of a padding
 * stage's `select`.
 *
 * @example
 * ```ts
 * import { insidePadding } from "./nn.ts";
 * import { IterVar } from "./te.ts";
 * const [y, x] = [new IterVar("y", 9, "spatial"), new IterVar("x", 9, "spatial")];
 * insidePadding(y, x, 1, 7, 7);
 * ```
 */
export function insidePadding(y: IterVar, x: IterVar, pad: number, H: number, W: number): Expr {
  return and(cmp("ge", y, pad), cmp("lt", y, H + pad), cmp("ge", x, pad), cmp("lt", x, W + pad));
}

/**
 * The padding stage `P` of an `[..., H, W]` tensor for windows of `kh x kw` with
 * `stride`, giving `oh x ow` outputs: `pad` rows and columns of `value` before,
 * as many after as the last window needs. With `block` (an
 * `[..., H, W, B]` tensor: channel-blocked) the block axis `b` stays last.
 */
function padded(
  I: Tensor,
  pad: number,
  [kh, kw]: number[],
  stride: number,
  [oh, ow]: number[],
  value: number,
  block = false,
): Tensor {
  const r = I.shape.length - (block ? 1 : 0), H = I.shape[r - 2], W = I.shape[r - 1];
  const PH = (oh - 1) * stride + kh, PW = (ow - 1) * stride + kw;
  if (pad === 0 && PH <= H && PW <= W) return I;
  const names = ["n", "c", "g", "d"].slice(0, r - 2).concat(["y", "x"], block ? ["b"] : []);
  return compute(
    [...I.shape.slice(0, r - 2), PH, PW, ...I.shape.slice(r)],
    (...ax) => {
      const y = ax[r - 2], x = ax[r - 1];
      return select(
        insidePadding(y, x, pad, H, W),
        I.at(...ax.slice(0, r - 2), y.expr.sub(pad), x.expr.sub(pad), ...ax.slice(r)),
        value,
      );
    },
    "P",
    names,
  );
}

/**
 * The channel axes of a tensor of `C` channels in blocks of `block`: the
 * channel extent where NCHW has its channels (C, or C / B blocks) and the
 * axes after the spatial ones (none, or the block B). Throws when the block
 * does not divide C.
 */
function channelAxes(C: number, block: number): { outer: number; inner: number[] } {
  checkBlock(C, block);
  return block > 1 ? { outer: C / block, inner: [block] } : { outer: C, inner: [] };
}

function checkBlock(C: number, block: number): void {
  if (C % block !== 0) throw new RangeError(`Block ${block} does not divide ${C} channels`);
}

/** `y * stride + r` as an expression. */
const win = (y: IterVar, stride: number, r: IterVar | number): Expr => y.expr.mul(stride).add(r);

/**
 * Depthwise 2-D convolution (channel multiplier 1, MobileNet): NCHW data,
 * weights `[C, 1, KH, KW]`, zero padding `pad`. With `block` > 1 the input
 * and output are in channel blocks, `[N][C/B][H][W][B]` (the workload
 * `depthwise_conv2d_nchwc`, TVM's `depthwise_conv2d_NCHWc`): a blocked
 * network's depthwise layers then need no conversion, and the block is the
 * innermost axis, a vector of channels.
 *
 * @example
 * ```ts
 * import { depthwiseConv2d } from "./nn.ts";
 * const w = depthwiseConv2d(1, 32, 8, 8, 3, 3, 1, 1, 16);
 * if (w.name !== "depthwise_conv2d_nchwc" || w.outputs[0].shape.join() !== "1,2,8,8,16") throw new Error();
 * ```
 */
export function depthwiseConv2d(
  N: number,
  C: number,
  H: number,
  W: number,
  KH: number,
  KW: number,
  stride = 1,
  pad = 0,
  block = 1,
): Workload {
  const OH = pooledExtent(H, KH, stride, pad), OW = pooledExtent(W, KW, stride, pad);
  const { outer, inner } = channelAxes(C, block);
  const I = placeholder([N, outer, H, W, ...inner], "I"), Wt = placeholder([C, 1, KH, KW], "Wt");
  const P = padded(I, pad, [KH, KW], stride, [OH, OW], 0, inner.length > 0);
  const ry = reduceAxis(KH, "ry"), rx = reduceAxis(KW, "rx");
  const O = compute(
    [N, outer, OH, OW, ...inner],
    (n, c, y, x, ...b) =>
      sum(
        P.at(n, c, win(y, stride, ry), win(x, stride, rx), ...b).mul(
          Wt.at(b.length ? c.expr.mul(block).add(b[0]) : c, 0, ry, rx),
        ),
        [ry, rx],
      ),
    "O",
    ["n", "c", "y", "x", ...(inner.length ? ["b"] : [])],
  );
  return {
    name: block > 1 ? "depthwise_conv2d_nchwc" : "depthwise_conv2d",
    shape: [N, C, H, W, KH, KW, stride, pad, ...(block > 1 ? [block] : [])],
    inputs: [I, Wt],
    layoutFree: ["Wt"],
    outputs: [O],
    flops: 2 * N * C * OH * OW * KH * KW,
    ...(block > 1 ? { channelBlock: block } : {}),
  };
}

/**
 * Grouped 2-D convolution: `G` groups of `C/G` input and `F/G` output channels.
 * Data is viewed as `[N, G, C/G, H, W]`, weights `[G, F/G, C/G, KH, KW]` and the
 * output `[N, G, F/G, OH, OW]`: the memory of NCHW data, OIHW weights and an
 * NCHW output. Depthwise convolution is `G == C == F`.
 */
export function groupConv2d(
  N: number,
  C: number,
  H: number,
  W: number,
  F: number,
  KH: number,
  KW: number,
  stride = 1,
  pad = 0,
  G = 1,
): Workload {
  if (!Number.isInteger(G) || G < 1 || C % G !== 0 || F % G !== 0) {
    throw new RangeError(`groups ${G} must divide the ${C} input and ${F} output channels`);
  }
  const Cg = C / G, Fg = F / G;
  const OH = pooledExtent(H, KH, stride, pad), OW = pooledExtent(W, KW, stride, pad);
  const I = placeholder([N, G, Cg, H, W], "I"), Wt = placeholder([G, Fg, Cg, KH, KW], "Wt");
  const P = padded(I, pad, [KH, KW], stride, [OH, OW], 0);
  const rc = reduceAxis(Cg, "rc"), ry = reduceAxis(KH, "ry"), rx = reduceAxis(KW, "rx");
  const O = compute(
    [N, G, Fg, OH, OW],
    (n, g, f, y, x) =>
      sum(
        P.at(n, g, rc, win(y, stride, ry), win(x, stride, rx)).mul(Wt.at(g, f, rc, ry, rx)),
        [rc, ry, rx],
      ),
    "O",
    ["n", "g", "f", "y", "x"],
  );
  return {
    name: "group_conv2d",
    shape: [N, C, H, W, F, KH, KW, stride, pad, G],
    inputs: [I, Wt],
    layoutFree: ["Wt"],
    outputs: [O],
    flops: 2 * N * F * OH * OW * Cg * KH * KW,
  };
}

/** `C[b, i, j] = sum_k A[b, i, k] * B[b, k, j]`. */
export function batchMatmul(batch: number, M: number, N: number, K: number): Workload {
  const A = placeholder([batch, M, K], "A"), B = placeholder([batch, K, N], "B");
  const k = reduceAxis(K, "k");
  const C = compute(
    [batch, M, N],
    (b, i, j) => sum(A.at(b, i, k).mul(B.at(b, k, j)), [k]),
    "C",
    ["b", "i", "j"],
  );
  return {
    name: "batch_matmul",
    shape: [batch, M, N, K],
    inputs: [A, B],
    outputs: [C],
    flops: 2 * batch * M * N * K,
  };
}

/** The max of `f(0) .. f(k - 1)` as a balanced tree (C's `a > b ? a : b` copies each side). */
function maxOf(k: number, f: (i: number) => Expr, from = 0): Expr {
  if (k === 1) return f(from);
  const half = k >> 1;
  return max(maxOf(half, f, from), maxOf(k - half, f, from + half));
}

/**
 * Max pooling of NCHW data over `K x K` windows (padding never wins the max).
 * With `block` B > 1 the data is channel-blocked, `[N][C/B][H][W][B]` in and
 * out (a blocked network's pool, see `network/executor.ts`), and the shape
 * gains B as a ninth entry.
 */
export function maxPool2d(
  N: number,
  C: number,
  H: number,
  W: number,
  K: number,
  stride: number,
  pad = 0,
  ceil = 0,
  block = 1,
): Workload {
  if (ceil !== 0 && ceil !== 1) throw new RangeError(`Invalid ceil ${ceil}: 0 (floor) or 1`);
  const OH = pooledExtent(H, K, stride, pad, ceil === 1);
  const OW = pooledExtent(W, K, stride, pad, ceil === 1);
  const { outer, inner } = channelAxes(C, block);
  const names = ["n", "c", "y", "x", ...(inner.length ? ["b"] : [])];
  const I = placeholder([N, outer, H, W, ...inner], "I");
  const P = padded(I, pad, [K, K], stride, [OH, OW], NEG_INF, inner.length > 0);
  // Separable: the max along rows, then along columns of those (small C expressions).
  const R = compute(
    [N, outer, P.shape[2], OW, ...inner],
    (n, c, y, x, ...b) => maxOf(K, (k) => P.at(n, c, y, win(x, stride, k), ...b)),
    "R",
    names,
  );
  const O = compute(
    [N, outer, OH, OW, ...inner],
    (n, c, y, x, ...b) => maxOf(K, (k) => R.at(n, c, win(y, stride, k), x, ...b)),
    "O",
    names,
  );
  return {
    name: "max_pool2d",
    shape: [N, C, H, W, K, stride, pad, ceil, ...inner],
    inputs: [I],
    outputs: [O],
    flops: N * C * OH * OW * K * K,
  };
}

/** Average pooling over `K x K` windows, padding counted (PyTorch's `count_include_pad`). */
export function avgPool2d(
  N: number,
  C: number,
  H: number,
  W: number,
  K: number,
  stride: number,
  pad = 0,
): Workload {
  const OH = pooledExtent(H, K, stride, pad), OW = pooledExtent(W, K, stride, pad);
  const I = placeholder([N, C, H, W], "I");
  const P = padded(I, pad, [K, K], stride, [OH, OW], 0);
  const ry = reduceAxis(K, "ry"), rx = reduceAxis(K, "rx");
  const O = compute(
    [N, C, OH, OW],
    (n, c, y, x) =>
      sum(P.at(n, c, win(y, stride, ry), win(x, stride, rx)).mul(1 / (K * K)), [ry, rx]),
    "O",
    ["n", "c", "y", "x"],
  );
  return {
    name: "avg_pool2d",
    shape: [N, C, H, W, K, stride, pad],
    inputs: [I],
    outputs: [O],
    flops: 2 * N * C * OH * OW * K * K,
  };
}

/**
 * The mean of each channel: `[N, C, H, W]` to `[N, C]` (the memory of
 * `[N, C, 1, 1]`); with `block` B > 1 from `[N][C/B][H][W][B]` (the output
 * `[N][C/B][B]`, the same memory as `[N][C]`), the shape gaining B.
 */
export function globalAvgPool2d(
  N: number,
  C: number,
  H: number,
  W: number,
  block = 1,
): Workload {
  const ry = reduceAxis(H, "ry"), rx = reduceAxis(W, "rx");
  const { outer, inner } = channelAxes(C, block);
  const I = placeholder([N, outer, H, W, ...inner], "I");
  const O = compute(
    [N, outer, ...inner],
    (n, c, ...b) => sum(I.at(n, c, ry, rx, ...b).mul(1 / (H * W)), [ry, rx]),
    "O",
    ["n", "c", ...(inner.length ? ["b"] : [])],
  );
  return {
    name: "global_avg_pool2d",
    shape: [N, C, H, W, ...inner],
    inputs: [I],
    outputs: [O],
    flops: 2 * N * C * H * W,
  };
}

/** An activation applied after a bias or an add. */
export type Activation = "none" | "relu" | "relu6";

/**
 * `act(e)`: `max(e, 0)` for ReLU, `min(max(e, 0), 6)` for ReLU6, `e` for none.
 *
 * @example
 * ```ts
 * import { activate } from "./nn.ts";
 * import { placeholder } from "./te.ts";
 * const x = placeholder([4], "x");
 * activate(x.at(0), "relu6");
 * ```
 */
export function activate(e: Expr, act: Activation): Expr {
  if (act === "relu") return max(e, 0);
  if (act === "relu6") return min(max(e, 0), 6);
  return e;
}

/** Codes of {@link Activation} in a workload's shape: none 0, relu 1, relu6 2. */
export const ACTIVATIONS: Activation[] = ["none", "relu", "relu6"];

/**
 * `O[n, c, s] = act(X[n, c, s] + b[c])` over `[N, C, S]` (S = H x W): a bias
 * (a folded batch norm's shift) and an activation. With `block` B > 1 the
 * tensors are channel-blocked, `[N][C/B][S][B]` (a blocked convolution's
 * output, `conv2dNCHWc`), and the shape gains B as a fifth entry.
 */
export function biasAct(
  N: number,
  C: number,
  S: number,
  act: Activation = "none",
  block = 1,
): Workload {
  const bias = placeholder([C], "bias");
  const { outer, inner } = channelAxes(C, block);
  const X = placeholder([N, outer, S, ...inner], "X");
  const O = compute(
    [N, outer, S, ...inner],
    // A blocked tensor's channel is its block times B plus its place in the block.
    (n, c, s, ...b) =>
      activate(X.at(n, c, s, ...b).add(bias.at(b.length ? c.expr.mul(block).add(b[0]) : c)), act),
    "O",
    ["n", "c", "s", ...(inner.length ? ["b"] : [])],
  );
  return {
    name: "bias_act",
    shape: [N, C, S, ACTIVATIONS.indexOf(act), ...inner],
    inputs: [X, bias],
    outputs: [O],
    flops: N * C * S * (act === "none" ? 1 : act === "relu" ? 2 : 3),
  };
}

/**
 * A layout conversion of an `[N][C][H][W]` activation between channel blocks
 * (TVM's `layout_transform`): `I[N][C/from][H][W][from]` to
 * `O[N][C/to][H][W][to]`; a block of 1 is NCHW. The executor inserts one
 * where a blocked convolution meets a layer that reads NCHW, or the reverse.
 * A block that does not divide `C` is padded ({@link paddedChannels}): the
 * conversion writes its channels past `C` as zeros and drops them when it
 * reads it.
 *
 * @example
 * ```ts
 * import { layoutTransform } from "./nn.ts";
 * const w = layoutTransform(1, 32, 7, 7, 1, 16);
 * if (w.outputs[0].shape.join() !== "1,2,7,7,16") throw new Error();
 * ```
 */
export function layoutTransform(
  N: number,
  C: number,
  H: number,
  W: number,
  from: number,
  to: number,
): Workload {
  const [inner, outer] = [paddedChannels(C, from), paddedChannels(C, to)];
  const I = placeholder([N, inner / from, H, W, from], "I");
  const O = compute(
    [N, outer / to, H, W, to],
    (n, co, y, x, ci) => {
      const c = co.expr.mul(to).add(ci);
      if (C % from === 0 && C % to === 0) {
        return I.at(n, bin("div", c, from), y, x, bin("mod", c, from));
      }
      // A padded block's channels past C are zeros; reads stay within C.
      const k = min(c, C - 1);
      return select(cmp("lt", c, C), I.at(n, bin("div", k, from), y, x, bin("mod", k, from)), 0);
    },
    "O",
    ["n", "co", "y", "x", "ci"],
  );
  return {
    name: "layout_transform",
    shape: [N, C, H, W, from, to],
    inputs: [I],
    outputs: [O],
    flops: 0,
  };
}

/**
 * The channels `C` channels take in blocks of `block`: `C` rounded up to a
 * whole block. A block that does not divide its tensor's channels is padded
 * (oneDNN's `nChw16c` of 1,000 channels holds 1,008), its channels past `C`
 * zeros.
 *
 * @example
 * ```ts
 * import { paddedChannels } from "./nn.ts";
 * if (paddedChannels(1000, 16) !== 1008 || paddedChannels(64, 16) !== 64) throw new Error();
 * ```
 */
export function paddedChannels(C: number, block: number): number {
  return Math.ceil(C / block) * block;
}

/** `O = act(A + B)` over `size` elements (a residual connection), or `act(A)` with `arity` 1. */
export function eltwise(size: number, act: Activation = "none", arity: 1 | 2 = 2): Workload {
  const A = placeholder([size], "A"), B = placeholder([size], "B");
  const O = compute(
    [size],
    (i) => activate(arity === 2 ? A.at(i).add(B.at(i)) : A.at(i), act),
    "O",
    ["i"],
  );
  return {
    name: arity === 2 ? "add" : act,
    shape: [size, ACTIVATIONS.indexOf(act), arity],
    inputs: arity === 2 ? [A, B] : [A],
    outputs: [O],
    flops: size * (arity === 2 ? 1 : 0) + size * (act === "none" ? 0 : act === "relu" ? 1 : 2),
  };
}

/** Concatenation along channels of `[N, C_i, S]` tensors (S = H x W). */
export function concat(N: number, channels: number[], S: number): Workload {
  if (channels.length < 1) throw new RangeError("concat needs at least one input");
  const ins = channels.map((c, i) => placeholder([N, c, S], `X${i}`));
  const total = channels.reduce((a, b) => a + b, 0);
  const O = compute(
    [N, total, S],
    (n, c, s) => {
      let e: Expr = ins[ins.length - 1].at(n, c.expr.sub(total - channels[channels.length - 1]), s);
      let start = total - channels[channels.length - 1];
      for (let i = ins.length - 2; i >= 0; i--) {
        start -= channels[i];
        e = select(cmp("lt", c, start + channels[i]), ins[i].at(n, c.expr.sub(start), s), e);
      }
      return e;
    },
    "O",
    ["n", "c", "s"],
  );
  return {
    name: "concat",
    shape: [N, ...channels, S],
    inputs: ins,
    outputs: [O],
    flops: 0,
  };
}
