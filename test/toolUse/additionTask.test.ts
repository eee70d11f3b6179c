import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { Prng } from "../../src/data/synthetic/prng.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { loadTokenizerFromDir } from "../../src/tokenizers/index.ts";
import { AdditionToolGroupBuilder, gradeAddition, sampleProblem, warmupDatum, warmupRows, warmupTranscript } from "../../src/toolUse/additionTask.ts";
import { simpleRolloutConfig } from "../../src/toolUse/rolloutLimits.ts";
import { ROOT, tokensOf } from "../renderers/helpers.ts";

const tokenizer = loadTokenizerFromDir(join(ROOT, "fixtures", "models", "tiny-chat"));
const renderer = getRenderer("role_colon", tokenizer);

test("problems have the asked digits and grading wants the exact result", () => {
  const rng = new Prng(3);
  for (let i = 0; i < 50; i++) {
    const p = sampleProblem(rng, 3);
    assert.ok(p.a >= 100 && p.a <= 999 && p.b >= 100 && p.b <= 999);
  }
  assert.equal(gradeAddition({ a: 123, b: 456 }, { role: "assistant", content: "579" }), 1);
  assert.equal(gradeAddition({ a: 123, b: 456 }, { role: "assistant", content: "578" }), 0);
  // The first number counts, in any of the grader's forms: a thousands separator, not a prefix of a decimal.
  assert.equal(gradeAddition({ a: 567, b: 468 }, { role: "assistant", content: "The sum is 1,035. (567 + 468)" }), 1);
  assert.equal(gradeAddition({ a: 123, b: 456 }, { role: "assistant", content: "579.5" }), 0);
  for (let i = 0; i < 50; i++) {
    const p = sampleProblem(rng, 3, "-");
    assert.ok(p.a <= 999 && p.b >= 100 && p.a - p.b >= 10 && p.a - p.b <= 99, JSON.stringify(p));
    assert.equal(gradeAddition(p, { role: "assistant", content: String(p.a - p.b) }), 1);
  }
});

test("a warm-up transcript, replayed as policy turns, is exactly what the env parses, runs and rewards", async () => {
  const problem = { a: 836, b: 347 };
  const transcript = warmupTranscript(renderer, problem, true);
  const [env] = await new AdditionToolGroupBuilder(renderer, problem, 1, simpleRolloutConfig(), 40).makeEnvs();
  const first = await env!.initialObservation();
  assert.ok(!("reward" in first));
  // The prompt the env builds is the warm-up transcript's prefix up to the first assistant turn.
  assert.deepEqual(tokensOf(first.observation), tokensOf(renderer.buildGenerationPrompt(transcript.slice(0, 2))));
  const say = (text: string): number[] => tokenizer.encode(text, { addSpecialTokens: false });
  const call = await env!.step(say(` ${String(transcript[2]!.content)}`), { stopReason: "stop" });
  assert.equal(call.episodeDone, false);
  assert.equal(call.messages!.at(-1)!.content, "1183");
  assert.deepEqual(tokensOf(call.nextObservation), tokensOf(renderer.buildGenerationPrompt(transcript.slice(0, 4))));
  const done = await env!.step(say(" 1183\n\nUser:"), { stopReason: "stop" });
  assert.deepEqual([done.reward, done.metrics!["called_tool"], done.metrics!["correct"]], [1, 1, 1]);
});

test("the warm-up trains every assistant token but, where the decision is not demonstrated, the reply's opening token", () => {
  const messages = warmupTranscript(renderer, { a: 512, b: 409 }, true);
  const full = renderer.buildSupervisedExample(messages, "all_assistant_messages");
  const tokens = tokensOf(full.modelInput);
  const shown = warmupDatum(renderer, { messages, trainDecision: true });
  const hidden = warmupDatum(renderer, { messages, trainDecision: false });
  const weightsOf = (d: typeof shown): number[] => Array.from(d.loss_fn_inputs["weights"]!.data);
  const targetsOf = (d: typeof shown): number[] => Array.from(d.loss_fn_inputs["target_tokens"]!.data);
  assert.deepEqual(targetsOf(shown), targetsOf(hidden));
  const diff = weightsOf(shown).flatMap((w, i) => (w !== weightsOf(hidden)[i] ? [i] : []));
  assert.equal(diff.length, 1, "exactly one token differs");
  // Datums are shifted by one (input i predicts target i): the untrained target is the first token of the call.
  const at = diff[0]!;
  assert.equal(
    weightsOf(shown).findIndex((w) => w > 0),
    at,
  );
  assert.equal(tokenizer.decode([targetsOf(shown)[at]!]), tokenizer.decode([tokens[at + 1]!]));
  assert.ok(` ${String(messages[2]!.content)}`.startsWith(tokenizer.decode([targetsOf(shown)[at]!])), "the decision token opens the call");
  // The call's arguments and the copied answer stay trained.
  assert.ok(weightsOf(hidden).filter((w) => w > 0).length >= 10);
});

test("warm-up rows: tool share, and the decision trained on every direct answer and on the decision share of tool transcripts", () => {
  const rows = warmupRows({ renderer, examples: 2000, batchSize: 10, digits: 3, toolShare: 0.8, decisionShare: 0.1, op: "+", seed: 4 });
  const usesTool = (r: (typeof rows)[number]): boolean => r.messages.some((m) => m.role === "tool");
  const tool = rows.filter(usesTool);
  const direct = rows.filter((r) => !usesTool(r));
  assert.ok(Math.abs(tool.length / rows.length - 0.8) < 0.04, `${tool.length}`);
  assert.ok(direct.every((r) => r.trainDecision));
  const shownShare = tool.filter((r) => r.trainDecision).length / tool.length;
  assert.ok(Math.abs(shownShare - 0.1) < 0.03, `${shownShare}`);
  // Deterministic in the seed.
  assert.deepEqual(warmupRows({ renderer, examples: 50, batchSize: 10, digits: 3, toolShare: 0.8, decisionShare: 0.1, op: "+", seed: 4 }), rows.slice(0, 50));
});
