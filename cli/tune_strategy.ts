/**
 * `deno task tune-strategy`: tunes a strategy's own hyperparameters (those the
 * strategy table declares) on replayed spaces, scored by the methodology score
 * in tuning time, leave-one-space-out, and saves the winner as a preset that
 * `compare --strategies NAME@PRESET` accepts (see tuner/hyper_tune.ts and
 * tuner/presets.ts). With `--db F` every run is recorded there and `--resume`
 * reads the finished ones back (as `compare --db --resume` does). Ends with
 * one line of JSON on stdout.
 * @module
 */
import { KERNELTUNER_CACHE_NAMES } from "../datasets/kerneltuner.ts";
import { tuneStrategy } from "../tuner/hyper_tune.ts";
import { KNOB_STRATEGY_NAMES, STRATEGIES, TRANSFER_STRATEGIES } from "../tuner/strategies.ts";
import { parseStrategyName, PRESET_DIR, resolveStrategy, writePreset } from "../tuner/presets.ts";
import { DatabaseError, RecordsDB } from "../datasets/db.ts";
import { type RecordStore, sqliteRecordStore } from "../datasets/record_store.ts";
import { parseFlags, runJsonCommand, UsageError } from "./args.ts";

const TUNABLE = KNOB_STRATEGY_NAMES.filter((n) => (STRATEGIES[n].hyper?.length ?? 0) > 0);

/** Usage text of `tune-strategy`. */
export const TUNE_STRATEGY_USAGE = `usage: deno task tune-strategy --strategy NAME [options]

  --strategy NAME      the strategy whose settings are tuned: ${TUNABLE.join(", ")}
  --spaces A,B,...     replayed spaces (cache names or paths; default the ${KERNELTUNER_CACHE_NAMES.length} of data/kerneltuner)
  --meta NAME          the meta-strategy searching the settings (default random): any knob
                       strategy of the table but the transfer ones, or NAME@PRESET
  --meta-budget N      settings tried per fold (default 20)
  --seeds N            runs per setting and space, seeds 0..N-1 (default 10; recorded in
                       the preset's note and, with --db, as each run's seed)
  --meta-seed N        seed of the meta-strategy (default 0)
  --strategy-time      count the strategy's own time on the clock (default: recorded times only)
  --no-folds           skip leave-one-space-out (no held-out judgement)
  --db FILE            record every run (setting x space x seed) in this SQLite records
                       database (default: in memory, lost at exit)
  --resume             with --db: read back the runs finished there instead of running them
                       again (a killed tune-strategy, rerun with --resume, ends with the
                       same preset)
  --name NAME          the preset's name (default NAME-tuned): compare --strategies NAME@NAME-tuned
  --out FILE           where the preset goes (default ${PRESET_DIR}/<name>.json)
  --quiet              no progress lines
  --help               this text

Scores are the methodology score of Willemsen et al., FGCS 2024 (search/methodology.ts).`;

function count(text: string, flag: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) {
    throw new UsageError(`${flag} must be a positive integer, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** Runs the command; returns the JSON summary. */
export async function tuneStrategyCommand(argv: string[]): Promise<unknown> {
  const v = parseFlags(argv, {
    strategy: { type: "string" },
    spaces: { type: "string" },
    meta: { type: "string", default: "random" },
    "meta-budget": { type: "string", default: "20" },
    seeds: { type: "string", default: "10" },
    "meta-seed": { type: "string", default: "0" },
    "strategy-time": { type: "boolean", default: false },
    "no-folds": { type: "boolean", default: false },
    db: { type: "string" },
    resume: { type: "boolean", default: false },
    name: { type: "string" },
    out: { type: "string" },
    quiet: { type: "boolean", default: false },
  }, TUNE_STRATEGY_USAGE);
  if (!v.strategy) throw new UsageError(`Missing --strategy (${TUNABLE.join(", ")})`);
  if (parseStrategyName(v.strategy).preset !== undefined) {
    throw new UsageError(
      `--strategy ${v.strategy}: tune-strategy searches every setting of ${
        parseStrategyName(v.strategy).strategy
      }; give the plain name (a preset is what it writes)`,
    );
  }
  if (!TUNABLE.includes(v.strategy)) {
    throw new UsageError(
      `--strategy ${v.strategy} declares no hyperparameters; tunable: ${TUNABLE.join(", ")}`,
    );
  }
  const metas = KNOB_STRATEGY_NAMES.filter((n) => !TRANSFER_STRATEGIES.includes(n));
  const meta = parseStrategyName(v.meta!).strategy;
  if (!metas.includes(meta)) {
    throw new UsageError(
      `--meta ${v.meta}: ${
        TRANSFER_STRATEGIES.includes(meta)
          ? "needs records of another device to pretrain on"
          : "not a knob strategy"
      }; meta-strategies: ${metas.join(", ")}`,
    );
  }
  try {
    resolveStrategy(v.meta!);
  } catch (e) {
    throw new UsageError(`--meta ${v.meta}: ${(e as Error).message}`);
  }
  if (v.resume && !v.db) {
    throw new UsageError("--resume needs --db (the records database of the runs)");
  }
  if (v.db !== undefined && v.db.trim() === "") {
    throw new UsageError("--db must name a records database file");
  }
  const spaces = (v.spaces ?? KERNELTUNER_CACHE_NAMES.join(",")).split(",").map((s) => s.trim())
    .filter(Boolean);
  const name = v.name ?? `${v.strategy}-tuned`;
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new UsageError(`--name ${JSON.stringify(name)}: use letters, digits, _ . -`);
  }
  const metaSeed = Number(v["meta-seed"]);
  if (!/^\d+$/.test(v["meta-seed"]!.trim())) {
    throw new UsageError(
      `--meta-seed must be an integer >= 0, got ${JSON.stringify(v["meta-seed"])}`,
    );
  }
  let r;
  let store: RecordStore | undefined;
  try {
    store = v.db === undefined
      ? undefined
      : sqliteRecordStore(RecordsDB.open(v.db, { mode: v.resume ? "write" : "create" }));
    r = await tuneStrategy({
      db: store,
      resume: v.resume,
      strategy: v.strategy,
      spaces,
      meta: v.meta,
      metaBudget: count(v["meta-budget"]!, "--meta-budget"),
      seeds: count(v.seeds!, "--seeds"),
      metaSeed,
      strategyTime: v["strategy-time"],
      folds: !v["no-folds"],
      onProgress: v.quiet ? undefined : (line) => console.error(line),
    });
  } catch (e) {
    if (
      e instanceof UsageError || e instanceof RangeError || e instanceof DatabaseError ||
      (e as Error).name === "KernelTunerError"
    ) {
      throw new UsageError((e as Error).message);
    }
    throw e;
  } finally {
    await store?.close();
  }
  const f3 = (x: number | undefined) => x === undefined ? "n/a" : x.toFixed(3);
  if (r.folds.length > 0) {
    console.error(
      [
        "",
        "Leave-one-space-out (methodology score on the space left out):",
        "",
        "| held out | tuned settings | train | held out | defaults held out |",
        "| --- | --- | --- | --- | --- |",
        ...r.folds.map((f) =>
          `| ${f.heldOut} | ${JSON.stringify(f.hyper)} | ${f3(f.trainScore)} | ${
            f3(f.heldOutScore)
          } | ${f3(f.defaultHeldOutScore)} |`
        ),
        "",
        `judgement: tuned ${f3(r.leaveOneOutScore)} vs defaults ${
          f3(r.defaultLeaveOneOutScore)
        } on held-out spaces`,
      ].join("\n"),
    );
  }
  const path = await writePreset({
    name,
    strategy: r.strategy,
    hyper: r.hyper,
    note: {
      spaces,
      meta: r.meta,
      seeds: r.seeds,
      metaBudget: Number(v["meta-budget"]),
      leaveOneOutScore: r.leaveOneOutScore ?? null,
      defaultLeaveOneOutScore: r.defaultLeaveOneOutScore ?? null,
      trainScore: r.trainScore,
      defaultScore: r.defaultScore,
      score: "methodology score (Willemsen et al., FGCS 2024), tuning time",
    },
  }, v.out);
  console.error(
    `\npreset ${r.strategy}@${v.out ?? name}: ${JSON.stringify(r.hyper)} (train ${
      f3(r.trainScore)
    }, defaults ${f3(r.defaultScore)}), written to ${path}; ${r.pairs} setting x space pairs in ${
      r.seconds.toFixed(0)
    } s${
      v.db
        ? `; ${r.resumed} runs read back from ${v.db} (the same command with --resume continues it)`
        : ""
    }`,
  );
  return { preset: path, ...r };
}

if (import.meta.main) await runJsonCommand("tune-strategy", tuneStrategyCommand);
