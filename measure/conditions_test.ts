import assert from "node:assert/strict";
import { conditionsReader, withConditions } from "./conditions.ts";
import type { Measurer } from "./measurer.ts";

/** A hand-made machine answers only from its files: no Deno.loadavg, no os.cpus. */
const NO_API = { loadavg: () => undefined, cpuSpeeds: () => undefined };

Deno.test("conditionsReader reads load, steal over an interval and the mean cpufreq", () => {
  let stat = "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
  const files: Record<string, string> = {
    "/proc/loadavg": "3.10 2.00 1.00 4/91 9367\n",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq": "2000000\n",
    "/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq": "3000000\n",
  };
  const reader = conditionsReader({
    ...NO_API,
    readFile: (p) => p === "/proc/stat" ? stat : files[p],
    listDir: () => ["cpu0", "cpu1", "cpufreq", "online"],
  });
  const start = reader.snapshot();
  assert.deepEqual(start, { steal: 0, total: 1000 });
  stat = "cpu  150 0 100 800 0 0 0 50 0 0\n";
  assert.deepEqual(reader.read(start), { load1: 3.1, steal: 0.5, cpuMhz: 2500 });
  // Without a start there is no interval: no steal figure.
  assert.deepEqual(reader.read(), { load1: 3.1, cpuMhz: 2500 });
});

Deno.test("conditionsReader falls back to /proc/cpuinfo for the frequency", () => {
  const reader = conditionsReader({
    ...NO_API,
    readFile: (p) =>
      p === "/proc/cpuinfo" ? "cpu MHz\t\t: 1000.000\nother\ncpu MHz\t\t: 3000.000\n" : undefined,
    listDir: () => ["cpu0"],
  });
  assert.deepEqual(reader.read(reader.snapshot()), { cpuMhz: 2000 });
});

Deno.test("unreadable or garbled files leave their fields out, never a guess", () => {
  const none = conditionsReader({
    ...NO_API,
    readFile: () => {
      throw new Deno.errors.PermissionDenied("no");
    },
    listDir: () => undefined,
  });
  assert.equal(none.snapshot(), undefined);
  assert.deepEqual(none.read(none.snapshot()), {});
  const garbled = conditionsReader({
    ...NO_API,
    readFile: (p) => ({ "/proc/loadavg": "x y z", "/proc/stat": "cpu a b c" })[p],
    listDir: () => undefined,
  });
  assert.deepEqual(garbled.read(garbled.snapshot()), {});
  // No time passed on the counters: no steal fraction (0/0).
  const still = conditionsReader({
    ...NO_API,
    readFile: (p) => p === "/proc/stat" ? "cpu  1 0 0 1 0 0 0 0\n" : undefined,
    listDir: () => undefined,
  });
  assert.deepEqual(still.read(still.snapshot()), {});
});

Deno.test("the machine's own files read as numbers in range where they exist", () => {
  const c = conditionsReader().read(conditionsReader().snapshot());
  if (c.load1 !== undefined) assert.ok(c.load1 >= 0);
  if (c.steal !== undefined) assert.ok(c.steal >= 0 && c.steal <= 1);
  if (c.cpuMhz !== undefined) assert.ok(c.cpuMhz > 0);
});

Deno.test("withConditions stamps results announced and returned, and keeps the order", async () => {
  const inner: Measurer = {
    name: "fake",
    measure: (b, o) => {
      const out = b.map((c) => ({
        errorKind: "none" as const,
        times: [c.knobs![0]],
        buildSeconds: 0,
        runSeconds: 0,
      }));
      o?.onResult?.(1, out[1]); // one announced, one only returned
      return Promise.resolve(out);
    },
  };
  let load = 1;
  const reader = conditionsReader({
    ...NO_API,
    readFile: (p) => p === "/proc/loadavg" ? `${load++} 0 0` : undefined,
    listDir: () => undefined,
  });
  const seen: number[] = [];
  const m = withConditions(inner, reader);
  assert.equal(m.name, "fake");
  const rs = await m.measure([{ knobs: [7] }, { knobs: [8] }], {
    onResult: (_, r) => seen.push(r.conditions!.load1!),
  });
  assert.deepEqual(rs.map((r) => r.times[0]), [7, 8]);
  assert.deepEqual(seen, [1]);
  assert.equal(rs[1].conditions!.load1, 1);
  assert.equal(rs[0].conditions!.load1, 2);
});

Deno.test("withConditions keeps the measurer's probe beside what it reads, and a stamped result as it is", async () => {
  const inner: Measurer = {
    name: "fake",
    measure: (b) =>
      Promise.resolve(b.map((_, i) => ({
        errorKind: "none" as const,
        times: [1e-3],
        buildSeconds: 0,
        runSeconds: 0,
        // The first as the native measurer gives it; the second as a remote worker's.
        conditions: i === 0 ? { probeGBps: 21.3 } : { load1: 9, probeGBps: 40 },
      }))),
  };
  const reader = conditionsReader({
    ...NO_API,
    readFile: (p) => p === "/proc/loadavg" ? "0.5 0 0" : undefined,
    listDir: () => undefined,
  });
  const [local, remote] = await withConditions(inner, reader).measure([{ knobs: [0] }, {
    knobs: [1],
  }]);
  assert.deepEqual(local.conditions, { load1: 0.5, probeGBps: 21.3 });
  assert.deepEqual(remote.conditions, { load1: 9, probeGBps: 40 });
});

Deno.test("without /proc the load comes from Deno.loadavg and the MHz from the CPUs' speeds", () => {
  const reader = conditionsReader({
    readFile: () => undefined,
    listDir: () => undefined,
    loadavg: () => [1.25, 1, 1],
    cpuSpeeds: () => [2000, 0, 3000], // 0: a CPU that reports none
  });
  assert.deepEqual(reader.read(reader.snapshot()), { load1: 1.25, cpuMhz: 2500 });
  // Speeds all 0 (many virtual machines): no frequency, never a guess.
  const vm = conditionsReader({
    readFile: () => undefined,
    listDir: () => undefined,
    loadavg: () => undefined,
    cpuSpeeds: () => [0, 0],
  });
  assert.deepEqual(vm.read(), {});
});
