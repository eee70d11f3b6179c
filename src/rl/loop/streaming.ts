// Streaming minibatches: training starts on the first groups of an iteration while the rest are
// still sampling. Also used by async mode, which screens groups for staleness on the way in.
import { performance } from "node:perf_hooks";
import { StepTimer } from "../../log/timing.ts";
import type { TinkerFuture } from "../../tinker/clients.ts";
import type { Datum, ForwardBackwardOutput } from "../../tinker/types.ts";
import { AsyncQueue } from "../asyncQueue.ts";
import { removeMask } from "../dataProcessing.ts";
import { computeSamplingClientMetrics } from "../metrics.ts";
import type { StampedGroup } from "../offPolicy.ts";
import { computeTrajectoryMetrics } from "../trajectoryMetrics.ts";
import { adamParams } from "../../training/config.ts";
import { prepareMinibatch, trainingLogprobsFromOutput } from "../trainStep.ts";
import {
  baseMetrics,
  evalDue,
  finishIteration,
  fullBatchMetricsAndSampler,
  klArgs,
  rolloutFn,
  runEvaluations,
  samplerAfterStep,
  writeTranscripts,
  type Ctx,
  type ModeResult,
  type TrainOutcome,
} from "./context.ts";

export const SHUTDOWN = Symbol("shutdown");
export type GroupItem = StampedGroup | null | typeof SHUTDOWN;

/**
 * Consumes groups as they arrive: every `groups_per_batch / num_substeps / num_minibatches`
 * groups a forward_backward is enqueued; one optim_step per substep follows its minibatches.
 * `accept` screens each item (null = a dropped group). Returns null on shutdown.
 */
export async function trainStepStreaming(
  ctx: Ctx,
  iBatch: number,
  queue: AsyncQueue<GroupItem>,
  accept: (item: StampedGroup | null) => boolean,
  timer: StepTimer,
): Promise<(TrainOutcome & { groups: StampedGroup[] }) | null> {
  const stream = ctx.config.stream_minibatch_config;
  if (stream === null) throw new Error("trainStepStreaming needs stream_minibatch_config");
  const perSubstep = stream.groups_per_batch / ctx.config.num_substeps;
  const perMinibatch = perSubstep / stream.num_minibatches;
  const metrics: Record<string, number> = {};
  const allData: Datum[] = [];
  const allLogprobs: number[][] = [];
  const allGroups: StampedGroup[] = [];
  const adam = adamParams(ctx.config);
  for (let substep = 0; substep < ctx.config.num_substeps; substep++) {
    const futures: TinkerFuture<ForwardBackwardOutput>[] = [];
    let pending: (StampedGroup | null)[] = [];
    let minibatch = 0;
    while (minibatch < stream.num_minibatches) {
      const item = await queue.get();
      if (item === SHUTDOWN) return null;
      if (!accept(item)) continue;
      pending.push(item);
      if (pending.length < perMinibatch) continue;
      // Dropped groups count toward the minibatch, as in the sync mode's batch: it just trains on fewer.
      const groups = pending.filter((g): g is StampedGroup => g !== null);
      pending = [];
      minibatch += 1;
      if (groups.length === 0) continue;
      const prepared = await timer.span("prepare_minibatch", () =>
        prepareMinibatch(
          groups.map((g) => g.group),
          groups.map((g) => g.builder.loggingTags()),
          klArgs(ctx),
          ctx.advantageHook,
          { iteration: iBatch, logPath: ctx.logPath, decode: ctx.decode },
        ),
      );
      Object.assign(metrics, prepared.metrics);
      if (prepared.dataD.length === 0) continue;
      futures.push(await ctx.trainingClient.forwardBackward(prepared.dataD.map(removeMask), ctx.config.loss_fn, ctx.config.loss_fn_config ?? undefined));
      allData.push(...prepared.dataD);
      allGroups.push(...groups);
    }
    // optim_step is enqueued before any forward_backward result is awaited (same clock cycle).
    const optimFuture = await ctx.trainingClient.optimStep(adam);
    await timer.span("train_step", async () => {
      for (const f of futures) allLogprobs.push(...trainingLogprobsFromOutput(await f.result()));
      const optim = await optimFuture.result();
      if (optim.metrics !== undefined) Object.assign(metrics, optim.metrics);
    });
  }
  Object.assign(metrics, computeSamplingClientMetrics(allGroups));
  if (allGroups.length > 0) {
    Object.assign(
      metrics,
      computeTrajectoryMetrics(
        allGroups.map((g) => g.group),
        allGroups.map((g) => g.builder.loggingTags()),
      ),
    );
  }
  const out = await fullBatchMetricsAndSampler(ctx, iBatch + 1, allData, allLogprobs, timer);
  Object.assign(metrics, out.metrics);
  return { samplingClient: out.samplingClient, metrics, groups: allGroups };
}

export async function doSyncStreamingTraining(ctx: Ctx): Promise<ModeResult> {
  const stream = ctx.config.stream_minibatch_config;
  if (stream === null) throw new Error("streaming mode needs stream_minibatch_config");
  const rollout = rolloutFn(ctx, ctx.config.remove_constant_reward_groups);
  let samplingClient = await samplerAfterStep(ctx, ctx.startBatch, new StepTimer());
  for (let iBatch = ctx.startBatch; iBatch < ctx.endBatch; iBatch++) {
    const timer = new StepTimer();
    const metrics = baseMetrics(ctx, iBatch);
    if (evalDue(ctx, iBatch) || (ctx.evaluators.length > 0 && ctx.config.eval_every > 0 && iBatch === ctx.endBatch - 1)) {
      Object.assign(metrics, await timer.span("run_evals", () => runEvaluations(ctx, samplingClient, iBatch)));
    }
    const builders = ctx.dataset.getBatch(iBatch);
    if (builders.length !== stream.groups_per_batch) {
      throw new Error(
        `stream_minibatch_config.groups_per_batch=${stream.groups_per_batch} but dataset batch ${iBatch} has ${builders.length} groups; they must match`,
      );
    }
    const queue = new AsyncQueue<GroupItem>();
    const sampler = samplingClient;
    const workers = builders.map(async (builder, index) => {
      const t0 = performance.now();
      const group = await rollout(sampler, builder, { batch: iBatch, index });
      queue.putNowait(group === null ? null : { group, builder, samplingClientStep: iBatch, samplingTimeSeconds: (performance.now() - t0) / 1000 });
    });
    // A rollout that throws (fail-fast) must end the step instead of leaving it waiting on the queue.
    const failure = Promise.all(workers).then(() => null);
    const result = await Promise.race([trainStepStreaming(ctx, iBatch, queue, () => true, timer), failure.then(() => new Promise<never>(() => {}))]);
    if (result === null) throw new Error("streaming step ended without a result");
    samplingClient = result.samplingClient;
    Object.assign(metrics, result.metrics);
    writeTranscripts(
      ctx,
      iBatch,
      result.groups.map((g) => ({ group: g.group, tags: g.builder.loggingTags(), samplingClientStep: g.samplingClientStep })),
    );
    if (await finishIteration(ctx, iBatch, metrics, timer)) return { stoppedAt: iBatch + 1, bySignal: true };
  }
  return { stoppedAt: ctx.endBatch, bySignal: false };
}
