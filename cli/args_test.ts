import assert from "node:assert/strict";
import { HelpRequest, nonNegativeInt, parseTuneArgs, positiveInt, UsageError } from "./args.ts";

Deno.test("tune --overlap pipelines rounds only when asked", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs(base).overlap, false);
  assert.equal(parseTuneArgs([...base, "--overlap"]).overlap, true);
});

Deno.test("tune --unity sets the candidates per compiler process and rejects nonsense", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs([...base, "--unity", "4"]).unity, 4);
  assert.throws(() => parseTuneArgs([...base, "--unity", "0"]), /--unity/);
});

Deno.test("tune compiles 8 candidates per compiler process by default, target cuda one", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs(base).unity, 8);
  assert.equal(parseTuneArgs([...base, "--target", "cuda"]).unity, 1);
  assert.throws(
    () => parseTuneArgs([...base, "--target", "cuda", "--unity", "2"]),
    /--unity: target cuda builds one/,
  );
});

Deno.test("tune --race sets the racing factor, off unless given", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs(base).race, undefined);
  assert.equal(parseTuneArgs([...base, "--race", "2"]).race, 2);
  assert.throws(() => parseTuneArgs([...base, "--race", "0.5"]), /--race must be a factor >= 1/);
  assert.throws(() => parseTuneArgs([...base, "--race", "x"]), /--race must be a positive number/);
});

Deno.test("tune --finalists and --finalist-rounds are integers, unset unless given", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs(base).finalists, undefined);
  assert.equal(parseTuneArgs([...base, "--finalists", "0"]).finalists, 0);
  assert.equal(parseTuneArgs([...base, "--finalist-rounds", "5"]).finalistRounds, 5);
  assert.throws(
    () => parseTuneArgs([...base, "--finalists", "x"]),
    /--finalists must be an integer/,
  );
  assert.throws(() => parseTuneArgs([...base, "--finalist-rounds", "0"]), /--finalist-rounds/);
  assert.throws(
    () => parseTuneArgs(["--space", "pnpoly_RTX_3090", "--finalists", "2"]),
    /--finalists cannot be given with --space/,
  );
});

Deno.test("tune --remeasure-margin is a fraction below 1, for strategy sa only", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(
    parseTuneArgs([...base, "--strategy", "sa", "--remeasure-margin", "0.05"])
      .remeasureMargin,
    0.05,
  );
  assert.throws(
    () => parseTuneArgs([...base, "--strategy", "sa", "--remeasure-margin", "1"]),
    /--remeasure-margin must be a fraction below 1/,
  );
  assert.throws(
    () => parseTuneArgs([...base, "--remeasure-margin", "0.05"]),
    /--remeasure-margin: only strategy sa re-times its incumbent, not random/,
  );
});

Deno.test("tune --run needs --resume, and --db must name a file", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.throws(() => parseTuneArgs([...base, "--run", "2"]), /--run needs --resume/);
  assert.equal(parseTuneArgs(["--resume", "--run", "2"]).run, 2);
  assert.throws(() => parseTuneArgs(["--resume", "--run", "x"]), /--run must be an integer/);
  assert.throws(() => parseTuneArgs([...base, "--db", ""]), /--db must name/);
});

Deno.test("tune lists the flags given on the command line, for --resume to check", () => {
  const a = parseTuneArgs(["--resume", "--trials", "5", "--quiet", "--trials", "6"]);
  assert.deepEqual(a.given.sort(), ["quiet", "resume", "trials"]);
  assert.equal(a.trials, 6);
});

Deno.test("tune --help is a HelpRequest carrying the usage", () => {
  assert.throws(() => parseTuneArgs(["--help"]), (e: unknown) => {
    assert.ok(e instanceof HelpRequest);
    assert.match(e.message, /^usage: deno task tune/);
    return true;
  });
});

Deno.test("positiveInt and nonNegativeInt take whole numbers from their bound up and name the flag otherwise", () => {
  assert.equal(positiveInt("rounds", "3"), 3);
  assert.equal(nonNegativeInt("warmup", "0"), 0);
  assert.equal(nonNegativeInt("warmup", undefined, 1), 1);
  assert.throws(() => positiveInt("rounds", "0"), /--rounds must be a positive integer, got "0"/);
  assert.throws(() => nonNegativeInt("warmup", "-1"), /--warmup must be an integer >= 0, got "-1"/);
  assert.throws(() => nonNegativeInt("tune", "2.5"), UsageError);
});
