import assert from "node:assert/strict";
import { parseQueueUrl, QueueUrlError } from "./connection.ts";

Deno.test("parseQueueUrl() reads host, port, database and password, and hides the password", () => {
  const c = parseQueueUrl("redis://:s3cret@10.0.0.5:6390/2");
  assert.equal(c.host, "10.0.0.5");
  assert.equal(c.port, 6390);
  assert.equal(c.db, 2);
  assert.equal(c.password, "s3cret");
  assert.equal(c.tls, undefined);
  assert.doesNotMatch(c.display, /s3cret/);
});

Deno.test("parseQueueUrl() turns TLS on for rediss:// and defaults the port to 6379", () => {
  const c = parseQueueUrl("rediss://queue.lab");
  assert.deepEqual(c.tls, {});
  assert.equal(c.port, 6379);
});

Deno.test("parseQueueUrl() refuses another scheme, a bad path and a non-URL, naming --queue", () => {
  assert.throws(() => parseQueueUrl("http://x:1"), /--queue http:\/\/x:1: scheme/);
  assert.throws(() => parseQueueUrl("redis://x:1/abc"), /database number/);
  assert.throws(() => parseQueueUrl("localhost:6379"), QueueUrlError);
});
