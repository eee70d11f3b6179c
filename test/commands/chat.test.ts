// `cookbook chat`: incremental decoding (held-back UTF-8 and stop-string prefixes), chunked
// streaming, the REPL's history, system prompt, settings, multi-line input and commands (with a
// scripted sampler), and the real thing on tiny-chat: embedded, on a checkpoint, through a server,
// and from the command line with piped stdin.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatOptionsSchema, openChatTarget, runChat, type ChatTarget } from "../../src/commands/chat.ts";
import { CHUNK_SCHEDULE, IncrementalDecoder, streamReply } from "../../src/replyStream.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { startServer } from "../../src/server/server.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../../src/tinker/types.ts";
import { modelInputToInts } from "../../src/tinker/modelInput.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import type { Tokenizer } from "../../src/tokenizers/types.ts";
import { trainTinyChat, type TrainedTinyChat } from "./trainedTinyChat.ts";

const root = mkdtempSync(join(tmpdir(), "chat-test-"));
const store = join(root, "store");
let trained: TrainedTinyChat;
before(async () => {
  trained = await trainTinyChat(store, { steps: 2 });
});
after(async () => {
  await trained?.service.close();
  rmSync(root, { recursive: true, force: true });
});

/** Tokens are UTF-8 bytes. */
const byteTokenizer = {
  name: "bytes",
  encode: (text: string) => [...Buffer.from(text, "utf8")],
  decode: (tokens: readonly number[]) => Buffer.from(tokens).toString("utf8"),
} as unknown as Tokenizer;
const bytes = (s: string): number[] => [...Buffer.from(s, "utf8")];

test("incremental decoding holds back half a UTF-8 character and a possible stop string", () => {
  const d = new IncrementalDecoder(byteTokenizer, ["\n\nUser:"]);
  const euro = bytes("€"); // three bytes
  assert.equal(d.push([...bytes("Price "), euro[0]!]), "Price ");
  assert.equal(d.push([euro[1]!, euro[2]!, ...bytes(" 5\n")]), "€ 5", "the newline may start the stop string");
  assert.equal(d.push(bytes("\nUs")), "");
  assert.equal(d.stopIndex(), -1);
  assert.equal(d.push(bytes("er: more")), "", "nothing after the stop string is shown");
  assert.equal(d.stopIndex(), "Price € 5".length);
  assert.equal(d.flush(), "");
  const e = new IncrementalDecoder(byteTokenizer, ["\n\nUser:"]);
  e.push(bytes("Bye\n"));
  assert.equal(e.flush(), "\n", "a held-back tail that never became a stop string is shown at the end");
});

/** A sampler that replies with a scripted token list, honouring max_tokens and stop tokens. */
function scriptedSampler(reply: number[], stopToken: number | null): SamplingClient & { calls: { prompt: number[]; params: SamplingParams }[] } {
  const calls: { prompt: number[]; params: SamplingParams }[] = [];
  return {
    baseModel: "scripted",
    calls,
    async sample(prompt: ModelInput, _n: number, params: SamplingParams): Promise<SampleResponse> {
      const ints = modelInputToInts(prompt);
      calls.push({ prompt: ints, params });
      // How much of the reply the prompt already ends with (earlier chunks of this turn).
      let done = Math.min(ints.length, reply.length);
      while (done > 0 && !reply.slice(0, done).every((t, i) => ints[ints.length - done + i] === t)) done--;
      const out: number[] = [];
      let stop = false;
      for (let i = done; i < reply.length && out.length < params.max_tokens!; i++) {
        out.push(reply[i]!);
        if (reply[i] === stopToken) {
          stop = true;
          break;
        }
      }
      return { sequences: [{ tokens: out, stop_reason: stop ? "stop" : "length" }] };
    },
    async computeLogprobs(): Promise<(number | null)[]> {
      throw new Error("not used");
    },
  };
}

test("streamReply samples in growing chunks that continue the prompt, seeded per chunk, until a stop", async () => {
  const reply = Array.from({ length: 40 }, (_, i) => 100 + i);
  reply[30] = 7;
  const sampler = scriptedSampler(reply, 7);
  const seen: number[][] = [];
  const prompt: ModelInput = { chunks: [{ type: "encoded_text", tokens: [1, 2, 3] }] };
  const r = await streamReply(sampler, prompt, { maxTokens: 100, temperature: 0.5, topP: 0.9, seed: 11, stop: [7] }, (t) => void seen.push(t));
  assert.deepEqual(
    seen.map((s) => s.length),
    [4, 8, 16, 3],
  );
  assert.deepEqual(r.tokens, reply.slice(0, 31));
  assert.equal(r.stopReason, "stop");
  assert.deepEqual(
    sampler.calls.map((c) => c.params.max_tokens),
    [...CHUNK_SCHEDULE],
  );
  assert.deepEqual(sampler.calls[2]!.prompt, [1, 2, 3, ...reply.slice(0, 12)], "each chunk continues from the prompt and the reply so far");
  assert.ok(sampler.calls.every((c) => c.params.temperature === 0.5 && c.params.top_p === 0.9));
  assert.equal(new Set(sampler.calls.map((c) => c.params.seed)).size, 4, "each chunk has its own seed");
  const capped = await streamReply(scriptedSampler(reply, null), prompt, { maxTokens: 10, temperature: 1, topP: 1, stop: [] }, () => undefined);
  assert.deepEqual([capped.tokens.length, capped.stopReason], [10, "length"]);
});

async function scriptedChat(replyText: string): Promise<{ chat: ChatTarget; sampler: ReturnType<typeof scriptedSampler> }> {
  const tokenizer = await getTokenizer("tiny-chat");
  const renderer = getRenderer("role_colon", tokenizer);
  const sampler = scriptedSampler(tokenizer.encode(replyText, { addSpecialTokens: false }), null);
  return {
    chat: { sampler, tokenizer, renderer, rendererName: "role_colon", modelName: "tiny-chat", label: "scripted", close: async () => undefined },
    sampler,
  };
}

async function* linesOf(text: string): AsyncGenerator<string> {
  for (const line of text.split("\n")) yield line;
}

test("the REPL keeps history and the system prompt, takes multi-line input, /set, /reset, /save", async () => {
  const { chat, sampler } = await scriptedChat(" Arr, 5 it be!\n\nUser: and more");
  let out = "";
  const saved = join(root, "saved.jsonl");
  const input = [
    "What is 2+3?",
    "Tell me \\",
    "a story",
    '"""',
    "line one",
    "line two",
    '"""',
    "/set temperature=0.2 max_tokens=64",
    "/set temprature=1",
    `/save ${saved}`,
    "/reset",
    "/system Speak plainly.",
    "Hi",
    "/nope",
    "/exit",
    "never sent",
  ].join("\n");
  const conv = await runChat(chat, ChatOptionsSchema.parse({ system: "You are a pirate." }), {
    lines: linesOf(input),
    write: (t) => (out += t),
    interactive: false,
  });
  const prompts = sampler.calls.map((c) => chat.tokenizer.decode(c.prompt, { skipSpecialTokens: true }));
  const firstOfTurn = prompts.filter((p) => p.endsWith("Assistant:"));
  assert.equal(firstOfTurn.length, 4, "four messages were sent");
  assert.ok(firstOfTurn[0]!.startsWith("System: You are a pirate.\n\nUser: What is 2+3?"), firstOfTurn[0]);
  assert.ok(firstOfTurn[1]!.includes("Assistant: Arr, 5 it be!\n\nUser: Tell me \na story\n\nAssistant:"), firstOfTurn[1]);
  assert.ok(firstOfTurn[2]!.includes("User: line one\nline two\n\nAssistant:"), firstOfTurn[2]);
  assert.equal(firstOfTurn[3], "System: Speak plainly.\n\nUser: Hi\n\nAssistant:", "after /reset and /system only the new system prompt and message");
  assert.equal(out.split("\n").filter((l) => l === "Arr, 5 it be!").length, 4, "each reply is printed without its stop string");
  assert.ok(!out.includes("and more"));
  assert.match(out, /temperature=0\.2 top_p=1 max_tokens=64/);
  assert.match(out, /error: unknown config key "temprature"/);
  assert.match(out, /error: unknown command \/nope/);
  const lastCalls = sampler.calls.slice(-2);
  assert.ok(lastCalls.every((c) => c.params.temperature === 0.2));
  const savedConv = JSON.parse(readFileSync(saved, "utf8").trim()) as { messages: { role: string; content: string }[] };
  assert.equal(savedConv.messages.length, 7);
  assert.deepEqual(savedConv.messages[2], { role: "assistant", content: "Arr, 5 it be!" });
  assert.deepEqual(
    conv.map((m) => m.role),
    ["system", "user", "assistant"],
  );
});

async function greedyReply(source: { modelPath?: string; baseModel?: string }, text: string): Promise<string> {
  const tokenizer = await getTokenizer("tiny-chat");
  const renderer = getRenderer("role_colon", tokenizer);
  const sampler = await trained.service.createSamplingClient(source);
  const r = await sampler.sample(renderer.buildGenerationPrompt([{ role: "user", content: text }]), 1, {
    max_tokens: 40,
    temperature: 0,
    stop: renderer.getStopSequences(),
  });
  return String(renderer.parseResponse(r.sequences[0]!.tokens).message.content).trim();
}

test("on the engine: a streamed greedy reply equals one greedy sample, on a base model and a checkpoint", async () => {
  for (const target of ["tiny-chat", trained.samplerPath]) {
    const chat = await openChatTarget(target, ChatOptionsSchema.parse({ store, temperature: 0, max_tokens: 40 }));
    let out = "";
    try {
      assert.equal(chat.rendererName, "role_colon");
      await runChat(chat, ChatOptionsSchema.parse({ temperature: 0, max_tokens: 40 }), {
        lines: linesOf("What is 4+4?"),
        write: (t) => (out += t),
        interactive: false,
      });
    } finally {
      await chat.close();
    }
    const expected = await greedyReply(target.startsWith("tinker://") ? { modelPath: target } : { baseModel: target }, "What is 4+4?");
    assert.ok(expected.length > 0, "the model says something");
    assert.equal(out.trim(), expected, target);
  }
});

test("cookbook chat from the command line with piped stdin, embedded and through a server", async () => {
  const bin = join(import.meta.dirname, "..", "..", "bin", "cookbook.js");
  const expected = await greedyReply({ modelPath: trained.samplerPath }, "Hello there");
  const env = { ...process.env, TINKER_BASE_URL: "", TINKER_API_KEY: "", HF_HUB_OFFLINE: "1" };
  const args = ["chat", trained.samplerPath, "--temperature", "0", "--max-tokens", "40", "--store", store];
  const embedded = spawnSync(process.execPath, [bin, ...args], { input: "Hello there\n", encoding: "utf8", env });
  assert.equal(embedded.status, 0, embedded.stderr);
  assert.equal(embedded.stdout.trim(), expected);
  const server = await startServer({ port: 0, storeDir: store }, { log: () => undefined });
  try {
    const remote = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      // Asynchronous: the server runs in this process.
      import("node:child_process").then(({ execFile }) => {
        const child = execFile(process.execPath, [bin, ...args, "--base-url", server.url], { env }, (err, stdout, stderr) =>
          resolve({ status: err ? 1 : 0, stdout, stderr }),
        );
        child.stdin!.end("Hello there\n");
      });
    });
    assert.equal(remote.status, 0, remote.stderr);
    assert.equal(remote.stdout.trim(), expected);
  } finally {
    await server.close();
  }
  const bad = spawnSync(process.execPath, [bin, "chat", "tiny-chat", "--top-p", "0"], { input: "", encoding: "utf8", env });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--top-p: /);
});
