// Format-string tests for the families whose tokenizer and chat template ship in no npm package
// (Qwen3-VL, Qwen3.5/3.6, Qwen3.8, Nemotron 3, Kimi K2.5/K2.6): the rendered text is compared
// with the documented format, written out by hand, token for token (docs/cookbook-parity.md#family-formats).
import { test } from "node:test";
import assert from "node:assert/strict";
import { classifyParseFailure, getRenderer, type Message } from "../../src/renderers/index.ts";
import { packagedTokenizer, tokensOf } from "./helpers.ts";
import { WEATHER_TOOL } from "./conversations.ts";
import { kimiK25Tokenizer } from "./setups.ts";

const qwen = () => packagedTokenizer("qwen3");
const decode = (r: ReturnType<typeof getRenderer>, tokens: number[]): string => r.tokenizer.decode(tokens);
const enc = (r: ReturnType<typeof getRenderer>, s: string): number[] => r.tokenizer.encode(s, { addSpecialTokens: false });

function promptText(name: string, convo: Message[], tok = qwen()): string {
  const r = getRenderer(name, tok);
  return decode(r, tokensOf(r.buildGenerationPrompt(convo)));
}
function supervisedText(name: string, convo: Message[], tok = qwen()): { all: string; trained: string } {
  const r = getRenderer(name, tok);
  const { modelInput, weights } = r.buildSupervisedExample(convo, "last_assistant_turn");
  const tokens = tokensOf(modelInput);
  return {
    all: decode(r, tokens),
    trained: decode(
      r,
      tokens.filter((_, i) => weights[i]! > 0),
    ),
  };
}

const call = (args: string, id: string | null = null): Message["tool_calls"] => [{ type: "function", id, function: { name: "get_weather", arguments: args } }];

const toolExchange: Message[] = [
  { role: "user", content: "Weather in Paris and Oslo?" },
  {
    role: "assistant",
    content: [{ type: "thinking", thinking: "Two calls." }],
    tool_calls: [...call('{"city": "Paris"}')!, ...call('{"city": "Oslo", "days": [1, 2]}')!],
  },
  { role: "tool", content: "18C", name: "get_weather" },
  { role: "tool", content: "9C", name: "get_weather" },
  { role: "assistant", content: "Paris 18C, Oslo 9C." },
];

test("qwen3_5: tool declaration, XML calls, grouped tool responses and the prefilled prompt", () => {
  const r = getRenderer("qwen3_5", qwen());
  const [system] = r.createConversationPrefixWithTools([WEATHER_TOOL], "Be brief.");
  const decl = system!.content as string;
  assert.ok(
    decl.startsWith(
      '# Tools\n\nYou have access to the following functions:\n\n<tools>\n{"name": "get_weather", "description": "Get the current weather for a city"',
    ),
  );
  assert.ok(decl.endsWith("</IMPORTANT>\n\nBe brief."), "tools come before the system prompt");
  const { all, trained } = supervisedText("qwen3_5", toolExchange);
  assert.equal(
    all,
    "<|im_start|>user\nWeather in Paris and Oslo?<|im_end|>\n<|im_start|>assistant\n" +
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n" +
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n[1, 2]\n</parameter>\n</function>\n</tool_call><|im_end|>\n" +
      "<|im_start|>user\n<tool_response>\n18C\n</tool_response>\n<tool_response>\n9C\n</tool_response><|im_end|>\n" +
      "<|im_start|>assistant\n<think>\n\n</think>\n\nParis 18C, Oslo 9C.<|im_end|>",
  );
  // The call turn (history here: reasoning stripped, no empty block before the last user) and the answer are trained; the tool results are not.
  assert.ok(trained.includes("<function=get_weather>") && trained.endsWith("\n</think>\n\nParis 18C, Oslo 9C.<|im_end|>"));
  assert.ok(!trained.includes("tool_response"));
  assert.ok(promptText("qwen3_5", toolExchange.slice(0, 4)).endsWith("</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n"));
  assert.ok(promptText("qwen3_5_disable_thinking", toolExchange.slice(0, 1)).endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
});

test("qwen3_5: parsing XML tool calls, malformed calls and unterminated blocks", () => {
  const r = getRenderer("qwen3_5", qwen());
  const ok = r.parseResponse(
    enc(
      r,
      "Let me check.\n</think>\n\nSure.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSan José\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call><|im_end|>",
    ),
  );
  assert.equal(ok.termination, "stop_sequence");
  assert.deepEqual(ok.message.content, [
    { type: "thinking", thinking: "Let me check." },
    { type: "text", text: "Sure." },
  ]);
  assert.deepEqual(JSON.parse(ok.message.tool_calls![0]!.function.arguments), { city: "San José", days: 3 });
  const bad = r.parseResponse(
    enc(r, "<tool_call>\n<function=get_weather>\nstray text\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call><|im_end|>"),
  );
  assert.deepEqual(classifyParseFailure(bad.message, bad.termination), { kind: "content", detail: "Unexpected non-parameter content inside <function> block" });
  const open = r.parseResponse(enc(r, "<tool_call>\n<function=get_weather>\n<|im_end|>"));
  assert.match(classifyParseFailure(open.message, open.termination)!.detail, /^unterminated tool block/);
  const cut = r.parseResponse(enc(r, "<tool_call>\n<function=get_weather>"));
  assert.equal(classifyParseFailure(cut.message, cut.termination)?.kind, "structural");
});

test("qwen3_vl: JSON tool calls after a newline, reasoning as <think>R</think>, no prefill", () => {
  const convo: Message[] = [
    { role: "user", content: "Weather?" },
    { role: "assistant", content: [{ type: "thinking", thinking: "Use the tool." }], tool_calls: call('{"city": "Paris"}') },
  ];
  assert.equal(
    supervisedText("qwen3_vl", convo).all,
    '<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>Use the tool.</think>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>',
  );
  assert.ok(promptText("qwen3_vl", convo.slice(0, 1)).endsWith("<|im_start|>assistant\n"));
});

test("qwen3_8: reasoning-effort sentence, empty blocks on every plain turn, JSON scalar arguments", () => {
  const convo: Message[] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hi" },
    { role: "assistant", content: "Hello!" },
    { role: "user", content: "Flag it." },
    { role: "assistant", content: "", tool_calls: call('{"urgent": true, "note": null}') },
  ];
  const { all } = supervisedText("qwen3_8_low_reasoning", convo);
  assert.ok(
    all.startsWith(
      "<|im_start|>system\nReasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion without unnecessary elaboration.\n\nBe brief.<|im_end|>",
    ),
  );
  assert.ok(all.includes("<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>"), "history keeps its (empty) block");
  assert.ok(all.includes("<parameter=urgent>\ntrue\n</parameter>\n<parameter=note>\nnull\n</parameter>"));
  // Qwen3.5 writes Python's str() for scalars instead.
  assert.ok(supervisedText("qwen3_5", convo).all.includes("<parameter=urgent>\nTrue\n</parameter>\n<parameter=note>\nNone\n</parameter>"));
  assert.ok(promptText("qwen3_8_xhigh_reasoning", convo.slice(1, 2)).startsWith("<|im_start|>system\nReasoning effort is set to xhigh."));
  assert.equal(
    promptText("qwen3_8_medium_reasoning", [{ role: "system", content: "" }, convo[1]!]),
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n",
  );
  assert.equal(promptText("qwen3_8_disable_thinking", convo.slice(1, 2)), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
});

test("nemotron3: empty system block, XML declarations after the system prompt, closed blocks in history", () => {
  const r = getRenderer("nemotron3", qwen());
  const [system] = r.createConversationPrefixWithTools([WEATHER_TOOL], "Be brief.");
  assert.equal(
    system!.content,
    "Be brief.\n\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n<function>\n<name>get_weather</name>\n" +
      "<description>Get the current weather for a city</description>\n<parameters>\n<parameter>\n<name>city</name>\n<type>string</type>\n" +
      '<description>City name</description>\n</parameter>\n<parameter>\n<name>unit</name>\n<type>string</type>\n<enum>["c", "f"]</enum>\n' +
      '</parameter>\n<required>["city"]</required>\n</parameters>\n</function>\n</tools>\n\n' +
      (system!.content as string).slice((system!.content as string).indexOf("If you choose")),
  );
  const convo: Message[] = [
    { role: "user", content: "Hi" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "greet" },
        { type: "text", text: "Hello!" },
      ],
    },
    { role: "user", content: "Weather?" },
    { role: "assistant", content: "", tool_calls: call('{"city": "Oslo"}') },
    { role: "tool", content: "9C" },
    { role: "tool", content: "dry" },
  ];
  assert.equal(
    promptText("nemotron3", convo),
    "<|im_start|>system\n<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think></think>\nHello!<|im_end|>\n" +
      "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think></think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>\n<|im_end|>\n" +
      "<|im_start|>user\n<tool_response>\n9C\n</tool_response>\n<tool_response>\ndry\n</tool_response>\n<|im_end|>\n<|im_start|>assistant\n<think>\n",
  );
  assert.ok(promptText("nemotron3_low_thinking", convo.slice(0, 3)).includes("Weather?\n\n{reasoning effort: low}<|im_end|>"));
  assert.ok(promptText("nemotron3_ultra_medium_thinking", convo.slice(0, 3)).includes("Weather?\n\n{reasoning effort: efficient}<|im_end|>"));
  assert.ok(promptText("nemotron3_disable_thinking", convo.slice(0, 1)).endsWith("<|im_start|>assistant\n<think></think>"));
  assert.ok(promptText("nemotron3_preserve_thinking", convo.slice(0, 3)).includes("<|im_start|>assistant\n<think>\ngreet\n</think>\nHello!<|im_end|>"));
  assert.ok(promptText("nemotron3_ultra_preserve_thinking", convo.slice(0, 3)).includes("<|im_start|>assistant\n<think>\ngreet</think>Hello!<|im_end|>"));
  const parsed = getRenderer("nemotron3_ultra", qwen()).parseResponse(
    enc(r, "plan</think>\n<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\n<|im_end|>"),
  );
  assert.deepEqual(parsed.message.content, [{ type: "thinking", thinking: "plan" }]);
  assert.deepEqual(parsed.message.tool_calls, [{ type: "function", id: null, function: { name: "f", arguments: '{"x": 1}' } }]);
});

test("kimi_k25: TypeScript tool declaration, <think> prefill, K2.6 preserve keeps history reasoning", () => {
  const tok = kimiK25Tokenizer();
  const r = getRenderer("kimi_k25", tok);
  const prefix = r.createConversationPrefixWithTools([
    WEATHER_TOOL,
    {
      name: "search",
      description: "Search the web.\nReturns links.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: "Terms", minLength: 1 },
          limit: { type: "integer", default: 5, maximum: 50 },
          filters: { type: "array", items: { type: "string", description: "A domain" } },
          mode: { anyOf: [{ type: "string" }, { type: "null" }] },
        },
        required: ["query"],
      },
    },
  ]);
  assert.equal(prefix[0]!.role, "tool_declare");
  assert.equal(
    prefix[0]!.content,
    "# Tools\n\n## functions\nnamespace functions {\n// Get the current weather for a city\ntype get_weather = (_: {\n  // City name\n  city: string,\n" +
      '  unit?: "c" | "f"\n}) => any;\n// Search the web.\n// Returns links.\ntype search = (_: {\n  // Terms\n  // minLength: 1\n  query: string,\n' +
      "  filters?: Array<\n    // A domain\n    string\n  >,\n  // maximum: 50\n  // Default: 5\n  limit?: number,\n  mode?: string | null\n}) => any;\n}\n",
  );
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
  const sys = "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>";
  assert.equal(
    promptText("kimi_k25", convo, tok),
    `${sys}<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|><think></think>Hello<|im_end|>` +
      "<|im_user|>user<|im_middle|>Bye<|im_end|><|im_assistant|>assistant<|im_middle|><think>",
  );
  assert.ok(promptText("kimi_k26_disable_thinking", convo, tok).endsWith("<|im_assistant|>assistant<|im_middle|><think></think>"));
  assert.ok(promptText("kimi_k26_preserve_thinking", convo, tok).includes("<think>greet</think>Hello<|im_end|>"));
  // A sampled response starts after the prefilled <think>; parsing puts it back.
  const parsed = r.parseResponse(enc(r, "short</think>Bye!<|im_end|>"));
  assert.deepEqual(parsed.message.content, [
    { type: "thinking", thinking: "short" },
    { type: "text", text: "Bye!" },
  ]);
  const badArgs = r.parseResponse(
    enc(
      r,
      "</think><|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{oops<|tool_call_end|><|tool_calls_section_end|><|im_end|>",
    ),
  );
  assert.equal(classifyParseFailure(badArgs.message, badArgs.termination)?.kind, "content");
});
