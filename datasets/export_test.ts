import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "npm:@duckdb/node-api@1.5.5-r.5";
import { FEATURE_VERSION, FIXED_FEATURE_NAMES } from "../costmodel/features.ts";
import { createWorkload } from "../ir/workloads.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { replaySpace } from "../search/replay.ts";
import { main as exportMain, parseExportArgs, parseHoldout } from "../cli/export.ts";
import { UsageError } from "../cli/args.ts";
import { RecordsDB } from "./db.ts";
import { exportRecords as exportPlain } from "./export.ts";
import {
  ADDED_EXPORT_COLUMNS,
  EXPORT_SCHEMA,
  ExportError,
  type ExportRow,
  NO_FEATURES,
  testWorkloads,
} from "./export_rows.ts";
import type { AutoTVMRecord } from "./formats/autotvm.ts";
import { csvField } from "./formats/csv.ts";
import { PARQUET_FEATURE_COLUMNS } from "../costmodel/export.ts";
import { exportRecords, exportRows } from "../tuner/export.ts";
import { ImportError, importKernelTunerCache, importRecords, parseCSV } from "./import.ts";
import { cacheStats, KERNELTUNER_DIR, readKernelTunerCache } from "./kerneltuner.ts";

const MATMUL = "matmul:32,32,32";
const DENSE = "dense:16,24,8";
const ERROR_MESSAGE = 'result differs: "C"[0] = 1, expected 2\nsecond line, with a comma';

/**
 * A records database made by the real tuner: matmul 32,32,32 (random, traces
 * only) and dense 16,24,8 (grid, with knobs), plus a synthetic run of error
 * results. Built once per test file.
 */
let fixture: Promise<{ dir: string; db: string; measured: number }> | undefined;

function getFixture(): Promise<{ dir: string; db: string; measured: number }> {
  fixture ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "tunebook_export_test_" });
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    const db = join(dir, "runs.db");
    const tune = new URL("../cli/tune.ts", import.meta.url).pathname;
    for (
      const args of [
        ["--workload", "matmul", "--shape", "32,32,32"],
        ["--workload", "dense", "--shape", "16,24,8", "--strategy", "grid"],
      ]
    ) {
      const out = await new Deno.Command(Deno.execPath(), {
        // No finalists: runs 1 and 2 are the two tuning runs (tuner/confirm_test.ts exports a
        // tune's finalists).
        args: [
          "run",
          "-A",
          tune,
          ...args,
          "--trials",
          "6",
          "--finalists",
          "0",
          "--db",
          db,
          "--quiet",
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
    }
    const records = RecordsDB.open(db);
    try {
      const run1 = records.runs()[0];
      const first = records.candidates(run1.id)[0];
      const run = records.startRun({
        strategy: "synthetic",
        seed: 3,
        trials: 3,
        target: "cpu",
        workloadId: run1.workloadId,
        config: { note: "errors" },
        machine: { cpu: "test" },
        compiler: 'gcc, "quoted"',
        tunebookVersion: "test",
      });
      const a = records.addCandidate(run, { trial: 0, trace: first.trace, traceHash: "aa" });
      records.addResult(a, {
        errorKind: "wrong_answer",
        error: ERROR_MESSAGE,
        times: [],
        buildSeconds: 0.5,
        runSeconds: 0.25,
      });
      const b = records.addCandidate(run, {
        trial: 1,
        trace: '{"not":"a trace"}',
        traceHash: "bb",
      });
      records.addResult(b, {
        errorKind: "run_timeout",
        error: "",
        times: [],
        buildSeconds: 0.5,
        runSeconds: 10,
      });
      records.addCandidate(run, { trial: 2, trace: first.trace, traceHash: "cc" }); // unmeasured
      records.finishRun(run);
      const measured = records.runs().reduce((n, r) => n + records.counts(r.id).measured, 0);
      return { dir, db, measured };
    } finally {
      records.close();
    }
  })();
  return fixture;
}

async function withFixture(
  fn: (db: RecordsDB, dir: string, measured: number) => Promise<void>,
): Promise<void> {
  const f = await getFixture();
  const db = RecordsDB.open(f.db);
  try {
    await fn(db, f.dir, f.measured);
  } finally {
    db.close();
  }
}

async function duck<T>(fn: (sql: (q: string) => Promise<Record<string, unknown>[]>) => Promise<T>) {
  const instance = await DuckDBInstance.create(":memory:");
  const con = await instance.connect();
  try {
    return await fn(async (q) => (await con.runAndReadAll(q)).getRowObjectsJson());
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "");
}

/** Rows without run ids (which an import renumbers), in order. */
function comparable(rows: ExportRow[]): Omit<ExportRow, "run_id">[] {
  return rows.map(({ run_id: _, ...rest }) => rest);
}

Deno.test("the schema lists every column once with a type and a meaning", () => {
  const names = EXPORT_SCHEMA.map((c) => c.name);
  assert.equal(new Set(names).size, names.length);
  for (
    const n of [
      "run_id",
      "workload",
      "shape",
      "workload_key",
      "target",
      "strategy",
      "seed",
      "trial",
      "trace",
      "trace_hash",
      "knobs",
      "feature_version",
      "features",
      "error_kind",
      "error",
      "times",
      "seconds",
      "gflops",
      "build_seconds",
      "run_seconds",
      "timestamp",
      "machine",
      "compiler",
      "tunebook_version",
      "split",
    ]
  ) assert.ok(names.includes(n as keyof ExportRow), n);
  for (const c of EXPORT_SCHEMA) assert.ok(c.meaning.length > 5 && c.type, c.name);
  assert.equal(PARQUET_FEATURE_COLUMNS.length, FIXED_FEATURE_NAMES.length);
});

Deno.test("each format writes one row per measured candidate", async () => {
  await withFixture(async (db, dir, measured) => {
    assert.equal(measured, 14); // 6 + 6 + 2 (the unmeasured candidate is left out)
    const rows = exportRows(db);
    assert.equal(rows.length, measured);
    for (const format of ["csv", "jsonl", "autotvm", "parquet"] as const) {
      const out = join(dir, "out", `all.${format}`);
      const s = await exportRecords(db, format, out);
      assert.equal(s.rows, measured, format);
      assert.equal(s.bytes, (await Deno.stat(out)).size);
      assert.equal(s.train, measured);
      assert.equal(s.test, 0);
      if (format === "parquet") continue;
      const text = await Deno.readTextFile(out);
      const n = format === "csv" ? parseCSV(text).length - 1 : lines(text).length;
      assert.equal(n, measured, format);
    }
    const only = await exportRecords(db, "jsonl", join(dir, "out", "run2.jsonl"), { runs: [2] });
    assert.equal(only.rows, 6);
    await assert.rejects(
      () => exportRecords(db, "jsonl", join(dir, "x.jsonl"), { runs: [99] }),
      (e) => e instanceof ExportError && /No run 99/.test(e.message),
    );
  });
});

Deno.test("a plain export of datasets/ carries no features and only declared knob spaces", async () => {
  await withFixture(async (db, dir) => {
    const rows = (await import("./export_rows.ts")).exportRows(db);
    assert.ok(
      rows.every((r) => r.features === null && r.feature_version === NO_FEATURES.featureVersion),
    );
    const out = join(dir, "plain.autotvm");
    await exportPlain(db, "autotvm", out);
    const records = lines(await Deno.readTextFile(out)).map((l) => JSON.parse(l) as AutoTVMRecord);
    // A template run stores only the template's name: without tuner/export.ts its space is unknown.
    const dense = records.filter((r) => r.tunebook.workload_key === DENSE);
    assert.ok(dense.length > 0 && dense.every((r) => r.config.index === -1));
  });
});

Deno.test("rows carry features, times and run metadata", async () => {
  await withFixture((db) => {
    const rows = exportRows(db);
    const matmul = rows.filter((r) => r.workload_key === MATMUL && r.strategy === "random");
    assert.equal(matmul.length, 6);
    for (const r of matmul) {
      assert.equal(r.feature_version, FEATURE_VERSION);
      assert.equal(JSON.parse(r.features!).length, FIXED_FEATURE_NAMES.length);
      assert.equal(r.knobs, null);
      const times = JSON.parse(r.times);
      assert.ok(times.length >= 1 && r.seconds! > 0 && r.gflops! > 0);
      assert.deepEqual(JSON.parse(r.shape), [32, 32, 32]);
      assert.equal(JSON.parse(r.run_config).workload, "matmul");
      assert.equal(typeof JSON.parse(r.machine).cores, "number");
      assert.ok(!Number.isNaN(Date.parse(r.timestamp)));
    }
    const dense = rows.filter((r) => r.workload_key === DENSE);
    assert.ok(dense.every((r) => Array.isArray(JSON.parse(r.knobs!))));
    const bad = rows.find((r) => r.trace_hash === "bb")!;
    // Trials are numbered from 1, as in every table and report; the database keeps them from 0.
    assert.deepEqual(
      rows.filter((r) => r.strategy === "synthetic").map((r) => r.trial),
      [1, 2],
    );
    for (const run of db.runs()) {
      const stored = db.candidates(run.id).filter((c) => c.result).map((c) => c.trial + 1);
      assert.deepEqual(rows.filter((r) => r.run_id === run.id).map((r) => r.trial), stored);
    }
    assert.equal(Math.min(...rows.map((r) => r.trial)), 1);
    assert.equal(bad.features, null);
    assert.equal(bad.error, "");
    assert.equal(bad.seconds, null);
    return Promise.resolve();
  });
});

Deno.test("CSV quotes JSON and text fields correctly", async () => {
  assert.equal(csvField(null), "");
  assert.equal(csvField(""), '""');
  assert.equal(csvField("plain"), "plain");
  assert.equal(csvField(1.5e-7), "1.5e-7");
  assert.equal(csvField("[32,32,32]"), '"[32,32,32]"');
  assert.equal(csvField('{"a":1}'), '"{""a"":1}"');
  assert.equal(csvField(" x"), '" x"');
  await withFixture(async (db, dir) => {
    const out = join(dir, "quoted.csv");
    await exportRecords(db, "csv", out);
    const text = await Deno.readTextFile(out);
    const rows = exportRows(db);
    const records = parseCSV(text);
    const header = records[0].fields.map((f) => f.text);
    assert.deepEqual(header, EXPORT_SCHEMA.map((c) => c.name));
    records.slice(1).forEach((rec, i) => {
      EXPORT_SCHEMA.forEach((c, j) => {
        const f = rec.fields[j];
        const v = rows[i][c.name];
        if (v === null) assert.deepEqual(f, { text: "", quoted: false }, c.name);
        else assert.equal(f.text, String(v), c.name);
        if (c.type === "json" && v !== null) assert.ok(f.quoted, c.name);
      });
    });
    // The raw text of a JSON field: quoted, inner quotes doubled.
    assert.ok(text.includes(',"[32,32,32]","matmul:32,32,32",'));
    assert.ok(text.includes('"{""version"":1,""workload"":{""name"":""matmul""'));
    // An error message with quotes, a comma and a line break stays one field.
    assert.ok(text.includes(`"${ERROR_MESSAGE.replaceAll('"', '""')}"`));
    // DuckDB's CSV reader, an independent parser, reads the same values.
    const back = await duck((sql) =>
      sql(
        `SELECT trace, error, times, knobs FROM read_csv('${out}', header = true, ` +
          `all_varchar = true, quote = '"', escape = '"')`,
      )
    );
    assert.equal(back.length, rows.length);
    back.forEach((b, i) => {
      assert.equal(b.trace, rows[i].trace);
      assert.equal(b.times, rows[i].times);
      assert.equal(b.knobs, rows[i].knobs);
      if (rows[i].error) assert.equal(b.error, rows[i].error);
    });
  });
});

Deno.test("the holdout split puts whole workloads in test", async () => {
  await withFixture(async (db, dir) => {
    const s = await exportRecords(db, "jsonl", join(dir, "split.jsonl"), {
      split: { holdout: [DENSE] },
    });
    assert.deepEqual(s.testWorkloads, [DENSE]);
    assert.equal(s.test, 6);
    const rows = lines(await Deno.readTextFile(join(dir, "split.jsonl"))).map((l) => JSON.parse(l));
    for (const r of rows) assert.equal(r.split, r.workload_key === DENSE ? "test" : "train");
    for (const seed of [1, 2, 3, 4]) {
      const split = { holdoutFraction: 0.5, seed };
      const got = exportRows(db, { split });
      const byKey = new Map<string, Set<string>>();
      for (const r of got) {
        byKey.set(r.workload_key, (byKey.get(r.workload_key) ?? new Set()).add(r.split));
      }
      for (const [k, splits] of byKey) assert.equal(splits.size, 1, `${k} is in both splits`);
      assert.equal([...byKey.values()].filter((v) => v.has("test")).length, 1);
      assert.deepEqual(exportRows(db, { split }).map((r) => r.split), got.map((r) => r.split));
    }
    assert.throws(
      () => exportRows(db, { split: { holdout: ["matmul:512,512,512"] } }),
      (e) => e instanceof ExportError && /matmul:512,512,512/.test(e.message),
    );
    assert.throws(() => exportRows(db, { split: { holdoutFraction: 1.5, seed: 1 } }), ExportError);
  });
  const keys = Array.from({ length: 10 }, (_, i) => `w:${i}`);
  assert.equal(testWorkloads(keys, { holdoutFraction: 0.3, seed: 9 }).size, 3);
  assert.equal(testWorkloads(keys, { holdoutFraction: 0.01, seed: 9 }).size, 1);
  assert.equal(testWorkloads(keys, { holdoutFraction: 0, seed: 9 }).size, 0);
});

Deno.test("AutoTVM lines parse and have AutoTVM's fields", async () => {
  await withFixture(async (db, dir) => {
    const out = join(dir, "log.autotvm");
    await exportRecords(db, "autotvm", out, { split: { holdout: [DENSE] } });
    const recs = lines(await Deno.readTextFile(out)).map((l) => JSON.parse(l) as AutoTVMRecord);
    const rows = exportRows(db, { split: { holdout: [DENSE] } });
    assert.equal(recs.length, rows.length);
    const space = templateSpace("dense", createWorkload("dense", [16, 24, 8])).space;
    recs.forEach((r, i) => {
      const row = rows[i];
      assert.deepEqual(Object.keys(r).slice(0, 5), [
        "input",
        "config",
        "result",
        "version",
        "tvm_version",
      ]);
      const [target, task, args, kwargs] = r.input;
      assert.equal(target, "c");
      assert.equal(task, row.workload);
      assert.deepEqual(args, JSON.parse(row.shape));
      assert.deepEqual(kwargs, {});
      assert.equal(r.version, 0.2);
      assert.equal(typeof r.tvm_version, "string");
      assert.equal(r.config.code_hash, null);
      const [costs, errorNo, allCost, timestamp] = r.result;
      assert.deepEqual(costs, JSON.parse(row.times));
      assert.ok(Math.abs(allCost - (row.build_seconds + row.run_seconds)) < 1e-12);
      assert.equal(timestamp, Date.parse(row.timestamp) / 1000);
      assert.equal(
        errorNo,
        { none: 0, wrong_answer: 5, run_timeout: 7 }[row.error_kind as "none"],
      );
      assert.equal(r.tunebook.trace_hash, row.trace_hash);
      assert.equal(r.tunebook.trial, row.trial, "the same trial numbers (from 1) as the rows");
      assert.ok((r.tunebook.trial as number) >= 1);
      assert.equal(r.tunebook.split, row.split);
      if (row.knobs === null) {
        assert.deepEqual(r.config.entity, []);
        assert.equal(r.config.index, -1);
        assert.ok(r.tunebook.trace, "the trace goes in the extra field");
      } else {
        const knobs = JSON.parse(row.knobs);
        assert.deepEqual(r.config.entity, space.entity(knobs));
        assert.equal(r.config.index, space.index(knobs));
        for (const [name, kind] of r.config.entity) {
          assert.equal(typeof name, "string");
          assert.ok(["sp", "re", "an", "ot"].includes(kind));
        }
        assert.equal(r.tunebook.trace, undefined);
      }
    });
  });
});

Deno.test("round trip: export -> import -> export gives the same rows (CSV and JSON Lines)", async () => {
  await withFixture(async (db, dir) => {
    const original = exportRows(db);
    for (const format of ["jsonl", "csv"] as const) {
      const first = join(dir, `rt1.${format}`);
      await exportRecords(db, format, first);
      const copy = RecordsDB.open(join(dir, `copy-${format}.db`));
      try {
        const s = await importRecords(copy, first);
        assert.equal(s.rows, original.length);
        assert.equal(s.runs, 3);
        assert.ok(s.preserved);
        assert.deepEqual([...s.runIds.keys()], [1, 2, 3]);
        const again = exportRows(copy);
        assert.deepEqual(comparable(again), comparable(original), format);
        assert.deepEqual(again.map((r) => r.run_id), original.map((r) => s.runIds.get(r.run_id)));
        // The stored (0-based) trials come back as they were, not shifted by the export's base.
        for (const [oldId, newId] of s.runIds) {
          const trials = (d: RecordsDB, id: number) =>
            d.candidates(id).filter((c) => c.result).map((c) => c.trial);
          assert.deepEqual(trials(copy, newId), trials(db, oldId), `${format} run ${oldId}`);
        }
        const second = join(dir, `rt2.${format}`);
        await exportRecords(copy, format, second);
        assert.equal(await Deno.readTextFile(second), await Deno.readTextFile(first));
        assert.ok(copy.runs().every((r) => r.status === "finished"));
      } finally {
        copy.close();
      }
    }
  });
});

Deno.test("round trip keeps the time parts and conditions; an export without their columns imports them as absent", async () => {
  await withFixture(async (db, dir) => {
    const original = exportRows(db);
    // The tuned runs recorded them, the synthetic run (added by hand) did not.
    const tuned = original.filter((r) => r.strategy !== "synthetic" && r.error_kind === "none");
    assert.ok(tuned.length > 0);
    for (const r of tuned) {
      assert.ok(r.verify_seconds! > 0 && r.verify_seconds! <= r.run_seconds, JSON.stringify(r));
      assert.ok(r.strategy_seconds! >= 0 && r.framework_seconds! >= 0);
      if (Deno.build.os === "linux") assert.ok(r.load1! >= 0);
    }
    const synthetic = original.filter((r) => r.strategy === "synthetic");
    assert.ok(synthetic.every((r) => r.verify_seconds === null && r.load1 === null));
    for (const format of ["jsonl", "csv"] as const) {
      const file = join(dir, `parts.${format}`);
      await exportRecords(db, format, file);
      const copy = RecordsDB.open(join(dir, `parts-${format}.db`));
      try {
        await importRecords(copy, file);
        const again = exportRows(copy);
        for (const k of ADDED_EXPORT_COLUMNS) {
          const key = k as keyof ExportRow;
          assert.deepEqual(again.map((r) => r[key]), original.map((r) => r[key]), `${format} ${k}`);
        }
      } finally {
        copy.close();
      }
    }
    // An export of an earlier version: no such columns at all (JSON Lines and CSV).
    const kept = EXPORT_SCHEMA.filter((c) => !ADDED_EXPORT_COLUMNS.has(c.name));
    const oldJsonl = original.map((r) => {
      const o: Record<string, unknown> = { ...r };
      for (const k of ADDED_EXPORT_COLUMNS) delete o[k];
      return JSON.stringify(o);
    }).join("\n") + "\n";
    const oldCsv = [
      kept.map((c) => c.name).join(","),
      ...original.map((r) => kept.map((c) => csvField(r[c.name], c.type === "json")).join(",")),
    ].join("\n") + "\n";
    for (const [ext, text] of [["jsonl", oldJsonl], ["csv", oldCsv]] as const) {
      const oldFile = join(dir, `old.${ext}`);
      await Deno.writeTextFile(oldFile, text);
      const copy = RecordsDB.open(join(dir, `old-${ext}.db`));
      try {
        const s = await importRecords(copy, oldFile);
        assert.equal(s.rows, original.length, ext);
        const again = exportRows(copy);
        for (const k of ADDED_EXPORT_COLUMNS) {
          assert.ok(again.every((r) => r[k as keyof ExportRow] === null), `${ext} ${k}`);
        }
        assert.deepEqual(again.map((r) => r.run_seconds), original.map((r) => r.run_seconds));
      } finally {
        copy.close();
      }
    }
  });
});

Deno.test("the Kernel Tuner and T4 exports carry verification, strategy and framework times", async () => {
  await withFixture(async (db, dir) => {
    // The knob-template run (grid): a Kernel Tuner cache needs knob vectors.
    const rows = exportRows(db).filter((r) => r.strategy === "grid" && r.error_kind === "none");
    const out = join(dir, "parts_kt.json");
    await exportRecords(db, "kerneltuner", out, { runs: [rows[0].run_id] });
    const cache = JSON.parse(await Deno.readTextFile(out)).cache as Record<
      string,
      Record<string, number>
    >;
    const entries = Object.values(cache).filter((e) => typeof e.time === "number");
    assert.ok(entries.length > 0);
    for (const e of entries) {
      assert.ok(e.verification_time > 0, JSON.stringify(e));
      assert.ok(e.strategy_time >= 0 && e.framework_time >= 0);
      assert.ok(e.benchmark_time >= 0);
    }
    // Summed as the replay clock sums them, verification is not counted twice.
    const total = (e: Record<string, number>) =>
      e.compile_time + e.verification_time + e.benchmark_time;
    const byTime = rows.map((r) => (r.build_seconds + r.run_seconds) * 1e3);
    for (const e of entries) {
      assert.ok(byTime.some((t) => Math.abs(t - total(e)) < 1e-6), `${total(e)} in ${byTime}`);
    }
    // T4 carries the same parts under its names (milliseconds).
    const t4 = join(dir, "parts_T4.json");
    await exportRecords(db, "t4", t4, { runs: [rows[0].run_id] });
    const results = JSON.parse(await Deno.readTextFile(t4)).results as {
      invalidity: string;
      times: Record<string, number>;
    }[];
    const correct = results.filter((r) => r.invalidity === "correct");
    assert.equal(correct.length, entries.length);
    for (const r of correct) {
      assert.ok(r.times.validation > 0 && r.times.search_algorithm >= 0, JSON.stringify(r.times));
      assert.ok(r.times.framework >= 0 && r.times.benchmark >= 0);
    }
  });
});

Deno.test("importing a bad export names the file, line and column", async () => {
  await withFixture(async (db, dir) => {
    const good = join(dir, "good.jsonl");
    await exportRecords(db, "jsonl", good);
    const ls = lines(await Deno.readTextFile(good));
    const row = JSON.parse(ls[1]);
    row.error_kind = "exploded";
    const bad = join(dir, "bad.jsonl");
    await Deno.writeTextFile(bad, [ls[0], JSON.stringify(row)].join("\n"));
    const copy = RecordsDB.open(":memory:");
    try {
      await assert.rejects(
        () => importRecords(copy, bad),
        (e) => e instanceof ImportError && /bad\.jsonl:2: .*error_kind.*exploded/.test(e.message),
      );
      assert.equal(copy.runs().length, 0, "nothing is written for a bad file");
      const zero = join(dir, "zero.jsonl");
      await Deno.writeTextFile(
        zero,
        [ls[0], JSON.stringify({ ...JSON.parse(ls[1]), trial: 0 })].join("\n"),
      );
      await assert.rejects(
        () => importRecords(copy, zero),
        (e) =>
          e instanceof ImportError &&
          /zero\.jsonl:2: column "trial" must be an integer >= 1 \(exports number trials from 1\), got 0/
            .test(e.message),
      );
      assert.equal(copy.runs().length, 0);
      const csv = join(dir, "bad.csv");
      await Deno.writeTextFile(csv, "run_id,workload\n1,matmul\n");
      await assert.rejects(
        () => importRecords(copy, csv),
        (e) => e instanceof ImportError && /lacks column/.test(e.message),
      );
    } finally {
      copy.close();
    }
  });
});

Deno.test("parseCSV handles quotes, commas, line breaks and nulls", () => {
  const recs = parseCSV('a,b,c\r\n"x,""y""",,"two\nlines"\n"",1,z');
  assert.equal(recs.length, 3);
  assert.deepEqual(recs[1].fields, [
    { text: 'x,"y"', quoted: true },
    { text: "", quoted: false },
    { text: "two\nlines", quoted: true },
  ]);
  assert.equal(recs[2].line, 4);
  assert.deepEqual(recs[2].fields[0], { text: "", quoted: true });
  assert.throws(() => parseCSV('a,"b'), /unterminated/);
  assert.throws(() => parseCSV('a,b"c'), /quote inside/);
});

Deno.test("a knob-template run exports as a Kernel Tuner cache that replays", async () => {
  await withFixture(async (db, dir) => {
    const dense = db.runs().find((r) => r.strategy === "grid")!;
    const sketch = db.runs().find((r) => r.strategy === "random")!;
    await assert.rejects(
      () => exportRecords(db, "kerneltuner", join(dir, "x.json"), { runs: [sketch.id] }),
      /needs records with knob vectors/,
    );
    const out = join(dir, "dense_cpu.json");
    await exportRecords(db, "kerneltuner", out, { runs: [dense.id] });
    const cache = await readKernelTunerCache(out);
    const w = createWorkload("dense", [16, 24, 8]);
    const knobs = templateSpace("dense", w).space.knobs;
    assert.deepEqual(cache.tuneParamsKeys, knobs.map((k) => k.name));
    // A split's value is its inner factor, or all its factors when inner factors repeat.
    const tile = knobs.find((k) => k.kind === "split")!;
    const splits = tile.options as number[][];
    const inner = splits.map((o) => o.at(-1)!);
    assert.deepEqual(
      cache.tuneParams[tile.name],
      new Set(inner).size === inner.length ? inner : splits.map((o) => o.join("x")),
    );
    const cands = db.candidates(dense.id);
    assert.equal(cache.cache.size, cands.length);
    const best = Math.min(...cands.map((c) => c.result!.seconds ?? Infinity));
    const replay = replaySpace(cache);
    assert.ok(Math.abs(replay.optimum - best) < 1e-12, `${replay.optimum} vs ${best}`);
  });
});

Deno.test("a Kernel Tuner cache imports as one run with knobs, times and error kinds", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tunebook_kt_import_" });
  try {
    const entry = (x: number, y: number, time: number | string, extra = {}) => ({
      block_size_x: x,
      block_size_y: y,
      time,
      ...(typeof time === "number" ? { times: [time, time * 1.5, time * 0.5] } : {}),
      compile_time: 120,
      benchmark_time: 30,
      timestamp: "2023-01-26 01:05:09.730633+00:00",
      ...extra,
    });
    const cache = {
      device_name: "Test GPU",
      kernel_name: "vector_add",
      problem_size: [1024, "2"],
      tune_params_keys: ["block_size_x", "block_size_y"],
      tune_params: { block_size_x: [32, 64, 128], block_size_y: [1, 2] },
      objective: "time",
      cache: {
        "32,1": entry(32, 1, 2, { "GFLOP/s": 1 }),
        "64,1": entry(64, 1, 1, { "GFLOP/s": 2 }),
        "128,2": entry(128, 2, "RuntimeFailedConfig"),
        "64,2": entry(64, 2, "CompilationFailedConfig"),
        "32,2": entry(32, 2, "SomethingElse"),
      },
    };
    const path = join(dir, "vector_add_Test.json");
    await Deno.writeTextFile(path, JSON.stringify(cache));
    const db = RecordsDB.open(join(dir, "kt.db"));
    try {
      const s = await importKernelTunerCache(db, path);
      assert.equal(s.rows, 5);
      assert.equal(s.errors, 3);
      assert.equal(s.workloadKey, "vector_add:1024,2");
      assert.equal(s.flops, 2e6); // 1 GFLOP/s * 2 ms
      const run = db.run(s.runId)!;
      assert.equal(run.strategy, "kerneltuner-cache");
      assert.equal(run.target, "kerneltuner:Test GPU");
      assert.equal(run.status, "finished");
      const cands = db.candidates(s.runId);
      assert.deepEqual(cands.map((c) => c.knobs), [[0, 0], [1, 0], [2, 1], [1, 1], [0, 1]]);
      assert.deepEqual(cands.map((c) => c.result!.errorKind), [
        "none",
        "none",
        "runtime_error",
        "compile_host",
        "unknown",
      ]);
      assert.deepEqual(cands[0].result!.times, [0.002, 0.003, 0.001]);
      assert.equal(cands[0].result!.seconds, 0.002);
      assert.equal(cands[0].result!.buildSeconds, 0.12);
      assert.equal(cands[0].result!.runSeconds, 0.03);
      assert.equal(cands[0].result!.timestamp, "2023-01-26T01:05:09.730Z");
      assert.equal(cands[2].result!.error, "RuntimeFailedConfig");
      assert.deepEqual(JSON.parse(cands[1].trace), {
        kerneltuner: { block_size_x: 64, block_size_y: 1 },
      });
      const rows = exportRows(db);
      assert.equal(rows.length, 5);
      assert.ok(rows.every((r) => r.features === null));
      const out = join(dir, "kt.autotvm");
      await exportRecords(db, "autotvm", out);
      const rec = JSON.parse(lines(await Deno.readTextFile(out))[2]) as AutoTVMRecord;
      assert.deepEqual(rec.config.entity, [["block_size_x", "ot", 128], ["block_size_y", "ot", 2]]);
      assert.equal(rec.config.index, 5);
      assert.equal(rec.result[1], 4);
      // Back to a Kernel Tuner cache: same keys, times in ms, markers for the failures.
      const ktOut = join(dir, "kt_again.json");
      await exportRecords(db, "kerneltuner", ktOut);
      const again = await readKernelTunerCache(ktOut);
      assert.deepEqual(again.tuneParams, cache.tune_params);
      assert.deepEqual([...again.cache.keys()], ["32,1", "64,1", "128,2", "64,2", "32,2"]);
      assert.equal(again.cache.get("32,1")!.time, 2);
      assert.deepEqual(again.cache.get("32,1")!.times, [2, 3, 1]);
      assert.equal(again.cache.get("128,2")!.time, "RuntimeFailedConfig");
      assert.equal(again.cache.get("64,2")!.time, "CompilationFailedConfig");
      assert.equal(again.problemSize.toString(), "1024,2");
      // Unknown flops: gflops is null, not 0.
      const db2 = RecordsDB.open(join(dir, "kt2.db"));
      try {
        delete (cache.cache["32,1"] as Record<string, unknown>)["GFLOP/s"];
        delete (cache.cache["64,1"] as Record<string, unknown>)["GFLOP/s"];
        await Deno.writeTextFile(path, JSON.stringify(cache));
        const s2 = await importKernelTunerCache(db2, path);
        assert.equal(s2.flops, 0);
        assert.ok(exportRows(db2).every((r) => r.gflops === null));
      } finally {
        db2.close();
      }
    } finally {
      db.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "DuckDB reads our Parquet file: row count and a JSON column",
  // The DuckDB native addon keeps threads and handles of its own.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await withFixture(async (db, dir) => {
      const out = join(dir, "records.parquet");
      const s = await exportRecords(db, "parquet", out, { split: { holdout: [DENSE] } });
      const rows = exportRows(db, { split: { holdout: [DENSE] } });
      await duck(async (sql) => {
        const [{ n }] = await sql(`SELECT count(*)::INTEGER AS n FROM read_parquet('${out}')`);
        assert.equal(n, s.rows);
        assert.equal(n, rows.length);
        const back = await sql(
          `SELECT workload_key, shape, json_extract(shape, '$[0]')::INTEGER AS d0,
                  json_array_length(times)::INTEGER AS repeats, times, split, trial, knobs,
                  "feature.${FIXED_FEATURE_NAMES[0]}" AS f0
           FROM read_parquet('${out}')`,
        );
        back.forEach((b, i) => {
          const r = rows[i];
          assert.equal(b.workload_key, r.workload_key);
          assert.equal(b.shape, r.shape);
          assert.equal(b.d0, JSON.parse(r.shape)[0]);
          assert.equal(b.repeats, JSON.parse(r.times).length);
          assert.deepEqual(JSON.parse(b.times as string), JSON.parse(r.times));
          assert.equal(b.split, r.split);
          assert.equal(Number(b.trial), r.trial);
          assert.equal(b.knobs, r.knobs);
          assert.equal(b.f0, r.features === null ? null : JSON.parse(r.features)[0]);
        });
        const cols = await sql(`DESCRIBE SELECT * FROM read_parquet('${out}')`);
        const names = cols.map((c) => c.column_name);
        assert.equal(names.length, EXPORT_SCHEMA.length - 1 + FIXED_FEATURE_NAMES.length);
        assert.ok(!names.includes("features"));
        const [{ t }] = await sql(
          `SELECT count(*)::INTEGER AS t FROM read_parquet('${out}') WHERE split = 'test'`,
        );
        assert.equal(t, 6);
      });
    });
  },
});

Deno.test("export CLI: arguments and exit status", async () => {
  assert.deepEqual(parseHoldout("matmul:512,512,512,dense:16,24,8"), [
    "matmul:512,512,512",
    "dense:16,24,8",
  ]);
  assert.throws(() => parseHoldout("matmul"), UsageError);
  const a = parseExportArgs([
    "--db",
    "r.db",
    "--format",
    "csv",
    "--out",
    "o.csv",
    "--holdout",
    "matmul:32,32,32",
    "--holdout",
    "dense:16,24,8",
    "--runs",
    "1,2",
  ]);
  assert.deepEqual(a.options, { runs: [1, 2], split: { holdout: [MATMUL, DENSE] } });
  const b = parseExportArgs(
    ["--db", "r.db", "--format", "parquet", "--out", "o", "--holdout-fraction", "0.25"],
  );
  assert.deepEqual(b.options.split, { holdoutFraction: 0.25, seed: 1 });
  for (
    const [argv, message] of [
      [["--format", "csv", "--out", "o"], /Missing --db/],
      [["--db", "r.db", "--format", "xml", "--out", "o"], /Unknown --format "xml"/],
      [["--db", "r.db", "--format", "csv"], /Missing --out/],
      [["--db", "r", "--format", "csv", "--out", "o", "--holdout-fraction", "2"], /between 0/],
      [["--db", "r", "--format", "csv", "--out", "o", "--runs", "x"], /--runs/],
      [["--db", "r", "--format", "csv", "--out", "o", "--bogus"], /bogus/],
    ] as const
  ) {
    assert.throws(
      () => parseExportArgs([...argv]),
      (e) => e instanceof UsageError && message.test(e.message),
    );
  }
  await withFixture(async (_db, dir) => {
    const f = await getFixture();
    const err = console.error, log = console.log;
    const printed: string[] = [];
    console.error = (...x: unknown[]) => printed.push(x.join(" "));
    console.log = (...x: unknown[]) => printed.push(x.join(" "));
    try {
      assert.equal(
        await exportMain(["--db", join(dir, "missing.db"), "--format", "csv", "--out", "o"]),
        2,
      );
      assert.match(printed.at(-1)!, /no such records database/);
      assert.equal(
        await exportMain(["--db", f.db, "--format", "csv", "--out", "o", "--holdout", "conv2d:1"]),
        2,
      );
      assert.match(printed.at(-1)!, /conv2d:1/);
      const out = join(dir, "cli.jsonl");
      assert.equal(await exportMain(["--db", f.db, "--format", "jsonl", "--out", out]), 0);
      const summary = JSON.parse(printed.at(-1)!);
      assert.equal(summary.rows, f.measured);
      assert.equal(summary.path, out);
      assert.equal(summary.format, "jsonl");
      assert.equal(summary.bytes, (await Deno.stat(out)).size);
    } finally {
      console.error = err;
      console.log = log;
    }
  });
});

const PNPOLY = join(KERNELTUNER_DIR, "pnpoly_RTX_3090.json.gz");

Deno.test({
  name: "the shared pnpoly Kernel Tuner cache imports with its sizes",
  ignore: !existsSync(PNPOLY),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "tunebook_kt_pnpoly_" });
    const db = RecordsDB.open(join(dir, "kt.db"));
    try {
      const stats = cacheStats(await readKernelTunerCache(PNPOLY));
      const s = await importKernelTunerCache(db, PNPOLY);
      assert.equal(s.rows, stats.entries);
      assert.equal(s.errors, stats.invalid);
      assert.equal(db.counts(s.runId).errors, stats.invalid);
      const c = db.candidates(s.runId)[0];
      assert.equal(c.knobs!.length, stats.parameters);
      assert.ok(c.result!.times.every((t) => t > 0 && t < 1), "seconds, not milliseconds");
      assert.ok(c.result!.timestamp.startsWith("2023-"));
    } finally {
      db.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
