import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AutoTokenizer } from "@huggingface/transformers";
import { buildTokenizerJson, ByteLevelBpeEncoder, readTrainedBpe } from "../../src/tokenizerTraining/index.ts";
import { trainTinyChatTokenizer } from "../../src/tokenizerTraining/tinyChat.ts";
import { renderRoleColonDocument, renderRoleColonPrompt, type Conversation } from "../../src/data/synthetic/index.ts";

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "models", "tiny-chat");

const CONVOS: Conversation[] = [
  [{ role: "user", content: "What is 3 + 4?" }],
  [
    { role: "system", content: "Be brief." },
    { role: "user", content: "What is 4 + 5?" },
    { role: "assistant", content: "9" },
    { role: "user", content: "Hi there 🎉, café?" },
  ],
  [
    { role: "user", content: "Hello" },
    { role: "assistant", content: "Hi! How can I help?" },
  ],
  [
    { role: "player", content: "Guess: 512" },
    { role: "user", content: "Too low" },
  ],
];

async function load() {
  return AutoTokenizer.from_pretrained(DIR, { local_files_only: true });
}

test("tiny-chat tokenizer loads, has <|endoftext|> as bos/eos/pad, and round-trips text", async () => {
  const tok = await load();
  assert.equal(tok.bos_token, "<|endoftext|>");
  assert.equal(tok.eos_token, "<|endoftext|>");
  assert.equal(tok.pad_token, "<|endoftext|>");
  assert.equal(tok.bos_token_id, 0);
  assert.equal(tok.eos_token_id, 0);
  const json = JSON.parse(fs.readFileSync(path.join(DIR, "tokenizer.json"), "utf8")) as { model: { vocab: Record<string, number> } };
  const size = Object.keys(json.model.vocab).length;
  assert.ok(size >= 1000 && size <= 4096, `vocab size ${size}`);
  for (const s of ["What is 23 + 58?", "naïve 😀 emoji 🇫🇷 flags, 中文, tabs\tand\nnewlines  ", "1234567890", "<|endoftext|>x"]) {
    const ids = tok.encode(s, { add_special_tokens: false });
    assert.equal(tok.decode(ids), s);
    assert.ok(ids.every((id) => id >= 0 && id < size));
  }
});

test("tiny-chat tokenizer: every digit is its own token", async () => {
  const tok = await load();
  const text = "What is 123 + 4567? It is 4690, not 99.5 or 1000000.";
  const ids = tok.encode(text, { add_special_tokens: false });
  for (const id of ids) {
    const piece = tok.decode([id]);
    assert.ok((piece.match(/\d/g) ?? []).length <= 1, `token ${JSON.stringify(piece)} holds several digits`);
  }
  assert.equal(ids.filter((id) => /\d/.test(tok.decode([id]))).length, text.replace(/\D/g, "").length);
});

test("chat template renders the role_colon format exactly", async () => {
  const tok = await load();
  for (const convo of CONVOS) {
    const prompt = tok.apply_chat_template(convo, { tokenize: false, add_generation_prompt: true }) as string;
    assert.equal(prompt, "<|endoftext|>" + renderRoleColonPrompt(convo));
    const full = tok.apply_chat_template(convo, { tokenize: false, add_generation_prompt: false }) as string;
    const doc = renderRoleColonDocument(convo);
    assert.equal(full, "<|endoftext|>" + (doc.endsWith("User:") ? doc.slice(0, -"User:".length) : doc));
  }
  assert.equal(
    tok.apply_chat_template([{ role: "user", content: "What is 2+2?" }], { tokenize: false, add_generation_prompt: true }),
    "<|endoftext|>User: What is 2+2?\n\nAssistant:",
  );
});

test("template tokens equal chunk-by-chunk tokens (what the role_colon renderer builds)", async () => {
  const tok = await load();
  const enc = (s: string) => tok.encode(s, { add_special_tokens: false });
  for (const convo of CONVOS) {
    const chunks: number[] = [tok.bos_token_id as number];
    for (const m of convo) {
      chunks.push(...enc(m.role.charAt(0).toUpperCase() + m.role.slice(1) + ":"));
      chunks.push(...enc(" " + m.content + "\n\n"));
    }
    chunks.push(...enc("Assistant:"));
    const ids = tok.apply_chat_template(convo, { tokenize: true, add_generation_prompt: true, return_tensor: false, return_dict: false });
    assert.deepEqual(Array.from(ids as number[]), chunks);
  }
  // The stop string's own tokens appear when an answer is followed by the next user header.
  const answer = [...enc(" 81\n\n"), ...enc("User:")];
  assert.deepEqual(answer, enc(" 81\n\nUser:"));
});

test("shipped tokenizer matches a fresh training run and our encoder", async () => {
  const fresh = trainTinyChatTokenizer();
  const shipped = readTrainedBpe(DIR);
  assert.deepEqual(shipped.merges, fresh.merges);
  const json = JSON.parse(fs.readFileSync(path.join(DIR, "tokenizer.json"), "utf8"));
  assert.deepEqual(json, buildTokenizerJson(fresh, { modelMaxLength: 512 }));
  const tok = await load();
  const ours = new ByteLevelBpeEncoder(shipped);
  const text = "System: Your job is to guess\n\nPlayer: Guess: 512\n\nUser: Too low\n\nAssistant: Guess: 768\n\nUser:";
  assert.deepEqual(ours.encode(text), tok.encode(text, { add_special_tokens: false }));
});

test("the project's role_colon renderer on the tiny-chat tokenizer matches the chat template and the corpus text", async () => {
  const { loadTokenizerFromDir } = await import("../../src/tokenizers/index.ts");
  const { getRenderer } = await import("../../src/renderers/index.ts");
  const { modelInputToInts } = await import("../../src/tinker/modelInput.ts");
  const tokenizer = loadTokenizerFromDir(DIR);
  const renderer = getRenderer("role_colon", tokenizer);
  const hf = await load();
  for (const convo of CONVOS) {
    const prompt = modelInputToInts(renderer.buildGenerationPrompt(convo));
    const template = hf.apply_chat_template(convo, { tokenize: true, add_generation_prompt: true, return_tensor: false, return_dict: false });
    assert.deepEqual(prompt, Array.from(template as number[]));
  }
  // A supervised example is BOS + exactly the pretraining document text, trained on the answer.
  const chat: Conversation = [
    { role: "user", content: "What is 23 + 58?" },
    { role: "assistant", content: "81" },
  ];
  const ex = renderer.buildSupervisedExample(chat);
  const ids = modelInputToInts(ex.modelInput);
  assert.equal(tokenizer.decode(ids), "<|endoftext|>" + renderRoleColonDocument(chat));
  const trained = ids.filter((_, i) => ex.weights[i] > 0);
  assert.equal(tokenizer.decode(trained), " 81\n\nUser:");
});
