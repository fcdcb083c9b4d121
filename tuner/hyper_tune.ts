/**
 * Tuning a strategy's own settings ("Tuning the tuner", arXiv 2509.26300):
 * the hyperparameters the strategy table declares (tuner/strategies.ts
 * `hyper`) form a knob space, which a meta-strategy (any knob strategy of the
 * table) searches; a setting is scored by the methodology score
 * (search/methodology.ts) of `seeds` runs of the strategy on each replayed
 * space, each run budgeted in tuning time (the methodology's budget).
 *
 * Leave-one-space-out: for each space, the meta-strategy tunes on the other
 * spaces and the winner is judged on the space left out; the judgement is the
 * mean of those held-out scores (with the defaults' held-out scores beside
 * it). The preset saved is then tuned on every space given. A (setting,
 * space) pair is run once and reused by every fold. With `db` every run is
 * recorded there, and `resume` reads the finished ones back, so a killed
 * tuning continues to the same preset.
 *
 * @example
 * ```ts
 * import { tuneStrategy } from "./hyper_tune.ts";
 * const r = await tuneStrategy({
 *   strategy: "ga",
 *   spaces: ["convolution_MI250X", "pnpoly_RTX_3090"],
 *   metaBudget: 2,
 *   seeds: 2,
 * });
 * console.log(r.hyper, r.folds.length); // the winner's settings, 2 folds
 * ```
 * @module
 */
import { replayMeasurer } from "../measure/replay.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { KnobSpace } from "../ir/knobs.ts";
import { methodologyScore, standardisedCurve } from "../search/methodology.ts";
import { type ReplaySpace, replaySpaceFromFile } from "../search/replay.ts";
import type { Candidate, Observation } from "../search/strategy.ts";
import { budgetedRun, runIdsOf, timeResults, type TimeSpace, timeSpace } from "./compare_time.ts";
import { runStrategy, runTrace } from "./run_strategy.ts";
import { createStrategy, type Hyperparameter, strategyEntry } from "./strategies.ts";
import { resolveStrategy } from "./presets.ts";
import type { RecordStore } from "../datasets/record_store.ts";

/** Options of {@link tuneStrategy}. */
export interface TuneStrategyOptions {
  /** The strategy whose settings are tuned (it must declare hyperparameters). */
  strategy: string;
  /** Replayed spaces (cache names or paths); at least 2 for leave-one-space-out. */
  spaces: readonly string[];
  /** The meta-strategy: any knob strategy of the table, or `STRATEGY@PRESET` (default `random`). */
  meta?: string;
  /** Settings the meta-strategy tries per fold (default 20). */
  metaBudget?: number;
  /** Runs of the strategy per setting and space (seeds 0..seeds-1; default 10). */
  seeds?: number;
  /** Seed of the meta-strategy (default 0). */
  metaSeed?: number;
  /**
   * Where every run (setting x space x seed) is recorded, each with config
   * `{ hyperTune: space, hyper: setting, strategyTime }` and its seed. Default:
   * a fresh in-memory store per (setting, space), dropped after.
   */
  db?: RecordStore;
  /**
   * Read back the finished runs `db` holds of the same strategy, setting,
   * space, seed and clock instead of running them again (an unfinished one,
   * cut off by a kill, runs again from its start: a run on the tuning clock
   * is not continued). The meta-search, replayed with the same seed, ends
   * with the same preset. Default false.
   */
  resume?: boolean;
  /** Count the strategy's own time on the clock (default false: recorded times only, reproducible). */
  strategyTime?: boolean;
  /** Leave one space out (default true). */
  folds?: boolean;
  /** Progress lines. */
  onProgress?: (line: string) => void;
}

/** One fold of leave-one-space-out. */
export interface FoldResult {
  /** The space left out. */
  heldOut: string;
  /** The winner on the other spaces. */
  hyper: Record<string, number | string>;
  /** Its score on the other spaces. */
  trainScore: number;
  /** Its score on the space left out. */
  heldOutScore: number;
  /** The defaults' score on the space left out. */
  defaultHeldOutScore: number;
}

/** What {@link tuneStrategy} found. */
export interface TuneStrategyResult {
  strategy: string;
  meta: string;
  /** The winner on every space (the preset). */
  hyper: Record<string, number | string>;
  /** Its score on every space (a training score). */
  trainScore: number;
  /** The defaults' score on every space. */
  defaultScore: number;
  folds: FoldResult[];
  /** Mean of the folds' held-out scores: the judgement of the tuning. */
  leaveOneOutScore?: number;
  /** Mean of the defaults' held-out scores (the same spaces). */
  defaultLeaveOneOutScore?: number;
  /** (setting, space) pairs scored. */
  pairs: number;
  /** The seeds of each (setting, space) pair's runs. */
  seeds: number[];
  /** Runs read back from `db` ({@link TuneStrategyOptions.resume}) rather than run. */
  resumed: number;
  /** Wall seconds. */
  seconds: number;
}

/** The declared hyperparameters as a knob space (one `other` knob each, its values as options). */
export function hyperSpace(
  strategy: string,
): { space: KnobSpace; hyper: readonly Hyperparameter[] } {
  const hyper = strategyEntry(strategy).hyper ?? [];
  if (hyper.length === 0) {
    throw new RangeError(`Strategy "${strategy}" declares no hyperparameters to tune`);
  }
  return {
    hyper,
    space: new KnobSpace(
      hyper.map((h) => ({ name: h.name, kind: "other", options: [...h.values] })),
    ),
  };
}

/**
 * Tunes a strategy's hyperparameters (see the module doc).
 *
 * @throws {RangeError} for a strategy without hyperparameters, fewer than 2 spaces with folds, or a bad count
 */
export async function tuneStrategy(o: TuneStrategyOptions): Promise<TuneStrategyResult> {
  const started = performance.now();
  const meta = o.meta ?? "random";
  const metaBudget = o.metaBudget ?? 20, seeds = o.seeds ?? 10;
  for (const [name, x] of [["metaBudget", metaBudget], ["seeds", seeds]] as const) {
    if (!Number.isInteger(x) || x < 1) {
      throw new RangeError(`${name} must be a positive integer, got ${x}`);
    }
  }
  const folds = o.folds ?? true;
  if (o.spaces.length === 0) throw new RangeError("spaces must name at least one replayed space");
  if (folds && o.spaces.length < 2) {
    throw new RangeError(`leave-one-space-out needs at least 2 spaces, got ${o.spaces.length}`);
  }
  if (o.resume && !o.db) throw new RangeError("resume needs db (the records of the runs)");
  // The meta-strategy may carry a preset (sa@mine); the tuned strategy is searched over all its settings.
  const metaStrategy = resolveStrategy(meta);
  const tuned = resolveStrategy(o.strategy);
  if (tuned.preset) {
    throw new RangeError(
      `${o.strategy}: tune-strategy searches every setting of ${tuned.strategy}; give the plain name`,
    );
  }
  const { space: hs, hyper } = hyperSpace(o.strategy);
  const strategyTime = o.strategyTime ?? false;
  const recorded = o.resume ? (await o.db!.runs()).filter((r) => r.status === "finished") : [];
  let resumed = 0;
  const spaces: { name: string; replay: ReplaySpace; ts: TimeSpace }[] = [];
  for (const name of o.spaces) {
    const replay = await replaySpaceFromFile(name);
    spaces.push({
      name,
      replay,
      ts: timeSpace(replay, { budgets: "auto", strategyTime }),
    });
  }
  const memo = new Map<string, number[]>();
  const curveOf = async (
    setting: Record<string, number | string>,
    k: number,
  ): Promise<number[]> => {
    const key = `${JSON.stringify(setting)}|${k}`;
    const hit = memo.get(key);
    if (hit) return hit;
    const { name, replay, ts } = spaces[k];
    const store = o.db ?? createMemoryRecordStore();
    const config = { hyperTune: name, hyper: setting, strategyTime };
    const same = JSON.stringify(config);
    const traces = [];
    let read = 0;
    for (let seed = 0; seed < seeds; seed++) {
      const before = recorded.findLast((r) =>
        r.strategy === o.strategy && r.seed === seed && JSON.stringify(r.config) === same
      );
      if (before) {
        traces.push(await runTrace(store, before.id));
        read++;
        continue;
      }
      const s = await createStrategy(o.strategy, replay.space, {
        seed,
        candidateOf: replay.candidateOf,
        hyper: setting,
      });
      const b = budgetedRun(s, replayMeasurer(replay), ts);
      traces.push(
        await runStrategy(b.strategy, b.measurer, {
          budget: replay.space.size,
          store,
          run: { strategy: o.strategy, seed, config },
        }),
      );
    }
    resumed += read;
    const ids = await runIdsOf(store, [o.strategy], seeds, config);
    const out = await timeResults(store, ids, new Map([[o.strategy, traces]]), ts);
    if (!o.db) await store.close();
    // No valid evaluation within the range: scored as if it found only the worst configuration.
    const curve = out.curves[o.strategy] ??
      standardisedCurve(
        ts.range.grid.map(() => Math.max(...ts.record.values)),
        ts.baseline,
        ts.range.optimum,
      );
    memo.set(key, curve);
    o.onProgress?.(
      `${o.strategy} ${JSON.stringify(setting)} on ${name}: ${
        methodologyScore([curve]).score.toFixed(3)
      }${read > 0 ? ` (${read} of ${seeds} runs read back)` : ""}`,
    );
    return curve;
  };
  const scoreOn = async (setting: Record<string, number | string>, ks: readonly number[]) => {
    const curves = [];
    for (const k of ks) curves.push(await curveOf(setting, k));
    return methodologyScore(curves).score;
  };
  const settingOf = (knobs: readonly number[]) =>
    Object.fromEntries(hyper.map((h, j) => [h.name, h.values[knobs[j]]]));
  const defaults = Object.fromEntries(hyper.map((h) => [h.name, h.default]));
  const search = async (ks: readonly number[]) => {
    const strategy = await createStrategy(metaStrategy.strategy, hs, {
      seed: o.metaSeed ?? 0,
      ...(metaStrategy.preset ? { hyper: metaStrategy.hyper } : {}),
    });
    let best: { setting: Record<string, number | string>; score: number } | undefined;
    const evaluate = async (cands: Candidate[]): Promise<Observation[]> => {
      const obs: Observation[] = [];
      for (const c of cands) {
        const setting = settingOf(c.knobs!);
        const score = await scoreOn(setting, ks);
        if (!best || score > best.score) best = { setting, score };
        // Strategies minimise seconds: a higher score is a lower, positive "time".
        obs.push({ candidate: c, errorKind: "none", seconds: Math.exp(-score) });
      }
      return obs;
    };
    await runStrategy(strategy, evaluate, { budget: Math.min(metaBudget, hs.size), batch: 1 });
    return best!;
  };
  const all = spaces.map((_, k) => k);
  const foldResults: FoldResult[] = [];
  if (folds) {
    for (const k of all) {
      const train = all.filter((j) => j !== k);
      const won = await search(train);
      foldResults.push({
        heldOut: spaces[k].name,
        hyper: won.setting,
        trainScore: won.score,
        heldOutScore: await scoreOn(won.setting, [k]),
        defaultHeldOutScore: await scoreOn(defaults, [k]),
      });
    }
  }
  const final = await search(all);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    strategy: o.strategy,
    meta,
    hyper: final.setting,
    trainScore: final.score,
    defaultScore: await scoreOn(defaults, all),
    folds: foldResults,
    ...(folds
      ? {
        leaveOneOutScore: mean(foldResults.map((f) => f.heldOutScore)),
        defaultLeaveOneOutScore: mean(foldResults.map((f) => f.defaultHeldOutScore)),
      }
      : {}),
    pairs: memo.size,
    seeds: Array.from({ length: seeds }, (_, i) => i),
    resumed,
    seconds: (performance.now() - started) / 1000,
  };
}
