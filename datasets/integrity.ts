/**
 * Checks of stored candidates before they are used: a trace whose JSON does
 * not parse, or whose hash is not the one stored with it (a trace edited by
 * hand under its old hash would get the result of another trace), is a
 * {@link DatabaseError} naming the candidate. `export` checks the runs it
 * writes, `tune --resume` the run it continues.
 *
 * A stored hash is one of the two keys the tuning loop records: the SHA-256
 * of the trace's canonical JSON (`traceHash` of ir/trace.ts), or for a candidate with
 * knobs their comma-joined list (`knobKey`). A hash of neither form (records
 * written by hand, by tests, or by another tool) is not compared.
 *
 * @example
 * ```ts
 * import { checkStoredCandidates } from "./integrity.ts";
 * import { traceHash } from "../ir/trace.ts";
 * const trace = { workload: { name: "matmul", shape: [8, 8, 8] }, insts: [] };
 * const row = {
 *   id: 1, runId: 1, trial: 0, trace: JSON.stringify(trace), knobs: null, created: "",
 *   traceHash: await traceHash(trace as never),
 * };
 * await checkStoredCandidates([row], "runs.db"); // fine
 * const edited = { ...row, trace: JSON.stringify({ ...trace, insts: [{ op: "x" }] }) };
 * const thrown = await checkStoredCandidates([edited], "runs.db").catch((e) => e);
 * if (!/candidate 1 .*hash/.test(thrown.message)) throw new Error(thrown.message);
 * ```
 * @module
 */
import { type CandidateRow, DatabaseError } from "./db.ts";
import { createHash } from "node:crypto";
import { canonicalJSON } from "../ir/trace.ts";

/** {@link traceHash}, synchronously (node:crypto: several times faster than one digest a call). */
function hashOf(trace: unknown): string {
  return createHash("sha256").update(canonicalJSON(trace)).digest("hex");
}

/** Throws a {@link DatabaseError} for the first candidate whose trace or hash is damaged. */
export async function checkStoredCandidates(
  candidates: readonly Pick<
    CandidateRow,
    "id" | "runId" | "trial" | "trace" | "traceHash" | "knobs"
  >[],
  location: string,
): Promise<void> {
  for (const [i, c] of candidates.entries()) {
    // Large runs: let the event loop run now and then (a Ctrl-C is seen).
    if (i > 0 && i % 2000 === 0) await new Promise((r) => setTimeout(r, 0));
    const name = `candidate ${c.id} (run ${c.runId}, trial ${c.trial})`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(c.trace);
    } catch (e) {
      throw new DatabaseError(
        location,
        `Records database "${location}" is damaged: ${name} stores a trace that is not valid JSON ` +
          `(${(e as Error).message})`,
      );
    }
    if (c.knobs && c.traceHash === c.knobs.join(",")) continue;
    // Only tunebook's own key is compared: a hash that is no SHA-256 (records written by
    // hand, by tests or by other tools) cannot be recomputed.
    if (!/^[0-9a-f]{64}$/.test(c.traceHash)) continue;
    if (parsed !== null && c.traceHash === hashOf(parsed)) continue;
    throw new DatabaseError(
      location,
      `Records database "${location}" is damaged: ${name} stores a trace whose hash does not ` +
        `match it (stored ${c.traceHash.slice(0, 16)}, computed ${
          parsed !== null ? hashOf(parsed).slice(0, 16) : "none"
        }): it was edited or damaged; its result is not that trace's`,
    );
  }
}
