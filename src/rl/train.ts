// The RL training loop (spec §4.4): sync on-policy, sync with streaming minibatches, or async
// off-policy with a staleness cap (modes in ./loop/). Writes metrics.jsonl, checkpoints.jsonl and
// per-iteration transcripts into log_path, answers SIGUSR1 (checkpoint now) / SIGINT (save and
// stop), and resumes from the last resumable checkpoint.
import type { Writable } from "../log/metrics.ts";
import type { Decode } from "../log/transcripts/types.ts";
import { getLastCheckpoint } from "../runs/checkpoints.ts";
import { truncateMetricsFrom } from "../runs/resume.ts";
import type { RunControl } from "../runs/control.ts";
import { withRun, type RunSession } from "../runs/session.ts";
import type { ServiceClient, TrainingClient } from "../tinker/clients.ts";
import { CheckpointManager } from "./checkpoints.ts";
import { RLConfigSchema, validateRLConfig, type RLConfig, type RLConfigInput } from "./config.ts";
import { RLTestSetEvaluator, type SamplingClientEvaluator } from "./evaluator.ts";
import { doAsyncTraining } from "./loop/async.ts";
import type { Ctx } from "./loop/context.ts";
import { doSyncStreamingTraining } from "./loop/streaming.ts";
import { doSyncTraining } from "./loop/sync.ts";
import { RolloutErrorCounter, rolloutStrategyFromConfig } from "./rollouts.ts";
import type { RLDatasetBuilder } from "./types.ts";

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
    // Steps a crashed run logged after its last checkpoint are trained again; drop their rows so
    // metrics.jsonl holds each step once.
    const dropped = truncateMetricsFrom(logPath, startBatch);
    if (dropped > 0) runLog.info(`dropped ${dropped} metrics rows from step ${startBatch} on (they will be logged again)`);
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
