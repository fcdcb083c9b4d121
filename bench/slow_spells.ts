/**
 * Does the harness's speed probe see the machine slow down? One matmul kernel
 * (the best of `--tune` random trials) is timed again and again for
 * `--seconds`, as `tune` times a trial (3 repeats of at least 10 ms), each
 * result with its conditions: the speed probe (`probeGBps`, measure/harness.ts),
 * the load, the steal time and the CPU frequency. Prints how many results fell
 * in a slow spell (probe under `SLOW_SPEED` of the usual), how fast the
 * kernel ran in and out of them, how closely the kernel's speed follows the
 * probe (correlation), and what the load, steal and frequency read meanwhile;
 * writes both speeds over time as an SVG plot (`--plot`) and every result as
 * JSON (`--json`).
 *
 * ```sh
 * deno run -A bench/slow_spells.ts [--seconds 180] [--shape 256,256,256] [--tune 16] \
 *   [--plot bench/results/slow_spells.svg] [--json /tmp/slow_spells.json]
 * deno run -A bench/slow_spells.ts --replot /tmp/slow_spells.json   # the summary and plot again
 * ```
 *
 * Results: bench/results/slow_spells.md.
 * @module
 */
import { join } from "node:path";
import { resolveTarget } from "../ir/target.ts";
import { createWorkload } from "../ir/workloads.ts";
import { quantile } from "../ir/stats.ts";
import { createBuilder } from "../measure/builder.ts";
import { withConditions } from "../measure/conditions.ts";
import { runSession } from "../tuner/session.ts";
import { targetMeasurer } from "../tuner/target_measurer.ts";
import { SLOW_SPEED, usualSpeed } from "../tuner/ranking_noise.ts";
import { bandCurveSVG, type BandSeries } from "../plots/tuning_curve.ts";
import { writePlot } from "../plots/figure.ts";
import { bestRecorded } from "./peers.ts";
import { correlation } from "./compile_cost.ts";
import { positiveFlags } from "./network_peers.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/slow_spells.ts [--seconds 180] [--shape 256,256,256] [--tune 16] \\
    [--plot bench/results/slow_spells.svg] [--json /tmp/slow_spells.json]
  deno run -A bench/slow_spells.ts --replot /tmp/slow_spells.json   # the summary and plot again`;

/** One timing of the kernel and the conditions beside it. */
export interface SpellSample {
  /** Seconds since the first. */
  t: number;
  /** The kernel's GFLOP/s (median of its repeats). */
  gflops: number;
  /** The speed probe, GB/s. */
  probe: number;
  load1?: number;
  steal?: number;
  cpuMhz?: number;
}

/** What {@link spellSummary} finds. */
export interface SpellSummary {
  samples: number;
  /** The usual probe (`usualSpeed`: the 90th percentile), GB/s. */
  usualProbe: number;
  /** Samples whose probe read under `SLOW_SPEED` of the usual. */
  slow: number;
  /** The kernel's median GFLOP/s in the slow samples over that of the others; null without both. */
  kernelSlowOverUsual: number | null;
  /** Pearson correlation of the kernel's GFLOP/s with the probe's. */
  correlation: number;
  /** Of the slow samples, how many the kernel's own figure also shows slow (under {@link KERNEL_SLOW} of its usual). */
  slowSeenByKernel: number;
  /** Of the other samples, how many the kernel shows slow (what the probe missed). */
  missedByProbe: number;
  /** Median load, steal and MHz in the slow samples and in the others (null: not read). */
  conditions: Record<"load1" | "steal" | "cpuMhz", { slow: number | null; usual: number | null }>;
}

/** A timing of the kernel under this share of its usual (90th percentile) is slow by the kernel. */
export const KERNEL_SLOW = 0.8;

const medianOr = (xs: number[]) => xs.length > 0 ? quantile(xs, 0.5) : null;

/**
 * Splits `samples` by their probe into slow and usual ones and compares the
 * kernel's speed and the other conditions between them.
 *
 * @example
 * ```ts
 * import { spellSummary } from "./slow_spells.ts";
 * const s = (gflops: number, probe: number) => ({ t: 0, gflops, probe, load1: 0.5 });
 * const r = spellSummary([s(70, 40), s(71, 40.5), s(36, 20), s(69, 40), s(72, 40.6)]);
 * if (r.slow !== 1 || r.slowSeenByKernel !== 1 || r.missedByProbe !== 0) throw new Error();
 * if (Math.abs(r.kernelSlowOverUsual! - 36 / 70.5) > 1e-9) throw new Error();
 * ```
 */
export function spellSummary(samples: readonly SpellSample[]): SpellSummary {
  const usualProbe = usualSpeed(samples.map((s) => s.probe));
  const usualKernel = quantile(samples.map((s) => s.gflops), 0.9);
  const isSlow = (s: SpellSample) => s.probe < SLOW_SPEED * usualProbe;
  const kernelSlow = (s: SpellSample) => s.gflops < KERNEL_SLOW * usualKernel;
  const slow = samples.filter(isSlow), usual = samples.filter((s) => !isSlow(s));
  const ms = medianOr(slow.map((s) => s.gflops)), mu = medianOr(usual.map((s) => s.gflops));
  const cond = (k: "load1" | "steal" | "cpuMhz") => {
    const of = (xs: SpellSample[]) => medianOr(xs.flatMap((s) => s[k] ?? []));
    return { slow: of(slow), usual: of(usual) };
  };
  return {
    samples: samples.length,
    usualProbe,
    slow: slow.length,
    kernelSlowOverUsual: ms !== null && mu !== null ? ms / mu : null,
    correlation: correlation(samples.map((s) => s.gflops), samples.map((s) => s.probe)),
    slowSeenByKernel: slow.filter(kernelSlow).length,
    missedByProbe: usual.filter(kernelSlow).length,
    conditions: { load1: cond("load1"), steal: cond("steal"), cpuMhz: cond("cpuMhz") },
  };
}

/**
 * Both speeds over time, each over its usual (90th percentile): the median
 * and quartiles of each 2-second window.
 *
 * @example
 * ```ts
 * import { spellsSVG } from "./slow_spells.ts";
 * const s = [0, 1, 2, 3, 4, 5].map((t) => ({ t, gflops: t < 3 ? 60 : 40, probe: t < 3 ? 50 : 44 }));
 * if (!spellsSVG(s, "256,256,256").startsWith("<svg")) throw new Error();
 * ```
 */
export function spellsSVG(samples: readonly SpellSample[], shape: string): string {
  const band = (label: string, of: (s: SpellSample) => number): BandSeries => {
    const usual = quantile(samples.map(of), 0.9);
    const windows = new Map<number, number[]>();
    for (const s of samples) {
      const k = Math.floor(s.t / 2) * 2;
      windows.set(k, [...windows.get(k) ?? [], of(s) / usual]);
    }
    const xs = [...windows.keys()].sort((a, b) => a - b);
    return {
      label,
      x: xs,
      median: xs.map((x) => quantile(windows.get(x)!, 0.5)),
      p25: xs.map((x) => quantile(windows.get(x)!, 0.25)),
      p75: xs.map((x) => quantile(windows.get(x)!, 0.75)),
    };
  };
  return bandCurveSVG([
    band("kernel GFLOP/s / its usual", (s) => s.gflops),
    band("speed probe GB/s / its usual", (s) => s.probe),
  ], {
    title: `Slow spells: matmul ${shape} and the harness's speed probe (2-s windows)`,
    y: "speed / usual (90th percentile)",
    x: "seconds",
  });
}

if (import.meta.main) {
  await runCommand("slow_spells", async (argv) => {
    const v = parseFlags(argv, {
      seconds: { type: "string", default: "180" },
      shape: { type: "string", default: "256,256,256" },
      tune: { type: "string", default: "16" },
      plot: { type: "string", default: "bench/results/slow_spells.svg" },
      json: { type: "string" },
      replot: { type: "string" },
    }, USAGE);
    const fail = (m: string): never => {
      throw new UsageError(m);
    };
    const { seconds, tune } = positiveFlags(v, ["seconds", "tune"], fail);
    const w = (() => {
      try {
        return createWorkload("matmul", v.shape!.split(",").map(Number));
      } catch (e) {
        return fail(`--shape: ${(e as Error).message}`);
      }
    })();
    const samples: SpellSample[] = [];
    const timeKernel = async () => {
      const dir = await Deno.makeTempDir({ prefix: "tb-spells-" });
      try {
        await runSession({
          db: join(dir, "t.db"),
          workload: { name: w.name, shape: w.shape },
          strategy: "random",
          trials: tune,
        });
        const best = bestRecorded(join(dir, "t.db"), w);
        if (!best) fail(`no valid kernel among ${tune} random trials of ${w.shape}`);
        const timing = { number: 1, repeat: 3, minRepeatMs: 10, warmup: 1 };
        const tm = targetMeasurer(resolveTarget("cpu"), {
          workload: w,
          timing,
          builder: createBuilder({ cacheDir: join(dir, "kernels") }),
        });
        const measurer = withConditions(tm.measurer);
        const t0 = performance.now();
        let shown = 0;
        try {
          while ((performance.now() - t0) / 1000 < seconds) {
            const t = (performance.now() - t0) / 1000;
            const [r] = await measurer.measure([{ trace: best!.trace }]);
            const c = r.conditions ?? {};
            if (r.errorKind !== "none" || c.probeGBps === undefined) {
              fail(`the kernel's timing failed or had no probe: ${r.errorKind} ${r.error ?? ""}`);
            }
            const sorted = [...r.times].sort((a, b) => a - b);
            samples.push({
              t,
              gflops: w.flops / sorted[(sorted.length - 1) >> 1] / 1e9,
              probe: c.probeGBps!,
              ...(c.load1 !== undefined ? { load1: c.load1 } : {}),
              ...(c.steal !== undefined ? { steal: c.steal } : {}),
              ...(c.cpuMhz !== undefined ? { cpuMhz: c.cpuMhz } : {}),
            });
            if (t - shown >= 10) {
              shown = t;
              const s = samples.at(-1)!;
              console.error(
                `${t.toFixed(0)}/${seconds} s: kernel ${
                  s.gflops.toFixed(1)
                } GFLOP/s, probe ${s.probe}`,
              );
            }
          }
        } finally {
          await measurer.close?.();
        }
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    };
    if (v.replot) {
      // The summary and the plot of timings written by --json, without timing anything.
      try {
        samples.push(...JSON.parse(await Deno.readTextFile(v.replot)));
      } catch (e) {
        fail(`--replot ${v.replot}: ${(e as Error).message}`);
      }
    } else await timeKernel();

    if (samples.length === 0) fail("no timings to summarise");
    const s = spellSummary(samples);
    const f = (x: number | null, d = 2) => x === null ? "n/a" : x.toFixed(d);
    console.log(
      `matmul ${w.shape.join(",")}: ${s.samples} timings in ${
        samples.at(-1)!.t.toFixed(0)
      } s (3 repeats of 10 ms each)`,
    );
    console.log(
      `usual probe ${s.usualProbe.toFixed(1)} GB/s; ${s.slow} timings under ${SLOW_SPEED} of it`,
    );
    console.log(
      `kernel in the probe's slow timings / in the others (medians): ${
        f(s.kernelSlowOverUsual, 3)
      }`,
    );
    console.log(`correlation of the kernel's GFLOP/s with the probe's: ${f(s.correlation, 3)}`);
    console.log(
      `slow by the probe and by the kernel (under ${KERNEL_SLOW} of its usual): ` +
        `${s.slowSeenByKernel} of ${s.slow}; slow by the kernel alone: ${s.missedByProbe} of ` +
        `${s.samples - s.slow}`,
    );
    for (const k of ["load1", "steal", "cpuMhz"] as const) {
      const c = s.conditions[k];
      console.log(`${k}, median in slow / other timings: ${f(c.slow, 3)} / ${f(c.usual, 3)}`);
    }
    // The kernel's speed in spells the kernel itself shows (5-second windows at a median under
    // KERNEL_SLOW of its usual) and how many of their timings the probe flagged.
    const windows = new Map<number, SpellSample[]>();
    for (const x of samples) {
      windows.set(Math.floor(x.t / 5), [...windows.get(Math.floor(x.t / 5)) ?? [], x]);
    }
    const usualK = quantile(samples.map((x) => x.gflops), 0.9);
    const spells = [...windows.values()].filter((xs) =>
      quantile(xs.map((x) => x.gflops), 0.5) < KERNEL_SLOW * usualK
    );
    const inSpells = spells.flat();
    console.log(
      `5-s windows with the kernel's median under ${KERNEL_SLOW} of its usual: ${spells.length} of ${windows.size}; ` +
        `the probe flagged ${
          inSpells.filter((x) => x.probe < SLOW_SPEED * s.usualProbe).length
        } of their ${inSpells.length} timings, ` +
        `and ${
          samples.filter((x) => !inSpells.includes(x) && x.probe < SLOW_SPEED * s.usualProbe).length
        } of the other ${samples.length - inSpells.length}`,
    );
    await writePlot(v.plot!, spellsSVG(samples, w.shape.join(",")));
    console.log(`plot: ${v.plot}`);
    if (v.json) await Deno.writeTextFile(v.json, JSON.stringify(samples));
  });
}
