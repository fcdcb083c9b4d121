/**
 * Why `bo` does what it does on one replayed space: the distribution of the
 * space's times (as log of time / optimum) and its invalid share; the
 * Gaussian process fitted to `n` random points in a given encoding and
 * output (chosen length scale and nugget, and the Spearman correlation of its
 * posterior mean with the true log times of the points it did not see); and
 * where `bo` variants spend evaluations 9..50 (per knob, the share of
 * evaluations on each option, over seeds), against random search's share.
 *
 * ```sh
 * deno run --allow-read bench/bo_diagnose.ts resnet18_conv1_cpu --seeds 10 \
 *   --variant 'bo={}' --variant 'new={"encoding":"mixed","output":"rank"}'
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import { bayesianOptimization, type BayesOptOptions, optionVectors } from "../search/bo.ts";
import { normalScores, PoolGP } from "../search/gp.ts";
import { replaySpaceFromFile } from "../search/replay.ts";
import { parseCommandLine, runCommand, UsageError } from "../cli/args.ts";

const USAGE = "usage: deno run --allow-read bench/bo_diagnose.ts SPACE [--seeds 10] " +
  "[--variant 'name={json options}']...";

/**
 * Spearman's rank correlation of two lists of the same length (ties broken by position).
 *
 * @example
 * ```ts
 * import { spearman } from "./bo_diagnose.ts";
 * if (spearman([1, 2, 3], [10, 20, 40]) !== 1) throw new Error();
 * ```
 */
export function spearman(a: readonly number[], b: readonly number[]): number {
  const ranks = (x: readonly number[]) => {
    const r = new Array<number>(x.length);
    [...x.keys()].sort((i, j) => x[i] - x[j] || i - j).forEach((i, k) => (r[i] = k));
    return r;
  };
  const ra = ranks(a), rb = ranks(b), m = (a.length - 1) / 2;
  let s = 0, sa = 0, sb = 0;
  for (let i = 0; i < a.length; i++) {
    s += (ra[i] - m) * (rb[i] - m);
    sa += (ra[i] - m) ** 2;
    sb += (rb[i] - m) ** 2;
  }
  return s / Math.sqrt(sa * sb);
}

if (import.meta.main) {
  await runCommand("bo_diagnose", async (argv) => {
    const { values: v, positionals } = parseCommandLine(argv, {
      seeds: { type: "string", default: "10" },
      variant: { type: "string", multiple: true, default: ["bo={}"] },
    }, USAGE);
    const seeds = Number(v.seeds);
    if (positionals.length !== 1 || !(seeds >= 1)) {
      throw new UsageError("give one SPACE (a replayed space) and --seeds N >= 1");
    }
    const variants: [string, BayesOptOptions][] = v.variant.map((s) => {
      const k = s.indexOf("=");
      try {
        return [s.slice(0, k), { ...JSON.parse(s.slice(k + 1)), seed: 0 }];
      } catch {
        throw new UsageError(`--variant ${s}: expected name={json options}`);
      }
    });
    let r;
    try {
      r = await replaySpaceFromFile(positionals[0], { absent: "invalid" });
    } catch (e) {
      throw new UsageError(`cannot open space "${positionals[0]}": ${(e as Error).message}`);
    }
    const sp = r.space;
    const valid: number[] = [];
    for (let i = 0; i < sp.size; i++) if (r.evaluateIndex(i).seconds !== undefined) valid.push(i);
    const logRatio = valid.map((i) => Math.log(r.evaluateIndex(i).seconds! / r.optimum)).sort((
      a,
      b,
    ) => a - b);
    const q = (p: number) => logRatio[Math.round(p * (logRatio.length - 1))].toFixed(2);
    console.log(`${r.name}: ${sp.size} points, ${valid.length} valid`);
    console.log(
      `log(time/optimum) quantiles 0,10,25,50,75,90,100%: ${
        [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1].map(q).join(" ")
      }`,
    );
    console.log(
      `points within 0.9 of the optimum: ${logRatio.filter((x) => x <= -Math.log(0.9)).length}`,
    );

    // The process fitted to n random valid points.
    const active = sp.knobs.flatMap((k, j) => (k.options.length > 1 ? [j] : []));
    for (const [enc, out] of [["index", "log"], ["onehot", "rank"], ["mixed", "rank"]] as const) {
      const vecs = active.map((j) => optionVectors(sp.knobs[j].options, enc));
      const encode = (i: number) => {
        const p = sp.point(i);
        return Float64Array.from(active.flatMap((j, k) => vecs[k][p[j]]));
      };
      for (const n of [25, 50]) {
        const fits: string[] = [];
        for (let seed = 0; seed < 5; seed++) {
          const prng = createPrng(1000 + seed);
          const chosen = new Set<number>();
          while (chosen.size < Math.min(n, valid.length - 1)) chosen.add(prng.pick(valid));
          const gp = new PoolGP(encode(valid[0]).length);
          if (out === "rank") gp.transform = normalScores;
          const rest = valid.filter((i) => !chosen.has(i));
          gp.addPool(rest.map(encode));
          for (const i of chosen) gp.observe(encode(i), Math.log(r.evaluateIndex(i).seconds!));
          gp.fit([0.1, 0.17, 0.3, 0.5, 0.8].map((c) => c * Math.sqrt(active.length)), [
            0.001,
            0.03,
            0.1,
          ]);
          const { mean } = gp.posterior();
          const rho = spearman([...mean], rest.map((i) => r.evaluateIndex(i).seconds!));
          fits.push(
            `ls ${(gp.lengthScale / Math.sqrt(active.length)).toFixed(2)}·√d nugget ${gp.noise} ρ ${
              rho.toFixed(2)
            }`,
          );
        }
        console.log(`GP ${enc}/${out} on ${n} random points (5 draws): ${fits.join("; ")}`);
      }
    }

    // Where the variants spend evaluations 9..50.
    for (const [name, opts] of variants) {
      const counts = sp.knobs.map((k) => new Array<number>(k.options.length).fill(0));
      let total = 0;
      for (let seed = 0; seed < seeds; seed++) {
        const s = bayesianOptimization(sp, { ...opts, seed, candidateOf: r.candidateOf });
        for (let t = 0; t < 50; t++) {
          const cs = s.propose(1);
          if (cs.length === 0) break;
          if (t >= 8) {
            cs[0].knobs!.forEach((o, j) => counts[j][o]++);
            total++;
          }
          s.observe(cs.map((c) => ({ candidate: c, ...r.evaluate(c.knobs!) })));
        }
      }
      console.log(`\n${name}: share of evaluations 9..50 per option (random: 1/options)`);
      sp.knobs.forEach((k, j) => {
        if (k.options.length < 2) return;
        const cells = k.options.map((o, i) => `${o}:${(counts[j][i] / total).toFixed(2)}`);
        console.log(`  ${k.name} (${(1 / k.options.length).toFixed(2)}) ${cells.join(" ")}`);
      });
    }
  });
}
