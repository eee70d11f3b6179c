// Per-episode budgets and the policies for the ways an agentic episode can go wrong (the
// cookbook's rl/rollout_limits.py and rollout_presets.py): how many turns, tokens, tool calls and
// seconds an episode may use; what a response that does not parse does; and what reward an episode
// gets when a budget, rather than a final answer, ends it.
import { z } from "zod";
import { EpisodeEndReason } from "../rl/types.ts";

export const RolloutLimitsSchema = z.object({
  max_turns: z.number().int().positive().describe("Policy turns per episode"),
  max_trajectory_tokens: z.number().int().positive().nullable().describe("Prompt + next generation must fit (null = no limit)"),
  max_sampled_tokens: z.number().int().positive().nullable().describe("Tokens the policy may sample over the whole episode (null = no limit)"),
  max_tool_calls: z.number().int().positive().nullable().describe("Tool calls per episode (null = no limit)"),
  max_wall_seconds: z.number().positive().nullable().describe("Wall-clock seconds per episode (null = no limit)"),
});
export type RolloutLimits = z.output<typeof RolloutLimitsSchema>;

/**
 * terminate: end the episode with `reward`; feedback: tell the model what was wrong and let it
 * try again (at most `max_retries` times, then terminate); mask: end the episode and train
 * nothing on the unparsable turn (so a format slip neither rewards nor punishes).
 */
export const ParseErrorPolicySchema = z.object({
  mode: z.enum(["terminate", "feedback", "mask"]),
  reward: z.number().describe("Reward of the turn that did not parse (terminate/feedback)"),
  max_retries: z.number().int().min(0).describe("feedback: parse errors tolerated before terminating"),
});
export type ParseErrorPolicy = z.output<typeof ParseErrorPolicySchema>;

/** Reward added on the last turn when a budget ends the episode (0 = neutral). */
export const TerminationRewardPolicySchema = z.object({
  max_turns: z.number(),
  max_tokens: z.number().describe("A turn cut off by the per-turn max_tokens, or the episode's sampled-token budget spent"),
  context_overflow: z.number(),
  max_tool_calls: z.number(),
  rollout_timeout: z.number(),
});
export type TerminationRewardPolicy = z.output<typeof TerminationRewardPolicySchema>;

export const RolloutConfigSchema = z.object({
  limits: RolloutLimitsSchema,
  parse_error: ParseErrorPolicySchema,
  termination_reward: TerminationRewardPolicySchema,
  tool_timeout_seconds: z.number().positive().describe("Budget of one tool call; a slower call becomes an error result"),
});
export type RolloutConfig = z.output<typeof RolloutConfigSchema>;

/** Short episodes with a strict format: a parse error ends the episode with −1, budgets cost nothing extra. */
export function simpleRolloutConfig(overrides: { maxTurns?: number } = {}): RolloutConfig {
  return {
    limits: { max_turns: overrides.maxTurns ?? 4, max_trajectory_tokens: null, max_sampled_tokens: null, max_tool_calls: null, max_wall_seconds: null },
    parse_error: { mode: "terminate", reward: -1, max_retries: 0 },
    termination_reward: { max_turns: 0, max_tokens: 0, context_overflow: 0, max_tool_calls: 0, rollout_timeout: 0 },
    tool_timeout_seconds: 10,
  };
}

/**
 * Long tool-using episodes: many turns under token, tool-call and time budgets; a malformed call
 * gets feedback and a retry; running out of context or time costs a little.
 */
export function agenticRolloutConfig(overrides: { maxTurns?: number; maxTrajectoryTokens?: number } = {}): RolloutConfig {
  return {
    limits: {
      max_turns: overrides.maxTurns ?? 20,
      max_trajectory_tokens: overrides.maxTrajectoryTokens ?? 32768,
      max_sampled_tokens: 16384,
      max_tool_calls: 50,
      max_wall_seconds: 600,
    },
    parse_error: { mode: "feedback", reward: 0, max_retries: 2 },
    termination_reward: { max_turns: 0, max_tokens: -0.1, context_overflow: -0.1, max_tool_calls: -0.1, rollout_timeout: -0.1 },
    tool_timeout_seconds: 60,
  };
}

export const ROLLOUT_PRESETS = { simple: simpleRolloutConfig, agentic: agenticRolloutConfig } as const;
export type RolloutPresetName = keyof typeof ROLLOUT_PRESETS;

/**
 * A preset's limits for a task where only a correct final answer earns reward: a malformed turn
 * ends the episode at 0 instead of the preset's parse-error penalty (tool_use, search_tool).
 */
export function answerOnlyRollout(preset: RolloutPresetName, maxTurns: number, toolTimeoutSeconds: number): RolloutConfig {
  const rollout = ROLLOUT_PRESETS[preset]({ maxTurns });
  rollout.tool_timeout_seconds = toolTimeoutSeconds;
  rollout.parse_error = { ...rollout.parse_error, reward: 0 };
  return rollout;
}

/** The termination reward for a stop reason that is a budget (0 for completed and the like). */
export function terminationReward(policy: TerminationRewardPolicy, reason: EpisodeEndReason): number {
  switch (reason) {
    case EpisodeEndReason.MAX_TURNS:
      return policy.max_turns;
    case EpisodeEndReason.MAX_TOKENS:
    case EpisodeEndReason.MAX_SAMPLED_TOKENS:
      return policy.max_tokens;
    case EpisodeEndReason.CONTEXT_OVERFLOW:
      return policy.context_overflow;
    case EpisodeEndReason.MAX_TOOL_CALLS:
      return policy.max_tool_calls;
    case EpisodeEndReason.ROLLOUT_TIMEOUT:
      return policy.rollout_timeout;
    default:
      return 0;
  }
}
