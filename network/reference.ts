/**
 * The reference executor: every layer in plain JavaScript loops over the
 * network as written (batch norm not folded, dense weights as given), with
 * float64 accumulation. Independent of the workloads, lowering and code
 * generation the native executor uses, so it checks all of them; slow, for
 * small inputs.
 *
 * @example
 * ```ts
 * import { referenceRun } from "./reference.ts";
 * import { randomWeights } from "./weights.ts";
 * import { resnet18 } from "./builtin.ts";
 * const net = resnet18({ size: 32, classes: 10 });
 * const out = referenceRun(net, randomWeights(net, 1), new Float32Array(3 * 32 * 32).fill(0.5));
 * if (out.length !== 10) throw new Error();
 * ```
 * @module
 */
import { pooledExtent } from "../ir/nn.ts";
import { inferShapes, type Layer, type Network, sizeOf, windowOf } from "./network.ts";
import { checkWeights, type Weights } from "./weights.ts";

/** Runs the network on `input` (NCHW); returns the output layer's values. */
export function referenceRun(net: Network, weights: Weights, input: Float32Array): Float32Array {
  checkWeights(net, weights);
  const shapes = inferShapes(net);
  if (input.length !== sizeOf(net.input.shape)) {
    throw new RangeError(`Input needs ${sizeOf(net.input.shape)} values [${net.input.shape}]`);
  }
  const values = new Map<string, Float32Array>([[net.input.name, input]]);
  for (const l of net.layers) {
    const ins = l.inputs.map((n) => values.get(n)!), inShapes = l.inputs.map((n) => shapes.get(n)!);
    const p = (name: string) => weights.get(`${l.name}.${name}`)!;
    values.set(l.name, layer(l, ins, inShapes, shapes.get(l.name)!, p));
  }
  return values.get(net.output ?? net.layers[net.layers.length - 1].name)!;
}

function layer(
  l: Layer,
  ins: Float32Array[],
  inShapes: number[][],
  outShape: number[],
  p: (name: string) => Float32Array,
): Float32Array {
  const x = ins[0], out = new Float32Array(sizeOf(outShape));
  const [N, C, H, W] = inShapes[0];
  switch (l.op) {
    case "conv2d": {
      const { kernel: K, stride: s, pad } = windowOf(l), [, F, OH, OW] = outShape;
      const G = l.groups ?? 1, Cg = C / G, Fg = F / G, wt = p("weight");
      const b = l.bias ? p("bias") : undefined;
      for (let n = 0; n < N; n++) {
        for (let f = 0; f < F; f++) {
          const g = Math.floor(f / Fg);
          for (let y = 0; y < OH; y++) {
            for (let xo = 0; xo < OW; xo++) {
              let acc = b ? b[f] : 0;
              for (let c = 0; c < Cg; c++) {
                for (let ky = 0; ky < K; ky++) {
                  const iy = y * s + ky - pad;
                  if (iy < 0 || iy >= H) continue;
                  for (let kx = 0; kx < K; kx++) {
                    const ix = xo * s + kx - pad;
                    if (ix < 0 || ix >= W) continue;
                    acc += x[((n * C + g * Cg + c) * H + iy) * W + ix] *
                      wt[((f * Cg + c) * K + ky) * K + kx];
                  }
                }
              }
              out[((n * F + f) * OH + y) * OW + xo] = acc;
            }
          }
        }
      }
      return out;
    }
    case "batch_norm": {
      const g = p("gamma"), beta = p("beta"), mean = p("mean"), v = p("var");
      const eps = l.epsilon ?? 1e-5, S = H * W;
      for (let i = 0; i < out.length; i++) {
        const c = Math.floor(i / S) % C;
        out[i] = (x[i] - mean[c]) / Math.sqrt(v[c] + eps) * g[c] + beta[c];
      }
      return out;
    }
    case "dense": {
      const [M, K] = inShapes[0], U = l.units!, wt = p("weight");
      const b = (l.bias ?? true) ? p("bias") : undefined;
      for (let m = 0; m < M; m++) {
        for (let u = 0; u < U; u++) {
          let acc = b ? b[u] : 0;
          for (let k = 0; k < K; k++) acc += x[m * K + k] * wt[u * K + k];
          out[m * U + u] = acc;
        }
      }
      return out;
    }
    case "batch_matmul": {
      const [B, M, K] = inShapes[0], Nn = inShapes[1][2], y = ins[1];
      for (let b = 0; b < B; b++) {
        for (let i = 0; i < M; i++) {
          for (let j = 0; j < Nn; j++) {
            let acc = 0;
            for (let k = 0; k < K; k++) acc += x[(b * M + i) * K + k] * y[(b * K + k) * Nn + j];
            out[(b * M + i) * Nn + j] = acc;
          }
        }
      }
      return out;
    }
    case "relu":
      return out.map((_, i) => Math.max(x[i], 0));
    case "relu6":
      return out.map((_, i) => Math.min(Math.max(x[i], 0), 6));
    case "add":
      return out.map((_, i) => x[i] + ins[1][i]);
    case "flatten":
      return out.map((_, i) => x[i]);
    case "global_avg_pool2d": {
      for (let nc = 0; nc < N * C; nc++) {
        let acc = 0;
        for (let i = 0; i < H * W; i++) acc += x[nc * H * W + i];
        out[nc] = acc / (H * W);
      }
      return out;
    }
    case "max_pool2d":
    case "avg_pool2d": {
      const { kernel: K, stride: s, pad } = windowOf(l), isMax = l.op === "max_pool2d";
      const OH = pooledExtent(H, K, s, pad, isMax && !!l.ceil);
      const OW = pooledExtent(W, K, s, pad, isMax && !!l.ceil);
      for (let nc = 0; nc < N * C; nc++) {
        for (let y = 0; y < OH; y++) {
          for (let xo = 0; xo < OW; xo++) {
            let acc = isMax ? -Infinity : 0;
            for (let ky = 0; ky < K; ky++) {
              for (let kx = 0; kx < K; kx++) {
                const iy = y * s + ky - pad, ix = xo * s + kx - pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const v = x[(nc * H + iy) * W + ix];
                acc = isMax ? Math.max(acc, v) : acc + v / (K * K);
              }
            }
            out[(nc * OH + y) * OW + xo] = acc;
          }
        }
      }
      return out;
    }
    case "concat": {
      const S = H * W, total = outShape[1];
      for (let n = 0; n < N; n++) {
        let c0 = 0;
        for (const [i, t] of ins.entries()) {
          const Ci = inShapes[i][1];
          out.set(t.subarray(n * Ci * S, (n + 1) * Ci * S), (n * total + c0) * S);
          c0 += Ci;
        }
      }
      return out;
    }
  }
}
