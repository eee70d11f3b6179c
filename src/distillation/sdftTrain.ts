// The SDFT loop (the cookbook's sdft.train): each step the student — the current weights — answers
// a batch of bare questions; the teacher — the run's starting weights, frozen as a sampler — reads
// each answer after the question with its golden answer demonstrated; the student is trained
// toward the teacher on its own tokens (top-K forward KL through soft cross_entropy targets, or
// per-token importance sampling with advantage lp_teacher − lp_student when topk = 0). Checkpoints
// record the next batch and the pinned teacher, so a resumed run trains against the same teacher.
import { z } from "zod";
import { inGroup } from "../config/groups.ts";
import { mixSeed } from "../random/seeds.ts";
import { computeScheduleLrMultiplier } from "../hyperparams.ts";
import type { StepTimer } from "../log/timing.ts";
import { resolveRendererName } from "../modelInfo.ts";
import type { Renderer } from "../renderers/base.ts";
import { RLTestSetEvaluator } from "../rl/evaluator.ts";
import type { QAProblem } from "../rl/envs/problems.ts";
import type { RLDataset } from "../rl/types.ts";
import type { SamplingClient, TrainingClient } from "../tinker/clients.ts";
import { modelInputLength } from "../tinker/modelInput.ts";
import { CheckpointManager } from "../training/checkpoints.ts";
import { adamParams, lrScheduleFields, overrideDefaults, trainingLoopFields } from "../training/config.ts";
import { openTrainingClient } from "../training/open.ts";
import { positionOf, resumeStep } from "../training/position.ts";
import { frozenStartingWeights } from "../training/startingWeights.ts";
import { EXITED, finalEvaluationDue, runSynchronousSteps, type LoopResult } from "../training/cadence.ts";
import { withTrainingRun, type TrainingContext, type TrainingRunOptions } from "../training/run.ts";
import { mapWithConcurrency } from "../async/concurrency.ts";
import type { SdftPrompts } from "./sdftData.ts";
import { readAsTeacher, sdftDatum } from "./sdftStep.ts";

export const SdftConfigSchema = overrideDefaults(
  z.object({
    ...trainingLoopFields,
    ...lrScheduleFields,
    ...inGroup("optimizer", {
      max_steps: z.number().int().positive().default(100).describe("Training steps (batches of the question stream)"),
      topk: z
        .number()
        .int()
        .min(0)
        .default(20)
        .describe("Teacher targets per position: top-K forward KL via soft cross_entropy (0 = importance sampling with advantage lp_teacher − lp_student)"),
    }),
    ...inGroup("data", {
      groups_per_batch: z.number().int().positive().default(32).describe("Questions per step"),
      group_size: z.number().int().positive().default(1).describe("Student answers sampled per question"),
      max_tokens: z.number().int().positive().default(256).describe("Longest student answer"),
      temperature: z.number().positive().default(1).describe("Student sampling temperature"),
    }),
    ...inGroup("evaluation", {
      eval_every: z.number().int().min(0).default(10).describe("Score the student on the held-out questions every N steps and at the end (0 = never)"),
      eval_temperature: z.number().positive().default(1).describe("Sampling temperature of the held-out evaluation"),
    }),
    ...inGroup("advanced", {
      teacher_concurrency: z.number().int().positive().default(32).describe("Teacher calls in flight at once"),
    }),
  }),
  { learning_rate: 2e-5 },
);
export type SdftConfig = z.output<typeof SdftConfigSchema>;

/** Questions with golden answers: the training stream, the held-out set, and both views of each. */
export interface SdftTask {
  /** Training questions of batch `index` (a pure function of it, so resumes see the same data). */
  trainBatch(index: number, size: number): QAProblem[];
  prompts(problem: QAProblem): SdftPrompts;
  /** Held-out questions as graded RL test sets: the student's view and the teacher's. */
  testSet(renderer: Renderer): { student: RLDataset; teacher: RLDataset } | null;
}

export type SdftRunResult = LoopResult;

export async function main(config: SdftConfig, task: SdftTask, renderer: Renderer, options: TrainingRunOptions = {}): Promise<SdftRunResult> {
  return withTrainingRun(config, { defaultRecipeName: "sdft", ...options }, (run) => runSdft(config, task, renderer, run), EXITED);
}

interface StepData {
  metrics: Record<string, number>;
}

/** Samples the batch with the student, has the teacher read every answer, trains one step. */
async function sdftStep(
  config: SdftConfig,
  task: SdftTask,
  renderer: Renderer,
  trainingClient: TrainingClient,
  teacher: SamplingClient,
  step: number,
  lr: number,
  timer: StepTimer,
): Promise<StepData> {
  const student = await timer.span("student_snapshot", () => trainingClient.saveWeightsAndGetSamplingClient());
  const problems = task.trainBatch(step, config.groups_per_batch);
  const stop = renderer.getStopSequences();
  const built = await timer.span("sample_and_teacher", () =>
    mapWithConcurrency(problems, config.teacher_concurrency, async (problem, i) => {
      const prompts = task.prompts(problem);
      const studentPrompt = renderer.buildGenerationPrompt(prompts.student);
      const teacherPrompt = renderer.buildGenerationPrompt(prompts.teacher);
      const response = await student.sample(studentPrompt, config.group_size, {
        max_tokens: config.max_tokens,
        temperature: config.temperature,
        stop,
        seed: mixSeed(config.seed, step, i),
      });
      const out = [];
      for (const seq of response.sequences) {
        if (seq.tokens.length === 0) continue;
        const logprobs = seq.logprobs;
        if (logprobs === undefined || logprobs === null) throw new Error("SDFT: the student's sampler returned no logprobs");
        const reading = await readAsTeacher(teacher, teacherPrompt, seq.tokens, config.topk);
        out.push(sdftDatum(studentPrompt, modelInputLength(teacherPrompt), { tokens: seq.tokens, logprobs }, reading, config.topk));
      }
      return out;
    }),
  );
  const items = built.flat();
  if (items.length === 0) throw new Error(`SDFT step ${step}: the student produced no tokens for any question`);
  const tokens = items.reduce((s, d) => s + d.tokens, 0);
  const klSum = items.reduce((s, d) => s + d.klSum, 0);
  const lossFn = config.topk > 0 ? "cross_entropy" : "importance_sampling";
  await timer.span("train_step", async () => {
    const fb = await trainingClient.forwardBackward(
      items.map((d) => d.datum),
      lossFn,
    );
    const opt = await trainingClient.optimStep(adamParams(config, lr));
    await fb.result();
    await opt.result();
  });
  return {
    metrics: { teacher_kl: tokens > 0 ? klSum / tokens : 0, num_tokens: tokens, num_sequences: items.length, ac_tokens_per_sequence: tokens / items.length },
  };
}

function evaluators(config: SdftConfig, task: SdftTask, renderer: Renderer): { student: RLTestSetEvaluator; teacher: RLTestSetEvaluator } | null {
  const sets = task.testSet(renderer);
  if (sets === null) return null;
  return {
    student: new RLTestSetEvaluator(sets.student, config.max_tokens, { name: "test", temperature: config.eval_temperature }),
    teacher: new RLTestSetEvaluator(sets.teacher, config.max_tokens, { name: "teacher", temperature: config.eval_temperature }),
  };
}

async function runSdft(config: SdftConfig, task: SdftTask, renderer: Renderer, run: TrainingContext): Promise<SdftRunResult> {
  const total = config.max_steps;
  const { trainingClient, resume, startStep } = await openTrainingClient(run, config, {
    stepOf: (record) => resumeStep(record, total, `${run.logDir}/checkpoints.jsonl`),
    rendererName: resolveRendererName(config.model_name, config.renderer_name),
  });
  // The teacher: the starting weights (shown a demonstration), pinned so they never move.
  const pinned = await frozenStartingWeights(run, config, "teacher", resume);
  run.log.info(`teacher: the starting weights shown a demonstration (${pinned.description})`);
  const teacher = pinned.sampler;
  const evals = config.eval_every > 0 ? evaluators(config, task, renderer) : null;
  const loopState = (step: number) => ({ ...positionOf(step, total), ...pinned.record });
  // The demonstrated teacher's score on the held-out questions: what the student is pulled toward.
  const teacherScore = evals !== null && startStep < total ? await evals.teacher.evaluate(teacher) : {};
  run.log.info(
    `SDFT on steps ${startStep}..${total - 1} (${config.topk > 0 ? `top-${config.topk} soft targets` : "importance sampling, advantage lp_teacher − lp_student"})`,
  );
  const trainOneStep = async (step: number, timer: StepTimer): Promise<Record<string, number>> => {
    const metrics: Record<string, number> = {};
    if (evals !== null && step % config.eval_every === 0) {
      Object.assign(
        metrics,
        teacherScore,
        await timer.span("evaluation", async () => evals.student.evaluate(await trainingClient.saveWeightsAndGetSamplingClient())),
      );
    }
    const lr = config.learning_rate * computeScheduleLrMultiplier(config.lr_schedule, step, total);
    const data = await sdftStep(config, task, renderer, trainingClient, teacher, step, lr, timer);
    return Object.assign(metrics, data.metrics, { learning_rate: lr, progress: (step + 1) / total });
  };
  return runSynchronousSteps({
    run,
    checkpoints: new CheckpointManager(trainingClient, config, { logDir: run.logDir, restClient: run.serviceClient.createRestClient(), log: run.log }),
    startStep,
    endStep: total,
    loopState,
    step: trainOneStep,
    // The weights after the last step, scored like every other evaluation row.
    finalEvaluation:
      evals !== null && finalEvaluationDue(config.eval_every, 1)
        ? async () => ({ ...teacherScore, ...(await evals.student.evaluate(await trainingClient.saveWeightsAndGetSamplingClient())) })
        : null,
  });
}
