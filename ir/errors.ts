/**
 * Errors of the IR: a primitive that cannot apply, and a trace that cannot be read.
 * @module
 */

/**
 * A schedule primitive cannot apply. The message names the stage, the loop
 * and the reason, e.g. `Cannot vectorize loop "k" of stage "C": it is a reduction loop`.
 */
export class ScheduleError extends Error {
  /** Creates the error with a message that names loop and reason. */
  constructor(message: string) {
    super(message);
    this.name = "ScheduleError";
  }
}

/** A trace file or trace JSON is malformed (checked before anything is built). */
export class TraceError extends Error {
  /** Creates the error; the message says where in the trace the problem is. */
  constructor(message: string) {
    super(message);
    this.name = "TraceError";
  }
}
