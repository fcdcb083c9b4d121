/**
 * Do unity builds change the code? Builds the first `--kernels` candidates of
 * random search on the sketch space (`random`) and on the workload's default
 * knob template (`template`, the space `xgb` searches) once one kernel per
 * file and once all in one file (measure/builder.ts `batch`), disassembles
 * both (objdump) and counts the kernels whose functions (the kernel and its
 * OpenMP outlined parts) have the same instructions, addresses aside.
 *
 * ```sh
 * deno run -A bench/unity_code.ts [--shape 256,256,256] [--kernels 8] [--seed 1]
 * ```
 *
 * Results: bench/results/tuning_throughput.md.
 * @module
 */
import { createBuilder } from "../measure/builder.ts";
import { kernelSource } from "../measure/kernel_source.ts";
import { randomSearch } from "../search/random.ts";
import { defaultSpace } from "../search/sketch.ts";
import type { Strategy } from "../search/strategy.ts";
import { defaultTemplate, templateSpace } from "../search/templates/registry.ts";
import { createStrategy } from "../tuner/strategies.ts";
import { parseFlags, runCommand, shapeFlag } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/unity_code.ts [--shape 256,256,256] [--kernels 8] [--seed 1]`;

/**
 * The instructions of the functions of kernel `symbol` in objdump's output
 * (`symbol` and `symbol.*`, renamed `K`), without addresses, jump targets and
 * comments, one text per function, sorted.
 *
 * @example
 * ```ts
 * import { kernelInstructions } from "./unity_code.ts";
 * const text = "<tb_kernel_ab>:\n\tlea    0x10(%rip),%rdi        # 2000 <x>\n\tret\n";
 * const [f] = kernelInstructions(text, "tb_kernel_ab");
 * if (f !== "K\n\tlea    X(%rip),%rdi\n\tret") throw new Error(f);
 * ```
 */
export function kernelInstructions(objdump: string, symbol: string): string[] {
  const fns: string[][] = [];
  let cur: string[] | undefined;
  for (const line of objdump.split("\n")) {
    const m = line.match(/^<(.+)>:$/);
    if (m) {
      const own = m[1] === symbol || m[1].startsWith(`${symbol}.`);
      cur = own ? [m[1].replace(symbol, "K")] : undefined;
      if (cur) fns.push(cur);
    } else if (cur && line.startsWith("\t")) {
      cur.push(
        line.replace(/#.*$/, "").replace(/<[^>]*>/g, "").replace(
          /-?0x[0-9a-f]+\(%rip\)/g,
          "X(%rip)",
        )
          .replace(/\s(call|jmp|j[a-z]+)\s+[0-9a-f]+/g, " $1 T").trimEnd(),
      );
    }
  }
  return fns.map((f) => f.join("\n")).sort();
}

async function disassemble(so: string): Promise<string> {
  const out = await new Deno.Command("objdump", {
    args: ["-d", "--no-addresses", "--no-show-raw-insn", so],
  }).output();
  return new TextDecoder().decode(out.stdout);
}

if (import.meta.main) {
  await runCommand("unity_code", async (argv) => {
    const v = parseFlags(argv, {
      shape: { type: "string", default: "256,256,256" },
      kernels: { type: "string", default: "8" },
      seed: { type: "string", default: "1" },
    }, USAGE);
    const w = shapeFlag("matmul", v.shape!);
    const n = Number(v.kernels), seed = Number(v.seed);
    const cache = await Deno.makeTempDir({ prefix: "tb-unity-code-" });
    try {
      for (const space of ["random", "template"]) {
        let s: Strategy;
        if (space === "random") s = randomSearch(defaultSpace(w), { seed });
        else {
          const t = templateSpace(defaultTemplate(w), w);
          s = await createStrategy("random", t.space, { seed, candidateOf: t.candidateOf });
        }
        const sources: string[] = [];
        while (sources.length < n) {
          for (const c of await s.propose(n)) {
            const k = kernelSource(c.trace!);
            if ("source" in k && sources.length < n) sources.push(k.source);
          }
        }
        const inputs = sources.map((source) => ({ source }));
        const alone = await createBuilder({ cacheDir: `${cache}/${space}-1`, batch: 1 }).build(
          inputs,
        );
        const unity = await createBuilder({
          cacheDir: `${cache}/${space}-n`,
          batch: n,
          parallel: 1,
        })
          .build(inputs);
        let same = 0;
        for (let i = 0; i < n; i++) {
          const a = kernelInstructions(await disassemble(alone[i].artifact!), "tb_kernel");
          const b = kernelInstructions(await disassemble(unity[i].artifact!), unity[i].symbol!);
          if (a.length > 0 && a.join("\n") === b.join("\n")) same++;
        }
        console.log(
          `${space}: ${same} of ${n} kernels have the same instructions alone and in a unity build of ${n}`,
        );
      }
    } finally {
      await Deno.remove(cache, { recursive: true });
    }
  });
}
