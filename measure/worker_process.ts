/**
 * The runner's handle on one measurement worker process: spawn it, send it one
 * request at a time, and notice when it dies or hangs.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { readLines } from "./lines.ts";
import { WORKER_READY, type WorkerReply, type WorkerRequest } from "./protocol.ts";

/** Absolute path of the worker entry point. */
export const WORKER_PATH: string = fileURLToPath(new URL("./worker.ts", import.meta.url));

/** Most characters of worker stderr kept for messages. */
const STDERR_TAIL = 2000;

/** How one request ended. */
export type RequestOutcome =
  | { kind: "reply"; reply: WorkerReply }
  | { kind: "exit"; status: Deno.CommandStatus; stderr: string }
  | { kind: "timeout" };

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
   * when it does not start within `startSeconds`.
   */
  static async start(startSeconds: number): Promise<WorkerProcess> {
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
   * Sends one request and waits up to `timeoutSeconds` for its reply. On a
   * timeout the process is killed; on an exit its status is returned.
   */
  async request(
    fields: Omit<WorkerRequest, "id">,
    timeoutSeconds: number,
  ): Promise<RequestOutcome> {
    const id = this.#nextId++;
    const line = JSON.stringify({ ...fields, id });
    try {
      await this.#writer.write(new TextEncoder().encode(`${line}\n`));
    } catch {
      // The process is gone; its status tells why.
    }
    const matches = (text: string) => {
      try {
        return JSON.parse(text)?.id === id;
      } catch {
        return false;
      }
    };
    const result = await this.#nextLine(timeoutSeconds, matches);
    if (result.kind === "line") return { kind: "reply", reply: JSON.parse(result.line) };
    if (result.kind === "timeout") {
      await this.kill();
      return { kind: "timeout" };
    }
    const status = await this.#status;
    await this.#stderrDone;
    return { kind: "exit", status, stderr: this.#stderr };
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
