// The pipelined supervised fine-tuning loop (docs/cookbook-parity.md#supervised-loop-and-pipelining). Each step's forward_backward and
// optim_step are queued before the previous step's results are awaited (submit_ahead deep), so
// the engine never idles while this process computes metrics. Evaluators run just before a step
// is queued, so they see the weights of the step before.
//
// Checkpoints are queued right after the optim_step of the last step they contain, before the
// next step is queued, and record the *next* (epoch, batch) to train: a resumed run continues
// exactly there, with no batch trained twice and none skipped. (The Python loop records the batch
// it just trained and saves after the next one was already queued; see docs/cookbook-parity.md#known-cookbook-bugs.)
import { colorizeExample, exampleSegments } from "../display.ts";
import { buildEvaluators, runEvaluators, type EvalMetrics, type Evaluator, type EvaluatorBuilder } from "../eval/evaluators.ts";
import { benchmarkEvaluatorsFromConfig } from "../eval/inline.ts";
import { computeScheduleLrMultiplier } from "../hyperparams.ts";
import { StepTimer } from "../log/timing.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { appendTrainingExample } from "../runs/transcripts.ts";
import type { TinkerFuture, TrainingClient } from "../tinker/clients.ts";
import { modelInputLength } from "../tinker/modelInput.ts";
import type { Datum, ForwardBackwardOutput, OptimStepResponse, TensorData } from "../tinker/types.ts";
import { getTokenizer } from "../tokenizers/index.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { EXITED, epochSeed, finalEvaluationDue, StepCadence, type LoopResult } from "../training/cadence.ts";
import { CheckpointManager, type PendingSave, type SavedPaths } from "../training/checkpoints.ts";
import { adamParams } from "../training/config.ts";
import { openTrainingClient } from "../training/open.ts";
import { positionOf, resumeStep, type LoopPosition } from "../training/position.ts";
import { withTrainingRun, type TrainingContext, type TrainingRunOptions } from "../training/run.ts";
import { computeBpb, computeMeanNll, indicesBySource, meanNllBySource } from "./common.ts";
import type { SupervisedConfig } from "./config.ts";
import { NLLEvaluator } from "./nllEvaluator.ts";
import type { SupervisedDataset, SupervisedDatasetBuilder } from "./types.ts";

export { SupervisedConfigSchema, type SupervisedConfig, type SupervisedConfigInput } from "./config.ts";
export { positionOf, resumeStep, type LoopPosition } from "../training/position.ts";

export interface SupervisedMainOptions extends TrainingRunOptions {
  /** Run every eval_every steps (an NLL evaluator on the builder's test split is added). */
  evaluatorBuilders?: EvaluatorBuilder[];
  infrequentEvaluatorBuilders?: EvaluatorBuilder[];
  /** For train_mean_bpb, test/bpb and logged examples (default: getTokenizer(model_name), skipped if unavailable). */
  tokenizer?: Tokenizer | null;
}

export type SupervisedRunResult = LoopResult;

interface SubmittedBatch {
  position: LoopPosition;
  data: Datum[];
  /** Each datum's mixture source, or null for a single dataset. */
  sources: string[] | null;
  fwdBwd: TinkerFuture<ForwardBackwardOutput>;
  optim: TinkerFuture<OptimStepResponse>;
  metrics: Record<string, number>;
  timer: StepTimer;
  save: PendingSave | null;
}

interface Loop {
  config: SupervisedConfig;
  run: TrainingContext;
  trainingClient: TrainingClient;
  checkpoints: CheckpointManager;
  dataset: SupervisedDataset;
  nBatches: number;
  endStep: number;
  tokenizer: Tokenizer | null;
  evaluators: Evaluator[];
  infrequentEvaluators: Evaluator[];
  asyncSaves: Promise<void>[];
  /** Tokens in the batches submitted so far (including those before a resume). */
  elapsedTokens: number;
}

/**
 * Runs supervised training on an already parsed config (a recipe's config, which extends the
 * loop's, is passed as it is and recorded whole in config.json).
 */
export async function main(
  config: SupervisedConfig,
  datasetBuilder: SupervisedDatasetBuilder,
  options: SupervisedMainOptions = {},
): Promise<SupervisedRunResult> {
  return withTrainingRun(config, { defaultRecipeName: "supervised", ...options }, (run) => runSupervised(config, datasetBuilder, run, options), EXITED);
}

async function loadTokenizer(config: SupervisedConfig, options: SupervisedMainOptions, run: TrainingContext): Promise<Tokenizer | null> {
  if (options.tokenizer !== undefined) return options.tokenizer;
  try {
    return await getTokenizer(config.model_name);
  } catch (err) {
    run.log.warn(`no tokenizer for ${config.model_name} (${(err as Error).message}): train_mean_bpb and logged examples are skipped`);
    return null;
  }
}

function positionState(position: LoopPosition, elapsedTokens: number): Record<string, unknown> {
  return { epoch: position.epoch, batch: position.batch, elapsed_tokens: elapsedTokens };
}

async function runSupervised(
  config: SupervisedConfig,
  datasetBuilder: SupervisedDatasetBuilder,
  run: TrainingContext,
  options: SupervisedMainOptions,
): Promise<SupervisedRunResult> {
  // Data problems surface before a model is loaded.
  const { train: dataset, test } = await datasetBuilder.build();
  const nBatches = dataset.length;
  if (nBatches === 0) throw new Error("the training dataset has no full batch; lower batch_size or add data");
  const totalSteps = nBatches * config.num_epochs;
  const endStep = config.max_steps !== null ? Math.min(config.max_steps, totalSteps) : totalSteps;

  const { trainingClient, resume, startStep } = await openTrainingClient(run, config, {
    stepOf: (record) => resumeStep(record, nBatches, `${run.logDir}/checkpoints.jsonl`),
    rendererName: resolveRendererName(config.model_name, config.renderer_name),
  });
  if (resume !== undefined) run.log.info(`resuming at epoch ${Math.floor(startStep / nBatches)}, batch ${startStep % nBatches}`);

  const tokenizer = await loadTokenizer(config, options, run);
  const evaluators = await buildEvaluators(options.evaluatorBuilders ?? []);
  if (test !== null) evaluators.push(NLLEvaluator.fromDataset(test, { tokenizer }));
  const infrequentEvaluators = await buildEvaluators(options.infrequentEvaluatorBuilders ?? []);
  // Benchmarks named in the config (`benchmarks`, `infrequent_benchmarks`): scores as test/<benchmark>/<metric>.
  const named = await benchmarkEvaluatorsFromConfig(config, run.serviceClient);
  evaluators.push(...named.evaluators);
  infrequentEvaluators.push(...named.infrequent);
  run.log.info(
    `training for ${nBatches} batches × ${config.num_epochs} epochs = ${totalSteps} steps${endStep < totalSteps ? ` (capped at max_steps=${endStep})` : ""}`,
  );

  if (startStep >= endStep) {
    run.log.info("training was already complete; nothing to do");
    return { startStep, endStep, stoppedAt: startStep, outcome: "already_complete" };
  }
  const loop: Loop = {
    config,
    run,
    trainingClient,
    checkpoints: new CheckpointManager(trainingClient, config, { logDir: run.logDir, restClient: run.serviceClient.createRestClient(), log: run.log }),
    dataset,
    nBatches,
    endStep,
    tokenizer,
    evaluators,
    infrequentEvaluators,
    asyncSaves: [],
    elapsedTokens: typeof resume?.["elapsed_tokens"] === "number" ? resume["elapsed_tokens"] : 0,
  };
  const { stoppedAt, stopped } = await trainLoop(loop, startStep);
  await Promise.all(loop.asyncSaves);
  if (stopped) {
    run.log.info(`stopped at step ${stoppedAt}; resume with behavior_if_log_dir_exists=resume`);
    return { startStep, endStep, stoppedAt, outcome: "stopped" };
  }
  // The weights after the last step, scored like every other eval row.
  if (finalEvaluationDue(config.eval_every, evaluators.length)) {
    const timer = new StepTimer();
    const metrics = await timer.span("evals", () => runEvaluators(evaluators, trainingClient));
    run.metrics.logStep(metrics, endStep, timer);
  }
  await recordSave(loop, await loop.checkpoints.enqueue("final", positionState(positionOf(endStep, nBatches), loop.elapsedTokens)));
  run.log.info("training completed");
  return { startStep, endStep, stoppedAt, outcome: "completed" };
}

async function trainLoop(loop: Loop, startStep: number): Promise<{ stoppedAt: number; stopped: boolean }> {
  const { config, dataset, nBatches, endStep, checkpoints } = loop;
  const cadence = new StepCadence(checkpoints, loop.run.control, endStep, config, loop.elapsedTokens);
  const pending: SubmittedBatch[] = [];
  let step = startStep;
  let stopped = false;
  let epochSet = -1;
  // The most recent step, which may already be finished (always so with submit_ahead=0).
  let last: SubmittedBatch | undefined;
  for (; step < endStep; step++) {
    // A checkpoint after the most recent step must be queued before anything else changes the weights.
    const boundary = last !== undefined ? cadence.decide(step, loop.elapsedTokens) : null;
    if (last !== undefined && boundary !== null && boundary.save !== null) {
      if (boundary.save === "full") cadence.savedAt(loop.elapsedTokens);
      const save = await checkpoints.enqueue(step, positionState(positionOf(step, nBatches), loop.elapsedTokens), { rolling: boundary.save === "rolling" });
      if (boundary.reason === "requested") loop.run.log.info(`checkpoint requested: saving after step ${step - 1}`);
      last.save = save;
      // A finished step's row is already logged, so its checkpoint is recorded right away.
      if (!pending.includes(last)) await recordSave(loop, save);
    }
    if (boundary?.stop ?? cadence.stopRequested) {
      stopped = true;
      break;
    }
    const position = positionOf(step, nBatches);
    if (position.epoch !== epochSet) {
      loop.run.log.info(`starting epoch ${position.epoch}`);
      dataset.setEpoch(epochSeed(config.seed, position.epoch));
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
  const { config, trainingClient, run } = loop;
  const { step } = position;
  const timer = new StepTimer();
  const learningRate = config.learning_rate * computeScheduleLrMultiplier(config.lr_schedule, step, loop.endStep);
  const metrics: Record<string, number> = { epoch: position.epoch, learning_rate: learningRate };
  const data = await timer.span("get_batch", async () => {
    await loop.dataset.load?.(position.batch);
    return loop.dataset.getBatch(position.batch);
  });
  const sources = loop.dataset.batchSources?.(position.batch) ?? null;
  if (data.length === 0) throw new Error(`batch ${position.batch} of epoch ${position.epoch} is empty`);
  metrics["num_tokens"] = data.reduce((n, d) => n + modelInputLength(d.model_input), 0);
  run.log.info(`submitted step=${step} epoch=${position.epoch} batch=${position.batch} sequences=${data.length} tokens=${metrics["num_tokens"]}`);
  if (loop.tokenizer !== null && config.print_examples_every > 0 && step % config.print_examples_every === 0) {
    run.log.info(`step ${step} first example (green: trained, yellow: context):\n${colorizeExample(data[0]!, loop.tokenizer, { color: true })}`);
    appendTrainingExample(run.logDir, { step, segments: exampleSegments(data[0]!, loop.tokenizer) });
  }
  if (loop.evaluators.length > 0 && config.eval_every > 0 && step % config.eval_every === 0) {
    Object.assign(metrics, await timer.span("evals", () => runEvaluators(loop.evaluators, trainingClient)));
  }
  if (loop.infrequentEvaluators.length > 0 && config.infrequent_eval_every > 0 && step % config.infrequent_eval_every === 0) {
    Object.assign(metrics, await timer.span("infrequent_evals", () => runEvaluators(loop.infrequentEvaluators, trainingClient)));
  }
  // Both requests are queued before either is awaited.
  const fwdBwd = await trainingClient.forwardBackward(data, "cross_entropy");
  const optim = await trainingClient.optimStep(adamParams(config, learningRate));
  return { position, data, sources, fwdBwd, optim, metrics, timer, save: null };
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
  // A mixture-of-experts model's load balance (the embedded engine's moe_aux_loss, moe_expert_load_max).
  for (const [key, value] of Object.entries(fwdBwd.metrics)) if (key.startsWith("moe_")) metrics[key.split(":")[0]!] = value;
  const logprobs = fwdBwd.loss_fn_outputs.map((o) => {
    const lp = o["logprobs"];
    if (lp === undefined) throw new Error("forward_backward returned no logprobs for cross_entropy");
    return lp;
  });
  const weights = data.map((d) => input(d, "weights"));
  metrics["num_sequences"] = data.length;
  metrics["num_loss_tokens"] = weights.reduce((n, w) => n + w.data.reduce((a, b) => a + b, 0), 0);
  metrics["train_mean_nll"] = computeMeanNll(logprobs, weights);
  if (submitted.sources !== null) Object.assign(metrics, perSourceNll(submitted.sources, logprobs, weights));
  if (loop.tokenizer !== null) {
    metrics["train_mean_bpb"] = computeBpb(
      logprobs,
      weights,
      data.map((d) => input(d, "target_tokens")),
      loop.tokenizer,
    );
  }
  metrics["progress"] = Math.min((step + 1) / loop.endStep, 1);
  const save = submitted.save;
  if (save !== null && !(loop.config.async_periodic_saves && !save.rolling)) {
    const paths = await timer.span("save_checkpoint", () => loop.checkpoints.wait(save));
    logStep(loop, step, metrics, timer);
    await recordSave(loop, save, paths);
    return;
  }
  logStep(loop, step, metrics, timer);
  if (save !== null) loop.asyncSaves.push(recordSave(loop, save));
}

/** A mixture's loss by source: `source/<name>/train_mean_nll`, and its sequences and loss tokens. */
function perSourceNll(sources: readonly string[], logprobs: TensorData[], weights: TensorData[]): Record<string, number> {
  const out: Record<string, number> = {};
  const nll = meanNllBySource(sources, logprobs, weights);
  for (const [name, mine] of indicesBySource(sources)) {
    out[`source/${name}/train_mean_nll`] = nll.get(name)!;
    out[`source/${name}/num_sequences`] = mine.length;
    out[`source/${name}/num_loss_tokens`] = mine.reduce((n, i) => n + weights[i]!.data.reduce((a, b) => a + b, 0), 0);
  }
  return out;
}

function logStep(loop: Loop, step: number, metrics: EvalMetrics, timer: StepTimer): void {
  loop.run.metrics.logStep(metrics, step, timer);
}

async function recordSave(loop: Loop, save: PendingSave, settled?: SavedPaths): Promise<void> {
  const paths = await loop.checkpoints.record(save, settled);
  const { epoch, batch } = save.loopState;
  loop.run.log.info(`saved checkpoint ${save.name} (next: epoch ${String(epoch)}, batch ${String(batch)}): ${paths.state_path}`);
}
