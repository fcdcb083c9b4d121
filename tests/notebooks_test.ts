/**
 * Every notebook (notebooks/*.ipynb) is committed without outputs, names
 * the installed "deno" kernel, and runs headless with the small budget
 * (`jupyter nbconvert --execute`) without an error; every figure it shows
 * carries a PNG and survives the export to HTML (`nbconvert --to html`)
 * with its marks; and the Jupyter helpers of tuner/jupyter.ts send what the
 * kernel expects.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseHTML } from "npm:linkedom@0.18.12";
import { decodePNG, inkFraction } from "../plots/png.ts";
import {
  displayCode,
  displayRecord,
  displaySVG,
  displayTrace,
  htmlTable,
  inJupyter,
  JUPYTER_DISPLAY,
  liveProgress,
  progressCardSVG,
  show,
} from "../tuner/jupyter.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const NOTEBOOKS = join(ROOT, "notebooks");

const notebooks = [...Deno.readDirSync(NOTEBOOKS)]
  .filter((e) => e.isFile && e.name.endsWith(".ipynb"))
  .map((e) => e.name)
  .sort();

interface Output {
  output_type: string;
  ename?: string;
  evalue?: string;
  /** MIME type -> content; nbformat may store a text as a list of lines. */
  data?: Record<string, string | string[]>;
}

interface Notebook {
  cells: {
    cell_type: string;
    source: string[] | string;
    outputs?: Output[];
    execution_count?: number | null;
  }[];
  metadata: { kernelspec?: { name?: string } };
}

const SHAPES = "path, rect, circle, polyline, polygon, line";

/** The few DOM calls made here on linkedom's elements (its types lack `document`). */
interface Element {
  tagName: string;
  parentElement: Element | null;
  closest(selector: string): Element | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): Iterable<Element> & { length: number };
}

function parse(html: string): Element {
  return (parseHTML(html) as unknown as { document: Element }).document;
}

function mime(o: Output, type: string): string | undefined {
  const v = o.data?.[type];
  return Array.isArray(v) ? v.join("") : v;
}

/** Outputs that show a figure: an SVG or PNG, or HTML holding one. */
function figureOutputs(nb: Notebook): Output[] {
  return nb.cells.flatMap((c) => c.outputs ?? []).filter((o) =>
    mime(o, "image/svg+xml") !== undefined || mime(o, "image/png") !== undefined ||
    /<svg|<img/.test(mime(o, "text/html") ?? "")
  );
}

/** Why a base64 PNG is not a picture (undecodable or blank), or undefined when it is one. */
function pngProblem(base64: string): string | undefined {
  try {
    const image = decodePNG(Buffer.from(base64, "base64"));
    const ink = inkFraction(image);
    return ink > 0.002 ? undefined : `a blank ${image.width}x${image.height} PNG (ink ${ink})`;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * The figures of an HTML export (images and outermost SVGs inside output
 * areas), each with what is wrong with it: an <img> must hold a PNG data
 * URL that decodes to a picture, an SVG at least three shape elements.
 */
function figuresInHTML(html: string): { kind: string; problem?: string }[] {
  const document = parse(html);
  const outputs = [...document.querySelectorAll(".jp-OutputArea-output")];
  return outputs.flatMap((area) =>
    [...area.querySelectorAll("img, svg")]
      .filter((e) => e.tagName.toLowerCase() === "img" || !e.parentElement?.closest("svg"))
      .map((e) => {
        if (e.tagName.toLowerCase() === "img") {
          const src = e.getAttribute("src") ?? "";
          const data = src.match(/^data:image\/png;base64,(.+)$/s)?.[1];
          return { kind: "img", problem: data ? pngProblem(data) : `src ${src.slice(0, 40)}` };
        }
        const shapes = e.querySelectorAll(SHAPES).length;
        return { kind: "svg", problem: shapes >= 3 ? undefined : `${shapes} shape elements` };
      })
  );
}

async function nbconvert(args: string[]): Promise<void> {
  const r = await new Deno.Command(JUPYTER!, {
    args: ["nbconvert", ...args],
    cwd: ROOT,
    env: { TUNEBOOK_BUDGET: "small", TUNEBOOK_CACHE: join(ROOT, ".cache/kernels") },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(r.stderr);
  assert.equal(r.code, 0, `nbconvert ${args.join(" ")} failed:\n${stderr.slice(-4000)}`);
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
    "notebooks_test: `jupyter` is not installed (bash scripts/setup.sh notebooks installs it): " +
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
      for (const [, spec] of text(c).matchAll(/(?:from\s+|import\s+)"([^"]+)"/g)) {
        // The public mod.ts, or a third-party package by its pinned npm: specifier (arquero).
        assert.ok(
          spec === "../mod.ts" || /^npm:(@[\w.-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/.test(spec),
          `notebooks import only the public mod.ts and pinned npm: packages, got ${spec}`,
        );
      }
      assert.deepEqual(c.outputs, [], "outputs stripped");
      assert.equal(c.execution_count, null, "execution counts stripped");
    }
  });

  Deno.test({
    name: `${name} runs headless with the small budget, and its figures survive the HTML export`,
    ignore: !JUPYTER,
    fn: async () => {
      const out = await Deno.makeTempDir();
      const started = performance.now();
      await nbconvert([
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
      ]);
      const seconds = (performance.now() - started) / 1000;
      const nb: Notebook = JSON.parse(await Deno.readTextFile(join(out, name)));
      const outputs = nb.cells.flatMap((c) => c.outputs ?? []);
      const errors = outputs.filter((o) => o.output_type === "error");
      assert.deepEqual(errors.map((e) => `${e.ename}: ${e.evalue}`), [], "no cell raised");
      assert.ok(outputs.length > 0, "the notebook shows something");

      // Every figure carries a PNG that is a picture, and its SVG (if any) has shapes.
      const figures = figureOutputs(nb);
      for (const [i, f] of figures.entries()) {
        const png = mime(f, "image/png");
        assert.ok(png, `figure ${i + 1} of ${name} carries a PNG`);
        assert.equal(pngProblem(png), undefined, `figure ${i + 1} of ${name}`);
        const svg = mime(f, "image/svg+xml");
        if (svg !== undefined) {
          assert.ok(parse(svg).querySelectorAll(SHAPES).length >= 3, `figure ${i + 1}: SVG shapes`);
        }
      }

      // The HTML export (what researchers share) shows each of them with its marks.
      await nbconvert(["--to", "html", "--output-dir", out, join(out, name)]);
      const html = await Deno.readTextFile(join(out, name.replace(/\.ipynb$/, ".html")));
      const arrived = figuresInHTML(html);
      assert.equal(arrived.length, figures.length, `${name}: figures in the HTML export`);
      assert.deepEqual(
        arrived.filter((f) => f.problem),
        [],
        `${name}: figures of the HTML export with their marks`,
      );
      console.log(`${name}: ${seconds.toFixed(1)} s, ${figures.length} figures`);
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

Deno.test("liveProgress().done() leaves the display as a figure of its final state, with a PNG", async () => {
  const sent: Record<string, unknown>[] = [];
  const progress = liveProgress("pnpoly", {
    minIntervalMs: 0,
    broadcast: (_, content) => {
      sent.push(content);
      return Promise.resolve();
    },
  });
  progress({ done: 1, total: 2, unit: "runs", elapsed: 0.5 });
  progress({ done: 2, total: 2, unit: "runs", elapsed: 2 });
  await progress.done();
  assert.deepEqual(progress.history, [0.5, 1.5], "seconds per run");
  const final = sent.at(-1)!.data as Record<string, string>;
  assert.equal(
    final["image/svg+xml"],
    progressCardSVG("pnpoly", { done: 2, total: 2, unit: "runs", elapsed: 2 }, [0.5, 1.5]),
  );
  assert.match(final["text/plain"], /^pnpoly \[#+\] 2\/2 runs 2\.0 s$/);
  assert.match(final["text/html"], /^<img src="data:image\/png;base64,/);
  const image = decodePNG(Buffer.from(final["image/png"], "base64"));
  assert.ok(inkFraction(image) > 0.05, "title, bar, text and sparkline drawn");
  await progress.done();
  assert.equal(sent.length, 3, "a second done() without news sends nothing");
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
  assert.equal(sent.length, 3, "done() shows the last held-back update, then the final figure");
  assert.match((sent[1].data as Record<string, string>)["text/html"], /5\/10 runs, 5\.0 s/);
  progress({ done: 10, total: 10, elapsed: 11, unit: "runs" });
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(sent.length, 4, "the final update (done = total) is never held back");
  await progress.done();
  assert.equal(sent.length, 5);
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
  assert.equal(calls, 3, "two updates and the final figure");
});

Deno.test("displaySVG() renders as the SVG with its PNG; show() prints its text outside Jupyter", async () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20">' +
    '<rect width="30" height="20" fill="white"/><circle cx="10" cy="10" r="8"/></svg>';
  const figure = displaySVG(svg, "a dot");
  const bundle = await figure[JUPYTER_DISPLAY]();
  assert.equal(bundle["image/svg+xml"], svg);
  assert.equal(bundle["text/plain"], "a dot");
  assert.equal(pngProblem(bundle["image/png"]), undefined);
  const printed: string[] = [];
  const log = console.log;
  console.log = (s: string) => printed.push(s);
  try {
    await show(figure);
    await show(svg);
  } finally {
    console.log = log;
  }
  assert.deepEqual(printed, ["a dot", "[SVG plot]"]);
});

Deno.test("figuresInHTML() finds blank and stripped figures of an HTML export", async () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20">' +
    '<rect width="30" height="20" fill="white"/><circle cx="10" cy="10" r="8"/>' +
    '<path d="M0 0L30 20" stroke="black"/></svg>';
  const png = (await displaySVG(svg)[JUPYTER_DISPLAY]())["image/png"];
  const white = '<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20">' +
    '<rect width="30" height="20" fill="white"/></svg>';
  const blank = (await displaySVG(white)[JUPYTER_DISPLAY]())["image/png"];
  const area = (inner: string) => `<div class="jp-OutputArea-output">${inner}</div>`;
  const html = area(`<img src="data:image/png;base64,${png}">`) +
    area(`<img src="data:image/png;base64,${blank}">`) + area(svg) +
    area('<svg width="30">stripped to its text</svg>') + area('<img src="figure.png">') +
    `<div class="jp-Cell"><svg><rect/><rect/><rect/></svg></div>`;
  const found = figuresInHTML(html);
  assert.deepEqual(found.map((f) => f.kind), ["img", "img", "svg", "svg", "img"]);
  assert.equal(found[0].problem, undefined);
  assert.match(found[1].problem!, /^a blank 60x40 PNG/);
  assert.equal(found[2].problem, undefined);
  assert.equal(found[3].problem, "0 shape elements");
  assert.equal(found[4].problem, "src figure.png");
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
  // Stored trial 3 is the fourth: shown from 1, as the tables and reports number trials.
  assert.match(ok["text/plain"], /^trial 4: 1\.02 GFLOP\/s, 1\.000 ms\n# matmul/);
  assert.match(ok["text/html"], /<b>trial 4: 1\.02 GFLOP\/s, 1\.000 ms<\/b><pre>/);
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
  assert.match(failed["text/plain"], /^trial 4: wrong_answer \(max error 3\)/);
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
