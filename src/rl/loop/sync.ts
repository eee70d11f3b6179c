// Sync on-policy mode: every iteration samples its whole batch with the current weights, then trains.
import { StepTimer } from "../../log/timing.ts";
import { removeConstantRewardGroups } from "../dataProcessing.ts";
import { computeTrajectoryMetrics } from "../trajectoryMetrics.ts";
import type { TrajectoryGroup } from "../types.ts";
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
  type ModeResult,
} from "./context.ts";

export async function doSyncTraining(ctx: Ctx): Promise<ModeResult> {
  const rollout = rolloutFn(ctx, false);
  let samplingClient = await samplerAfterStep(ctx, ctx.startBatch, new StepTimer());
  for (let iBatch = ctx.startBatch; iBatch < ctx.endBatch; iBatch++) {
    const timer = new StepTimer();
    const metrics = baseMetrics(ctx, iBatch);
    if (evalDue(ctx, iBatch)) Object.assign(metrics, await timer.span("run_evals", () => runEvaluations(ctx, samplingClient, iBatch)));
    const builders = ctx.dataset.getBatch(iBatch);
    const sampler = samplingClient;
    const results = await timer.span("sampling", () => Promise.all(builders.map((b, index) => rollout(sampler, b, { batch: iBatch, index }))));
    let kept: { group: TrajectoryGroup; tags: string[]; samplingClientStep: number }[] = [];
    results.forEach((group, i) => {
      if (group !== null) kept.push({ group, tags: builders[i].loggingTags(), samplingClientStep: iBatch });
    });
    if (kept.length === 0) {
      ctx.runLog.warn(`batch ${iBatch}: every group failed or was filtered; skipping the batch`);
    } else {
      writeTranscripts(ctx, iBatch, kept);
      const sampled = kept;
      if (ctx.config.remove_constant_reward_groups) {
        const keptGroups = new Set(removeConstantRewardGroups(kept.map((k) => k.group)));
        kept = kept.filter((k) => keptGroups.has(k.group));
      }
      const out = await doTrainStepAndGetSampler(
        ctx,
        iBatch,
        kept.map((k) => k.group),
        kept.map((k) => k.tags),
        timer,
      );
      samplingClient = out.samplingClient;
      Object.assign(metrics, out.metrics);
      if (sampled.length !== kept.length) {
        // Report what was sampled, not what survived the filter: otherwise reward and
        // by_group/frac_all_* would describe only the mixed groups.
        Object.assign(
          metrics,
          computeTrajectoryMetrics(
            sampled.map((k) => k.group),
            sampled.map((k) => k.tags),
          ),
        );
      }
    }
    if (await finishIteration(ctx, iBatch, metrics, timer)) return { stoppedAt: iBatch + 1, bySignal: true };
  }
  return { stoppedAt: ctx.endBatch, bySignal: false };
}
