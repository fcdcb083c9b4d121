/**
 * A progress bar for long runs, on stderr: redrawn in place on a terminal,
 * one line per update otherwise (CI logs, notebooks).
 * @module
 */

import type { Progress } from "../plots/progress_card.ts";

/** What a tuning run reports as it goes (defined beside its renderers in plots/, a leaf). */
export type { Progress };

/** Renders one progress line, e.g. `[####......] 16/64 valid 16 errors 0 best 102.3 GFLOP/s 12.0 s`. */
export function progressLine(p: Progress, width = 24): string {
  const frac = p.total > 0 ? Math.min(1, p.done / p.total) : 1;
  const filled = Math.round(frac * width);
  const bar = "#".repeat(filled) + ".".repeat(width - filled);
  const time = `${p.elapsed.toFixed(1)} s`;
  if (p.valid === undefined) return `[${bar}] ${p.done}/${p.total} ${p.unit ?? ""} ${time}`;
  const best = p.bestGflops === undefined ? "-" : p.bestGflops.toFixed(1);
  return `[${bar}] ${p.done}/${p.total} valid ${p.valid} errors ${p.errors} best ${best} GFLOP/s ${time}`;
}

/** A reporter writing {@link progressLine}s to stderr; `done()` ends the line. */
export function stderrProgress(): { update(p: Progress): void; done(): void } {
  const tty = Deno.stderr.isTerminal();
  const enc = new TextEncoder();
  let last = "";
  return {
    update(p) {
      const line = progressLine(p);
      if (line === last) return;
      last = line;
      Deno.stderr.writeSync(enc.encode(tty ? `\r${line}` : `${line}\n`));
    },
    done() {
      if (tty && last) Deno.stderr.writeSync(enc.encode("\n"));
    },
  };
}
