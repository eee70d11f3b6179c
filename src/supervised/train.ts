// The pipelined supervised fine-tuning loop (spec §3.2). Each step's forward_backward and
// optim_step are queued before the previous step's results are awaited (submit_ahead deep), so
// the engine never idles while this process computes metrics. Evaluators run just before a step
// is queued, so they see the weights of the step before.
//
// Checkpoints are queued right after the optim_step of the last step they contain, before the
// next step is queued, and record the *next* (epoch, batch) to train: a resumed run continues
// exactly there, with no batch trained twice and none skipped. (The Python loop records the batch
// it just trained and saves after the next one was already queued; see spec §10.8.)
import { performance } from "node:perf_hooks";
import { colorizeExample, exampleSegments } from "../display.ts";
import { appendTrainingExample } from "../runs/transcripts.ts";
import { buildEvaluators, runEvaluators, type EvalMetrics, type Evaluator, type EvaluatorBuilder } from "../eval/evaluators.ts";
import { computeScheduleLrMultiplier } from "../hyperparams.ts";
import type { Writable } from "../log/metrics.ts";
import { StepTimer } from "../log/timing.ts";
import { appendCheckpoint, checkpointName, getLastCheckpoint, type CheckpointRecord } from "../runs/checkpoints.ts";
import type { RunControl } from "../runs/control.ts";
import { withRun, type RunSession } from "../runs/session.ts";
import { createServiceClient } from "../service.ts";
import type { ServiceClient, TinkerFuture, TrainingClient } from "../tinker/clients.ts";
import { modelInputLength } from "../tinker/modelInput.ts";
import type { Datum, ForwardBackwardOutput, OptimStepResponse, SaveWeightsResponse, TensorData } from "../tinker/types.ts";
import { getTokenizer } from "../tokenizers/index.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { computeBpb, computeMeanNll } from "./common.ts";
import { SupervisedConfigSchema, type SupervisedConfig, type SupervisedConfigInput } from "./config.ts";
import { NLLEvaluator } from "./nllEvaluator.ts";
import { positionOf, resumeStep, truncateMetricsFrom, type LoopPosition } from "../runs/resume.ts";
import type { SupervisedDataset, SupervisedDatasetBuilder } from "./types.ts";

export { SupervisedConfigSchema, type SupervisedConfig, type SupervisedConfigInput } from "./config.ts";

export interface SupervisedMainOptions {
  /** Run every eval_every steps (an NLL evaluator on the builder's test split is added). */
  evaluatorBuilders?: EvaluatorBuilder[];
  infrequentEvaluatorBuilders?: EvaluatorBuilder[];
  /** Default: createServiceClient with config.base_url (closed at the end). */
  serviceClient?: ServiceClient;
  /** For train_mean_bpb, test/bpb and logged examples (default: getTokenizer(model_name), skipped if unavailable). */
  tokenizer?: Tokenizer | null;
  /** A session the caller already started; main then only trains. */
  session?: RunSession;
  /** Polled instead of the session's signal handlers (tests). */
  runControl?: RunControl;
  /** Where the per-step metrics table goes; false for none. Default stdout. Ignored with `session`. */
  console?: Writable | false;
  argv?: readonly string[];
  commandLine?: string;
  /** The recipe's own config, merged under the loop's in config.json so the run records its dataset too. */
  recipeConfig?: Record<string, unknown>;
}

export interface SupervisedRunResult {
  startStep: number;
  endStep: number;
  /** The first step not trained. */
  stoppedAt: number;
  outcome: "completed" | "already_complete" | "stopped" | "exit";
}

type SaveKind = "both" | "state";

interface PendingSave {
  name: string;
  position: LoopPosition;
  elapsedTokens: number;
  kind: SaveKind;
  rolling: boolean;
  final: boolean;
  state: TinkerFuture<SaveWeightsResponse>;
  sampler: TinkerFuture<SaveWeightsResponse> | null;
}

interface SubmittedBatch {
  position: LoopPosition;
  data: Datum[];
  fwdBwd: TinkerFuture<ForwardBackwardOutput>;
  optim: TinkerFuture<OptimStepResponse>;
  metrics: Record<string, number>;
  timer: StepTimer;
  save: PendingSave | null;
}

interface Loop {
  config: SupervisedConfig;
  logDir: string;
  session: RunSession;
  control: RunControl;
  trainingClient: TrainingClient;
  serviceClient: ServiceClient;
  dataset: SupervisedDataset;
  nBatches: number;
  endStep: number;
  tokenizer: Tokenizer | null;
  evaluators: Evaluator[];
  infrequentEvaluators: Evaluator[];
  lastRollingPath: string | null;
  asyncSaves: Promise<void>[];
  /** Tokens in the batches submitted so far (including those before a resume). */
  elapsedTokens: number;
}

/**
 * Runs supervised training. Without `options.session` the run directory is set up here (log-dir
 * policy, run.json, config.json, logs.log, signals) and its final status recorded.
 */
export async function main(
  configInput: SupervisedConfigInput,
  datasetBuilder: SupervisedDatasetBuilder,
  options: SupervisedMainOptions = {},
): Promise<SupervisedRunResult> {
  const config = SupervisedConfigSchema.parse(configInput);
  const ownsService = options.serviceClient === undefined;
  const serviceClient = options.serviceClient ?? (await createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {}));
  try {
    if (options.session !== undefined) return await runInSession(config, datasetBuilder, serviceClient, options.session, options);
    let result: SupervisedRunResult = { startStep: 0, endStep: 0, stoppedAt: 0, outcome: "exit" };
    await withRun(
      {
        logPath: config.log_path,
        recipe: config.recipe_name,
        config: options.recipeConfig !== undefined ? { ...options.recipeConfig, ...config } : config,
        behavior: config.behavior_if_log_dir_exists,
        engine: serviceClient.engineKind,
        ...(options.argv !== undefined ? { argv: options.argv } : {}),
        ...(options.commandLine !== undefined ? { commandLine: options.commandLine } : {}),
        console: options.console ?? process.stdout,
      },
      async (session) => {
        result = await runInSession(config, datasetBuilder, serviceClient, session, options);
        return result.outcome === "stopped" ? "stopped" : "completed";
      },
    );
    return result;
  } finally {
    if (ownsService) await serviceClient.close();
  }
}

async function loadTokenizer(config: SupervisedConfig, options: SupervisedMainOptions, session: RunSession): Promise<Tokenizer | null> {
  if (options.tokenizer !== undefined) return options.tokenizer;
  try {
    return await getTokenizer(config.model_name);
  } catch (err) {
    session.log.warn(`no tokenizer for ${config.model_name} (${(err as Error).message}): train_mean_bpb and logged examples are skipped`);
    return null;
  }
}

async function runInSession(
  config: SupervisedConfig,
  datasetBuilder: SupervisedDatasetBuilder,
  serviceClient: ServiceClient,
  session: RunSession,
  options: SupervisedMainOptions,
): Promise<SupervisedRunResult> {
  const logDir = session.logDir;
  const log = session.log;
  // Data problems surface before a model is loaded.
  const { train: dataset, test } = await datasetBuilder.build();
  const nBatches = dataset.length;
  if (nBatches === 0) throw new Error("the training dataset has no full batch; lower batch_size or add data");
  const totalSteps = nBatches * config.num_epochs;
  const endStep = config.max_steps !== null ? Math.min(config.max_steps, totalSteps) : totalSteps;

  const resume = getLastCheckpoint(logDir, "state_path");
  const startStep = resume !== undefined ? resumeStep(resume, nBatches, `${logDir}/checkpoints.jsonl`) : 0;
  const dropped = truncateMetricsFrom(logDir, startStep);
  if (dropped > 0) log.info(`dropped ${dropped} metrics rows at or after step ${startStep}, written after the last checkpoint`);

  const userMetadata: Record<string, string> = { recipe_name: config.recipe_name };
  if (config.renderer_name !== null) userMetadata["renderer_name"] = config.renderer_name;
  let trainingClient: TrainingClient;
  if (resume?.state_path !== undefined) {
    trainingClient = await serviceClient.createTrainingClientFromStateWithOptimizer(resume.state_path, { userMetadata });
    log.info(`resumed from ${resume.state_path} at step ${startStep} (epoch ${Math.floor(startStep / nBatches)}, batch ${startStep % nBatches})`);
  } else if (config.load_checkpoint_path !== null) {
    trainingClient = await serviceClient.createTrainingClientFromState(config.load_checkpoint_path, { userMetadata });
    log.info(`loaded weights from ${config.load_checkpoint_path} (fresh optimizer)`);
  } else {
    trainingClient = await serviceClient.createLoraTrainingClient(config.model_name, { rank: config.lora_rank, seed: config.seed, userMetadata });
  }

  const tokenizer = await loadTokenizer(config, options, session);
  const evaluators = await buildEvaluators(options.evaluatorBuilders ?? []);
  if (test !== null) evaluators.push(NLLEvaluator.fromDataset(test, { tokenizer }));
  const infrequentEvaluators = await buildEvaluators(options.infrequentEvaluatorBuilders ?? []);
  log.info(`training for ${nBatches} batches × ${config.num_epochs} epochs = ${totalSteps} steps${endStep < totalSteps ? ` (capped at max_steps=${endStep})` : ""}`);

  if (startStep >= endStep) {
    log.info("training was already complete; nothing to do");
    return { startStep, endStep, stoppedAt: startStep, outcome: "already_complete" };
  }
  const loop: Loop = {
    config,
    logDir,
    session,
    control: options.runControl ?? session.control,
    trainingClient,
    serviceClient,
    dataset,
    nBatches,
    endStep,
    tokenizer,
    evaluators,
    infrequentEvaluators,
    lastRollingPath: null,
    asyncSaves: [],
    elapsedTokens: typeof resume?.["elapsed_tokens"] === "number" ? resume["elapsed_tokens"] : 0,
  };
  const { stoppedAt, stopped } = await trainLoop(loop, startStep);
  await Promise.all(loop.asyncSaves);
  if (stopped) {
    log.info(`stopped at step ${stoppedAt}; resume with behavior_if_log_dir_exists=resume`);
    return { startStep, endStep, stoppedAt, outcome: "stopped" };
  }
  // The weights after the last step, scored like every other eval row.
  if (config.eval_every > 0 && evaluators.length > 0) {
    const timer = new StepTimer();
    const metrics = await timer.span("evals", () => runEvaluators(evaluators, trainingClient));
    session.metrics.logMetrics({ ...metrics, ...timer.metrics() }, endStep);
  }
  const finalSave = enqueueSave(loop, positionOf(endStep, nBatches), loop.elapsedTokens, "both", { final: true });
  await recordSave(loop, await finalSave);
  log.info("training completed");
  return { startStep, endStep, stoppedAt, outcome: "completed" };
}

async function trainLoop(loop: Loop, startStep: number): Promise<{ stoppedAt: number; stopped: boolean }> {
  const { config, control, dataset, nBatches, endStep } = loop;
  const pending: SubmittedBatch[] = [];
  let tokensAtLastSave = loop.elapsedTokens;
  let timeAtLastSave = performance.now();
  let step = startStep;
  let stopped = false;
  let epochSet = -1;
  // The most recent step, which may already be finished (always so with submit_ahead=0).
  let last: SubmittedBatch | undefined;
  for (; step < endStep; step++) {
    // A checkpoint after the most recent step must be queued before anything else changes the weights.
    if (last !== undefined && last.save === null) {
      const requested = control.consumeCheckpointRequest();
      const periodic =
        (config.save_every > 0 && step % config.save_every === 0) ||
        (config.save_every_tokens > 0 && loop.elapsedTokens - tokensAtLastSave >= config.save_every_tokens) ||
        (config.save_every_seconds > 0 && (performance.now() - timeAtLastSave) / 1000 >= config.save_every_seconds);
      let save: PendingSave | null = null;
      if (periodic || requested || control.stopRequested) {
        save = await enqueueSave(loop, positionOf(step, nBatches), loop.elapsedTokens, "both", {});
        tokensAtLastSave = loop.elapsedTokens;
        timeAtLastSave = performance.now();
        if (requested) loop.session.log.info(`checkpoint requested: saving after step ${step - 1}`);
      } else if (config.rolling_save_every > 0 && step % config.rolling_save_every === 0) {
        save = await enqueueSave(loop, positionOf(step, nBatches), loop.elapsedTokens, "state", { rolling: true });
      }
      if (save !== null) {
        last.save = save;
        // A finished step's row is already logged, so its checkpoint is recorded right away.
        if (!pending.includes(last)) await recordSave(loop, save);
      }
    }
    if (control.stopRequested) {
      stopped = true;
      break;
    }
    const position = positionOf(step, nBatches);
    if (position.epoch !== epochSet) {
      loop.session.log.info(`starting epoch ${position.epoch}`);
      dataset.setEpoch(position.epoch);
      epochSet = position.epoch;
    }
    const submitted = await submitBatch(loop, position);
    loop.elapsedTokens += submitted.metrics["num_tokens"]!;
    pending.push(submitted);
    last = submitted;
    while (pending.length > config.submit_ahead) await finishBatch(loop, pending.shift()!);
  }
  while (pending.length > 0) await finishBatch(loop, pending.shift()!);
  return { stoppedAt: step, stopped };
}

async function submitBatch(loop: Loop, position: LoopPosition): Promise<SubmittedBatch> {
  const { config, trainingClient, session } = loop;
  const { step } = position;
  const timer = new StepTimer();
  const learningRate = config.learning_rate * computeScheduleLrMultiplier(config.lr_schedule, step, loop.endStep);
  const metrics: Record<string, number> = { epoch: position.epoch, learning_rate: learningRate };
  const data = timer.spanSync("get_batch", () => loop.dataset.getBatch(position.batch));
  if (data.length === 0) throw new Error(`batch ${position.batch} of epoch ${position.epoch} is empty`);
  metrics["num_tokens"] = data.reduce((n, d) => n + modelInputLength(d.model_input), 0);
  session.log.info(`submitted step=${step} epoch=${position.epoch} batch=${position.batch} sequences=${data.length} tokens=${metrics["num_tokens"]}`);
  if (loop.tokenizer !== null && config.print_examples_every > 0 && step % config.print_examples_every === 0) {
    session.log.info(`step ${step} first example (green: trained, yellow: context):\n${colorizeExample(data[0]!, loop.tokenizer, { color: true })}`);
    appendTrainingExample(session.logDir, { step, segments: exampleSegments(data[0]!, loop.tokenizer) });
  }
  if (loop.evaluators.length > 0 && config.eval_every > 0 && step % config.eval_every === 0) {
    Object.assign(metrics, await timer.span("evals", () => runEvaluators(loop.evaluators, trainingClient)));
  }
  if (loop.infrequentEvaluators.length > 0 && config.infrequent_eval_every > 0 && step % config.infrequent_eval_every === 0) {
    Object.assign(metrics, await timer.span("infrequent_evals", () => runEvaluators(loop.infrequentEvaluators, trainingClient)));
  }
  // Both requests are queued before either is awaited.
  const fwdBwd = await trainingClient.forwardBackward(data, "cross_entropy");
  const optim = await trainingClient.optimStep({
    learning_rate: learningRate,
    beta1: config.adam_beta1,
    beta2: config.adam_beta2,
    eps: config.adam_eps,
  });
  return { position, data, fwdBwd, optim, metrics, timer, save: null };
}

function input(datum: Datum, key: string): TensorData {
  const td = datum.loss_fn_inputs[key];
  if (td === undefined) throw new Error(`a training datum has no loss_fn_inputs.${key}`);
  return td;
}

async function finishBatch(loop: Loop, submitted: SubmittedBatch): Promise<void> {
  const { metrics, timer, data } = submitted;
  const { step } = submitted.position;
  const [fwdBwd, optim] = await timer.span("step", async () => [await submitted.fwdBwd.result(), await submitted.optim.result()] as const);
  if (optim.metrics !== undefined) Object.assign(metrics, optim.metrics);
  const logprobs = fwdBwd.loss_fn_outputs.map((o) => {
    const lp = o["logprobs"];
    if (lp === undefined) throw new Error("forward_backward returned no logprobs for cross_entropy");
    return lp;
  });
  const weights = data.map((d) => input(d, "weights"));
  metrics["num_sequences"] = data.length;
  metrics["num_loss_tokens"] = weights.reduce((n, w) => n + w.data.reduce((a, b) => a + b, 0), 0);
  metrics["train_mean_nll"] = computeMeanNll(logprobs, weights);
  if (loop.tokenizer !== null) {
    metrics["train_mean_bpb"] = computeBpb(logprobs, weights, data.map((d) => input(d, "target_tokens")), loop.tokenizer);
  }
  metrics["progress"] = Math.min((step + 1) / loop.endStep, 1);
  const save = submitted.save;
  if (save !== null && !(loop.config.async_periodic_saves && !save.rolling)) {
    const paths = await timer.span("save_checkpoint", () => awaitSave(save));
    logStep(loop, step, metrics, timer);
    await recordSave(loop, { ...save, paths });
    return;
  }
  logStep(loop, step, metrics, timer);
  if (save !== null) {
    loop.asyncSaves.push(
      awaitSave(save).then((paths) => recordSave(loop, { ...save, paths })),
    );
  }
}

function logStep(loop: Loop, step: number, metrics: EvalMetrics, timer: StepTimer): void {
  loop.session.metrics.logMetrics({ ...metrics, ...timer.metrics() }, step);
}

async function enqueueSave(
  loop: Loop,
  position: LoopPosition,
  elapsedTokens: number,
  kind: SaveKind,
  flags: { rolling?: boolean; final?: boolean },
): Promise<PendingSave> {
  const final = flags.final ?? false;
  const rolling = flags.rolling ?? false;
  const name = final ? "final" : checkpointName(position.step);
  const ttl = final ? null : rolling ? loop.config.rolling_ttl_seconds : loop.config.ttl_seconds;
  const ttlOption = ttl === null ? {} : { ttlSeconds: ttl };
  // Names are reused when a resumed run passes the same step again.
  const state = await loop.trainingClient.saveState(name, { ...ttlOption, overwrite: true });
  const sampler = kind === "both" ? await loop.trainingClient.saveWeightsForSampler(name, ttlOption) : null;
  return { name, position, elapsedTokens, kind, rolling, final, state, sampler };
}

async function awaitSave(save: PendingSave): Promise<{ state_path: string; sampler_path?: string }> {
  const statePath = (await save.state.result()).path;
  const samplerPath = save.sampler !== null ? (await save.sampler.result()).path : undefined;
  return samplerPath !== undefined ? { state_path: statePath, sampler_path: samplerPath } : { state_path: statePath };
}

async function recordSave(loop: Loop, save: PendingSave & { paths?: { state_path: string; sampler_path?: string } }): Promise<void> {
  const paths = save.paths ?? (await awaitSave(save));
  const record: CheckpointRecord = {
    name: save.name,
    epoch: save.position.epoch,
    batch: save.position.batch,
    elapsed_tokens: save.elapsedTokens,
    ...paths,
  };
  if (save.final) record.final = true;
  if (save.rolling) record.rolling = true;
  appendCheckpoint(loop.logDir, record);
  loop.session.log.info(`saved checkpoint ${save.name} (next: epoch ${save.position.epoch}, batch ${save.position.batch}): ${paths.state_path}`);
  // A superseded rolling resume point is deleted once a newer resumable record exists.
  const previous = loop.lastRollingPath;
  loop.lastRollingPath = save.rolling ? paths.state_path : null;
  if (previous !== null && previous !== paths.state_path) {
    try {
      await loop.serviceClient.createRestClient().deleteCheckpointFromTinkerPath(previous);
    } catch (err) {
      loop.session.log.warn(`could not delete superseded rolling checkpoint ${previous}: ${(err as Error).message}`);
    }
  }
}
