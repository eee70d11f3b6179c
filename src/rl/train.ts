// The RL training loop (docs/cookbook-parity.md#rl-config-and-modes): sync on-policy, sync with streaming minibatches, or async
// off-policy with a staleness cap (modes in ./loop/). Writes metrics.jsonl, checkpoints.jsonl and
// per-iteration transcripts into log_path, answers SIGUSR1 (checkpoint now) / SIGINT (save and
// stop), and resumes from the last resumable checkpoint — all through the training core.
import { benchmarkEvaluatorsFromConfig } from "../eval/inline.ts";
import type { Decode } from "../log/transcripts/types.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { EXITED, finalEvaluationDue, StepCadence, type LoopResult } from "../training/cadence.ts";
import { CheckpointManager } from "../training/checkpoints.ts";
import { openTrainingClient } from "../training/open.ts";
import { withTrainingRun, type TrainingContext, type TrainingRunOptions } from "../training/run.ts";
import { resolveRLConfig, type RLConfig } from "./config.ts";
import { RLTestSetEvaluator, type SamplingClientEvaluator } from "./evaluator.ts";
import { StepTimer } from "../log/timing.ts";
import { doAsyncTraining } from "./loop/async.ts";
import { runEvaluations, type Ctx } from "./loop/context.ts";
import { doSyncStreamingTraining } from "./loop/streaming.ts";
import { doSyncTraining } from "./loop/sync.ts";
import { RolloutErrorCounter, rolloutStrategyFromConfig } from "./rollouts.ts";
import type { AdvantageHook } from "./trainStep.ts";
import type { RLDatasetBuilder } from "./types.ts";

export interface RLMainOptions extends TrainingRunOptions {
  /** Evaluators run every eval_every iterations (a test split from the dataset builder is added). */
  evaluators?: SamplingClientEvaluator[];
  /** Token ids → text for transcripts of envs that do not attach messages. */
  decode?: Decode;
  /** Per-token advantage shaping applied to every minibatch in every mode (on-policy distillation). */
  advantageHook?: AdvantageHook;
}

export type RLRunResult = LoopResult;

/**
 * Runs RL training on an already parsed config (a recipe's config, which extends the loop's, is
 * passed as it is). The dataset builder supplies train (and optionally test) datasets.
 */
export async function main(config: RLConfig, datasetBuilder: RLDatasetBuilder, options: RLMainOptions = {}): Promise<RLRunResult> {
  const resolved = resolveRLConfig(config);
  return withTrainingRun(config, { defaultRecipeName: "rl", ...options }, (run) => runRL(resolved, datasetBuilder, run, options), EXITED);
}

async function runRL(config: Ctx["config"], datasetBuilder: RLDatasetBuilder, run: TrainingContext, options: RLMainOptions): Promise<RLRunResult> {
  const { train: dataset, test } = await datasetBuilder.build();
  const { trainingClient, startStep: startBatch } = await openTrainingClient(run, config, {
    rendererName: resolveRendererName(config.model_name, config.renderer_name),
  });
  const strategy = rolloutStrategyFromConfig(config.rollout_error_tolerance);
  const evaluators = [...(options.evaluators ?? [])];
  if (test !== undefined && test !== null) {
    evaluators.push(new RLTestSetEvaluator(test, config.max_tokens, { strategy, temperature: config.temperature, seed: config.seed }));
  }
  // Benchmarks named in the config (`benchmarks`, `infrequent_benchmarks`): scores as test/<benchmark>/<metric>.
  const named = await benchmarkEvaluatorsFromConfig(config, run.serviceClient);
  evaluators.push(...named.evaluators);
  const endBatch = config.max_steps !== null ? Math.min(config.max_steps, dataset.length) : dataset.length;
  run.log.info(`training on batches ${startBatch}..${endBatch - 1} of ${dataset.length}`);
  const reference = config.kl_reference_config ?? { base_model: config.model_name, load_checkpoint_path: null };
  const klReference =
    config.kl_penalty_coef > 0
      ? await run.serviceClient.createSamplingClient({
          baseModel: reference.base_model,
          ...(reference.load_checkpoint_path !== null ? { modelPath: reference.load_checkpoint_path } : {}),
        })
      : null;
  const checkpoints = new CheckpointManager(trainingClient, config, { logDir: run.logDir, restClient: run.serviceClient.createRestClient(), log: run.log });
  const ctx: Ctx = {
    config,
    logPath: run.logDir,
    trainingClient,
    dataset,
    evaluators,
    infrequentEvaluators: named.infrequent,
    metricsLogger: run.metrics,
    runLog: run.log,
    errorCounter: new RolloutErrorCounter(),
    strategy,
    klReference,
    advantageHook: options.advantageHook ?? null,
    checkpoints,
    cadence: new StepCadence(checkpoints, run.control, endBatch),
    decode: options.decode,
    startBatch,
    endBatch,
  };
  if (startBatch >= endBatch) {
    run.log.info("training was already complete; nothing to do");
    return { startStep: startBatch, endStep: endBatch, stoppedAt: startBatch, outcome: "already_complete" };
  }
  const mode = config.async_config !== null ? doAsyncTraining : config.stream_minibatch_config !== null ? doSyncStreamingTraining : doSyncTraining;
  const { stoppedAt, bySignal: stoppedBySignal } = await mode(ctx);
  // The weights after the last step, scored like every other evaluation row.
  if (!stoppedBySignal && finalEvaluationDue(config.eval_every, ctx.evaluators.length)) {
    const timer = new StepTimer();
    const sampler = await ctx.trainingClient.saveWeightsAndGetSamplingClient();
    const metrics = await timer.span("run_evals", () => runEvaluations(ctx, sampler, stoppedAt));
    ctx.metricsLogger.logStep(metrics, stoppedAt, timer);
  }
  if (!stoppedBySignal) {
    await ctx.checkpoints.saveFinal({ batch: stoppedAt });
    run.log.info("training completed");
  }
  return { startStep: startBatch, endStep: endBatch, stoppedAt, outcome: stoppedBySignal ? "stopped" : "completed" };
}
