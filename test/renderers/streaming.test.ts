// Streaming parse: feeding a response in any two pieces (or token by token) gives the same
// deltas and the same final message as the one-shot parseResponse, and the deltas agree with
// the parsed reasoning and text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer, getTextContent, hasThinking, type StreamDelta } from "../../src/renderers/index.ts";
import type { Renderer } from "../../src/renderers/base.ts";
import type { Message } from "../../src/renderers/types.ts";
import { tokensOf } from "./helpers.ts";
import { kimiK25Tokenizer, SETUPS, type Setup } from "./setups.ts";

/** Consecutive deltas of one kind and content index joined, so different splits compare equal. */
function merged(deltas: StreamDelta[]): StreamDelta[] {
  const out: StreamDelta[] = [];
  for (const d of deltas) {
    const last = out[out.length - 1];
    if (last && d.type === "text" && last.type === "text" && last.contentIndex === d.contentIndex) last.text += d.text;
    else if (last && d.type === "thinking" && last.type === "thinking" && last.contentIndex === d.contentIndex) last.thinking += d.thinking;
    else out.push({ ...d });
  }
  return out;
}

function streamIn(r: Renderer, pieces: number[][]): { deltas: StreamDelta[]; message: Message; termination: string } {
  const p = r.createStreamParser();
  const deltas: StreamDelta[] = [];
  for (const piece of pieces) deltas.push(...p.feed(piece));
  const end = p.finish();
  return { deltas: merged([...deltas, ...end.deltas]), message: end.message, termination: end.termination };
}

/** The tokens a model would sample for `message` after this renderer's prompt. */
function sampledTokens(r: Renderer, message: Message): number[] {
  const convo: Message[] = [{ role: "user", content: "Weather and 2+2?" }, message];
  const { modelInput, weights } = r.buildSupervisedExample(convo);
  const tokens = tokensOf(modelInput);
  return tokens.slice(weights.findIndex((w) => w > 0));
}

function responses(setup: Setup): [string, Message][] {
  const out: [string, Message][] = [["plain, multi-byte", { role: "assistant", content: "It is 18°C ☀️ — “mild” in Zürich." }]];
  if (setup.thinking) {
    out.push([
      "reasoning",
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Two plus two: 4. Then the ° sign." },
          { type: "text", text: "4, and 18°C." },
        ],
      },
    ]);
  }
  if (setup.tools) {
    const id = setup.renderer.startsWith("kimi") ? "functions.get_weather:0" : null;
    out.push([
      "tool call",
      { role: "assistant", content: "Checking.", tool_calls: [{ type: "function", id, function: { name: "get_weather", arguments: '{"city": "Zürich"}' } }] },
    ]);
  }
  return out;
}

for (const setup of SETUPS) {
  for (const [label, message] of responses(setup)) {
    test(`${setup.renderer}: streaming at every split point == one-shot parse (${label})`, () => {
      const r = getRenderer(setup.renderer, setup.tokenizer());
      const tokens = sampledTokens(r, message);
      const oneShot = r.parseResponse(tokens);
      const byToken = streamIn(
        r,
        tokens.map((t) => [t]),
      );
      assert.deepEqual(byToken.message, oneShot.message);
      assert.equal(byToken.termination, oneShot.termination);
      for (let k = 0; k <= tokens.length; k++) {
        const split = streamIn(r, [tokens.slice(0, k), tokens.slice(k)]);
        assert.deepEqual(split.message, oneShot.message, `final message at split ${k}`);
        assert.deepEqual(split.deltas, byToken.deltas, `deltas at split ${k}`);
      }
      assert.equal(byToken.deltas[0]?.type, "header");
      const text = byToken.deltas.map((d) => (d.type === "text" ? d.text : "")).join("");
      const thinking = byToken.deltas.map((d) => (d.type === "thinking" ? d.thinking : "")).join("");
      assert.ok(!text.includes("\ufffd") && !thinking.includes("\ufffd"), "no broken characters reach the display");
      if (setup.closedBlockAfterOpenPrompt && !hasThinking(message.content)) {
        // Nemotron's template trains such a turn after "<think></think>", but the prompt opened
        // "<think>⏎": tokens that never close the block stream as reasoning until "</think>".
        assert.equal(text, "");
        assert.ok(thinking.trim().startsWith(getTextContent(oneShot.message).trim()));
      } else if (r.streamingMarkup() !== null) {
        // What was shown is what was parsed, up to the template's whitespace.
        assert.equal(text.trim().replace(/\n?User:$/, ""), getTextContent(oneShot.message).trim());
        const parsedThinking =
          typeof oneShot.message.content === "string" ? "" : oneShot.message.content.map((p) => (p.type === "thinking" ? p.thinking : "")).join("");
        assert.equal(thinking.trim(), parsedThinking.trim());
      }
    });
  }
}

test("streaming a truncated response: deltas so far, then the one-shot malformed message", () => {
  const r = getRenderer("kimi_k25", kimiK25Tokenizer());
  const tokens = r.tokenizer.encode("Let me think about 18°C", { addSpecialTokens: false });
  const s = streamIn(r, [tokens.slice(0, 5), tokens.slice(5)]);
  assert.deepEqual(s.message, r.parseResponse(tokens).message);
  assert.equal(s.termination, "malformed");
  // K2.5's prompt prefilled <think>, so the unfinished text is shown as reasoning.
  assert.deepEqual(s.deltas, [
    { type: "header", role: "assistant" },
    { type: "thinking", thinking: "Let me think about 18°C", contentIndex: 0 },
  ]);
});

test("a partial tag is held back until it resolves, and tokens after the stop are ignored", () => {
  const r = getRenderer("kimi_k2", kimiK25Tokenizer());
  const enc = (s: string): number[] => r.tokenizer.encode(s, { addSpecialTokens: false });
  const p = r.createStreamParser();
  const first = p.feed(enc("Hello <thi"));
  assert.deepEqual(first, [
    { type: "header", role: "assistant" },
    { type: "text", text: "Hello ", contentIndex: 0 },
  ]);
  assert.deepEqual(p.feed(enc("nk>why</think>ok")), [
    { type: "thinking", thinking: "why", contentIndex: 1 },
    { type: "text", text: "ok", contentIndex: 2 },
  ]);
  assert.deepEqual(p.feed([...enc("<|im_end|>"), ...enc("ignored")]), []);
  const end = p.finish();
  assert.equal(end.termination, "stop_sequence");
  assert.deepEqual(end.message.content, [
    { type: "text", text: "Hello " },
    { type: "thinking", thinking: "why" },
    { type: "text", text: "ok" },
  ]);
});
