/**
 * Every notebook (notebooks/*.ipynb) is committed without outputs, names
 * the installed "deno" kernel, and runs headless with the small budget
 * (`jupyter nbconvert --execute`) without an error; and the Jupyter helpers
 * of tuner/jupyter.ts send what the kernel expects.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  displayCode,
  displayRecord,
  displayTrace,
  htmlTable,
  inJupyter,
  JUPYTER_DISPLAY,
  liveProgress,
  progressHTML,
  sparklineSVG,
} from "../tuner/jupyter.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const NOTEBOOKS = join(ROOT, "notebooks");

const notebooks = [...Deno.readDirSync(NOTEBOOKS)]
  .filter((e) => e.isFile && e.name.endsWith(".ipynb"))
  .map((e) => e.name)
  .sort();

interface Notebook {
  cells: {
    cell_type: string;
    source: string[] | string;
    outputs?: { output_type: string; ename?: string; evalue?: string }[];
    execution_count?: number | null;
  }[];
  metadata: { kernelspec?: { name?: string } };
}

function jupyter(): string | undefined {
  try {
    const r = new Deno.Command("jupyter", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync();
    return r.success ? "jupyter" : undefined;
  } catch {
    return undefined;
  }
}

const JUPYTER = jupyter();
if (!JUPYTER) {
  console.log(
    "notebooks_test: `jupyter` is not installed (bash scripts/setup.sh installs it): " +
      "the notebooks are checked but not executed",
  );
}

Deno.test("there are notebooks, named NN_topic.ipynb", () => {
  assert.ok(notebooks.length >= 5, `found ${notebooks.join(", ")}`);
  for (const n of notebooks) assert.match(n, /^\d\d_[a-z0-9_]+\.ipynb$/);
});

for (const name of notebooks) {
  Deno.test(`${name} is committed without outputs, on the deno kernel, importing mod.ts`, () => {
    const nb: Notebook = JSON.parse(Deno.readTextFileSync(join(NOTEBOOKS, name)));
    assert.equal(nb.metadata.kernelspec?.name, "deno");
    assert.equal(
      nb.cells[0].cell_type,
      "markdown",
      "the first cell says what the notebook answers",
    );
    const text = (c: Notebook["cells"][number]) =>
      Array.isArray(c.source) ? c.source.join("") : c.source;
    assert.match(text(nb.cells[0]), /TUNEBOOK_BUDGET/, "and how to run it");
    const code = nb.cells.filter((c) => c.cell_type === "code");
    assert.match(text(code[0]), /from "\.\.\/mod\.ts"/);
    assert.match(text(code[0]), /TUNEBOOK_BUDGET/);
    assert.match(text(code[0]), /const seed = /);
    for (const c of code) {
      for (const [, spec] of text(c).matchAll(/from\s+"([^"]+)"/g)) {
        assert.equal(spec, "../mod.ts", "notebooks import only the public mod.ts");
      }
      assert.deepEqual(c.outputs, [], "outputs stripped");
      assert.equal(c.execution_count, null, "execution counts stripped");
    }
  });

  Deno.test({
    name: `${name} runs headless with the small budget without an error`,
    ignore: !JUPYTER,
    fn: async () => {
      const out = await Deno.makeTempDir();
      const started = performance.now();
      const r = await new Deno.Command(JUPYTER!, {
        args: [
          "nbconvert",
          "--to",
          "notebook",
          "--execute",
          "--ExecutePreprocessor.timeout=300",
          "--ExecutePreprocessor.kernel_name=deno",
          "--output-dir",
          out,
          "--output",
          name,
          join("notebooks", name),
        ],
        cwd: ROOT,
        env: { TUNEBOOK_BUDGET: "small", TUNEBOOK_CACHE: join(ROOT, ".cache/kernels") },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const seconds = (performance.now() - started) / 1000;
      const stderr = new TextDecoder().decode(r.stderr);
      assert.equal(r.code, 0, `nbconvert failed on ${name}:\n${stderr.slice(-4000)}`);
      const nb: Notebook = JSON.parse(await Deno.readTextFile(join(out, name)));
      const outputs = nb.cells.flatMap((c) => c.outputs ?? []);
      const errors = outputs.filter((o) => o.output_type === "error");
      assert.deepEqual(errors.map((e) => `${e.ename}: ${e.evalue}`), [], "no cell raised");
      assert.ok(outputs.length > 0, "the notebook shows something");
      console.log(`${name}: ${seconds.toFixed(1)} s`);
      await Deno.remove(out, { recursive: true });
    },
  });
}

Deno.test("the notebooks' code type-checks against mod.ts", async () => {
  // The kernel does not type-check: concatenate each notebook's code cells into a module and check it.
  const dir = await Deno.makeTempDir();
  const mod = new URL("../mod.ts", import.meta.url).href;
  const files = notebooks.map((name) => {
    const nb: Notebook = JSON.parse(Deno.readTextFileSync(join(NOTEBOOKS, name)));
    const code = nb.cells.filter((c) => c.cell_type === "code")
      .map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source))
      .join("\n").replaceAll('"../mod.ts"', JSON.stringify(mod));
    const file = join(dir, name.replace(/\.ipynb$/, ".ts"));
    Deno.writeTextFileSync(file, `${code}\nexport {};\n`);
    return file;
  });
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--quiet", "--config", join(ROOT, "deno.json"), ...files],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
  await Deno.remove(dir, { recursive: true });
});

// tuner/jupyter.ts

Deno.test("inJupyter() is false outside the Deno kernel", () => {
  assert.equal(inJupyter(), false);
});

Deno.test("liveProgress() sends display_data once, then update_display_data with the same id", async () => {
  const sent: { type: string; content: Record<string, unknown> }[] = [];
  const progress = liveProgress("matmul <128>", {
    minIntervalMs: 0,
    broadcast: (type, content) => {
      sent.push({ type, content });
      return Promise.resolve();
    },
  });
  for (let i = 1; i <= 3; i++) {
    progress({ done: i, total: 3, valid: i, errors: 0, bestGflops: i * 10, elapsed: i });
  }
  await progress.done();
  assert.deepEqual(sent.map((m) => m.type), [
    "display_data",
    "update_display_data",
    "update_display_data",
  ]);
  const ids = sent.map((m) => (m.content.transient as { display_id: string }).display_id);
  assert.equal(new Set(ids).size, 1);
  const data = sent[2].content.data as Record<string, string>;
  assert.match(data["text/plain"], /3\/3 valid 3 errors 0 best 30\.0 GFLOP\/s/);
  assert.match(data["text/html"], /<b>matmul &lt;128&gt;<\/b>/);
  assert.match(data["text/html"], /3\/3 trials, valid 3, errors 0, best 30\.00 GFLOP\/s/);
  assert.match(data["text/html"], /<svg[^>]*><rect[^>]*\/><polyline/);
  assert.deepEqual(progress.history, [10, 20, 30]);
});

Deno.test("liveProgress() holds back frequent updates but always shows the last one", async () => {
  const sent: Record<string, unknown>[] = [];
  const progress = liveProgress("t", {
    minIntervalMs: 60_000,
    broadcast: (_, content) => {
      sent.push(content);
      return Promise.resolve();
    },
  });
  for (let i = 1; i <= 5; i++) progress({ done: i, total: 10, elapsed: i, unit: "runs" });
  await new Promise((resolve) => setTimeout(resolve, 0)); // messages go out asynchronously
  assert.equal(sent.length, 1, "the first update is shown at once, the next are held back");
  await progress.done();
  assert.equal(sent.length, 2, "done() shows the last held-back update");
  assert.match((sent[1].data as Record<string, string>)["text/html"], /5\/10 runs, 5\.0 s/);
  progress({ done: 10, total: 10, elapsed: 11, unit: "runs" });
  await progress.done();
  assert.equal(sent.length, 3, "the final update (done = total) is never held back");
});

Deno.test("liveProgress() keeps going when a broadcast fails", async () => {
  let calls = 0;
  const progress = liveProgress("t", {
    minIntervalMs: 0,
    broadcast: () => {
      calls++;
      return Promise.reject(new Error("iopub closed"));
    },
  });
  progress({ done: 1, total: 2, elapsed: 0 });
  progress({ done: 2, total: 2, elapsed: 0 });
  await progress.done();
  assert.equal(calls, 2);
});

Deno.test("sparklineSVG() skips NaN and draws a flat series mid-height", () => {
  assert.doesNotMatch(sparklineSVG([]), /polyline/);
  assert.doesNotMatch(sparklineSVG([NaN, NaN]), /polyline/);
  const flat = sparklineSVG([NaN, 5, 5], { width: 100, height: 20 });
  assert.match(flat, /points="50\.0,10\.0 98\.0,10\.0"/);
  const rising = sparklineSVG([1, 2], { width: 100, height: 20 });
  assert.match(rising, /points="2\.0,18\.0 98\.0,2\.0"/);
});

Deno.test("progressHTML() shows counts only for measured trials", () => {
  const runs = progressHTML("x", { done: 1, total: 4, unit: "runs", elapsed: 2 }, []);
  assert.match(runs, /1\/4 runs, 2\.0 s/);
  const none = progressHTML("x", { done: 1, total: 4, valid: 0, errors: 1, elapsed: 2 }, [NaN]);
  assert.match(none, /valid 0, errors 1, best -, 2\.0 s/);
});

const TRACE = {
  version: 1,
  workload: { name: "matmul", shape: [8, 8, 8] },
  insts: [{ op: "split", args: { stage: "C", loop: "i", factors: [2, 4] } }],
};

Deno.test("displayTrace() renders a trace as schedule code, plain and in a <pre>", () => {
  const bundle = displayTrace(JSON.stringify(TRACE))[JUPYTER_DISPLAY]();
  assert.equal(
    bundle["text/plain"],
    '# matmul(8, 8, 8)\nsch = Schedule(matmul(8, 8, 8))\nsch.split("C", "i", factors=[2,4])',
  );
  assert.match(bundle["text/html"], /^<pre># matmul\(8, 8, 8\)\n.*sch\.split\(&quot;C&quot;/s);
  assert.deepEqual(displayTrace(TRACE).trace, TRACE);
});

Deno.test("displayRecord() renders the measurement and the schedule of a record", () => {
  const base = {
    id: 1,
    runId: 1,
    trial: 3,
    trace: JSON.stringify(TRACE),
    traceHash: "h",
    knobs: null,
    created: "",
  };
  const result = {
    id: 1,
    candidateId: 1,
    error: null,
    times: [1e-3],
    buildSeconds: 0,
    runSeconds: 0,
    timestamp: "",
  };
  const ok = displayRecord({
    ...base,
    result: { ...result, errorKind: "none", seconds: 1e-3, gflops: 1.024 },
  })[JUPYTER_DISPLAY]();
  assert.match(ok["text/plain"], /^trial 3: 1\.02 GFLOP\/s, 1\.000 ms\n# matmul/);
  assert.match(ok["text/html"], /<b>trial 3: 1\.02 GFLOP\/s, 1\.000 ms<\/b><pre>/);
  const failed = displayRecord({
    ...base,
    result: {
      ...result,
      errorKind: "wrong_answer",
      error: "max error 3",
      seconds: null,
      gflops: null,
    },
  })[JUPYTER_DISPLAY]();
  assert.match(failed["text/plain"], /^trial 3: wrong_answer \(max error 3\)/);
});

Deno.test("htmlTable() and displayCode() escape what they show", () => {
  const t = htmlTable([{ name: "<a>", x: 1.23456, n: 3, none: null }], { caption: "c&d" });
  assert.equal(
    t.html,
    "<table><caption>c&amp;d</caption><thead><tr><th>name</th><th>x</th><th>n</th><th>none</th></tr></thead>" +
      "<tbody><tr><td>&lt;a&gt;</td><td>1.235</td><td>3</td><td>-</td></tr></tbody></table>",
  );
  assert.equal(
    t.text,
    "| name | x | n | none |\n| --- | --- | --- | --- |\n| <a> | 1.235 | 3 | - |",
  );
  assert.equal(t[JUPYTER_DISPLAY]()["text/html"], t.html);
  assert.equal(displayCode("a < b")[JUPYTER_DISPLAY]()["text/html"], "<pre>a &lt; b</pre>");
});
