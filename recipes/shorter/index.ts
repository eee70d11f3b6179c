// Pairwise-preference RL toward shorter answers (the cookbook's preference/shorter): each group's
// replies play a tournament judged by character count, so the shorter reply wins every matchup.
// tiny-chat answers each question one fixed way, which leaves no length for RL to choose between,
// so a short first stage fine-tunes it on answers that are plain or padded with filler (the
// shipped concise/rambling set); the RL stage then has to unlearn the padding.
import { join } from "node:path";
import { z } from "zod";
import { inGroup } from "../../src/config/groups.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { TOURNAMENT_PATTERNS } from "../../src/preference/pairwiseEnv.ts";
import { ShorterPreferenceModel } from "../../src/preference/preferenceModel.ts";
import { closePipeline, openPipeline, pairwiseRlStage, pipelineFields, requirePath, sftStage } from "../../src/preference/rlhf.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  z.object({
    ...pipelineFields,
    ...inGroup("optimizer", {
      warmup_steps: z.number().int().min(0).default(40).describe("SFT warm-up steps on plain-or-padded answers (0 = RL straight from the base model)"),
      warmup_learning_rate: z.number().positive().default(2e-3).describe("Warm-up learning rate"),
      warmup_rejected_fraction: z.number().min(0).max(1).default(0.75).describe("Share of warm-up answers padded with filler"),
      max_steps: z.number().int().positive().default(20).describe("RL iterations"),
    }),
    learning_rate: RLConfigSchema.shape.learning_rate,
    group_size: RLConfigSchema.shape.group_size,
    groups_per_batch: RLConfigSchema.shape.groups_per_batch,
    max_tokens: RLConfigSchema.shape.max_tokens,
    tournament_pattern: z.enum(TOURNAMENT_PATTERNS).default("all_pairs_both_ways").describe("Which matchups each group plays"),
  }),
  {
    learning_rate: 2e-3,
    group_size: 4,
    groups_per_batch: 8,
    max_tokens: 40,
    log_path: "/tmp/tinker-examples/shorter",
    dataset: "concise",
    lora_rank: 16,
    save_every: 10,
    eval_every: 10,
    behavior_if_log_dir_exists: "resume",
  },
);
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
    await closePipeline(p);
  }
}

export default defineRecipe({
  name: "shorter",
  description: "Pairwise-preference RL that prefers shorter answers (tournaments judged by length; ac_tokens_per_turn falls)",
  configSchema,
  main,
});
