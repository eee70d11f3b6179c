// DeepSeek V3.1 formats beyond what the shipped V3 template can check: thinking mode and tools.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer } from "../../src/renderers/index.ts";
import type { Message } from "../../src/renderers/types.ts";
import { deepseekV31Tokenizer, tokensOf } from "./helpers.ts";
import { WEATHER_TOOL } from "./conversations.ts";

const tok = deepseekV31Tokenizer;
const dec = (t: number[]): string => tok().decode(t);

test("deepseekv3 (non-thinking): </think> in the untrained header, reasoning dropped", () => {
  const r = getRenderer("deepseekv3", tok());
  const convo: Message[] = [
    { role: "system", content: "Be brief" },
    { role: "user", content: "Hi" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm" },
        { type: "text", text: "Hello" },
      ],
    },
  ];
  const { modelInput, weights } = r.buildSupervisedExample(convo);
  const tokens = tokensOf(modelInput);
  assert.equal(dec(tokens), "<｜begin▁of▁sentence｜>Be brief<｜User｜>Hi<｜Assistant｜></think>Hello<｜end▁of▁sentence｜>");
  assert.equal(dec(tokens.filter((_, i) => weights[i]! > 0)), "Hello<｜end▁of▁sentence｜>");
});

test("deepseekv3_thinking: prompt prefills <think>, history closes with </think> and loses reasoning", () => {
  const r = getRenderer("deepseekv3_thinking", tok());
  const convo: Message[] = [
    { role: "user", content: "Hi" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "greet" },
        { type: "text", text: "Hello" },
      ],
    },
    { role: "user", content: "Bye" },
  ];
  assert.equal(
    dec(tokensOf(r.buildGenerationPrompt(convo))),
    "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜></think>Hello<｜end▁of▁sentence｜><｜User｜>Bye<｜Assistant｜><think>",
  );
  // A sampled response lacks the prefilled <think>; parsing restores it.
  const parsed = r.parseResponse(tok().encode("ok then</think>Goodbye<｜end▁of▁sentence｜>", { addSpecialTokens: false }));
  assert.deepEqual(parsed.message.content, [
    { type: "thinking", thinking: "ok then" },
    { type: "text", text: "Goodbye" },
  ]);
});

test("deepseekv3: tool declaration, calls and results in V3.1's format", () => {
  const r = getRenderer("deepseekv3", tok());
  const convo: Message[] = [
    ...r.createConversationPrefixWithTools([WEATHER_TOOL], "Sys."),
    { role: "user", content: "Weather?" },
    { role: "assistant", content: "", tool_calls: [{ type: "function", id: null, function: { name: "get_weather", arguments: '{"city": "Paris"}' } }] },
    { role: "tool", content: "18C" },
    { role: "assistant", content: "18C." },
  ];
  const text = dec(tokensOf(r.buildSupervisedExample(convo).modelInput));
  assert.ok(
    text.startsWith(
      '<｜begin▁of▁sentence｜>Sys.\n\n## Tools\nYou have access to the following tools:\n\n### get_weather\nDescription: Get the current weather for a city\n\nParameters: {"type": "object"',
    ),
  );
  assert.ok(
    text.endsWith(
      '<｜User｜>Weather?<｜Assistant｜></think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>' +
        "<｜tool▁output▁begin｜>18C<｜tool▁output▁end｜>18C.<｜end▁of▁sentence｜>",
    ),
    text,
  );
});

test("deepseekv3: a later system message and an unknown role are errors", () => {
  const r = getRenderer("deepseekv3", tok());
  assert.throws(
    () =>
      r.buildGenerationPrompt([
        { role: "user", content: "a" },
        { role: "system", content: "b" },
      ]),
    /system message at the start/,
  );
  assert.throws(() => r.buildGenerationPrompt([{ role: "narrator", content: "a" }]), /unsupported role "narrator"/);
});
