// Pretrains the project's tiny Llama-family chat model from scratch on synthetic role_colon
// conversations (src/data/synthetic/), with full-parameter training on the embedded engine, and
// exports it as a Hugging Face folder (config.json + bf16 model.safetensors + tokenizer files).
// This is how fixtures/models/tiny-chat was made; see fixtures/models/README.md. With init_from it
// continues training an existing model folder instead (the second stage of the shipped model).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import { LogDirBehaviorSchema } from "../../src/config/common.ts";
import { formatConfigHelp } from "../../src/config/help.ts";
import { parseConfigArgs } from "../../src/config/parse.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { DEFAULT_CORPUS_MIX, Prng, allAdditionPairs, corpusDocuments, type CorpusMix } from "../../src/data/synthetic/index.ts";
import { getKernels } from "../../src/engine/kernels/index.ts";
import { loadModelDir } from "../../src/engine/storage/loadModel.ts";
import { parseModelConfig, type ModelConfig } from "../../src/engine/model/config.ts";
import { EngineModel } from "../../src/engine/model/model.ts";
import { withRun } from "../../src/runs/session.ts";
import { ByteLevelBpeEncoder, ENDOFTEXT, readTrainedBpe } from "../../src/tokenizerTraining/index.ts";
import { BatchStream, documentTokens, makeBatch } from "./batches.ts";
import { exportHfModel } from "./export.ts";
import { evaluateAddition, greedyContinuations } from "./greedy.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const SHIPPED_TOKENIZER = path.join(REPO_ROOT, "fixtures", "models", "tiny-chat");

const mixWeight = (kind: Exclude<keyof CorpusMix, "easy_fraction">, what: string) => z.number().min(0).default(DEFAULT_CORPUS_MIX[kind]).describe(what);
const MixSchema = z
  .object({
    addition: mixWeight("addition", "Weight of short addition chats (the RL arithmetic prompt shape)"),
    addition_drill: mixWeight("addition_drill", "Weight of 3–8 question addition drills"),
    small_talk: mixWeight("small_talk", "Weight of greetings and small talk"),
    world: mixWeight("world", "Weight of questions about the made-up world"),
    numbers: mixWeight("numbers", "Weight of counting / comparing / next-number chats"),
    words: mixWeight("words", "Weight of spelling and word chats"),
    guess_number: mixWeight("guess_number", "Weight of guess-the-number game prefixes"),
    easy_fraction: z
      .number()
      .min(0)
      .max(1)
      .default(DEFAULT_CORPUS_MIX.easy_fraction ?? 0)
      .describe("Fraction of drill pairs that add a one-digit number"),
  })
  .prefault({})
  .describe("Relative weights of the document kinds in the synthetic corpus");

export const configSchema = z.object({
  log_path: z.string().default("/tmp/tinker-examples/pretrain_tiny").describe("Run directory (metrics.jsonl, logs.log, run.json)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already has a run"),
  output_dir: z.string().default("").describe("Where the final Hugging Face model folder goes (empty: <log_path>/model)"),
  tokenizer_dir: z.string().default(SHIPPED_TOKENIZER).describe("Folder with the tokenizer.json to train with (scripts/makeFixtures.ts makes it)"),
  init_from: z
    .string()
    .default("")
    .describe(
      "Continue training this Hugging Face model folder (its config.json and weights) instead of random weights; model.* and seed's initial weights are then unused. Empty: train from scratch",
    ),
  model: z
    .object({
      hidden_size: z.number().int().positive().default(160).describe("Residual width"),
      intermediate_size: z.number().int().positive().default(432).describe("SwiGLU MLP width"),
      num_layers: z.number().int().positive().default(4).describe("Decoder layers"),
      num_heads: z.number().int().positive().default(4).describe("Attention heads"),
      num_kv_heads: z.number().int().positive().default(4).describe("Key/value heads (grouped-query attention when fewer)"),
      max_position_embeddings: z.number().int().positive().default(512).describe("Context length"),
      rope_theta: z.number().positive().default(10000).describe("RoPE base"),
      tie_word_embeddings: z.boolean().default(true).describe("Share the embedding and output matrices"),
      init_std: z.number().positive().default(0.02).describe("Std of the random initial weights"),
    })
    .prefault({})
    .describe("Llama architecture of the model trained from scratch"),
  seed: z.number().int().default(0).describe("Seed of the initial weights"),
  data_seed: z.number().int().default(1).describe("Seed of the synthetic training document stream"),
  mix: MixSchema,
  batch_tokens: z.number().int().positive().default(1024).describe("Target tokens per optimizer step (whole documents)"),
  max_steps: z.number().int().positive().default(1600).describe("Optimizer steps"),
  max_minutes: z.number().min(0).default(0).describe("Stop early (and export) after this many minutes; 0 = no limit"),
  learning_rate: z.number().positive().default(3e-3).describe("Peak AdamW learning rate"),
  warmup_steps: z.number().int().min(0).default(25).describe("Linear warmup steps"),
  min_lr_ratio: z.number().min(0).max(1).default(0.05).describe("Cosine decay ends at learning_rate × this"),
  decay_steps: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("Steps the warmup + cosine decay spans (0 = max_steps); more than max_steps stops partway down the schedule"),
  beta1: z.number().min(0).lt(1).default(0.9).describe("AdamW beta1"),
  beta2: z.number().min(0).lt(1).default(0.98).describe("AdamW beta2"),
  weight_decay: z.number().min(0).default(0).describe("AdamW decoupled weight decay"),
  grad_clip_norm: z.number().min(0).default(1).describe("Global gradient-norm clip (0 = off)"),
  eval_every: z.number().int().min(0).default(200).describe("Evaluate every N steps (0 = only at the end)"),
  eval_pairs: z.number().int().positive().default(100).describe("Held-out addition pairs per evaluation (the final one uses all)"),
  eval_docs: z.number().int().positive().default(64).describe("Held-out documents for test/nll"),
  console_every: z.number().int().positive().default(25).describe("Print the metrics table every N steps"),
});
export type PretrainTinyConfig = z.output<typeof configSchema>;

function modelConfigFrom(config: PretrainTinyConfig, vocabSize: number, specialId: number): ModelConfig {
  const m = config.model;
  return parseModelConfig(
    {
      model_type: "llama",
      vocab_size: vocabSize,
      hidden_size: m.hidden_size,
      intermediate_size: m.intermediate_size,
      num_hidden_layers: m.num_layers,
      num_attention_heads: m.num_heads,
      num_key_value_heads: m.num_kv_heads,
      max_position_embeddings: m.max_position_embeddings,
      rope_theta: m.rope_theta,
      rms_norm_eps: 1e-5,
      tie_word_embeddings: m.tie_word_embeddings,
      hidden_act: "silu",
      bos_token_id: specialId,
      eos_token_id: specialId,
    },
    "pretrain_tiny config.model",
  );
}

function lrAt(config: PretrainTinyConfig, step: number): number {
  if (step < config.warmup_steps) return (config.learning_rate * (step + 1)) / config.warmup_steps;
  const span = config.decay_steps > 0 ? config.decay_steps : config.max_steps;
  const t = (step - config.warmup_steps) / Math.max(1, span - config.warmup_steps);
  const cos = 0.5 * (1 + Math.cos(Math.PI * Math.min(1, t)));
  return config.learning_rate * (config.min_lr_ratio + (1 - config.min_lr_ratio) * cos);
}

function parameterCount(model: EngineModel): number {
  let n = 0;
  for (const t of model.parameters()) n += t.data.length;
  return n;
}

/**
 * The model folder a continued run starts from, checked against the tokenizer it will be trained
 * with: token ids mean nothing across vocabularies, so a mismatch must fail before training.
 */
function loadInitModel(dir: string, vocabSize: number, specialId: number): { config: ModelConfig; weights: Map<string, Float32Array> } {
  const resolved = path.resolve(dir);
  if (!fs.existsSync(path.join(resolved, "config.json"))) {
    throw new Error(
      `init_from=${dir}: ${path.join(resolved, "config.json")} does not exist (expected a Hugging Face model folder such as fixtures/models/tiny-chat)`,
    );
  }
  const { config, weights } = loadModelDir(resolved);
  if (config.vocabSize !== vocabSize) {
    throw new Error(`init_from=${dir}: config.json has vocab_size ${config.vocabSize} but the tokenizer in tokenizer_dir has ${vocabSize} tokens`);
  }
  if (config.bosTokenId !== specialId || config.eosTokenId !== specialId) {
    throw new Error(
      `init_from=${dir}: config.json has bos_token_id ${config.bosTokenId} / eos_token_id ${config.eosTokenId} but the tokenizer's ${ENDOFTEXT} is id ${specialId}`,
    );
  }
  return { config, weights };
}

async function main(config: PretrainTinyConfig, context?: RecipeContext): Promise<void> {
  const tokenizerFile = path.join(config.tokenizer_dir, "tokenizer.json");
  if (!fs.existsSync(tokenizerFile)) {
    throw new Error(`tokenizer_dir=${config.tokenizer_dir}: ${tokenizerFile} does not exist (make it with npx tsx scripts/makeFixtures.ts --only tokenizer)`);
  }
  const bpe = readTrainedBpe(config.tokenizer_dir);
  const encoder = new ByteLevelBpeEncoder(bpe);
  const specialId = encoder.tokenId(ENDOFTEXT);
  const init = config.init_from === "" ? undefined : loadInitModel(config.init_from, encoder.vocabSize, specialId);
  const modelConfig = init?.config ?? modelConfigFrom(config, encoder.vocabSize, specialId);
  const maxLength = modelConfig.maxPositionEmbeddings;

  await withRun(
    {
      logPath: config.log_path,
      recipe: "pretrain_tiny",
      config,
      behavior: config.behavior_if_log_dir_exists,
      engine: "embedded",
      argv: context?.argv,
      commandLine: context?.commandLine,
      consoleEvery: config.console_every,
    },
    async (run) => {
      if (run.resumed) throw new Error(`pretrain_tiny cannot resume a run; use behavior_if_log_dir_exists=delete or a new log_path`);
      const outDir = config.output_dir === "" ? path.join(run.logDir, "model") : path.resolve(config.output_dir);
      const kernels = getKernels();
      const weights = init?.weights ?? EngineModel.randomWeights(modelConfig, config.seed, { std: config.model.init_std });
      const model = EngineModel.create(modelConfig, weights, { mode: "full", seed: config.seed }, kernels);
      run.log.info(
        `model: ${parameterCount(model)} parameters, vocab ${encoder.vocabSize}, kernels ${kernels.name}/${kernels.gemmBackend}, ` +
          (init ? `initialised from ${path.resolve(config.init_from)}` : `random init (seed ${config.seed})`),
      );

      const mix: CorpusMix = config.mix;
      const stream = new BatchStream(corpusDocuments(config.data_seed, mix, "train"), encoder, specialId, maxLength);
      const testDocs: number[][] = [];
      for (const doc of corpusDocuments(config.data_seed + 1_000_003, mix, "test")) {
        if (testDocs.length >= config.eval_docs) break;
        testDocs.push(documentTokens(encoder, doc, specialId, maxLength));
      }
      const testBatch = makeBatch(testDocs);
      const heldOut = allAdditionPairs("test");
      const evalPairs = new Prng(12345).shuffled(heldOut).slice(0, config.eval_pairs);

      const evaluate = (step: number, pairs: ReadonlyArray<[number, number]>, prefix: string): Record<string, number> => {
        const t0 = performance.now();
        const nll = model.forwardBackward(testBatch.sequences, "cross_entropy", undefined, false).lossSum;
        const add = evaluateAddition(model, encoder, pairs, specialId);
        run.log.info(
          `${prefix} step ${step}: test/nll ${nll.toFixed(4)}, addition accuracy ${add.accuracy.toFixed(3)} (stop ${add.stopRate.toFixed(2)}) ` +
            add.examples
              .slice(0, 4)
              .map((e) => `${e.question}=${JSON.stringify(e.got)}`)
              .join(" "),
        );
        const nllKey = prefix === "eval" ? "test/nll" : `${prefix}/test_nll`;
        return {
          [nllKey]: nll,
          [`${prefix}/addition_accuracy`]: add.accuracy,
          [`${prefix}/addition_stop_rate`]: add.stopRate,
          "time/eval": (performance.now() - t0) / 1000,
        };
      };

      // A continued run records where it starts from, so its curve can be read against that.
      const initMetrics = init && config.eval_every > 0 ? evaluate(0, evalPairs, "init") : {};
      const started = performance.now();
      let tokensSeen = 0;
      let stepsDone = 0;
      for (let step = 0; step < config.max_steps; step++) {
        // The step is synchronous: yield so SIGINT (stop) and SIGUSR1 (checkpoint) handlers can run.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (run.control.stopRequested) break;
        if (config.max_minutes > 0 && (performance.now() - started) / 60000 > config.max_minutes) {
          run.log.warn(`max_minutes=${config.max_minutes} reached after ${step} steps; stopping early`);
          break;
        }
        if (run.control.consumeCheckpointRequest()) {
          const dir = path.join(run.logDir, `checkpoint_${String(step).padStart(6, "0")}`);
          exportHfModel(model, dir, config.tokenizer_dir, { step: String(step) });
          run.log.info(`checkpoint saved to ${dir}`);
        }
        const t0 = performance.now();
        const batch = stream.next(config.batch_tokens);
        const lr = lrAt(config, step);
        const fb = model.forwardBackward(batch.sequences, "cross_entropy", undefined, true);
        const optim = model.optimStep({
          learning_rate: lr,
          beta1: config.beta1,
          beta2: config.beta2,
          eps: 1e-8,
          weight_decay: config.weight_decay,
          grad_clip_norm: config.grad_clip_norm,
        });
        tokensSeen += batch.tokens;
        stepsDone = step + 1;
        const metrics: Record<string, number> = {
          train_mean_nll: fb.lossSum,
          learning_rate: lr,
          "optim/grad_norm": optim["grad_norm:mean"] ?? Number.NaN,
          num_tokens: tokensSeen,
          num_documents: batch.documents,
          progress: (step + 1) / config.max_steps,
          "time/step": (performance.now() - t0) / 1000,
          "time/total": (performance.now() - started) / 1000,
        };
        if (step === 0) Object.assign(metrics, initMetrics);
        if (config.eval_every > 0 && (step + 1) % config.eval_every === 0 && step + 1 < config.max_steps) {
          Object.assign(metrics, evaluate(step + 1, evalPairs, "eval"));
        }
        run.metrics.logMetrics(metrics, step);
      }

      const provenance: Record<string, string> = init ? { init_from: config.init_from } : {};
      const bytes = exportHfModel(model, outDir, config.tokenizer_dir, { ...provenance, steps: String(stepsDone), tokens: String(tokensSeen) });
      run.log.info(`exported ${outDir} (model.safetensors ${bytes} bytes, bf16) after ${stepsDone} steps, ${tokensSeen} tokens`);

      // Final numbers on the exported bf16 weights, i.e. on what ships, over every held-out pair.
      const reloaded = loadModelDir(outDir);
      const shipped = EngineModel.create(reloaded.config, reloaded.weights, { mode: "full", seed: 0 }, kernels);
      const nll = shipped.forwardBackward(testBatch.sequences, "cross_entropy", undefined, false).lossSum;
      const add = evaluateAddition(shipped, encoder, heldOut, specialId);
      const sample = greedyContinuations(
        shipped,
        encoder,
        [
          [specialId, ...encoder.encode("User: What is 3 + 4?\n\nAssistant:")],
          [specialId, ...encoder.encode("User: Hi!\n\nAssistant:")],
        ],
        { maxNewTokens: 24, stop: "\n\nUser:", eosTokenId: specialId },
      );
      run.metrics.logMetrics(
        { "final/test_nll": nll, "final/addition_accuracy": add.accuracy, "final/addition_stop_rate": add.stopRate, "final/model_bytes": bytes },
        stepsDone,
      );
      run.log.info(
        `final (bf16, ${heldOut.length} held-out pairs): test/nll ${nll.toFixed(4)}, addition accuracy ${add.accuracy.toFixed(4)}, ` +
          `stop rate ${add.stopRate.toFixed(3)}; samples ${JSON.stringify(sample)}`,
      );
      return run.control.stopRequested ? "stopped" : undefined;
    },
  );
}

const pretrainTiny = defineRecipe({
  name: "pretrain_tiny",
  description: "Pretrain the tiny Llama chat model from scratch on synthetic role_colon chats and addition (makes fixtures/models/tiny-chat)",
  configSchema,
  main,
});
export default pretrainTiny;

// A build script, not a recipe: it trains full weights on the engine's internals (random init,
// bf16 export) to make fixtures/models/tiny-chat. Run it as
//   node --import tsx scripts/pretrainTiny/index.ts key=value ...   (--help lists the fields)
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${formatConfigHelp(pretrainTiny)}\n`);
  } else {
    await pretrainTiny.main(parseConfigArgs(pretrainTiny.configSchema, args), { argv: args, commandLine: process.argv.join(" ") });
  }
}
