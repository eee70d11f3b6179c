import { test } from "node:test";
import assert from "node:assert/strict";
import { TinkerTokenCompleter } from "../../src/completers.ts";
import { trajectoryToData } from "../../src/rl/dataProcessing.ts";
import {
  FailFast,
  MinViableGroup,
  RetryOnFailure,
  RolloutGroupError,
  RolloutErrorCounter,
  doGroupRollout,
  doGroupRolloutAndFilterConstantReward,
  doSingleRollout,
  rolloutStrategyFromConfig,
} from "../../src/rl/rollouts.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { parseConfigArgs } from "../../src/config/parse.ts";
import { EnvGroupBuilder, InitialObservationOverflow, type Env, type InitialObservation, type StepResult } from "../../src/rl/types.ts";
import { FakeSamplingClient, FnGroupBuilder, OneTurnEnv, ints } from "./fakes.ts";

class EnvBoom extends Error {}

class ThrowingEnv implements Env {
  async initialObservation(): Promise<InitialObservation> {
    return { observation: ints([1, 2]), stopCondition: [0] };
  }
  async step(): Promise<StepResult> {
    throw new EnvBoom("env exploded");
  }
}

const sampler = () => new FakeSamplingClient((_p, call) => ({ tokens: [10 + (call % 2)] }));
const policy = () => new TinkerTokenCompleter(sampler(), 8);
const rewardFirst = (a: number[]) => (a[0] === 10 ? 1 : 0);

test("doSingleRollout loops sample → step until the episode ends, passing the stop reason", async () => {
  const seen: (string | undefined)[] = [];
  let turn = 0;
  const env: Env = {
    async initialObservation() {
      return { observation: ints([1]), stopCondition: [0] };
    },
    async step(action, extra): Promise<StepResult> {
      seen.push(extra?.stopReason);
      turn += 1;
      return {
        reward: turn,
        episodeDone: turn === 3,
        nextObservation: ints([1, ...action, 2]),
        nextStopCondition: [0],
        metrics: turn === 3 ? { "stop/completed": 1 } : {},
      };
    },
  };
  const traj = await doSingleRollout(new TinkerTokenCompleter(new FakeSamplingClient(() => ({ tokens: [7], stop_reason: "length" })), 4), env);
  assert.equal(traj.transitions.length, 3);
  assert.deepEqual(seen, ["length", "length", "length"]);
  assert.equal(traj.stopReason, "completed");
  assert.deepEqual(
    traj.transitions.map((t) => t.reward),
    [1, 2, 3],
  );
  assert.deepEqual(traj.transitions[1].ob, ints([1, 7, 2]));
});

test("an initial-observation overflow ends the rollout with one empty, rewarded transition", async () => {
  const env: Env = {
    async initialObservation() {
      return new InitialObservationOverflow(-0.1, { "stop/max_tokens": 1 }, { why: "too long" });
    },
    async step() {
      throw new Error("must not be called");
    },
  };
  const s = new FakeSamplingClient(() => ({ tokens: [1] }));
  const traj = await doSingleRollout(new TinkerTokenCompleter(s, 4), env);
  assert.equal(s.calls, 0);
  assert.equal(traj.transitions.length, 1);
  assert.equal(traj.transitions[0].reward, -0.1);
  assert.equal(traj.stopReason, "max_tokens");
  assert.deepEqual(trajectoryToData(traj, 1), []);
});

test("group members are sampled concurrently", async () => {
  // Every env waits until all of them have stepped: a sequential rollout would never finish.
  const size = 4;
  let arrived = 0;
  let release: () => void = () => {};
  const all = new Promise<void>((r) => (release = r));
  const make = () =>
    ({
      async initialObservation() {
        return { observation: ints([1]), stopCondition: [0] };
      },
      async step() {
        arrived += 1;
        if (arrived === size) release();
        await all;
        return { reward: 1, episodeDone: true, nextObservation: { chunks: [] }, nextStopCondition: [0] };
      },
    }) satisfies Env;
  const builder = new FnGroupBuilder(make, size);
  const timeout = new Promise((_, rej) => setTimeout(() => rej(new Error("rollouts ran sequentially")), 2000).unref());
  const group = await Promise.race([doGroupRollout(builder, policy()), timeout]);
  assert.equal((group as { trajectoriesG: unknown[] }).trajectoriesG.length, size);
});

test("fail-fast: an env error fails the group, propagates, and cleanup still runs", async () => {
  const builder = new FnGroupBuilder((i) => (i === 1 ? new ThrowingEnv() : new OneTurnEnv([1], rewardFirst)), 3);
  await assert.rejects(doGroupRollout(builder, policy(), new FailFast()), EnvBoom);
  assert.equal(builder.cleaned, 1);
  const counter = new RolloutErrorCounter();
  const b2 = new FnGroupBuilder((i) => (i === 0 ? new ThrowingEnv() : new OneTurnEnv([1], rewardFirst)), 2);
  await assert.rejects(doGroupRolloutAndFilterConstantReward(sampler(), b2, { maxTokens: 4, errorCounter: counter }), EnvBoom);
  assert.deepEqual(counter.getMetrics(), {}, "fail-fast stops training instead of counting");
});

test("retry: a failure is retried on a fresh env and the group succeeds; errors are counted", async () => {
  // Env #1 (of the first makeEnvs) throws; the retry's makeEnvs gives healthy envs.
  const builder = new FnGroupBuilder((i) => (i === 1 ? new ThrowingEnv() : new OneTurnEnv([1], () => 1)), 3, ["t"]);
  const counter = new RolloutErrorCounter();
  const group = await doGroupRolloutAndFilterConstantReward(sampler(), builder, {
    maxTokens: 4,
    strategy: new RetryOnFailure(3),
    errorCounter: counter,
  });
  assert.ok(group !== null);
  assert.equal(group.trajectoriesG.length, 3);
  assert.deepEqual(group.rolloutErrors, [{ errorType: "EnvBoom", errorMessage: "env exploded" }]);
  assert.equal(builder.made, 6, "one extra makeEnvs for the retry");
  assert.equal(builder.cleaned, 1);
  assert.deepEqual(counter.getMetrics(), { "rollout_errors/EnvBoom": 1, "rollout_errors/total": 1, "rollout_errors/groups_skipped": 0 });
});

test("retry: once the budget is exhausted the group is skipped and counted", async () => {
  const builder = new FnGroupBuilder(() => new ThrowingEnv(), 2);
  const counter = new RolloutErrorCounter();
  const skipped: unknown[] = [];
  const group = await doGroupRolloutAndFilterConstantReward(sampler(), builder, {
    maxTokens: 4,
    strategy: new RetryOnFailure(3),
    errorCounter: counter,
    onSkip: (e) => skipped.push(e),
  });
  assert.equal(group, null);
  assert.equal(skipped.length, 1);
  assert.deepEqual(counter.getMetrics(), { "rollout_errors/EnvBoom": 4, "rollout_errors/total": 4, "rollout_errors/groups_skipped": 1 });
  // Counts are cumulative across groups.
  await doGroupRolloutAndFilterConstantReward(sampler(), new FnGroupBuilder(() => new ThrowingEnv(), 1), {
    maxTokens: 4,
    strategy: new RetryOnFailure(0),
    errorCounter: counter,
  });
  assert.equal(counter.getMetrics()["rollout_errors/groups_skipped"], 2);
  assert.equal(counter.getMetrics()["rollout_errors/total"], 5);
});

test("constant-reward groups can be dropped at rollout time", async () => {
  const constant = new FnGroupBuilder(() => new OneTurnEnv([1], () => 1), 2);
  assert.equal(await doGroupRolloutAndFilterConstantReward(sampler(), constant, { maxTokens: 4, removeConstantRewardGroups: true }), null);
  const mixed = new FnGroupBuilder(() => new OneTurnEnv([1], rewardFirst), 2);
  const g = await doGroupRolloutAndFilterConstantReward(sampler(), mixed, { maxTokens: 4, removeConstantRewardGroups: true });
  assert.ok(g !== null);
  assert.deepEqual(g.getTotalRewards().sort(), [0, 1]);
});

test("group rewards are added to step rewards", async () => {
  class Judge extends FnGroupBuilder {
    override async computeGroupRewards(trajs: { transitions: unknown[] }[]) {
      return trajs.map((_, i) => ({ reward: i * 10, metrics: { rank: i } }));
    }
  }
  const g = await doGroupRollout(new Judge(() => new OneTurnEnv([1], () => 1), 2), policy());
  assert.deepEqual(g.getTotalRewards(), [1, 11]);
  assert.deepEqual(g.metricsG, [{ rank: 0 }, { rank: 1 }]);
});

test("rollout_error_tolerance maps to strategies", () => {
  assert.ok(rolloutStrategyFromConfig(null) instanceof FailFast);
  assert.ok(rolloutStrategyFromConfig(false) instanceof FailFast);
  const r = rolloutStrategyFromConfig(true);
  assert.ok(r instanceof RetryOnFailure && r.maxRetries === 3);
  const r5 = rolloutStrategyFromConfig({ max_retries: 5 });
  assert.ok(r5 instanceof RetryOnFailure && r5.maxRetries === 5);
});

// MinViableGroup, case by case as the cookbook defines it: a floor of successes (default
// ceil(0.75 × group size)), retries only while the floor is unmet, a partial group kept past it.
class SlowEnv extends OneTurnEnv {
  constructor(readonly ms: number) {
    super([1], () => 1);
  }
  override async initialObservation(): Promise<InitialObservation> {
    await new Promise((resolve) => setTimeout(resolve, this.ms));
    return super.initialObservation();
  }
}

class SlowThrowingEnv extends ThrowingEnv {
  override async initialObservation(): Promise<InitialObservation> {
    await new Promise((resolve) => setTimeout(resolve, 40));
    return super.initialObservation();
  }
}

class HangingEnv implements Env {
  initialObservation(): Promise<InitialObservation> {
    return new Promise(() => {});
  }
  async step(): Promise<StepResult> {
    throw new Error("unreachable");
  }
}

/** The first makeEnvs gives `initial`; each later call (a retry) the next env of `retries`. */
class ScriptedBuilder extends EnvGroupBuilder {
  calls = 0;
  constructor(
    readonly initial: Env[],
    readonly retries: Env[] = [],
  ) {
    super();
  }
  async makeEnvs(): Promise<Env[]> {
    this.calls += 1;
    if (this.calls === 1) return this.initial;
    const next = this.retries.shift();
    assert.ok(next !== undefined, "a retry the script did not expect");
    return [next];
  }
}

const ok = () => new OneTurnEnv([1], () => 1);

test("min viable group: below the floor a failure is retried; a failed retry leaves the group partial but kept", async () => {
  const builder = new ScriptedBuilder([new SlowEnv(30), new SlowEnv(30), new SlowEnv(30), new ThrowingEnv()], [new ThrowingEnv()]);
  const result = await new MinViableGroup(3, 1).execute(builder, policy());
  assert.equal(result.trajectories.length, 3);
  assert.equal(result.envs.length, 3);
  assert.deepEqual(
    result.errors.map((e) => e.errorType),
    ["EnvBoom", "EnvBoom"],
  );
  assert.equal(builder.calls, 2, "the group and one retry");
});

test("min viable group: a full group when nothing fails; a successful retry restores the full group", async () => {
  const full = await new MinViableGroup(3).execute(new ScriptedBuilder([ok(), ok(), ok(), ok()]), policy());
  assert.equal(full.trajectories.length, 4);
  assert.deepEqual(full.errors, []);
  const builder = new ScriptedBuilder([ok(), ok(), ok(), new ThrowingEnv()], [ok()]);
  const restored = await new MinViableGroup(4, 3).execute(builder, policy());
  assert.equal(restored.trajectories.length, 4);
  assert.equal(restored.errors.length, 1, "the first failure stays recorded");
});

test("min viable group: once the floor is met a failure is recorded but not retried", async () => {
  const builder = new ScriptedBuilder([ok(), ok(), ok(), new SlowThrowingEnv()], [ok()]);
  const result = await new MinViableGroup(3, 3).execute(builder, policy());
  assert.equal(result.trajectories.length, 3);
  assert.equal(result.errors.length, 1);
  assert.equal(builder.calls, 1, "no retry after the floor was met");
});

test("min viable group: below the floor after the budget the group is dropped, skipped and counted, not a crash", async () => {
  const strategy = new MinViableGroup(3, 0);
  assert.equal(strategy.catchesGroupErrors, true);
  await assert.rejects(strategy.execute(new ScriptedBuilder([ok(), ok(), new ThrowingEnv(), new ThrowingEnv()]), policy()), (err: unknown) => {
    assert.ok(err instanceof RolloutGroupError);
    assert.match(err.message, /only 2\/4 rollouts succeeded, below the minimum viable group size 3/);
    assert.equal(err.rolloutErrors.length, 2);
    return true;
  });
  const counter = new RolloutErrorCounter();
  const builder = new FnGroupBuilder((i) => (i < 2 ? new ThrowingEnv() : ok()), 4);
  const group = await doGroupRolloutAndFilterConstantReward(sampler(), builder, { maxTokens: 4, strategy, errorCounter: counter });
  assert.equal(group, null);
  assert.deepEqual(counter.getMetrics(), { "rollout_errors/EnvBoom": 2, "rollout_errors/total": 2, "rollout_errors/groups_skipped": 1 });
  assert.equal(builder.cleaned, 1);
});

test("min viable group: the default floor is ceil(0.75 × group size): 3 of 4, 2 of 2, 6 of 8", async () => {
  const fails = (n: number, size: number) => new ScriptedBuilder(Array.from({ length: size }, (_, i) => (i < size - n ? ok() : new ThrowingEnv())));
  const strategy = new MinViableGroup(null, 0);
  assert.deepEqual([strategy.floor(4), strategy.floor(2), strategy.floor(8), strategy.floor(1)], [3, 2, 6, 1]);
  assert.equal((await strategy.execute(fails(1, 4), policy())).trajectories.length, 3);
  await assert.rejects(strategy.execute(fails(2, 4), policy()), /minimum viable group size 3/);
  await assert.rejects(strategy.execute(fails(1, 2), policy()), /minimum viable group size 2/);
  const eight = await strategy.execute(fails(2, 8), policy());
  assert.equal(eight.trajectories.length, 6);
  assert.equal(eight.errors.length, 2);
});

test("min viable group: an episode past per_rollout_timeout counts as failed", async () => {
  const kept = await new MinViableGroup(1, 0, 0.05).execute(new ScriptedBuilder([ok(), new HangingEnv()]), policy());
  assert.equal(kept.trajectories.length, 1);
  assert.deepEqual(
    kept.errors.map((e) => e.errorType),
    ["RolloutTimeoutError"],
  );
  await assert.rejects(new MinViableGroup(2, 0, 0.05).execute(new ScriptedBuilder([ok(), new HangingEnv()]), policy()), RolloutGroupError);
  assert.equal(new MinViableGroup().perRolloutTimeout, null);
  assert.equal(new MinViableGroup().maxRetries, 3);
});

test("rollout_error_tolerance selects MinViableGroup by name or with its parameters", () => {
  const base = { log_path: "/tmp/unused", model_name: "tiny-chat", max_tokens: 8 };
  const byName = parseConfigArgs(RLConfigSchema, ["rollout_error_tolerance=min_viable_group"], base);
  const named = rolloutStrategyFromConfig(byName.rollout_error_tolerance);
  assert.ok(named instanceof MinViableGroup && named.minSuccessful === null && named.maxRetries === 3);
  const withArgs = parseConfigArgs(
    RLConfigSchema,
    ['rollout_error_tolerance={"strategy":"min_viable_group","min_successful":5,"max_retries":1,"per_rollout_timeout":30}'],
    base,
  );
  const custom = rolloutStrategyFromConfig(withArgs.rollout_error_tolerance);
  assert.ok(custom instanceof MinViableGroup);
  assert.deepEqual([custom.minSuccessful, custom.maxRetries, custom.perRolloutTimeout], [5, 1, 30]);
  const retry = rolloutStrategyFromConfig(parseConfigArgs(RLConfigSchema, ['rollout_error_tolerance={"max_retries":2}'], base).rollout_error_tolerance);
  assert.ok(retry instanceof RetryOnFailure && retry.maxRetries === 2);
  assert.throws(() => parseConfigArgs(RLConfigSchema, ["rollout_error_tolerance=min_viable"], base), /rollout_error_tolerance/);
});
