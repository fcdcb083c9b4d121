/**
 * The worker's handle on its measurement subprocess (`measure_child.ts`):
 * sends a job, awaits its result, and starts a fresh subprocess when the
 * last one died (its job then ends as `worker_lost`, transient: the tuner
 * measures it again on resume).
 *
 * @example
 * ```ts ignore
 * import { MeasureChild } from "./child.ts";
 * const child = new MeasureChild();
 * const result = await child.measure(job);
 * await child.close();
 * ```
 * @module
 */
import { readLines } from "../measure/lines.ts";
import type { MeasureResult } from "../measure/measurer.ts";
import type { MeasureJob } from "./job.ts";
import { parseResult } from "./job.ts";

const CHILD = new URL("./measure_child.ts", import.meta.url).pathname;
const PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-ffi",
  "--allow-env",
  "--allow-sys",
];

/** A job's request failed in the subprocess (not a kernel fault: those are results). */
export class ChildError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ChildError";
  }
}

/** The subprocess died with the job in hand. */
export class ChildLostError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ChildLostError";
  }
}

/** One long-lived measurement subprocess, restarted when it dies. */
export class MeasureChild {
  #process?: Deno.ChildProcess;
  #writer?: WritableStreamDefaultWriter<Uint8Array>;
  #waiting = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  #next = 0;

  /**
   * Measures one job in the subprocess; a subprocess that dies meanwhile
   * makes it a `worker_lost` result.
   */
  async measure(job: MeasureJob): Promise<MeasureResult> {
    try {
      return parseResult(await this.request("measure", job));
    } catch (e) {
      if (!(e instanceof ChildLostError)) throw e;
      return {
        errorKind: "worker_lost",
        error: e.message,
        times: [],
        buildSeconds: 0,
        runSeconds: 0,
      };
    }
  }

  /** Runs one job of `kind` in the subprocess; rejects with {@link ChildLostError} if it dies. */
  request(kind: "measure" | "run", job: unknown): Promise<unknown> {
    this.#start();
    const id = this.#next++;
    const p = new Promise<unknown>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
    this.#writer!.write(new TextEncoder().encode(JSON.stringify({ id, kind, job }) + "\n"))
      .catch(() => {});
    return p;
  }

  /** The subprocess's pid (tests kill it), or undefined when none runs. */
  get pid(): number | undefined {
    return this.#process?.pid;
  }

  /** Ends the subprocess (its stdin closes: it finishes the job in hand, then exits). */
  async close(): Promise<void> {
    const p = this.#process;
    if (!p) return;
    await this.#writer?.close().catch(() => {});
    await p.status;
  }

  #start(): void {
    if (this.#process) return;
    const p = new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSIONS, CHILD],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#process = p;
    this.#writer = p.stdin.getWriter();
    (async () => {
      for await (const line of readLines(p.stdout)) {
        let msg: { id: number; result?: unknown; error?: string };
        try {
          msg = JSON.parse(line);
        } catch {
          continue; // Not ours (a stray print): ignored.
        }
        const w = this.#waiting.get(msg.id);
        if (!w) continue;
        this.#waiting.delete(msg.id);
        if (msg.error !== undefined) w.reject(new ChildError(msg.error));
        else w.resolve(msg.result);
      }
      const status = await p.status;
      if (this.#process === p) {
        this.#process = undefined;
        this.#writer = undefined;
      }
      const why = status.signal ? `signal ${status.signal}` : `exit status ${status.code}`;
      for (const w of this.#waiting.values()) {
        w.reject(new ChildLostError(`the worker's measurement subprocess ended (${why})`));
      }
      this.#waiting.clear();
    })();
  }
}
