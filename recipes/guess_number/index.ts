// Multi-turn RL (the cookbook's multiplayer_rl.guess_number): the policy guesses a hidden number
// between 0 and upper_bound, a scripted user answers "Too low" / "Too high" / "Correct". With the
// default "interval" reward every guess earns the share of the remaining uncertainty it removes,
// so reward rises as the policy learns to bisect; reward_shape=binary is the cookbook's 0/1.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { guessNumberDatasetBuilder } from "../../src/rl/envs/guessNumber.ts";
import { type RLRecipeSetup, runRLRecipe } from "../../src/rl/recipeRuntime.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    num_batches: z.number().int().positive().default(1000).describe("Length of the training stream"),
    max_turns: z.number().int().positive().default(5).describe("Guesses per game (the cookbook uses 10; 5 halves the cost of a step, see docs/rl.md)"),
    upper_bound: z.number().int().positive().default(1024).describe("Numbers are drawn from 0..upper_bound-1"),
    reward_shape: z.enum(["interval", "binary"]).default("interval").describe("interval: bits of uncertainty removed; binary: 1 if found"),
    history_role: z.enum(["player", "assistant"]).default("player").describe("Role of earlier guesses in the prompt"),
    test_groups: z.number().int().min(0).default(0).describe("Held-out games evaluated every eval_every steps (0 = none)"),
  }),
  {
    log_path: "/tmp/tinker-examples/guess_number",
    learning_rate: 1e-3,
    max_tokens: 12,
    lora_rank: 8,
    max_steps: 30,
    eval_every: 0,
    save_every: 10,
    group_size: 4,
    groups_per_batch: 8,
  },
);
export type GuessNumberConfig = z.output<typeof configSchema>;

/** The environments the loop trains in; `cookbook play guess_number` puts a person in them. */
export function environments(config: GuessNumberConfig, { renderer }: RLRecipeSetup): RLDatasetBuilder | Promise<RLDatasetBuilder> {
  return guessNumberDatasetBuilder({
    renderer,
    batchSize: config.groups_per_batch,
    groupSize: config.group_size,
    numBatches: config.num_batches,
    seed: config.seed,
    maxTurns: config.max_turns,
    upperBound: config.upper_bound,
    rewardShape: config.reward_shape,
    historyRole: config.history_role,
    testGroups: config.test_groups,
  });
}

async function main(config: GuessNumberConfig, context?: RecipeContext): Promise<void> {
  await runRLRecipe(config, (setup) => environments(config, setup), context);
}

export default defineRecipe({
  name: "guess_number",
  description: "Multi-turn RL: guess a hidden number from higher/lower replies of a scripted user",
  configSchema,
  main,
});
