import assert from "node:assert/strict";
import { join } from "node:path";
import { createBuilder } from "./builder.ts";
import { sweepCache, TMP_FOLDER } from "./kernel_cache.ts";
import { VADD_GOOD, VADD_REFERENCE } from "./test_kernels.ts";

const DAY = 86_400_000;

/** Writes `bytes` bytes to `dir/name`, last used `ageMs` before `now`. */
async function file(dir: string, name: string, bytes: number, now: number, ageMs: number) {
  const path = join(dir, name);
  await Deno.writeFile(path, new Uint8Array(bytes));
  const used = new Date(now - ageMs);
  await Deno.utime(path, used, used);
  return path;
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test("sweepCache evicts the least recently used files down to 80% of the cap", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cache-" });
  try {
    const now = Date.now();
    // Ten 100-byte kernels, a.so used longest ago ... j.so most recently (all over a minute ago).
    const letters = "abcdefghij".split("");
    for (const [i, l] of letters.entries()) await file(dir, `${l}.so`, 100, now, (10 - i) * DAY);
    const kept = join(dir, "a.so");
    const r = await sweepCache(dir, { maxBytes: 500, now, keep: new Set([kept]) });
    assert.equal(r.bytesBefore, 1000);
    assert.ok(r.bytesAfter <= 400, `${r.bytesAfter} bytes left`);
    // a.so is kept (say, a reference kernel); b..g go, oldest first; h, i, j stay.
    assert.deepEqual(await names(dir), ["a.so", "h.so", "i.so", "j.so"]);
    assert.equal(r.evicted, 6);
    // Under the cap nothing goes.
    const again = await sweepCache(dir, { maxBytes: 500, now });
    assert.equal(again.evicted, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sweepCache never evicts a file used in the last minute", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cache-" });
  try {
    const now = Date.now();
    await file(dir, "old.so", 100, now, DAY);
    await file(dir, "fresh.so", 100, now, 30_000);
    const r = await sweepCache(dir, { maxBytes: 10, now });
    assert.equal(r.evicted, 1);
    assert.deepEqual(await names(dir), ["fresh.so"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sweepCache removes temporary files and compiler folders of killed builds", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cache-" });
  try {
    const now = Date.now();
    const uuid = crypto.randomUUID();
    await file(dir, `x.so.tmp-${uuid}`, 10, now, DAY);
    await file(dir, `y.c.tmp-${uuid}`, 10, now, DAY);
    await file(dir, `z.so.tmp-${uuid}`, 10, now, 1000); // a build still running
    await file(dir, "k.so", 10, now, DAY);
    const killed = join(dir, TMP_FOLDER, crypto.randomUUID());
    await Deno.mkdir(killed, { recursive: true });
    await file(killed, "ccAbc123.s", 10, now, DAY);
    const old = new Date(now - DAY);
    await Deno.utime(killed, old, old);
    const r = await sweepCache(dir, { maxBytes: 1e9, now });
    assert.equal(r.temporaries, 3);
    assert.deepEqual(await names(dir), [TMP_FOLDER, "k.so", `z.so.tmp-${uuid}`]);
    assert.deepEqual(await names(join(dir, TMP_FOLDER)), []);
    assert.equal(r.bytesBefore, 10, "temporary files are not counted as cache");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the builder sweeps its cache: old kernels evicted, its own reference kept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cache-" });
  try {
    const now = Date.now();
    for (let i = 0; i < 20; i++) await file(dir, `old${i}.so`, 50_000, now, DAY + i);
    await file(dir, `dead.so.tmp-${crypto.randomUUID()}`, 10, now, DAY);
    const builder = createBuilder({ cacheDir: dir, maxCacheBytes: 400_000 });
    const [reference] = await builder.build([{ source: VADD_REFERENCE }]);
    assert.equal(reference.errorKind, "none", reference.error ?? "");
    const left = await names(dir);
    assert.ok(left.filter((n) => n.startsWith("old")).length <= 6, left.join(" "));
    assert.ok(!left.some((n) => n.includes(".tmp-")), left.join(" "));
    assert.ok(left.includes(reference.artifact!.split("/").at(-1)!));
    // A cache hit marks the kernel used (its modification time).
    const before = (await Deno.stat(reference.artifact!)).mtime!;
    const old = new Date(now - DAY);
    await Deno.utime(reference.artifact!, old, old);
    const [hit] = await builder.build([{ source: VADD_REFERENCE }]);
    assert.equal(hit.cached, true);
    assert.ok((await Deno.stat(reference.artifact!)).mtime! >= before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gcc writes its temporary files in a folder of the cache, removed even on a timeout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cache-" });
  const record = join(dir, "tmpdirs.txt");
  // A stand-in compiler: records its TMPDIR and leaves a file there, then compiles, or hangs
  // spinning (a compiler that hangs without using the CPU is one starved by load, retried as
  // transient: tests/abuse_builds_test.ts).
  const cc = join(dir, "cc.sh");
  await Deno.writeTextFile(
    cc,
    `#!/bin/sh
[ "$1" = "--version" ] && exec gcc --version
echo "$TMPDIR" >> ${record}
touch "$TMPDIR/ccFake.s"
for a; do case "$a" in *.c) grep -q hang "$a" && while :; do :; done;; esac; done
exec gcc "$@"
`,
  );
  await Deno.chmod(cc, 0o755);
  const cacheDir = join(dir, "kernels");
  try {
    const builder = createBuilder({ cacheDir, cc, timeoutSeconds: 1 });
    const [good] = await builder.build([{ source: VADD_GOOD }]);
    assert.equal(good.errorKind, "none", good.error ?? "");
    const [hung] = await builder.build([{ source: `${VADD_GOOD}\n/* hang */` }]);
    assert.equal(hung.errorKind, "build_timeout");
    const tmpdirs = (await Deno.readTextFile(record)).trim().split("\n");
    assert.equal(tmpdirs.length, 2);
    for (const t of tmpdirs) assert.ok(t.startsWith(join(cacheDir, TMP_FOLDER)), t);
    assert.deepEqual(await names(join(cacheDir, TMP_FOLDER)), []);
    assert.ok(!(await names(cacheDir)).some((n) => n.includes(".tmp-")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
