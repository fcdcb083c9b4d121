/**
 * First against confirmed figures of `tune`'s finalists: tunes one matmul
 * (`runSession`, as `deno task tune` does) with `--trials` random trials, then
 * its `--finalists` fastest distinct candidates are timed again in
 * `--rounds` interleaved rounds by the run's own measurer (tuner/confirm.ts).
 * Prints per finalist its figure as the search recorded it, each round's
 * figure and the median over the rounds (GFLOP/s), the load average before
 * and after, then one line of JSON.
 *
 * ```sh
 * deno run -A bench/finalists_tune.ts [--shape 256,256,256] [--trials 32] [--finalists 3] \
 *   [--rounds 3] [--seed 1] [--db PATH]
 * ```
 * @module
 */
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { readConfirmation } from "../tuner/confirm.ts";
import { runSession } from "../tuner/session.ts";
import { parseFlags, runCommand, shapeFlag } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/finalists_tune.ts [--shape 256,256,256] [--trials 32] [--finalists 3] \\
    [--rounds 3] [--seed 1] [--db PATH]`;

const load = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");

if (import.meta.main) {
  await runCommand("finalists_tune", async (argv) => {
    const v = parseFlags(argv, {
      shape: { type: "string", default: "256,256,256" },
      trials: { type: "string", default: "32" },
      finalists: { type: "string", default: "3" },
      rounds: { type: "string", default: "3" },
      seed: { type: "string", default: "1" },
      db: { type: "string" },
    }, USAGE);
    const shape = shapeFlag("matmul", v.shape!).shape;
    const db = v.db ?? join(await Deno.makeTempDir({ prefix: "tb-finalists-" }), "runs.db");
    const loadBefore = load();
    const t0 = performance.now();
    const s = await runSession({
      db,
      workload: { name: "matmul", shape },
      trials: Number(v.trials),
      seed: Number(v.seed),
      finalists: Number(v.finalists),
      finalistRounds: Number(v.rounds),
    });
    const seconds = (performance.now() - t0) / 1000;
    const records = RecordsDB.open(db, { mode: "read" });
    const c = await readConfirmation(records, s.run_id);
    records.close();
    const flops = 2 * shape[0] * shape[1] * shape[2];
    const g = (sec: number | null | undefined) => sec ? flops / sec / 1e9 : null;
    const f1 = (x: number | null) => x === null ? "-" : x.toFixed(1);
    console.log(`matmul ${shape.join("x")}: ${s.trials} trials, load ${loadBefore} -> ${load()}`);
    console.log("trial | first GFLOP/s | rounds GFLOP/s | confirmed | confirmed / first");
    const rows = (c?.finalists ?? []).map((f) => ({
      trial: f.trial === null ? null : f.trial + 1,
      first: g(f.firstSeconds),
      rounds: f.rounds.map(g),
      confirmed: g(f.seconds),
    }));
    for (const r of rows) {
      console.log(
        `${r.trial} | ${f1(r.first)} | ${r.rounds.map(f1).join(", ")} | ${f1(r.confirmed)} | ${
          r.first && r.confirmed ? (r.confirmed / r.first).toFixed(2) : "-"
        }`,
      );
    }
    console.log(JSON.stringify({
      shape,
      trials: s.trials,
      best_gflops: s.best_gflops,
      first_gflops: s.first_gflops,
      confirmed_gflops: s.confirmed_gflops,
      finalists: rows,
      seconds: Math.round(seconds),
      loadBefore,
      loadAfter: load(),
      db,
    }));
  });
}
