// Policy-gradient RL in one flat loop, to be read top to bottom (the cookbook's rl_loop): per
// step, snapshot the weights into a sampler, sample `group_size` answers per problem, grade them,
// centre rewards within each group (no std division), skip groups where every answer scored the
// same, and train on the rest with the importance-sampling loss. The full-featured version is
// src/rl/train.ts (used by rl_basic, math_rl and guess_number).
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { mixSeed } from "../../src/random/seeds.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { seededShuffle } from "../../src/data/shuffle.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { getTextContent } from "../../src/renderers/content.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { ARITHMETIC_FEWSHOT } from "../../src/rl/envs/arithmetic.ts";
import { gradeFirstChunk } from "../../src/grading/index.ts";
import { readQAJsonl } from "../../src/rl/envs/qaSources.ts";
import { modelInputFromInts, modelInputToInts } from "../../src/tinker/modelInput.ts";
import type { Datum } from "../../src/tinker/types.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { CheckpointManager } from "../../src/training/checkpoints.ts";
import { adamParams, adapterFields, checkpointFields, optimizerFields, overrideDefaults, runFields } from "../../src/training/config.ts";
import { openTrainingClient } from "../../src/training/open.ts";
import { withTrainingRun, type TrainingOutcome } from "../../src/training/run.ts";

// The training core's shared fields plus the few this loop reads from the RL loop's schema, and its problem file.
const loop = RLConfigSchema.shape;
export const configSchema = overrideDefaults(
  z.object({
    ...runFields,
    ...adapterFields,
    ...checkpointFields,
    ...optimizerFields,
    dataset: z.string().default(fixtureDataPath("arithmetic.jsonl")).describe('JSONL of {"question", "answer"}, graded on the answer\'s first word'),
    group_size: loop.group_size,
    groups_per_batch: loop.groups_per_batch,
    max_tokens: loop.max_tokens,
    max_steps: loop.max_steps,
  }),
  {
    log_path: "/tmp/tinker-examples/rl_loop",
    group_size: 8,
    groups_per_batch: 8,
    learning_rate: 3e-3,
    max_tokens: 8,
    lora_rank: 8,
    save_every: 10,
    max_steps: 20,
  },
);
export type RlLoopConfig = z.output<typeof configSchema>;

async function main(config: RlLoopConfig, context?: RecipeContext): Promise<void> {
  await withTrainingRun<{ outcome: TrainingOutcome }>(
    config,
    { context },
    async (run) => {
      // 1. Tokenizer, chat format, and the problems (shuffled once).
      const tokenizer = await getTokenizer(config.model_name);
      const rendererName = resolveRendererName(config.model_name, config.renderer_name);
      const renderer = getRenderer(rendererName, tokenizer);
      const problems = seededShuffle(readQAJsonl(config.dataset), config.seed);
      const nBatches = Math.floor(problems.length / config.groups_per_batch);
      const endBatch = config.max_steps !== null ? Math.min(config.max_steps, nBatches) : nBatches;

      // 2. A training client: resumed with its optimizer state, or a fresh LoRA.
      const { trainingClient, startStep: startBatch } = await openTrainingClient(run, config, { rendererName });
      if (startBatch >= endBatch) return { outcome: "already_complete" };
      const checkpoints = new CheckpointManager(trainingClient, config, { logDir: run.logDir, restClient: run.serviceClient.createRestClient(), log: run.log });

      for (let batch = startBatch; batch < endBatch; batch++) {
        const t0 = performance.now();
        const wantSave = (checkpoints.isPeriodic(batch) && batch > startBatch) || run.control.consumeCheckpointRequest();
        if (wantSave || run.control.stopRequested) await checkpoints.save(batch, { batch });
        if (run.control.stopRequested) return { outcome: "stopped" };

        // 3. Sample a group of answers per problem with the current weights.
        const sampler = await trainingClient.saveWeightsAndGetSamplingClient();
        const rows = problems.slice(batch * config.groups_per_batch, (batch + 1) * config.groups_per_batch);
        const groups = await Promise.all(
          rows.map(async (row, index) => {
            const prompt = renderer.buildGenerationPrompt([...ARITHMETIC_FEWSHOT, { role: "user", content: row.question }]);
            // Seeded by the run seed and the group's place, so a rerun samples the same answers.
            const seed = mixSeed(config.seed, batch, index);
            const result = await sampler.sample(prompt, config.group_size, {
              stop: renderer.getStopSequences(),
              max_tokens: config.max_tokens,
              temperature: 1.0,
              seed,
            });
            const rewards: number[] = result.sequences.map((s) =>
              gradeFirstChunk(getTextContent(renderer.parseResponse(s.tokens).message), row.answer).correct ? 1 : 0,
            );
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
          const opt = await trainingClient.optimStep(adamParams(config));
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
      await checkpoints.saveFinal({ batch: endBatch });
      return { outcome: "completed" };
    },
    { outcome: "exit" },
  );
}

export default defineRecipe({
  name: "rl_loop",
  description: "RL as one flat loop written to be read: sample groups, grade, centre rewards, train",
  configSchema,
  main,
});
