// Async off-policy mode: a dataloader, groups_per_batch rollout workers and the trainer run
// concurrently, joined by queues; the OffPolicyBatcher keeps groups within max_steps_off_policy.
import { performance } from "node:perf_hooks";
import { StepTimer } from "../../log/timing.ts";
import type { SamplingClient } from "../../tinker/clients.ts";
import { AsyncQueue } from "../asyncQueue.ts";
import { computeSamplingClientMetrics } from "../metrics.ts";
import { OffPolicyBatcher, type StampedGroup } from "../offPolicy.ts";
import type { EnvGroupBuilder } from "../types.ts";
import {
  baseMetrics,
  doTrainStepAndGetSampler,
  evalDue,
  finishIteration,
  rolloutFn,
  runEvaluations,
  samplerAfterStep,
  writeTranscripts,
  type Ctx,
  type GroupKey,
  type ModeResult,
  type TrainOutcome,
} from "./context.ts";
import { SHUTDOWN, trainStepStreaming, type GroupItem } from "./streaming.ts";

export async function doAsyncTraining(ctx: Ctx): Promise<ModeResult> {
  const asyncConfig = ctx.config.async_config;
  if (asyncConfig === null) throw new Error("async mode needs async_config");
  const numWorkers = asyncConfig.groups_per_batch;
  const builderQueue = new AsyncQueue<EnvGroupBuilder | typeof SHUTDOWN>(numWorkers);
  const groupQueue = new AsyncQueue<GroupItem>();
  let dataExhausted = false;
  let trainingDone = false;
  let samplingClient = await samplerAfterStep(ctx, ctx.startBatch, new StepTimer());
  let samplingStep = ctx.startBatch;
  const rollout = rolloutFn(ctx, ctx.config.remove_constant_reward_groups);
  const evalPromises: Promise<void>[] = [];
  // Evals run beside training; the first failure is rethrown once training has stopped.
  let evalError: unknown = null;
  const launchEval = (client: SamplingClient, step: number) => {
    if (!evalDue(ctx, step)) return;
    evalPromises.push(
      (async () => {
        const timer = new StepTimer();
        const metrics = await timer.span("run_evals", () => runEvaluations(ctx, client, step));
        ctx.metricsLogger.logMetrics({ ...metrics, ...timer.metrics() }, step);
      })().catch((err: unknown) => {
        evalError ??= err;
      }),
    );
  };
  launchEval(samplingClient, samplingStep);

  // Each builder's place in the data stream seeds its sampling; a requeued builder samples anew.
  const groupKeys = new WeakMap<EnvGroupBuilder, GroupKey>();
  const dataloader = (async () => {
    for (let i = ctx.startBatch; i < ctx.endBatch && !trainingDone; i++) {
      for (const [index, builder] of ctx.dataset.getBatch(i).entries()) {
        groupKeys.set(builder, { batch: i, index });
        await builderQueue.put(builder);
      }
    }
    dataExhausted = true;
    for (let w = 0; w < numWorkers; w++) builderQueue.putNowait(SHUTDOWN);
  })();

  let alive = numWorkers;
  const workers = Array.from({ length: numWorkers }, async () => {
    try {
      for (;;) {
        const builder = await builderQueue.get();
        if (builder === SHUTDOWN) break;
        // After training ends, queued builders are drained without sampling.
        if (trainingDone) continue;
        // The step of the weights this rollout samples with, even if training moves on meanwhile.
        const step = samplingStep;
        const client = samplingClient;
        const t0 = performance.now();
        const group = await rollout(client, builder, groupKeys.get(builder) ?? { batch: step, index: 0 });
        groupQueue.putNowait(group === null ? null : { group, builder, samplingClientStep: step, samplingTimeSeconds: (performance.now() - t0) / 1000 });
      }
    } finally {
      alive -= 1;
      if (alive === 0) groupQueue.putNowait(SHUTDOWN);
    }
  });
  // A fail-fast rollout error must surface instead of leaving the trainer waiting.
  const workerFailure = Promise.all(workers).then(() => new Promise<never>(() => {}));

  const batcher = new OffPolicyBatcher({
    maxStepsOffPolicy: asyncConfig.max_steps_off_policy,
    groupsPerBatch: asyncConfig.groups_per_batch,
    requeue: (builder) => {
      const key = groupKeys.get(builder);
      if (key !== undefined) groupKeys.set(builder, { ...key, attempt: (key.attempt ?? 0) + 1 });
      void builderQueue.put(builder);
    },
    dataExhausted: () => dataExhausted,
  });

  let bySignal = false;
  const training = (async (): Promise<number> => {
    let iBatch = ctx.startBatch;
    // One timer per training step, spanning the wait for its groups too.
    let timer = new StepTimer();
    while (iBatch < ctx.endBatch) {
      // training_client/step is the cookbook's async key; progress/batch keeps the TUI's axis uniform across modes.
      const metrics: Record<string, number> = { ...baseMetrics(ctx, iBatch), "training_client/step": iBatch };
      let groups: StampedGroup[];
      let outcome: TrainOutcome;
      if (ctx.config.stream_minibatch_config !== null) {
        const current = iBatch;
        const streamed = await trainStepStreaming(ctx, iBatch, groupQueue, (item) => item !== null && batcher.screen(item, current) === "accepted", timer);
        if (streamed === null) break;
        groups = streamed.groups;
        outcome = streamed;
      } else {
        const item = await groupQueue.get();
        if (item === SHUTDOWN) break;
        if (item === null) continue;
        batcher.offer(item, iBatch);
        const batch = batcher.takeBatch();
        if (batch === null) continue;
        groups = batch;
        Object.assign(metrics, computeSamplingClientMetrics(batch));
        outcome = await doTrainStepAndGetSampler(
          ctx,
          iBatch,
          batch.map((g) => g.group),
          batch.map((g) => g.builder.loggingTags()),
          timer,
        );
      }
      samplingClient = outcome.samplingClient;
      samplingStep = iBatch + 1;
      Object.assign(metrics, outcome.metrics);
      writeTranscripts(
        ctx,
        iBatch,
        groups.map((g) => ({ group: g.group, tags: g.builder.loggingTags(), samplingClientStep: g.samplingClientStep })),
      );
      Object.assign(metrics, { "off_policy/requeued": batcher.counts.requeued, "off_policy/discarded": batcher.counts.discarded });
      const stop = await finishIteration(ctx, iBatch, metrics, timer);
      timer = new StepTimer();
      iBatch += 1;
      launchEval(samplingClient, samplingStep);
      if (stop) {
        bySignal = true;
        break;
      }
    }
    trainingDone = true;
    return iBatch;
  })();

  const dataloaderFailure = dataloader.then(() => new Promise<never>(() => {}));
  let stoppedAt: number;
  try {
    stoppedAt = await Promise.race([training, workerFailure, dataloaderFailure]);
  } finally {
    // Unblock whatever still waits so nothing keeps sampling: workers finish their current
    // rollout and stop; those results are not trained on.
    trainingDone = true;
    dataExhausted = true;
    builderQueue.close();
    for (let w = 0; w < numWorkers; w++) builderQueue.putNowait(SHUTDOWN);
  }
  await Promise.allSettled([dataloader, ...workers]);
  await Promise.all(evalPromises);
  if (evalError !== null) throw evalError;
  if (stoppedAt < ctx.endBatch && !bySignal) {
    ctx.runLog.warn(`async training ran out of fresh groups after ${stoppedAt - ctx.startBatch} steps (stale groups are discarded once the data is exhausted)`);
  }
  return { stoppedAt, bySignal };
}
