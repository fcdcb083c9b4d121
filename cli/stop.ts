/**
 * Stopping a long command cleanly: SIGINT (Ctrl-C), SIGTERM, or the death of
 * the parent process (`deno task`, killed even with SIGKILL, so that no
 * orphaned `tune` goes on running) abort a signal the command polls; a
 * second SIGINT or SIGTERM stops at once.
 *
 * The parent is watched by polling `Deno.ppid`: when the parent dies, the
 * kernel reparents the process (to init or a subreaper), so the id changes.
 * It is watched only under a task runner (`deno task` and `npm run` set
 * `INIT_CWD`), so that `nohup deno run cli/tune.ts &` may outlive its shell.
 * @module
 */

/** What {@link watchStop} calls. */
export interface StopHandlers {
  /** The first stop request: `why` says what asked (e.g. `"interrupted (SIGINT)"`). */
  onStop(why: string): void;
  /** A second request: the command should exit now with `code`. */
  onHardStop(why: string, code: number): void;
}

/** A watch started by {@link watchStop}. */
export interface StopWatch {
  /** Aborted at the first stop request. */
  signal: AbortSignal;
  /** What asked to stop (empty before any request). */
  reason(): string;
  /** The exit status that tells how the command was stopped: 130 SIGINT, 143 otherwise. */
  exitCode(): number;
  /** Removes the signal listeners and stops watching the parent. */
  dispose(): void;
}

/** Milliseconds between two looks at the parent process id. */
export const PARENT_POLL_MS = 250;

/**
 * Watches SIGINT, SIGTERM and the parent process.
 *
 * @example
 * ```ts
 * import { watchStop } from "./stop.ts";
 * const stop = watchStop({ onStop: () => {}, onHardStop: () => {} });
 * if (stop.signal.aborted) throw new Error("nothing asked to stop yet");
 * stop.dispose();
 * ```
 */
export function watchStop(
  handlers: StopHandlers,
  { ppid = () => Deno.ppid, watchParent = underTaskRunner() }: {
    ppid?: () => number;
    watchParent?: boolean;
  } = {},
): StopWatch {
  const controller = new AbortController();
  let why = "";
  let code = 0;
  const request = (reason: string, status: number) => {
    if (controller.signal.aborted) return handlers.onHardStop(reason, status);
    why = reason;
    code = status;
    controller.abort(reason);
    handlers.onStop(reason);
  };
  const onInt = () => request("interrupted (SIGINT)", 130);
  const onTerm = () => request("terminated (SIGTERM)", 143);
  Deno.addSignalListener("SIGINT", onInt);
  Deno.addSignalListener("SIGTERM", onTerm);
  const parent = ppid();
  let orphaned = false;
  const timer = watchParent
    ? setInterval(() => {
      if (orphaned || ppid() === parent) return;
      orphaned = true;
      request(`the parent process ${parent} exited`, 143);
    }, PARENT_POLL_MS)
    : undefined;
  if (timer !== undefined) Deno.unrefTimer(timer);
  return {
    signal: controller.signal,
    reason: () => why,
    exitCode: () => code,
    dispose() {
      if (timer !== undefined) clearInterval(timer);
      Deno.removeSignalListener("SIGINT", onInt);
      Deno.removeSignalListener("SIGTERM", onTerm);
    },
  };
}

/**
 * Whether a task runner started this process (`deno task` and `npm run` set `INIT_CWD`).
 *
 * @example
 * ```ts
 * import { underTaskRunner } from "./stop.ts";
 * console.log(underTaskRunner() ? "under a task runner" : "started directly");
 * ```
 */
export function underTaskRunner(): boolean {
  try {
    return Deno.env.get("INIT_CWD") !== undefined;
  } catch {
    return false; // no --allow-env: not known, not watched
  }
}

/**
 * The command that resumes run `runId` of `db` (the path quoted for a shell when needed).
 *
 * @example
 * ```ts
 * import { resumeCommand } from "./stop.ts";
 * const c = resumeCommand("my runs.db", 3);
 * if (c !== "deno task tune --resume --run 3 --db 'my runs.db'") throw new Error(c);
 * ```
 */
export function resumeCommand(db: string, runId: number): string {
  const quote = (s: string) => /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
  return `deno task tune --resume --run ${runId} --db ${quote(db)}`;
}

/** A {@link StopWatch} over the tuning runs of one command (see {@link watchRuns}). */
export interface RunsWatch extends StopWatch {
  /** For `SessionOptions.onStart`: the run the session writes. */
  onStart(runId: number): void;
  /**
   * Whether the session that returned `summary` was stopped; if so, says on
   * stderr how far the run got and the command that resumes it.
   */
  stopped(
    summary: {
      run_id: number;
      valid: number;
      errors: number;
      trials: number;
      interrupted?: boolean;
    },
  ): boolean;
}

/**
 * Watches SIGINT, SIGTERM and the parent for command `name` (e.g. `"tune"`),
 * whose sessions write to the records database `db`: the first request stops
 * after the round in flight, a second at once (exit 130 or 143), each with a
 * line on stderr and the command that resumes the run. `pause` is called
 * before each line (to end a progress bar).
 *
 * @example
 * ```ts
 * import { watchRuns } from "./stop.ts";
 * const watch = watchRuns("tune", "runs.db");
 * // runSession({ ..., signal: watch.signal, onStart: watch.onStart })
 * watch.dispose();
 * ```
 */
export function watchRuns(name: string, db: string, pause: () => void = () => {}): RunsWatch {
  let runId: number | undefined;
  const watch = watchStop({
    onStop: (why) => {
      pause();
      console.error(`${name}: ${why}: stopping after the round in flight (again: stop at once)`);
    },
    onHardStop: (why, code) => {
      pause();
      console.error(`${name}: ${why}: stopped at once; every finished record is kept`);
      if (runId !== undefined) console.error(`${name}: resume with: ${resumeCommand(db, runId)}`);
      Deno.exit(code);
    },
  });
  return {
    ...watch,
    onStart: (id) => runId = id,
    stopped(s) {
      if (!s.interrupted) return false;
      pause();
      console.error(
        `${name}: run ${s.run_id} stopped (${watch.reason()}) after ${
          s.valid + s.errors
        } of ${s.trials} trials; resume with: ${resumeCommand(db, s.run_id)}`,
      );
      return true;
    },
  };
}

/** Thrown by a {@link stopPoints} check once a stop was requested. */
export class StopRequested extends Error {
  /** Creates the error; `why` says what asked to stop. */
  constructor(why: string) {
    super(`stopped: ${why}`);
    this.name = "StopRequested";
  }
}

/**
 * A check for long computations that poll a stop `signal`: it throws
 * {@link StopRequested} once `signal` is aborted. Signal listeners run only
 * from the event loop, which a computation chaining resolved promises never
 * reaches, so at most every `everyMs` milliseconds the check also yields to
 * it (a timer of 0 ms), letting a pending SIGINT or SIGTERM be seen.
 *
 * @example
 * ```ts
 * import { StopRequested, stopPoints } from "./stop.ts";
 * const stop = new AbortController();
 * const check = stopPoints(stop.signal);
 * await check(); // nothing asked: returns
 * stop.abort("interrupted (SIGINT)");
 * const thrown = await check().catch((e) => e);
 * if (!(thrown instanceof StopRequested)) throw new Error("expected StopRequested");
 * ```
 */
export function stopPoints(signal: AbortSignal, everyMs = 50): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last >= everyMs) {
      await new Promise((r) => setTimeout(r, 0));
      last = performance.now();
    }
    if (signal.aborted) throw new StopRequested(String(signal.reason));
  };
}
