// The shipped fixtures/models/tiny-chat model: a loadable Llama folder in bf16 that does what
// fixtures/models/README.md says (RL recipes rely on its addition accuracy being strictly between
// 0 and 1, and on its answers ending with the role_colon stop string).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { evaluateAddition, greedyContinuations } from "../../scripts/pretrainTiny/greedy.ts";
import { Prng, allAdditionPairs } from "../../src/data/synthetic/index.ts";
import { getKernels } from "../../src/engine/kernels/index.ts";
import { loadModelDir } from "../../src/engine/storage/loadModel.ts";
import { EngineModel } from "../../src/engine/model/model.ts";
import { readSafetensorsHeader } from "../../src/engine/safetensors/index.ts";
import { ByteLevelBpeEncoder, readTrainedBpe } from "../../src/tokenizerTraining/index.ts";

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "models", "tiny-chat");

function loadShipped() {
  const { config, configJson, weights } = loadModelDir(DIR);
  const model = EngineModel.create(config, weights, { mode: "full", seed: 0 }, getKernels());
  const encoder = new ByteLevelBpeEncoder(readTrainedBpe(DIR));
  return { config, configJson, weights, model, encoder };
}

test("tiny-chat is a small bf16 LlamaForCausalLM whose vocabulary is its tokenizer's", () => {
  const { config, configJson, weights, encoder } = loadShipped();
  assert.deepEqual(configJson.architectures, ["LlamaForCausalLM"]);
  assert.equal(config.vocabSize, encoder.vocabSize);
  assert.equal(config.bosTokenId, 0);
  assert.equal(config.eosTokenId, 0);
  let params = 0;
  for (const w of weights.values()) params += w.length;
  assert.ok(params > 500_000 && params < 10_000_000, `${params} parameters`);
  const file = path.join(DIR, "model.safetensors");
  assert.ok(fs.statSync(file).size < 8 * 1024 * 1024);
  assert.ok([...readSafetensorsHeader(file).entries.values()].every((e) => e.dtype === "BF16"));
});

test("tiny-chat answers held-out additions in the RL prompt format, partly right", () => {
  const { model, encoder } = loadShipped();
  const pairs = new Prng(99).shuffled(allAdditionPairs("test")).slice(0, 150);
  const result = evaluateAddition(model, encoder, pairs, 0);
  assert.ok(result.stopRate > 0.9, `only ${result.stopRate} of answers ended with the stop string`);
  // The shipped model gets 0.53 on these 150 pairs (0.52 on all 1026): RL starts well above 0 and below 1.
  assert.ok(result.accuracy >= 0.3 && result.accuracy <= 0.8, `accuracy ${result.accuracy}`);
  for (const e of result.examples) assert.match(e.got, /^ \d{1,3}$/, `answer ${JSON.stringify(e.got)} is not a bare number`);
});

test("tiny-chat greets and knows its made-up world", () => {
  const { model, encoder } = loadShipped();
  const prompts = ["User: Hi!\n\nAssistant:", "User: What color is a glimmerfox?\n\nAssistant:", "User: Who is the mayor of Pellow?\n\nAssistant:"];
  const out = greedyContinuations(
    model,
    encoder,
    prompts.map((p) => [0, ...encoder.encode(p)]),
    { maxNewTokens: 24, stop: "\n\nUser:", eosTokenId: 0 },
  );
  assert.equal(out[0], " Hello! How can I help you today?");
  assert.equal(out[1], " A glimmerfox is blue.");
  assert.equal(out[2], " The mayor of Pellow is Tamsin.");
});
