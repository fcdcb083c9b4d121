/**
 * Metrics researchers report for cost models, on a held-out set of measured
 * candidates: Kendall's tau and pairwise accuracy between predicted scores
 * and measured throughput, top-k recall (how many of the truly best k the
 * model puts in its top k), and the regret of the model's pick (how much
 * slower its top-scored candidate is than the best one).
 *
 * @example
 * ```ts
 * import { kendallTau } from "./metrics.ts";
 * if (kendallTau([1, 2, 3], [10, 20, 30]) !== 1) throw new Error();
 * ```
 * @module
 */
import { checkArray } from "../ir/check.ts";

/** Kendall's tau-b between two score lists (ties handled), in [-1, 1]. */
export function kendallTau(a: readonly number[], b: readonly number[]): number {
  let concordant = 0, discordant = 0, tiesA = 0, tiesB = 0;
  for (let i = 0; i < a.length; i++) {
    for (let j = i + 1; j < a.length; j++) {
      const da = Math.sign(a[i] - a[j]), db = Math.sign(b[i] - b[j]);
      if (da === 0 && db === 0) continue;
      if (da === 0) tiesA++;
      else if (db === 0) tiesB++;
      else if (da === db) concordant++;
      else discordant++;
    }
  }
  const n0 = concordant + discordant;
  const denom = Math.sqrt((n0 + tiesA) * (n0 + tiesB));
  return denom === 0 ? 0 : (concordant - discordant) / denom;
}

/** Share of pairs with different truth that the prediction orders the same way. */
export function pairwiseAccuracy(pred: readonly number[], truth: readonly number[]): number {
  let right = 0, total = 0;
  for (let i = 0; i < pred.length; i++) {
    for (let j = i + 1; j < pred.length; j++) {
      if (truth[i] === truth[j]) continue;
      total++;
      if (Math.sign(pred[i] - pred[j]) === Math.sign(truth[i] - truth[j])) right++;
    }
  }
  return total === 0 ? 0 : right / total;
}

/** Share of the k truly best (highest truth) that are among the k highest predictions. */
export function topKRecall(pred: readonly number[], truth: readonly number[], k: number): number {
  const kk = Math.min(k, pred.length);
  if (kk === 0) return 0;
  const top = (xs: readonly number[]) =>
    new Set(
      xs.map((x, i) => [x, i] as const).sort((p, q) => q[0] - p[0]).slice(0, kk).map((p) => p[1]),
    );
  const t = top(truth), p = top(pred);
  let hit = 0;
  for (const i of p) if (t.has(i)) hit++;
  return hit / kk;
}

/**
 * Regret of the model's pick: 1 - truth[argmax pred] / max truth, with truth a
 * throughput (higher is better). 0 when the model picks the best.
 */
export function pickRegret(pred: readonly number[], truth: readonly number[]): number {
  if (pred.length === 0) return 0;
  let pick = 0;
  pred.forEach((p, i) => (p > pred[pick] ? (pick = i) : 0));
  const best = Math.max(...truth);
  return best > 0 ? 1 - truth[pick] / best : 0;
}

/** All four metrics at once (top-k for k = 1, 5, 10, 32). */
export function evaluateRanking(pred: readonly number[], truth: readonly number[]): {
  kendall_tau: number;
  pairwise_accuracy: number;
  top1_recall: number;
  top5_recall: number;
  top10_recall: number;
  top32_recall: number;
  pick_regret: number;
} {
  checkArray(pred, "pred", "predicted scores");
  checkArray(truth, "truth", "measured throughputs");
  if (pred.length !== truth.length) {
    throw new RangeError(
      `pred and truth must have one value per candidate, got ${pred.length} and ${truth.length}`,
    );
  }
  return {
    kendall_tau: kendallTau(pred, truth),
    pairwise_accuracy: pairwiseAccuracy(pred, truth),
    top1_recall: topKRecall(pred, truth, 1),
    top5_recall: topKRecall(pred, truth, 5),
    top10_recall: topKRecall(pred, truth, 10),
    top32_recall: topKRecall(pred, truth, 32),
    pick_regret: pickRegret(pred, truth),
  };
}
