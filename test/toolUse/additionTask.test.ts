import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { Prng } from "../../src/data/synthetic/prng.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { loadTokenizerFromDir } from "../../src/tokenizers/index.ts";
import { AdditionToolGroupBuilder, gradeAddition, sampleProblem, warmupTranscript } from "../../src/toolUse/additionTask.ts";
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
  assert.equal(gradeAddition({ a: 12, b: 3, op: "*" }, { role: "assistant", content: "36" }), 1);
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
