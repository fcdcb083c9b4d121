/**
 * Traces: the instructions of a schedule and the decisions of its sampling
 * instructions, as plain JSON. A trace is the unit that is stored, exported,
 * mutated and learned from. It replays deterministically; a removed decision
 * is sampled afresh from the injected PRNG.
 *
 * @example
 * ```ts
 * import { parseTrace, printTrace, replayTrace, traceOf } from "./trace.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(32, 32, 32), { prng: createPrng(1) });
 * sch.split("C", "i", sch.samplePerfectTile("C", "i", 2, 8));
 * const t = parseTrace(JSON.stringify(traceOf(sch)));
 * const again = replayTrace(t, { prng: createPrng(99) });
 * if (JSON.stringify(traceOf(again)) !== JSON.stringify(t)) throw new Error();
 * console.log(printTrace(t));
 * ```
 * @module
 */
import { ScheduleError, TraceError } from "./errors.ts";
import { described } from "./check.ts";
import { C_INT_MAX, limitMessage, LIMITS } from "./limits.ts";
import type { Prng } from "./prng.ts";
import { type Arg, type Inst, type RV, Schedule } from "./schedule.ts";
import { createWorkload, WORKLOADS } from "./workloads.ts";

/** Version of the trace format. */
export const TRACE_VERSION = 1;

/** A schedule as data. */
export interface Trace {
  /** Format version of the trace (1). */
  version: number;
  /** The workload the trace schedules: its registry name and shape. */
  workload: { name: string; shape: number[] };
  /** The instructions, in order. */
  insts: Inst[];
}

/** The trace of a schedule. */
export function traceOf(sch: Schedule): Trace {
  const x = sch as Partial<Schedule> | undefined;
  if (typeof x !== "object" || x === null || !Array.isArray(x.trace) || !x.workload) {
    throw new TypeError(
      `sch must be a schedule (new Schedule(workload, { prng })), got ${described(sch)}`,
    );
  }
  return {
    version: TRACE_VERSION,
    workload: { name: sch.workload.name, shape: [...sch.workload.shape] },
    insts: structuredClone(sch.trace),
  };
}

/** Options of {@link replayTrace}. */
export interface ReplayOptions {
  /** Source of decisions for sampling instructions that have none. */
  prng: Prng;
  /**
   * When a recorded decision no longer fits (an earlier decision changed the
   * extents it splits), sample it afresh instead of throwing. Default false.
   */
  repair?: boolean;
}

/** Replays a trace on a fresh schedule of its workload. */
export function replayTrace(trace: Trace, options: ReplayOptions): Schedule {
  const sch = new Schedule(createWorkload(trace.workload.name, trace.workload.shape), options);
  for (const inst of trace.insts) {
    if (!options.repair || !("decision" in inst)) {
      sch.apply(inst);
      continue;
    }
    try {
      sch.apply(inst);
    } catch (e) {
      if (!(e instanceof ScheduleError) || !/^Decision /.test(e.message)) throw e;
      sch.apply({ op: inst.op, args: inst.args });
    }
  }
  return sch;
}

/** A copy of the trace with instruction `index`'s decision replaced (or removed when undefined). */
export function withDecision(trace: Trace, index: number, decision: unknown): Trace {
  const out = structuredClone(trace);
  const inst = out.insts[index];
  if (!inst) throw new RangeError(`Trace has no instruction ${index}`);
  if (decision === undefined) delete inst.decision;
  else inst.decision = structuredClone(decision);
  return out;
}

/** Indices of the sampling instructions of a trace. */
export function samplingInsts(trace: Trace): number[] {
  return trace.insts.flatMap((inst, i) => SAMPLERS.has(inst.op) ? [i] : []);
}

/** Canonical JSON of a trace (stable key order), the input of {@link traceHash}. */
export function canonicalJSON(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJSON).join(",")}]`;
  if (value && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${
      keys.map((k) =>
        `${JSON.stringify(k)}:${canonicalJSON((value as Record<string, unknown>)[k])}`
      ).join(",")
    }}`;
  }
  return JSON.stringify(value);
}

/** Hex SHA-256 of the canonical JSON: the key that deduplicates candidates. */
export async function traceHash(trace: Trace): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJSON(trace));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

const SAMPLERS = new Set(["sample_perfect_tile", "sample_categorical", "sample_compute_location"]);

/** Argument names of every instruction, with their kinds. */
const SIGNATURES: Record<string, Record<string, ArgKind>> = {
  split: { stage: "name", loop: "name", factors: "factors" },
  fuse: { stage: "name", loops: "names" },
  reorder: { stage: "name", loops: "names" },
  parallel: { stage: "name", loop: "name" },
  vectorize: { stage: "name", loop: "name" },
  unroll: { stage: "name", loop: "name" },
  prefetch: { stage: "name", tensor: "name", loop: "name", offset: "int" },
  bind: { stage: "name", loop: "name", thread_axis: "name" },
  auto_unroll: { stage: "name", max_step: "int" },
  annotate: { stage: "name", key: "name", value: "int" },
  parallel_outer: { stage: "name", loops: "names", count: "int" },
  fuse_axes: { stage: "name", axes: "names" },
  cache_write: { stage: "name", scope: "name" },
  cache_read: { stage: "name", scope: "name", readers: "names" },
  transform_layout: { stage: "name", axis: "int", factor: "int" },
  deinterleave: { stage: "name", axis: "int", factor: "int" },
  compute_at: { stage: "name", consumer: "name", loop: "name" },
  compute_inline: { stage: "name" },
  compute_root: { stage: "name" },
  sample_perfect_tile: { stage: "name", loop: "name", n: "int", max_innermost: "int" },
  sample_categorical: { candidates: "numbers", probs: "numbers" },
  sample_compute_location: { stage: "name" },
};

type ArgKind = "name" | "names" | "int" | "numbers" | "factors";

const LOOP_NAME = new RegExp(`^[A-Za-z_][A-Za-z0-9_.]{0,${LIMITS.loopName.value - 1}}$`);

/**
 * Parses and checks a trace (JSON text or an already parsed value). Every
 * problem is a {@link TraceError} naming where it is; nothing is built or
 * run before a trace passes this check. The limits of `ir/limits.ts` apply:
 * instructions per trace, factors per split, split and fuse loops per trace,
 * and every integer a C `int`.
 */
export function parseTrace(input: unknown): Trace {
  let v = input;
  if (typeof input === "string") {
    try {
      v = JSON.parse(input);
    } catch (e) {
      throw new TraceError(`Trace is not valid JSON: ${(e as Error).message}`);
    }
  }
  const obj = record(v, "trace");
  onlyKeys(obj, ["version", "workload", "insts"], "trace");
  if (obj.version !== TRACE_VERSION) {
    throw new TraceError(
      `trace.version must be ${TRACE_VERSION}, got ${JSON.stringify(obj.version)}`,
    );
  }
  const w = record(obj.workload, "trace.workload");
  onlyKeys(w, ["name", "shape"], "trace.workload");
  if (typeof w.name !== "string" || !Object.hasOwn(WORKLOADS, w.name)) {
    throw new TraceError(
      `trace.workload.name ${JSON.stringify(w.name)} is not a known workload (${
        Object.keys(WORKLOADS).join(", ")
      })`,
    );
  }
  if (!Array.isArray(w.shape) || !w.shape.every((d) => Number.isInteger(d))) {
    throw new TraceError("trace.workload.shape must be an array of integers");
  }
  try {
    createWorkload(w.name, w.shape);
  } catch (e) {
    throw new TraceError(`trace.workload: ${(e as Error).message}`);
  }
  if (!Array.isArray(obj.insts)) throw new TraceError("trace.insts must be an array");
  if (obj.insts.length > LIMITS.traceInsts.value) {
    throw new TraceError(
      limitMessage(`trace.insts has ${obj.insts.length} instructions`, LIMITS.traceInsts),
    );
  }
  const insts = obj.insts.map((raw, i) => parseInst(raw, i));
  checkLoopRelations(insts);
  return { version: TRACE_VERSION, workload: { name: w.name, shape: [...w.shape] }, insts };
}

function parseInst(raw: unknown, i: number): Inst {
  const where = `trace.insts[${i}]`;
  const inst = record(raw, where);
  onlyKeys(inst, ["op", "args", "decision"], where);
  if (typeof inst.op !== "string" || !Object.hasOwn(SIGNATURES, inst.op)) {
    throw new TraceError(`${where}.op ${JSON.stringify(inst.op)} is not a known instruction`);
  }
  const sig = SIGNATURES[inst.op];
  const args = record(inst.args, `${where}.args`);
  onlyKeys(args, Object.keys(sig), `${where}.args`);
  const out: Record<string, Arg> = {};
  for (const [name, kind] of Object.entries(sig)) {
    if (!(name in args)) throw new TraceError(`${where}.args.${name} is missing`);
    out[name] = parseArg(args[name], kind, `${where}.args.${name}`, i);
  }
  if (inst.op === "sample_perfect_tile" && typeof out.n === "number") {
    if (out.n > LIMITS.splitFactors.value) {
      throw new TraceError(limitMessage(`${where}.args.n is ${out.n}`, LIMITS.splitFactors));
    }
  }
  const result: Inst = { op: inst.op, args: out };
  if ("decision" in inst) {
    if (!SAMPLERS.has(inst.op)) {
      throw new TraceError(`${where} has a decision but is not a sampler`);
    }
    const d = inst.decision;
    const ok = isCInt(d) ||
      (Array.isArray(d) && d.length <= LIMITS.splitFactors.value && d.every(isCInt));
    if (!ok) {
      throw new TraceError(
        `${where}.decision must be an integer or a list of at most ${LIMITS.splitFactors.value} integers, each at most ${C_INT_MAX} in size`,
      );
    }
    result.decision = structuredClone(d);
  }
  return result;
}

function parseArg(v: unknown, kind: ArgKind, where: string, at: number): Arg {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const ref = record(v, where);
    onlyKeys(ref, ["$ref"], where);
    if (!Number.isInteger(ref.$ref) || (ref.$ref as number) < 0 || (ref.$ref as number) >= at) {
      throw new TraceError(`${where}.$ref must point to an earlier instruction`);
    }
    return { $ref: ref.$ref as number };
  }
  const bad = (what: string) =>
    new TraceError(`${where} must be ${what}, got ${JSON.stringify(v)}`);
  switch (kind) {
    case "name":
      if (typeof v !== "string" || !LOOP_NAME.test(v)) throw bad("a stage or loop name");
      return v;
    case "names":
      if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && LOOP_NAME.test(x))) {
        throw bad("a list of loop names");
      }
      return [...v];
    case "int":
      if (!isCInt(v)) throw bad(`an integer of at most ${C_INT_MAX} in size (a C int)`);
      return v as number;
    case "numbers":
      if (
        !Array.isArray(v) ||
        !v.every((x) => typeof x === "number" && Number.isFinite(x) && Math.abs(x) <= C_INT_MAX)
      ) {
        throw bad(`a list of numbers, each at most ${C_INT_MAX} in size`);
      }
      return [...v];
    case "factors":
      if (!Array.isArray(v)) throw bad("a list of integers (or null)");
      if (v.length > LIMITS.splitFactors.value) {
        throw new TraceError(limitMessage(`${where} has ${v.length} factors`, LIMITS.splitFactors));
      }
      return v.map((x, j) => {
        if (x === null) return null;
        if (Number.isInteger(x)) {
          if (x < 1 || x > C_INT_MAX) {
            throw new TraceError(
              `${where}[${j}] must be a factor from 1 to ${C_INT_MAX} (a C int), got ${
                JSON.stringify(x)
              }`,
            );
          }
          return x as number;
        }
        if (x && typeof x === "object") return parseArg(x, "int", `${where}[${j}]`, at) as RV;
        throw bad("a list of integers (or null)");
      });
  }
}

function isCInt(x: unknown): x is number {
  return Number.isInteger(x) && Math.abs(x as number) <= C_INT_MAX;
}

/**
 * The loops a trace's splits and fuses make, summed, are at most
 * {@link LIMITS}.traceLoopRelations: lowering builds one index expression per
 * loop from them, nested as deep as they chain.
 */
function checkLoopRelations(insts: Inst[]): void {
  let made = 0;
  insts.forEach((inst, i) => {
    if (inst.op === "split") {
      const f = inst.args.factors;
      if (Array.isArray(f)) made += f.length - 1;
      else if (f && typeof f === "object") {
        const n = insts[(f as RV).$ref]?.args.n;
        made += typeof n === "number" ? n - 1 : 0;
      }
    } else if (inst.op === "fuse" && Array.isArray(inst.args.loops)) {
      made += inst.args.loops.length - 1;
    }
    if (made > LIMITS.traceLoopRelations.value) {
      throw new TraceError(
        limitMessage(
          `trace.insts[0..${i}] split and fuse into ${made} loops`,
          LIMITS.traceLoopRelations,
        ),
      );
    }
  });
}

function record(v: unknown, where: string): Record<string, unknown> {
  if (!v || typeof v !== "object" || Array.isArray(v)) {
    throw new TraceError(`${where} must be an object`);
  }
  return v as Record<string, unknown>;
}

function onlyKeys(obj: Record<string, unknown>, keys: string[], where: string): void {
  for (const k of Object.keys(obj)) {
    if (!keys.includes(k)) {
      throw new TraceError(`${where} has an unknown field ${JSON.stringify(k)}`);
    }
  }
}

/**
 * Prints a trace as readable schedule code in the style of MetaSchedule's
 * Python traces; sampled values are named `v<index>` and decisions shown.
 */
export function printTrace(trace: Trace): string {
  if (typeof trace !== "object" || trace === null || !Array.isArray(trace.insts)) {
    throw new TypeError(`trace must be a trace (traceOf, parseTrace), got ${described(trace)}`);
  }
  const lines = [
    `# ${trace.workload.name}(${trace.workload.shape.join(", ")})`,
    `sch = Schedule(${trace.workload.name}(${trace.workload.shape.join(", ")}))`,
  ];
  trace.insts.forEach((inst, i) => {
    const args = Object.entries(inst.args).map(([k, v], j) => {
      const ref = (x: unknown) =>
        typeof x === "object" && x !== null && !Array.isArray(x)
          ? `v${(x as RV).$ref}`
          : JSON.stringify(x);
      const text = Array.isArray(v) && v.some((x) => typeof x === "object" && x !== null)
        ? `[${(v as unknown[]).map(ref).join(",")}]`
        : ref(v);
      return j < positional(inst.op) ? text : `${k}=${text}`;
    });
    const call = `sch.${inst.op}(${args.join(", ")})`;
    const decision = "decision" in inst ? `  # decision=${JSON.stringify(inst.decision)}` : "";
    lines.push(SAMPLERS.has(inst.op) ? `v${i} = ${call}${decision}` : call);
  });
  return lines.join("\n");
}

function positional(op: string): number {
  return op.startsWith("sample_categorical") ? 0 : op === "compute_at" || op === "bind" ? 3 : 2;
}
