// Pairwise-preference RL toward shorter answers (the cookbook's preference/shorter): each group's
// replies play a tournament judged by character count, so the shorter reply wins every matchup.
// tiny-chat answers each question one fixed way, which leaves no length for RL to choose between,
// so a short first stage fine-tunes it on answers that are plain or padded with filler (the
// shipped concise/rambling set); the RL stage then has to unlearn the padding.
import { join } from "node:path";
import { z } from "zod";
import { LogDirBehaviorSchema } from "../../src/config/common.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { comparisonSourceFields } from "../../src/preference/datasets.ts";
import { TOURNAMENT_PATTERNS } from "../../src/preference/pairwiseEnv.ts";
import { ShorterPreferenceModel } from "../../src/preference/preferenceModel.ts";
import { openPipeline, pairwiseRlStage, requirePath, sftStage } from "../../src/preference/rlhf.ts";

export const configSchema = z.object({
  log_path: z.string().default("/tmp/tinker-examples/shorter").describe("Parent folder: sft/ (warm-up) and rl/ runs go inside"),
  model_name: z.string().default("tiny-chat").describe("Base model"),
  renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one)"),
  ...comparisonSourceFields,
  dataset: comparisonSourceFields.dataset.default("concise").describe("Comparisons whose prompts (and, for the warm-up, replies) are used"),
  lora_rank: z.number().int().positive().default(16).describe("LoRA rank"),
  seed: z.number().int().default(0).describe("Seed of adapters, data order and sampling"),
  warmup_steps: z.number().int().min(0).default(40).describe("SFT warm-up steps on plain-or-padded answers (0 = RL straight from the base model)"),
  warmup_learning_rate: z.number().positive().default(2e-3).describe("Warm-up learning rate"),
  warmup_rejected_fraction: z.number().min(0).max(1).default(0.75).describe("Share of warm-up answers padded with filler"),
  learning_rate: z.number().positive().default(2e-3).describe("RL learning rate (constant)"),
  max_steps: z.number().int().positive().default(20).describe("RL iterations"),
  group_size: z.number().int().min(2).default(4).describe("Replies per prompt (one tournament)"),
  groups_per_batch: z.number().int().positive().default(8).describe("Prompts per iteration"),
  max_tokens: z.number().int().positive().default(40).describe("Maximum reply tokens"),
  tournament_pattern: z.enum(TOURNAMENT_PATTERNS).default("all_pairs_both_ways").describe("Which matchups each group plays"),
  eval_every: z.number().int().min(0).default(10).describe("Evaluate every N steps"),
  save_every: z.number().int().min(0).default(10).describe("Checkpoint every N steps"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("resume").describe("resume: skip a finished warm-up and resume RL; delete: start over"),
});
export type ShorterConfig = z.output<typeof configSchema>;

async function main(config: ShorterConfig, context?: RecipeContext): Promise<void> {
  const p = await openPipeline(config, context, (l) => console.log(l));
  try {
    let initial: string | null = null;
    if (config.warmup_steps > 0) {
      const sft = await sftStage(p, join(config.log_path, "sft"), {
        learningRate: config.warmup_learning_rate,
        steps: config.warmup_steps,
        batchSize: 16,
        maxLength: 512,
        rejectedFraction: config.warmup_rejected_fraction,
        recipeName: "shorter_warmup",
      });
      initial = requirePath(sft.record.state_path, "warm-up state_path");
    }
    await pairwiseRlStage(p, join(config.log_path, "rl"), {
      learningRate: config.learning_rate,
      steps: config.max_steps,
      groupSize: config.group_size,
      groupsPerBatch: config.groups_per_batch,
      maxTokens: config.max_tokens,
      pattern: config.tournament_pattern,
      initialStatePath: initial,
      judge: new ShorterPreferenceModel(),
      recipeName: "shorter",
    });
  } finally {
    await p.service.close();
  }
}

export default defineRecipe({
  name: "shorter",
  description: "Pairwise-preference RL that prefers shorter answers (tournaments judged by length; ac_tokens_per_turn falls)",
  configSchema,
  main,
});
