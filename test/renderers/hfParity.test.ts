// Renderers against the models' own chat templates (tokenizer_config.json's chat_template rendered
// with @huggingface/jinja), token for token, plus the places where the cookbook diverges on purpose.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer } from "../../src/renderers/index.ts";
import type { Message } from "../../src/renderers/types.ts";
import { basic, multiTurn, upTo, WEATHER_TOOL, withSystem, withThinking, withToolCall } from "./conversations.ts";
import { applyChatTemplate, explainDiff, openai, packagedTokenizer, tokensOf, type PackagedTokenizer } from "./helpers.ts";

function assertSameTokens(tokName: PackagedTokenizer, ours: number[], ref: number[], what: string): void {
  const tok = packagedTokenizer(tokName);
  assert.deepEqual(ours, ref, `${what}: ${explainDiff(tok, ours, ref)}`);
}

function refTokens(tokName: PackagedTokenizer, text: string): number[] {
  return packagedTokenizer(tokName).encode(text, { addSpecialTokens: false });
}

interface Case {
  tokenizer: PackagedTokenizer;
  renderer: string;
  extra?: Record<string, unknown>;
  /** Turns the template's text into what the cookbook renders, where it diverges on purpose. */
  adjust?: (text: string) => string;
}

const GENERATION_CASES: Case[] = [
  { tokenizer: "llama3", renderer: "llama3" },
  { tokenizer: "llama3_1", renderer: "llama3" },
  { tokenizer: "qwen3", renderer: "qwen3" },
  { tokenizer: "qwen3", renderer: "qwen3_disable_thinking", extra: { enable_thinking: false } },
  // The 2507 Instruct template is Qwen3's without <think>; the generation prompt is the same.
  { tokenizer: "qwen3", renderer: "qwen3_instruct" },
  // The shipped template is DeepSeek-V3's; V3.1 (what deepseekv3 targets) differs only by the
  // non-thinking "</think>" right after every <｜Assistant｜>.
  {
    tokenizer: "deepseek_v3",
    renderer: "deepseekv3",
    adjust: (t) => t.replaceAll("<｜Assistant｜>", "<｜Assistant｜></think>"),
  },
];

const PROMPT_CONVERSATIONS: [string, Message[]][] = [
  ["basic", basic],
  ["with system prompt", withSystem],
  ["multi-turn", upTo(multiTurn, 6)],
  ["with thinking in history", upTo(withThinking, 3)],
];

for (const c of GENERATION_CASES) {
  for (const [convName, convo] of PROMPT_CONVERSATIONS) {
    // Llama 3 has no reasoning format; its renderer refuses thinking parts (tested elsewhere).
    if (c.renderer === "llama3" && convName.includes("thinking")) continue;
    test(`generation prompt ${c.renderer} (${c.tokenizer}) == chat template: ${convName}`, () => {
      const tok = packagedTokenizer(c.tokenizer);
      const r = getRenderer(c.renderer, tok);
      const ours = tokensOf(r.buildGenerationPrompt(convo));
      let text = applyChatTemplate(tok, openai(r, convo), { addGenerationPrompt: true, extra: c.extra ?? {} });
      if (c.adjust) text = c.adjust(text);
      assertSameTokens(c.tokenizer, ours, refTokens(c.tokenizer, text), `${c.renderer}/${convName}`);
    });
  }
}

const SUPERVISED_CASES: Case[] = [
  // Llama 3's original template ignores add_generation_prompt and always ends with the assistant header.
  {
    tokenizer: "llama3",
    renderer: "llama3",
    adjust: (t) => t.replace(/<\|start_header_id\|>assistant<\|end_header_id\|>\n\n$/, ""),
  },
  { tokenizer: "llama3_1", renderer: "llama3" },
  { tokenizer: "qwen3", renderer: "qwen3" },
  { tokenizer: "qwen3", renderer: "qwen3_disable_thinking", extra: { enable_thinking: false } },
  {
    tokenizer: "deepseek_v3",
    renderer: "deepseekv3",
    adjust: (t) => t.replaceAll("<｜Assistant｜>", "<｜Assistant｜></think>"),
  },
];

const SUPERVISED_CONVERSATIONS: [string, Message[]][] = [
  ["basic", upTo(basic, 2)],
  ["with system prompt", upTo(withSystem, 3)],
  ["multi-turn", multiTurn],
];

function stripOneTrailingNewline(s: string): string {
  return s.endsWith("\n") ? s.slice(0, -1) : s;
}

for (const c of SUPERVISED_CASES) {
  for (const [convName, convo] of SUPERVISED_CONVERSATIONS) {
    test(`supervised example ${c.renderer} (${c.tokenizer}) == chat template: ${convName}`, () => {
      const tok = packagedTokenizer(c.tokenizer);
      const r = getRenderer(c.renderer, tok);
      const ours = tokensOf(r.buildSupervisedExample(convo, "all_assistant_messages").modelInput);
      let text = applyChatTemplate(tok, openai(r, convo), { addGenerationPrompt: false, extra: c.extra ?? {} });
      if (c.adjust) text = c.adjust(text);
      text = stripOneTrailingNewline(text);
      assertSameTokens(c.tokenizer, ours, refTokens(c.tokenizer, text), `${c.renderer}/${convName}`);
    });
  }
}

test("qwen3 supervised example with reasoning in the final turn == chat template", () => {
  const tok = packagedTokenizer("qwen3");
  const r = getRenderer("qwen3", tok);
  const ours = tokensOf(r.buildSupervisedExample(withThinking).modelInput);
  const text = stripOneTrailingNewline(applyChatTemplate(tok, openai(r, withThinking), { addGenerationPrompt: false }));
  assert.ok(text.includes("<think>\n144 / 2 = 72.\n</think>\n\n72"));
  assertSameTokens("qwen3", ours, refTokens("qwen3", text), "qwen3 thinking");
});

test("qwen3 tool declaration, tool call and tool result == chat template (prompt and supervised)", () => {
  const tok = packagedTokenizer("qwen3");
  const r = getRenderer("qwen3", tok);
  const prefix = r.createConversationPrefixWithTools([WEATHER_TOOL], "You are a weather bot.");
  const hfTools = [{ type: "function", function: WEATHER_TOOL }];
  const system: Message = { role: "system", content: "You are a weather bot." };
  // Prompt after the tool result.
  const promptConvo = upTo(withToolCall, 3);
  const ours = tokensOf(r.buildGenerationPrompt([...prefix, ...promptConvo]));
  const text = applyChatTemplate(tok, openai(r, [system, ...promptConvo]), { addGenerationPrompt: true, tools: hfTools });
  assertSameTokens("qwen3", ours, refTokens("qwen3", text), "tool prompt");
  // The whole exchange as a supervised example.
  const sup = tokensOf(r.buildSupervisedExample([...prefix, ...withToolCall], "last_assistant_turn").modelInput);
  const supText = stripOneTrailingNewline(applyChatTemplate(tok, openai(r, [system, ...withToolCall]), { addGenerationPrompt: false, tools: hfTools }));
  assertSameTokens("qwen3", sup, refTokens("qwen3", supText), "tool supervised");
  // Without a system prompt the declaration stands alone.
  const bare = tokensOf(r.buildGenerationPrompt([...r.createConversationPrefixWithTools([WEATHER_TOOL]), ...upTo(withToolCall, 1)]));
  const bareText = applyChatTemplate(tok, openai(r, upTo(withToolCall, 1)), { addGenerationPrompt: true, tools: hfTools });
  assertSameTokens("qwen3", bare, refTokens("qwen3", bareText), "tool prompt without system");
});

test("qwen3 with text before a tool call separates them with a newline, as the template does", () => {
  const tok = packagedTokenizer("qwen3");
  const r = getRenderer("qwen3", tok);
  const convo: Message[] = [
    { role: "user", content: "Weather in Rome and Oslo?" },
    {
      role: "assistant",
      content: "Checking both.",
      tool_calls: [
        { type: "function", id: null, function: { name: "get_weather", arguments: '{"city": "Rome"}' } },
        { type: "function", id: null, function: { name: "get_weather", arguments: '{"city": "Oslo"}' } },
      ],
    },
  ];
  const ours = tokensOf(r.buildSupervisedExample(convo).modelInput);
  const text = stripOneTrailingNewline(applyChatTemplate(tok, openai(r, convo), { addGenerationPrompt: false }));
  assertSameTokens("qwen3", ours, refTokens("qwen3", text), "text + two calls");
});

test("divergence: qwen3 strips reasoning from an earlier turn of a multi-step tool exchange; the template keeps it", () => {
  const tok = packagedTokenizer("qwen3");
  const r = getRenderer("qwen3", tok);
  const convo: Message[] = [
    { role: "user", content: "Weather in Paris?" },
    {
      role: "assistant",
      content: [{ type: "thinking", thinking: "I should call the tool." }],
      tool_calls: [{ type: "function", id: null, function: { name: "get_weather", arguments: '{"city": "Paris"}' } }],
    },
    { role: "tool", content: "18C", name: "get_weather" },
  ];
  const ours = tokensOf(r.buildGenerationPrompt(convo));
  const text = applyChatTemplate(tok, openai(r, convo), { addGenerationPrompt: true });
  assert.ok(text.includes("I should call the tool."), "the template keeps the reasoning after the last user query");
  assert.ok(!tok.decode(ours).includes("I should call the tool."), "qwen3 strips reasoning from history");
  // Apart from the reasoning block, the two agree.
  const withoutBlock = text.replace("<think>\nI should call the tool.\n</think>\n\n", "");
  assertSameTokens("qwen3", ours, refTokens("qwen3", withoutBlock), "rest of the prompt");
});

test("divergence: qwen3_instruct gives the produced turn no <think> block; the Qwen3 template does", () => {
  const tok = packagedTokenizer("qwen3");
  const r = getRenderer("qwen3_instruct", tok);
  const convo = upTo(basic, 2);
  const ours = tokensOf(r.buildSupervisedExample(convo).modelInput);
  const text = stripOneTrailingNewline(applyChatTemplate(tok, openai(r, convo), { addGenerationPrompt: false }));
  assert.ok(text.includes("<think>\n\n</think>\n\n"));
  assertSameTokens("qwen3", ours, refTokens("qwen3", text.replace("<think>\n\n</think>\n\n", "")), "instruct");
});

test("divergence: llama3 writes no 'Cutting Knowledge Date' preamble; the system message is rendered as given", () => {
  for (const name of ["llama3", "llama3_1"] as const) {
    const tok = packagedTokenizer(name);
    const r = getRenderer("llama3", tok);
    const text = tok.decode(tokensOf(r.buildGenerationPrompt(withSystem)));
    assert.ok(!text.includes("Cutting Knowledge Date"));
    assert.ok(text.startsWith("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a terse math tutor.<|eot_id|>"));
    // A preamble, when wanted, is the caller's: it goes through verbatim.
    const preamble = "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
    const withPreamble: Message[] = [{ role: "system", content: preamble + "You are a terse math tutor." }, ...withSystem.slice(1)];
    const ours = tokensOf(r.buildGenerationPrompt(withPreamble));
    const ref = applyChatTemplate(tok, openai(r, withPreamble), { addGenerationPrompt: true });
    assertSameTokens(name, ours, refTokens(name, ref), "with preamble");
  }
});

test("divergence: deepseekv3 puts </think> in the assistant header, which V3's template does not have", () => {
  const tok = packagedTokenizer("deepseek_v3");
  const r = getRenderer("deepseekv3", tok);
  const ours = tokensOf(r.buildGenerationPrompt(withSystem));
  const plain = applyChatTemplate(tok, openai(r, withSystem), { addGenerationPrompt: true });
  assert.notDeepEqual(ours, refTokens("deepseek_v3", plain));
  assert.ok(tok.decode(ours).endsWith("<｜Assistant｜></think>"));
  assert.ok(tok.decode(ours).startsWith("<｜begin▁of▁sentence｜>You are a terse math tutor.<｜User｜>"));
});

test("qwen3 final turn with reasoning and a tool call == chat template (no newline before the call)", () => {
  const tok = packagedTokenizer("qwen3");
  const r = getRenderer("qwen3", tok);
  const convo: Message[] = [
    { role: "user", content: "Weather in Paris?" },
    {
      role: "assistant",
      content: [{ type: "thinking", thinking: "Use the tool." }],
      tool_calls: [{ type: "function", id: null, function: { name: "get_weather", arguments: '{"city": "Paris"}' } }],
    },
  ];
  const ours = tokensOf(r.buildSupervisedExample(convo).modelInput);
  const text = stripOneTrailingNewline(applyChatTemplate(tok, openai(r, convo), { addGenerationPrompt: false }));
  assertSameTokens("qwen3", ours, refTokens("qwen3", text), "thinking + call");
});
