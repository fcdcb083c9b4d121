import assert from "node:assert/strict";
import { PARENT_POLL_MS, watchStop } from "./stop.ts";

Deno.test("watchStop aborts once the parent process id changes, and reports it once", async () => {
  let parent = 100;
  const stops: string[] = [];
  const hard: [string, number][] = [];
  const watch = watchStop(
    { onStop: (why) => stops.push(why), onHardStop: (why, code) => hard.push([why, code]) },
    { ppid: () => parent, watchParent: true },
  );
  try {
    await new Promise((r) => setTimeout(r, PARENT_POLL_MS * 2));
    assert.equal(watch.signal.aborted, false, "same parent: no stop");
    parent = 1;
    const deadline = Date.now() + 60_000;
    while (!watch.signal.aborted && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, PARENT_POLL_MS));
    }
    assert.deepEqual(stops, ["the parent process 100 exited"]);
    assert.equal(watch.exitCode(), 143);
    assert.equal(watch.reason(), "the parent process 100 exited");
    assert.deepEqual(hard, [], "the parent is reported once");
  } finally {
    watch.dispose();
  }
});

Deno.test("watchStop does not watch the parent unless asked", async () => {
  let parent = 100;
  const watch = watchStop({ onStop: () => {}, onHardStop: () => {} }, {
    ppid: () => parent,
    watchParent: false,
  });
  try {
    parent = 1;
    await new Promise((r) => setTimeout(r, PARENT_POLL_MS * 3));
    assert.equal(watch.signal.aborted, false);
  } finally {
    watch.dispose();
  }
});
