import { test } from "node:test";
import assert from "node:assert/strict";
import { TinkerMessageCompleter, TinkerTokenCompleter, requireLogprobs } from "../../src/completers.ts";
import { mixSeed } from "../../src/random/seeds.ts";
import type { RLRenderer } from "../../src/renderers/policyRenderer.ts";
import { FakeSamplingClient, ints } from "./fakes.ts";

test("TinkerTokenCompleter returns tokens, logprobs and stop reason, capping max_tokens", async () => {
  const s = new FakeSamplingClient(() => ({ tokens: [4, 5], stop_reason: "length" }), -0.25);
  const c = new TinkerTokenCompleter(s, 16, 0.7);
  const out = await c.complete(ints([1, 2, 3]), [0]);
  assert.deepEqual(out, { tokens: [4, 5], logprobs: [-0.25, -0.25], stopReason: "length" });
  assert.deepEqual(s.params[0], { stop: [0], max_tokens: 16, temperature: 0.7 });
  await c.complete(ints([1]), ["\n\nUser:"], { maxTokens: 4 });
  assert.equal(s.params[1].max_tokens, 4, "a per-call budget below the completer's cap wins");
  await c.complete(ints([1]), [0], { maxTokens: 99 });
  assert.equal(s.params[2].max_tokens, 16);
  const windowed = new TinkerTokenCompleter(s, 16, 1, 10);
  await windowed.complete(ints([1, 2, 3, 4, 5, 6]), [0]);
  assert.equal(s.params[3].max_tokens, 4, "prompt (6) + generation must fit the 10-token window");
  await assert.rejects(windowed.complete(ints(Array.from({ length: 10 }, (_, i) => i)), [0]), /no room for generation/);
});

test("requireLogprobs rejects actions without usable logprobs", () => {
  assert.throws(() => requireLogprobs({ tokens: [1], logprobs: null, stopReason: "stop" }), /no logprobs/);
  assert.throws(() => requireLogprobs({ tokens: [1, 2], logprobs: [-1], stopReason: "stop" }), /2 tokens but 1 logprobs/);
});

test("TinkerMessageCompleter renders, samples with the renderer's stop, and parses", async () => {
  const renderer: RLRenderer = {
    buildGenerationPrompt: (messages) => ints(messages.map((m) => (typeof m.content === "string" ? m.content.length : 0))),
    getStopSequences: () => [99],
    parseResponse: (tokens) => ({ message: { role: "assistant", content: tokens.filter((t) => t !== 99).join(",") }, termination: "stop_sequence" }),
  };
  const s = new FakeSamplingClient(() => ({ tokens: [7, 8, 99] }));
  const reply = await new TinkerMessageCompleter(s, renderer, 32).complete([{ role: "user", content: "hello" }]);
  assert.deepEqual(reply, { role: "assistant", content: "7,8" });
  assert.deepEqual(s.prompts[0], [5]);
  assert.deepEqual(s.params[0], { stop: [99], max_tokens: 32, temperature: 1 });
});

test("TinkerMessageCompleter with a seed seeds every call, and its forks draw their own streams", async () => {
  const renderer: RLRenderer = {
    buildGenerationPrompt: () => ints([1]),
    getStopSequences: () => [99],
    parseResponse: (tokens) => ({ message: { role: "assistant", content: tokens.join(",") }, termination: "stop_sequence" }),
  };
  const s = new FakeSamplingClient(() => ({ tokens: [7] }));
  const seeded = new TinkerMessageCompleter(s, renderer, 8, { seed: 3 });
  await seeded.complete([]);
  await seeded.complete([]);
  assert.deepEqual(
    s.params.map((p) => p.seed),
    [mixSeed(3, 0), mixSeed(3, 1)],
  );
  const a = seeded.fork(1);
  const b = seeded.fork(2);
  await a.complete([]);
  await b.complete([]);
  await seeded.fork(1).complete([]);
  assert.deepEqual(
    s.params.slice(2).map((p) => p.seed),
    [mixSeed(mixSeed(3, 1), 0), mixSeed(mixSeed(3, 2), 0), mixSeed(mixSeed(3, 1), 0)],
  );
  const unseeded = new TinkerMessageCompleter(s, renderer, 8);
  assert.equal(unseeded.fork(1), unseeded, "an unseeded completer has no streams to fork");
  await unseeded.complete([]);
  assert.equal(s.params.at(-1)?.seed, undefined);
});
