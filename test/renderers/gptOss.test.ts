// GPT-OSS (Harmony). The packaged tokenizer ships no chat template, so the format is checked
// against the documented Harmony strings; the deliberate divergence from HF's template (analysis
// kept in history) is tested explicitly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer, GptOssRenderer } from "../../src/renderers/index.ts";
import type { Message } from "../../src/renderers/types.ts";
import { packagedTokenizer, tokensOf } from "./helpers.ts";
import { WEATHER_TOOL } from "./conversations.ts";

const tok = () => packagedTokenizer("gptoss");
const text = (tokens: number[]): string => tok().decode(tokens);

test("gpt_oss_no_sysprompt: generation prompt and supervised example in Harmony format", () => {
  const r = getRenderer("gpt_oss_no_sysprompt", tok());
  const convo: Message[] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "What is 2+2?" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Simple sum." },
        { type: "text", text: "4" },
      ],
    },
  ];
  const prompt = tokensOf(r.buildGenerationPrompt(convo.slice(0, 2)));
  const expectedPrompt = "<|start|>developer<|message|># Instructions\n\nBe brief.\n\n<|end|><|start|>user<|message|>What is 2+2?<|end|><|start|>assistant";
  assert.equal(text(prompt), expectedPrompt);
  assert.deepEqual(prompt, tok().encode(expectedPrompt, { addSpecialTokens: false }));
  const { modelInput, weights } = r.buildSupervisedExample(convo);
  const sup = tokensOf(modelInput);
  assert.equal(text(sup), expectedPrompt + "<|channel|>analysis<|message|>Simple sum.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>");
  assert.equal(
    text(sup.filter((_, i) => weights[i]! > 0)),
    "<|channel|>analysis<|message|>Simple sum.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>",
  );
  assert.deepEqual(r.getStopSequences(), [tok().tokenToId("<|return|>"), tok().tokenToId("<|call|>")]);
});

test("reasoning variants prepend the built-in system prompt with effort and date", () => {
  const r = new GptOssRenderer(tok(), "gpt_oss_high_reasoning", { reasoningEffort: "high", currentDate: "2025-06-01" });
  const prompt = text(tokensOf(r.buildGenerationPrompt([{ role: "user", content: "Hi" }])));
  assert.equal(
    prompt,
    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n" +
      "Current date: 2025-06-01\n\nReasoning: high\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>" +
      "<|start|>user<|message|>Hi<|end|><|start|>assistant",
  );
  for (const effort of ["low", "medium", "high"]) {
    const viaRegistry = getRenderer(`gpt_oss_${effort}_reasoning`, tok());
    const t = text(tokensOf(viaRegistry.buildGenerationPrompt([{ role: "user", content: "Hi" }])));
    assert.ok(t.includes(`Reasoning: ${effort}`));
    assert.match(t, /Current date: \d{4}-\d{2}-\d{2}/);
  }
  assert.ok(!text(tokensOf(getRenderer("gpt_oss_no_sysprompt", tok()).buildGenerationPrompt([{ role: "user", content: "Hi" }]))).includes("ChatGPT"));
});

test("divergence: analysis is kept in history (HF's template drops it) and history ends <|end|>, not <|return|>", () => {
  const r = getRenderer("gpt_oss_no_sysprompt", tok());
  const convo: Message[] = [
    { role: "user", content: "Hi" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Say hello." },
        { type: "text", text: "Hello" },
      ],
    },
    { role: "user", content: "Bye" },
  ];
  const t = text(tokensOf(r.buildGenerationPrompt(convo)));
  assert.equal(
    t,
    "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>analysis<|message|>Say hello.<|end|>" +
      "<|start|>assistant<|channel|>final<|message|>Hello<|end|><|start|>user<|message|>Bye<|end|><|start|>assistant",
  );
});

test("tool declaration, tool calls and tool results in Harmony format", () => {
  const r = getRenderer("gpt_oss_no_sysprompt", tok());
  const prefix = r.createConversationPrefixWithTools([WEATHER_TOOL], "Be helpful.");
  const convo: Message[] = [
    ...prefix,
    { role: "user", content: "Weather in Paris?" },
    {
      role: "assistant",
      content: "Let me check.",
      tool_calls: [{ type: "function", id: null, function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
    },
    { role: "tool", name: "get_weather", content: '{"temp": 18}' },
  ];
  const t = text(tokensOf(r.buildGenerationPrompt(convo)));
  assert.equal(
    t,
    "<|start|>system<|message|>Calls to these tools must go to the commentary channel: 'functions'.<|end|>" +
      "<|start|>developer<|message|># Instructions\n\nBe helpful.\n\n# Tools\n\n## functions\n\nnamespace functions {\n\n" +
      '// Get the current weather for a city\ntype get_weather = (_:\n{\n// City name\ncity: string,\nunit?: "c" | "f",\n}) => any;\n\n' +
      "} // namespace functions<|end|>" +
      "<|start|>user<|message|>Weather in Paris?<|end|>" +
      "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>" +
      '<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}<|call|>' +
      '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"temp": 18}<|end|><|start|>assistant',
  );
  // A sampled call parses into a tool call.
  const sampled = tok().encode(' to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city": "Oslo"}<|call|>', {
    addSpecialTokens: false,
  });
  const parsed = r.parseResponse(sampled);
  assert.equal(parsed.termination, "stop_sequence");
  assert.deepEqual(parsed.message.tool_calls, [{ type: "function", id: null, function: { name: "get_weather", arguments: '{"city": "Oslo"}' } }]);
  // Bad JSON becomes an unparsed call rather than text.
  const bad = r.parseResponse(
    tok().encode(" to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{oops<|call|>", { addSpecialTokens: false }),
  );
  assert.equal(bad.message.tool_calls, undefined);
  assert.match(bad.message.unparsed_tool_calls?.[0]?.error ?? "", /Invalid JSON/);
});

test("a tool result without a name is an error naming the field", () => {
  const r = getRenderer("gpt_oss_no_sysprompt", tok());
  assert.throws(
    () =>
      r.buildGenerationPrompt([
        { role: "user", content: "x" },
        { role: "tool", content: "18" },
      ]),
    /needs a "name" field/,
  );
});
