// The RL training loop (docs/cookbook-parity.md#rl-config-and-modes): sync on-policy, sync with streaming minibatches, or async
// off-policy with a staleness cap (modes in ./loop/). Writes metrics.jsonl, checkpoints.jsonl and
// per-iteration transcripts into log_path, answers SIGUSR1 (checkpoint now) / SIGINT (save and
// stop), and resumes from the last resumable checkpoint — all through the training core.
import { benchmarkEvaluatorsFromConfig } from "../eval/inline.ts";
import type { Decode } from "../log/transcripts/types.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { CheckpointManager } from "../training/checkpoints.ts";
import { openTrainingClient } from "../training/open.ts";
import { withTrainingRun, type TrainingOutcome, type TrainingRun, type TrainingRunOptions } from "../training/run.ts";
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
  /**
   * Also run the evaluators on the final weights and log them at step endBatch (the loop's own
   * evaluations run before a step trains, so the last trained weights are otherwise never scored).
   */
  evalAtEnd?: boolean;
}

export interface RLRunResult {
  startBatch: number;
  endBatch: number;
  /** The first iteration not trained (endBatch unless stopped by SIGINT, or async mode ran out of fresh groups). */
  stoppedAt: number;
  stoppedBySignal: boolean;
  /** "exit" when the user chose exit at the log-dir prompt; nothing ran. */
  outcome: TrainingOutcome;
}

/**
 * Runs RL training on an already parsed config (a recipe's config, which extends the loop's, is
 * passed as it is). The dataset builder supplies train (and optionally test) datasets.
 */
export async function main(config: RLConfig, datasetBuilder: RLDatasetBuilder, options: RLMainOptions = {}): Promise<RLRunResult> {
  const resolved = resolveRLConfig(config);
  return withTrainingRun(
    config,
    { defaultRecipeName: "rl", ...options },
    (run) => runRL(resolved, datasetBuilder, run, options),
    { startBatch: 0, endBatch: 0, stoppedAt: 0, stoppedBySignal: false, outcome: "exit" },
  );
}

async function runRL(config: Ctx["config"], datasetBuilder: RLDatasetBuilder, run: TrainingRun, options: RLMainOptions): Promise<RLRunResult> {
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
    checkpoints: new CheckpointManager(trainingClient, config, { logDir: run.logDir, restClient: run.serviceClient.createRestClient(), log: run.log }),
    control: run.control,
    decode: options.decode,
    startBatch,
    endBatch,
  };
  if (startBatch >= endBatch) {
    run.log.info("training was already complete; nothing to do");
    return { startBatch, endBatch, stoppedAt: startBatch, stoppedBySignal: false, outcome: "already_complete" };
  }
  const mode = config.async_config !== null ? doAsyncTraining : config.stream_minibatch_config !== null ? doSyncStreamingTraining : doSyncTraining;
  const { stoppedAt, bySignal: stoppedBySignal } = await mode(ctx);
  if (!stoppedBySignal && options.evalAtEnd === true && ctx.evaluators.length > 0 && config.eval_every > 0) {
    const timer = new StepTimer();
    const sampler = await ctx.trainingClient.saveWeightsAndGetSamplingClient();
    const metrics = await timer.span("run_evals", () => runEvaluations(ctx, sampler, stoppedAt));
    ctx.metricsLogger.logMetrics({ ...metrics, ...timer.metrics() }, stoppedAt);
  }
  if (!stoppedBySignal) {
    await ctx.checkpoints.saveFinal({ batch: stoppedAt });
    run.log.info("training completed");
  }
  return { startBatch, endBatch, stoppedAt, stoppedBySignal, outcome: stoppedBySignal ? "stopped" : "completed" };
}
