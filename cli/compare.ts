/**
 * `deno task compare`: run strategies on one space with many seeds and
 * budgets, print a table, write tuning curves (SVG and PNG) and end with one
 * line of JSON on stdout.
 *
 * A space is a Kernel Tuner cache (a name from data/kerneltuner such
 * as `gemm_RTX_3090`, or a path), replayed; or a workload such as
 * `matmul:256,256,256`, measured live on this CPU through its knob template
 * (each configuration is measured once and shared by all strategies, and the
 * optimum is the best measured in the comparison).
 * @module
 */
import { parseArgs } from "node:util";
import { basename, join } from "node:path";
import { createWorkload, WORKLOADS } from "../ir/workloads.ts";
import { checkWorkloadMemory, limitMessage, LIMITS } from "../ir/limits.ts";
import { createBuilder } from "../measure/builder.ts";
import { createRunner } from "../measure/runner.ts";
import { median } from "../datasets/db.ts";
import {
  type CompareRow,
  compareRows,
  compareTable,
  type Evaluator,
  fractionOverWall,
  type ReachRow,
  reachRows,
  reachTable,
  runStrategy,
  type RunTrace,
} from "../search/compare.ts";
import { createStrategy, STRATEGY_NAMES, TRANSFER_STRATEGIES } from "../search/registry.ts";
import type { Sample } from "../costmodel/model.ts";
import { replaySpaceFromFile } from "../search/replay.ts";
import type { KnobSpace } from "../search/knobs.ts";
import type { Candidate, CandidateOf, Observation } from "../search/strategy.ts";
import { defaultTemplate, templateSpace } from "../search/templates.ts";
import { kernelSource, referenceSource, signatureOf, toleranceOf } from "../tuner/kernel.ts";
import { stderrProgress } from "../tuner/progress.ts";
import { bandCurveSVG, svgToPNG } from "../plots/tuning_curve.ts";
import { bandCurveSpec } from "../plots/vegalite.ts";
import { HelpRequest, parseShape, runJsonCommand, UsageError } from "./args.ts";
import { checkOutputDir } from "./output.ts";

/** Usage text of `compare`. */
export const COMPARE_USAGE = `usage: deno task compare --space SPACE [options]

  --space SPACE          a Kernel Tuner cache (name from data/kerneltuner, or a path), or a
                         workload measured live, e.g. matmul:256,256,256
  --strategies A,B,...   strategies to compare (default random,grid,sa,ga,evolutionary)
  --budget N,N,...       evaluations at which to compare (default 25,100,400)
  --seeds N              seeds per strategy (default 20)
  --absent KIND          invalid | restricted: configurations a cache lacks (default invalid)
  --template NAME        knob template of a live workload space
  --transfer-from CACHE  records of the same kernel on another device (transfer strategies)
  --plan-size N          plan size of the planning strategies (default 64)
  --out DIR              directory of the tuning curves (default runs/compare)
  --quiet                no progress bar
  --help                 this text`;

/** A space to compare on. */
interface CompareSpace {
  name: string;
  space: KnobSpace;
  candidateOf: CandidateOf;
  evaluate: Evaluator;
  /** Best known seconds (replay); undefined for live spaces until measured. */
  optimum?: number;
  close(): Promise<void>;
  /** Best seconds measured so far (live spaces). */
  bestMeasured?(): number;
  /** Cache entries with time 0 ms, replayed as invalid (replay). */
  nonPositiveTimes?: number;
}

/** A comma-separated list of positive integers; a bad value is named with its flag. */
function list(text: string, flag: string): number[] {
  return text.split(",").map((raw, i) => {
    const p = raw.trim();
    if (!/^-?\d+$/.test(p)) {
      throw new UsageError(`${flag}: value ${i + 1} ${JSON.stringify(p)} is not an integer`);
    }
    const x = Number(p);
    if (x < 1) throw new UsageError(`${flag} values must be positive, got ${p}`);
    return x;
  });
}

async function openSpace(
  spec: string,
  absent: "invalid" | "restricted",
  template?: string,
): Promise<CompareSpace> {
  const colon = spec.indexOf(":");
  if (colon > 0 && Object.hasOwn(WORKLOADS, spec.slice(0, colon))) {
    let w;
    try {
      w = createWorkload(spec.slice(0, colon), parseShape(spec.slice(colon + 1)));
      checkWorkloadMemory(w);
    } catch (e) {
      throw new UsageError(`--space ${spec}: ${(e as Error).message}`);
    }
    let t;
    try {
      t = templateSpace(template ?? defaultTemplate(w), w);
    } catch (e) {
      throw new UsageError(`--template ${template}: ${(e as Error).message}`);
    }
    return liveSpace(spec, t);
  }
  try {
    const r = await replaySpaceFromFile(spec, { absent });
    return {
      name: r.name,
      space: r.space,
      candidateOf: r.candidateOf,
      optimum: r.optimum,
      nonPositiveTimes: r.nonPositiveTimes,
      evaluate: (cs) => cs.map((c) => ({ candidate: c, ...r.evaluate(c.knobs!) })),
      close: () => Promise.resolve(),
    };
  } catch (e) {
    throw new UsageError(`--space ${spec}: ${(e as Error).message}`);
  }
}

function liveSpace(name: string, t: ReturnType<typeof templateSpace>): CompareSpace {
  const builder = createBuilder({ cacheDir: Deno.env.get("TUNEBOOK_CACHE") });
  const runner = createRunner({ timing: { number: 1, repeat: 3, minRepeatMs: 20, warmup: 1 } });
  const measured = new Map<number, Observation>();
  let reference: string | undefined;
  let best = Infinity;
  const signature = signatureOf(t.workload);
  const tol = toleranceOf(t.workload);
  const evaluate: Evaluator = async (cs: Candidate[]) => {
    const todo = cs.filter((c) => !measured.has(t.space.index(c.knobs!)));
    if (!reference) {
      const [r] = await builder.build([{ source: referenceSource(t.workload) }]);
      if (!r.artifact) throw new Error(`reference kernel did not build: ${r.error}`);
      reference = r.artifact;
    }
    const sources = todo.map((c) => kernelSource(c.trace!));
    const built = await builder.build(
      sources.map((s) => ({ source: "source" in s ? s.source : "#error schedule" })),
    );
    const runs = todo.map((_, i) => i).filter((i) => "source" in sources[i] && built[i].artifact);
    const results = await runner.run(runs.map((i) => ({
      artifact: built[i].artifact!,
      reference: reference!,
      signature,
      seed: 0,
      ...tol,
    })));
    todo.forEach((c, i) => {
      const s = sources[i];
      const j = runs.indexOf(i);
      const ob: Observation = "error" in s
        ? { candidate: c, errorKind: "instantiation_error" }
        : j < 0
        ? { candidate: c, errorKind: built[i].errorKind }
        : results[j].errorKind === "none"
        ? { candidate: c, errorKind: "none", seconds: median(results[j].times) }
        : { candidate: c, errorKind: results[j].errorKind };
      if (ob.seconds !== undefined) best = Math.min(best, ob.seconds);
      measured.set(t.space.index(c.knobs!), ob);
    });
    return cs.map((c) => ({ ...measured.get(t.space.index(c.knobs!))!, candidate: c }));
  };
  return {
    name: `${name} (template ${t.name})`,
    space: t.space,
    candidateOf: t.candidateOf,
    evaluate,
    close: () => runner.close(),
    bestMeasured: () => best,
  };
}

/**
 * Records of another cache of the same kernel (another device) as samples in
 * the target space: configurations are matched by knob values; those the
 * target space lacks are dropped.
 */
async function transferSamples(spec: string, target: KnobSpace): Promise<Sample[]> {
  let source;
  try {
    source = await replaySpaceFromFile(spec);
  } catch (e) {
    throw new UsageError(`--transfer-from ${spec}: ${(e as Error).message}`);
  }
  const names = target.knobs.map((k) => k.name);
  if (source.space.knobs.map((k) => k.name).join() !== names.join()) {
    throw new UsageError(`--transfer-from ${spec}: its knobs differ from the space's`);
  }
  const out: Sample[] = [];
  for (let i = 0; i < source.space.size; i++) {
    const r = source.evaluateIndex(i);
    if (r.errorKind === "instantiation_error") continue;
    const values = source.space.values(source.space.point(i));
    const knobs = target.knobs.map((k) => k.options.indexOf(values[k.name]));
    if (knobs.some((x) => x < 0)) continue;
    out.push({ candidate: { knobs }, seconds: r.seconds });
  }
  if (out.length === 0) throw new UsageError(`--transfer-from ${spec}: no configuration matches`);
  return out;
}

/** What `compare` prints as its last line of JSON. */
export interface CompareOutput {
  space: string;
  /** Best known seconds (replay) or best measured (live). */
  optimum: number;
  results: Omit<CompareRow, "wall_seconds">[];
  /** Samples each strategy needed to reach 95% of the optimum (null: some seeds never did). */
  reach: (Omit<ReachRow, "median_samples" | "p25" | "p75"> & {
    median_samples: number | null;
    p25: number | null;
    p75: number | null;
  })[];
}

/** Runs the comparison; returns the JSON summary. */
export async function compare(
  argv: string[],
): Promise<CompareOutput> {
  let v;
  try {
    v = parseArgs({
      args: argv,
      strict: true,
      options: {
        space: { type: "string" },
        strategies: { type: "string", default: "random,grid,sa,ga,evolutionary" },
        budget: { type: "string", default: "25,100,400" },
        seeds: { type: "string", default: "20" },
        absent: { type: "string", default: "invalid" },
        template: { type: "string" },
        "transfer-from": { type: "string" },
        "plan-size": { type: "string", default: "64" },
        out: { type: "string", default: "runs/compare" },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (v.help) throw new HelpRequest(COMPARE_USAGE);
  if (!v.space) {
    throw new UsageError("Missing --space (a Kernel Tuner cache name or path, or workload:shape)");
  }
  if (v.absent !== "invalid" && v.absent !== "restricted") {
    throw new UsageError(`--absent must be "invalid" or "restricted", got "${v.absent}"`);
  }
  const strategies = v.strategies!.split(",").map((s) => s.trim()).filter(Boolean);
  if (strategies.length === 0) {
    throw new UsageError(`--strategies names no strategy; known: ${STRATEGY_NAMES.join(", ")}`);
  }
  for (const s of strategies) {
    if (!STRATEGY_NAMES.includes(s)) {
      throw new UsageError(`Unknown strategy "${s}"; known: ${STRATEGY_NAMES.join(", ")}`);
    }
  }
  if (strategies.some((s) => TRANSFER_STRATEGIES.includes(s)) && !v["transfer-from"]) {
    throw new UsageError(
      `${
        TRANSFER_STRATEGIES.join(" and ")
      } need --transfer-from (a cache of the same kernel on another device)`,
    );
  }
  const budgets = list(v.budget!, "--budget").sort((a, b) => a - b);
  const [planSize] = list(v["plan-size"]!, "--plan-size");
  const [seeds] = list(v.seeds!, "--seeds");
  if (seeds > LIMITS.seeds.value) {
    throw new UsageError(`--seeds: ${limitMessage(`${seeds} seeds`, LIMITS.seeds)}`);
  }
  const stem = basename(v.space).replace(/[^A-Za-z0-9_.-]/g, "_").replace(/\.json(\.gz)?$/, "");
  checkOutputDir(
    v.out!,
    [".svg", ".png", ".vl.json", "_wall.svg", "_wall.png"].map((x) => stem + x),
    { flag: "--out" },
  );
  const space = await openSpace(v.space, v.absent, v.template);
  const size = space.space.size;
  if (budgets[budgets.length - 1] > size) {
    await space.close();
    throw new UsageError(
      `--budget ${
        budgets[budgets.length - 1]
      } is more than the ${size} configurations of the space (a budget counts distinct configurations)`,
    );
  }
  if (space.nonPositiveTimes) {
    console.error(
      `compare: ${space.nonPositiveTimes} entries of the cache have time 0 ms; replayed as invalid configurations`,
    );
  }
  const pretrain = v["transfer-from"]
    ? await transferSamples(v["transfer-from"], space.space)
    : undefined;
  const maxBudget = budgets[budgets.length - 1];
  const runs = new Map<string, RunTrace[]>();
  const progress = v.quiet ? undefined : stderrProgress();
  const total = strategies.length * seeds;
  const started = performance.now();
  try {
    for (const name of strategies) {
      const list: RunTrace[] = [];
      for (let seed = 0; seed < seeds; seed++) {
        const strategy = createStrategy(name, space.space, {
          seed,
          candidateOf: space.candidateOf,
          pretrain,
          planSize,
        });
        list.push(await runStrategy(strategy, space.evaluate, { budget: maxBudget }));
        progress?.update({
          done: runs.size * seeds + seed + 1,
          total,
          unit: "runs (strategy x seed)",
          elapsed: (performance.now() - started) / 1000,
        });
      }
      runs.set(name, list);
    }
  } finally {
    progress?.done();
    await space.close();
  }
  const optimum = space.optimum ?? space.bestMeasured!();
  const rows = compareRows(runs, budgets, optimum);
  console.error(`\n${space.name}: optimum ${(optimum * 1e3).toPrecision(4)} ms, ${seeds} seeds\n`);
  console.error(compareTable(rows));
  const reach = reachRows(runs, optimum, 0.95);
  console.error(`\nSamples to reach 95% of the optimum (within ${maxBudget} evaluations):\n`);
  console.error(reachTable(reach));
  const series = [...runs].map(([label, rs]) => {
    const x = Array.from({ length: maxBudget }, (_, i) => i + 1);
    const at = (i: number) =>
      rs.map((
        r,
      ) => (r.best.length > i && Number.isFinite(r.best[i])
        ? optimum / r.best[i]
        : r.best.length > i
        ? 0
        : NaN)
      ).filter((f) => !Number.isNaN(f)).sort((a, b) => a - b);
    const q = (xs: number[], p: number) => xs.length ? xs[Math.floor((xs.length - 1) * p)] : NaN;
    return {
      label,
      x,
      median: x.map((_, i) => q(at(i), 0.5)),
      p25: x.map((_, i) => q(at(i), 0.25)),
      p75: x.map((_, i) => q(at(i), 0.75)),
    };
  });
  const svg = bandCurveSVG(series, {
    title: `${space.name}: median and quartiles over ${seeds} seeds`,
  });
  await Deno.mkdir(v.out!, { recursive: true });
  const base = join(v.out!, stem);
  await Deno.writeTextFile(`${base}.svg`, svg);
  const vlSpec = bandCurveSpec(series, {
    title: `${space.name}: median and quartiles over ${seeds} seeds`,
  });
  await Deno.writeTextFile(`${base}.vl.json`, JSON.stringify(vlSpec));
  await Deno.writeFile(`${base}.png`, await svgToPNG(svg));
  const until = Math.max(...[...runs.values()].flat().map((r) => r.wall.at(-1) ?? 0), 1e-6);
  const wallSVG = bandCurveSVG(
    [...runs].map(([label, rs]) => ({ label, ...fractionOverWall(rs, optimum, until) })),
    {
      title: `${space.name}: by wall time, ${seeds} seeds`,
      x: "wall seconds",
    },
  );
  await Deno.writeTextFile(`${base}_wall.svg`, wallSVG);
  await Deno.writeFile(`${base}_wall.png`, await svgToPNG(wallSVG));
  console.error(
    `\ntuning curves: ${base}.svg, ${base}.png, ${base}.vl.json (Vega-Lite); against wall seconds: ${base}_wall.png`,
  );
  return {
    space: space.name,
    optimum,
    results: rows.map(({ wall_seconds: _, ...r }) => r),
    reach: reach.map((r) => ({
      ...r,
      median_samples: Number.isFinite(r.median_samples) ? r.median_samples : null,
      p25: Number.isFinite(r.p25) ? r.p25 : null,
      p75: Number.isFinite(r.p75) ? r.p75 : null,
    })),
  };
}

if (import.meta.main) await runJsonCommand("compare", compare);
