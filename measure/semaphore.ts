/**
 * A small FIFO counting semaphore, used to cap concurrent compiler processes.
 *
 * @module
 */

/** Limits how many async tasks run at once; waiters are served in FIFO order. */
export class Semaphore {
  #free: number;
  #waiters: (() => void)[] = [];

  /** Creates a semaphore with `permits` (at least 1) free permits. */
  constructor(permits: number) {
    this.#free = Math.max(1, Math.floor(permits));
  }

  /** Waits for a permit. Pair every call with one {@link Semaphore.release}. */
  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Returns a permit, handing it to the oldest waiter if any. */
  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free++;
  }

  /** Runs `task` while holding a permit. */
  async use<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }
}
