/**
 * The runner's handle on one measurement worker process: spawn it, send it one
 * request at a time, and notice when it dies or hangs.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { readLines } from "./lines.ts";
import {
  PHASE_REFERENCE_READY,
  WORKER_READY,
  type WorkerReply,
  type WorkerRequest,
} from "./protocol.ts";

/** Absolute path of the worker entry point. */
export const WORKER_PATH: string = fileURLToPath(new URL("./worker.ts", import.meta.url));

/** Most characters of worker stderr kept for messages. */
const STDERR_TAIL = 2000;

/**
 * Which part of a request the worker was in: computing (or looking up) the
 * reference output, or checking and timing the candidate.
 */
export type RequestPhase = "reference" | "candidate";

/** How one request ended. */
export type RequestOutcome =
  | { kind: "reply"; reply: WorkerReply }
  | { kind: "exit"; phase: RequestPhase; status: Deno.CommandStatus; stderr: string }
  | { kind: "timeout"; phase: RequestPhase };

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
   * worker's environment (e.g. `OMP_NUM_THREADS`).
   */
  static async start(
    startSeconds: number,
    env: Record<string, string> = {},
  ): Promise<WorkerProcess> {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-config",
        "--allow-read",
        "--allow-ffi",
        "--allow-env",
        WORKER_PATH,
      ],
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
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

  /** True once the process has exited. */
  get exited(): boolean {
    return this.#exited;
  }

  /** Reads lines until `accept` takes one, the process exits, or the time runs out. */
  async #nextLine(
    seconds: number,
    accept: (line: string) => boolean,
  ): Promise<{ kind: "line"; line: string } | { kind: "eof" } | { kind: "timeout" }> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<{ kind: "timeout" }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: "timeout" }), seconds * 1000);
    });
    const read = (async (): Promise<{ kind: "line"; line: string } | { kind: "eof" }> => {
      for (;;) {
        const next = await this.#lines.next();
        if (next.done) return { kind: "eof" };
        if (accept(next.value)) return { kind: "line", line: next.value };
        this.#stderr = (this.#stderr + `[stdout] ${next.value}\n`).slice(-STDERR_TAIL);
      }
    })();
    try {
      return await Promise.race([read, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Sends one request and waits for its reply: up to `referenceTimeoutSeconds`
   * until the worker says the reference output is ready, then up to
   * `timeoutSeconds` for the candidate. On a timeout the process is killed;
   * on an exit its status is returned. Either way `phase` says which part of
   * the request was running.
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
    let deadline = performance.now() + limits.referenceTimeoutSeconds * 1000;
    for (;;) {
      const seconds = Math.max(0, deadline - performance.now()) / 1000;
      const result = await this.#nextLine(seconds, (text) => classifyLine(text, id) !== "other");
      if (result.kind === "timeout") {
        await this.kill();
        return { kind: "timeout", phase };
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
        deadline = performance.now() + limits.timeoutSeconds * 1000;
      }
    }
  }

  /** Kills the process (SIGKILL) and releases its pipes. */
  async kill(): Promise<void> {
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
