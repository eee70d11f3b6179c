// Rollouts (docs/cookbook-parity.md#rollouts): one episode per env, a group of episodes sampled concurrently, error
// strategies deciding what one failing episode does to its group, and error counters.
import { TinkerTokenCompleter, type TokenCompleter } from "../completers.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import { emptyModelInput } from "./tokenSeq.ts";
import {
  InitialObservationOverflow,
  TrajectoryGroup,
  stopReasonFromMetrics,
  type Env,
  type EnvGroupBuilder,
  type RolloutError,
  type Trajectory,
  type Transition,
} from "./types.ts";

/** Runs one env to the end of its episode with the given policy. */
export async function doSingleRollout(policy: TokenCompleter, env: Env): Promise<Trajectory> {
  const initial = await env.initialObservation();
  if (initial instanceof InitialObservationOverflow) {
    // One empty transition carries the overflow reward: no training tokens, but the group
    // baseline still sees this member.
    const transition: Transition = {
      ob: emptyModelInput(),
      ac: { tokens: [], logprobs: [], stopReason: "stop" },
      reward: initial.reward,
      episodeDone: true,
      metrics: { ...initial.metrics },
      logs: { ...initial.logs },
    };
    return { transitions: [transition], finalOb: emptyModelInput(), stopReason: stopReasonFromMetrics(transition.metrics) };
  }
  let ob = initial.observation;
  let stop = initial.stopCondition;
  const transitions: Transition[] = [];
  for (;;) {
    const ac = await policy.complete(ob, stop);
    const step = await env.step(ac.tokens, { stopReason: ac.stopReason });
    const transition: Transition = {
      ob,
      ac,
      reward: step.reward,
      episodeDone: step.episodeDone,
      metrics: { ...(step.metrics ?? {}) },
      logs: { ...(step.logs ?? {}) },
    };
    if (step.messages !== undefined) transition.messages = step.messages;
    transitions.push(transition);
    ob = step.nextObservation;
    stop = step.nextStopCondition;
    if (step.episodeDone) return { transitions, finalOb: ob, stopReason: stopReasonFromMetrics(transition.metrics) };
  }
}

export function errorTypeName(err: unknown): string {
  if (err instanceof Error) return err.constructor.name || err.name || "Error";
  return typeof err;
}

export function toRolloutError(err: unknown): RolloutError {
  return { errorType: errorTypeName(err), errorMessage: err instanceof Error ? err.message : String(err) };
}

/** Each member (and each retry of it) samples with its own seed stream when the policy is seeded. */
function policyForSlot(policy: TokenCompleter, slot: number, attempt: number): TokenCompleter {
  return policy.fork === undefined ? policy : policy.fork(slot * 1009 + attempt);
}

/** A group given up on by a tolerant strategy; carries every error seen while trying. */
export class RolloutGroupError extends Error {
  constructor(
    message: string,
    readonly rolloutErrors: RolloutError[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "RolloutGroupError";
  }
}

export interface RolloutResult {
  /** In env order (a retried env's replacement takes its slot). */
  trajectories: Trajectory[];
  envs: Env[];
  errors: RolloutError[];
}

export interface RolloutStrategy {
  /** When true, a failing group is skipped (and counted) instead of stopping training. */
  readonly catchesGroupErrors: boolean;
  execute(builder: EnvGroupBuilder, policy: TokenCompleter): Promise<RolloutResult>;
}

/** Any failing episode fails the group, and the error propagates (the default). */
export class FailFast implements RolloutStrategy {
  readonly catchesGroupErrors = false;

  async execute(builder: EnvGroupBuilder, policy: TokenCompleter): Promise<RolloutResult> {
    const envs = await builder.makeEnvs();
    const trajectories = await Promise.all(envs.map((env, slot) => doSingleRollout(policyForSlot(policy, slot, 0), env)));
    return { trajectories, envs, errors: [] };
  }
}

/** One rollout's end: its slot in the group, the env it ran in, and its trajectory or error. */
type RolloutOutcome = { slot: number; env: Env } & ({ ok: true; traj: Trajectory } | { ok: false; error: unknown });

export class RolloutTimeoutError extends Error {
  override name = "RolloutTimeoutError";
}

/**
 * Runs every env of the group at once and hands each failure (a thrown episode, or one that ran past
 * `timeoutSeconds`) to `onFailure`, which returns a fresh env to rerun that slot in, or null to leave
 * the slot empty, or throws to give the group up. A timed-out episode cannot be cancelled; its late
 * result is ignored. Returns the successes and errors by slot.
 */
async function rolloutWithRetries(
  builder: EnvGroupBuilder,
  policy: TokenCompleter,
  timeoutSeconds: number | null,
  onFailure: (error: unknown, state: { groupSize: number; successes: number; errors: RolloutError[] }) => Promise<Env | null>,
): Promise<{ envs: Env[]; trajectories: (Trajectory | undefined)[]; finalEnvs: Env[]; errors: RolloutError[] }> {
  const envs = await builder.makeEnvs();
  const pending = new Map<number, Promise<RolloutOutcome & { id: number }>>();
  const timers = new Set<NodeJS.Timeout>();
  let nextId = 0;
  const attempts = new Map<number, number>();
  const launch = (slot: number, env: Env) => {
    const id = nextId++;
    const attempt = attempts.get(slot) ?? 0;
    attempts.set(slot, attempt + 1);
    let episode: Promise<Trajectory> = doSingleRollout(policyForSlot(policy, slot, attempt), env);
    if (timeoutSeconds !== null) {
      const seconds = timeoutSeconds;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new RolloutTimeoutError(`rollout ran past per_rollout_timeout=${seconds}s`)), seconds * 1000);
        timers.add(timer);
      });
      episode = Promise.race([episode, deadline]).finally(() => {
        if (timer !== undefined) {
          clearTimeout(timer);
          timers.delete(timer);
        }
      });
    }
    pending.set(
      id,
      episode.then(
        (traj) => ({ id, slot, env, ok: true as const, traj }),
        (error: unknown) => ({ id, slot, env, ok: false as const, error }),
      ),
    );
  };
  envs.forEach((env, slot) => launch(slot, env));
  const trajectories: (Trajectory | undefined)[] = new Array(envs.length).fill(undefined);
  const finalEnvs: Env[] = [...envs];
  const errors: RolloutError[] = [];
  let successes = 0;
  try {
    while (pending.size > 0) {
      const outcome = await Promise.race(pending.values());
      pending.delete(outcome.id);
      if (outcome.ok) {
        trajectories[outcome.slot] = outcome.traj;
        finalEnvs[outcome.slot] = outcome.env;
        successes += 1;
        continue;
      }
      errors.push(toRolloutError(outcome.error));
      const fresh = await onFailure(outcome.error, { groupSize: envs.length, successes, errors });
      if (fresh !== null) launch(outcome.slot, fresh);
    }
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
  return { envs, trajectories, finalEnvs, errors };
}

/** The first env of a fresh group from the builder, to rerun one failed slot in. */
async function freshEnv(builder: EnvGroupBuilder, errors: RolloutError[], cause: unknown): Promise<Env> {
  const fresh = await builder.makeEnvs();
  if (fresh.length === 0) throw new RolloutGroupError("makeEnvs returned no env to retry with", errors, { cause });
  return fresh[0];
}

/**
 * A failing episode is rerun on a fresh env (from makeEnvs) while a group-wide budget of
 * `maxRetries` lasts; once exhausted the group is dropped whole, never trained on partially.
 */
export class RetryOnFailure implements RolloutStrategy {
  readonly catchesGroupErrors = true;

  constructor(readonly maxRetries = 3) {}

  async execute(builder: EnvGroupBuilder, policy: TokenCompleter): Promise<RolloutResult> {
    let retriesLeft = this.maxRetries;
    const { trajectories, finalEnvs, errors } = await rolloutWithRetries(builder, policy, null, async (error, state) => {
      if (retriesLeft <= 0) {
        throw new RolloutGroupError(
          `retry budget exhausted (${this.maxRetries} retries); dropping the group: ${toRolloutError(error).errorMessage}`,
          state.errors,
          { cause: error },
        );
      }
      retriesLeft -= 1;
      return freshEnv(builder, state.errors, error);
    });
    return { trajectories: trajectories as Trajectory[], envs: finalEnvs, errors };
  }
}

/**
 * The cookbook's MinViableGroup: keep a partial group once `minSuccessful` episodes succeeded
 * (default ceil(0.75 × the group's size)). Failures are rerun on fresh envs only while the floor is
 * unmet and the group-wide budget lasts; once enough succeeded, a failure is recorded and its slot
 * left out. Below the floor when everything has finished, the group is dropped (skipped, counted),
 * because the group mean is the advantage baseline and a few members make it too noisy to train on.
 */
export class MinViableGroup implements RolloutStrategy {
  readonly catchesGroupErrors = true;

  constructor(
    readonly minSuccessful: number | null = null,
    readonly maxRetries = 3,
    /** Seconds one episode may run before it counts as failed (null = no limit). */
    readonly perRolloutTimeout: number | null = null,
  ) {}

  /** The floor for a group of `groupSize` envs. */
  floor(groupSize: number): number {
    return this.minSuccessful ?? Math.ceil(0.75 * groupSize);
  }

  async execute(builder: EnvGroupBuilder, policy: TokenCompleter): Promise<RolloutResult> {
    let retriesLeft = this.maxRetries;
    const result = await rolloutWithRetries(builder, policy, this.perRolloutTimeout, async (error, state) => {
      // Retries only while the floor is unmet: past it a partial group is kept, and a retry would
      // only make the whole batch wait.
      if (state.successes >= this.floor(state.groupSize) || retriesLeft <= 0) return null;
      retriesLeft -= 1;
      return freshEnv(builder, state.errors, error);
    });
    const floor = this.floor(result.envs.length);
    const kept = result.trajectories.flatMap((traj, slot) => (traj === undefined ? [] : [{ traj, env: result.finalEnvs[slot] }]));
    if (kept.length < floor) {
      throw new RolloutGroupError(
        `only ${kept.length}/${result.envs.length} rollouts succeeded, below the minimum viable group size ${floor} ` +
          `(${result.errors.length} failures, max_retries=${this.maxRetries}); dropping the group`,
        result.errors,
      );
    }
    return { trajectories: kept.map((k) => k.traj), envs: kept.map((k) => k.env), errors: result.errors };
  }
}

/** How rollout_error_tolerance names a MinViableGroup (the other forms are true/false/{max_retries}). */
export interface MinViableGroupConfig {
  strategy: "min_viable_group";
  min_successful?: number | null;
  max_retries?: number;
  per_rollout_timeout?: number | null;
}

/**
 * `false`/null → FailFast, `true` → RetryOnFailure(3), `{max_retries}` → RetryOnFailure(n),
 * `"min_viable_group"` or `{strategy: "min_viable_group", ...}` → MinViableGroup.
 */
export function rolloutStrategyFromConfig(
  tolerance: boolean | null | undefined | "min_viable_group" | { max_retries: number } | MinViableGroupConfig,
): RolloutStrategy {
  if (tolerance === true) return new RetryOnFailure();
  if (tolerance === false || tolerance === null || tolerance === undefined) return new FailFast();
  if (tolerance === "min_viable_group") return new MinViableGroup();
  if ("strategy" in tolerance) return new MinViableGroup(tolerance.min_successful ?? null, tolerance.max_retries ?? 3, tolerance.per_rollout_timeout ?? null);
  return new RetryOnFailure(tolerance.max_retries);
}

/** Rolls out every env of the group, then asks the builder for group rewards; always cleans up. */
export async function doGroupRollout(builder: EnvGroupBuilder, policy: TokenCompleter, strategy: RolloutStrategy = new FailFast()): Promise<TrajectoryGroup> {
  try {
    const result = await strategy.execute(builder, policy);
    const rewards = await builder.computeGroupRewards(result.trajectories, result.envs);
    if (rewards.length !== result.trajectories.length) {
      throw new Error(`computeGroupRewards returned ${rewards.length} rewards for ${result.trajectories.length} trajectories`);
    }
    return new TrajectoryGroup(
      result.trajectories,
      rewards.map((r) => r.reward),
      rewards.map((r) => r.metrics),
      result.errors,
      rewards.map((r) => r.logs ?? {}),
    );
  } finally {
    await builder.cleanup();
  }
}

/** Cumulative error counts across a run: `rollout_errors/<Name>`, `/total`, `/groups_skipped`. */
export class RolloutErrorCounter {
  private readonly counts = new Map<string, number>();
  private groupsSkipped = 0;

  /** Errors survived inside a kept group. */
  ingest(group: TrajectoryGroup): void {
    this.add(group.rolloutErrors);
  }

  /** A group dropped because of errors. */
  recordSkipped(errors: readonly RolloutError[] = []): void {
    this.groupsSkipped += 1;
    this.add(errors);
  }

  private add(errors: readonly RolloutError[]): void {
    for (const e of errors) this.counts.set(e.errorType, (this.counts.get(e.errorType) ?? 0) + 1);
  }

  getMetrics(prefix = "rollout_errors"): Record<string, number> {
    if (this.counts.size === 0 && this.groupsSkipped === 0) return {};
    const out: Record<string, number> = {};
    let total = 0;
    for (const [k, v] of this.counts) {
      out[`${prefix}/${k}`] = v;
      total += v;
    }
    out[`${prefix}/total`] = total;
    out[`${prefix}/groups_skipped`] = this.groupsSkipped;
    return out;
  }
}

export interface GroupRolloutOptions {
  maxTokens: number;
  temperature?: number;
  /** Seed of this group's sampling; unset samples unseeded. */
  seed?: number;
  removeConstantRewardGroups?: boolean;
  strategy?: RolloutStrategy;
  errorCounter?: RolloutErrorCounter;
  /** Called when a tolerant strategy drops a group. */
  onSkip?: (err: unknown) => void;
}

/**
 * A group rollout with the sampler as policy. Returns null when the group was dropped by a
 * tolerant strategy or (optionally) because every member earned the same reward.
 */
export async function doGroupRolloutAndFilterConstantReward(
  samplingClient: SamplingClient,
  builder: EnvGroupBuilder,
  options: GroupRolloutOptions,
): Promise<TrajectoryGroup | null> {
  const strategy = options.strategy ?? new FailFast();
  const policy = new TinkerTokenCompleter(samplingClient, options.maxTokens, options.temperature ?? 1.0, undefined, options.seed);
  let group: TrajectoryGroup;
  try {
    group = await doGroupRollout(builder, policy, strategy);
  } catch (err) {
    if (!strategy.catchesGroupErrors) throw err;
    options.errorCounter?.recordSkipped(err instanceof RolloutGroupError ? err.rolloutErrors : [toRolloutError(err)]);
    options.onSkip?.(err);
    return null;
  }
  options.errorCounter?.ingest(group);
  if (options.removeConstantRewardGroups) {
    const rewards = group.getTotalRewards();
    if (rewards.every((r) => r === rewards[0])) return null;
  }
  return group;
}
