/**
 * Replay throughput: random sampling plus evaluation over each shared Kernel
 * Tuner cache, in proposals per second (target: at least 100,000, issue 8). Two loops
 * per cache: propose a random point and evaluate it (`absent: "invalid"`),
 * and the same skipping points the restricted space rejects
 * (`absent: "restricted"`, `isValid` checked before evaluating).
 *
 * ```sh
 * deno run --allow-read bench/replay_throughput.ts [seconds per loop, default 0.3] [cache names or paths…]
 * ```
 * @module
 */
import { cacheName } from "../datasets/cache_names.ts";
import { kernelTunerCaches } from "../datasets/kerneltuner.ts";
import { createPrng } from "../ir/prng.ts";
import { type ReplaySpace, replaySpaceFromFile } from "../search/replay.ts";
import { positionalArgs, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints. */
const USAGE = `usage:
  deno run --allow-read bench/replay_throughput.ts [seconds per loop, default 0.3] [cache names or paths…]`;

/** Proposals+evaluations per second of random sampling over a replay space. */
export function randomThroughput(
  r: ReplaySpace,
  seconds: number,
  checkValid: boolean,
): { perSecond: number; proposals: number; best: number } {
  const prng = createPrng(1);
  let proposals = 0, best = Infinity;
  const start = performance.now();
  const end = start + seconds * 1000;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 1000; i++) {
      const c = r.candidateOf(r.space.random(prng));
      proposals++;
      if (checkValid && !r.space.isValid(c.knobs!)) continue;
      const res = r.evaluate(c.knobs!);
      if (res.seconds !== undefined && res.seconds < best) best = res.seconds;
    }
    now = performance.now();
  }
  return { perSecond: proposals / ((now - start) / 1000), proposals, best };
}

if (import.meta.main) {
  await runCommand("replay_throughput", async (argv) => {
    const args = positionalArgs(argv, USAGE, 1000);
    const [secArg, ...names] = args;
    const seconds = secArg ? Number(secArg) : 0.3;
    if (!(seconds > 0)) throw new UsageError(`seconds must be positive, got "${secArg}"`);
    const files = names.length > 0 ? names : kernelTunerCaches();
    const target = 100_000;
    let worst = Infinity;
    console.log("cache                  mode        proposals/s   best/optimum");
    for (const f of files) {
      const label = cacheName(f).padEnd(22);
      for (const absent of ["invalid", "restricted"] as const) {
        const r = await replaySpaceFromFile(f, { absent });
        const t = randomThroughput(r, seconds, absent === "restricted");
        worst = Math.min(worst, t.perSecond);
        console.log(
          `${label} ${absent.padEnd(11)} ${
            Math.round(t.perSecond).toLocaleString("en").padStart(11)
          }   ${(r.optimum / t.best).toFixed(3)}`,
        );
      }
    }
    console.log(
      `slowest: ${Math.round(worst).toLocaleString("en")} proposals/s (target ${
        target.toLocaleString("en")
      }): ${worst >= target ? "ok" : "TOO SLOW"}`,
    );
  });
}
