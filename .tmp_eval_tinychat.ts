// Throwaway comparison script (lives outside the repo after use).
import { evaluateAddition, greedyContinuations } from "./recipes/pretrain_tiny/greedy.ts";
import { Prng, allAdditionPairs, renderRoleColonPrompt, GUESS_SYSTEM_PROMPT, ARITHMETIC_FEWSHOT_PREFIX, type Conversation } from "./src/data/synthetic/index.ts";
import { getKernels } from "./src/engine/kernels/index.ts";
import { loadModelDir } from "./src/engine/loadModel.ts";
import { EngineModel } from "./src/engine/model/model.ts";
import { ByteLevelBpeEncoder, readTrainedBpe } from "./src/tokenizer_training/index.ts";
const dir = process.argv[2];
const { config, weights } = loadModelDir(dir);
const model = EngineModel.create(config, weights, { mode: "full", seed: 0 }, getKernels());
const enc = new ByteLevelBpeEncoder(readTrainedBpe("fixtures/models/tiny-chat"));
const held = allAdditionPairs("test");
const all = evaluateAddition(model, enc, held, 0);
const t150 = evaluateAddition(model, enc, new Prng(99).shuffled(held).slice(0, 150), 0);
const oneDigit = held.filter(([x, y]) => x < 10 && y < 10);
console.log(`all ${held.length}: acc ${all.accuracy.toFixed(4)} (${Math.round(all.accuracy * held.length)}) stop ${all.stopRate.toFixed(3)}; test150 acc ${t150.accuracy.toFixed(4)} stop ${t150.stopRate}`);
console.log("test150 examples", JSON.stringify(t150.examples));
const convs: Conversation[] = [
  [{ role: "user", content: "Hi!" }],
  [{ role: "user", content: "Who are you?" }],
  [{ role: "user", content: "What color is a glimmerfox?" }],
  [{ role: "user", content: "Who is the mayor of Pellow?" }],
  [{ role: "user", content: "What is 3 + 4?" }],
  [...ARITHMETIC_FEWSHOT_PREFIX, { role: "user", content: "What is 23 + 58?" }],
  [{ role: "user", content: "Spell cloud." }],
  [{ role: "user", content: "What comes after 41?" }],
  [{ role: "system", content: GUESS_SYSTEM_PROMPT }],
  [{ role: "system", content: GUESS_SYSTEM_PROMPT }, { role: "player", content: "Guess: 512" }, { role: "user", content: "Too low" }],
];
const out = greedyContinuations(model, enc, convs.map((c) => [0, ...enc.encode(renderRoleColonPrompt(c))]), { maxNewTokens: 24, stop: "\n\nUser:", eosTokenId: 0 });
convs.forEach((c, i) => console.log(JSON.stringify(c[c.length - 1].content), "→", JSON.stringify(out[i])));
