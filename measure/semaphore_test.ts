import assert from "node:assert/strict";
import { Semaphore } from "./semaphore.ts";

Deno.test("Semaphore never lets more than its permits run at once", async () => {
  const limit = new Semaphore(2);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  await Promise.all(Array.from({ length: 6 }, (_, i) =>
    limit.use(async () => {
      running++;
      peak = Math.max(peak, running);
      order.push(i);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
    })));
  assert.equal(peak, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5]);
});
