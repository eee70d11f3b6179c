// The DPO loop (spec §6, the cookbook's train_dpo): synchronous steps of interleaved chosen /
// rejected datums; the reference is a sampler snapshot of the initial weights, saved once with no
// TTL so a resumed run compares against the very same reference; the loss goes through
// forward_backward_custom. Checkpoints record the next (epoch, batch) to train, so a resumed run
// trains each batch exactly once.
import { z } from "zod";
import { LogDirBehaviorSchema, LrScheduleSchema } from "../config/common.ts";
import { computeScheduleLrMultiplier } from "../hyperparams.ts";
import { StepTimer } from "../log/timing.ts";
import { CheckpointManager } from "../rl/checkpoints.ts";
import { getLastCheckpoint, type CheckpointRecord } from "../runs/checkpoints.ts";
import type { RunControl } from "../runs/control.ts";
import { positionOf, resumeStep, truncateMetricsFrom } from "../runs/resume.ts";
import { withRun, type RunSession } from "../runs/session.ts";
import type { ServiceClient, TrainingClient } from "../tinker/clients.ts";
import type { Datum } from "../tinker/types.ts";
import type { SupervisedDatasetBuilder } from "../supervised/types.ts";
import { DpoEvaluator, dpoTrainStep } from "./dpoStep.ts";

export const DpoConfigSchema = z.object({
  log_path: z.string().min(1).describe("run directory: metrics.jsonl, checkpoints.jsonl, logs.log"),
  model_name: z.string().min(1).describe("base model to train"),
  recipe_name: z.string().default("dpo").describe("recipe slug recorded in run metadata"),
  renderer_name: z.string().nullable().default(null).describe("renderer the dataset uses (recorded in run metadata)"),
  load_checkpoint_path: z.string().nullable().default(null).describe("start from these weights (also the reference); ignored when resuming"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server URL (default: the embedded engine)"),
  learning_rate: z.number().positive().default(1e-5).describe("peak Adam learning rate"),
  lr_schedule: LrScheduleSchema.default("linear").describe("learning-rate schedule over the run"),
  num_epochs: z.number().int().positive().default(1).describe("passes over the comparisons"),
  dpo_beta: z.number().positive().default(0.1).describe("β: how strongly the implied reward scales the log-ratio to the reference"),
  lora_rank: z.number().int().positive().default(32).describe("LoRA rank"),
  seed: z.number().int().default(0).describe("seed of the adapter initialization and the epoch shuffles"),
  eval_every: z.number().int().min(0).default(10).describe("held-out DPO metrics and test/nll every N steps and at the end (0 = never)"),
  save_every: z.number().int().min(0).default(20).describe("checkpoint every N steps (0 = only the final one)"),
  ttl_seconds: z.number().int().positive().nullable().default(604800).describe("lifetime of periodic checkpoints (null = keep)"),
  rolling_save_every: z.number().int().min(0).default(0).describe("state-only resume point every N steps (0 = off)"),
  rolling_ttl_seconds: z.number().int().positive().default(7200).describe("lifetime of rolling resume points"),
  adam_beta1: z.number().min(0).lt(1).default(0.9).describe("Adam β1"),
  adam_beta2: z.number().min(0).lt(1).default(0.95).describe("Adam β2"),
  adam_eps: z.number().positive().default(1e-8).describe("Adam ε"),
  max_steps: z.number().int().positive().nullable().default(null).describe("stop after this many steps (default: num_epochs × batches)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("what to do when log_path already holds a run"),
  wandb_project: z.string().nullable().default(null).describe("accepted for compatibility; metrics stay in metrics.jsonl"),
  wandb_name: z.string().nullable().default(null).describe("accepted for compatibility"),
});
export type DpoConfig = z.output<typeof DpoConfigSchema>;
export type DpoConfigInput = z.input<typeof DpoConfigSchema>;

export interface DpoMainOptions {
  runControl?: RunControl;
  console?: false;
  argv?: readonly string[];
  commandLine?: string;
}

export interface DpoRunResult {
  startStep: number;
  endStep: number;
  stoppedAt: number;
  outcome: "completed" | "already_complete" | "stopped" | "exit";
}

/** The DPO dataset builder gives batches of interleaved pairs and held-out pairs as one batch. */
export async function main(configInput: DpoConfigInput, datasetBuilder: SupervisedDatasetBuilder, serviceClient: ServiceClient, options: DpoMainOptions = {}): Promise<DpoRunResult> {
  const config = DpoConfigSchema.parse(configInput);
  let result: DpoRunResult = { startStep: 0, endStep: 0, stoppedAt: 0, outcome: "exit" };
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
      result = await runDpo(config, datasetBuilder, serviceClient, session, options.runControl ?? session.control);
      return result.outcome === "stopped" ? "stopped" : "completed";
    },
  );
  return result;
}

async function openClient(config: DpoConfig, serviceClient: ServiceClient, session: RunSession): Promise<{ trainingClient: TrainingClient; resume: CheckpointRecord | undefined }> {
  const resume = getLastCheckpoint(session.logDir, "state_path");
  const userMetadata: Record<string, string> = { recipe_name: config.recipe_name };
  if (config.renderer_name !== null) userMetadata.renderer_name = config.renderer_name;
  if (resume?.state_path !== undefined) {
    session.log.info(`resuming from ${resume.state_path}`);
    return { trainingClient: await serviceClient.createTrainingClientFromStateWithOptimizer(resume.state_path, { userMetadata }), resume };
  }
  if (config.load_checkpoint_path !== null) {
    return { trainingClient: await serviceClient.createTrainingClientFromState(config.load_checkpoint_path, { userMetadata }), resume: undefined };
  }
  return { trainingClient: await serviceClient.createLoraTrainingClient(config.model_name, { rank: config.lora_rank, seed: config.seed, userMetadata }), resume: undefined };
}

async function runDpo(config: DpoConfig, datasetBuilder: SupervisedDatasetBuilder, serviceClient: ServiceClient, session: RunSession, control: RunControl): Promise<DpoRunResult> {
  const { trainingClient, resume } = await openClient(config, serviceClient, session);
  const { train, test } = await datasetBuilder.build();
  const nBatches = train.length;
  if (nBatches === 0) throw new Error("DPO: the dataset has no full batch; lower batch_size or add comparisons");
  const total = config.max_steps !== null ? Math.min(config.max_steps, nBatches * config.num_epochs) : nBatches * config.num_epochs;
  const startStep = resume !== undefined ? resumeStep(resume, nBatches, `${session.logDir}/checkpoints.jsonl`) : 0;
  if (resume !== undefined) {
    const dropped = truncateMetricsFrom(session.logDir, startStep);
    if (dropped > 0) session.log.info(`dropped ${dropped} metrics rows from step ${startStep} on (they will be logged again)`);
  }
  // The reference: the initial weights, pinned once. A resumed run reads the same snapshot back.
  let referencePath = typeof resume?.["reference_sampler_path"] === "string" ? resume["reference_sampler_path"] : undefined;
  if (referencePath === undefined) {
    referencePath = (await (await trainingClient.saveWeightsForSampler("reference")).result()).path;
    session.log.info(`reference policy: ${referencePath}`);
  }
  const reference = await serviceClient.createSamplingClient({ modelPath: referencePath });
  const evaluator = test !== null && test.length > 0 ? new DpoEvaluator(test.getBatch(0), reference, config.dpo_beta) : null;
  const checkpoints = new CheckpointManager(trainingClient, {
    logPath: session.logDir,
    saveEvery: config.save_every,
    ttlSeconds: config.ttl_seconds,
    rollingSaveEvery: config.rolling_save_every,
    rollingTtlSeconds: config.rolling_ttl_seconds,
    restClient: serviceClient.createRestClient(),
    log: (m) => session.log.warn(m),
  });
  const loopState = (step: number) => {
    const p = positionOf(step, nBatches);
    return { epoch: p.epoch, batch: p.batch, reference_sampler_path: referencePath };
  };
  if (startStep >= total) {
    session.log.info("training was already complete; nothing to do");
    return { startStep, endStep: total, stoppedAt: startStep, outcome: "already_complete" };
  }
  session.log.info(`DPO on steps ${startStep}..${total - 1} (${nBatches} batches per epoch, β=${config.dpo_beta})`);
  let epoch = -1;
  for (let step = startStep; step < total; step++) {
    if (control.stopRequested) {
      await checkpoints.savePeriodic(step, loopState(step));
      session.log.info(`stopped at step ${step}; checkpoint saved`);
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
    }
    const batch: Datum[] = train.getBatch(pos.batch);
    const lr = config.learning_rate * computeScheduleLrMultiplier(config.lr_schedule, step, total);
    const stepMetrics = await timer.span("train_step", () =>
      dpoTrainStep(trainingClient, reference, batch, config.dpo_beta, { learning_rate: lr, beta1: config.adam_beta1, beta2: config.adam_beta2, eps: config.adam_eps }),
    );
    Object.assign(metrics, stepMetrics, { learning_rate: lr, progress: (step + 1) / total, epoch: pos.epoch });
    const next = step + 1;
    if (next < total && (checkpoints.shouldSavePeriodic(next) || control.consumeCheckpointRequest())) {
      await timer.span("save_checkpoint", () => checkpoints.savePeriodic(next, loopState(next)));
    } else if (next < total) {
      await checkpoints.maybeSaveRolling(next, loopState(next));
    }
    Object.assign(metrics, timer.metrics());
    metrics["batch_time"] = metrics["time/total"] ?? 0;
    session.metrics.logMetrics(metrics, step);
  }
  if (evaluator !== null && config.eval_every > 0) session.metrics.logMetrics(await evaluator.evaluate(trainingClient), total);
  await checkpoints.saveFinal(loopState(total));
  session.log.info("training completed");
  return { startStep, endStep: total, stoppedAt: total, outcome: "completed" };
}
