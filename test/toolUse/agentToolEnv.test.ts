// Tool-call parsing for every renderer that declares tools (and the <call> text convention of
// role_colon), driven through the agent tool environment with scripted policy responses:
// well-formed calls run the tool and feed its result back; malformed ones go to the parse-error
// policy; nothing throws.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { z } from "zod";
import { getRenderer } from "../../src/renderers/registry.ts";
import type { Renderer } from "../../src/renderers/base.ts";
import type { Message } from "../../src/renderers/types.ts";
import { PARSE_ERROR_MASKED_METRIC_KEY, type StepResult } from "../../src/rl/types.ts";
import { AgentToolEnv, answerText } from "../../src/toolUse/agentToolEnv.ts";
import { CALL_CLOSE, TextToolCallFormat, hasNativeTools, textToolCall } from "../../src/toolUse/callFormat.ts";
import { agenticRolloutConfig, simpleRolloutConfig, type RolloutConfig } from "../../src/toolUse/rolloutLimits.ts";
import { calculatorTool } from "../../src/toolUse/tools/calculator.ts";
import { defineTool, toolSpec } from "../../src/toolUse/tool.ts";
import { loadTokenizerFromDir } from "../../src/tokenizers/index.ts";
import { ROOT, tokensOf } from "../renderers/helpers.ts";
import { SETUPS } from "../renderers/setups.ts";

/** The tokens a policy would sample for `message` after `history` (the trained part of the last message). */
function responseTokens(renderer: Renderer, history: Message[], message: Message): number[] {
  const ex = renderer.buildSupervisedExample([...history, message], "last_assistant_message");
  const tokens = tokensOf(ex.modelInput);
  return tokens.filter((_, i) => ex.weights[i]! > 0);
}

// Kimi K2 reads the tool name from ids of this form; the other renderers carry or ignore it.
const call = (expression: string): Message => ({
  role: "assistant",
  content: "",
  tool_calls: [{ type: "function", id: "functions.calculator:0", function: { name: "calculator", arguments: JSON.stringify({ expression }) } }],
});

function makeEnv(renderer: Renderer, rollout: RolloutConfig = simpleRolloutConfig()): AgentToolEnv {
  return new AgentToolEnv({
    renderer,
    tools: [calculatorTool],
    task: [{ role: "user", content: "What is 48213 + 39677?" }],
    rollout,
    grade: (answer) => ({ reward: answerText(answer) === "87890" ? 1 : 0 }),
  });
}

async function history(env: AgentToolEnv): Promise<Message[]> {
  const first = await env.initialObservation();
  assert.ok(!("reward" in first), "prompt must fit");
  return [...(env as unknown as { messages: Message[] }).messages];
}

for (const setup of SETUPS.filter((s) => s.tools)) {
  test(`${setup.renderer}: a tool call runs the tool and the final answer is graded`, async () => {
    const renderer = getRenderer(setup.renderer, setup.tokenizer());
    assert.equal(hasNativeTools(renderer), true);
    const env = makeEnv(renderer);
    const h = await history(env);
    const first = await env.step(responseTokens(renderer, h, call("48213 + 39677")), { stopReason: "stop" });
    assert.equal(first.episodeDone, false);
    const toolMessage = first.messages!.at(-1)!;
    assert.equal(toolMessage.role, "tool");
    assert.equal(toolMessage.content, "87890");
    const answer: Message = { role: "assistant", content: "87890" };
    const second = await env.step(responseTokens(renderer, first.messages!, answer), { stopReason: "stop" });
    assert.equal(second.episodeDone, true);
    assert.equal(second.reward, 1);
    assert.equal(second.metrics!["called_tool"], 1);
    assert.equal(second.metrics!["stop/completed"], 1);
  });

  test(`${setup.renderer}: malformed calls go to the parse-error policy`, async () => {
    const renderer = getRenderer(setup.renderer, setup.tokenizer());
    // Cut off inside the call: terminate policy ends with its reward.
    const env = makeEnv(renderer);
    const h = await history(env);
    const tokens = responseTokens(renderer, h, call("1 + 2"));
    const cut = await env.step(tokens.slice(0, Math.max(1, tokens.length - 4)), { stopReason: "stop" });
    assert.equal(cut.episodeDone, true);
    assert.equal(cut.reward, -1);
    assert.equal(cut.metrics!["stop/parse_error"], 1);
    // Arguments that are not JSON: never a crash; either unparsed (parse error) or an error result from the tool.
    const env2 = makeEnv(renderer, agenticRolloutConfig());
    const h2 = await history(env2);
    // Renderers refuse to render invalid JSON, so the call is rendered with a marker and broken in the text:
    // JSON-argument families lose the quotes, XML-parameter families (Qwen3.5/3.8, Nemotron 3) a closing tag.
    const text = renderer.tokenizer.decode(responseTokens(renderer, h2, call("QQQ")));
    assert.ok(text.includes("QQQ"), text);
    const brokenText = text.includes('"QQQ"') ? text.replace('"QQQ"', "QQQ") : text.replace("</parameter>", "");
    assert.notEqual(brokenText, text, "the call was broken");
    const broken = renderer.tokenizer.encode(brokenText, { addSpecialTokens: false });
    const r = await env2.step(broken, { stopReason: "stop" });
    assert.equal(r.episodeDone, false);
    const last = r.messages!.at(-1)!;
    if (last.role === "tool") assert.match(String(last.content), /^Error: /);
    else assert.match(String(last.content), /could not be parsed/);
  });
}

const tinyTokenizer = loadTokenizerFromDir(join(ROOT, "fixtures", "models", "tiny-chat"));
const roleColon = (): Renderer => getRenderer("role_colon", tinyTokenizer);
const enc = (s: string): number[] => tinyTokenizer.encode(s, { addSpecialTokens: false });

test("role_colon: the <call> text convention declares tools, stops at </call> and parses the call", async () => {
  const renderer = roleColon();
  assert.equal(hasNativeTools(renderer), false);
  const env = makeEnv(renderer);
  const first = await env.initialObservation();
  assert.ok(!("reward" in first));
  assert.deepEqual(first.stopCondition, ["\n\nUser:", CALL_CLOSE]);
  const h = await history(makeEnv(renderer));
  assert.match(String(h[0]!.content), /calculator\(expression\)/);
  const r1 = await env.step(enc(" " + textToolCall("calculator", { expression: "48213 + 39677" })), { stopReason: "stop" });
  assert.equal(r1.episodeDone, false);
  assert.deepEqual(r1.messages!.at(-1), { role: "tool", content: "87890", name: "calculator" });
  const prompt = tinyTokenizer.decode(tokensOf(r1.nextObservation));
  assert.match(prompt, /Assistant: <call>calculator \{"expression":"48213 \+ 39677"\}<\/call>\n\nTool: 87890\n\nAssistant:$/);
  const r2 = await env.step(enc(" 87890\n\nUser:"), { stopReason: "stop" });
  assert.equal(r2.reward, 1);
  assert.equal(r2.metrics!["tool_calls"], 1);
});

test("role_colon: the short form <call>NAME text</call> works for a single string argument only", async () => {
  const renderer = roleColon();
  const env = makeEnv(renderer);
  await env.initialObservation();
  const r = await env.step(enc(" <call>calculator 48213 + 39677</call>"), { stopReason: "stop" });
  assert.deepEqual(r.messages!.at(-2)!.tool_calls![0]!.function, { name: "calculator", arguments: '{"expression":"48213 + 39677"}' });
  assert.equal(r.messages!.at(-1)!.content, "87890");
  const multi = defineTool({ name: "pair", description: "two args", schema: z.object({ a: z.string(), b: z.string() }), handler: async () => "" });
  const fmt = new TextToolCallFormat(renderer);
  fmt.declareTools([toolSpec(multi)], "");
  assert.match(fmt.parse(enc("<call>pair x y</call>")).message.unparsed_tool_calls![0]!.error, /not valid JSON/);
});

test("role_colon: malformed text calls under each parse-error policy", async () => {
  const renderer = roleColon();
  const fmt = new TextToolCallFormat(renderer);
  assert.match(fmt.parse(enc("<call>calculator {oops}</call>")).message.unparsed_tool_calls![0]!.error, /not valid JSON/);
  assert.match(fmt.parse(enc("<call>{}</call>")).message.unparsed_tool_calls![0]!.error, /no tool name/);
  assert.match(fmt.parse(enc('<call>calculator ["x"]</call>')).message.unparsed_tool_calls![0]!.error, /JSON object/);
  assert.equal(fmt.parse(enc("<call>calculator {")).termination, "malformed");

  const bad = enc("<call>calculator {oops}</call>");
  const terminate = makeEnv(renderer);
  await terminate.initialObservation();
  const t = await terminate.step(bad, { stopReason: "stop" });
  assert.deepEqual([t.episodeDone, t.reward, t.metrics!["stop/parse_error"]], [true, -1, 1]);

  const mask = makeEnv(renderer, { ...simpleRolloutConfig(), parse_error: { mode: "mask", reward: -1, max_retries: 0 } });
  await mask.initialObservation();
  const m = await mask.step(bad, { stopReason: "stop" });
  assert.deepEqual([m.episodeDone, m.reward, m.metrics![PARSE_ERROR_MASKED_METRIC_KEY]], [true, 0, 1]);

  const feedback = makeEnv(renderer, agenticRolloutConfig());
  await feedback.initialObservation();
  const steps: StepResult[] = [];
  for (let i = 0; i < 3; i++) steps.push(await feedback.step(bad, { stopReason: "stop" }));
  assert.deepEqual(
    steps.map((s) => s.episodeDone),
    [false, false, true],
    "two retries, then terminate",
  );
  assert.equal(steps[2]!.metrics!["parse_errors"], 3);
});

test("rollout limits: turns, tool calls, cut-off turns and unknown tools", async () => {
  const renderer = roleColon();
  const callTokens = enc(textToolCall("calculator", { expression: "1 + 1" }));
  const turns = makeEnv(renderer, simpleRolloutConfig({ maxTurns: 2 }));
  await turns.initialObservation();
  assert.equal((await turns.step(callTokens, { stopReason: "stop" })).episodeDone, false);
  const last = await turns.step(callTokens, { stopReason: "stop" });
  assert.deepEqual([last.episodeDone, last.metrics!["stop/max_turns"], last.metrics!["tool_calls"]], [true, 1, 2]);

  const calls = makeEnv(renderer, { ...agenticRolloutConfig(), limits: { ...agenticRolloutConfig().limits, max_tool_calls: 1 } });
  await calls.initialObservation();
  await calls.step(callTokens, { stopReason: "stop" });
  const over = await calls.step(callTokens, { stopReason: "stop" });
  assert.deepEqual([over.episodeDone, over.reward, over.metrics!["stop/max_tool_calls"]], [true, -0.1, 1]);

  const cut = makeEnv(renderer, agenticRolloutConfig());
  await cut.initialObservation();
  const c = await cut.step(enc(" 8789"), { stopReason: "length" });
  assert.deepEqual([c.episodeDone, c.reward, c.metrics!["stop/max_tokens"]], [true, -0.1, 1]);

  const unknown = makeEnv(renderer, agenticRolloutConfig());
  await unknown.initialObservation();
  const u = await unknown.step(enc(textToolCall("weather", { city: "Oslo" })), { stopReason: "stop" });
  assert.match(String(u.messages!.at(-1)!.content), /^Error: unknown tool "weather"; available: calculator/);

  let clock = 0;
  const slowEnv = new AgentToolEnv({
    renderer,
    tools: [
      defineTool({
        name: "wait",
        description: "takes time",
        schema: z.object({}),
        handler: async () => {
          clock += 700_000;
          return "done";
        },
      }),
    ],
    task: [{ role: "user", content: "go" }],
    rollout: agenticRolloutConfig(),
    grade: () => ({ reward: 1 }),
    now: () => clock,
  });
  await slowEnv.initialObservation();
  await slowEnv.step(enc(textToolCall("wait", {})), { stopReason: "stop" });
  const late = await slowEnv.step(enc(" done\n\nUser:"), { stopReason: "stop" });
  assert.deepEqual([late.episodeDone, late.reward, late.metrics!["stop/rollout_timeout"]], [true, -0.1, 1]);
});
