// The template for RL: a dataset of env groups handed to the cookbook's RL loop
// (src/rl/train.ts). The defaults train a LoRA on the project's tiny chat model to add two
// numbers (graded exactly on the first word of its answer) in a few minutes on a laptop CPU.
// Operands default to 0..9: on the full 0..100 range the tiny model is right ~9% of the time and
// exact-match reward gives too little signal for a short run (docs/rl.md has the measurements).
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { arithmeticDatasetBuilder } from "../../src/rl/envs/arithmetic.ts";
import { type RLRecipeSetup, runRLRecipe } from "../../src/rl/recipeRuntime.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    max_operand: z
      .number()
      .int()
      .positive()
      .default(9)
      .describe("Operands are drawn from 0..max_operand (the cookbook uses 100; the tiny model is too weak there for 60 steps to show progress)"),
    num_batches: z.number().int().positive().default(1000).describe("Length of the (synthetic) training stream"),
    test_problems: z.number().int().min(0).default(0).describe("Held-out problems evaluated every eval_every steps (0 = none)"),
  }),
  {
    log_path: "/tmp/tinker-examples/rl_basic",
    learning_rate: 1e-3,
    max_tokens: 8,
    lora_rank: 8,
    max_steps: 60,
    eval_every: 0,
    save_every: 10,
    group_size: 16,
    groups_per_batch: 16,
  },
);
export type RlBasicConfig = z.output<typeof configSchema>;

/** The environments the loop trains in; `cookbook play rl_basic` puts a person in them. */
export function environments(config: RlBasicConfig, { renderer }: RLRecipeSetup): RLDatasetBuilder | Promise<RLDatasetBuilder> {
  return arithmeticDatasetBuilder({
    renderer,
    batchSize: config.groups_per_batch,
    groupSize: config.group_size,
    numBatches: config.num_batches,
    seed: config.seed,
    maxOperand: config.max_operand,
    testProblems: config.test_problems,
  });
}

async function main(config: RlBasicConfig, context?: RecipeContext): Promise<void> {
  await runRLRecipe(config, (setup) => environments(config, setup), context);
}

export default defineRecipe({
  name: "rl_basic",
  description: "RL template: GRPO-style LoRA training of the tiny chat model on two-number addition",
  configSchema,
  main,
});
