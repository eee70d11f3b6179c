// Tool use (the cookbook's tool_use/ on the tiny model): add two 3-digit numbers, which tiny-chat
// cannot do itself (it only learned sums up to 100 + 100), with a calculator tool. Reward is 1 for
// an exactly correct final answer and 0 otherwise; env/all/called_tool is the share of episodes
// that call the tool.
// The tiny model has never seen a tool call, so the recipe first runs a supervised LoRA warm-up on
// synthetic transcripts (<log_path>-warmup, reused on later runs). 90% of them call the calculator
// `<call>calculator A + B</call>` and copy its result into the answer; every token of those is
// trained except, in 95% of them, the reply's opening token: the decision to call. So the warm-up
// teaches how to call and how to read the result on every tool transcript, but demonstrates
// making the call about as often as answering directly (which is almost always wrong). RL then
// learns that calling pays. Copying the result is what the tiny model finds hard: rank 16 / 300
// steps did not learn it (reward stayed near 0.01); rank 64 / 600 steps at lr 5e-3 does.
// What the defaults reach: docs/rl.md#tool-use-srctooluse-recipe-tool_use.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { type RLRecipeSetup, runRLRecipe } from "../../src/rl/recipeRuntime.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import { supervisedWarmupOn, warmupRunFields } from "../../src/supervised/warmup.ts";
import { additionToolDatasetBuilder, warmupDatasetBuilder } from "../../src/toolUse/additionTask.ts";
import { ROLLOUT_PRESETS } from "../../src/toolUse/rolloutLimits.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    digits: z.number().int().min(1).max(15).default(3).describe("Digits of each operand (tiny-chat only ever learned sums up to 100 + 100)"),
    op: z.enum(["+", "-"]).default("+").describe("+: add two numbers; -: subtract to a two-digit difference"),
    num_batches: z.number().int().positive().default(1000).describe("Length of the training stream"),
    rollout_preset: z.enum(["simple", "agentic"]).default("simple").describe("Rollout limits and parse-error / termination-reward policies"),
    max_turns: z.number().int().positive().default(3).describe("Policy turns per episode"),
    tool_timeout_seconds: z.number().positive().default(5).describe("Budget of one tool call"),
    warmup_steps: z
      .number()
      .int()
      .min(0)
      .default(600)
      .describe("Supervised warm-up steps on synthetic transcripts before RL (0 = none; 400 at rank 32 left copying the result at ~0.2)"),
    warmup_batch_size: z.number().int().positive().default(16).describe("Warm-up examples per step"),
    warmup_learning_rate: z
      .number()
      .positive()
      .default(5e-3)
      .describe("Warm-up peak learning rate (linear decay; 2e-2 diverged, constant 1e-2 diverged after ~150 steps)"),
    warmup_tool_share: z
      .number()
      .min(0)
      .max(1)
      .default(0.9)
      .describe(
        "Share of warm-up transcripts that call the calculator and copy its result (the rest answer directly); copying is learned only when most do (0.5 left it at ~0.1)",
      ),
    warmup_decision_share: z
      .number()
      .min(0)
      .max(1)
      .default(0.05)
      .describe(
        "Share of tool-using warm-up transcripts whose opening token, the decision to call, is trained (1 = all: RL then starts near its ceiling, ~0.7)",
      ),
  }),
  {
    log_path: "/tmp/tinker-examples/tool_use",
    // 1e-3 broke a warmed-up policy within 3 steps (parse errors 0 → 0.9); 2e-4 keeps it stable.
    learning_rate: 2e-4,
    max_tokens: 40,
    // The warm-up's adapter, which RL continues: rank 16 or 32 did not learn to copy the result.
    lora_rank: 64,
    max_steps: 20,
    eval_every: 0,
    save_every: 10,
    group_size: 8,
    groups_per_batch: 8,
  },
);
export type ToolUseConfig = z.output<typeof configSchema>;

/**
 * Runs the warm-up into `<log_path>-warmup` and returns its final weights' path; a finished
 * warm-up with the same settings is reused (one with other settings is redone).
 */
async function warmup(config: ToolUseConfig, context?: RecipeContext): Promise<string> {
  const data = { digits: config.digits, op: config.op, tool_share: config.warmup_tool_share, decision_share: config.warmup_decision_share };
  const spec = {
    ...warmupRunFields(config),
    steps: config.warmup_steps,
    batch_size: config.warmup_batch_size,
    learning_rate: config.warmup_learning_rate,
    data: `tool_use addition transcripts ${JSON.stringify(data)}`,
  };
  const done = await supervisedWarmupOn(
    spec,
    (renderer) =>
      warmupDatasetBuilder({
        renderer,
        examples: config.warmup_steps * config.warmup_batch_size,
        batchSize: config.warmup_batch_size,
        digits: config.digits,
        toolShare: config.warmup_tool_share,
        decisionShare: config.warmup_decision_share,
        op: config.op,
        seed: config.seed,
      }),
    context,
  );
  return done.statePath;
}

/** The environments the loop trains in; `cookbook play tool_use` puts a person in them. */
export function environments(config: ToolUseConfig, { renderer }: RLRecipeSetup): RLDatasetBuilder {
  const rollout = ROLLOUT_PRESETS[config.rollout_preset]({ maxTurns: config.max_turns });
  rollout.tool_timeout_seconds = config.tool_timeout_seconds;
  // Only a correct final answer earns reward: a malformed turn ends the episode at 0.
  rollout.parse_error = { ...rollout.parse_error, reward: 0 };
  return additionToolDatasetBuilder({
    renderer,
    batchSize: config.groups_per_batch,
    groupSize: config.group_size,
    numBatches: config.num_batches,
    seed: config.seed,
    digits: config.digits,
    op: config.op,
    rollout,
    maxGenerationTokens: config.max_tokens,
  });
}

async function main(config: ToolUseConfig, context?: RecipeContext): Promise<void> {
  const loadCheckpointPath = config.load_checkpoint_path ?? (config.warmup_steps > 0 ? await warmup(config, context) : null);
  await runRLRecipe({ ...config, load_checkpoint_path: loadCheckpointPath }, (setup) => environments(config, setup), context);
}

export default defineRecipe({
  name: "tool_use",
  description:
    "Agentic RL: the tiny model learns to call a calculator for 3-digit additions (a supervised warm-up teaches the call and reading its result but seldom shows calling; RL on correct answers alone teaches calling it)",
  configSchema,
  main,
});
