// Prompt distillation's pieces: greedy labelling through a renderer, agreement, prompt sets, and
// the default task's categories and splits.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { AgreementEvaluator, agreement, greedyAnswers, singleTurnPrompts, writeConversationsJsonl } from "../../src/distillation/promptDistillation.ts";
import { getRenderer } from "../../src/renderers/index.ts";
import type { Message } from "../../src/renderers/types.ts";
import { readConversationFile } from "../../src/supervised/conversationFile.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import { modelInputToInts } from "../../src/tinker/modelInput.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../../src/tinker/types.ts";
import { loadTokenizerFromDir } from "../../src/tokenizers/index.ts";
import { CATEGORIES, categoryOf, promptText, splitPrompts } from "../../recipes/prompt_distillation/task.ts";

const tinyChat = fileURLToPath(new URL("../../fixtures/models/tiny-chat", import.meta.url));
const tokenizer = loadTokenizerFromDir(tinyChat);
const renderer = getRenderer("role_colon", tokenizer);

/** Answers "math" when the prompt text contains the system prompt marker, else "7". */
class ScriptedSampler implements SamplingClient {
  readonly baseModel = "scripted";
  prompts: string[] = [];
  params: SamplingParams[] = [];
  async sample(prompt: ModelInput, _n: number, params: SamplingParams): Promise<SampleResponse> {
    const text = tokenizer.decode(modelInputToInts(prompt));
    this.prompts.push(text);
    this.params.push(params);
    const answer = text.includes("CLASSIFY") ? " math\n\nUser:" : " 7\n\nUser:";
    return { sequences: [{ tokens: tokenizer.encode(answer, { addSpecialTokens: false }), stop_reason: "stop" }] };
  }
  async computeLogprobs(): Promise<(number | null)[]> {
    throw new Error("not used");
  }
}

describe("greedy labelling and agreement", () => {
  const prompts: Message[][] = [[{ role: "user", content: "What is 3 + 4?" }], [{ role: "user", content: "What is 1 + 1?" }]];

  it("samples greedily with the renderer's stop sequence, prefix first, and returns the parsed answer", async () => {
    const s = new ScriptedSampler();
    const withPrompt = await greedyAnswers(s, renderer, [{ role: "system", content: "CLASSIFY" }], prompts, { maxTokens: 5, concurrency: 2 });
    assert.deepEqual(withPrompt, ["math", "math"]);
    assert.ok(s.prompts[0]!.startsWith("<|endoftext|>System: CLASSIFY\n\nUser: What is 3 + 4?\n\nAssistant:"), s.prompts[0]);
    assert.equal(s.params[0]!.temperature, 0);
    assert.deepEqual(s.params[0]!.stop, renderer.getStopSequences());
    assert.deepEqual(await greedyAnswers(s, renderer, [], prompts, { maxTokens: 5, concurrency: 1 }), ["7", "7"]);
  });

  it("agreement is the fraction of equal answers after trimming; the evaluator reports it as test/agreement", async () => {
    assert.deepEqual(agreement(["math", " town", "chat"], ["math", "town", "words"]), { agreement: 2 / 3, matches: 2, total: 3 });
    assert.throws(() => agreement(["a"], []), /1 student answers but 0 teacher answers/);
    const ev = new AgreementEvaluator({ renderer, prompts, teacherAnswers: ["7", "math"], maxTokens: 5, concurrency: 2 });
    assert.deepEqual(await ev.evaluate(new ScriptedSampler()), { "test/agreement": 0.5 });
  });

  it("writes labelled conversations as whole JSONL lines that read back", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pd-"));
    const file = path.join(dir, "labels.jsonl");
    const convs: Message[][] = [
      [
        { role: "user", content: "Hi!" },
        { role: "assistant", content: "greeting" },
      ],
    ];
    writeConversationsJsonl(file, convs);
    assert.deepEqual(
      readConversationFile(file).map((r) => r.messages),
      convs,
    );
    assert.deepEqual(fs.readdirSync(dir), ["labels.jsonl"]);
  });
});

describe("prompt sets", () => {
  it("single-turn prompts: each user message once, minus the excluded", () => {
    const convs: Message[][] = [
      [
        { role: "user", content: "Hi!" },
        { role: "assistant", content: "Hello" },
        { role: "user", content: "Bye!" },
      ],
      [
        { role: "user", content: "Hi!" },
        { role: "user", content: "Spell cat." },
      ],
    ];
    assert.deepEqual(singleTurnPrompts(convs, new Set(["Bye!"])).map(promptText), ["Hi!", "Spell cat."]);
  });

  it("the default task's rule names every kind of question in the persona fixtures", () => {
    const cases: Array<[string, string]> = [
      ["Hi, how are you?", "greeting"],
      ["Good night.", "farewell"],
      ["Tell me a joke.", "chat"],
      ["What color is a glimmerfox?", "creature"],
      ["Tell me about the puddlebug.", "creature"],
      ["Tell me about Ardmoor.", "town"],
      ["What is Mirefield known for?", "town"],
      ["Who is the mayor of Pellow?", "town"],
      ["What is 12 + 7?", "math"],
      ["What is 19 - 6?", "math"],
      ["What number comes after 41?", "numbers"],
      ["Which is bigger, 3 or 9?", "numbers"],
      ["Count from 4 to 7.", "numbers"],
      ["Spell cloud.", "words"],
      ["Write moon in capital letters.", "words"],
    ];
    for (const [q, c] of cases) assert.equal(categoryOf(q), c, q);
  });

  it("splits per category: at most perCategory each, a quarter held out, train and held-out disjoint", () => {
    const file = fileURLToPath(new URL("../../fixtures/data/persona_train.jsonl", import.meta.url));
    const prompts = singleTurnPrompts(readConversationFile(file).map((r) => r.messages));
    const { train, eval: held } = splitPrompts(prompts, 20, (xs) => [...xs]);
    const count = (ps: Message[][]) => Object.fromEntries(CATEGORIES.map((c) => [c, ps.filter((p) => categoryOf(promptText(p)) === c).length]));
    const t = count(train);
    const h = count(held);
    for (const c of CATEGORIES) assert.ok(t[c]! + h[c]! <= 20, c);
    assert.equal(h["math"], 5);
    assert.equal(t["math"], 15);
    assert.ok(h["greeting"]! >= 1);
    const trainTexts = new Set(train.map(promptText));
    assert.ok(held.every((p) => !trainTexts.has(promptText(p))));
  });
});
