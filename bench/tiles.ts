/**
 * Points of one knob template timed against each other, interleaved in one
 * process (bench/peers/tiles.c): which tile is faster on a machine whose
 * speed drifts by more than the differences asked about. Each point's kernel
 * is generated for this machine and built as the tuner builds it; every round
 * calls each kernel in turn (one untimed call, then `--calls` timed ones, the
 * fastest kept), so the kernels meet the same machine seconds apart. Reported
 * per point and thread count: the median GFLOP/s over the rounds with its
 * quartiles, and the median and quartiles of its speed relative to the first
 * point, round by round. A point outside the template's space on this
 * machine (a register rule: `search/templates/registry.ts`) is timed all the same and
 * marked.
 *
 * ```sh
 * deno run -A bench/tiles.ts --shape 1,128,28,28,128,3,3,1,1 --template conv2d-nchwxc \
 *   --point fr=16,yr=7,xr=1,ic_bn=16 --point fr=16,yr=2,xr=3,ic_bn=16 \
 *   [--workload conv2d] [--threads 1,2] [--rounds 30] [--calls 5]
 * ```
 *
 * Knobs a point leaves out take their first option.
 * @module
 */
import { parseFlags, parseShape, positiveInt, runCommand, UsageError } from "../cli/args.ts";
import { pointOfValues } from "../ir/knobs.ts";
import { type Summary, summary } from "../ir/stats.ts";
import { createWorkload, type Workload } from "../ir/workloads.ts";
import { createBuilder } from "../measure/builder.ts";
import { kernelSource, signatureOf } from "../measure/kernel_source.ts";
import { TEMPLATE_NAMES, templateSpace } from "../search/templates/registry.ts";
import { DEFAULT_CACHE, PeerHarnesses } from "./peers.ts";

const USAGE =
  `usage: deno run -A bench/tiles.ts --shape D1,D2,... --template NAME --point K=V,... --point K=V,...
  [--workload conv2d] [--threads 1,2] [--rounds 30] [--calls 5]`;

/** Kernels one run of the harness times (`MAX_KERNELS` of bench/peers/tiles.c). */
const MAX_POINTS = 32;

/** One point's figures at one thread count. */
export interface TileStats {
  /** The point as given (`fr=16,yr=2`). */
  label: string;
  /** Whether the point is in the template's space on this machine. */
  valid: boolean;
  /** GFLOP/s over the rounds: mean, median and quartiles. */
  gflops: Summary;
  /** Speed relative to the first point, round by round: mean, median and quartiles. */
  ratio: Summary;
}

/**
 * Knob values of a point written `name=value,...`; a value that reads as a
 * number is one. Knobs left out take their first option.
 *
 * @example
 * ```ts
 * import { parsePoint } from "./tiles.ts";
 * const knobs = [{ name: "fr", options: [16, 32] }, { name: "parallel", options: ["f", "y"] }];
 * const v = parsePoint("parallel=y", knobs);
 * if (v.fr !== 16 || v.parallel !== "y") throw new Error(JSON.stringify(v));
 * ```
 */
export function parsePoint(
  text: string,
  knobs: readonly { name: string; options: readonly unknown[] }[],
): Record<string, unknown> {
  const values: Record<string, unknown> = Object.fromEntries(
    knobs.map((k) => [k.name, k.options[0]]),
  );
  for (const part of text.split(",").filter((p) => p.trim() !== "")) {
    const [name, raw] = part.split("=").map((s) => s.trim());
    const knob = knobs.find((k) => k.name === name);
    if (!knob) {
      throw new UsageError(
        `--point "${text}": no knob "${name}"; knobs: ${knobs.map((k) => k.name).join(", ")}`,
      );
    }
    const value = raw !== undefined && raw !== "" && Number.isFinite(Number(raw))
      ? Number(raw)
      : raw;
    if (!knob.options.some((o) => JSON.stringify(o) === JSON.stringify(value))) {
      throw new UsageError(
        `--point "${text}": ${name} must be one of ${knob.options.map(String).join(", ")}`,
      );
    }
    values[name] = value;
  }
  return values;
}

/**
 * Figures of each kernel from the harness's seconds (one row per round, one
 * column per kernel): GFLOP/s and the ratio to the first kernel, round by round.
 *
 * @example
 * ```ts
 * import { tileStats } from "./tiles.ts";
 * const [a, b] = tileStats([[2e-3, 1e-3], [4e-3, 2e-3], [2e-3, 1e-3]], 1e6, ["a", "b"], [true, true]);
 * if (a.ratio.median !== 1 || b.ratio.median !== 2 || b.gflops.median !== 1) throw new Error();
 * ```
 */
export function tileStats(
  seconds: number[][],
  flops: number,
  labels: string[],
  valid: boolean[],
): TileStats[] {
  return labels.map((label, k) => ({
    label,
    valid: valid[k],
    gflops: summary(seconds.map((round) => flops / round[k] / 1e9)),
    ratio: summary(seconds.map((round) => round[0] / round[k])),
  }));
}

/**
 * A markdown table of {@link tileStats} at one thread count.
 *
 * @example
 * ```ts
 * import { tilesTable, tileStats } from "./tiles.ts";
 * const t = tilesTable(2, tileStats([[2e-3, 1e-3]], 1e6, ["a", "b"], [true, false]));
 * if (!t.includes("| b (outside the space) |")) throw new Error(t);
 * ```
 */
export function tilesTable(threads: number, stats: TileStats[]): string {
  const f = (x: number, d: number) => x.toFixed(d);
  return [
    `| point, ${threads} thread${
      threads === 1 ? "" : "s"
    } | GFLOP/s: median (quartiles) | against the first, round by round: median (quartiles) |`,
    "| --- | --- | --- |",
    ...stats.map((s) =>
      `| ${s.label}${s.valid ? "" : " (outside the space)"} | ${f(s.gflops.median, 1)} (${
        f(s.gflops.p25, 1)
      }-${f(s.gflops.p75, 1)}) | ${f(s.ratio.median, 3)} (${f(s.ratio.p25, 3)}-${
        f(s.ratio.p75, 3)
      }) |`
    ),
  ].join("\n");
}

async function main(argv: string[]): Promise<void> {
  const v = parseFlags(argv, {
    workload: { type: "string", default: "conv2d" },
    shape: { type: "string" },
    template: { type: "string" },
    point: { type: "string", multiple: true },
    threads: { type: "string", default: "1,2" },
    rounds: { type: "string", default: "30" },
    calls: { type: "string", default: "5" },
    cache: { type: "string", default: DEFAULT_CACHE },
  }, USAGE);
  if (!v.shape) throw new UsageError("--shape is required");
  if (!v.template) {
    throw new UsageError(`--template is required; known: ${TEMPLATE_NAMES.join(", ")}`);
  }
  const points = v.point ?? [];
  if (points.length < 1) throw new UsageError("give at least one --point");
  if (points.length > MAX_POINTS) {
    throw new UsageError(
      `at most ${MAX_POINTS} --point in one run (the harness's kernels); got ${points.length}`,
    );
  }
  let w: Workload;
  let t;
  try {
    w = createWorkload(v.workload, parseShape(v.shape));
    t = templateSpace(v.template, w);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError((e as Error).message);
  }
  const threads = v.threads.split(",").map((s) => positiveInt("threads", s, 1));
  const rounds = positiveInt("rounds", v.rounds, 30);
  const calls = positiveInt("calls", v.calls, 5);
  const space = t.space;
  const chosen = points.map((p) => parsePoint(p, space.knobs));
  const indices = chosen.map((values) => pointOfValues(space.knobs, values)!);
  const builder = createBuilder({ cacheDir: Deno.env.get("TUNEBOOK_CACHE") });
  const sources = indices.map((p, i) => {
    const s = kernelSource(t.candidateOf(p).trace!);
    if (!("source" in s)) throw new UsageError(`--point "${points[i]}": ${s.error}`);
    return { source: s.source };
  });
  console.error(`[tiles] building ${sources.length} kernels`);
  const built = await builder.build(sources);
  built.forEach((b, i) => {
    if (b.errorKind !== "none") {
      throw new Error(`--point "${points[i]}" did not build (${b.errorKind}): ${b.error}`);
    }
  });
  const harness = await new PeerHarnesses(v.cache).harness("tiles");
  if ("unavailable" in harness) throw new Error(harness.unavailable);
  const sizes = signatureOf(w).buffers.map((b) => String(b.size));
  const valid = indices.map((p) => space.isValid(p));
  const report: { threads: number; points: TileStats[] }[] = [];
  for (const n of threads) {
    console.error(`[tiles] ${rounds} rounds on ${n} thread(s)`);
    const out = await new Deno.Command(harness.path, {
      args: [String(rounds), String(calls), ...sizes, "--", ...built.map((b) => b.artifact!)],
      env: { OMP_NUM_THREADS: String(n) },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`tiles harness failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    const { seconds } = JSON.parse(new TextDecoder().decode(out.stdout)) as { seconds: number[][] };
    const stats = tileStats(seconds, w.flops, points, valid);
    console.log(tilesTable(n, stats) + "\n");
    report.push({ threads: n, points: stats });
  }
  console.log(
    JSON.stringify({
      workload: w.name,
      shape: w.shape,
      template: v.template,
      rounds,
      calls,
      report,
    }),
  );
}

if (import.meta.main) await runCommand("tiles", main);
