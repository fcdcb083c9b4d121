/**
 * Epilogue fusion: a bias and an activation computed in the output stage of
 * a tuned kernel, as TVM fuses a convolution's bias and ReLU into its task
 * and oneDNN runs them as post-ops. A schedule that computes its output in a
 * local tile (`cache_write`) copies the tile out in a stage of its own; that
 * copy becomes `act(tile + bias[c])` (channel `c`: axis 1 of the output, the
 * `F` of a conv2d's NCHW output or the `N` of a matmul's; block x FB +
 * position in the block for a blocked output, `Workload.channelBlock`), so the network
 * executor needs no separate pass over the output for the bias and ReLU.
 *
 * The fused kernel takes the bias as one more input, after the workload's
 * own: `[...inputs, bias, output]`.
 *
 * @example
 * ```ts
 * import { fuseBiasAct } from "./epilogue.ts";
 * import { Schedule } from "./schedule.ts";
 * import { traceOf } from "./trace.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(32, 32, 32), { prng: createPrng(1) });
 * sch.cacheWrite("C");
 * const fused = fuseBiasAct(traceOf(sch), "relu");
 * if (!fused || fused.workload.inputs.length !== 3) throw new Error();
 * // Without a cache_write the output stage is the reduction itself: no epilogue.
 * const plain = new Schedule(matmul(32, 32, 32), { prng: createPrng(1) });
 * if (fuseBiasAct(traceOf(plain), "relu") !== undefined) throw new Error();
 * ```
 * @module
 */
import { activate, type Activation } from "./nn.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { Expr, placeholder } from "./te.ts";
import type { Trace } from "./trace.ts";
import { createWorkload, type Workload } from "./workloads.ts";

/** Name of the bias input of a fused kernel. */
export const EPILOGUE_BIAS = "epilogue_bias";

/**
 * The schedule of `trace` with `act(output + bias[c])` computed in its
 * output stage, or undefined when that stage is not element-wise (the
 * schedule has no `cache_write` of its output) or the output has fewer than
 * two axes. The schedule's `trace` does not record the epilogue: replaying
 * it gives the kernel without it.
 */
export function fuseBiasAct(trace: Trace, act: Activation): Schedule | undefined {
  const w = createWorkload(trace.workload.name, trace.workload.shape);
  const out = w.outputs[0];
  if (w.outputs.length !== 1 || out.shape.length < 2) return undefined;
  const block = w.channelBlock ?? 1;
  const bias = placeholder([out.shape[1] * block], EPILOGUE_BIAS);
  const per = out.size;
  const fused: Workload = {
    ...w,
    inputs: [...w.inputs, bias],
    flops: w.flops + per * (act === "none" ? 1 : act === "relu" ? 2 : 3),
  };
  const sch = new Schedule(fused, { prng: createPrng(0) });
  for (const inst of trace.insts) sch.apply(inst);
  const stage = sch.stages.find((s) => s.isOutput);
  if (!stage || !(stage.body instanceof Expr)) return undefined;
  // A blocked output's channel is its block (axis 1) times the block size
  // plus the position in the block (the last axis; `fuse_axes` may have
  // merged rows and columns between them).
  const channel = block > 1
    ? stage.axes[1].expr.mul(block).add(stage.axes[stage.axes.length - 1])
    : stage.axes[1];
  stage.body = activate(stage.body.add(bias.at(channel)), act);
  return sch;
}
