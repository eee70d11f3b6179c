// The RL training loop (spec §4.4): sync on-policy, sync with streaming minibatches, or async
// off-policy with a staleness cap. Writes metrics.jsonl, checkpoints.jsonl and per-iteration
// transcripts into log_path, answers SIGUSR1 (checkpoint now) / SIGINT (save and stop), and
// resumes from the last resumable checkpoint.
import { performance } from "node:perf_hooks";
import type { MetricsLogger, Writable } from "../log/metrics.ts";
import type { RunLog } from "../log/run-log.ts";
import { StepTimer } from "../log/timing.ts";
import { iterationHtmlPath, writeRolloutHtml } from "../log/transcripts/html.ts";
import { iterationDir, writeRolloutSummaries } from "../log/transcripts/rolloutSummaries.ts";
import type { Decode, SummaryGroup } from "../log/transcripts/types.ts";
import { checkpointName, getLastCheckpoint } from "../runs/checkpoints.ts";
import type { RunControl } from "../runs/control.ts";
import { withRun, type RunSession } from "../runs/session.ts";
import type { SamplingClient, ServiceClient, TinkerFuture, TrainingClient } from "../tinker/clients.ts";
import type { Datum, ForwardBackwardOutput } from "../tinker/types.ts";
import { AsyncQueue } from "./asyncQueue.ts";
import { CheckpointManager, saveCheckpoint } from "./checkpoints.ts";
import { RLConfigSchema, validateRLConfig, type RLConfig, type RLConfigInput } from "./config.ts";
import { computeAdvantages, removeConstantRewardGroups, removeMask } from "./dataProcessing.ts";
import { RLTestSetEvaluator, type SamplingClientEvaluator } from "./evaluator.ts";
import { computeKlSampleTrain, computePostKl, computeSamplingClientMetrics } from "./metrics.ts";
import { OffPolicyBatcher, type StampedGroup } from "./offPolicy.ts";
import { RolloutErrorCounter, doGroupRolloutAndFilterConstantReward, rolloutStrategyFromConfig, type RolloutStrategy } from "./rollouts.ts";
import { computeTrajectoryMetrics } from "./trajectoryMetrics.ts";
import { prepareMinibatch, rlAdamParams, trainStep, trainingLogprobsFromOutput } from "./trainStep.ts";
import type { EnvGroupBuilder, RLDataset, RLDatasetBuilder, TrajectoryGroup } from "./types.ts";

export interface RLMainOptions {
  /** Evaluators run every eval_every iterations (a test split from the dataset builder is added). */
  evaluators?: SamplingClientEvaluator[];
  /** Token ids → text for transcripts of envs that do not attach messages. */
  decode?: Decode;
  /** Where the per-step metrics table goes; false for none. Default stdout. Ignored with `session`. */
  console?: Writable | false;
  /** A run session the caller already started (log dir checked, run.json, signals); main then only trains. */
  session?: RunSession;
  /** Polled instead of the session's signal handlers (tests, or callers with their own control). */
  runControl?: RunControl;
  argv?: readonly string[];
  commandLine?: string;
}

export interface RLRunResult {
  startBatch: number;
  endBatch: number;
  /** The first iteration not trained (endBatch unless stopped by SIGINT, or async mode ran out of fresh groups). */
  stoppedAt: number;
  stoppedBySignal: boolean;
  /** "exit" when the user chose exit at the log-dir prompt; nothing ran. */
  outcome: "completed" | "already_complete" | "stopped" | "exit";
}

/** What every mode needs; built once by main. */
interface Ctx {
  config: RLConfig;
  logPath: string;
  trainingClient: TrainingClient;
  dataset: RLDataset;
  evaluators: SamplingClientEvaluator[];
  metricsLogger: MetricsLogger;
  runLog: RunLog;
  errorCounter: RolloutErrorCounter;
  strategy: RolloutStrategy;
  klReference: SamplingClient | null;
  checkpoints: CheckpointManager;
  control: RunControl;
  decode?: Decode;
  startBatch: number;
  endBatch: number;
}

interface TrainOutcome {
  samplingClient: SamplingClient;
  metrics: Record<string, number>;
}

function baseMetrics(ctx: Ctx, iBatch: number): Record<string, number> {
  return {
    "progress/batch": iBatch,
    "optim/lr": ctx.config.learning_rate,
    "progress/done_frac": (iBatch + 1) / ctx.endBatch,
  };
}

function evalDue(ctx: Ctx, step: number): boolean {
  return ctx.evaluators.length > 0 && ctx.config.eval_every > 0 && step % ctx.config.eval_every === 0;
}

async function runEvaluations(ctx: Ctx, samplingClient: SamplingClient, step: number): Promise<Record<string, number>> {
  const context = {
    logPath: ctx.logPath,
    iteration: step,
    numGroupsToLog: ctx.config.num_groups_to_log,
    exportRollouts: ctx.config.rollout_json_export,
    decode: ctx.decode,
  };
  const results = await Promise.all(ctx.evaluators.map((ev) => ev.evaluate(samplingClient, context)));
  return Object.assign({}, ...results) as Record<string, number>;
}

/**
 * A fresh sampler on the current weights: at a periodic checkpoint step the saved sampler
 * weights (state + sampler, with TTL), otherwise an ephemeral snapshot.
 */
async function samplerAfterStep(ctx: Ctx, step: number, timer: StepTimer): Promise<SamplingClient> {
  if (step > ctx.startBatch && ctx.checkpoints.shouldSavePeriodic(step)) {
    const paths = await timer.span("save_checkpoint", () => ctx.checkpoints.savePeriodic(step, { batch: step }));
    if (paths.sampler_path === undefined) throw new Error(`checkpoint ${checkpointName(step)} saved no sampler weights`);
    return ctx.trainingClient.createSamplingClient(paths.sampler_path);
  }
  return timer.span("save_checkpoint", () => ctx.trainingClient.saveWeightsAndGetSamplingClient());
}

async function fullBatchMetricsAndSampler(
  ctx: Ctx,
  nextStep: number,
  dataD: Datum[],
  trainingLogprobsD: number[][],
  timer: StepTimer,
): Promise<TrainOutcome> {
  const metrics: Record<string, number> = {};
  Object.assign(metrics, timer.spanSync("compute_kl_sample_train", () => computeKlSampleTrain(dataD, trainingLogprobsD)));
  const samplingClient = await samplerAfterStep(ctx, nextStep, timer);
  if (ctx.config.compute_post_kl && dataD.length > 0) {
    Object.assign(metrics, await timer.span("compute_post_kl", () => computePostKl(dataD, samplingClient)));
  }
  return { samplingClient, metrics };
}

function klArgs(ctx: Ctx) {
  return { referenceClient: ctx.klReference, coef: ctx.config.kl_penalty_coef, discount: ctx.config.kl_discount_factor };
}

/** Prepare the whole batch, train it in num_substeps steps, and take a new sampler. */
async function doTrainStepAndGetSampler(
  ctx: Ctx,
  iBatch: number,
  groupsP: TrajectoryGroup[],
  taglistP: string[][],
  timer: StepTimer,
): Promise<TrainOutcome> {
  const prepared = await timer.span("prepare_minibatch", () => prepareMinibatch(groupsP, taglistP, klArgs(ctx)));
  const metrics: Record<string, number> = { ...prepared.metrics };
  const logprobsD = await timer.span("train_step", () =>
    trainStep(
      prepared.dataD,
      ctx.trainingClient,
      {
        learningRate: ctx.config.learning_rate,
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

/** train_rollout_summaries.jsonl and train.html for one iteration. */
function writeTranscripts(ctx: Ctx, iBatch: number, groups: { group: TrajectoryGroup; tags: string[]; samplingClientStep: number }[]): void {
  if (groups.length === 0) return;
  const advantagesP = computeAdvantages(groups.map((g) => g.group));
  const summary: SummaryGroup[] = groups.map((g, i) => ({
    trajectoryGroup: g.group,
    tags: g.tags,
    samplingClientStep: g.samplingClientStep,
    advantagesG: advantagesP[i],
  }));
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

interface ModeResult {
  /** The first iteration not trained. */
  stoppedAt: number;
  bySignal: boolean;
}

/** Logs the step, then honours SIGUSR1/SIGINT. Returns true when the loop must stop. */
async function finishIteration(ctx: Ctx, iBatch: number, metrics: Record<string, number>, timer: StepTimer): Promise<boolean> {
  await ctx.checkpoints.maybeSaveRolling(iBatch + 1, { batch: iBatch + 1 });
  Object.assign(metrics, ctx.errorCounter.getMetrics(), timer.metrics());
  ctx.metricsLogger.logMetrics(metrics, iBatch);
  const control = ctx.control;
  const next = iBatch + 1;
  if (control.stopRequested || control.consumeCheckpointRequest()) {
    // Resuming from this record restarts at the next batch; a periodic save this step already covers it.
    if (!ctx.checkpoints.shouldSavePeriodic(next)) {
      await saveCheckpoint(ctx.trainingClient, {
        logPath: ctx.logPath,
        name: checkpointName(next),
        loopState: { batch: next },
        kind: "both",
        ttlSeconds: ctx.config.ttl_seconds,
      });
    }
    ctx.runLog.info(`checkpoint ${checkpointName(next)} saved on request`);
  }
  if (control.stopRequested) {
    ctx.runLog.info(`stopping after iteration ${iBatch} (SIGINT)`);
    return true;
  }
  return false;
}

type Rollout = (samplingClient: SamplingClient, builder: EnvGroupBuilder) => Promise<TrajectoryGroup | null>;

function rolloutFn(ctx: Ctx, removeConstant: boolean): Rollout {
  return (samplingClient, builder) =>
    doGroupRolloutAndFilterConstantReward(samplingClient, builder, {
      maxTokens: ctx.config.max_tokens,
      temperature: ctx.config.temperature,
      removeConstantRewardGroups: removeConstant,
      strategy: ctx.strategy,
      errorCounter: ctx.errorCounter,
      onSkip: (err) => ctx.runLog.warn(`rollout group skipped: ${err instanceof Error ? err.message : String(err)}`),
    });
}

async function doSyncTraining(ctx: Ctx): Promise<ModeResult> {
  const rollout = rolloutFn(ctx, false);
  let samplingClient = await samplerAfterStep(ctx, ctx.startBatch, new StepTimer());
  for (let iBatch = ctx.startBatch; iBatch < ctx.endBatch; iBatch++) {
    const timer = new StepTimer();
    const metrics = baseMetrics(ctx, iBatch);
    if (evalDue(ctx, iBatch)) Object.assign(metrics, await timer.span("run_evals", () => runEvaluations(ctx, samplingClient, iBatch)));
    const builders = ctx.dataset.getBatch(iBatch);
    const sampler = samplingClient;
    const results = await timer.span("sampling", () => Promise.all(builders.map((b) => rollout(sampler, b))));
    let kept: { group: TrajectoryGroup; tags: string[]; samplingClientStep: number }[] = [];
    results.forEach((group, i) => {
      if (group !== null) kept.push({ group, tags: builders[i].loggingTags(), samplingClientStep: iBatch });
    });
    if (kept.length === 0) {
      ctx.runLog.warn(`batch ${iBatch}: every group failed or was filtered; skipping the batch`);
    } else {
      writeTranscripts(ctx, iBatch, kept);
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
    }
    if (await finishIteration(ctx, iBatch, metrics, timer)) return { stoppedAt: iBatch + 1, bySignal: true };
  }
  return { stoppedAt: ctx.endBatch, bySignal: false };
}

const SHUTDOWN = Symbol("shutdown");
type GroupItem = StampedGroup | null | typeof SHUTDOWN;

/**
 * Consumes groups as they arrive: every `groups_per_batch / num_substeps / num_minibatches`
 * groups a forward_backward is enqueued; one optim_step per substep follows its minibatches.
 * `accept` screens each item (null = a dropped group). Returns null on shutdown.
 */
async function trainStepStreaming(
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
  const adam = rlAdamParams(ctx.config.learning_rate);
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

async function doSyncStreamingTraining(ctx: Ctx): Promise<ModeResult> {
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
    const workers = builders.map(async (builder) => {
      const t0 = performance.now();
      const group = await rollout(sampler, builder);
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

async function doAsyncTraining(ctx: Ctx): Promise<ModeResult> {
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

  const dataloader = (async () => {
    for (let i = ctx.startBatch; i < ctx.endBatch && !trainingDone; i++) {
      for (const builder of ctx.dataset.getBatch(i)) await builderQueue.put(builder);
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
        const group = await rollout(client, builder);
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
    requeue: (builder) => void builderQueue.put(builder),
    dataExhausted: () => dataExhausted,
  });

  let bySignal = false;
  const training = (async (): Promise<number> => {
    let iBatch = ctx.startBatch;
    // One timer per training step, spanning the wait for its groups too.
    let timer = new StepTimer();
    while (iBatch < ctx.endBatch) {
      const metrics: Record<string, number> = { "training_client/step": iBatch, "optim/lr": ctx.config.learning_rate, "progress/done_frac": (iBatch + 1) / ctx.endBatch };
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

/**
 * Runs RL training. `configInput` is validated against RLConfigSchema (defaults filled); the
 * dataset builder supplies train (and optionally test) datasets; the service client is the
 * embedded engine or a remote server. Without `options.session` the run directory is set up
 * here (log-dir policy, run.json, config.json, logs.log, signal handling) and its final status
 * recorded; a caller that already holds a RunSession passes it instead.
 */
export async function main(
  configInput: RLConfigInput,
  datasetBuilder: RLDatasetBuilder,
  serviceClient: ServiceClient,
  options: RLMainOptions = {},
): Promise<RLRunResult> {
  const config = RLConfigSchema.parse(configInput);
  validateRLConfig(config);
  if (options.session !== undefined) return runInSession(config, datasetBuilder, serviceClient, options.session, options);
  let result: RLRunResult = { startBatch: 0, endBatch: 0, stoppedAt: 0, stoppedBySignal: false, outcome: "exit" };
  await withRun(
    {
      logPath: config.log_path,
      recipe: config.recipe_name,
      config,
      behavior: config.behavior_if_log_dir_exists,
      engine: serviceClient.engineKind,
      ...(options.argv !== undefined ? { argv: options.argv } : {}),
      ...(options.commandLine !== undefined ? { commandLine: options.commandLine } : {}),
      console: options.console ?? process.stdout,
    },
    async (session) => {
      result = await runInSession(config, datasetBuilder, serviceClient, session, options);
      return result.stoppedBySignal ? "stopped" : "completed";
    },
  );
  return result;
}

async function runInSession(
  config: RLConfig,
  datasetBuilder: RLDatasetBuilder,
  serviceClient: ServiceClient,
  session: RunSession,
  options: RLMainOptions,
): Promise<RLRunResult> {
  const logPath = session.logDir;
  const runLog = session.log;
  const resume = getLastCheckpoint(logPath, "state_path");
  const startBatch = resume !== undefined && typeof resume.batch === "number" ? resume.batch : 0;
  const userMetadata: Record<string, string> = { recipe_name: config.recipe_name };
  if (config.renderer_name !== null) userMetadata.renderer_name = config.renderer_name;
  let trainingClient: TrainingClient;
  if (resume?.state_path !== undefined) {
    trainingClient = await serviceClient.createTrainingClientFromStateWithOptimizer(resume.state_path, { userMetadata });
    runLog.info(`resumed from ${resume.state_path} at batch ${startBatch}`);
  } else if (config.load_checkpoint_path !== null) {
    trainingClient = await serviceClient.createTrainingClientFromState(config.load_checkpoint_path, { userMetadata });
    runLog.info(`loaded weights from ${config.load_checkpoint_path}`);
  } else {
    trainingClient = await serviceClient.createLoraTrainingClient(config.model_name, { rank: config.lora_rank, seed: config.seed, userMetadata });
  }

  const { train: dataset, test } = await datasetBuilder.build();
  const strategy = rolloutStrategyFromConfig(config.rollout_error_tolerance);
  const evaluators = [...(options.evaluators ?? [])];
  if (test !== undefined && test !== null) {
    evaluators.push(new RLTestSetEvaluator(test, config.max_tokens, { strategy, temperature: config.temperature }));
  }
  const endBatch = config.max_steps !== null ? Math.min(config.max_steps, dataset.length) : dataset.length;
  runLog.info(`training on batches ${startBatch}..${endBatch - 1} of ${dataset.length}`);
  const klReference =
    config.kl_penalty_coef > 0 && config.kl_reference_config !== null
      ? await serviceClient.createSamplingClient({
          baseModel: config.kl_reference_config.base_model,
          ...(config.kl_reference_config.load_checkpoint_path !== null ? { modelPath: config.kl_reference_config.load_checkpoint_path } : {}),
        })
      : null;
  const checkpoints = new CheckpointManager(trainingClient, {
    logPath,
    saveEvery: config.save_every,
    ttlSeconds: config.ttl_seconds,
    rollingSaveEvery: config.rolling_save_every,
    rollingTtlSeconds: config.rolling_ttl_seconds,
    restClient: serviceClient.createRestClient(),
    log: (m) => runLog.warn(m),
  });
  const ctx: Ctx = {
    config,
    logPath,
    trainingClient,
    dataset,
    evaluators,
    metricsLogger: session.metrics,
    runLog,
    errorCounter: new RolloutErrorCounter(),
    strategy,
    klReference,
    checkpoints,
    control: options.runControl ?? session.control,
    decode: options.decode,
    startBatch,
    endBatch,
  };
  if (startBatch >= endBatch) {
    runLog.info("training was already complete; nothing to do");
    return { startBatch, endBatch, stoppedAt: startBatch, stoppedBySignal: false, outcome: "already_complete" };
  }
  const mode = config.async_config !== null ? doAsyncTraining : config.stream_minibatch_config !== null ? doSyncStreamingTraining : doSyncTraining;
  const { stoppedAt, bySignal: stoppedBySignal } = await mode(ctx);
  if (!stoppedBySignal) {
    await checkpoints.saveFinal({ batch: stoppedAt });
    runLog.info("training completed");
  }
  return { startBatch, endBatch, stoppedAt, stoppedBySignal, outcome: stoppedBySignal ? "stopped" : "completed" };
}
