/**
 * The types of the remote measurer (`remote_measurer.ts`), apart from it:
 * commands that load the queue client only with `--queue` type it from here,
 * so that their module graph holds no npm `bullmq`.
 * @module
 */
import type { Measurer } from "../measure/measurer.ts";
import type { JobOptions } from "./job.ts";
import type { Announcement } from "./machine.ts";

/** Options of `createRemoteMeasurer`. */
export interface RemoteMeasurerOptions {
  /** The `--queue` URL. */
  url: string;
  /** How every job is measured (timing, timeout, input seed). */
  options: Omit<JobOptions, "cutoffSeconds">;
  /** The target whose workers measure. Default `"cpu"`. */
  target?: string;
  /** The machine key, when several machines of the target announced themselves. */
  machine?: string;
  /** Seconds Redis may be unreachable before the run stops. Default 10. */
  graceSeconds?: number;
  /** Announcements older than this many seconds are ignored. Default 30. */
  staleSeconds?: number;
  /** Called once per quiet spell: jobs wait and none finished for `waitNoticeSeconds`. */
  onWaiting?: (message: string) => void;
  /** Seconds without a result before `onWaiting`. Default 15. */
  waitNoticeSeconds?: number;
  /** Seconds between two looks for jobs that vanished from Redis. Default 1. */
  checkSeconds?: number;
  /** Aborted: the pending `measure` call rejects at once (`QueueStoppedError`). */
  signal?: AbortSignal;
}

/** A remote measurer, with the machine it measures on. */
export interface RemoteMeasurer extends Measurer {
  /** The announcement of the machine chosen. */
  machine: Announcement;
}

/** The module `remote_measurer.ts`, as loaded at run time. */
export interface RemoteMeasurerModule {
  createRemoteMeasurer(o: RemoteMeasurerOptions): Promise<RemoteMeasurer>;
}
