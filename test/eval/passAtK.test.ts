import { test } from "node:test";
import assert from "node:assert/strict";
import { meanPassAtK, passAtK, reportedKs } from "../../src/eval/passAtK.ts";

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} != ${b}`);

test("pass@k matches 1 - C(n-c,k)/C(n,k) computed by hand", () => {
  // n=5, c=2, k=1: 1 - C(3,1)/C(5,1) = 1 - 3/5
  close(passAtK(5, 2, 1), 2 / 5);
  // n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
  close(passAtK(5, 2, 2), 7 / 10);
  // n=5, c=2, k=3: 1 - C(3,3)/C(5,3) = 1 - 1/10
  close(passAtK(5, 2, 3), 9 / 10);
  // n-c < k: some correct sample is always drawn
  close(passAtK(5, 2, 4), 1);
  // n=10, c=3, k=5: 1 - C(7,5)/C(10,5) = 1 - 21/252
  close(passAtK(10, 3, 5), 1 - 21 / 252);
  close(passAtK(4, 0, 2), 0);
  close(passAtK(4, 4, 1), 1);
  // pass@1 is the fraction correct
  close(passAtK(8, 3, 1), 3 / 8);
});

test("pass@k rejects impossible counts", () => {
  assert.throws(() => passAtK(4, 5, 1), /0 <= c <= n/);
  assert.throws(() => passAtK(4, 1, 5), /1 <= k <= n/);
  assert.throws(() => passAtK(0, 0, 1), /n=0/);
});

test("mean pass@k over examples and reported ks", () => {
  // (n=4,c=1,k=2): 1 - C(3,2)/C(4,2) = 1 - 3/6 = 0.5; (n=4,c=0): 0; (n=4,c=4): 1
  close(
    meanPassAtK(
      [
        { n: 4, c: 1 },
        { n: 4, c: 0 },
        { n: 4, c: 4 },
      ],
      2,
    ),
    1.5 / 3,
  );
  assert.deepEqual(reportedKs(1), [1]);
  assert.deepEqual(reportedKs(4), [1, 2, 4]);
  assert.deepEqual(reportedKs(6), [1, 2, 4, 6]);
  assert.equal(meanPassAtK([], 1), 0);
});
