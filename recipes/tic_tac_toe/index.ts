// Tic-tac-toe RL (the cookbook's multiplayer_rl/text_arena) on the tiny model. By default the policy
// trains against the random opponent: each group is group_size games in one seat (X in even groups,
// O in odd), so advantages compare games of the same seat (win +1, draw 0, loss −1).
// train_opponent=self_play makes each group group_size / 2 games whose two seats both train, as in
// the cookbook. A move is one digit 1–9; an illegal or unparsable move loses
// (parse_error_mode=terminate; feedback lets it retry, mask drops the game). Every eval_every steps
// and at the end, the policy plays test_games games against each test opponent — random, minimax
// (exact) and base_model (a frozen copy of the starting weights) — and logs
// test/vs_<opponent>/{win_rate,draw_rate,loss_rate,win_or_draw,illegal_rate}.
//
// tiny-chat has never seen a board: asked for a square it answers with a three-digit number, so
// plain RL would only ever see illegal moves. The recipe first runs a supervised warm-up
// (<log_path>-warmup, reused while its settings match) on single positions of random legal games,
// few free squares weighted up, each trained toward every free square at once (soft targets): it
// learns to copy a free square from the board's "Free:" line, no tactics. RL then learns to stop
// playing taken squares and to win. What the defaults reach: docs/agents.md#measured-with-the-defaults.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { ConfigError } from "../../src/config/errors.ts";
import { Prng } from "../../src/data/synthetic/prng.ts";
import { OpponentEvaluator } from "../../src/multiAgent/evaluator.ts";
import { frozenModelCompleter, lazyService, type ServiceProvider } from "../../src/multiAgent/frozenModel.ts";
import type { SeatCommon } from "../../src/multiAgent/groups.ts";
import {
  TIC_TAC_TOE_OPPONENTS,
  warmupGameTranscripts,
  warmupPositionTranscripts,
  ticTacToeDatasetBuilder,
  ticTacToeTestSet,
} from "../../src/multiAgent/games/ticTacToeEnv.ts";
import type { RLRenderer } from "../../src/renderers/policyRenderer.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { runRLRecipe, type RLRecipeSetup } from "../../src/rl/recipeRuntime.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import { createServiceClient } from "../../src/service.ts";
import { supervisedWarmup, warmupRunFields } from "../../src/supervised/warmup.ts";
import { simpleRolloutConfig } from "../../src/toolUse/rolloutLimits.ts";
import { overrideDefaults } from "../../src/training/config.ts";

const OpponentSchema = z.enum(TIC_TAC_TOE_OPPONENTS);

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    num_batches: z.number().int().positive().default(1000).describe("Length of the training stream"),
    train_opponent: z
      .enum(["self_play", ...TIC_TAC_TOE_OPPONENTS])
      .default("random")
      .describe(
        "The fixed opponent the policy trains against (each group: group_size games in one seat, X in even groups and O in odd), or self_play: the policy plays both seats and both train (self-play gained less against random than training on it; docs/agents.md)",
      ),
    test_opponents: z
      .array(OpponentSchema)
      .default([...TIC_TAC_TOE_OPPONENTS])
      .describe(`Opponents evaluated every eval_every steps and at the end, e.g. test_opponents='["random","minimax"]'`),
    test_games: z.number().int().min(2).default(128).describe("Games per test opponent per evaluation (half as X, half as O)"),
    parse_error_mode: z
      .enum(["terminate", "feedback", "mask"])
      .default("terminate")
      .describe(
        "An illegal or unparsable move in training: terminate = it loses the game; feedback = told why and retries; mask = the game is dropped untrained (evaluations always use terminate)",
      ),
    parse_error_reward: z.number().default(-1).describe("Reward of an illegal move (terminate: the loser's reward; the other seat wins +1)"),
    parse_error_retries: z.number().int().min(0).default(1).describe("feedback: illegal moves tolerated per game before it is lost"),
    history_turns: z
      .number()
      .int()
      .min(0)
      .nullable()
      .default(0)
      .describe("Past turns in each prompt (0: the current board only, like the cookbook's single message; null: the whole conversation)"),
    play_opponent: OpponentSchema.default("random").describe("cookbook play: the opponent a person plays against"),
    play_as: z.enum(["X", "O"]).default("X").describe("cookbook play: the mark a person plays"),
    warmup_steps: z
      .number()
      .int()
      .min(0)
      .default(600)
      .describe(
        "Supervised warm-up steps before RL (0 = none). At rank 64, 300–450 steps left 8–13% of sampled replies illegal, 600 about 1% (docs/agents.md)",
      ),
    warmup_batch_size: z.number().int().positive().default(32).describe("Warm-up transcripts per step (one seat of one game each)"),
    warmup_learning_rate: z.number().positive().default(5e-3).describe("Warm-up peak learning rate (linear decay; 1e-2 did not learn legality)"),
    warmup_data: z
      .enum(["positions", "games"])
      .default("positions")
      .describe(
        "positions: single positions, few free squares weighted up, each trained toward every free square (teaches reading the board); games: whole random games, one random legal move per turn (teaches the format only)",
      ),
  }),
  {
    log_path: "/tmp/tinker-examples/tic_tac_toe",
    // 1e-3 collapsed the policy's entropy (0.03) and stopped improving after 20 steps; 3e-4 keeps rising.
    learning_rate: 3e-4,
    max_tokens: 6,
    // The warm-up's adapter, which RL continues: rank 16 left a quarter of the replies illegal.
    lora_rank: 64,
    // Against random, win+draw rose +0.19 by step 40 and +0.26 by step 80 from one warm-up (docs/agents.md).
    max_steps: 80,
    eval_every: 20,
    save_every: 20,
    group_size: 8,
    groups_per_batch: 8,
  },
);
export type TicTacToeConfig = z.output<typeof configSchema>;

function seatCommon(config: TicTacToeConfig, renderer: RLRenderer, parseErrorMode = config.parse_error_mode): SeatCommon {
  const rollout = simpleRolloutConfig({ maxTurns: 5 });
  rollout.parse_error = { mode: parseErrorMode, reward: config.parse_error_reward, max_retries: config.parse_error_retries };
  rollout.limits.max_turns = 5 + (parseErrorMode === "feedback" ? config.parse_error_retries : 0);
  return { renderer, rollout, maxGenerationTokens: config.max_tokens, historyTurns: config.history_turns };
}

/** The frozen starting policy (the warm-up's weights when there is one) as a message completer. */
function baseModel(config: TicTacToeConfig, renderer: RLRenderer, service: ServiceProvider, samplerPath: string | null) {
  return frozenModelCompleter(service, { baseModel: config.model_name, modelPath: samplerPath }, renderer, {
    maxTokens: config.max_tokens,
    temperature: config.temperature,
    seed: config.seed,
  });
}

/** The environments the loop trains in; `cookbook play tic_tac_toe` puts a person in them. */
export function environments(
  config: TicTacToeConfig,
  { renderer }: RLRecipeSetup,
  service: ServiceProvider = lazyService(config.base_url),
  baseSamplerPath: string | null = null,
): RLDatasetBuilder {
  return ticTacToeDatasetBuilder({
    common: seatCommon(config, renderer),
    groupsPerBatch: config.groups_per_batch,
    groupSize: config.group_size,
    numBatches: config.num_batches,
    seed: config.seed,
    trainOpponent: config.train_opponent,
    baseModel: baseModel(config, renderer, service, baseSamplerPath),
    play: { opponent: config.play_opponent, seat: config.play_as === "X" ? 0 : 1 },
  });
}

async function main(config: TicTacToeConfig, context?: RecipeContext): Promise<void> {
  if (config.train_opponent === "self_play" && config.rollout_error_tolerance !== null && config.rollout_error_tolerance !== false) {
    throw new ConfigError(
      "tic_tac_toe: rollout_error_tolerance retries one env of a group, but a self-play seat cannot be replayed without its partner; leave it unset with train_opponent=self_play",
    );
  }
  let load = config.load_checkpoint_path;
  let samplerPath: string | null = null;
  if (load === null && config.warmup_steps > 0) {
    const warm = await supervisedWarmup(
      {
        ...warmupRunFields(config),
        steps: config.warmup_steps,
        batch_size: config.warmup_batch_size,
        learning_rate: config.warmup_learning_rate,
        data: `tic_tac_toe warm-up ${config.warmup_data} v5`,
      },
      (_renderer, count) => (config.warmup_data === "positions" ? warmupPositionTranscripts : warmupGameTranscripts)(new Prng(config.seed * 7919 + 17), count),
      context,
    );
    load = warm.statePath;
    samplerPath = warm.samplerPath;
  }
  const serviceClient = await createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {});
  const service: ServiceProvider = async () => serviceClient;
  // Filled when the loop builds its dataset (the renderer is known then), read when it starts.
  const evaluators: OpponentEvaluator[] = [];
  try {
    await runRLRecipe(
      { ...config, load_checkpoint_path: load },
      (setup) => {
        // Evaluations score an illegal move as a lost game, whatever the training policy is.
        const common = seatCommon(config, setup.renderer, "terminate");
        const base = baseModel(config, setup.renderer, service, samplerPath);
        evaluators.push(
          ...config.test_opponents.map(
            (opponent) =>
              new OpponentEvaluator(
                opponent,
                ticTacToeTestSet({ common, games: config.test_games, seed: config.seed, opponent, baseModel: base }),
                config.max_tokens,
                { temperature: config.temperature, seed: config.seed },
              ),
          ),
        );
        return environments(config, setup, service, samplerPath);
      },
      context,
      { serviceClient, evaluators },
    );
  } finally {
    await serviceClient.close();
  }
}

export default defineRecipe({
  name: "tic_tac_toe",
  description: "Multi-agent RL: tic-tac-toe against a random opponent (or self-play), evaluated against random, minimax and the frozen starting policy",
  configSchema,
  main,
});
