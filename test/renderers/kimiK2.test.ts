// Kimi K2 has no tokenizer package here: a synthetic byte-level tokenizer with Kimi's special
// tokens stands in (one token per byte, so tokens compare exactly with the documented strings).
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer } from "../../src/renderers/index.ts";
import type { Message } from "../../src/renderers/types.ts";
import { tokensOf } from "./helpers.ts";
import { kimiTokenizer } from "./setups.ts";
import { WEATHER_TOOL } from "./conversations.ts";

const SYS = "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>";
const enc = (s: string): number[] => kimiTokenizer().encode(s, { addSpecialTokens: false });

test("kimi_k2: default system prompt, roles and generation prompt", () => {
  const r = getRenderer("kimi_k2", kimiTokenizer());
  const prompt = tokensOf(r.buildGenerationPrompt([{ role: "user", content: "Hi" }]));
  assert.deepEqual(prompt, enc(`${SYS}<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>`));
  // A given system prompt replaces the default.
  const own = tokensOf(
    r.buildGenerationPrompt([
      { role: "system", content: "Be terse." },
      { role: "user", content: "Hi" },
    ]),
  );
  assert.deepEqual(
    own,
    enc("<|im_system|>system<|im_middle|>Be terse.<|im_end|><|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>"),
  );
});

test("kimi_k2: history gets an empty think block, the produced turn keeps its reasoning", () => {
  const r = getRenderer("kimi_k2", kimiTokenizer());
  const convo: Message[] = [
    { role: "user", content: "Hi" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "greet" },
        { type: "text", text: "Hello" },
      ],
    },
    { role: "user", content: "Color?" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "pick" },
        { type: "text", text: "Blue" },
      ],
    },
  ];
  const { modelInput, weights } = r.buildSupervisedExample(convo);
  const tokens = tokensOf(modelInput);
  const expected =
    `${SYS}<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|><think></think>Hello<|im_end|>` +
    `<|im_user|>user<|im_middle|>Color?<|im_end|><|im_assistant|>assistant<|im_middle|><think>pick</think>Blue<|im_end|>`;
  assert.deepEqual(tokens, enc(expected));
  assert.deepEqual(
    tokens.filter((_, i) => weights[i]! > 0),
    enc("<think>pick</think>Blue<|im_end|>"),
  );
});

test("kimi_k2: tool declaration, calls and results", () => {
  const r = getRenderer("kimi_k2", kimiTokenizer());
  const convo: Message[] = [
    ...r.createConversationPrefixWithTools([WEATHER_TOOL]),
    { role: "user", content: "Weather?" },
    {
      role: "assistant",
      content: [{ type: "thinking", thinking: "call it" }],
      tool_calls: [{ type: "function", id: "functions.get_weather:0", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
    },
    { role: "tool", name: "get_weather", tool_call_id: "functions.get_weather:0", content: "18C" },
  ];
  const prompt = tokensOf(r.buildGenerationPrompt(convo));
  const declared =
    '[{"function":{"description":"Get the current weather for a city","name":"get_weather","parameters":{"properties":{"city":{"description":"City name","type":"string"},"unit":{"enum":["c","f"],"type":"string"}},"required":["city"],"type":"object"}},"type":"function"}]';
  assert.deepEqual(
    prompt,
    enc(
      `<|im_system|>tool_declare<|im_middle|>${declared}<|im_end|>${SYS}<|im_user|>user<|im_middle|>Weather?<|im_end|>` +
        `<|im_assistant|>assistant<|im_middle|><think>call it</think><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0` +
        `<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>` +
        `<|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:0\n18C<|im_end|><|im_assistant|>assistant<|im_middle|>`,
    ),
  );
  // The call turn is part of the produced turn (after the last assistant message without calls), so it keeps its reasoning.
  const parsed = r.parseResponse(
    enc(
      '<think>x</think>Sure<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:3<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
    ),
  );
  assert.equal(parsed.termination, "stop_sequence");
  assert.deepEqual(parsed.message.content, [
    { type: "thinking", thinking: "x" },
    { type: "text", text: "Sure" },
  ]);
  assert.deepEqual(parsed.message.tool_calls, [
    { type: "function", id: "functions.get_weather:3", function: { name: "get_weather", arguments: '{"city": "Oslo"}' } },
  ]);
  const dangling = r.parseResponse(enc("ok<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|im_end|>"));
  assert.match(dangling.message.unparsed_tool_calls?.[0]?.error ?? "", /^unterminated tool block/);
});

test("kimi_k2: a call with a malformed id or no argument marker is reported, not dropped; good calls beside it still parse", () => {
  const r = getRenderer("kimi_k2", kimiTokenizer());
  const section = (calls: string): number[] => enc(`<|tool_calls_section_begin|>${calls}<|tool_calls_section_end|><|im_end|>`);
  const good = '<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Oslo"}<|tool_call_end|>';
  const badId = '<|tool_call_begin|>get_weather<|tool_call_argument_begin|>{"city":"Rome"}<|tool_call_end|>';
  const noMarker = '<|tool_call_begin|>functions.get_weather:1 {"city":"Bern"}<|tool_call_end|>';
  const parsed = r.parseResponse(section(badId + good + noMarker));
  assert.deepEqual(
    parsed.message.tool_calls?.map((c) => c.id),
    ["functions.get_weather:0"],
  );
  const errors = parsed.message.unparsed_tool_calls?.map((u) => u.error) ?? [];
  assert.equal(errors.length, 2);
  assert.match(errors[0]!, /id "get_weather" is not of the form functions\.NAME:INDEX/);
  assert.match(errors[1]!, /no <\|tool_call_argument_begin\|>/);
  assert.equal(parsed.message.unparsed_tool_calls?.[0]?.raw_text, badId);
});

test("kimi_k2: multi-turn all_assistant_messages splits at user messages", () => {
  const r = getRenderer("kimi_k2", kimiTokenizer());
  const convo: Message[] = [
    { role: "user", content: "a" },
    { role: "assistant", content: "b" },
    { role: "user", content: "c" },
    { role: "assistant", content: "d" },
  ];
  const examples = r.buildSupervisedExamples(convo, "all_assistant_messages");
  assert.equal(examples.length, 2);
  const dec = (i: number): string => kimiTokenizer().decode(tokensOf(examples[i]!.modelInput));
  assert.ok(dec(0).endsWith("<think></think>b<|im_end|>"));
  assert.ok(dec(1).endsWith("<think></think>d<|im_end|>"));
});
