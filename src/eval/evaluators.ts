// Inline evaluators run by the training loops (docs/cookbook-parity.md#evaluation-framework): some score the live training client
// (e.g. held-out NLL through forward), others need a sampler pinned to a snapshot of the weights.
// The loops call runEvaluators just before submitting a step, so every evaluator sees the
// weights produced by the step before it.
import type { Decode } from "../log/transcripts/types.ts";
import type { SamplingClient, TrainingClient } from "../tinker/clients.ts";

/** Flat metric map; evaluators choose their own keys (conventionally under `test/`). */
export type EvalMetrics = Record<string, number>;

export interface TrainingClientEvaluator {
  readonly kind: "training_client";
  readonly name?: string;
  evaluate(trainingClient: TrainingClient): Promise<EvalMetrics>;
}

/** Where an evaluator may leave transcripts for the iteration it ran at (the RL loop passes it). */
export interface EvalContext {
  logPath: string;
  iteration: number;
  numGroupsToLog: number;
  exportRollouts: boolean;
  decode?: Decode;
}

/**
 * Scores a sampler: the one evaluator shape of the SL loop, the RL loop and `cookbook eval`.
 * `kind` may be left out (a sampler evaluator is the default).
 */
export interface SamplingClientEvaluator {
  readonly kind?: "sampling_client";
  readonly name?: string;
  evaluate(samplingClient: SamplingClient, context?: EvalContext): Promise<EvalMetrics>;
}

export type Evaluator = TrainingClientEvaluator | SamplingClientEvaluator;

/** Makes an evaluator when training starts (after the dataset and model are known). */
export type EvaluatorBuilder = () => Evaluator | Promise<Evaluator>;

export function isTrainingClientEvaluator(evaluator: Evaluator): evaluator is TrainingClientEvaluator {
  return evaluator.kind === "training_client";
}

export async function buildEvaluators(builders: readonly EvaluatorBuilder[]): Promise<Evaluator[]> {
  const out: Evaluator[] = [];
  for (const build of builders) out.push(await build());
  return out;
}

export interface RunEvaluatorsOptions {
  /** Called once, on first need, for a sampler of the current weights (default: the training client's snapshot). */
  getSamplingClient?: () => Promise<SamplingClient>;
}

/**
 * Runs evaluators in order and merges their metrics (a later evaluator's key wins). Sampling
 * evaluators share one fresh sampler snapshot, made only if one of them is present, so the
 * weights they see cannot move while they sample.
 */
export async function runEvaluators(
  evaluators: readonly Evaluator[],
  trainingClient: TrainingClient,
  options: RunEvaluatorsOptions = {},
): Promise<EvalMetrics> {
  const metrics: EvalMetrics = {};
  let sampler: Promise<SamplingClient> | null = null;
  const getSampler = options.getSamplingClient ?? (() => trainingClient.saveWeightsAndGetSamplingClient());
  for (const evaluator of evaluators) {
    let result: EvalMetrics;
    if (isTrainingClientEvaluator(evaluator)) {
      result = await evaluator.evaluate(trainingClient);
    } else {
      sampler ??= getSampler();
      result = await evaluator.evaluate(await sampler);
    }
    Object.assign(metrics, result);
  }
  return metrics;
}
