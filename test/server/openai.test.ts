// `cookbook serve`'s OpenAI API through the official `openai` npm client: a checkpoint trained by
// sl_basic (three steps) streamed as a chat completion, non-streamed chat and completions on the
// base model, the models list, and clear 4xx answers for bad requests.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { getRenderer } from "../../src/renderers/registry.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { startServer, type RunningServer } from "../../src/server/index.ts";
import { modelInputLength } from "../../src/tinker/modelInput.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { runRecipe } from "../recipes/helpers.ts";

let root: string;
let server: RunningServer;
let client: OpenAI;
let checkpoint: string;
const saved: Record<string, string | undefined> = {};

before(async () => {
  root = mkdtempSync(join(tmpdir(), "serve-openai-"));
  for (const k of ["COOKBOOK_HOME", "HF_HUB_OFFLINE"]) saved[k] = process.env[k];
  process.env["COOKBOOK_HOME"] = join(root, "home");
  process.env["HF_HUB_OFFLINE"] = "1";
  const logDir = join(root, "sl");
  await runRecipe("sl_basic", [
    `log_path=${logDir}`,
    "model_name=tiny-chat",
    "max_steps=3",
    "batch_size=4",
    "test_size=8",
    "eval_every=0",
    "save_every=0",
    "lora_rank=4",
  ]);
  const final = readCheckpoints(logDir).find((c) => c.final === true);
  assert.ok(final?.sampler_path !== undefined, "sl_basic recorded no final sampler checkpoint");
  checkpoint = final.sampler_path;
  // The server reads the store the embedded run wrote ($COOKBOOK_HOME/checkpoints).
  server = await startServer({ port: 0 }, { log: () => undefined });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused-on-loopback", maxRetries: 0 });
});

after(async () => {
  await server?.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(root, { recursive: true, force: true });
});

const question = [{ role: "user" as const, content: "What is 12 + 7?" }];

test("GET /v1/models lists the base models and the trained checkpoint; a model is retrieved by id", async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.ok(ids.includes("tiny-chat"), ids.join(", "));
  assert.ok(ids.includes(checkpoint), `${checkpoint} missing from ${ids.join(", ")}`);
  assert.equal((await client.models.retrieve("tiny-chat")).id, "tiny-chat");
});

test("a chat completion streams from the sl_basic checkpoint, and matches the same request unstreamed", async (t) => {
  const streamOnce = async (): Promise<{ text: string; ttftMs: number; chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] }> => {
    const t0 = performance.now();
    const stream = await client.chat.completions.create({
      model: checkpoint,
      messages: question,
      max_tokens: 24,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let ttftMs = -1;
    let text = "";
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) {
      chunks.push(c);
      const piece = c.choices[0]?.delta.content ?? "";
      if (piece !== "" && ttftMs < 0) ttftMs = performance.now() - t0;
      text += piece;
    }
    return { text, ttftMs, chunks };
  };
  const cold = await streamOnce();
  const warm = await streamOnce();
  t.diagnostic(`time to first token, tiny-chat checkpoint: ${cold.ttftMs.toFixed(0)} ms cold (sampler load), ${warm.ttftMs.toFixed(0)} ms warm`);
  const { chunks, text } = warm;
  assert.ok(text.length > 0, "no content streamed");
  assert.equal(chunks[0]!.choices[0]!.delta.role, "assistant");
  assert.ok(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === checkpoint && c.id === chunks[0]!.id));
  const finishes = chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason).filter((f) => f !== null));
  assert.equal(finishes.length, 1);
  assert.ok(finishes[0] === "stop" || finishes[0] === "length");
  const usage = chunks[chunks.length - 1]!.usage;
  assert.ok(usage !== undefined && usage !== null && usage.completion_tokens > 0 && usage.total_tokens === usage.prompt_tokens + usage.completion_tokens);
  assert.equal(cold.text, warm.text, "greedy decoding must repeat itself");
  const whole = await client.chat.completions.create({ model: checkpoint, messages: question, max_tokens: 24, temperature: 0 });
  assert.equal(whole.choices[0]!.message.content, text, "streamed and unstreamed greedy replies differ");
});

test("non-streamed chat on the base model: the renderer's prompt, usage, n choices, stop strings", async () => {
  const res = await client.chat.completions.create({ model: "tiny-chat", messages: question, max_tokens: 12, temperature: 0.8, n: 3, seed: 5 });
  assert.equal(res.object, "chat.completion");
  assert.equal(res.choices.length, 3);
  assert.deepEqual(
    res.choices.map((c) => c.index),
    [0, 1, 2],
  );
  const tokenizer = await getTokenizer("tiny-chat");
  const promptTokens = modelInputLength(getRenderer("role_colon", tokenizer).buildGenerationPrompt(question));
  assert.equal(res.usage?.prompt_tokens, promptTokens);
  const greedy = await client.chat.completions.create({ model: "tiny-chat", messages: question, max_tokens: 24, temperature: 0 });
  const reply = greedy.choices[0]!.message.content ?? "";
  assert.ok(reply.length >= 2, `reply ${JSON.stringify(reply)}`);
  // A stop string taken from the greedy reply cuts the same request's reply right before it.
  const stop = reply.slice(Math.floor(reply.length / 2));
  const cut = await client.chat.completions.create({ model: "tiny-chat", messages: question, max_tokens: 24, temperature: 0, stop: [stop] });
  assert.equal(cut.choices[0]!.message.content, reply.slice(0, reply.indexOf(stop)));
  assert.equal(cut.choices[0]!.finish_reason, "stop");
});

test("completions: text in, text out, streamed or not, with stop strings", async () => {
  const prompt = "User: What is 12 + 7?\n\nAssistant:";
  const whole = await client.completions.create({ model: "tiny-chat", prompt, max_tokens: 16, temperature: 0 });
  assert.equal(whole.object, "text_completion");
  const text = whole.choices[0]!.text;
  assert.ok(text.length > 0);
  const stream = await client.completions.create({ model: "tiny-chat", prompt, max_tokens: 16, temperature: 0, stream: true });
  let streamed = "";
  let finish: string | null = null;
  for await (const c of stream) {
    streamed += c.choices[0]?.text ?? "";
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(streamed, text);
  assert.equal(finish, whole.choices[0]!.finish_reason);
  const stop = text.trim().slice(0, 1);
  const cut = await client.completions.create({ model: "tiny-chat", prompt, max_tokens: 16, temperature: 0, stop });
  assert.equal(cut.choices[0]!.text, text.slice(0, text.indexOf(stop)));
  assert.equal(cut.choices[0]!.finish_reason, "stop");
});

test("bad requests get clear 4xx answers in OpenAI's error shape", async () => {
  await assert.rejects(client.chat.completions.create({ model: "no-such-model", messages: question }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.NotFoundError, String(err));
    assert.equal(err.code, "model_not_found");
    assert.match(err.message, /model "no-such-model" is not served here: .*GET \/v1\/models lists what is/s);
    return true;
  });
  await assert.rejects(client.chat.completions.create({ model: "tinker://nope/sampler_weights/x", messages: question }), OpenAI.NotFoundError);
  await assert.rejects(client.chat.completions.create({ model: "tiny-chat", messages: [] }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.param, "messages");
    assert.match(err.message, /messages must hold at least one message/);
    return true;
  });
  await assert.rejects(
    client.chat.completions.create({
      model: "tiny-chat",
      messages: question,
      tools: [{ type: "function", function: { name: "add", parameters: { type: "object" } } }],
    }),
    /400 renderer role_colon does not support tool calling; the model's renderer cannot declare tools, so send the request without "tools"/,
  );
  await assert.rejects(client.chat.completions.create({ model: "tiny-chat", messages: question, stream: true, n: 2 }), /400 stream=true takes n=1 only/);
  await assert.rejects(
    client.chat.completions.create({
      model: "tiny-chat",
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "http://x/y.png" } }] }],
    }),
    /messages\[0\]\.content\[0\] is of type "image_url"; this server takes text parts only/,
  );
  const badJson = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{not json" });
  assert.equal(badJson.status, 400);
  const body = (await badJson.json()) as { error: { message: string; type: string } };
  assert.equal(body.error.type, "invalid_request_error");
  assert.match(body.error.message, /request body is not valid JSON/);
  const noRoute = await fetch(`${server.url}/v1/embeddings`, { method: "POST", body: "{}" });
  assert.equal(noRoute.status, 404);
  assert.match(((await noRoute.json()) as { error: { message: string } }).error.message, /no such endpoint: POST \/v1\/embeddings/);
});

test("with an API key, the OpenAI client's bearer token is checked", async () => {
  const keyed = await startServer({ port: 0, apiKey: "serve-openai-key" }, { log: () => undefined });
  try {
    const wrong = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: "wrong-key-123", maxRetries: 0 });
    await assert.rejects(wrong.models.list(), OpenAI.AuthenticationError);
    const right = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: "serve-openai-key", maxRetries: 0 });
    const ids = [];
    for await (const m of right.models.list()) ids.push(m.id);
    assert.ok(ids.includes("tiny-chat"));
  } finally {
    await keyed.close();
  }
});
