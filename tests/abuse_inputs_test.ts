/**
 * Abuse tests of issue 13, item 3: every unbounded input is refused through
 * the CLI before anything is built, with exit status 2, one line naming the
 * limit (no stack trace), and the records database byte-identical.
 */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { runScript, type ScriptResult, SHARED_KERNEL_CACHE } from "./_cli.ts";

/** A matmul trace of `shape` holding `insts`, as JSON text. */
function traceText(insts: unknown[], shape = [64, 64, 64]): string {
  return JSON.stringify({ version: 1, workload: { name: "matmul", shape }, insts });
}

const split = (factors: unknown[]) => ({ op: "split", args: { stage: "C", loop: "i", factors } });

/** Gzip of `mib` MiB of zeros after a JSON prefix: a small file that inflates far. */
async function gzipBomb(path: string, mib: number): Promise<void> {
  const zeros = new Uint8Array(1 << 20);
  let n = 0;
  const source = new ReadableStream<BufferSource>({
    start: (c) => c.enqueue(new TextEncoder().encode('{"cache": "')),
    pull: (c) => n++ < mib ? c.enqueue(zeros) : c.close(),
  });
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  await source.pipeThrough(new CompressionStream("gzip")).pipeTo(file.writable);
}

/** Every file of a folder with its bytes, to prove nothing was written. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of Deno.readDir(dir)) {
    if (!e.isFile) continue;
    const bytes = await Deno.readFile(join(dir, e.name));
    const digest = await crypto.subtle.digest("SHA-256", bytes);
    out.set(e.name, Array.from(new Uint8Array(digest), (b) => b.toString(16)).join(""));
  }
  return out;
}

/** Asserts exit 2 and one line on stderr matching `message`, with no stack trace. */
function assertRefused(r: ScriptResult, message: RegExp, what: string): void {
  assert.equal(r.code, 2, `${what}: exit ${r.code}\n${r.stderr}`);
  const err = r.stderr.trim();
  assert.equal(err.split("\n").length, 1, `${what}: one line, got\n${err}`);
  assert.doesNotMatch(err, /\bat .*\.ts:\d+/, `${what}: no stack trace`);
  assert.match(err, message, what);
  assert.equal(r.stdout, "", `${what}: nothing on stdout`);
}

/** A folder with a tunebook database `r.db` holding one run. */
async function folderWithDatabase(): Promise<string> {
  const dir = await Deno.makeTempDir();
  const db = RecordsDB.open(join(dir, "r.db"));
  const workloadId = db.upsertWorkload({ name: "matmul", shape: [64, 64, 64], flops: 2 * 64 ** 3 });
  db.startRun({
    strategy: "random",
    seed: 1,
    trials: 1,
    target: "cpu",
    workloadId,
    config: {},
    machine: {},
    compiler: "gcc",
    tunebookVersion: "test",
  });
  db.close();
  return dir;
}

Deno.test("tune refuses unbounded traces and shapes with exit 2, naming the limit; the database is untouched", async () => {
  const dir = await folderWithDatabase();
  const files: Record<string, string> = {
    "f2000.json": traceText([split([null, ...new Array(1999).fill(1)])]),
    "f2p32.json": traceText([split([null, 2 ** 32])]),
    "f1e300.json": traceText([split([null, "X"])]).replace('"X"', "1e300"),
    "fext.json": traceText([split([null, 2000])]),
    "insts.json": traceText(
      new Array(1001).fill({ op: "unroll", args: { stage: "C", loop: "k" } }),
    ),
    "big.json": traceText([split([null, 4])], [1024, 1024, 1024]),
  };
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
  await gzipBomb(join(dir, "bomb.json.gz"), 17);
  const before = await snapshot(dir);
  const small = { ...SHARED_KERNEL_CACHE, TUNEBOOK_MEM_AVAILABLE: String(2 ** 20) };
  const cases: [string[], RegExp, Record<string, string>?][] = [
    [
      ["--trace", "f2000.json"],
      /^tune: Trace file "f2000\.json", trace 0: trace\.insts\[0\]\.args\.factors has 2000 factors, over the limit "split factors" of 16$/,
    ],
    [["--trace", "f2p32.json"], /factors\[1\] must be a factor from 1 to 2147483647 .*4294967296$/],
    [["--trace", "f1e300.json"], /factors\[1\] must be a factor from 1 to 2147483647 .*1e\+300$/],
    [
      ["--trace", "fext.json"],
      /factor 2000 is above the loop's extent 64, over the limit "split factor" of max\(extent, 1,024\)$/,
    ],
    [
      ["--trace", "insts.json"],
      /1001 instructions, over the limit "instructions per trace" of 1,000/,
    ],
    [
      ["--trace", "/dev/zero"],
      /^tune: Cannot read trace file "\/dev\/zero": the file is too large, over the limit "trace file size" of 16 MiB$/,
    ],
    [
      ["--trace", "bomb.json.gz"],
      /bomb\.json\.gz.*inflate too far, over the limit "trace file size" of 16 MiB$/,
    ],
    [
      ["--trace", "big.json"],
      /matmul 1024,1024,1024 needs about 32 MiB of buffers .* more than the 1 MiB available/,
      small,
    ],
    [
      ["--workload", "matmul", "--shape", "1024,1024,1024"],
      /^tune: --shape: matmul 1024,1024,1024 needs about 32 MiB of buffers/,
      small,
    ],
  ];
  for (const [args, message, env] of cases) {
    const r = await runScript(
      "cli/tune.ts",
      [...args, "--db", "r.db", "--quiet"],
      dir,
      env ?? SHARED_KERNEL_CACHE,
    );
    assertRefused(r, message, args.join(" "));
    assert.deepEqual(await snapshot(dir), before, `${args.join(" ")}: the folder is unchanged`);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compare refuses gzip bombs, /dev/zero, budgets past the space and too many seeds", async () => {
  const dir = await Deno.makeTempDir();
  await gzipBomb(join(dir, "bomb.json.gz"), 300);
  const before = await snapshot(dir);
  const space = ["--space", "pnpoly_RTX_3090"];
  const cases: [string[], RegExp, Record<string, string>?][] = [
    [
      ["--space", "bomb.json.gz"],
      /^compare: --space bomb\.json\.gz: .*its gzip data inflate too far, over the limit "inflated size" of 256 MiB$/,
    ],
    [
      ["--space", "/dev/zero"],
      /the file is too large, over the limit "cache file size" of 64 MiB$/,
    ],
    [
      [...space, "--budget", "99999999999"],
      /^compare: --budget 99999999999 is more than the 4092 configurations of the space/,
    ],
    [[...space, "--budget", "abc"], /^compare: --budget: value 1 "abc" is not an integer$/],
    [
      [...space, "--seeds", "5000"],
      /^compare: --seeds: 5000 seeds, over the limit "seeds" of 1,000$/,
    ],
    [
      ["--space", "matmul:1024,1024,1024"],
      /matmul 1024,1024,1024 needs about 32 MiB of buffers .* 1 MiB available/,
      { ...SHARED_KERNEL_CACHE, TUNEBOOK_MEM_AVAILABLE: String(2 ** 20) },
    ],
  ];
  for (const [args, message, env] of cases) {
    const r = await runScript(
      "cli/compare.ts",
      [...args, "--quiet", "--out", "out"],
      dir,
      env ?? SHARED_KERNEL_CACHE,
    );
    assertRefused(r, message, args.join(" "));
    assert.deepEqual(await snapshot(dir), before, `${args.join(" ")}: the folder is unchanged`);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compare on a cache with a time of 0 ms treats it as invalid: fractions of optimum stay positive", async () => {
  const dir = await Deno.makeTempDir();
  const cache: Record<string, { time: number }> = {};
  for (let x = 1; x <= 20; x++) cache[String(x)] = { time: x === 7 ? 0 : 1 + x / 10 };
  await Deno.writeTextFile(
    join(dir, "zero.json"),
    JSON.stringify({
      device_name: "d",
      kernel_name: "k",
      problem_size: 1,
      tune_params_keys: ["x"],
      tune_params: { x: Array.from({ length: 20 }, (_, i) => i + 1) },
      objective: "time",
      cache,
    }),
  );
  const r = await runScript(
    "cli/compare.ts",
    ["--space", "zero.json", "--strategies", "random,grid", "--budget", "20", "--seeds", "2"],
    dir,
    SHARED_KERNEL_CACHE,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /1 entries of the cache have time 0 ms; replayed as invalid configurations/,
  );
  const s = lastJsonLine(r.stdout);
  assert.ok(Math.abs(s.optimum - 1.1e-3) < 1e-12, `optimum ${s.optimum}`);
  for (const row of s.results) assert.equal(row.mean_fraction, 1, JSON.stringify(row));
  await Deno.remove(dir, { recursive: true });
});
