import assert from "node:assert/strict";
import {
  checkWorkloadMemory,
  formatBytes,
  LimitError,
  limitMessage,
  LIMITS,
  memAvailableBytes,
  mentionsLimit,
  splitLimitReason,
  workloadBytes,
} from "./limits.ts";
import { ScheduleError } from "./errors.ts";
import { lower } from "./lower.ts";
import { generateC } from "./codegen_c.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { matmul } from "./workloads.ts";

const fresh = () => new Schedule(matmul(64, 64, 64), { prng: createPrng(1) });

Deno.test("limitMessage() names the limit and its default, in MiB for sizes", () => {
  assert.equal(
    limitMessage("2000 factors", LIMITS.splitFactors),
    '2000 factors, over the limit "split factors" of 16',
  );
  assert.match(limitMessage("x", LIMITS.inflatedBytes), /"inflated size" of 256 MiB$/);
  assert.match(limitMessage("x", LIMITS.traceInsts), /of 1,000$/);
  assert.ok(mentionsLimit(limitMessage("x", LIMITS.seeds)));
  assert.ok(!mentionsLimit('Cannot split loop "i": factors cover 3 < extent 4'));
  assert.equal(formatBytes(51.2 * 2 ** 30), "51.2 GiB");
});

Deno.test("splitLimitReason() accepts tiles the default spaces use and refuses the rest", () => {
  assert.equal(splitLimitReason([null, 8, 4], 512, 2), undefined);
  assert.equal(splitLimitReason([null, 16], 7, 2), undefined, "a register tile on a short loop");
  assert.equal(splitLimitReason([null, 1000], 1, 2), undefined);
  assert.equal(splitLimitReason([null, 128, 32], 512, 2), undefined);
  assert.equal(splitLimitReason(new Array(16).fill(1), 1, 1), undefined);
  assert.match(splitLimitReason(new Array(17).fill(1), 1, 1)!, /17 factors.*"split factors" of 16/);
  assert.match(splitLimitReason([null, 1025], 64, 2)!, /factor 1025 is above the loop's extent 64/);
  assert.equal(splitLimitReason([null, 2000], 2000, 2), undefined);
  assert.match(splitLimitReason([null, 2 ** 32], 64, 2)!, /"split factor"/);
  assert.match(
    splitLimitReason([1024, 1024, 1024, 1024], 1, 2)!,
    /iterate 1099511627776 times.*"loop iterations"/,
  );
  assert.equal(splitLimitReason([null, 2], 64, 63), undefined, "64 loops: at the limit");
  assert.equal(
    splitLimitReason([null, 2], 64, 64),
    limitMessage(
      "the stage would have 65 loops",
      LIMITS.loopsPerStage,
    ),
  );
});

Deno.test("Schedule.split() refuses a split past a limit with a ScheduleError naming it", () => {
  assert.throws(
    () => fresh().split("C", "i", [null, ...new Array(1999).fill(1)]),
    (e) => e instanceof ScheduleError && /"split factors" of 16/.test(e.message),
  );
  assert.throws(
    () => fresh().split("C", "i", [null, 2 ** 32]),
    (e) => e instanceof ScheduleError && /Cannot split loop "i".*"split factor"/.test(e.message),
  );
  assert.throws(
    () => fresh().split("C", "i", [null, 1e300]),
    (e) => e instanceof ScheduleError && /"split factor"/.test(e.message),
  );
  const sch = fresh();
  sch.split("C", "i", [null, 16, 4]);
  assert.equal(sch.loops("C").length, 5);
});

Deno.test("a stage split to the loop limit still lowers and prints C; one more split is refused", () => {
  const sch = fresh();
  let loop = "i";
  while (sch.loops("C").length < LIMITS.loopsPerStage.value) {
    loop = sch.split("C", loop, [null, 1])[0];
  }
  assert.throws(() => sch.split("C", loop, [null, 1]), /"loops per stage" of 64/);
  const c = generateC(lower(sch));
  assert.match(c, /tb_kernel/);
});

Deno.test("fuse refuses a loop whose name would pass the loop name length", () => {
  const sch = fresh();
  let loop = "i";
  assert.throws(() => {
    for (let k = 0; k < 64; k++) {
      const [o, i] = sch.split("C", loop, [null, 1]);
      loop = sch.fuse("C", [o, i]);
    }
  }, (e) => e instanceof ScheduleError && /"loop name length" of 256/.test(e.message));
});

Deno.test("workloadBytes() counts 3 copies of the inputs and 2 of the outputs in float32", () => {
  const w = matmul(1024, 1024, 1024);
  assert.equal(workloadBytes(w), 4 * (3 * 2 * 1024 * 1024 + 2 * 1024 * 1024));
});

Deno.test("checkWorkloadMemory() refuses buffers above the memory available, with the estimate", () => {
  const w = matmul(1024, 1024, 1024);
  checkWorkloadMemory(w, 64 * 2 ** 20);
  assert.throws(
    () => checkWorkloadMemory(w, 2 ** 20),
    (e) =>
      e instanceof LimitError &&
      e.message ===
        "matmul 1024,1024,1024 needs about 32 MiB of buffers (3 x inputs + 2 x outputs, float32), more than the 1 MiB available (MemAvailable)",
  );
  checkWorkloadMemory(w, undefined);
});

Deno.test("memAvailableBytes() reads TUNEBOOK_MEM_AVAILABLE, else /proc/meminfo", () => {
  const before = Deno.env.get("TUNEBOOK_MEM_AVAILABLE");
  try {
    Deno.env.set("TUNEBOOK_MEM_AVAILABLE", "12345");
    assert.equal(memAvailableBytes(), 12345);
    Deno.env.delete("TUNEBOOK_MEM_AVAILABLE");
    const m = memAvailableBytes();
    assert.ok(m === undefined || (Number.isInteger(m) && m > 0));
  } finally {
    if (before === undefined) Deno.env.delete("TUNEBOOK_MEM_AVAILABLE");
    else Deno.env.set("TUNEBOOK_MEM_AVAILABLE", before);
  }
});
