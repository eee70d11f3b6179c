import { test } from "node:test";
import assert from "node:assert/strict";
import { chooseToken, rawLogprob, support, topLogprobs } from "../../../src/engine/sampling/choose.ts";
import { sampleSeed, uniformAt } from "../../../src/engine/sampling/rng.ts";

function randomLogits(n: number, seed: number, spread = 3): Float32Array {
  const z = new Float32Array(n);
  for (let i = 0; i < n; i++) z[i] = (uniformAt(seed, i) - 0.5) * 2 * spread;
  return z;
}

function logSoftmax(z: Float32Array, T: number): number[] {
  const s = Array.from(z, (x) => x / T);
  const m = Math.max(...s);
  const lse = m + Math.log(s.reduce((a, x) => a + Math.exp(x - m), 0));
  return s.map((x) => x - lse);
}

test("temperature 0 takes the argmax (lowest id on ties) with the raw log-softmax", () => {
  const z = Float32Array.from([0.5, 2, -1, 2, 1]);
  const c = chooseToken(z, { temperature: 0, topK: -1, topP: 1 }, 0.99);
  assert.equal(c.token, 1);
  assert.ok(Math.abs(c.logprob - logSoftmax(z, 1)[1]) < 1e-12);
});

test("sampled logprobs are the temperature-scaled log-softmax; pairwise differences scale by 1/T", () => {
  const z = randomLogits(50, 3);
  const raw = logSoftmax(z, 1);
  for (const T of [0.3, 0.7, 1, 1.8]) {
    const scaled = logSoftmax(z, T);
    const seen: { token: number; logprob: number }[] = [];
    for (let step = 0; step < 40; step++) {
      const c = chooseToken(z, { temperature: T, topK: -1, topP: 1 }, uniformAt(11, step));
      assert.ok(Math.abs(c.logprob - scaled[c.token]) < 1e-9, `T=${T}: ${c.logprob} vs ${scaled[c.token]}`);
      seen.push(c);
    }
    // The cookbook's check (validate_temperature_logprobs): log p_T(i) - log p_T(j) = (log p_1(i) - log p_1(j)) / T.
    const [a, b] = [seen[0], seen.find((s) => s.token !== seen[0].token) ?? seen[1]];
    assert.ok(Math.abs(a.logprob - b.logprob - (raw[a.token] - raw[b.token]) / T) < 1e-9);
  }
});

test("draws follow the softmax: empirical frequencies match the probabilities", () => {
  const z = Float32Array.from([1, 0, -1, 0.5]);
  const p = logSoftmax(z, 0.8).map(Math.exp);
  const counts = [0, 0, 0, 0];
  const N = 20000;
  for (let i = 0; i < N; i++) counts[chooseToken(z, { temperature: 0.8, topK: -1, topP: 1 }, uniformAt(5, i)).token]++;
  counts.forEach((c, i) => assert.ok(Math.abs(c / N - p[i]) < 0.015, `token ${i}: ${c / N} vs ${p[i]}`));
});

test("top_k keeps exactly the k most likely tokens", () => {
  const z = randomLogits(200, 8);
  const order = Array.from(z.keys()).sort((a, b) => z[b] - z[a]);
  const allowed = new Set(order.slice(0, 5));
  assert.deepEqual(support(z, { temperature: 1, topK: 5, topP: 1 }), order.slice(0, 5));
  const seen = new Set<number>();
  for (let i = 0; i < 500; i++) seen.add(chooseToken(z, { temperature: 2, topK: 5, topP: 1 }, uniformAt(1, i)).token);
  assert.ok(
    [...seen].every((t) => allowed.has(t)),
    `sampled outside the top 5: ${[...seen]}`,
  );
  assert.equal(seen.size, 5, "a high temperature reaches every kept token");
  assert.equal(chooseToken(z, { temperature: 1, topK: 1, topP: 1 }, 0.999).token, order[0]);
});

test("top_p keeps the smallest prefix whose exclusive cumulative probability is below p", () => {
  const z = Float32Array.from([Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)]);
  assert.deepEqual(support(z, { temperature: 1, topK: -1, topP: 0.5 }), [0]);
  assert.deepEqual(support(z, { temperature: 1, topK: -1, topP: 0.7 }), [0, 1]);
  assert.deepEqual(support(z, { temperature: 1, topK: -1, topP: 0.81 }), [0, 1, 2]);
  // Many near-equal tokens land in one bucket; the rule still applies token by token.
  const flat = Float32Array.from({ length: 1000 }, (_, i) => 1 - i * 1e-6);
  assert.deepEqual(
    support(flat, { temperature: 1, topK: -1, topP: 0.0105 }),
    Array.from({ length: 11 }, (_, i) => i),
  );
  assert.deepEqual(support(z, { temperature: 1, topK: -1, topP: 0.01 }), [0], "the first token is always kept");
  // Large vocabulary: the candidate filter must not change the answer.
  const big = randomLogits(5000, 4, 6);
  const sorted = Array.from(big.keys()).sort((a, b) => big[b] - big[a]);
  const probs = logSoftmax(big, 1.3).map(Math.exp);
  let acc = 0;
  const expected: number[] = [];
  for (const id of sorted) {
    if (expected.length > 0 && acc >= 0.9) break;
    expected.push(id);
    acc += probs[id];
  }
  assert.deepEqual(
    support(big, { temperature: 1.3, topK: -1, topP: 0.9 }),
    [...expected].sort((a, b) => a - b),
  );
  // top-k then top-p renormalised over the k kept.
  assert.deepEqual(support(z, { temperature: 1, topK: 2, topP: 0.6 }), [0]);
  assert.deepEqual(support(z, { temperature: 1, topK: 2, topP: 0.7 }), [0, 1]);
});

test("prompt logprob helpers: raw log-softmax and sorted top-k", () => {
  const z = randomLogits(30, 2);
  const raw = logSoftmax(z, 1);
  assert.ok(Math.abs(rawLogprob(z, 7) - raw[7]) < 1e-9);
  const top = topLogprobs(z, 3);
  const order = Array.from(z.keys()).sort((a, b) => z[b] - z[a]);
  assert.deepEqual(
    top.map(([id]) => id),
    order.slice(0, 3),
  );
  top.forEach(([id, lp]) => assert.ok(Math.abs(lp - raw[id]) < 1e-9));
});

test("the RNG is a pure function of (seed, step) with sample i seeded s + i", () => {
  assert.equal(uniformAt(42, 3), uniformAt(42, 3));
  assert.notEqual(uniformAt(42, 3), uniformAt(43, 3));
  assert.notEqual(uniformAt(42, 3), uniformAt(42, 4));
  assert.equal(sampleSeed(42, 2), 44);
  let sum = 0;
  for (let i = 0; i < 10000; i++) {
    const u = uniformAt(2 ** 40 + 7, i);
    assert.ok(u >= 0 && u < 1);
    sum += u;
  }
  assert.ok(Math.abs(sum / 10000 - 0.5) < 0.02);
});
