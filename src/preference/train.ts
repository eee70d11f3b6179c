// The DPO loop (spec §6, the cookbook's train_dpo): synchronous steps of interleaved chosen /
// rejected datums; the reference is a sampler snapshot of the initial weights, saved once with no
// TTL so a resumed run compares against the very same reference; the loss goes through
// forward_backward_custom. Checkpoints record the next (epoch, batch) to train, so a resumed run
// trains each batch exactly once.
import { z } from "zod";
import { inGroup } from "../config/groups.ts";
import { LrScheduleSchema } from "../config/common.ts";
import { computeScheduleLrMultiplier } from "../hyperparams.ts";
import { StepTimer } from "../log/timing.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { positionOf, resumeStep } from "../training/position.ts";
import type { SupervisedDatasetBuilder } from "../supervised/types.ts";
import type { Datum } from "../tinker/types.ts";
import { CheckpointManager } from "../training/checkpoints.ts";
import { adamFields, adapterFields, checkpointFields, runFields } from "../training/config.ts";
import { openTrainingClient } from "../training/open.ts";
import { withTrainingRun, type TrainingOutcome, type TrainingRun, type TrainingRunOptions } from "../training/run.ts";
import { join } from "node:path";
import { appendJsonl } from "../log/jsonl.ts";
import { tensorDataToNumbers } from "../tinker/tensorData.ts";
import { getTokenizer, type Tokenizer } from "../tokenizers/index.ts";
import { DpoEvaluator, dpoTrainStep } from "./dpoStep.ts";

export const DpoConfigSchema = z.object({
  ...runFields,
  ...adapterFields,
  ...checkpointFields,
  ...inGroup("optimizer", {
    learning_rate: z.number().positive().default(1e-5).describe("Peak Adam learning rate"),
    lr_schedule: LrScheduleSchema.default("linear").describe("Learning-rate schedule over the run"),
    num_epochs: z.number().int().positive().default(1).describe("Passes over the comparisons"),
    max_steps: z.number().int().positive().nullable().default(null).describe("Stop after this many steps (default: num_epochs × batches)"),
    dpo_beta: z.number().positive().default(0.1).describe("β: scale of the implied reward β·(log π − log π_ref)"),
  }),
  ...adamFields,
  ...inGroup("evaluation", {
    eval_every: z.number().int().min(0).default(10).describe("Held-out DPO metrics and test/nll every N steps and at the end (0 = never)"),
  }),
});
export type DpoConfig = z.output<typeof DpoConfigSchema>;
export type DpoConfigInput = z.input<typeof DpoConfigSchema>;

export interface DpoRunResult {
  startStep: number;
  endStep: number;
  stoppedAt: number;
  outcome: TrainingOutcome;
}

/**
 * Runs DPO on an already parsed config (a recipe's config extends the loop's and is passed as it
 * is). The dataset builder gives batches of interleaved pairs, and the held-out pairs as one batch.
 */
export async function main(config: DpoConfig, datasetBuilder: SupervisedDatasetBuilder, options: TrainingRunOptions = {}): Promise<DpoRunResult> {
  return withTrainingRun(config, { defaultRecipeName: "dpo", ...options }, (run) => runDpo(config, datasetBuilder, run), {
    startStep: 0,
    endStep: 0,
    stoppedAt: 0,
    outcome: "exit",
  });
}

async function runDpo(config: DpoConfig, datasetBuilder: SupervisedDatasetBuilder, run: TrainingRun): Promise<DpoRunResult> {
  // Data problems surface before a model is loaded.
  const { train, test } = await datasetBuilder.build();
  const nBatches = train.length;
  if (nBatches === 0) throw new Error("DPO: the dataset has no full batch of pairs; lower batch_size or add comparisons");
  const total = config.max_steps !== null ? Math.min(config.max_steps, nBatches * config.num_epochs) : nBatches * config.num_epochs;
  const { trainingClient, resume, startStep } = await openTrainingClient(run, config, {
    stepOf: (record) => resumeStep(record, nBatches, `${run.logDir}/checkpoints.jsonl`),
    rendererName: resolveRendererName(config.model_name, config.renderer_name),
  });
  const serviceClient = run.serviceClient;
  const control = run.control;
  // The reference: the initial weights, pinned once. A resumed run reads the same snapshot back.
  let referencePath = typeof resume?.["reference_sampler_path"] === "string" ? resume["reference_sampler_path"] : undefined;
  if (referencePath === undefined) {
    referencePath = (await (await trainingClient.saveWeightsForSampler("reference")).result()).path;
    run.log.info(`reference policy: ${referencePath}`);
  }
  const reference = await serviceClient.createSamplingClient({ modelPath: referencePath });
  const evaluator = test !== null && test.length > 0 ? new DpoEvaluator(test.getBatch(0), reference, config.dpo_beta) : null;
  const pairLog = evaluator !== null ? await PairLog.open(run, config.model_name, evaluator.data) : null;
  const checkpoints = new CheckpointManager(trainingClient, config, { logDir: run.logDir, restClient: serviceClient.createRestClient(), log: run.log });
  const loopState = (step: number) => {
    const p = positionOf(step, nBatches);
    return { epoch: p.epoch, batch: p.batch, reference_sampler_path: referencePath };
  };
  if (startStep >= total) {
    run.log.info("training was already complete; nothing to do");
    return { startStep, endStep: total, stoppedAt: startStep, outcome: "already_complete" };
  }
  run.log.info(`DPO on steps ${startStep}..${total - 1} (${nBatches} batches per epoch, β=${config.dpo_beta})`);
  let epoch = -1;
  for (let step = startStep; step < total; step++) {
    if (control.stopRequested) {
      await checkpoints.save(step, loopState(step));
      run.log.info(`stopped at step ${step}; checkpoint saved`);
      return { startStep, endStep: total, stoppedAt: step, outcome: "stopped" };
    }
    const timer = new StepTimer();
    const pos = positionOf(step, nBatches);
    if (pos.epoch !== epoch) {
      epoch = pos.epoch;
      train.setEpoch(config.seed + epoch);
    }
    const metrics: Record<string, number> = {};
    if (evaluator !== null && config.eval_every > 0 && step % config.eval_every === 0) {
      Object.assign(metrics, await timer.span("evaluation", () => evaluator.evaluate(trainingClient)));
      pairLog?.write(step, evaluator);
    }
    const batch: Datum[] = train.getBatch(pos.batch);
    const lr = config.learning_rate * computeScheduleLrMultiplier(config.lr_schedule, step, total);
    const stepMetrics = await timer.span("train_step", () =>
      dpoTrainStep(trainingClient, reference, batch, config.dpo_beta, { learning_rate: lr, beta1: config.adam_beta1, beta2: config.adam_beta2, eps: config.adam_eps }),
    );
    Object.assign(metrics, stepMetrics, { learning_rate: lr, progress: (step + 1) / total, epoch: pos.epoch });
    const next = step + 1;
    if (next < total && (checkpoints.isPeriodic(next) || control.consumeCheckpointRequest())) {
      await timer.span("save_checkpoint", () => checkpoints.save(next, loopState(next)));
    } else if (next < total && checkpoints.isRolling(next)) {
      await checkpoints.saveRolling(next, loopState(next));
    }
    Object.assign(metrics, timer.metrics());
    metrics["batch_time"] = metrics["time/total"] ?? 0;
    run.metrics.logMetrics(metrics, step);
  }
  // The weights after the last step, scored like every other eval row.
  if (evaluator !== null && config.eval_every > 0) {
    run.metrics.logMetrics(await evaluator.evaluate(trainingClient), total);
    pairLog?.write(total, evaluator);
  }
  await checkpoints.saveFinal(loopState(total));
  run.log.info("training completed");
  return { startStep, endStep: total, stoppedAt: total, outcome: "completed" };
}

/**
 * dpo_pairs.jsonl: at every evaluation, the first held-out pairs as text with their implied
 * rewards ({step, pair, prompt, chosen, rejected, chosen_reward, rejected_reward}), for viewers.
 */
class PairLog {
  static readonly PAIRS = 8;

  private constructor(
    readonly path: string,
    readonly texts: Array<{ prompt: string; chosen: string; rejected: string }>,
  ) {}

  static async open(run: TrainingRun, modelName: string, data: readonly Datum[]): Promise<PairLog | null> {
    let tokenizer: Tokenizer;
    try {
      tokenizer = await getTokenizer(modelName);
    } catch (err) {
      run.log.warn(`no tokenizer for ${modelName} (${(err as Error).message}): dpo_pairs.jsonl is not written`);
      return null;
    }
    const split = (d: Datum) => {
      const targets = tensorDataToNumbers(d.loss_fn_inputs["target_tokens"]!);
      const w = tensorDataToNumbers(d.loss_fn_inputs["weights"]!);
      const inputs = d.model_input.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : []));
      const first = w.findIndex((x) => x > 0);
      const cut = first < 0 ? targets.length : first;
      // Target t is token t+1 of the sequence, so the prompt is the inputs up to the first trained target.
      return { prompt: tokenizer.decode(inputs.slice(0, cut + 1)), completion: tokenizer.decode(targets.filter((_, i) => w[i]! > 0)) };
    };
    const texts: Array<{ prompt: string; chosen: string; rejected: string }> = [];
    for (let k = 0; k + 1 < data.length && texts.length < PairLog.PAIRS; k += 2) {
      const c = split(data[k]!);
      texts.push({ prompt: c.prompt, chosen: c.completion, rejected: split(data[k + 1]!).completion });
    }
    return new PairLog(join(run.logDir, "dpo_pairs.jsonl"), texts);
  }

  write(step: number, evaluator: DpoEvaluator): void {
    this.texts.forEach((t, i) => {
      const r = evaluator.lastPairRewards[i];
      if (r !== undefined) appendJsonl(this.path, { step, pair: i, ...t, chosen_reward: r.chosen, rejected_reward: r.rejected });
    });
  }
}
