// The DPO loop (docs/cookbook-parity.md#dpo-preference-rl-and-distillation, the cookbook's train_dpo): synchronous steps of interleaved chosen /
// rejected datums; the reference is the starting weights, pinned (src/training/startingWeights.ts)
// and recorded so a resumed run compares against the very same reference; the loss goes through
// forward_backward_custom. Checkpoints record the next (epoch, batch) to train, so a resumed run
// trains each batch exactly once.
import { z } from "zod";
import { inGroup } from "../config/groups.ts";
import { computeScheduleLrMultiplier } from "../hyperparams.ts";
import type { StepTimer } from "../log/timing.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { positionOf, resumeStep } from "../training/position.ts";
import type { SupervisedDatasetBuilder } from "../supervised/types.ts";
import type { Datum } from "../tinker/types.ts";
import { CheckpointManager } from "../training/checkpoints.ts";
import { adamParams, epochLoopFields, overrideDefaults, trainingLoopFields } from "../training/config.ts";
import { openTrainingClient } from "../training/open.ts";
import { frozenStartingWeights } from "../training/startingWeights.ts";
import { EXITED, epochSeed, finalEvaluationDue, runSynchronousSteps, type LoopResult } from "../training/cadence.ts";
import { withTrainingRun, type TrainingContext, type TrainingRunOptions } from "../training/run.ts";
import { join } from "node:path";
import { appendJsonl } from "../log/jsonl.ts";
import { tensorDataToNumbers } from "../tinker/tensorData.ts";
import { getTokenizer, type Tokenizer } from "../tokenizers/index.ts";
import { DpoEvaluator, dpoTrainStep } from "./dpoStep.ts";

export const DpoConfigSchema = overrideDefaults(
  z.object({
    ...trainingLoopFields,
    ...epochLoopFields,
    ...inGroup("optimizer", {
      dpo_beta: z.number().positive().default(0.1).describe("β: scale of the implied reward β·(log π − log π_ref)"),
    }),
    ...inGroup("evaluation", {
      eval_every: z.number().int().min(0).default(10).describe("Held-out DPO metrics and test/nll every N steps and at the end (0 = never)"),
    }),
  }),
  { learning_rate: 1e-5 },
);
export type DpoConfig = z.output<typeof DpoConfigSchema>;
export type DpoConfigInput = z.input<typeof DpoConfigSchema>;

export type DpoRunResult = LoopResult;

/**
 * Runs DPO on an already parsed config (a recipe's config extends the loop's and is passed as it
 * is). The dataset builder gives batches of interleaved pairs, and the held-out pairs as one batch.
 */
export async function main(config: DpoConfig, datasetBuilder: SupervisedDatasetBuilder, options: TrainingRunOptions = {}): Promise<DpoRunResult> {
  return withTrainingRun(config, { defaultRecipeName: "dpo", ...options }, (run) => runDpo(config, datasetBuilder, run), EXITED);
}

async function runDpo(config: DpoConfig, datasetBuilder: SupervisedDatasetBuilder, run: TrainingContext): Promise<DpoRunResult> {
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
  // The reference: the weights the run starts from, pinned so they never move.
  const pinned = await frozenStartingWeights(run, config, "reference", resume);
  run.log.info(`reference policy: ${pinned.description}`);
  const reference = pinned.sampler;
  const evaluator = test !== null && test.length > 0 ? new DpoEvaluator(test.getBatch(0), reference, config.dpo_beta) : null;
  const pairLog = evaluator !== null ? await PairLog.open(run, config.model_name, evaluator.data) : null;
  const loopState = (step: number) => {
    const p = positionOf(step, nBatches);
    return { epoch: p.epoch, batch: p.batch, ...pinned.record };
  };
  run.log.info(`DPO on steps ${startStep}..${total - 1} (${nBatches} batches per epoch, β=${config.dpo_beta})`);
  let epoch = -1;
  const trainOneStep = async (step: number, timer: StepTimer): Promise<Record<string, number>> => {
    const pos = positionOf(step, nBatches);
    if (pos.epoch !== epoch) {
      epoch = pos.epoch;
      train.setEpoch(epochSeed(config.seed, epoch));
    }
    const metrics: Record<string, number> = {};
    if (evaluator !== null && config.eval_every > 0 && step % config.eval_every === 0) {
      Object.assign(metrics, await timer.span("evaluation", () => evaluator.evaluate(trainingClient)));
      pairLog?.write(step, evaluator);
    }
    const batch: Datum[] = train.getBatch(pos.batch);
    const lr = config.learning_rate * computeScheduleLrMultiplier(config.lr_schedule, step, total);
    const stepMetrics = await timer.span("train_step", () => dpoTrainStep(trainingClient, reference, batch, config.dpo_beta, adamParams(config, lr)));
    return Object.assign(metrics, stepMetrics, { learning_rate: lr, progress: (step + 1) / total, epoch: pos.epoch });
  };
  // The weights after the last step, scored like every other eval row.
  const finalEvaluation =
    evaluator !== null && finalEvaluationDue(config.eval_every, 1)
      ? async () => {
          const metrics = await evaluator.evaluate(trainingClient);
          pairLog?.write(total, evaluator);
          return metrics;
        }
      : null;
  return runSynchronousSteps({
    run,
    checkpoints: new CheckpointManager(trainingClient, config, { logDir: run.logDir, restClient: serviceClient.createRestClient(), log: run.log }),
    startStep,
    endStep: total,
    loopState,
    step: trainOneStep,
    finalEvaluation,
  });
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

  static async open(run: TrainingContext, modelName: string, data: readonly Datum[]): Promise<PairLog | null> {
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
