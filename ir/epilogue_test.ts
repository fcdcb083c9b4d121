import assert from "node:assert/strict";
import { generateC } from "./codegen_c.ts";
import { EPILOGUE_BIAS, fuseBiasAct } from "./epilogue.ts";
import { lower } from "./lower.ts";
import { traceOf } from "./trace.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { conv2d, matmul } from "./workloads.ts";
import { templateSpace } from "../search/templates/registry.ts";

Deno.test("a conv2d-nchwc kernel with its bias and ReLU fused keeps its vector copy-out", () => {
  const w = conv2d(1, 32, 14, 14, 32, 3, 3, 1, 1);
  const space = templateSpace("conv2d-nchwc", w);
  const trace = space.candidateOf(space.space.knobs.map(() => 0)).trace!;
  const sch = fuseBiasAct(trace, "relu")!;
  assert.deepEqual(sch.workload.inputs.map((t) => t.name).at(-1), EPILOGUE_BIAS);
  const src = generateC(lower(sch));
  // The copy-out is still 16 x 16 transposes, now of max(tile + bias, 0).
  assert.match(src, /tb_transpose16/);
  const fusedCopy = new RegExp(
    `tb_t\\[0\\] = tb_vmax\\(\\(T_O_local_v0 \\+ tb_loadu\\(&T_${EPILOGUE_BIAS}\\[`,
  );
  assert.match(src, fusedCopy);
  const plain = generateC(lower(fuseBiasAct(trace, "none")!));
  assert.match(
    plain,
    new RegExp(`tb_t\\[0\\] = \\(T_O_local_v0 \\+ tb_loadu\\(&T_${EPILOGUE_BIAS}\\[`),
  );
  // The trace itself is unchanged: replaying it gives the kernel without the epilogue.
  assert.deepEqual(traceOf(sch).insts, trace.insts);
});

Deno.test("a matmul-packed kernel fuses a ReLU6; a schedule without a copy-out stage does not", () => {
  const space = templateSpace("matmul-packed", matmul(64, 64, 64));
  const trace = space.candidateOf(space.space.knobs.map(() => 0)).trace!;
  const fused = fuseBiasAct(trace, "relu6");
  assert.ok(fused);
  assert.match(generateC(lower(fused)), /tb_vmin\(tb_vmax\(/);
  // The default nest: the output stage is the reduction itself.
  const naive = new Schedule(matmul(64, 64, 64), { prng: createPrng(1) });
  assert.equal(fuseBiasAct(traceOf(naive), "relu"), undefined);
});
