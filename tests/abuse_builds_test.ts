/**
 * Abuse tests of issue 41, item 5: a compiler starved of CPU (here stopped
 * with SIGSTOP, as a loaded machine starves it for longer) is not a
 * `build_timeout`, which says the source is too slow to compile: the
 * builder waits for the CPU time its limit stands for, up to 4 times the
 * limit, compiles once more at once, and records a second starved timeout as
 * `build_timeout_transient`, which `--resume` builds again.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createBuilder } from "../measure/builder.ts";
import { processTreeCpuSeconds } from "../measure/compile.ts";
import { VADD_GOOD } from "../measure/test_kernels.ts";
import { isTransient } from "../ir/error_kind.ts";

/**
 * A folder with a compiler `cc` that stops itself (SIGSTOP, and nobody
 * continues it) on its first `stops` runs, then runs gcc; `runs` counts its runs.
 */
async function stoppingCompiler(stops: number): Promise<{ dir: string; cc: string; runs: string }> {
  const dir = await Deno.makeTempDir({ prefix: "tb-abuse-build-" });
  const cc = join(dir, "cc"), runs = join(dir, "runs");
  await Deno.writeTextFile(
    cc,
    `#!/bin/sh
# --version (the builder's description) is answered at once.
[ "$1" = "--version" ] && exec gcc "$@"
echo run >> "${runs}"
[ "$(wc -l < "${runs}")" -le ${stops} ] && kill -STOP $$
exec gcc "$@"
`,
  );
  await Deno.chmod(cc, 0o755);
  return { dir, cc, runs };
}

const runsOf = async (path: string) =>
  (await Deno.readTextFile(path).catch(() => "")).split("\n").filter(Boolean).length;

Deno.test("a compiler stopped once is compiled again at once, and the kernel builds", async () => {
  const { dir, cc, runs } = await stoppingCompiler(1);
  try {
    const builder = createBuilder({ cacheDir: join(dir, "cache"), cc, timeoutSeconds: 0.5 });
    const start = performance.now();
    const [r] = await builder.build([{ source: VADD_GOOD }]);
    const seconds = (performance.now() - start) / 1000;
    assert.equal(r.errorKind, "none", r.error);
    assert.ok(r.artifact && (await Deno.stat(r.artifact)).isFile);
    assert.equal(await runsOf(runs), 2, "stopped once, then compiled");
    // The stopped compiler was waited for up to 4 times its limit of 0.5 s, not killed at 0.5 s.
    assert.ok(seconds >= 2, `${seconds} s`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a compiler stopped twice is build_timeout_transient, saying it was starved", async () => {
  const { dir, cc, runs } = await stoppingCompiler(2);
  try {
    const builder = createBuilder({ cacheDir: join(dir, "cache"), cc, timeoutSeconds: 0.5 });
    const [r] = await builder.build([{ source: VADD_GOOD }]);
    assert.equal(r.errorKind, "build_timeout_transient", r.error);
    assert.ok(isTransient(r.errorKind), "measured again on --resume");
    assert.equal(r.artifact, undefined);
    assert.match(
      r.error!,
      /killed after 0\.5 s \(it ran \d+\.\d\d s on a CPU in \d+\.\d\d s: machine loaded\)/,
    );
    assert.match(r.error!, /built twice; first: /);
    assert.equal(await runsOf(runs), 2);
    // A later build (say on --resume) with the CPU back builds it.
    const [again] = await builder.build([{ source: VADD_GOOD }]);
    assert.equal(again.errorKind, "none", again.error);
    assert.equal(await runsOf(runs), 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a compiler that spins past its limit is a plain build_timeout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-abuse-build-" });
  try {
    const cc = join(dir, "cc");
    await Deno.writeTextFile(
      cc,
      '#!/bin/sh\n[ "$1" = "--version" ] && exec gcc "$@"\nwhile :; do :; done\n',
    );
    await Deno.chmod(cc, 0o755);
    const builder = createBuilder({ cacheDir: join(dir, "cache"), cc, timeoutSeconds: 0.5 });
    const [r] = await builder.build([{ source: VADD_GOOD }]);
    assert.equal(r.errorKind, "build_timeout", r.error);
    assert.doesNotMatch(r.error!, /machine loaded|built twice/);
    assert.match(r.error!, /killed after 0\.5 s \(it ran \d+\.\d\d s on a CPU/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("processTreeCpuSeconds counts the children of a process", async () => {
  // A shell whose child spins for 0.3 s of CPU, then sleeps: the CPU is the child's.
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      "sh -c 'end=$(($(date +%s%N) + 300000000)); while [ $(date +%s%N) -lt $end ]; do :; done; sleep 5' & wait",
    ],
    stdout: "null",
    stderr: "null",
    detached: true, // a process group of its own, killed whole below
  }).spawn();
  try {
    let cpu = 0;
    for (let i = 0; i < 100 && cpu < 0.05; i++) {
      await new Promise((r) => setTimeout(r, 100));
      cpu = processTreeCpuSeconds(child.pid) ?? 0;
    }
    assert.ok(cpu >= 0.05, `${cpu} s of CPU below the shell`);
  } finally {
    Deno.kill(-child.pid, "SIGKILL");
    await child.status;
  }
});
