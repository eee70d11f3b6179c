// Malformed tool calls for every renderer that declares tools (and role_colon's <call> text
// convention): a well-formed call's tokens are cut, spliced and corrupted in many ways and each
// variant is fed to the agent tool environment. Whatever the policy samples, the episode either
// runs a tool (its result, possibly an error, goes back as a tool message), ends on a graded final
// answer, or meets the parse-error policy — it never throws. Also: the registry and the test
// setups agree on which renderers declare tools, and a tool that throws or hangs inside an
// episode becomes an error result the model reads.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { z } from "zod";
import { Prng } from "../../src/data/synthetic/prng.ts";
import type { Renderer } from "../../src/renderers/base.ts";
import { getRegisteredRendererNames, getRenderer } from "../../src/renderers/registry.ts";
import type { Message } from "../../src/renderers/types.ts";
import { PARSE_ERROR_MASKED_METRIC_KEY, type StepResult } from "../../src/rl/types.ts";
import { AgentToolEnv, answerText } from "../../src/toolUse/agentToolEnv.ts";
import { hasNativeTools, textToolCall } from "../../src/toolUse/callFormat.ts";
import { agenticRolloutConfig, simpleRolloutConfig, type RolloutConfig } from "../../src/toolUse/rolloutLimits.ts";
import { defineTool } from "../../src/toolUse/tool.ts";
import { calculatorTool } from "../../src/toolUse/tools/calculator.ts";
import { loadTokenizerFromDir } from "../../src/tokenizers/index.ts";
import { ROOT, tokensOf } from "../renderers/helpers.ts";
import { SETUPS } from "../renderers/setups.ts";

const call = (expression: string): Message => ({
  role: "assistant",
  content: "",
  tool_calls: [{ type: "function", id: "functions.calculator:0", function: { name: "calculator", arguments: JSON.stringify({ expression }) } }],
});

function responseTokens(renderer: Renderer, history: Message[], message: Message): number[] {
  const ex = renderer.buildSupervisedExample([...history, message], "last_assistant_message");
  return tokensOf(ex.modelInput).filter((_, i) => ex.weights[i]! > 0);
}

function makeEnv(renderer: Renderer, rollout: RolloutConfig): AgentToolEnv {
  return new AgentToolEnv({
    renderer,
    tools: [calculatorTool],
    task: [{ role: "user", content: "What is 48213 + 39677?" }],
    rollout,
    grade: (answer) => ({ reward: answerText(answer) === "87890" ? 1 : 0 }),
  });
}

/** Cut-offs at every position, a token dropped, swapped or repeated, and random tokens spliced in. */
function variants(tokens: readonly number[], vocab: number, rng: Prng): number[][] {
  const out: number[][] = [];
  for (let cut = 0; cut < tokens.length; cut++) out.push(tokens.slice(0, cut));
  for (let i = 0; i < tokens.length; i++) {
    out.push([...tokens.slice(0, i), ...tokens.slice(i + 1)]);
    out.push([...tokens.slice(0, i + 1), ...tokens.slice(i)]);
    if (i + 1 < tokens.length) out.push([...tokens.slice(0, i), tokens[i + 1]!, tokens[i]!, ...tokens.slice(i + 2)]);
  }
  for (let k = 0; k < 20; k++) {
    const at = rng.int(0, tokens.length);
    out.push([...tokens.slice(0, at), ...Array.from({ length: rng.int(1, 4) }, () => rng.int(0, vocab - 1)), ...tokens.slice(at)]);
  }
  out.push([...tokens, ...tokens]);
  return out;
}

/** What the environment did with one response: each outcome is one of the allowed ones. */
function outcome(r: StepResult): "tool" | "feedback" | "graded" | "parse_error" | "budget" {
  const last = r.messages?.at(-1);
  if (!r.episodeDone) {
    if (last?.role === "tool") return "tool";
    assert.match(String(last?.content), /could not be parsed/);
    return "feedback";
  }
  if (r.metrics?.["stop/parse_error"] === 1) return "parse_error";
  if (r.metrics?.["stop/completed"] === 1) return "graded";
  assert.ok(
    Object.keys(r.metrics ?? {}).some((k) => k.startsWith("stop/")),
    JSON.stringify(r.metrics),
  );
  return "budget";
}

test("every registered renderer that declares tools has a test setup marked tools (tml_v0's framing is a plug-in)", () => {
  const setups = new Map(SETUPS.map((s) => [s.renderer, s]));
  for (const name of getRegisteredRendererNames()) {
    if (name === "tml_v0") continue;
    const setup = setups.get(name);
    assert.ok(setup !== undefined, `${name} has no setup`);
    assert.equal(hasNativeTools(getRenderer(name, setup.tokenizer())), setup.tools, `${name}: setups.ts says tools=${setup.tools}`);
  }
});

const tinyTokenizer = loadTokenizerFromDir(join(ROOT, "fixtures", "models", "tiny-chat"));
const cases: { name: string; renderer: () => Renderer; wellFormed: (renderer: Renderer, history: Message[]) => number[] }[] = [
  ...SETUPS.filter((s) => s.tools).map((s) => ({
    name: s.renderer,
    renderer: () => getRenderer(s.renderer, s.tokenizer()),
    wellFormed: (renderer: Renderer, history: Message[]) => responseTokens(renderer, history, call("48213 + 39677")),
  })),
  {
    name: "role_colon <call> text",
    renderer: () => getRenderer("role_colon", tinyTokenizer),
    wellFormed: (renderer: Renderer) =>
      renderer.tokenizer.encode(` ${textToolCall("calculator", { expression: "48213 + 39677" })}`, { addSpecialTokens: false }),
  },
];

for (const c of cases) {
  test(`${c.name}: cut, spliced and corrupted calls never throw; each meets a tool, the grader or the parse-error policy`, async () => {
    const renderer = c.renderer();
    const rng = new Prng(7);
    const probe = makeEnv(renderer, simpleRolloutConfig());
    await probe.initialObservation();
    const history = [...(probe as unknown as { messages: Message[] }).messages];
    const good = c.wellFormed(renderer, history);
    const seen = new Set<string>();
    // The three parse-error policies take turns over the variants.
    const policies = [
      simpleRolloutConfig(),
      agenticRolloutConfig(),
      { ...simpleRolloutConfig(), parse_error: { mode: "mask" as const, reward: -1, max_retries: 0 } },
    ];
    for (const [i, tokens] of variants(good, Math.min(renderer.tokenizer.vocabSize, 50_000), rng).entries()) {
      const policy = policies[i % policies.length]!;
      const env = makeEnv(renderer, policy);
      await env.initialObservation();
      const r = await env.step(tokens, { stopReason: "stop" });
      const kind = outcome(r);
      seen.add(`${kind}/${policy.parse_error.mode}`);
      if (kind === "parse_error") {
        if (policy.parse_error.mode === "mask") assert.deepEqual([r.reward, r.metrics![PARSE_ERROR_MASKED_METRIC_KEY]], [0, 1]);
        else assert.equal(r.reward, policy.parse_error.reward);
      }
      if (kind === "feedback") assert.equal(policy.parse_error.mode, "feedback");
    }
    // The variants reach every branch: some still call the tool, and each policy meets parse errors.
    const kinds = [...seen].join(", ");
    assert.ok(
      [...seen].some((k) => k.startsWith("tool/")),
      kinds,
    );
    for (const k of ["parse_error/terminate", "feedback/feedback", "parse_error/mask"]) assert.ok(seen.has(k), `${k} not reached; saw ${kinds}`);
  });
}

test("inside an episode, a tool that throws or outlives its budget becomes an error result and the episode goes on", async () => {
  const renderer = getRenderer("role_colon", tinyTokenizer);
  const tools = [
    defineTool({
      name: "boom",
      description: "always fails",
      schema: z.object({}),
      handler: async () => {
        throw new Error("disk on fire");
      },
    }),
    defineTool({
      name: "hang",
      description: "never answers",
      schema: z.object({}),
      handler: (_args, { signal }) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
    }),
  ];
  const env = new AgentToolEnv({
    renderer,
    tools,
    task: [{ role: "user", content: "go" }],
    rollout: { ...simpleRolloutConfig(), tool_timeout_seconds: 0.05 },
    grade: () => ({ reward: 1 }),
  });
  await env.initialObservation();
  const enc = (s: string): number[] => tinyTokenizer.encode(s, { addSpecialTokens: false });
  const thrown = await env.step(enc(textToolCall("boom", {})), { stopReason: "stop" });
  assert.equal(thrown.episodeDone, false);
  assert.deepEqual(thrown.messages!.at(-1), { role: "tool", content: "Error: boom failed: disk on fire", name: "boom" });
  const started = Date.now();
  const hung = await env.step(enc(textToolCall("hang", {})), { stopReason: "stop" });
  assert.ok(Date.now() - started < 2000, "the timeout, not the tool, ended the call");
  assert.equal(hung.episodeDone, false);
  assert.equal(hung.messages!.at(-1)!.content, "Error: hang timed out after 50 ms");
  assert.equal(hung.metrics!["tool/tool_timeout"], 1);
  const done = await env.step(enc(" ok\n\nUser:"), { stopReason: "stop" });
  assert.deepEqual([done.episodeDone, done.reward, done.metrics!["tool_errors"], done.metrics!["tool_calls"]], [true, 1, 2, 2]);
});
