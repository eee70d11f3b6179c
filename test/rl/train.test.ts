import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main as rlMain, type RLMainOptions } from "../../src/rl/train.ts";
import { RLConfigSchema, type RLConfigInput } from "../../src/rl/config.ts";
import type { ServiceClient } from "../../src/tinker/clients.ts";
import { splitList, trainStep } from "../../src/rl/trainStep.ts";
import type { RunControl } from "../../src/runs/control.ts";
import { readManifest } from "../../src/runs/manifest.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import type { Datum } from "../../src/tinker/types.ts";
import { FakeSamplingClient, FakeServiceClient, FakeTrainingClient, FnGroupBuilder, ListDataset, OneTurnEnv } from "./fakes.ts";

const readJsonl = (path: string) =>
  readFileSync(path, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

function tmpRun(): string {
  return join(mkdtempSync(join(tmpdir(), "rl-train-")), "run");
}

/** Samplers alternate between a right answer (10) and a wrong one (11). */
function setup(opts: { batches?: number; groups?: number; groupSize?: number; test?: boolean; throwing?: boolean } = {}) {
  const { batches = 3, groups = 2, groupSize = 4 } = opts;
  const sampler = () => new FakeSamplingClient((_p, call) => ({ tokens: [10 + (call % 2), 0] }), -0.5);
  const training = new FakeTrainingClient(sampler);
  const service = new FakeServiceClient(training);
  let toThrow = opts.throwing ? 1 : 0;
  const env = () =>
    toThrow-- > 0
      ? {
          async initialObservation() {
            return { observation: { chunks: [{ type: "encoded_text" as const, tokens: [1] }] }, stopCondition: [0] };
          },
          async step(): Promise<never> {
            throw new RangeError("flaky env");
          },
        }
      : new OneTurnEnv([1, 2, 3], (a) => (a[0] === 10 ? 1 : 0));
  const mk = (n: number, tag: string) =>
    Array.from({ length: n }, () => Array.from({ length: groups }, (_, g) => new FnGroupBuilder(env, groupSize, [g === 0 ? tag : "other"])));
  const builder: RLDatasetBuilder = {
    async build() {
      return { train: new ListDataset(mk(batches, "arith")), test: opts.test ? new ListDataset(mk(1, "arith")) : null };
    },
  };
  return { training, service, builder };
}

const base = (logPath: string) => ({
  log_path: logPath,
  model_name: "fake-model",
  learning_rate: 1e-4,
  max_tokens: 8,
  behavior_if_log_dir_exists: "raise" as const,
});
const quiet = { console: false as const };

/** The loop on a config parsed the way a recipe's is, against a fake service. */
function main(input: RLConfigInput, builder: RLDatasetBuilder, service: ServiceClient, options: RLMainOptions = {}) {
  return rlMain(RLConfigSchema.parse(input), builder, { ...options, serviceClient: service });
}

test("sync loop: fb+optim enqueued back to back per substep, metrics, checkpoints and transcripts", async () => {
  const logPath = tmpRun();
  const { training, service, builder } = setup();
  const result = await main({ ...base(logPath), num_substeps: 2, save_every: 2, eval_every: 0 }, builder, service, quiet);
  assert.deepEqual(result, { startStep: 0, endStep: 3, stoppedAt: 3, outcome: "completed" });
  assert.deepEqual(service.created, ["lora:fake-model"]);

  // Per iteration: fb, opt, fb, opt all enqueued before the first result is awaited.
  const trainEvents = training.events.filter((e) => /^(await:)?(fb|opt):/.test(e));
  for (let it = 0; it < 3; it++) {
    const a = 2 * it;
    const b = a + 1;
    assert.deepEqual(trainEvents.slice(8 * it, 8 * it + 8), [
      `fb:${a}`,
      `opt:${a}`,
      `fb:${b}`,
      `opt:${b}`,
      `await:fb:${a}`,
      `await:opt:${a}`,
      `await:fb:${b}`,
      `await:opt:${b}`,
    ]);
  }
  // 2 groups × 4 single-turn trajectories = 8 datums, split over 2 substeps; no mask is sent.
  assert.deepEqual(
    training.forwardBackwardBatches.map((b) => b.length),
    [4, 4, 4, 4, 4, 4],
  );
  for (const batch of training.forwardBackwardBatches) {
    for (const d of batch) assert.deepEqual(Object.keys(d.loss_fn_inputs).sort(), ["advantages", "logprobs", "target_tokens"]);
  }
  assert.deepEqual(training.optimSteps[0], { learning_rate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8 });

  const metrics = readJsonl(join(logPath, "metrics.jsonl"));
  assert.deepEqual(
    metrics.map((m) => m.step),
    [0, 1, 2],
  );
  const m0 = metrics[0];
  for (const key of [
    "progress/batch",
    "progress/done_frac",
    "optim/lr",
    "env/all/reward/total",
    "env/all/correct",
    "env/all/ac_tokens_per_turn",
    "env/all/ob_tokens_per_turn",
    "env/all/turns_per_episode",
    "env/all/total_episodes",
    "env/all/total_turns",
    "env/all/total_ac_tokens",
    "env/all/total_ob_tokens",
    "env/all/by_group/frac_mixed",
    "env/all/by_group/frac_all_good",
    "env/all/by_group/frac_all_bad",
    "env/arith/reward/total",
    "env/other/reward/total",
    "optim/kl_sample_train_v1",
    "optim/kl_sample_train_v2",
    "optim/entropy",
    "optim/grad_norm",
    "time/total",
    "time/sampling",
    "time/train_step",
    "time/prepare_minibatch",
  ]) {
    assert.ok(key in m0, `metrics.jsonl lacks ${key}`);
  }
  assert.equal(m0["env/all/reward/total"], 0.5);
  assert.equal(m0["env/all/total_episodes"], 8);
  assert.equal(m0["progress/done_frac"], 1 / 3);
  // The fake trainer's logprobs sit 0.1 below the sampled −0.5.
  assert.ok(Math.abs((m0["optim/kl_sample_train_v1"] as number) - 0.1) < 1e-9);
  assert.ok(Math.abs((m0["optim/kl_sample_train_v2"] as number) - 0.005) < 1e-9);
  assert.ok(Math.abs((m0["optim/entropy"] as number) - 0.5) < 1e-9);

  const ckpts = readJsonl(join(logPath, "checkpoints.jsonl"));
  assert.deepEqual(
    ckpts.map((c) => [c.name, c.batch, c.final ?? false]),
    [
      ["000002", 2, false],
      ["final", 3, true],
    ],
  );
  assert.equal(ckpts[0].state_path, "tinker://fake-run/weights/000002");
  assert.equal(ckpts[0].sampler_path, "tinker://fake-run/sampler_weights/000002");

  const summaries = readJsonl(join(logPath, "iteration_000001", "train_rollout_summaries.jsonl"));
  assert.equal(summaries.length, 8);
  assert.equal(summaries[0].iteration, 1);
  assert.equal(summaries[0].sampling_client_step, 1);
  const html = readFileSync(join(logPath, "iteration_000000", "train.html"), "utf8");
  assert.ok(html.includes("RL Iteration 0") && html.includes('id="group-1"'));
  assert.ok(existsSync(join(logPath, "config.json")));
  assert.equal(readManifest(logPath)?.status, "completed");
  assert.equal(readManifest(logPath)?.engine, "embedded");
  assert.match(readFileSync(join(logPath, "logs.log"), "utf8"), /iteration 0 group 0 trajectory \d: reward 1\.000, advantage 0\.500/);
  assert.equal(JSON.parse(readFileSync(join(logPath, "config.json"), "utf8")).num_substeps, 2);
});

test("resume continues from the last resumable checkpoint with its optimizer state", async () => {
  const logPath = tmpRun();
  const first = setup({ batches: 3 });
  await main({ ...base(logPath), max_steps: 2 }, first.builder, first.service, quiet);
  const second = setup({ batches: 3 });
  const result = await main({ ...base(logPath), behavior_if_log_dir_exists: "resume" }, second.builder, second.service, quiet);
  assert.equal(result.startStep, 2);
  assert.equal(result.outcome, "completed");
  assert.deepEqual(second.service.created, ["state+optim:tinker://fake-run/weights/final"]);
  assert.deepEqual(
    readJsonl(join(logPath, "metrics.jsonl")).map((m) => m.step),
    [0, 1, 2],
  );
  const again = setup({ batches: 3 });
  const done = await main({ ...base(logPath), behavior_if_log_dir_exists: "resume" }, again.builder, again.service, quiet);
  assert.equal(done.outcome, "already_complete");
  await assert.rejects(main(base(logPath), again.builder, again.service, quiet), /already exists/);
});

function fakeControl(plan: { checkpointAt?: number; stopAt?: number }): RunControl & { tick(): void } {
  let step = 0;
  let ckpt = false;
  return {
    get checkpointRequested() {
      return ckpt;
    },
    get stopRequested() {
      return plan.stopAt !== undefined && step >= plan.stopAt;
    },
    consumeCheckpointRequest() {
      const was = ckpt;
      ckpt = false;
      return was;
    },
    dispose() {},
    tick() {
      step += 1;
      if (step === plan.checkpointAt) ckpt = true;
    },
  };
}

test("SIGUSR1 saves a checkpoint at the step boundary; SIGINT saves and stops", async () => {
  const logPath = tmpRun();
  const { service, builder } = setup({ batches: 4 });
  const control = fakeControl({ checkpointAt: 1, stopAt: 2 });
  // The loop polls once per iteration, after logging; advance the fake clock as metrics are written.
  const origBuild = builder.build.bind(builder);
  builder.build = async () => {
    const ds = await origBuild();
    const train = ds.train;
    return {
      ...ds,
      train: {
        get length() {
          return train.length;
        },
        getBatch(i: number) {
          if (i > 0) control.tick();
          return train.getBatch(i);
        },
      },
    };
  };
  const result = await main({ ...base(logPath), save_every: 0 }, builder, service, { ...quiet, runControl: control });
  assert.equal(result.outcome, "stopped");
  assert.equal(result.stoppedAt, 3);
  const ckpts = readJsonl(join(logPath, "checkpoints.jsonl"));
  assert.deepEqual(
    ckpts.map((c) => [c.name, c.batch]),
    [
      ["000002", 2],
      ["000003", 3],
    ],
  );
  assert.ok(!ckpts.some((c) => c.final === true), "a stopped run has no final checkpoint");
  assert.equal(readManifest(logPath)?.status, "stopped");
});

test("streaming minibatches: one forward_backward per minibatch, one optim_step per substep", async () => {
  const logPath = tmpRun();
  const { training, service, builder } = setup({ batches: 2, groups: 4, groupSize: 2 });
  await main({ ...base(logPath), stream_minibatch_config: { groups_per_batch: 4, num_minibatches: 2 }, num_substeps: 2 }, builder, service, quiet);
  const trainEvents = training.events.filter((e) => /^(fb|opt):/.test(e));
  // 4 groups per iteration, 2 substeps of 2 minibatches of 1 group each.
  assert.deepEqual(trainEvents.slice(0, 6), ["fb:0", "fb:1", "opt:0", "fb:2", "fb:3", "opt:1"]);
  assert.equal(training.forwardBackwardBatches.length, 8);
  assert.equal(training.optimSteps.length, 4);
  // Each substep's optim_step is enqueued before its forward_backward results are awaited.
  assert.ok(training.events.indexOf("opt:0") < training.events.indexOf("await:fb:0"));
  const metrics = readJsonl(join(logPath, "metrics.jsonl"));
  assert.deepEqual(
    metrics.map((m) => m.step),
    [0, 1],
  );
  assert.ok("sampling_client/step_max" in metrics[0] && "env/all/reward/total" in metrics[0]);
  await assert.rejects(
    main({ ...base(tmpRun()), stream_minibatch_config: { groups_per_batch: 3, num_minibatches: 2 } }, builder, service, quiet),
    /divisible by num_minibatches/,
  );
});

test("async off-policy mode trains on groups no staler than max_steps_off_policy", async () => {
  const logPath = tmpRun();
  const { training, service, builder } = setup({ batches: 3, groups: 2, groupSize: 2 });
  const result = await main({ ...base(logPath), async_config: { max_steps_off_policy: 5, groups_per_batch: 2 } }, builder, service, quiet);
  assert.equal(result.outcome, "completed");
  const metrics = readJsonl(join(logPath, "metrics.jsonl"));
  assert.deepEqual(
    metrics.map((m) => m.step),
    [0, 1, 2],
  );
  assert.ok(metrics.every((m) => "sampling_client/step_max" in m && "env/all/reward/total" in m));
  assert.equal(training.optimSteps.length, 3);

  // With a cap of 0 every trained group comes from the current sampler; stale ones are resampled.
  const strictPath = tmpRun();
  const strict = setup({ batches: 3, groups: 2, groupSize: 2 });
  const r = await main({ ...base(strictPath), async_config: { max_steps_off_policy: 0, groups_per_batch: 2 } }, strict.builder, strict.service, quiet);
  assert.notEqual(r.outcome, "stopped");
  const strictMetrics = readJsonl(join(strictPath, "metrics.jsonl"));
  assert.ok(strictMetrics.length >= 1);
  for (const m of strictMetrics) assert.equal(m["sampling_client/step_min"], m.step);
  const ckpts = readJsonl(join(strictPath, "checkpoints.jsonl"));
  assert.equal(ckpts.at(-1)?.final, true);
});

test("rollout errors: fail-fast stops training, retry skips nothing and counts the error", async () => {
  const failing = setup({ throwing: true });
  await assert.rejects(main(base(tmpRun()), failing.builder, failing.service, quiet), RangeError);
  const failingAsync = setup({ throwing: true });
  await assert.rejects(
    main({ ...base(tmpRun()), async_config: { max_steps_off_policy: 1, groups_per_batch: 2 } }, failingAsync.builder, failingAsync.service, quiet),
    RangeError,
    "async mode surfaces a worker's error instead of waiting forever",
  );
  const failingStream = setup({ throwing: true, groups: 2 });
  await assert.rejects(
    main({ ...base(tmpRun()), stream_minibatch_config: { groups_per_batch: 2, num_minibatches: 1 } }, failingStream.builder, failingStream.service, quiet),
    RangeError,
  );
  const logPath = tmpRun();
  const tolerant = setup({ throwing: true });
  await main({ ...base(logPath), rollout_error_tolerance: true }, tolerant.builder, tolerant.service, quiet);
  const m0 = readJsonl(join(logPath, "metrics.jsonl"))[0];
  assert.equal(m0["rollout_errors/RangeError"], 1);
  assert.equal(m0["rollout_errors/total"], 1);
  assert.equal(m0["rollout_errors/groups_skipped"], 0);
});

test("the dataset's test split is evaluated with a test/ prefix", async () => {
  const logPath = tmpRun();
  const { service, builder } = setup({ batches: 2, test: true });
  await main({ ...base(logPath), eval_every: 1 }, builder, service, quiet);
  const metrics = readJsonl(join(logPath, "metrics.jsonl"));
  assert.equal(metrics[0]["test/env/all/reward/total"], 0.5);
  assert.ok("test/env/all/correct" in metrics[1]);
  assert.ok(existsSync(join(logPath, "iteration_000000", "eval_test_rollout_summaries.jsonl")));
  assert.ok(existsSync(join(logPath, "iteration_000000", "eval_test.html")));
});

test("config: defaults (docs/cookbook-parity.md#rl-config-and-modes) and cross-field checks", async () => {
  const c = RLConfigSchema.parse(base("/tmp/x"));
  assert.equal(c.loss_fn, "importance_sampling");
  assert.equal(c.num_substeps, 1);
  assert.equal(c.lora_rank, 32);
  assert.equal(c.eval_every, 20);
  assert.equal(c.save_every, 20);
  assert.equal(c.num_groups_to_log, 4);
  assert.equal(c.ttl_seconds, 604800);
  assert.equal(c.kl_penalty_coef, 0);
  assert.equal(c.async_config, null);
  assert.throws(() => RLConfigSchema.parse({ ...base("/tmp/x"), loss_fn: "dpo" }));
  const { training, builder } = setup();
  const service = new FakeServiceClient(
    training,
    new FakeSamplingClient(
      () => ({ tokens: [] }),
      0,
      () => -0.7,
    ),
  );
  // A KL penalty without a named reference pulls toward the base model.
  const klPath = tmpRun();
  await main({ ...base(klPath), kl_penalty_coef: 0.1 }, builder, service, quiet);
  assert.equal(service.samplingClientsCreated.at(-1)?.baseModel, "fake-model");
  assert.throws(() => RLConfigSchema.parse({ ...base("/tmp/x"), stream_minibatch_config: { groups_per_batch: -1 } }));
});

test("trainStep splits data across substeps and returns trainer logprobs in order", async () => {
  assert.deepEqual(splitList([1, 2, 3, 4, 5], 2), [
    [1, 2, 3],
    [4, 5],
  ]);
  assert.deepEqual(splitList([1], 3), [[1], [], []]);
  const tc = new FakeTrainingClient(() => new FakeSamplingClient(() => ({ tokens: [] })), 0);
  const mk = (lp: number): Datum => ({
    model_input: { chunks: [{ type: "encoded_text", tokens: [1] }] },
    loss_fn_inputs: {
      target_tokens: { data: [2], dtype: "int64" },
      logprobs: { data: [lp], dtype: "float32" },
      advantages: { data: [1], dtype: "float32" },
      mask: { data: [1], dtype: "float32" },
    },
  });
  const metrics: Record<string, number> = {};
  const lps = await trainStep(
    [mk(-1), mk(-2), mk(-3)],
    tc,
    { adam: { learning_rate: 0.1, beta1: 0.9, beta2: 0.95, eps: 1e-8 }, numSubsteps: 5, lossFn: "ppo" },
    metrics,
  );
  assert.deepEqual(lps, [[-1], [-2], [-3]]);
  assert.equal(tc.forwardBackwardBatches.length, 3, "never more substeps than datums");
  assert.equal(metrics["optim/grad_norm"], 0.5);
});

test("async mode with streaming minibatches, and a KL penalty against a reference", async () => {
  const logPath = tmpRun();
  const { training, service, builder } = setup({ batches: 3, groups: 2, groupSize: 2 });
  const result = await main(
    { ...base(logPath), async_config: { max_steps_off_policy: 5, groups_per_batch: 2 }, stream_minibatch_config: { groups_per_batch: 2, num_minibatches: 2 } },
    builder,
    service,
    quiet,
  );
  assert.equal(result.outcome, "completed");
  assert.deepEqual(
    readJsonl(join(logPath, "metrics.jsonl")).map((m) => m.step),
    [0, 1, 2],
  );
  assert.equal(training.optimSteps.length, 3);
  assert.equal(training.forwardBackwardBatches.length, 6);

  const klPath = tmpRun();
  const kl = setup({ batches: 1 });
  const reference = new FakeSamplingClient(
    () => ({ tokens: [] }),
    0,
    () => -0.7,
  );
  const klService = new FakeServiceClient(kl.training, reference);
  await main({ ...base(klPath), kl_penalty_coef: 0.5, kl_reference_config: { base_model: "fake-model" } }, kl.builder, klService, quiet);
  const m = readJsonl(join(klPath, "metrics.jsonl"))[0];
  // Sampled −0.5 against reference −0.7 on every action token.
  assert.ok(Math.abs((m.kl_policy_base as number) - 0.2) < 1e-9);
});

test("a real SIGUSR1 to the process is answered with a checkpoint at the next step boundary", async () => {
  const logPath = tmpRun();
  const { service } = setup();
  class SlowBuilder extends FnGroupBuilder {
    override async makeEnvs() {
      // Lets the signal be delivered (it arrives on the event loop, not between promise jobs).
      await new Promise((r) => setTimeout(r, 20));
      return super.makeEnvs();
    }
  }
  const batches = Array.from({ length: 3 }, () => [new SlowBuilder(() => new OneTurnEnv([1], (a) => (a[0] === 10 ? 1 : 0)), 2)]);
  const dataset = new ListDataset(batches);
  const builder: RLDatasetBuilder = {
    async build() {
      return {
        train: {
          length: dataset.length,
          getBatch(i: number) {
            if (i === 1) process.kill(process.pid, "SIGUSR1");
            return dataset.getBatch(i);
          },
        },
      };
    },
  };
  const before = process.listenerCount("SIGUSR1");
  await main({ ...base(logPath), save_every: 0 }, builder, service, quiet);
  assert.equal(process.listenerCount("SIGUSR1"), before, "handlers are removed when the run ends");
  const ckpts = readJsonl(join(logPath, "checkpoints.jsonl"));
  assert.deepEqual(
    ckpts.map((c) => c.name),
    ["000002", "final"],
  );
  assert.equal(readManifest(logPath)?.status, "completed");
});

test("remove_constant_reward_groups trains only mixed groups but reports every sampled group", async () => {
  const logPath = tmpRun();
  const sampler = () => new FakeSamplingClient((_p, call) => ({ tokens: [10 + (call % 2), 0] }), -0.5);
  const training = new FakeTrainingClient(sampler);
  const service = new FakeServiceClient(training);
  const constant = new FnGroupBuilder(() => new OneTurnEnv([1], () => 1), 2);
  const mixed = new FnGroupBuilder(() => new OneTurnEnv([1], (a) => (a[0] === 10 ? 1 : 0)), 2);
  const builder: RLDatasetBuilder = {
    async build() {
      return { train: new ListDataset([[constant, mixed]]) };
    },
  };
  await main({ ...base(logPath), remove_constant_reward_groups: true }, builder, service, quiet);
  assert.equal(training.forwardBackwardBatches[0].length, 2, "only the mixed group's two trajectories are trained");
  const m = readJsonl(join(logPath, "metrics.jsonl"))[0];
  assert.equal(m["env/all/total_episodes"], 4);
  assert.equal(m["env/all/by_group/frac_all_good"], 0.5);
  assert.equal(m["env/all/reward/total"], 0.75);
});

test("rolling resume points are state-only and replace each other; post-update KL is measured", async () => {
  const logPath = tmpRun();
  const { service, builder } = setup({ batches: 3 });
  await main({ ...base(logPath), save_every: 2, rolling_save_every: 1, compute_post_kl: true }, builder, service, quiet);
  const ckpts = readJsonl(join(logPath, "checkpoints.jsonl"));
  assert.deepEqual(
    ckpts.map((c) => [c.name, c.rolling ?? false, "sampler_path" in c]),
    [
      ["000001", true, false],
      ["000002", false, true],
      ["final", false, true],
    ],
  );
  assert.deepEqual(service.deleted, ["tinker://fake-run/weights/000001"], "the final save removes the last rolling point");
  const m = readJsonl(join(logPath, "metrics.jsonl"))[0];
  // The fake sampler scores every token −1 after the update; actions were sampled at −0.5.
  assert.ok(Math.abs((m.kl_pre_post_v1 as number) - 0.5) < 1e-9);
  assert.ok(Math.abs((m.kl_pre_post_v2 as number) - 0.125) < 1e-9);
});
