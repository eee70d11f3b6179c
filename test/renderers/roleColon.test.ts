// role_colon for base models: format and the parse termination cases of docs/cookbook-parity.md#base-model-role-colon-format.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer } from "../../src/renderers/index.ts";
import { packagedTokenizer, tokensOf } from "./helpers.ts";

const tok = () => packagedTokenizer("llama3");
const enc = (s: string): number[] => tok().encode(s, { addSpecialTokens: false });

test("role_colon: SFT example trains ' 4⏎⏎User:' and the prompt ends at 'Assistant:'", () => {
  const r = getRenderer("role_colon", tok());
  const convo = [
    { role: "user", content: "What is 2+2?" },
    { role: "assistant", content: "4" },
  ];
  const { modelInput, weights } = r.buildSupervisedExample(convo);
  const tokens = tokensOf(modelInput);
  assert.equal(tok().decode(tokens), "<|begin_of_text|>User: What is 2+2?\n\nAssistant: 4\n\nUser:");
  assert.equal(tok().decode(tokens.filter((_, i) => weights[i]! > 0)), " 4\n\nUser:");
  assert.equal(tok().decode(tokensOf(r.buildGenerationPrompt(convo.slice(0, 1)))), "<|begin_of_text|>User: What is 2+2?\n\nAssistant:");
  assert.deepEqual(r.getStopSequences(), ["\n\nUser:"]);
  assert.throws(() => r.createConversationPrefixWithTools([]), /does not support tool calling/);
});

test("role_colon: parse terminations", () => {
  const r = getRenderer("role_colon", tok());
  const eos = tok().eosTokenId!;
  const cases: [number[], string, string][] = [
    [enc(" 4\n\nUser:"), "4", "stop_sequence"],
    [[...enc(" 4"), eos], "4", "eos"],
    [enc(" 4 and"), "4 and", "malformed"],
    [[...enc(" 4\n\nUser:"), eos], "4", "malformed"],
    [enc(" 4\n\nUser: hi\n\nUser:"), "4", "malformed"],
  ];
  for (const [tokens, content, termination] of cases) {
    const parsed = r.parseResponse(tokens);
    assert.equal(parsed.message.content, content);
    assert.equal(parsed.termination, termination, JSON.stringify(tok().decode(tokens)));
  }
});
