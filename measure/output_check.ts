/**
 * The output check: every element must satisfy
 * `|out - ref| <= atol + rtol * |ref|` and not be NaN.
 *
 * @module
 */

/** One output tensor to check against its reference values. */
export interface OutputPair {
  /** Tensor name, for the message. */
  name: string;
  /** What the candidate wrote. */
  got: Float32Array;
  /** What the reference wrote. */
  expected: Float32Array;
}

/** Result of {@link compareOutputs}. */
export interface CompareReport {
  /** Number of elements outside the tolerance (NaN counts). */
  bad: number;
  /** Number of elements checked. */
  total: number;
  /** Description of the first bad element and the totals; empty when all match. */
  message: string;
}

/** Checks every output element; see the module doc for the tolerance. */
export function compareOutputs(outputs: OutputPair[], atol: number, rtol: number): CompareReport {
  let bad = 0;
  let total = 0;
  let first = "";
  let nan = 0;
  let maxError = 0;
  for (const { name, got, expected } of outputs) {
    if (got.length !== expected.length) {
      throw new Error(
        `output "${name}": ${got.length} elements but reference has ${expected.length}`,
      );
    }
    total += got.length;
    for (let i = 0; i < got.length; i++) {
      const g = got[i];
      const e = expected[i];
      const error = Math.abs(g - e);
      if (error <= atol + rtol * Math.abs(e)) continue; // NaN fails this test
      bad++;
      if (Number.isNaN(error)) nan++;
      else if (error > maxError) maxError = error;
      if (first === "") first = `output "${name}" index ${i}: got ${g}, expected ${e}`;
    }
  }
  if (bad === 0) return { bad, total, message: "" };
  const nanNote = nan > 0 ? `${nan} NaN, ` : "";
  const largest = nan < bad ? `largest error ${maxError}, ` : "";
  const message = `${first}; ${bad} of ${total} elements wrong (${nanNote}${largest}` +
    `atol ${atol}, rtol ${rtol})`;
  return { bad, total, message };
}
