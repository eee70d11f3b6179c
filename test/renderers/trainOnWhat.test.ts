// Loss weights per TrainOnWhat mode, checked token by token against segments built independently
// from the Llama 3 format, plus generation-prompt masking and the thinking refusals.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer, TRAIN_ON_WHAT, type TrainOnWhat } from "../../src/renderers/index.ts";
import type { Message } from "../../src/renderers/types.ts";
import { deepseekV31Tokenizer, packagedTokenizer, tokensOf } from "./helpers.ts";

const convo: Message[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Hi" },
  { role: "assistant", content: "Hello!" },
  { role: "user", content: "Name a color." },
  { role: "assistant", content: "Blue." },
];

/** Expected [tokens, weight] segments for the Llama 3 format, written out per message. */
function expectedSegments(mode: TrainOnWhat, messages: Message[]): [number[], number][] {
  const tok = packagedTokenizer("llama3_1");
  const enc = (s: string): number[] => tok.encode(s, { addSpecialTokens: false });
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const segs: [number[], number][] = [[enc("<|begin_of_text|>"), 0]];
  messages.forEach((m, i) => {
    const isLast = i === messages.length - 1;
    const header = enc(`<|start_header_id|>${m.role}<|end_header_id|>\n\n`);
    const output = enc(`${m.content as string}<|eot_id|>`);
    const assistant = m.role === "assistant";
    const trained: Record<TrainOnWhat, boolean> = {
      last_assistant_message: isLast && assistant,
      last_assistant_turn: assistant && i > lastUser,
      all_assistant_messages: assistant,
      all_messages: true,
      all_tokens: true,
      all_user_and_system_messages: m.role === "user" || m.role === "system",
      customized: m.trainable === true,
    };
    segs.push([header, mode === "all_tokens" ? 1 : 0], [output, trained[mode] ? 1 : 0]);
  });
  return segs;
}

for (const mode of TRAIN_ON_WHAT) {
  test(`train_on_what=${mode}: weights token by token on a multi-turn conversation`, () => {
    const r = getRenderer("llama3", packagedTokenizer("llama3_1"));
    const messages = mode === "customized" ? convo.map((m, i) => ({ ...m, trainable: i === 1 || i === 4 })) : convo;
    const { modelInput, weights } = r.buildSupervisedExample(messages, mode);
    const segs = expectedSegments(mode, messages);
    assert.deepEqual(
      tokensOf(modelInput),
      segs.flatMap(([t]) => t),
    );
    assert.deepEqual(
      Array.from(weights),
      segs.flatMap(([t, w]) => t.map(() => w)),
    );
    assert.ok(
      Array.from(weights).some((w) => w > 0),
      "some token is trained",
    );
  });
}

test("last_assistant_turn trains every assistant message after the last user one (tool exchange)", () => {
  const tok = packagedTokenizer("qwen3");
  const r = getRenderer("qwen3", tok);
  const messages: Message[] = [
    { role: "user", content: "Weather?" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ type: "function", id: null, function: { name: "get_weather", arguments: '{"city": "Paris"}' } }],
    },
    { role: "tool", content: "18C" },
    { role: "assistant", content: "18C in Paris." },
  ];
  const { modelInput, weights } = r.buildSupervisedExample(messages, "last_assistant_turn");
  const tokens = tokensOf(modelInput);
  const trainedText = tok.decode(tokens.filter((_, i) => weights[i]! > 0));
  assert.ok(trainedText.includes("<tool_call>"), trainedText);
  assert.ok(trainedText.includes("18C in Paris."));
  assert.ok(!trainedText.includes("<tool_response>"), "the tool result is not trained");
  assert.ok(!trainedText.includes("Weather?"));
});

test("the generation prompt's prefill is never trained: deepseekv3_thinking's <think>", () => {
  const tok = deepseekV31Tokenizer();
  const r = getRenderer("deepseekv3_thinking", tok);
  const messages: Message[] = [
    { role: "user", content: "2+2?" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Easy." },
        { type: "text", text: "4" },
      ],
    },
  ];
  const { modelInput, weights } = r.buildSupervisedExample(messages);
  const tokens = tokensOf(modelInput);
  const think = tok.tokenToId("<think>")!;
  const i = tokens.indexOf(think);
  assert.ok(i > 0);
  assert.equal(weights[i], 0, "the prefilled <think> carries no loss");
  assert.equal(tok.decode(tokens.filter((_, k) => weights[k]! > 0)), "Easy.</think>4<｜end▁of▁sentence｜>");
  // The prompt ends exactly where the weights start.
  const prompt = tokensOf(r.buildGenerationPrompt(messages.slice(0, 1)));
  assert.equal(tok.decode(prompt), "<｜begin▁of▁sentence｜><｜User｜>2+2?<｜Assistant｜><think>");
  assert.equal(
    weights.findIndex((w) => w > 0),
    prompt.length,
  );
});

test("a reasoning-off renderer refuses to train a turn that reasoned", () => {
  const r = getRenderer("qwen3_disable_thinking", packagedTokenizer("qwen3"));
  const messages: Message[] = [
    { role: "user", content: "2+2?" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Easy." },
        { type: "text", text: "4" },
      ],
    },
  ];
  assert.throws(() => r.buildSupervisedExample(messages), /thinking turned off.*reasoning/s);
  // Without reasoning it trains fine, after the closed empty block the prompt supplies.
  const ok = r.buildSupervisedExample([messages[0]!, { role: "assistant", content: "4" }]);
  const tokens = tokensOf(ok.modelInput);
  assert.equal(r.tokenizer.decode(tokens.filter((_, k) => ok.weights[k]! > 0)), "4<|im_end|>");
  // And a produced turn in a conversation with no user message cannot match the prompt either.
  assert.throws(
    () =>
      r.buildSupervisedExample([
        { role: "system", content: "s" },
        { role: "assistant", content: "4" },
      ]),
    /no user message/,
  );
});

test("trainable is required with customized and forbidden otherwise", () => {
  const r = getRenderer("llama3", packagedTokenizer("llama3_1"));
  assert.throws(() => r.buildSupervisedExample(convo, "customized"), /needs a "trainable" field.*message 0/);
  const marked = convo.map((m) => ({ ...m, trainable: true }));
  assert.throws(() => r.buildSupervisedExample(marked, "all_messages"), /only allowed with train_on_what=customized/);
});

test("every train_on_what mode works on the new families, including the system messages they add", async () => {
  const { SETUPS } = await import("./setups.ts");
  for (const name of ["qwen3_vl", "qwen3_5", "qwen3_8_xhigh_reasoning", "nemotron3", "nemotron3_ultra", "kimi_k25", "kimi_k26_preserve_thinking"]) {
    const setup = SETUPS.find((s) => s.renderer === name)!;
    const r = getRenderer(name, setup.tokenizer());
    for (const mode of TRAIN_ON_WHAT) {
      const messages = mode === "customized" ? convo.slice(1).map((m, i) => ({ ...m, trainable: i === 3 })) : convo.slice(1);
      const { modelInput, weights } = r.buildSupervisedExample(messages, mode);
      const tokens = tokensOf(modelInput);
      assert.equal(weights.length, tokens.length, `${name}/${mode}`);
      const trained = r.tokenizer.decode(tokens.filter((_, i) => weights[i]! > 0));
      if (mode === "all_user_and_system_messages") {
        assert.ok(trained.includes("Name a color.") && !trained.includes("Blue."), `${name}/${mode}: ${JSON.stringify(trained)}`);
      } else {
        assert.ok(trained.includes("Blue."), `${name}/${mode} trains the last answer: ${JSON.stringify(trained)}`);
      }
      if (mode === "last_assistant_message" || mode === "customized") assert.ok(!trained.includes("Hello!"), `${name}/${mode}`);
    }
  }
});
