/**
 * `deno task worker --queue redis://HOST:PORT`: a measurement worker (see
 * `remote/queue_worker.ts`). It announces its machine (target, CPU model, GPU,
 * compiler, tunebook version), takes that machine's jobs one at a time, and
 * runs until SIGINT or SIGTERM (it finishes the job in hand first; a second
 * signal stops at once).
 *
 * Exit status: 0 stopped by a signal after closing cleanly; 2 a bad
 * argument or Redis unreachable at start; 1 an unexpected error.
 * @module
 */
import { HelpRequest, oneLine, parseFlags, UsageError } from "./args.ts";
import { QueueLostError, QueueUrlError } from "../remote/connection.ts";
import { startWorker } from "../remote/queue_worker.ts";

/** Usage text of `worker`. */
export const WORKER_USAGE = `usage: deno task worker --queue redis://HOST:PORT [--quiet]

  --queue URL   Redis of the queue: redis://HOST:PORT, rediss:// for TLS (CA file in
                TUNEBOOK_QUEUE_CA), a password as redis://:PASSWORD@HOST:PORT or in
                TUNEBOOK_QUEUE_PASSWORD
  --quiet       no line per job
  --help        this text

Runs until SIGINT or SIGTERM; finishes the job in hand first. Run one worker per machine:
two workers on one machine disturb each other's timings.`;

/** Runs the command; returns the exit status. */
export async function main(argv: string[]): Promise<number> {
  let worker;
  try {
    const v = parseFlags(argv, {
      queue: { type: "string" },
      quiet: { type: "boolean", default: false },
    }, WORKER_USAGE);
    if (!v.queue) throw new UsageError("--queue URL is required (e.g. redis://127.0.0.1:6379)");
    const log = v.quiet ? () => {} : (line: string) => console.error(`worker: ${line}`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    worker = await Promise.race([
      startWorker({ url: v.queue, log }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new UsageError(`cannot reach Redis at ${v.queue} within 10 s`)),
          10_000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
  } catch (e) {
    if (e instanceof HelpRequest) {
      console.log(e.message);
      return 0;
    }
    if (e instanceof UsageError || e instanceof QueueUrlError || e instanceof QueueLostError) {
      console.error(`worker: ${oneLine(e.message)}`);
      return 2;
    }
    throw e;
  }
  const w = worker;
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) Deno.exit(130);
      stopping = true;
      console.error("worker: stopping after the job in hand");
      w.close().then(resolve);
    };
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
  });
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
