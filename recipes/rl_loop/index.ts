// Policy-gradient RL in one flat loop, to be read top to bottom (the cookbook's rl_loop): per
// step, snapshot the weights into a sampler, sample `group_size` answers per problem, grade them,
// centre rewards within each group (no std division), skip groups where every answer scored the
// same, and train on the rest with the importance-sampling loss. The full-featured version is
// src/rl/train.ts (used by rl_basic, math_rl and guess_number).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { LogDirBehaviorSchema } from "../../src/config/common.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { ARITHMETIC_FEWSHOT } from "../../src/rl/envs/arithmetic.ts";
import { gradeFirstChunk } from "../../src/rl/envs/grading.ts";
import { readQAJsonl } from "../../src/rl/envs/qaSources.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { getTextContent } from "../../src/renderers/content.ts";
import { appendCheckpoint, checkpointName, getLastCheckpoint } from "../../src/runs/checkpoints.ts";
import { withRun } from "../../src/runs/session.ts";
import { createServiceClient } from "../../src/service.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { truncateMetricsFrom } from "../../src/runs/resume.ts";
import { seededShuffle } from "../../src/data/shuffle.ts";
import type { TrainingClient } from "../../src/tinker/clients.ts";
import { modelInputToInts, modelInputFromInts } from "../../src/tinker/modelInput.ts";
import type { Datum } from "../../src/tinker/types.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export const configSchema = z.object({
  log_path: z.string().default("/tmp/tinker-examples/rl_loop").describe("Run directory"),
  model_name: z.string().default("tiny-chat").describe("Base model"),
  renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one, else role_colon)"),
  dataset: z.string().default(path.join(REPO_ROOT, "fixtures", "data", "arithmetic.jsonl")).describe("JSONL of {\"question\", \"answer\"}, graded on the answer's first word"),
  group_size: z.number().int().positive().default(8).describe("Answers sampled per problem"),
  groups_per_batch: z.number().int().positive().default(8).describe("Problems per step"),
  learning_rate: z.number().positive().default(3e-3).describe("Adam learning rate (constant)"),
  max_tokens: z.number().int().positive().default(8).describe("Maximum sampled tokens per answer"),
  lora_rank: z.number().int().positive().default(8).describe("LoRA rank"),
  seed: z.number().int().default(0).describe("Seed of the problem order and the adapter initialization"),
  save_every: z.number().int().min(0).default(10).describe("Save a resumable checkpoint every N steps (0 = only at the end)"),
  max_steps: z.number().int().positive().nullable().default(20).describe("Stop after this many steps (null: one pass over the data)"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already has a run"),
});
export type RlLoopConfig = z.output<typeof configSchema>;

async function save(trainingClient: TrainingClient, logDir: string, name: string, batch: number, final: boolean): Promise<void> {
  const state = await trainingClient.saveState(name);
  const sampler = await trainingClient.saveWeightsForSampler(name);
  appendCheckpoint(logDir, { name, batch, state_path: (await state.result()).path, sampler_path: (await sampler.result()).path, ...(final ? { final: true } : {}) });
}

async function main(config: RlLoopConfig, context?: RecipeContext): Promise<void> {
  const service = await createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {});
  try {
    await withRun(
      { logPath: config.log_path, recipe: "rl_loop", config, behavior: config.behavior_if_log_dir_exists, engine: service.engineKind, argv: context?.argv, commandLine: context?.commandLine },
      async (run) => {
        // 1. Tokenizer, chat format, and the problems (shuffled once).
        const tokenizer = await getTokenizer(config.model_name);
        const renderer = getRenderer(resolveRendererName(config.model_name, config.renderer_name), tokenizer);
        const problems = seededShuffle(readQAJsonl(config.dataset), config.seed);
        const nBatches = Math.floor(problems.length / config.groups_per_batch);
        const endBatch = config.max_steps !== null ? Math.min(config.max_steps, nBatches) : nBatches;

        // 2. A training client: resumed with its optimizer state, or a fresh LoRA.
        const resume = getLastCheckpoint(run.logDir, "state_path");
        let trainingClient: TrainingClient;
        let startBatch = 0;
        if (resume?.state_path !== undefined) {
          trainingClient = await service.createTrainingClientFromStateWithOptimizer(resume.state_path);
          startBatch = typeof resume.batch === "number" ? resume.batch : 0;
          run.log.info(`resuming at batch ${startBatch}`);
          if (startBatch >= endBatch) return "completed";
          truncateMetricsFrom(run.logDir, startBatch);
        } else {
          trainingClient = await service.createLoraTrainingClient(config.model_name, { rank: config.lora_rank, seed: config.seed });
        }

        for (let batch = startBatch; batch < endBatch; batch++) {
          const t0 = performance.now();
          const wantSave = (config.save_every > 0 && batch % config.save_every === 0 && batch > startBatch) || run.control.consumeCheckpointRequest();
          if (wantSave || run.control.stopRequested) await save(trainingClient, run.logDir, checkpointName(batch), batch, false);
          if (run.control.stopRequested) return "stopped";

          // 3. Sample a group of answers per problem with the current weights.
          const sampler = await trainingClient.saveWeightsAndGetSamplingClient();
          const rows = problems.slice(batch * config.groups_per_batch, (batch + 1) * config.groups_per_batch);
          const groups = await Promise.all(
            rows.map(async (row) => {
              const prompt = renderer.buildGenerationPrompt([...ARITHMETIC_FEWSHOT, { role: "user", content: row.question }]);
              const result = await sampler.sample(prompt, config.group_size, { stop: renderer.getStopSequences(), max_tokens: config.max_tokens, temperature: 1.0 });
              const rewards: number[] = result.sequences.map((s) => (gradeFirstChunk(getTextContent(renderer.parseResponse(s.tokens).message), row.answer) ? 1 : 0));
              return { prompt: modelInputToInts(prompt), sequences: result.sequences, rewards };
            }),
          );

          // 4. Advantages = reward − group mean; groups with no spread teach nothing.
          const data: Datum[] = [];
          for (const g of groups) {
            const mean = g.rewards.reduce((a, b) => a + b, 0) / g.rewards.length;
            if (g.rewards.every((r) => r === mean)) continue;
            g.sequences.forEach((s, i) => {
              const tokens = [...g.prompt, ...s.tokens];
              const ob = g.prompt.length;
              // Next-token targets; prompt positions carry zero advantage (they are not trained).
              const logprobs = [...new Array<number>(ob - 1).fill(0), ...(s.logprobs ?? s.tokens.map(() => 0))];
              const advantages = [...new Array<number>(ob - 1).fill(0), ...s.tokens.map(() => g.rewards[i]! - mean)];
              data.push({
                model_input: modelInputFromInts(tokens.slice(0, -1)),
                loss_fn_inputs: {
                  target_tokens: { data: tokens.slice(1), dtype: "int64", shape: [tokens.length - 1] },
                  logprobs: { data: logprobs, dtype: "float32", shape: [logprobs.length] },
                  advantages: { data: advantages, dtype: "float32", shape: [advantages.length] },
                },
              });
            });
          }

          // 5. One policy-gradient step on everything that had signal.
          if (data.length > 0) {
            const fb = await trainingClient.forwardBackward(data, "importance_sampling");
            const opt = await trainingClient.optimStep({ learning_rate: config.learning_rate, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
            await fb.result();
            await opt.result();
          }
          const all = groups.flatMap((g) => g.rewards);
          run.metrics.logMetrics(
            {
              "reward/total": all.reduce((a, b) => a + b, 0) / all.length,
              "progress/done_frac": (batch + 1) / endBatch,
              "optim/lr": config.learning_rate,
              num_datums: data.length,
              "time/total": (performance.now() - t0) / 1000,
            },
            batch,
          );
        }
        await save(trainingClient, run.logDir, "final", endBatch, true);
        return "completed";
      },
    );
  } finally {
    await service.close();
  }
}

export default defineRecipe({
  name: "rl_loop",
  description: "RL as one flat loop written to be read: sample groups, grade, centre rewards, train",
  configSchema,
  main,
});
