/**
 * `scripts/gpu_session.sh`: stage selection, bad arguments, and what each
 * stage does without a GPU (says so, writes `{"gpu": false}`, exits 0). The
 * bundle's copy of the script is run offline in `tests/bundle_test.ts`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { probeCudaDevice } from "../measure/cuda_probe.ts";

const SCRIPT = fileURLToPath(new URL("../scripts/gpu_session.sh", import.meta.url));
const dec = new TextDecoder();

async function session(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command("bash", {
    args: [SCRIPT, ...args],
    env: { OUT: "", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("gpu_session.sh --dry-run runs the stages named, in the order named, and nothing else", async () => {
  const work = await Deno.makeTempDir({ prefix: "tb-session-" });
  try {
    const r = await session(["--stage", "conv,tests,tune1024", "--dry-run", "--work", work]);
    assert.equal(r.code, 0, r.stderr);
    const stages = r.stdout.trim().split("\n").map((l) => l.split(":")[0]);
    assert.deepEqual(stages, ["conv", "tests", "tune1024"]);
    assert.match(
      r.stdout,
      /^conv: timeout 480s .* --workload conv2d --shape 1,64,56,56,64,3,3,1,1 /m,
    );
    assert.match(
      r.stdout,
      /^tune1024: .* --shape 1024,1024,1024 --trials 300 --strategy ansor .* --math fp32$/m,
    );
    assert.match(r.stdout, /^conv: .* --math fp32$/m);
    assert.match(r.stdout, /^tests: deno test .*tests\/gpu_gemm_ptx_test\.ts/m);
    // A tuning stage gets what the call has left, less 30 s for its last round.
    const short = await session([
      "--stage",
      "tune4096",
      "--dry-run",
      "--work",
      work,
      "--call-seconds",
      "300",
    ]);
    // (less the seconds the script itself has run: 270 on an idle machine, a little less under load).
    const limit = short.stdout.match(
      /^tune4096: timeout (\d+)s .* --shape 4096,4096,4096 --trials 500 /,
    );
    assert.ok(limit, short.stdout);
    assert.ok(+limit[1] <= 270 && +limit[1] >= 240, `limit ${limit[1]} s`);
    // The FP32 target is tuned on FP32 kernels only, the TF32 one on TF32 tensor cores.
    const tf32 = await session(["--stage", "tune4096,tune4096tf32", "--dry-run", "--work", work]);
    assert.match(tf32.stdout, /^tune4096: .* --trials 500 .* --math fp32$/m);
    assert.match(
      tf32.stdout,
      /^tune4096tf32: .* --shape 4096,4096,4096 --trials 300 .* --math tf32$/m,
    );
    const again = await session([
      "--stage",
      "peers",
      "--dry-run",
      "--work",
      work,
      "--seconds",
      "60",
    ]);
    assert.deepEqual(again.stdout.trim().split("\n").map((l) => l.split(":")[0]), ["peers"]);
    // Nothing ran: no database, no result.
    assert.deepEqual([...Deno.readDirSync(join(work, "out"))], []);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("gpu_session.sh refuses a bad stage, a bad --seconds and an unknown flag with exit 2", async () => {
  for (
    const [args, why] of [
      [["--stage", "tune"], /^gpu_session: --stage: unknown stage "tune"/],
      [[], /^gpu_session: --stage takes one or more of/],
      [["--stage", "tests", "--seconds", "0"], /^gpu_session: --seconds takes a whole number/],
      [["--stage", "conv", "--call-seconds", "1m"], /^gpu_session: --call-seconds takes a whole/],
      [["--stage", "tests", "--fast"], /^gpu_session: unknown argument --fast/],
    ] as const
  ) {
    const r = await session([...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, why);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
});

const device = await probeCudaDevice();

Deno.test({
  name: "without a GPU, peers and the tuning stages say so, write gpu:false and exit 0",
  ignore: device.ok || !device.built, // with a GPU they would tune; without nvcc nothing probes
  async fn() {
    const work = await Deno.makeTempDir({ prefix: "tb-session-" });
    try {
      const out = join(work, "results");
      const r = await session(["--stage", "peers,tune4096,tune1024,conv", "--work", work], {
        OUT: out,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^gpu_session: no GPU: no CUDA (driver|device)/m);
      for (const stage of ["peers", "tune4096", "tune1024", "conv"]) {
        assert.match(
          r.stderr,
          new RegExp(`^gpu_session: ${stage}: no GPU \\(.*\\); skipped$`, "m"),
        );
        const j = JSON.parse(await Deno.readTextFile(join(out, `${stage}.json`)));
        assert.deepEqual([j.stage, j.gpu], [stage, false]);
        assert.match(j.message, /^no CUDA (driver|device)/);
      }
      assert.match(await Deno.readTextFile(join(out, "device.txt")), /"ok":false/);
      // Nothing was tuned: no database.
      assert.ok(![...Deno.readDirSync(work)].some((e) => e.name.endsWith(".db")));
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  },
});
