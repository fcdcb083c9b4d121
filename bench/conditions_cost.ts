/**
 * What reading the machine's conditions costs per result (measure/conditions.ts):
 * `withConditions` reads /proc/loadavg, /proc/stat and every CPU's
 * scaling_cur_freq (or /proc/cpuinfo) once per result. Prints the median
 * microseconds of a read over `--rounds` rounds of `--reads` reads, the
 * conditions read last, and the load beside them.
 *
 * ```sh
 * deno run --allow-read bench/conditions_cost.ts --rounds 5 --reads 200
 * ```
 * @module
 */
import { conditionsReader } from "../measure/conditions.ts";
import { median } from "../ir/stats.ts";
import { parseFlags, runCommand } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run --allow-read bench/conditions_cost.ts --rounds 5 --reads 200`;

/** Times the reads and prints the JSON line (synchronous: the reads are). */
function conditionsCost(argv: string[]): void {
  const values = parseFlags(argv, {
    rounds: { type: "string", default: "5" },
    reads: { type: "string", default: "200" },
  }, USAGE);
  const rounds = Number(values.rounds), reads = Number(values.reads);
  const reader = conditionsReader();
  const start = reader.snapshot();
  const perRound: number[] = [];
  let last = reader.read(start);
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < reads; i++) last = reader.read(start);
    perRound.push((performance.now() - t0) * 1e3 / reads);
  }
  const load = (() => {
    try {
      return Deno.readTextFileSync("/proc/loadavg").trim();
    } catch {
      return "unreadable";
    }
  })();
  console.log(
    JSON.stringify({
      microsecondsPerRead: Number(median(perRound).toFixed(1)),
      perRound: perRound.map((x) => Number(x.toFixed(1))),
      conditions: last,
      cpus: navigator.hardwareConcurrency,
      loadavg: load,
    }),
  );
}

if (import.meta.main) {
  await runCommand("conditions_cost", (argv) => Promise.resolve(conditionsCost(argv)));
}
