/**
 * What a worker measures on, and the queue its jobs come through: a job goes
 * only to workers of the machine it names. A machine is its target, CPU
 * model, GPU name, compiler and tunebook version; its key (a short hash of
 * those) names its BullMQ queue, so a worker of another machine or another
 * tunebook version never sees the job. Workers announce themselves in the
 * Redis hash {@link MACHINES_KEY} (field: worker id, value: JSON with
 * `lastSeen`), which the tuner reads to find the queue for its target.
 *
 * @example
 * ```ts
 * import { machineKey } from "./machine.ts";
 * const key = await machineKey({
 *   target: "cpu", cpu: "Xeon", gpu: null, compiler: "gcc 12", version: "0.1.0",
 * });
 * if (!/^cpu-[0-9a-f]{12}$/.test(key)) throw new Error(key);
 * ```
 * @module
 */
import { cpuModel, tunebookVersion } from "../datasets/machine.ts";
import { sha256Hex } from "../measure/builder.ts";

/** Redis hash of the workers' announcements. */
export const MACHINES_KEY = "tunebook:workers";

/** A worker's machine. */
export interface Machine {
  /** What it measures: `"cpu"` (native gcc kernels). */
  target: string;
  /** CPU model name. */
  cpu: string;
  /** GPU name, or null without one. */
  gpu: string | null;
  /** The compiler's description (version line, flags, what `-march=native` means). */
  compiler: string;
  /** tunebook version with its git commit, e.g. `0.1.0+3f2a1bc`. */
  version: string;
}

/** A worker's announcement: its machine, queue and when it was last alive. */
export interface Announcement extends Machine {
  key: string;
  queue: string;
  /** Worker process, for messages. */
  host: string;
  pid: number;
  /** Milliseconds since the epoch. */
  lastSeen: number;
}

/**
 * The announcements of the workers heard from within `staleMs`, from the
 * values of the {@link MACHINES_KEY} hash (unreadable ones skipped).
 *
 * @example
 * ```ts
 * import { liveAnnouncements } from "./machine.ts";
 * const old = JSON.stringify({ key: "k", lastSeen: Date.now() - 60_000 });
 * if (liveAnnouncements([old, "not json"], 30_000).length !== 0) throw new Error();
 * ```
 */
export function liveAnnouncements(values: readonly string[], staleMs: number): Announcement[] {
  return values.flatMap((v) => {
    try {
      const a = JSON.parse(v) as Announcement;
      return Date.now() - a.lastSeen <= staleMs ? [a] : [];
    } catch {
      return [];
    }
  });
}

/** The short key of a machine: target and 12 hex digits of the hash of everything. */
export async function machineKey(m: Machine): Promise<string> {
  const h = await sha256Hex(JSON.stringify([m.target, m.cpu, m.gpu, m.compiler, m.version]));
  return `${m.target}-${h.slice(0, 12)}`;
}

/** The BullMQ queue of a machine. */
export function queueName(key: string): string {
  return `tunebook-measure-${key}`;
}

/** The BullMQ queue of whole strategy runs on replayed caches (any machine of the version). */
export async function runQueueName(version: string): Promise<string> {
  return `tunebook-runs-${(await sha256Hex(version)).slice(0, 12)}`;
}

/** Describes this machine for the CPU target, given its compiler's description. */
export async function describeThisMachine(compiler: string): Promise<Machine> {
  return {
    target: "cpu",
    cpu: cpuModel(),
    gpu: await gpuName(),
    compiler,
    version: await tunebookVersion(),
  };
}

/** The first GPU's name from `nvidia-smi`, or null when there is none. */
async function gpuName(): Promise<string | null> {
  try {
    const out = await new Deno.Command("nvidia-smi", {
      args: ["--query-gpu=name", "--format=csv,noheader"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const name = new TextDecoder().decode(out.stdout).split("\n")[0].trim();
    return out.success && name ? name : null;
  } catch {
    return null;
  }
}
