/**
 * Named strategy presets: settings of a strategy's declared hyperparameters
 * (tuner/strategies.ts `hyper`), as `tune-strategy` saves them, named
 * `STRATEGY@PRESET` wherever a strategy is named (`compare --strategies
 * sa@mine`). A preset is a JSON file `{name, strategy, hyper, ...}`; `PRESET`
 * is a path to one (ending in `.json`), a name of a file in
 * {@link PRESET_DIR} (`runs/presets/<name>.json`), or a built-in preset
 * ({@link BUILTIN_PRESETS}: `random@kt` is Kernel Tuner's random_sample,
 * which stops after a tenth of the space).
 *
 * @example
 * ```ts
 * import { parseStrategyName, readPreset } from "./presets.ts";
 * const p = await readPreset("random@kt");
 * console.log(p.strategy, p.hyper); // random { fraction: 0.1 }
 * console.log(parseStrategyName("sa")); // { strategy: "sa" }
 * ```
 * @module
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { checkHyper, strategyEntry } from "./strategies.ts";

/** A saved preset. */
export interface StrategyPreset {
  /** The preset's name. */
  name: string;
  /** The strategy of the table it sets. */
  strategy: string;
  /** Its hyperparameter settings (the rest keep their defaults). */
  hyper: Record<string, number | string>;
  /** How it was made and judged (free-form, e.g. tune-strategy's leave-one-space-out score). */
  note?: Record<string, unknown>;
}

/** Where preset names are looked up: `runs/presets/` under the working directory. */
export const PRESET_DIR = "runs/presets";

/** Presets that need no file. */
export const BUILTIN_PRESETS: Readonly<Record<string, StrategyPreset>> = Object.freeze({
  "random@kt": {
    name: "kt",
    strategy: "random",
    hyper: { fraction: 0.1 },
    note: { about: "Kernel Tuner's random_sample: a tenth of the space (its default fraction)" },
  },
});

/** A strategy name split into its table name and preset, e.g. `sa@mine`. */
export function parseStrategyName(name: string): { strategy: string; preset?: string } {
  const at = name.indexOf("@");
  return at < 0 ? { strategy: name } : { strategy: name.slice(0, at), preset: name.slice(at + 1) };
}

/**
 * A strategy name resolved once: the table's name, the settings it runs
 * with, and the label its runs are recorded under.
 */
export interface ResolvedStrategy {
  /** The strategy table's name (`sa` of `sa@mine`). */
  strategy: string;
  /** Settings of its declared hyperparameters: the preset's, or `{}` for a plain name. */
  hyper: Record<string, number | string>;
  /** The name as given (`sa@mine`), which runs, tables and plots carry. */
  label: string;
  /** The preset read, for a `STRATEGY@PRESET` name. */
  preset?: StrategyPreset;
}

/**
 * Resolves a strategy name, plain (`sa`) or with a preset (`sa@mine`,
 * `sa@path.json`, `random@kt`), against the strategy table: the one resolver
 * of every command and library call that takes a strategy name. Given
 * `hyper` (a run's recorded settings, when it is resumed or reproduced), the
 * preset is not read again: those settings are checked and kept.
 *
 * @example
 * ```ts
 * import { resolveStrategy } from "./presets.ts";
 * const r = resolveStrategy("random@kt");
 * console.log(r.strategy, r.hyper, r.label); // random { fraction: 0.1 } random@kt
 * console.log(resolveStrategy("sa").hyper); // {}
 * ```
 * @throws {RangeError} naming the strategy or the preset when it is unknown, missing, malformed, of another strategy, or sets an undeclared hyperparameter or value
 */
export function resolveStrategy(
  name: string,
  o: { dir?: string; hyper?: Readonly<Record<string, number | string>> } = {},
): ResolvedStrategy {
  if (typeof name !== "string" || name === "") {
    throw new RangeError(`A strategy name is a string (NAME or NAME@PRESET), got ${String(name)}`);
  }
  const { strategy, preset } = parseStrategyName(name);
  strategyEntry(strategy);
  if (preset === "") throw new RangeError(`"${name}" names no preset after @ (STRATEGY@PRESET)`);
  if (o.hyper !== undefined) {
    checkHyper(strategy, o.hyper);
    return { strategy, hyper: { ...o.hyper }, label: name };
  }
  if (preset === undefined) return { strategy, hyper: {}, label: name };
  const p = presetOf(name, strategy, preset, o.dir ?? PRESET_DIR);
  checkHyper(strategy, p.hyper);
  return { strategy, hyper: { ...p.hyper }, label: name, preset: p };
}

function presetOf(name: string, strategy: string, preset: string, dir: string): StrategyPreset {
  if (Object.hasOwn(BUILTIN_PRESETS, name)) return BUILTIN_PRESETS[name];
  const path = preset.endsWith(".json") ? preset : join(dir, `${preset}.json`);
  if (!existsSync(path)) {
    throw new RangeError(`Preset "${preset}" of ${name}: no file ${resolve(path)}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(Deno.readTextFileSync(path));
  } catch (e) {
    throw new RangeError(`Preset file ${path}: ${(e as Error).message}`);
  }
  const d = data as Partial<StrategyPreset>;
  if (typeof d !== "object" || d === null || typeof d.hyper !== "object" || d.hyper === null) {
    throw new RangeError(`Preset file ${path}: expected {name, strategy, hyper}`);
  }
  if (d.strategy !== strategy) {
    throw new RangeError(
      `Preset file ${path} sets strategy ${JSON.stringify(d.strategy)}, not ${strategy}`,
    );
  }
  return { name: String(d.name ?? preset), strategy, hyper: d.hyper, note: d.note };
}

/**
 * Reads the preset of a `STRATEGY@PRESET` name and checks it against the
 * strategy table ({@link resolveStrategy}'s preset).
 *
 * @throws {RangeError} naming the preset when it is missing, malformed, of another strategy, or sets an undeclared hyperparameter
 */
export function readPreset(name: string, dir: string = PRESET_DIR): Promise<StrategyPreset> {
  try {
    const { preset } = parseStrategyName(name);
    if (preset === undefined) throw new RangeError(`"${name}" names no preset (STRATEGY@PRESET)`);
    return Promise.resolve(resolveStrategy(name, { dir }).preset!);
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * Writes a preset to `path` (default `runs/presets/<name>.json`), creating its folder.
 *
 * @returns the path written
 */
export async function writePreset(p: StrategyPreset, path?: string): Promise<string> {
  checkHyper(p.strategy, p.hyper);
  const out = path ?? join(PRESET_DIR, `${p.name}.json`);
  await mkdir(dirname(resolve(out)), { recursive: true });
  await writeFile(out, JSON.stringify(p, null, 2) + "\n");
  return out;
}
