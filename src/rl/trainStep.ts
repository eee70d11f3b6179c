// One RL optimization step over assembled data (docs/cookbook-parity.md#advantages-and-datum-assembly): minibatch preparation (metrics,
// advantages, datums, optional KL penalty) and the pipelined forward_backward + optim_step calls.
import type { SamplingClient, TinkerFuture, TrainingClient } from "../tinker/clients.ts";
import type { AdamParams, Datum, ForwardBackwardOutput, LossFnName, OptimStepResponse } from "../tinker/types.ts";
import { assembleTrainingData, computeAdvantages, removeMask, type DatumMetadata } from "./dataProcessing.ts";
import { incorporateKlPenalty } from "./metrics.ts";
import { computeTrajectoryMetrics } from "./trajectoryMetrics.ts";
import type { TrajectoryGroup } from "./types.ts";

/** `n` contiguous slices whose sizes differ by at most one (the first ones are larger). */
export function splitList<T>(items: readonly T[], n: number): T[][] {
  if (n <= 0) throw new Error(`splitList: cannot split into ${n} parts`);
  const out: T[][] = [];
  const base = Math.floor(items.length / n);
  const extra = items.length % n;
  let start = 0;
  for (let i = 0; i < n; i++) {
    const size = base + (i < extra ? 1 : 0);
    out.push(items.slice(start, start + size));
    start += size;
  }
  return out;
}

export function trainingLogprobsFromOutput(output: ForwardBackwardOutput): number[][] {
  return output.loss_fn_outputs.map((o, i) => {
    const lp = o.logprobs;
    if (lp === undefined) throw new Error(`forward_backward output ${i} has no logprobs (keys: ${Object.keys(o).join(", ")})`);
    return lp.data;
  });
}

export interface TrainStepOptions {
  /** Every substep's optim_step (RL keeps the learning rate constant). */
  adam: AdamParams;
  numSubsteps: number;
  lossFn: LossFnName;
  lossFnConfig?: Record<string, number> | null;
}

/**
 * Splits the data into `numSubsteps` chunks; each gets a forward_backward and an optim_step,
 * and the next chunk's pair is enqueued before the current results are awaited, so the server
 * never idles between them. Returns the trainer's logprobs per datum; optimizer metrics of the
 * last step are merged into `metrics`.
 */
export async function trainStep(
  dataD: readonly Datum[],
  trainingClient: TrainingClient,
  options: TrainStepOptions,
  metrics?: Record<string, number>,
): Promise<number[][]> {
  const batches = splitList(dataD, Math.min(options.numSubsteps, dataD.length)).filter((b) => b.length > 0);
  if (batches.length === 0) return [];
  const adam = options.adam;
  const config = options.lossFnConfig ?? undefined;
  const enqueue = async (batch: readonly Datum[]) => {
    const fb = await trainingClient.forwardBackward(batch.map(removeMask), options.lossFn, config);
    const opt = await trainingClient.optimStep(adam);
    return { fb, opt };
  };
  const logprobsD: number[][] = [];
  let last: OptimStepResponse | null = null;
  let current: { fb: TinkerFuture<ForwardBackwardOutput>; opt: TinkerFuture<OptimStepResponse> } = await enqueue(batches[0]);
  for (let i = 0; i < batches.length; i++) {
    const next = i + 1 < batches.length ? await enqueue(batches[i + 1]) : null;
    logprobsD.push(...trainingLogprobsFromOutput(await current.fb.result()));
    last = await current.opt.result();
    if (next !== null) current = next;
  }
  if (metrics !== undefined && last?.metrics !== undefined) Object.assign(metrics, last.metrics);
  return logprobsD;
}

export interface PreparedMinibatch {
  dataD: Datum[];
  metrics: Record<string, number>;
  advantagesP: number[][];
}

/** Where the datums of a hook call belong: the iteration (batch index) whose transcripts they extend. */
export interface AdvantageHookInfo {
  iteration: number;
  /** The run directory, for hooks that add to the iteration's transcripts. */
  logPath?: string;
  /** Token ids → text, when the loop has a tokenizer. */
  decode?: (tokens: number[]) => string;
}

/**
 * Per-token advantage shaping after the KL penalty (e.g. on-policy distillation's teacher KL):
 * rewrites the datums' advantages in place; datum d came from group metadataD[d].groupIdx, whose
 * logging tags are taglistP[groupIdx]. Returns metrics to log.
 */
export type AdvantageHook = (
  dataD: Datum[],
  metadataD: readonly DatumMetadata[],
  taglistP: readonly string[][],
  info: AdvantageHookInfo,
) => Promise<Record<string, number>>;

/** Trajectory metrics, centred advantages, datums, the KL penalty when configured, then the advantage hook. */
export async function prepareMinibatch(
  groupsP: readonly TrajectoryGroup[],
  taglistP: readonly string[][],
  kl: { referenceClient: SamplingClient | null; coef: number; discount: number },
  advantageHook: AdvantageHook | null = null,
  info: AdvantageHookInfo = { iteration: 0 },
): Promise<PreparedMinibatch> {
  const metrics = computeTrajectoryMetrics(groupsP, taglistP);
  const advantagesP = computeAdvantages(groupsP);
  const { dataD, metadataD } = assembleTrainingData(groupsP, advantagesP);
  if (kl.coef > 0 && kl.referenceClient !== null && dataD.length > 0) {
    Object.assign(metrics, await incorporateKlPenalty(dataD, kl.referenceClient, kl.coef, kl.discount));
  }
  if (advantageHook !== null && dataD.length > 0) Object.assign(metrics, await advantageHook(dataD, metadataD, taglistP, info));
  return { dataD, metrics, advantagesP };
}
