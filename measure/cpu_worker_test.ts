import assert from "node:assert/strict";
import { childDenoArgs } from "./deno_child.ts";
import { readLines } from "./lines.ts";
import { WORKER_READY } from "./protocol.ts";
import { WORKER_PATH } from "./cpu_worker_process.ts";

Deno.test("worker answers bad requests with errors and exits when stdin closes", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: childDenoArgs(WORKER_PATH),
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = readLines(child.stdout);
  const next = async () => (await lines.next()).value;
  const send = (text: string) => writer.write(new TextEncoder().encode(`${text}\n`));
  try {
    assert.equal(await next(), WORKER_READY);
    await send("this is not json");
    const parseError = JSON.parse(await next());
    assert.equal(parseError.id, null);
    assert.equal(parseError.errorKind, "runtime_error");
    assert.deepEqual(parseError.times, []);
    await send(JSON.stringify({ id: 5, artifact: "/nonexistent.so" }));
    const badRequest = JSON.parse(await next());
    assert.equal(badRequest.id, 5);
    assert.equal(badRequest.errorKind, "runtime_error");
    assert.match(badRequest.error, /bad request: reference must be a string/);
  } finally {
    await writer.close();
    for await (const _ of lines) { /* drain */ }
  }
  const status = await child.status;
  assert.equal(status.code, 0);
});
