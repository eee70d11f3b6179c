// What every training mode shares: the loop context built by main, sampler refresh and
// checkpoint cadence, the non-streaming train step, transcripts, and the per-iteration epilogue
// (metrics record, SIGUSR1/SIGINT handling).
import type { MetricsLogger } from "../../log/metrics.ts";
import type { RunLog } from "../../log/runLog.ts";
import type { StepTimer } from "../../log/timing.ts";
import { iterationHtmlPath, writeRolloutHtml } from "../../log/transcripts/html.ts";
import { iterationDir, writeRolloutSummaries } from "../../log/transcripts/rolloutSummaries.ts";
import { trajectoryText, type Decode, type SummaryGroup } from "../../log/transcripts/types.ts";
import { checkpointName } from "../../runs/checkpoints.ts";
import { mixSeed } from "../../random/seeds.ts";
import type { SamplingClient, TrainingClient } from "../../tinker/clients.ts";
import type { Datum } from "../../tinker/types.ts";
import { saveAtBoundary, type StepCadence } from "../../training/cadence.ts";
import type { CheckpointManager } from "../../training/checkpoints.ts";
import { adamParams } from "../../training/config.ts";
import type { ResolvedRLConfig } from "../config.ts";
import { computeAdvantages } from "../dataProcessing.ts";
import type { SamplingClientEvaluator } from "../evaluator.ts";
import { computeKlSampleTrain, computePostKl } from "../metrics.ts";
import { doGroupRolloutAndFilterConstantReward, type RolloutErrorCounter, type RolloutStrategy } from "../rollouts.ts";
import { prepareMinibatch, trainStep, type AdvantageHook } from "../trainStep.ts";
import type { EnvGroupBuilder, RLDataset, TrajectoryGroup } from "../types.ts";

/** What every mode needs; built once by main. */
export interface Ctx {
  config: ResolvedRLConfig;
  logPath: string;
  trainingClient: TrainingClient;
  dataset: RLDataset;
  evaluators: SamplingClientEvaluator[];
  /** Run every infrequent_eval_every iterations. */
  infrequentEvaluators?: SamplingClientEvaluator[];
  metricsLogger: MetricsLogger;
  runLog: RunLog;
  errorCounter: RolloutErrorCounter;
  strategy: RolloutStrategy;
  klReference: SamplingClient | null;
  advantageHook: AdvantageHook | null;
  checkpoints: CheckpointManager;
  /** When to save and stop between iterations. */
  cadence: StepCadence;
  decode?: Decode;
  startBatch: number;
  endBatch: number;
}

export interface TrainOutcome {
  samplingClient: SamplingClient;
  metrics: Record<string, number>;
}

export function baseMetrics(ctx: Ctx, iBatch: number): Record<string, number> {
  return {
    "progress/batch": iBatch,
    "optim/lr": ctx.config.learning_rate,
    "progress/done_frac": (iBatch + 1) / ctx.endBatch,
  };
}

function frequentDue(ctx: Ctx, step: number): boolean {
  return ctx.evaluators.length > 0 && ctx.config.eval_every > 0 && step % ctx.config.eval_every === 0;
}

function infrequentDue(ctx: Ctx, step: number): boolean {
  return (ctx.infrequentEvaluators ?? []).length > 0 && ctx.config.infrequent_eval_every > 0 && step % ctx.config.infrequent_eval_every === 0;
}

export function evalDue(ctx: Ctx, step: number): boolean {
  return frequentDue(ctx, step) || infrequentDue(ctx, step);
}

export async function runEvaluations(ctx: Ctx, samplingClient: SamplingClient, step: number): Promise<Record<string, number>> {
  const context = {
    logPath: ctx.logPath,
    iteration: step,
    numGroupsToLog: ctx.config.num_groups_to_log,
    exportRollouts: ctx.config.rollout_json_export,
    decode: ctx.decode,
  };
  // The frequent evaluators run unless only the infrequent ones are due (callers may also force a run).
  const infrequent = infrequentDue(ctx, step);
  const due = [...(frequentDue(ctx, step) || !infrequent ? ctx.evaluators : []), ...(infrequent ? (ctx.infrequentEvaluators ?? []) : [])];
  const results = await Promise.all(due.map((ev) => ev.evaluate(samplingClient, context)));
  return Object.assign({}, ...results) as Record<string, number>;
}

/**
 * A fresh sampler on the current weights: at a periodic checkpoint step the saved sampler
 * weights (state + sampler, with TTL), otherwise an ephemeral snapshot (also after the last
 * step, where the final checkpoint follows).
 */
export async function samplerAfterStep(ctx: Ctx, step: number, timer: StepTimer): Promise<SamplingClient> {
  if (step > ctx.startBatch && ctx.cadence.periodicAt(step)) {
    const paths = await timer.span("save_checkpoint", () => ctx.checkpoints.save(step, { batch: step }));
    if (paths.sampler_path === undefined) throw new Error(`checkpoint ${checkpointName(step)} saved no sampler weights`);
    return ctx.trainingClient.createSamplingClient(paths.sampler_path);
  }
  return timer.span("save_checkpoint", () => ctx.trainingClient.saveWeightsAndGetSamplingClient());
}

export async function fullBatchMetricsAndSampler(
  ctx: Ctx,
  nextStep: number,
  dataD: Datum[],
  trainingLogprobsD: number[][],
  timer: StepTimer,
): Promise<TrainOutcome> {
  const metrics: Record<string, number> = {};
  Object.assign(
    metrics,
    timer.spanSync("compute_kl_sample_train", () => computeKlSampleTrain(dataD, trainingLogprobsD)),
  );
  const samplingClient = await samplerAfterStep(ctx, nextStep, timer);
  if (ctx.config.compute_post_kl && dataD.length > 0) {
    Object.assign(metrics, await timer.span("compute_post_kl", () => computePostKl(dataD, samplingClient)));
  }
  return { samplingClient, metrics };
}

export function klArgs(ctx: Ctx) {
  return { referenceClient: ctx.klReference, coef: ctx.config.kl_penalty_coef, discount: ctx.config.kl_discount_factor };
}

/** Prepare the whole batch, train it in num_substeps steps, and take a new sampler. */
export async function doTrainStepAndGetSampler(
  ctx: Ctx,
  iBatch: number,
  groupsP: TrajectoryGroup[],
  taglistP: string[][],
  timer: StepTimer,
): Promise<TrainOutcome> {
  const prepared = await timer.span("prepare_minibatch", () =>
    prepareMinibatch(groupsP, taglistP, klArgs(ctx), ctx.advantageHook, { iteration: iBatch, logPath: ctx.logPath, decode: ctx.decode }),
  );
  const metrics: Record<string, number> = { ...prepared.metrics };
  const logprobsD = await timer.span("train_step", () =>
    trainStep(
      prepared.dataD,
      ctx.trainingClient,
      {
        adam: adamParams(ctx.config),
        numSubsteps: ctx.config.num_substeps,
        lossFn: ctx.config.loss_fn,
        lossFnConfig: ctx.config.loss_fn_config,
      },
      metrics,
    ),
  );
  const out = await fullBatchMetricsAndSampler(ctx, iBatch + 1, prepared.dataD, logprobsD, timer);
  Object.assign(metrics, out.metrics);
  return { samplingClient: out.samplingClient, metrics };
}

/** The best and worst trajectory of the first group, as text, into logs.log (what print_group shows). */
function logRepresentatives(ctx: Ctx, iBatch: number, group: TrajectoryGroup, advantagesG: number[]): void {
  const rewards = group.getTotalRewards();
  if (rewards.length === 0) return;
  const best = rewards.indexOf(Math.max(...rewards));
  const worst = rewards.indexOf(Math.min(...rewards));
  for (const i of best === worst ? [best] : [best, worst]) {
    const { response } = trajectoryText(group.trajectoriesG[i], ctx.decode);
    const text =
      response === null ? `(${group.trajectoriesG[i].transitions.reduce((n, t) => n + t.ac.tokens.length, 0)} tokens)` : JSON.stringify(response.slice(0, 400));
    ctx.runLog.info(`iteration ${iBatch} group 0 trajectory ${i}: reward ${rewards[i].toFixed(3)}, advantage ${advantagesG[i].toFixed(3)}: ${text}`);
  }
}

/** train_rollout_summaries.jsonl and train.html for one iteration. */
export function writeTranscripts(ctx: Ctx, iBatch: number, groups: { group: TrajectoryGroup; tags: string[]; samplingClientStep: number }[]): void {
  if (groups.length === 0) return;
  const advantagesP = computeAdvantages(groups.map((g) => g.group));
  const summary: SummaryGroup[] = groups.map((g, i) => ({
    trajectoryGroup: g.group,
    tags: g.tags,
    samplingClientStep: g.samplingClientStep,
    advantagesG: advantagesP[i],
  }));
  logRepresentatives(ctx, iBatch, groups[0].group, advantagesP[0]);
  if (ctx.config.rollout_json_export) {
    writeRolloutSummaries({ logPath: ctx.logPath, baseName: "train", split: "train", iteration: iBatch, groups: summary, decode: ctx.decode });
  }
  if (ctx.config.num_groups_to_log > 0) {
    writeRolloutHtml(iterationHtmlPath(iterationDir(ctx.logPath, iBatch), "train"), {
      title: `RL Iteration ${iBatch}`,
      groups: summary,
      maxGroups: ctx.config.num_groups_to_log,
      decode: ctx.decode,
    });
  }
}

export interface ModeResult {
  /** The first iteration not trained. */
  stoppedAt: number;
  bySignal: boolean;
}

/** Makes the boundary's save, logs the step, and says whether the loop must stop (SIGINT). */
export async function finishIteration(ctx: Ctx, iBatch: number, metrics: Record<string, number>, timer: StepTimer): Promise<boolean> {
  const boundary = ctx.cadence.decide(iBatch + 1);
  // A periodic checkpoint was already saved with the sampler the next iteration samples with.
  await saveAtBoundary(ctx.cadence, boundary, { batch: boundary.next }, timer, ctx.runLog, { skipPeriodic: true });
  Object.assign(metrics, ctx.errorCounter.getMetrics());
  ctx.metricsLogger.logStep(metrics, iBatch, timer);
  if (boundary.stop) ctx.runLog.info(`stopping after iteration ${iBatch} (SIGINT)`);
  return boundary.stop;
}

/** Where a group sits in the data stream: its batch, its index in the batch, and how often it was requeued. */
export interface GroupKey {
  batch: number;
  index: number;
  attempt?: number;
}

export type Rollout = (samplingClient: SamplingClient, builder: EnvGroupBuilder, key: GroupKey) => Promise<TrajectoryGroup | null>;

/** The run's seed and the group's place in the data fix its samples, so a rerun samples the same tokens. */
export function groupSeed(runSeed: number, key: GroupKey): number {
  return mixSeed(runSeed, key.batch, key.index, key.attempt ?? 0);
}

export function rolloutFn(ctx: Ctx, removeConstant: boolean): Rollout {
  return (samplingClient, builder, key) =>
    doGroupRolloutAndFilterConstantReward(samplingClient, builder, {
      maxTokens: ctx.config.max_tokens,
      temperature: ctx.config.temperature,
      seed: groupSeed(ctx.config.seed, key),
      removeConstantRewardGroups: removeConstant,
      strategy: ctx.strategy,
      errorCounter: ctx.errorCounter,
      onSkip: (err) => ctx.runLog.warn(`rollout group skipped: ${err instanceof Error ? err.message : String(err)}`),
    });
}
