// Interfaces and containers of RL (docs/cookbook-parity.md#rl-types). An Env is one episode of
// one agent; an EnvGroupBuilder makes the envs whose rewards are centred together; a dataset
// hands out batches of builders.
import type { StopCondition, TokensWithLogprobs } from "../completers.ts";
import type { ModelInput, StopReason as SamplerStopReason } from "../tinker/types.ts";
import type { Message } from "../renderers/policyRenderer.ts";

export type Action = number[];
export type Observation = ModelInput;
/** Numbers averaged into the training logs. */
export type Metrics = Record<string, number>;
/** Diagnostics for display only (never averaged). */
export type Logs = Record<string, string | number | boolean>;

/** Why a trajectory ended; recorded as a one-hot `stop/<reason>` metric on its last transition. */
export const EpisodeEndReason = {
  COMPLETED: "completed",
  TOOL_STOPPED: "tool_stopped",
  MAX_TURNS: "max_turns",
  MAX_TOKENS: "max_tokens",
  MAX_SAMPLED_TOKENS: "max_sampled_tokens",
  MAX_TOOL_CALLS: "max_tool_calls",
  CONTEXT_OVERFLOW: "context_overflow",
  PARSE_ERROR: "parse_error",
  ROLLOUT_TIMEOUT: "rollout_timeout",
} as const;
export type EpisodeEndReason = (typeof EpisodeEndReason)[keyof typeof EpisodeEndReason];

export const STOP_METRIC_PREFIX = "stop/";
/** A transition carrying this metric (value ≥ 1) trains nothing: mask 0, advantage 0. */
export const PARSE_ERROR_MASKED_METRIC_KEY = "parse_error_masked";

export function stopMetric(reason: EpisodeEndReason): string {
  return `${STOP_METRIC_PREFIX}${reason}`;
}

/** The reason encoded by a one-hot `stop/<reason>` key, if any. */
export function stopReasonFromMetrics(metrics: Metrics): string | null {
  for (const key of Object.keys(metrics)) if (key.startsWith(STOP_METRIC_PREFIX)) return key.slice(STOP_METRIC_PREFIX.length);
  return null;
}

/**
 * Returned by Env.initialObservation instead of a prompt when the prompt alone is over budget.
 * The rollout ends at once with one empty transition carrying this reward, so one oversized
 * prompt does not fail its whole group.
 */
export class InitialObservationOverflow {
  constructor(
    readonly reward: number,
    readonly metrics: Metrics = {},
    readonly logs: Logs = {},
  ) {}
}

export interface ActionExtra {
  /** "stop" when a stop sequence fired, "length" when max_tokens cut the sample. */
  stopReason?: SamplerStopReason;
}

export interface StepResult {
  reward: number;
  episodeDone: boolean;
  nextObservation: Observation;
  nextStopCondition: StopCondition;
  metrics?: Metrics;
  logs?: Logs;
  /** Optional conversation for transcripts: the prompt messages then the parsed response. */
  messages?: Message[];
}

export interface Transition {
  ob: Observation;
  ac: TokensWithLogprobs;
  reward: number;
  episodeDone: boolean;
  metrics: Metrics;
  logs: Logs;
  messages?: Message[];
}

export interface Trajectory {
  transitions: Transition[];
  finalOb: Observation;
  /** Mirrored from the final transition's `stop/<reason>` metric; null when the env gave none. */
  stopReason: string | null;
}

export interface InitialObservation {
  observation: Observation;
  stopCondition: StopCondition;
}

/** Single use: create, run one episode, discard. */
export interface Env {
  initialObservation(): Promise<InitialObservation | InitialObservationOverflow>;
  step(action: Action, extra?: ActionExtra): Promise<StepResult>;
}

export interface GroupReward {
  reward: number;
  metrics: Metrics;
  /** Per-trajectory details for transcripts (e.g. a tournament's results); not aggregated as metrics. */
  logs?: Logs;
}

export interface RolloutError {
  errorType: string;
  errorMessage: string;
}

export abstract class EnvGroupBuilder {
  abstract makeEnvs(): Promise<Env[]>;

  /**
   * Final reward per trajectory that may depend on the whole group (pairwise judges, games).
   * Added to the per-step rewards; the default adds nothing.
   */
  async computeGroupRewards(trajectories: Trajectory[], _envs: Env[]): Promise<GroupReward[]> {
    return trajectories.map(() => ({ reward: 0, metrics: {} }));
  }

  /** Releases what makeEnvs created; always called, must not throw. */
  async cleanup(): Promise<void> {}

  /** Tags under which metrics are also aggregated (`env/<tag>/…`). */
  loggingTags(): string[] {
    return [];
  }
}

export class TrajectoryGroup {
  constructor(
    readonly trajectoriesG: Trajectory[],
    readonly finalRewardsG: number[],
    readonly metricsG: Metrics[],
    readonly rolloutErrors: RolloutError[] = [],
    /** The group rewards' logs, one per trajectory (empty objects when the builder gave none). */
    readonly logsG: Logs[] = [],
  ) {
    if (trajectoriesG.length !== finalRewardsG.length || trajectoriesG.length !== metricsG.length) {
      throw new Error(
        `TrajectoryGroup: ${trajectoriesG.length} trajectories, ${finalRewardsG.length} final rewards, ${metricsG.length} metrics; expected equal counts`,
      );
    }
  }

  /** Return of each trajectory: sum of step rewards plus the group reward. */
  getTotalRewards(): number[] {
    return this.trajectoriesG.map((traj, i) => traj.transitions.reduce((sum, t) => sum + t.reward, 0) + this.finalRewardsG[i]);
  }
}

export interface RLDataset {
  getBatch(index: number): EnvGroupBuilder[];
  /** Number of batches. */
  readonly length: number;
}

export interface RLDatasetBuilder {
  build(): Promise<{ train: RLDataset; test?: RLDataset | null }>;
}
