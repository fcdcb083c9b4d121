/**
 * Reads the machine's conditions during a measurement
 * ({@link MeasureConditions}): the 1-minute load average, the steal-time
 * fraction since a snapshot, and the CPU frequency. A file that cannot be read
 * (permissions, not Linux) or parsed leaves its field out.
 *
 * Deno 2 reads /proc and /sys only with `--allow-all`; under the scoped
 * permissions of the deno.json tasks a file Deno refuses is read through libc
 * (`readProcFile` of `_proc.ts`, with `--allow-ffi`, as the workers read
 * /proc). Without FFI either, the load comes from `Deno.loadavg()`
 * (`--allow-sys=loadavg`), the frequency from `os.cpus()` (`--allow-sys=cpus`;
 * 0 on many virtual machines, and then absent) and the steal fraction, which
 * only /proc/stat tells, is absent.
 *
 * {@link withConditions} wraps a live measurer so that every result carries
 * the conditions at its arrival (steal: since its batch began).
 *
 * @example
 * ```ts
 * import { conditionsReader } from "./conditions.ts";
 * // Hand-made files: a loaded machine with 10% steal over the interval, at 2 GHz.
 * const files: Record<string, string> = {
 *   "/proc/loadavg": "3.10 2.00 1.00 4/91 9367\n",
 *   "/proc/stat": "cpu  100 0 100 800 0 0 0 0 0 0\n",
 *   "/proc/cpuinfo": "processor\t: 0\ncpu MHz\t\t: 2000.000\n",
 * };
 * const reader = conditionsReader({
 *   readFile: (p) => files[p],
 *   listDir: () => undefined,
 *   loadavg: () => undefined,
 *   cpuSpeeds: () => undefined,
 * });
 * const start = reader.snapshot();
 * files["/proc/stat"] = "cpu  190 0 100 800 0 0 0 10 0 0\n";
 * const c = reader.read(start);
 * if (c.load1 !== 3.1 || c.steal !== 0.1 || c.cpuMhz !== 2000) throw new Error(JSON.stringify(c));
 * ```
 * @module
 */
import os from "node:os";
import type { MeasureConditions } from "../ir/conditions.ts";
import type { Measurer, MeasureResult } from "./measurer.ts";
import { readProcFile } from "./_proc.ts";

export type { MeasureConditions };

/** Where {@link conditionsReader} reads the machine (injectable for tests). */
export interface ConditionsSource {
  /**
   * A file's text, or undefined when it cannot be read. Default:
   * `Deno.readTextFileSync`, else through libc (`readProcFile`).
   */
  readFile?: (path: string) => string | undefined;
  /** Names in a directory, or undefined when it cannot be read. Default: `Deno.readDirSync`. */
  listDir?: (path: string) => string[] | undefined;
  /** The load averages, when /proc/loadavg cannot be read. Default: `Deno.loadavg()`. */
  loadavg?: () => number[] | undefined;
  /** Each CPU's MHz, when neither sysfs nor /proc/cpuinfo can be read. Default: `os.cpus()`. */
  cpuSpeeds?: () => number[] | undefined;
}

/** CPU time counters of /proc/stat's `cpu` line: steal and the total. */
export interface CpuSnapshot {
  /** Jiffies stolen by the hypervisor, all CPUs, since boot. */
  steal: number;
  /** Jiffies of every kind (user to steal), all CPUs, since boot. */
  total: number;
}

/** Reads conditions; see the module documentation. */
export interface ConditionsReader {
  /** The CPU counters now (for the steal fraction over an interval), if readable. */
  snapshot(): CpuSnapshot | undefined;
  /** The conditions now; steal over the interval since `since`, when given and readable. */
  read(since?: CpuSnapshot): MeasureConditions;
}

/**
 * Whether Deno refused a read (it refuses every /proc and /sys file without
 * --allow-all): the later reads then go to libc directly, not through a
 * refusal first.
 */
let denoRefuses = false;

function tryRead(path: string): string | undefined {
  if (!denoRefuses) {
    try {
      return Deno.readTextFileSync(path);
    } catch (e) {
      denoRefuses = e instanceof Deno.errors.NotCapable;
    }
  }
  // libc reads them with --allow-ffi.
  return readProcFile(path);
}

function tryLoadavg(): number[] | undefined {
  try {
    return Deno.loadavg();
  } catch {
    return undefined;
  }
}

function trySpeeds(): number[] | undefined {
  try {
    return os.cpus().map((c) => c.speed);
  } catch {
    return undefined;
  }
}

function tryList(path: string): string[] | undefined {
  try {
    return [...Deno.readDirSync(path)].map((e) => e.name);
  } catch {
    return undefined;
  }
}

const CPU_DIR = "/sys/devices/system/cpu";

/** The fields a {@link ConditionsReader} reads (the probe's figure comes with the result). */
const READ_FIELDS = ["load1", "steal", "cpuMhz"] as const;

/** A {@link ConditionsReader} over the machine's files (or `source`'s). */
export function conditionsReader(source: ConditionsSource = {}): ConditionsReader {
  const readFile = (p: string) => {
    try {
      return (source.readFile ?? tryRead)(p);
    } catch {
      return undefined;
    }
  };
  const listDir = source.listDir ?? tryList;
  const call = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch {
      return undefined;
    }
  };
  const loadavg = () => call(source.loadavg ?? tryLoadavg);
  const speeds = () => call(source.cpuSpeeds ?? trySpeeds);
  const snapshot = (): CpuSnapshot | undefined => {
    const line = readFile("/proc/stat")?.split("\n").find((l) => /^cpu\s/.test(l));
    if (!line) return undefined;
    // user nice system idle iowait irq softirq steal (guest time is inside user already).
    const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
    if (f.length < 8 || f.some((x) => !Number.isFinite(x))) return undefined;
    return { steal: f[7], total: f.reduce((a, b) => a + b, 0) };
  };
  const load = (): number | undefined => {
    const text = readFile("/proc/loadavg");
    const x = text !== undefined ? Number(text.trim().split(/\s+/)[0]) : loadavg()?.[0];
    // Two decimals, as /proc/loadavg writes it (Deno.loadavg() gives binary fractions).
    return typeof x === "number" && Number.isFinite(x) && x >= 0 ? Number(x.toFixed(2)) : undefined;
  };
  const mhz = (): number | undefined => {
    const khz: number[] = [];
    for (const name of listDir(CPU_DIR) ?? []) {
      if (!/^cpu\d+$/.test(name)) continue;
      const x = Number(readFile(`${CPU_DIR}/${name}/cpufreq/scaling_cur_freq`)?.trim() ?? NaN);
      if (Number.isFinite(x) && x > 0) khz.push(x);
    }
    if (khz.length > 0) return khz.reduce((a, b) => a + b, 0) / khz.length / 1000;
    const cpuinfo = readFile("/proc/cpuinfo");
    const m = [...(cpuinfo ?? "").matchAll(/^cpu MHz\s*:\s*([\d.]+)/gm)].map((x) => Number(x[1]))
      .filter((x) => Number.isFinite(x) && x > 0);
    if (m.length > 0) return m.reduce((a, b) => a + b, 0) / m.length;
    const s = (speeds() ?? []).filter((x) => Number.isFinite(x) && x > 0);
    return s.length > 0 ? s.reduce((a, b) => a + b, 0) / s.length : undefined;
  };
  return {
    snapshot,
    read(since) {
      const out: MeasureConditions = {};
      const l = load();
      if (l !== undefined) out.load1 = l;
      if (since) {
        const now = snapshot();
        const dt = now ? now.total - since.total : 0;
        if (now && dt > 0) out.steal = Math.max(0, Math.min(1, (now.steal - since.steal) / dt));
      }
      const f = mhz();
      if (f !== undefined) out.cpuMhz = Number(f.toFixed(1));
      return out;
    },
  };
}

/**
 * A measurer whose every result carries the conditions at its arrival
 * (`conditions`; steal since its batch began), read by `reader`. For live
 * measurers on this machine only: a replay or a remote worker's result was
 * measured elsewhere.
 *
 * @example
 * ```ts
 * import { conditionsReader, withConditions } from "./conditions.ts";
 * import type { Measurer } from "./measurer.ts";
 * const inner: Measurer = {
 *   name: "fake",
 *   measure: (b) =>
 *     Promise.resolve(b.map(() => ({ errorKind: "none" as const, times: [1e-3], buildSeconds: 0, runSeconds: 0 }))),
 * };
 * const reader = conditionsReader({
 *   readFile: (p) => p === "/proc/loadavg" ? "0.5 0 0" : undefined,
 *   cpuSpeeds: () => [],
 * });
 * const [r] = await withConditions(inner, reader).measure([{ knobs: [0] }]);
 * if (r.conditions?.load1 !== 0.5 || "steal" in r.conditions) throw new Error();
 * ```
 */
export function withConditions(
  measurer: Measurer,
  reader: ConditionsReader = conditionsReader(),
): Measurer {
  const stamp = (r: MeasureResult, since: CpuSnapshot | undefined): MeasureResult => {
    // Stamped already (by a remote worker, say): kept as it is. The measurer's own
    // figures (the harness's probe) are kept beside what the reader reads.
    const own = r.conditions ?? {};
    if (READ_FIELDS.some((f) => own[f] !== undefined)) return r;
    const c = { ...reader.read(since), ...own };
    return Object.keys(c).length > 0 ? { ...r, conditions: c } : r;
  };
  return {
    name: measurer.name,
    async measure(batch, options = {}) {
      const since = reader.snapshot();
      const stamped = new Map<number, MeasureResult>();
      const results = await measurer.measure(batch, {
        ...options,
        onResult: (i, r) => {
          const s = stamp(r, since);
          stamped.set(i, s);
          options.onResult?.(i, s);
        },
      });
      return results.map((r, i) => stamped.get(i) ?? stamp(r, since));
    },
    ...(measurer.close ? { close: () => measurer.close!() } : {}),
  };
}
