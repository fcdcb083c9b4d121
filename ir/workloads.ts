/**
 * The workload library: tensor computations researchers tune, built from
 * {@link ./te.ts} so a new one is a few lines.
 *
 * @example
 * ```ts
 * import { createWorkload } from "./workloads.ts";
 * const w = createWorkload("matmul", [64, 64, 64]);
 * if (w.flops !== 2 * 64 ** 3) throw new Error();
 * ```
 * @module
 */
import { compute, max, placeholder, reduceAxis, select, sum, type Tensor } from "./te.ts";
import {
  avgPool2d,
  batchMatmul,
  depthwiseConv2d,
  globalAvgPool2d,
  groupConv2d,
  insidePadding,
  maxPool2d,
} from "./nn.ts";

/** A tensor computation with named shape parameters. */
export interface Workload {
  /** Library name, e.g. `"matmul"`. */
  name: string;
  /** The shape parameters it was created with. */
  shape: number[];
  /** Inputs, in the kernel's buffer order. */
  inputs: Tensor[];
  /** Outputs, after the inputs in the kernel's buffer order. */
  outputs: Tensor[];
  /** Floating-point operations of one evaluation (a multiply-add counts 2). */
  flops: number;
  /**
   * Inputs that are constants of inference (a layer's weights): a packed copy
   * of one computed at the root is a layout rewrite, run once ahead of the
   * timed calls (TVM's layout-free placeholders; see `Kernel.prologue`).
   */
  layoutFree?: string[];
  /**
   * The output's channel block when its channels are blocked
   * (`[N][C/B][...][B]`: output axis 1 the block, the last axis the channel
   * in it), as `conv2d_nchwc` and `depthwise_conv2d_nchwc` write them; absent
   * when output axis 1 is the channel itself. A fused bias reads channel
   * `block x B + position` (`ir/epilogue.ts`).
   */
  channelBlock?: number;
}

/** A workload's constructor with a description of its shape parameters. */
export interface WorkloadDef {
  /** Names of the shape parameters, in order. */
  params: string[];
  /** Builds the workload; shape is already checked for length and positivity. */
  create(shape: number[]): Workload;
  /** One line for help texts. */
  doc: string;
}

/** `C[i, j] = sum_k A[i, k] * B[k, j]`. */
export function matmul(M: number, N: number, K: number): Workload {
  const A = placeholder([M, K], "A"), B = placeholder([K, N], "B");
  const k = reduceAxis(K, "k");
  const C = compute([M, N], (i, j) => sum(A.at(i, k).mul(B.at(k, j)), [k]), "C", ["i", "j"]);
  return { name: "matmul", shape: [M, N, K], inputs: [A, B], outputs: [C], flops: 2 * M * N * K };
}

/** `Y = relu(X W^T + b)`: a dense layer with bias and ReLU (two stages to fuse). */
export function denseBiasRelu(M: number, N: number, K: number): Workload {
  const X = placeholder([M, K], "X"), W = placeholder([N, K], "W"), b = placeholder([N], "bias");
  const k = reduceAxis(K, "k");
  const D = compute([M, N], (i, j) => sum(X.at(i, k).mul(W.at(j, k)), [k]), "D", ["i", "j"]);
  const Y = compute([M, N], (i, j) => max(D.at(i, j).add(b.at(j)), 0), "Y", ["i", "j"]);
  return {
    name: "dense",
    shape: [M, N, K],
    inputs: [X, W, b],
    outputs: [Y],
    flops: 2 * M * N * K + 2 * M * N,
    layoutFree: ["W"],
  };
}

/**
 * 2-D convolution, NCHW data and FCKhKw (OIHW) weights, with stride and zero
 * padding: a padding stage `P` then the convolution `O`.
 */
export function conv2d(
  N: number,
  C: number,
  H: number,
  W: number,
  F: number,
  KH: number,
  KW: number,
  stride = 1,
  pad = 0,
): Workload {
  if (!Number.isInteger(pad) || pad < 0) throw new RangeError(`Invalid padding ${pad}`);
  const OH = Math.floor((H + 2 * pad - KH) / stride) + 1;
  const OW = Math.floor((W + 2 * pad - KW) / stride) + 1;
  if (OH < 1 || OW < 1) {
    throw new RangeError(`conv2d output would be empty: ${KH}x${KW} kernel on ${H}x${W}`);
  }
  const I = placeholder([N, C, H, W], "I"), Wt = placeholder([F, C, KH, KW], "Wt");
  const P = pad === 0 ? I : compute(
    [N, C, H + 2 * pad, W + 2 * pad],
    (n, c, y, x) =>
      select(
        insidePadding(y, x, pad, H, W),
        I.at(n, c, y.expr.sub(pad), x.expr.sub(pad)),
        0,
      ),
    "P",
    ["n", "c", "y", "x"],
  );
  const rc = reduceAxis(C, "rc"), ry = reduceAxis(KH, "ry"), rx = reduceAxis(KW, "rx");
  const O = compute(
    [N, F, OH, OW],
    (n, f, y, x) =>
      sum(
        P.at(n, rc, y.expr.mul(stride).add(ry), x.expr.mul(stride).add(rx)).mul(
          Wt.at(f, rc, ry, rx),
        ),
        [rc, ry, rx],
      ),
    "O",
    ["n", "f", "y", "x"],
  );
  return {
    name: "conv2d",
    shape: [N, C, H, W, F, KH, KW, stride, pad],
    inputs: [I, Wt],
    outputs: [O],
    flops: 2 * N * F * OH * OW * C * KH * KW,
    layoutFree: ["Wt"],
  };
}

/**
 * 2-D convolution on channel-blocked tensors (TVM's `conv2d_NCHWc`, oneDNN's
 * `nChw16c`): the input `I[N][C/CB][H][W][CB]`, the output
 * `O[N][F/FB][OH][OW][FB]`, the weights OIHW as in {@link conv2d}
 * (layout-free). A network whose convolutions all run blocked keeps its
 * activations in one layout between layers, so a kernel neither copies its
 * input into blocks nor its output back out of them; the output's block is
 * a register tile's channel vectors. Stages: the padding `P` (blocked, when
 * `pad` > 0) and `O`, reducing over `rc.o` (channel blocks), `ry`, `rx` and
 * `rc.i` (channels within a block).
 *
 * @example
 * ```ts
 * import { conv2dNCHWc } from "./workloads.ts";
 * const w = conv2dNCHWc(1, 32, 14, 14, 64, 3, 3, 1, 1, 16, 16);
 * if (w.outputs[0].shape.join() !== "1,4,14,14,16") throw new Error();
 * ```
 */
export function conv2dNCHWc(
  N: number,
  C: number,
  H: number,
  W: number,
  F: number,
  KH: number,
  KW: number,
  stride: number,
  pad: number,
  CB: number,
  FB: number,
): Workload {
  if (C % CB !== 0) throw new RangeError(`Input block ${CB} does not divide ${C} channels`);
  if (F % FB !== 0) throw new RangeError(`Output block ${FB} does not divide ${F} channels`);
  const plain = conv2d(N, C, H, W, F, KH, KW, stride, pad);
  const [, , OH, OW] = plain.outputs[0].shape;
  const I = placeholder([N, C / CB, H, W, CB], "I"), Wt = placeholder([F, C, KH, KW], "Wt");
  const P = pad === 0 ? I : compute(
    [N, C / CB, H + 2 * pad, W + 2 * pad, CB],
    (n, c, y, x, b) =>
      select(
        insidePadding(y, x, pad, H, W),
        I.at(n, c, y.expr.sub(pad), x.expr.sub(pad), b),
        0,
      ),
    "P",
    ["n", "c", "y", "x", "b"],
  );
  const co = reduceAxis(C / CB, "rco"), ry = reduceAxis(KH, "ry"), rx = reduceAxis(KW, "rx");
  const ci = reduceAxis(CB, "rci");
  const O = compute(
    [N, F / FB, OH, OW, FB],
    (n, fo, y, x, fi) =>
      sum(
        P.at(n, co, y.expr.mul(stride).add(ry), x.expr.mul(stride).add(rx), ci).mul(
          Wt.at(fo.expr.mul(FB).add(fi), co.expr.mul(CB).add(ci), ry, rx),
        ),
        [co, ry, rx, ci],
      ),
    "O",
    ["n", "fo", "y", "x", "fi"],
  );
  return {
    name: "conv2d_nchwc",
    shape: [N, C, H, W, F, KH, KW, stride, pad, CB, FB],
    inputs: [I, Wt],
    outputs: [O],
    flops: plain.flops,
    layoutFree: ["Wt"],
    channelBlock: FB,
  };
}

/** Every workload the command line knows, by name. */
export const WORKLOADS: Record<string, WorkloadDef> = {
  matmul: {
    params: ["M", "N", "K"],
    create: ([M, N, K]) => matmul(M, N, K),
    doc: "C[M,N] = A[M,K] B[K,N]",
  },
  dense: {
    params: ["M", "N", "K"],
    create: ([M, N, K]) => denseBiasRelu(M, N, K),
    doc: "Y[M,N] = relu(X[M,K] W[N,K]^T + bias[N])",
  },
  conv2d: {
    params: ["N", "C", "H", "W", "F", "KH", "KW", "stride", "pad"],
    create: (s) => conv2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]),
    doc: "NCHW conv2d: N,C,H,W,F,KH,KW,stride,pad",
  },
  conv2d_nchwc: {
    params: ["N", "C", "H", "W", "F", "KH", "KW", "stride", "pad", "CB", "FB"],
    create: (s) => conv2dNCHWc(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10]),
    doc: "conv2d on channel blocks, I[N][C/CB][H][W][CB] to O[N][F/FB][OH][OW][FB]: " +
      "N,C,H,W,F,KH,KW,stride,pad,CB,FB",
  },
  depthwise_conv2d: {
    params: ["N", "C", "H", "W", "KH", "KW", "stride", "pad"],
    create: (s) => depthwiseConv2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]),
    doc: "NCHW depthwise conv2d, weights [C,1,KH,KW]: N,C,H,W,KH,KW,stride,pad",
  },
  depthwise_conv2d_nchwc: {
    params: ["N", "C", "H", "W", "KH", "KW", "stride", "pad", "block"],
    create: (s) => depthwiseConv2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]),
    doc: "depthwise conv2d on channel blocks I[N][C/B][H][W][B], weights [C,1,KH,KW]: " +
      "N,C,H,W,KH,KW,stride,pad,block",
  },
  group_conv2d: {
    params: ["N", "C", "H", "W", "F", "KH", "KW", "stride", "pad", "groups"],
    create: (s) => groupConv2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9]),
    doc: "NCHW grouped conv2d: N,C,H,W,F,KH,KW,stride,pad,groups",
  },
  batch_matmul: {
    params: ["B", "M", "N", "K"],
    create: ([B, M, N, K]) => batchMatmul(B, M, N, K),
    doc: "C[B,M,N] = A[B,M,K] B[B,K,N]",
  },
  max_pool2d: {
    params: ["N", "C", "H", "W", "K", "stride", "pad", "ceil"],
    create: (s) => maxPool2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]),
    doc: "NCHW max pool over KxK windows: N,C,H,W,K,stride,pad,ceil(0|1)",
  },
  avg_pool2d: {
    params: ["N", "C", "H", "W", "K", "stride", "pad"],
    create: (s) => avgPool2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6]),
    doc: "NCHW average pool over KxK windows (padding counted): N,C,H,W,K,stride,pad",
  },
  global_avg_pool2d: {
    params: ["N", "C", "H", "W"],
    create: ([N, C, H, W]) => globalAvgPool2d(N, C, H, W),
    doc: "O[N,C] = mean of I[N,C,H,W] over H,W",
  },
};

/**
 * Creates a library workload by name and shape, with errors that name the
 * problem (unknown name, wrong number of dimensions, non-positive dimension).
 */
export function createWorkload(name: string, shape: number[]): Workload {
  const def = Object.hasOwn(WORKLOADS, name) ? WORKLOADS[name] : undefined;
  if (!def) {
    throw new RangeError(
      `Unknown workload ${JSON.stringify(name)}; known: ${Object.keys(WORKLOADS).join(", ")}`,
    );
  }
  if (shape.length !== def.params.length) {
    throw new RangeError(
      `Workload "${name}" takes ${def.params.length} dimensions (${
        def.params.join(",")
      }), got ${shape.length}`,
    );
  }
  shape.forEach((d, i) => {
    const zeroOk = def.params[i] === "pad" || def.params[i] === "ceil";
    if (!Number.isInteger(d) || d < (zeroOk ? 0 : 1)) {
      throw new RangeError(
        `Dimension ${def.params[i]} of "${name}" must be a ${
          zeroOk ? "non-negative" : "positive"
        } integer, got ${d}`,
      );
    }
  });
  return def.create(shape);
}

/** The compute stages of a workload, producers before consumers. */
export function computeStages(w: Workload): Tensor[] {
  const order: Tensor[] = [];
  const visit = (t: Tensor) => {
    if (t.op.kind !== "compute" || order.includes(t)) return;
    t.inputs.forEach(visit);
    order.push(t);
  };
  w.outputs.forEach(visit);
  return order;
}
