// Contract properties for every built-in renderer: parse(render(m)) == m, the supervised example
// starts with the generation prompt, the extension property holds exactly where declared, and
// stop sequences end what is trained.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer, getRegisteredRendererNames, hasThinking } from "../../src/renderers/index.ts";
import type { Renderer } from "../../src/renderers/base.ts";
import type { Message } from "../../src/renderers/types.ts";
import { canonicalMessage, tokensOf } from "./helpers.ts";
import { SETUPS, type Setup } from "./setups.ts";

function responseMessages(setup: Setup): [string, Message][] {
  const out: [string, Message][] = [
    ["plain", { role: "assistant", content: "The answer is 4." }],
    ["multi-line", { role: "assistant", content: "Line one.\n\n- item\n- item 2\n\nDone: 100%" }],
  ];
  if (setup.thinking) {
    out.push([
      "thinking",
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "2 plus 2 makes 4." },
          { type: "text", text: "4" },
        ],
      },
    ]);
  }
  if (setup.tools) {
    const id = setup.renderer.startsWith("kimi") ? "functions.get_weather:0" : null;
    out.push([
      "tool call",
      {
        role: "assistant",
        content: "",
        tool_calls: [{ type: "function", id, function: { name: "get_weather", arguments: '{"city": "Paris", "days": [1, 2]}' } }],
      },
    ]);
    if (setup.thinking) {
      out.push([
        "thinking + tool call",
        {
          role: "assistant",
          content: [{ type: "thinking", thinking: "Need the weather tool." }],
          tool_calls: [{ type: "function", id, function: { name: "get_weather", arguments: '{"city": "Oslo"}' } }],
        },
      ]);
    }
  }
  return out;
}

function startsWith(xs: number[], prefix: number[]): boolean {
  return prefix.length <= xs.length && prefix.every((t, i) => xs[i] === t);
}

const renderers = new Map<string, Renderer>();
function rendererFor(setup: Setup): Renderer {
  let r = renderers.get(setup.renderer);
  if (r === undefined) {
    r = getRenderer(setup.renderer, setup.tokenizer());
    renderers.set(setup.renderer, r);
  }
  return r;
}

test("every registered built-in renderer is covered by these tests", () => {
  const covered = new Set(SETUPS.map((s) => s.renderer));
  // tml_v0's framing comes from a pluggable backend; tmlV0.test.ts covers the cookbook's glue.
  for (const name of getRegisteredRendererNames()) if (name !== "tml_v0") assert.ok(covered.has(name), `${name} has no test setup`);
});

for (const setup of SETUPS) {
  for (const [label, message] of responseMessages(setup)) {
    test(`${setup.renderer}: supervised prefix == generation prompt, and parse(render) round-trips (${label})`, () => {
      const r = rendererFor(setup);
      const convo: Message[] = [{ role: "system", content: "You are helpful." }, { role: "user", content: "What is 2+2? Also the weather." }, message];
      let prompt = tokensOf(r.buildGenerationPrompt(convo.slice(0, -1)));
      const { modelInput, weights } = r.buildSupervisedExample(convo);
      const tokens = tokensOf(modelInput);
      assert.equal(weights.length, tokens.length);
      if (setup.closedBlockAfterOpenPrompt && !hasThinking(message.content)) {
        // The template's "<think></think>" cannot follow the prompt's "<think>⏎": the weights
        // fall back to the message's output (its header is not trained).
        assert.ok(!startsWith(tokens, prompt), `${setup.renderer}: expected the documented divergence from the prompt`);
        const firstTrained = weights.findIndex((w) => w > 0);
        assert.ok(r.tokenizer.decode(tokens.slice(0, firstTrained)).endsWith("<think></think>"));
        prompt = tokens.slice(0, firstTrained);
      }
      assert.ok(startsWith(tokens, prompt), `${setup.renderer}: the supervised example does not start with the generation prompt`);
      // Exactly the sampled part is trained.
      for (let i = 0; i < tokens.length; i++) assert.equal(weights[i], i < prompt.length ? 0 : 1, `weight of token ${i}`);
      const response = tokens.slice(prompt.length);
      const stops = r.getStopSequences();
      if (typeof stops[0] === "number") {
        assert.ok((stops as number[]).includes(response[response.length - 1]!), "the trained turn ends with a stop token");
      } else {
        assert.ok(
          setup
            .tokenizer()
            .decode(response)
            .endsWith(stops[0] as string),
          "the trained turn ends with the stop string",
        );
      }
      const parsed = r.parseResponse(response);
      assert.equal(parsed.termination, "stop_sequence");
      assert.deepEqual(canonicalMessage(parsed.message), canonicalMessage(message));
    });
  }
}

test("parse: a response cut off before its stop is malformed, and is still returned as text", () => {
  for (const setup of SETUPS) {
    const r = rendererFor(setup);
    const tok = setup.tokenizer();
    const cut = tok.encode("The answer", { addSpecialTokens: false });
    const parsed = r.parseResponse(cut);
    assert.equal(parsed.termination, "malformed", setup.renderer);
    assert.ok(JSON.stringify(parsed.message.content).includes("The answer"), setup.renderer);
  }
});

test("parse: two stop tokens in one response is a sampler misuse and raises", () => {
  for (const setup of SETUPS) {
    const r = rendererFor(setup);
    const stops = r.getStopSequences();
    if (typeof stops[0] !== "number") continue;
    const stop = stops[0] as number;
    const tok = setup.tokenizer();
    const twice = [...tok.encode("a", { addSpecialTokens: false }), stop, ...tok.encode("b", { addSpecialTokens: false }), stop];
    assert.throws(() => r.parseResponse(twice), /stop|<\|return\|>/, setup.renderer);
  }
});

const EXTENSION_CLAIMED = new Set([
  "role_colon",
  "llama3",
  "qwen3_instruct",
  "deepseekv3",
  "deepseekv3_disable_thinking",
  "nemotron3_preserve_thinking",
  "nemotron3_ultra_preserve_thinking",
]);
/**
 * Render every turn as sampled but, like the cookbook, do not claim the property: K2.6 with
 * preserved reasoning, and thinking-off renderers whose history writes the same closed empty
 * block the prompt ends with (they never train reasoning turns).
 */
const PREFIX_CONSISTENT_UNCLAIMED = new Set([
  "kimi_k26_preserve_thinking",
  "qwen3_8_disable_thinking",
  "kimi_k25_disable_thinking",
  "kimi_k26_disable_thinking",
  "nemotron3_disable_thinking",
  "nemotron3_ultra_disable_thinking",
]);

/** True when every sampled turn (prompt + response) is a prefix of the next turn's prompt. */
function extensionHolds(r: Renderer, convo: Message[]): boolean {
  for (let k = 0; k < convo.length; k++) {
    if (convo[k]!.role !== "assistant") continue;
    const nextUser = convo.findIndex((m, i) => i > k && m.role === "user");
    if (nextUser === -1) continue;
    const sampled = tokensOf(r.buildSupervisedExample(convo.slice(0, k + 1)).modelInput);
    const nextPrompt = tokensOf(r.buildGenerationPrompt(convo.slice(0, nextUser + 1)));
    if (!startsWith(nextPrompt, sampled)) return false;
  }
  return true;
}

const plainMultiTurn: Message[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Hi" },
  { role: "assistant", content: "Hello!" },
  { role: "user", content: "Name a color." },
  { role: "assistant", content: "Blue." },
  { role: "user", content: "Thanks" },
];
const thinkingMultiTurn: Message[] = [
  { role: "user", content: "Hi" },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Greet back." },
      { type: "text", text: "Hello!" },
    ],
  },
  { role: "user", content: "Name a color." },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Pick one." },
      { type: "text", text: "Blue." },
    ],
  },
  { role: "user", content: "Thanks" },
];

for (const setup of SETUPS) {
  test(`${setup.renderer}: extension property ${EXTENSION_CLAIMED.has(setup.renderer) ? "holds" : "is not claimed and breaks"}`, () => {
    const r = rendererFor(setup);
    assert.equal(r.hasExtensionProperty, EXTENSION_CLAIMED.has(setup.renderer));
    if (r.hasExtensionProperty || PREFIX_CONSISTENT_UNCLAIMED.has(setup.renderer)) {
      assert.ok(extensionHolds(r, plainMultiTurn), "holds on plain turns");
      // Renderers that keep reasoning in history hold with reasoning turns too.
      if (setup.renderer.startsWith("deepseekv3") || setup.renderer.includes("preserve")) {
        assert.ok(extensionHolds(r, thinkingMultiTurn), "holds on reasoning turns");
      }
    } else {
      const convos = setup.thinking ? [thinkingMultiTurn, plainMultiTurn] : [plainMultiTurn];
      assert.ok(
        convos.some((c) => !extensionHolds(r, c)),
        "a renderer that does not claim the property should break it on one of these conversations",
      );
    }
  });
}

test("buildSupervisedExamples: one example per trained assistant turn without the extension property, one with it", () => {
  const qwen = rendererFor(SETUPS.find((s) => s.renderer === "qwen3")!);
  const split = qwen.buildSupervisedExamples(thinkingMultiTurn.slice(0, 4), "all_assistant_messages");
  assert.equal(split.length, 2);
  // Each example ends with the message it trains, and keeps that message's reasoning.
  const last = split[1]!;
  const text = qwen.tokenizer.decode(tokensOf(last.modelInput));
  assert.ok(text.endsWith("<think>\nPick one.\n</think>\n\nBlue.<|im_end|>"));
  assert.ok(text.includes("Greet back.") === false, "history reasoning is stripped");
  const llama = rendererFor(SETUPS.find((s) => s.renderer === "llama3")!);
  assert.equal(llama.buildSupervisedExamples(plainMultiTurn.slice(0, 5), "all_assistant_messages").length, 1);
  assert.throws(() => qwen.buildSupervisedExamples(thinkingMultiTurn, "all_messages"), /cannot split/);
});

test("qwen3 keeping reasoning in history claims and has the extension property", async () => {
  const { Qwen3Renderer } = await import("../../src/renderers/index.ts");
  const setup = SETUPS.find((s) => s.renderer === "qwen3")!;
  const keep = new Qwen3Renderer(setup.tokenizer(), "qwen3", false);
  assert.equal(keep.hasExtensionProperty, true);
  assert.ok(extensionHolds(keep, thinkingMultiTurn));
  assert.ok(keep.tokenizer.decode(tokensOf(keep.buildGenerationPrompt(thinkingMultiTurn))).includes("Greet back."));
});

test("classifyParseFailure: structural for broken framing, content for bad tool blocks, null when clean", async () => {
  const { classifyParseFailure } = await import("../../src/renderers/index.ts");
  const qwen = rendererFor(SETUPS.find((s) => s.renderer === "qwen3")!);
  const enc = (s: string): number[] => qwen.tokenizer.encode(s, { addSpecialTokens: false });
  const clean = qwen.parseResponse(enc("<think>\nok\n</think>\n\nfine<|im_end|>"));
  assert.equal(classifyParseFailure(clean.message, clean.termination), null);
  const cut = qwen.parseResponse(enc("<think>\nok"));
  assert.equal(classifyParseFailure(cut.message, cut.termination)?.kind, "structural");
  const badJson = qwen.parseResponse(enc('<tool_call>\n{"name": "f", "arguments": {oops}\n</tool_call><|im_end|>'));
  assert.equal(badJson.termination, "stop_sequence");
  const failure = classifyParseFailure(badJson.message, badJson.termination);
  assert.equal(failure?.kind, "content");
  assert.match(failure?.detail ?? "", /Invalid JSON/);
  const open = qwen.parseResponse(enc('text <tool_call>\n{"name": "f"<|im_end|>'));
  assert.match(classifyParseFailure(open.message, open.termination)?.detail ?? "", /^unterminated tool block/);
});
