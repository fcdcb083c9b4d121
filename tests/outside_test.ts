/**
 * tunebook used from outside its clone, as a researcher would (issue 40): in a
 * temporary folder with no deno.json and no lockfile, a 10-line script imports
 * the root module by file URL, opens `pnpoly_RTX_3090`, compares random, sa and
 * bo for 2 seeds at budgets 25 and 50 and writes a tuning-curve SVG; and a
 * notebook on the Deno kernel placed in that folder imports the root module
 * by path and runs under `jupyter nbconvert --execute`. Nothing is copied: npm
 * packages come from Deno's global cache.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT_MOD = new URL("../mod.ts", import.meta.url);

Deno.test("a script outside the clone imports mod.ts by URL, compares strategies and writes an SVG", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tunebook_outside_" });
  const script = `import { bandCurveSVG, compareStrategies, fractionBand, openSpace } from ${
    JSON.stringify(ROOT_MOD.href)
  };
const space = await openSpace("pnpoly_RTX_3090");
const c = await compareStrategies(space, ["random", "sa", "bo"], { budgets: [25, 50], seeds: 2 });
const x = Array.from({ length: 50 }, (_, i) => i + 1);
const series = [...c.traces].map(([label, runs]) => ({ label, ...fractionBand(runs, c.optimum, x) }));
await Deno.writeTextFile("curve.svg", bandCurveSVG(series, { title: c.space }));
console.log(JSON.stringify({ scores: c.scoreOf, rows: c.results.numRows() }));
`;
  await Deno.writeTextFile(join(dir, "compare.ts"), script);
  assert.ok(script.trim().split("\n").length <= 10, "a 10-line script");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-sys", "compare.ts"],
    cwd: dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.ok(!(await exists(join(dir, "deno.json"))), "no config was written or needed");
  const svg = await Deno.readTextFile(join(dir, "curve.svg"));
  assert.ok(svg.startsWith("<svg") && svg.trimEnd().endsWith("</svg>"), svg.slice(0, 80));
  assert.match(svg, /cn_pnpoly/);
  const summary = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
  assert.deepEqual(Object.keys(summary.scores), ["random", "sa", "bo"]);
  assert.equal(summary.rows, 6);
  await Deno.remove(dir, { recursive: true });
});

function jupyter(): boolean {
  try {
    return new Deno.Command("jupyter", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

Deno.test({
  name: "a notebook outside the clone imports mod.ts by path and runs with nbconvert",
  ignore: !jupyter(),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "tunebook_outside_nb_" });
    const code = `import { createWorkload, htmlTable, show, STRATEGY_NAMES } from ${
      JSON.stringify(ROOT_MOD.pathname)
    };
const w = createWorkload("matmul", [8, 8, 8]);
console.log(\`flops \${w.flops}, \${STRATEGY_NAMES.includes("sa")}\`);
await show(htmlTable([{ workload: w.name, flops: w.flops }]));`;
    const notebook = {
      cells: [{
        cell_type: "code",
        execution_count: null,
        id: "outside1",
        metadata: {},
        outputs: [],
        source: code.split("\n").map((l, i, a) => (i < a.length - 1 ? `${l}\n` : l)),
      }],
      metadata: {
        kernelspec: { display_name: "Deno", language: "typescript", name: "deno" },
        language_info: { file_extension: ".ts", mimetype: "text/x.typescript", name: "typescript" },
      },
      nbformat: 4,
      nbformat_minor: 5,
    };
    await Deno.writeTextFile(join(dir, "outside.ipynb"), JSON.stringify(notebook, null, 1));
    const r = await new Deno.Command("jupyter", {
      args: [
        "nbconvert",
        "--to",
        "notebook",
        "--execute",
        "--ExecutePreprocessor.timeout=300",
        "--ExecutePreprocessor.kernel_name=deno",
        "--output",
        "executed.ipynb",
        "outside.ipynb",
      ],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr).slice(-4000));
    const done = JSON.parse(await Deno.readTextFile(join(dir, "executed.ipynb")));
    const outputs: {
      output_type: string;
      text?: string | string[];
      data?: Record<string, unknown>;
    }[] = done.cells[0].outputs;
    const text = (x: string | string[] | undefined) => (Array.isArray(x) ? x.join("") : x ?? "");
    assert.ok(!outputs.some((o) => o.output_type === "error"), JSON.stringify(outputs));
    assert.ok(
      outputs.some((o) => o.output_type === "stream" && /flops 1024, true/.test(text(o.text))),
      JSON.stringify(outputs),
    );
    assert.ok(
      outputs.some((o) => /<td>matmul<\/td>/.test(text(o.data?.["text/html"] as string[]))),
      "the table was shown",
    );
    await Deno.remove(dir, { recursive: true });
  },
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
