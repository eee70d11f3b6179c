// Twenty questions (the cookbook's multiplayer_rl/twenty_questions) on the tiny model. The policy
// asks "Is it <property>?" and guesses "Guess: <thing>" about a secret drawn from a generated
// attribute table (src/data/synthetic/nouns.ts: `nouns` things × `attributes` yes/no properties from
// `table_seed`); the answerer is a scripted oracle over the table, or a frozen model when
// answerer_model is set (shown the secret and the current question only, as in the cookbook). A
// right guess earns 1 (less question_penalty per question asked before it); the game also ends
// after max_guesses wrong guesses (default one: the cookbook lets a player guess on every turn,
// and the tiny model then learns only to stop asking and guess) or max_questions turns. Turns and
// tokens are bounded by the rollout limits (max_trajectory_tokens defaults to tiny-chat's 512).
//
// Like tic_tac_toe, the tiny model has never seen the game, so a short supervised warm-up
// (<log_path>-warmup) on random questioners — random properties, then random guesses that ignore
// the answers — teaches the formats first; RL then has to learn which answers point to which thing.
// What the defaults reach: docs/agents.md#twenty_questions-measured-with-defaults.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { nounTable } from "../../src/data/synthetic/nouns.ts";
import { Prng } from "../../src/data/synthetic/prng.ts";
import { frozenModelCompleter, lazyService, type ServiceProvider } from "../../src/multiAgent/frozenModel.ts";
import type { TwentyQuestionsRules } from "../../src/multiAgent/games/twentyQuestions.ts";
import { answerer, randomQuestionerTranscripts, twentyQuestionsDatasetBuilder } from "../../src/multiAgent/games/twentyQuestionsEnv.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { runRLRecipe, type RLRecipeSetup } from "../../src/rl/recipeRuntime.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import { createServiceClient } from "../../src/service.ts";
import { supervisedWarmup, warmupRunFields } from "../../src/supervised/warmup.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { simpleRolloutConfig } from "../../src/toolUse/rolloutLimits.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    num_batches: z.number().int().positive().default(1000).describe("Length of the training stream"),
    nouns: z.number().int().min(2).default(8).describe("Things in the attribute table (at most 26)"),
    attributes: z
      .number()
      .int()
      .min(1)
      .default(3)
      .describe("Yes/no properties per thing (at most 8; 2^attributes ≥ nouns): 3 for 8 things is exactly enough to tell them apart"),
    table_seed: z.number().int().default(0).describe("Seed of the attribute table"),
    max_questions: z.number().int().positive().default(5).describe("Turns per game, guesses included (3 questions and a guess find any of 8 things)"),
    max_guesses: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(1)
      .describe("Wrong guesses that end the game (null: only max_questions does, as in the cookbook — the tiny model then stops asking and just guesses)"),
    question_penalty: z.number().min(0).max(1).default(0).describe("A right guess earns 1 − question_penalty × questions asked before it (0: always 1)"),
    answerer_model: z.string().nullable().default(null).describe("Frozen model that answers instead of the scripted oracle (e.g. tiny-chat; null = oracle)"),
    answerer_checkpoint: z.string().nullable().default(null).describe("tinker:// sampler weights for answerer_model"),
    max_trajectory_tokens: z.number().int().positive().default(512).describe("Prompt + next reply must fit (tiny-chat's context is 512)"),
    test_groups: z
      .number()
      .int()
      .min(0)
      .default(16)
      .describe("Held-out games evaluated every eval_every steps and at the end, in groups of group_size (0 = none)"),
    warmup_steps: z
      .number()
      .int()
      .min(0)
      .default(60)
      .describe("Supervised warm-up steps on random questioners before RL (0 = none; 40 left many questions not ended by the stop sequence)"),
    warmup_batch_size: z.number().int().positive().default(32).describe("Warm-up games per step"),
    warmup_learning_rate: z.number().positive().default(5e-3).describe("Warm-up peak learning rate (linear decay)"),
  }),
  {
    log_path: "/tmp/tinker-examples/twenty_questions",
    learning_rate: 1e-3,
    max_tokens: 8,
    lora_rank: 16,
    max_steps: 30,
    eval_every: 10,
    save_every: 10,
    group_size: 8,
    groups_per_batch: 8,
  },
);
export type TwentyQuestionsConfig = z.output<typeof configSchema>;

function rules(config: TwentyQuestionsConfig): TwentyQuestionsRules {
  return {
    table: nounTable(config.table_seed, config.nouns, config.attributes),
    maxQuestions: config.max_questions,
    maxGuesses: config.max_guesses,
    questionPenalty: config.question_penalty,
  };
}

/** The environments the loop trains in; `cookbook play twenty_questions` puts a person in the questioner's seat. */
export async function environments(
  config: TwentyQuestionsConfig,
  { renderer }: RLRecipeSetup,
  service: ServiceProvider = lazyService(config.base_url),
): Promise<RLDatasetBuilder> {
  const r = rules(config);
  const rollout = simpleRolloutConfig({ maxTurns: config.max_questions });
  rollout.limits.max_trajectory_tokens = config.max_trajectory_tokens;
  // A reply cut off or not ended cleanly wastes the game: no reward, as for a game not won.
  rollout.parse_error = { ...rollout.parse_error, reward: 0 };
  let model = null;
  if (config.answerer_model !== null) {
    const tokenizer = await getTokenizer(config.answerer_model);
    const answererRenderer = getRenderer(resolveRendererName(config.answerer_model, null), tokenizer);
    model = frozenModelCompleter(service, { baseModel: config.answerer_model, modelPath: config.answerer_checkpoint }, answererRenderer, {
      maxTokens: 5,
      temperature: config.temperature,
    });
  }
  return twentyQuestionsDatasetBuilder({
    common: { renderer, rollout, maxGenerationTokens: config.max_tokens },
    rules: r,
    groupsPerBatch: config.groups_per_batch,
    groupSize: config.group_size,
    numBatches: config.num_batches,
    seed: config.seed,
    answerer: answerer(r.table, model),
    testGroups: config.test_groups,
  });
}

async function main(config: TwentyQuestionsConfig, context?: RecipeContext): Promise<void> {
  let load = config.load_checkpoint_path;
  if (load === null && config.warmup_steps > 0) {
    const r = rules(config);
    const warm = await supervisedWarmup(
      {
        ...warmupRunFields(config),
        steps: config.warmup_steps,
        batch_size: config.warmup_batch_size,
        learning_rate: config.warmup_learning_rate,
        data: `twenty_questions random questioner v1 ${JSON.stringify({ nouns: config.nouns, attributes: config.attributes, table_seed: config.table_seed, max_questions: config.max_questions, max_guesses: config.max_guesses })}`,
      },
      (_renderer, count) => randomQuestionerTranscripts(r, new Prng(config.seed * 7919 + 23), count),
      context,
    );
    load = warm.statePath;
  }
  const serviceClient = await createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {});
  try {
    await runRLRecipe({ ...config, load_checkpoint_path: load }, (setup) => environments(config, setup, async () => serviceClient), context, { serviceClient });
  } finally {
    await serviceClient.close();
  }
}

export default defineRecipe({
  name: "twenty_questions",
  description: "Multi-agent RL: twenty questions against a scripted oracle over a generated attribute table (or a frozen answerer model)",
  configSchema,
  main,
});
