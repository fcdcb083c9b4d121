/**
 * Kernel Tuner "T1" search-space definitions (`spaces/*.json`): tuning
 * parameters, whose `Values` may be a Python expression, and restrictions,
 * compiled by `./restrictions.ts`.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { KERNELTUNER_DIR } from "./kerneltuner_cache.ts";
 * import { readSpaceFile } from "./kerneltuner_space.ts";
 * const space = await readSpaceFile(join(KERNELTUNER_DIR, "spaces", "gemm_milo.json"));
 * console.log(space.name, space.cartesianSize);
 * ```
 * @module
 */

import { basename } from "node:path";
import {
  describe,
  isRecord,
  isScalar,
  KernelTunerError,
  type ParamValue,
  readKernelTunerJSON,
} from "./kerneltuner_json.ts";
import { type CompiledExpression, compileExpression, isTruthy } from "./restrictions.ts";

/** One tuning parameter of a space file. */
export interface SpaceParameter {
  /** `Name`. */
  name: string;
  /** `Type` (e.g. `"int"`). */
  type: string;
  /** `Values`, evaluated (a list literal, a range, a comprehension…). */
  values: ParamValue[];
  /** `Default`, as written. */
  default?: unknown;
}

/** One restriction of a space file (`ConfigurationSpace.Conditions[i]`). */
export interface SpaceCondition {
  /** `Expression`, e.g. `"MWG % (MDIMC * VWM) == 0"`. */
  expression: string;
  /** `Parameters` it names, as written. */
  parameters: string[];
}

/** A Kernel Tuner T1 search-space definition. */
export interface KernelTunerSpace {
  /** Path the space was read from. */
  file: string;
  /** `General.BenchmarkName`. */
  name: string;
  /** `KernelSpecification.KernelName`, when present. */
  kernelName?: string;
  /** `ConfigurationSpace.TuningParameters`, values evaluated. */
  parameters: SpaceParameter[];
  /** `ConfigurationSpace.Conditions`. */
  conditions: SpaceCondition[];
  /** The conditions' expressions. */
  restrictions: string[];
  /** Size of the Cartesian product of the parameter values. */
  cartesianSize: number;
  /** True when values (by parameter name) satisfy every restriction. */
  isValid(values: Record<string, unknown>): boolean;
}

/**
 * Reads a Kernel Tuner T1 search-space file (`spaces/*.json`): its tuning
 * parameters (with `Values` evaluated) and its restrictions (compiled).
 *
 * @param path path of the file
 * @throws {KernelTunerError} naming the file and the field
 */
export async function readSpaceFile(path: string): Promise<KernelTunerSpace> {
  const data = await readKernelTunerJSON(path);
  const fail = (field: string | undefined, detail: string, cause?: unknown): never => {
    throw new KernelTunerError(detail, { file: path, field, cause });
  };
  if (!isRecord(data)) return fail(undefined, `expected a JSON object, got ${describe(data)}`);
  const general = isRecord(data.General) ? data.General : {};
  const cs = data.ConfigurationSpace;
  if (!isRecord(cs)) {
    return fail("ConfigurationSpace", `expected an object, got ${describe(cs)}`);
  }
  const tps = cs.TuningParameters;
  if (!Array.isArray(tps) || tps.length === 0) {
    return fail(
      "ConfigurationSpace.TuningParameters",
      `expected a non-empty list, got ${describe(tps)}`,
    );
  }
  const parameters: SpaceParameter[] = tps.map((p, i) => {
    const f = `ConfigurationSpace.TuningParameters[${i}]`;
    if (!isRecord(p)) return fail(f, `expected an object, got ${describe(p)}`);
    if (typeof p.Name !== "string" || p.Name === "") {
      return fail(`${f}.Name`, `expected a name, got ${describe(p.Name)}`);
    }
    const type = typeof p.Type === "string" ? p.Type : "";
    let values: unknown = p.Values;
    if (typeof values === "string") {
      try {
        values = compileExpression(values).evaluate({});
      } catch (e) {
        return fail(`${f}.Values`, (e as Error).message, e);
      }
    }
    if (!Array.isArray(values) || values.length === 0) {
      return fail(`${f}.Values`, `expected a non-empty list, got ${describe(values)}`);
    }
    values.forEach((v, j) => {
      if (!isScalar(v)) fail(`${f}.Values`, `value ${j} is ${describe(v)}, not a scalar`);
      if (type === "int" && !Number.isInteger(v)) {
        fail(`${f}.Values`, `value ${j} (${JSON.stringify(v)}) is not an int`);
      }
    });
    const out: SpaceParameter = { name: p.Name, type, values: values as ParamValue[] };
    if ("Default" in p) out.default = p.Default;
    return out;
  });
  const names = parameters.map((p) => p.name);
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i) {
      fail(`ConfigurationSpace.TuningParameters[${i}].Name`, `"${n}" is defined twice`);
    }
  });
  const conds = cs.Conditions ?? [];
  if (!Array.isArray(conds)) {
    return fail("ConfigurationSpace.Conditions", `expected a list, got ${describe(conds)}`);
  }
  const compiled: CompiledExpression[] = [];
  const conditions: SpaceCondition[] = conds.map((c, i) => {
    const f = `ConfigurationSpace.Conditions[${i}]`;
    if (!isRecord(c)) return fail(f, `expected an object, got ${describe(c)}`);
    if (typeof c.Expression !== "string") {
      return fail(`${f}.Expression`, `expected a string, got ${describe(c.Expression)}`);
    }
    try {
      compiled.push(compileExpression(c.Expression, names));
    } catch (e) {
      return fail(`${f}.Expression`, (e as Error).message, e);
    }
    const ps = c.Parameters ?? [];
    if (!Array.isArray(ps) || !ps.every((x) => typeof x === "string" && names.includes(x))) {
      return fail(`${f}.Parameters`, "expected a list of tuning parameter names");
    }
    return { expression: c.Expression, parameters: ps as string[] };
  });
  const ks = isRecord(data.KernelSpecification) ? data.KernelSpecification : {};
  return {
    file: path,
    name: typeof general.BenchmarkName === "string"
      ? general.BenchmarkName
      : basename(path).replace(/\.json$/, ""),
    kernelName: typeof ks.KernelName === "string" ? ks.KernelName : undefined,
    parameters,
    conditions,
    restrictions: conditions.map((c) => c.expression),
    cartesianSize: parameters.reduce((n, p) => n * p.values.length, 1),
    isValid: (values) => compiled.every((c) => isTruthy(c.evaluate(values))),
  };
}
