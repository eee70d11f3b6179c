// Supervised fine-tuning in one flat loop, to be read top to bottom: no pipelining, no
// evaluators, no dataset abstraction. Each step renders a batch of conversations, runs
// forward_backward and optim_step, waits for both, and logs the loss. The pipelined version of
// the same thing is src/supervised/train.ts (used by sl_basic and chat_sl).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { LogDirBehaviorSchema } from "../../src/config/common.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { TrainOnWhatSchema } from "../../src/renderers/types.ts";
import { appendCheckpoint, checkpointName, getLastCheckpoint } from "../../src/runs/checkpoints.ts";
import { withRun } from "../../src/runs/session.ts";
import { createServiceClient } from "../../src/service.ts";
import { computeMeanNll, conversationToDatum } from "../../src/supervised/common.ts";
import { readConversationFile } from "../../src/supervised/conversationFile.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { truncateMetricsFrom } from "../../src/runs/resume.ts";
import { seededShuffle } from "../../src/data/shuffle.ts";
import type { TrainingClient } from "../../src/tinker/clients.ts";
import { modelInputLength } from "../../src/tinker/modelInput.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export const configSchema = z.object({
  log_path: z.string().default("/tmp/tinker-examples/sl_loop").describe("Run directory"),
  model_name: z.string().default("tiny-chat").describe("Base model"),
  dataset: z.string().default(path.join(REPO_ROOT, "fixtures", "data", "chats_train.jsonl")).describe("JSONL file of {\"messages\": [...]} conversations"),
  batch_size: z.number().int().positive().default(32).describe("Conversations per step"),
  learning_rate: z.number().positive().default(2e-3).describe("Peak learning rate, decayed linearly to 0"),
  max_length: z.number().int().positive().default(512).describe("Truncate examples to this many tokens"),
  train_on_what: TrainOnWhatSchema.default("all_assistant_messages").describe("Which tokens carry loss"),
  lora_rank: z.number().int().positive().default(32).describe("LoRA rank"),
  save_every: z.number().int().min(0).default(20).describe("Save a resumable checkpoint every N steps (0 = only at the end)"),
  max_steps: z.number().int().positive().nullable().default(40).describe("Stop after this many steps (null: one pass over the data)"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already has a run"),
});
export type SlLoopConfig = z.output<typeof configSchema>;

async function save(trainingClient: TrainingClient, logDir: string, name: string, batch: number, final: boolean): Promise<void> {
  // Queue both saves, then wait for both.
  const state = await trainingClient.saveState(name, { overwrite: true });
  const sampler = await trainingClient.saveWeightsForSampler(name);
  appendCheckpoint(logDir, {
    name,
    batch,
    state_path: (await state.result()).path,
    sampler_path: (await sampler.result()).path,
    ...(final ? { final: true } : {}),
  });
}

async function main(config: SlLoopConfig, context?: RecipeContext): Promise<void> {
  const service = await createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {});
  try {
    await withRun(
      {
        logPath: config.log_path,
        recipe: "sl_loop",
        config,
        behavior: config.behavior_if_log_dir_exists,
        engine: service.engineKind,
        argv: context?.argv,
        commandLine: context?.commandLine,
      },
      async (run) => {
        // 1. Tokenizer and chat format.
        const tokenizer = await getTokenizer(config.model_name);
        const rendererName = resolveRendererName(config.model_name, null);
        const renderer = getRenderer(rendererName, tokenizer);
        run.log.info(`renderer: ${rendererName}`);

        // 2. Data: every conversation of the file, shuffled once with a fixed seed.
        const conversations = seededShuffle(readConversationFile(config.dataset), 0);
        const nBatches = Math.floor(conversations.length / config.batch_size);
        if (nBatches === 0) throw new Error(`${config.dataset}: ${conversations.length} conversations make no batch of ${config.batch_size}`);
        const endBatch = config.max_steps !== null ? Math.min(config.max_steps, nBatches) : nBatches;

        // 3. A training client: resumed (with its optimizer state) from the last checkpoint, or new.
        const resume = getLastCheckpoint(run.logDir, "state_path");
        let trainingClient: TrainingClient;
        let startBatch = 0;
        if (resume?.state_path !== undefined) {
          trainingClient = await service.createTrainingClientFromStateWithOptimizer(resume.state_path);
          startBatch = typeof resume.batch === "number" ? resume.batch : 0;
          run.log.info(`resuming at batch ${startBatch}`);
          if (startBatch >= endBatch) return "completed";
          // Rows the interrupted run logged after its checkpoint will be logged again.
          truncateMetricsFrom(run.logDir, startBatch);
        } else {
          trainingClient = await service.createLoraTrainingClient(config.model_name, { rank: config.lora_rank, seed: 0 });
        }

        // 4. The loop. A checkpoint taken at the top of a step holds the weights before it, so it
        //    records this step's batch as the one to train next.
        for (let batch = startBatch; batch < endBatch; batch++) {
          const t0 = performance.now();
          const wantSave = (config.save_every > 0 && batch % config.save_every === 0 && batch > startBatch) || run.control.consumeCheckpointRequest();
          if (wantSave || run.control.stopRequested) await save(trainingClient, run.logDir, checkpointName(batch), batch, false);
          if (run.control.stopRequested) return "stopped";

          const learningRate = config.learning_rate * (1 - batch / endBatch);
          const rows = conversations.slice(batch * config.batch_size, (batch + 1) * config.batch_size);
          const data = rows.map((row) => conversationToDatum(row.messages, renderer, config.max_length, config.train_on_what));

          const fwdBwdFuture = await trainingClient.forwardBackward(data, "cross_entropy");
          const optimFuture = await trainingClient.optimStep({ learning_rate: learningRate, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
          const fwdBwd = await fwdBwdFuture.result();
          await optimFuture.result();

          const logprobs = fwdBwd.loss_fn_outputs.map((o) => o["logprobs"]!);
          const weights = data.map((d) => d.loss_fn_inputs["weights"]!);
          run.metrics.logMetrics(
            {
              num_sequences: data.length,
              num_tokens: data.reduce((n, d) => n + modelInputLength(d.model_input), 0),
              learning_rate: learningRate,
              train_mean_nll: computeMeanNll(logprobs, weights),
              progress: (batch + 1) / endBatch,
              "time/total": (performance.now() - t0) / 1000,
            },
            batch,
          );
        }

        // 5. The final weights, kept without a time limit.
        await save(trainingClient, run.logDir, "final", endBatch, true);
      },
    );
  } finally {
    await service.close();
  }
}

export default defineRecipe({
  name: "sl_loop",
  description: "Supervised fine-tuning as one flat, unpipelined loop written to be read",
  configSchema,
  main,
});
