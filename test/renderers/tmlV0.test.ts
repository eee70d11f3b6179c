// tml_v0: the cookbook's glue around a TMLv0 backend (effort message, train_on_what modes, tool
// declaration, refusals), with a recording fake backend in place of the tml-renderers framing.
import { afterEach, test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer, registerTmlV0Backend, RendererError, type Message, type TmlV0Backend } from "../../src/renderers/index.ts";
import { WEATHER_TOOL } from "./conversations.ts";
import { packagedTokenizer } from "./helpers.ts";

function recordingBackend(seen: Message[][]): TmlV0Backend {
  return {
    renderForCompletion(messages) {
      seen.push([...messages]);
      return { chunks: [{ type: "encoded_text", tokens: [1, 2, 3] }] };
    },
    renderForSft(messages) {
      seen.push([...messages]);
      return [{ modelInput: { chunks: [{ type: "encoded_text", tokens: [1, 2] }] }, weights: Float32Array.from([0, 1]) }];
    },
    stopTokens: () => [99],
    parseResponse: (tokens) => ({ message: { role: "assistant", content: `${tokens.length} tokens` }, termination: "stop_sequence" }),
  };
}

afterEach(() => registerTmlV0Backend(null));

const convo: Message[] = [
  { role: "system", content: "Be concise." },
  { role: "user", content: "Say hello." },
  { role: "assistant", content: "Hello." },
  { role: "user", content: "Again." },
  { role: "assistant", content: "Hello again." },
];

test("without a TMLv0 backend, getRenderer('tml_v0') says what is missing", () => {
  assert.throws(
    () => getRenderer("tml_v0", packagedTokenizer("qwen3")),
    (e: Error) => e instanceof RendererError && /no TMLv0 backend is registered/.test(e.message),
  );
});

test("the effort message (thousandths) goes after the leading system messages, for prompts and SFT alike", () => {
  const seen: Message[][] = [];
  registerTmlV0Backend(() => recordingBackend(seen));
  const r = getRenderer("tml_v0", packagedTokenizer("qwen3"));
  r.buildGenerationPrompt(convo.slice(0, 2));
  r.buildSupervisedExample(convo);
  assert.deepEqual(
    seen[0]!.map((m) => m.role),
    ["system", "thinking_effort", "user"],
  );
  assert.equal(seen[0]![1]!.content, "900");
  assert.deepEqual(
    seen[1]!.slice(0, 3).map((m) => m.role),
    ["system", "thinking_effort", "user"],
  );
  assert.equal(r.hasExtensionProperty, true);
  assert.deepEqual(r.getStopSequences(), [99]);
  assert.deepEqual(r.parseResponse([5, 6]).message.content, "2 tokens");
});

test("train_on_what: all / last assistant message / customized mark assistant turns; other modes are refused", () => {
  const seen: Message[][] = [];
  registerTmlV0Backend(() => recordingBackend(seen));
  const r = getRenderer("tml_v0", packagedTokenizer("qwen3"));
  const trainable = (): (boolean | undefined)[] => seen[seen.length - 1]!.filter((m) => m.role === "assistant").map((m) => m.trainable);
  r.buildSupervisedExample(convo, "all_assistant_messages");
  assert.deepEqual(trainable(), [true, true]);
  r.buildSupervisedExample(convo, "last_assistant_message");
  assert.deepEqual(trainable(), [false, true]);
  r.buildSupervisedExample(
    convo.map((m, i) => ({ ...m, trainable: i === 2 })),
    "customized",
  );
  assert.deepEqual(trainable(), [true, false]);
  assert.ok(seen[seen.length - 1]!.filter((m) => m.role !== "assistant").every((m) => m.trainable === undefined));
  assert.throws(
    () => r.buildSupervisedExample(convo, "all_messages"),
    /tml_v0 supports train_on_what all_assistant_messages, last_assistant_message, customized; got all_messages/,
  );
});

test("refusals: effort outside [0, 1), prefill, non-assistant generation; tools declared as compact JSON", async () => {
  registerTmlV0Backend(() => recordingBackend([]));
  const { TmlV0Renderer } = await import("../../src/renderers/index.ts");
  assert.throws(() => new TmlV0Renderer(packagedTokenizer("qwen3"), "tml_v0", 1), /effort must be a finite number in \[0, 1\), got 1/);
  const r = getRenderer("tml_v0", packagedTokenizer("qwen3"));
  assert.throws(() => r.buildGenerationPrompt(convo.slice(0, 2), "assistant", "Sure"), /does not take a partial assistant message/);
  assert.throws(() => r.buildGenerationPrompt(convo.slice(0, 2), "user"), /only generates assistant turns/);
  assert.deepEqual(r.createConversationPrefixWithTools([WEATHER_TOOL], "Be brief."), [
    { role: "system", content: "Be brief." },
    {
      role: "tool_declare",
      content:
        '[{"type":"function","function":{"name":"get_weather","description":"Get the current weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}}]',
    },
  ]);
});
