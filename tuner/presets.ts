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
 * Reads the preset of a `STRATEGY@PRESET` name and checks it against the
 * strategy table.
 *
 * @throws {RangeError} naming the preset when it is missing, malformed, of another strategy, or sets an undeclared hyperparameter
 */
export async function readPreset(name: string, dir: string = PRESET_DIR): Promise<StrategyPreset> {
  const { strategy, preset } = parseStrategyName(name);
  strategyEntry(strategy);
  if (!preset) throw new RangeError(`"${name}" names no preset (STRATEGY@PRESET)`);
  let p: StrategyPreset;
  if (Object.hasOwn(BUILTIN_PRESETS, name)) p = BUILTIN_PRESETS[name];
  else {
    const path = preset.endsWith(".json") ? preset : join(dir, `${preset}.json`);
    if (!existsSync(path)) {
      throw new RangeError(`Preset "${preset}" of ${name}: no file ${resolve(path)}`);
    }
    let data: unknown;
    try {
      data = JSON.parse(await Deno.readTextFile(path));
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
    p = { name: String(d.name ?? preset), strategy, hyper: d.hyper, note: d.note };
  }
  checkHyper(strategy, p.hyper);
  return p;
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
