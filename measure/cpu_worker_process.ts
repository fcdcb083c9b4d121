/**
 * The runner's handle on one measurement worker process: spawn it, send it one
 * request at a time, and notice when it dies or hangs.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { WorkerLimits } from "./containment.ts";
import { childDenoArgs } from "./deno_child.ts";
import { readLines } from "./lines.ts";
import { readProcFile } from "./_proc.ts";
import {
  PHASE_REFERENCE_READY,
  WORKER_READY,
  type WorkerReply,
  type WorkerRequest,
} from "./protocol.ts";

/** Absolute path of the worker entry point. */
export const WORKER_PATH: string = fileURLToPath(new URL("./cpu_worker.ts", import.meta.url));

/** Most characters of worker stderr kept for messages. */
const STDERR_TAIL = 2000;

/**
 * Which part of a request the worker was in: computing (or looking up) the
 * reference output, or checking and timing the candidate.
 */
export type RequestPhase = "reference" | "candidate";

/**
 * How one request ended. On a timeout, `wallSeconds` is how long the phase
 * that timed out ran and `cpuSeconds` the CPU time (user + system, all
 * threads) the worker used meanwhile, when `/proc` could tell.
 */
export type RequestOutcome =
  | { kind: "reply"; reply: WorkerReply }
  | { kind: "exit"; phase: RequestPhase; status: Deno.CommandStatus; stderr: string }
  | { kind: "timeout"; phase: RequestPhase; wallSeconds: number; cpuSeconds?: number };

/**
 * A phase of a request past its time limit whose worker has used less than
 * this share of the limit in CPU seconds was starved by a loaded machine, not
 * slow: it may go on (up to {@link LOADED_WALL_FACTOR} times the limit), and
 * if it still times out the timeout is transient (`run_timeout_transient`).
 * A kernel that computes or spins uses a core-second per wall second it
 * gets, so on an idle machine it reaches the share well within the limit.
 */
export const LOADED_CPU_SHARE = 0.5;

/** How many times its limit a starved phase may run before it is killed. */
export const LOADED_WALL_FACTOR = 4;

/**
 * CPU seconds (user + system, all threads) process `pid` has used, from
 * `/proc/PID/stat` (in USER_HZ ticks, 100 per second on Linux); undefined
 * when that cannot be read (not Linux, or no `--allow-ffi`: see `_proc.ts`).
 */
export function processCpuSeconds(pid: number): number | undefined {
  const stat = readProcFile(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // Fields after the command name (which may hold spaces) start at field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime: fields 14 and 15
  return Number.isFinite(ticks) ? ticks / 100 : undefined;
}

/** Time limits of one request, in wall seconds. */
export interface RequestLimits {
  /** From sending the request until the reference output is ready. */
  referenceTimeoutSeconds: number;
  /** From the reference output being ready until the reply. */
  timeoutSeconds: number;
}

/**
 * What a stdout line means for request `id`: its reply, its
 * {@link PHASE_REFERENCE_READY} progress line, or anything else (ignored).
 */
export function classifyLine(text: string, id: number): "reply" | "reference-ready" | "other" {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "other";
  }
  if (typeof value !== "object" || value === null) return "other";
  const fields = value as Record<string, unknown>;
  if (fields.id !== id) return "other";
  if (fields.phase === PHASE_REFERENCE_READY) return "reference-ready";
  if (typeof fields.errorKind === "string" && Array.isArray(fields.times)) return "reply";
  return "other";
}

/** Describes how a process ended, e.g. `"killed by signal SIGSEGV"`. */
export function describeStatus(status: Deno.CommandStatus): string {
  return status.signal ? `killed by signal ${status.signal}` : `exited with code ${status.code}`;
}

/** One long-lived worker process. */
export class WorkerProcess {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: AsyncGenerator<string>;
  #stderr = "";
  #stderrDone: Promise<void>;
  #exited = false;
  #status: Promise<Deno.CommandStatus>;
  #nextId = 1;

  private constructor(child: Deno.ChildProcess) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#lines = readLines(child.stdout);
    this.#status = child.status.then((status) => {
      this.#exited = true;
      return status;
    });
    this.#stderrDone = (async () => {
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
        this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
      }
    })().catch(() => {});
  }

  /**
   * Spawns a worker and waits for its ready line. Throws (after cleaning up)
   * when it does not start within `startSeconds`. `env` is added to the
   * worker's environment (e.g. `OMP_NUM_THREADS`); the worker applies
   * `limits` to itself (it always dies with this process). The worker runs in
   * a process group of its own, which {@link WorkerProcess.kill} kills whole.
   */
  static async start(
    startSeconds: number,
    env: Record<string, string> = {},
    limits: WorkerLimits = {},
  ): Promise<WorkerProcess> {
    const child = new Deno.Command(Deno.execPath(), {
      args: childDenoArgs(WORKER_PATH, [JSON.stringify({ parentPid: Deno.pid, ...limits })]),
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    const worker = new WorkerProcess(child);
    const first = await worker.#nextLine(startSeconds, () => true);
    if (first.kind === "line" && first.line === WORKER_READY) return worker;
    await worker.kill();
    const why = first.kind === "timeout"
      ? `no ready line within ${startSeconds} s`
      : first.kind === "line"
      ? `unexpected first line ${JSON.stringify(first.line.slice(0, 200))}`
      : describeStatus(await worker.#status);
    throw new Error(`measurement worker failed to start (${why}): ${worker.stderr.trim()}`);
  }

  /** The last part of what the worker wrote to stderr. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Process id of the worker (also its process group id). */
  get pid(): number {
    return this.#child.pid;
  }

  /** True once the process has exited. */
  get exited(): boolean {
    return this.#exited;
  }

  /** The next stdout line; a line read for a caller that gave up waits here for the next one. */
  #pending?: Promise<IteratorResult<string>>;

  /** Reads lines until `accept` takes one, the process exits, or the time runs out. */
  async #nextLine(
    seconds: number,
    accept: (line: string) => boolean,
  ): Promise<{ kind: "line"; line: string } | { kind: "eof" } | { kind: "timeout" }> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let abandoned = false;
    const timeout = new Promise<{ kind: "timeout" }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: "timeout" }), seconds * 1000);
    });
    const read = (async (): Promise<
      { kind: "line"; line: string } | { kind: "eof" } | { kind: "timeout" }
    > => {
      for (;;) {
        this.#pending ??= this.#lines.next();
        const next = await this.#pending;
        // The caller timed out meanwhile: leave the line to the next reader.
        if (abandoned) return { kind: "timeout" };
        this.#pending = undefined;
        if (next.done) return { kind: "eof" };
        if (accept(next.value)) return { kind: "line", line: next.value };
        this.#stderr = (this.#stderr + `[stdout] ${next.value}\n`).slice(-STDERR_TAIL);
      }
    })();
    try {
      return await Promise.race([read, timeout]);
    } finally {
      abandoned = true;
      clearTimeout(timer);
    }
  }

  /**
   * Sends one request and waits for its reply: up to `referenceTimeoutSeconds`
   * until the worker says the reference output is ready, then up to
   * `timeoutSeconds` for the candidate. A limit counts CPU time when the
   * machine is loaded: a phase past its limit whose worker has used less
   * than {@link LOADED_CPU_SHARE} of it on a CPU goes on until it has, or
   * until {@link LOADED_WALL_FACTOR} times the limit has passed. On a timeout
   * the process is killed; on an exit its status is returned. Either way
   * `phase` says which part of the request was running.
   */
  async request(
    fields: Omit<WorkerRequest, "id">,
    limits: RequestLimits,
  ): Promise<RequestOutcome> {
    const id = this.#nextId++;
    const line = JSON.stringify({ ...fields, id });
    try {
      await this.#writer.write(new TextEncoder().encode(`${line}\n`));
    } catch {
      // The process is gone; its status tells why.
    }
    let phase: RequestPhase = "reference";
    let limit = limits.referenceTimeoutSeconds;
    let phaseStart = performance.now();
    let phaseCpu = processCpuSeconds(this.pid);
    let deadline = phaseStart + limit * 1000;
    for (;;) {
      const seconds = Math.max(0, deadline - performance.now()) / 1000;
      const result = await this.#nextLine(seconds, (text) => classifyLine(text, id) !== "other");
      if (result.kind === "timeout") {
        const cpuNow = processCpuSeconds(this.pid);
        const wallSeconds = (performance.now() - phaseStart) / 1000;
        const cpuSeconds = cpuNow !== undefined && phaseCpu !== undefined
          ? cpuNow - phaseCpu
          : undefined;
        if (
          cpuSeconds !== undefined && cpuSeconds < LOADED_CPU_SHARE * limit &&
          wallSeconds < LOADED_WALL_FACTOR * limit
        ) {
          // Starved by a loaded machine: wait for the CPU time the limit stands for.
          deadline = performance.now() + Math.min(1000, limit * 250);
          continue;
        }
        await this.kill();
        return {
          kind: "timeout",
          phase,
          wallSeconds,
          ...(cpuSeconds !== undefined ? { cpuSeconds } : {}),
        };
      }
      if (result.kind === "eof") {
        const status = await this.#status;
        await this.#stderrDone;
        return { kind: "exit", phase, status, stderr: this.#stderr };
      }
      if (classifyLine(result.line, id) === "reply") {
        return { kind: "reply", reply: JSON.parse(result.line) };
      }
      // The reference output is ready: the candidate's clock starts now. A
      // repeated progress line changes nothing.
      if (phase === "reference") {
        phase = "candidate";
        limit = limits.timeoutSeconds;
        phaseStart = performance.now();
        phaseCpu = processCpuSeconds(this.pid);
        deadline = phaseStart + limit * 1000;
      }
    }
  }

  /**
   * Kills the process and its process group (SIGKILL: a child a kernel
   * forked despite the limits goes too) and releases its pipes.
   */
  async kill(): Promise<void> {
    try {
      Deno.kill(-this.pid, "SIGKILL");
    } catch {
      // The group is empty: every process of it has exited.
    }
    if (!this.#exited) {
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // Already exited.
      }
    }
    await this.#status;
    try {
      await this.#writer.close();
    } catch {
      // Broken pipe: the process is gone.
    }
    await this.#lines.return(undefined);
    await this.#stderrDone;
  }
}
