// On-policy distillation (docs/cookbook-parity.md#kl-metrics-and-penalty): the RL loop with no task reward. The student samples,
// the teacher scores the student's own tokens, and each sampled token's advantage becomes
// −coef·(lp_student − lp_teacher): a per-token reverse-KL gradient. Several datasets may each
// have their own teacher; a group's dataset travels in its logging tags (`dataset_<i>`).
import { discountedFutureSum, fullSequenceInput } from "../rl/metrics.ts";
import {
  EnvGroupBuilder,
  type Action,
  type ActionExtra,
  type Env,
  type GroupReward,
  type InitialObservation,
  type InitialObservationOverflow,
  type RLDataset,
  type StepResult,
  type Trajectory,
} from "../rl/types.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import type { Datum } from "../tinker/types.ts";
import type { TokenGapRecord } from "../log/transcripts/tokenGaps.ts";
import { mapWithConcurrency } from "../async/concurrency.ts";

export const DATASET_TAG_PREFIX = "dataset_";

export function datasetTag(index: number): string {
  return `${DATASET_TAG_PREFIX}${index}`;
}

/** The dataset index in a group's tags; throws when none or several are present. */
export function datasetIndexOf(tags: readonly string[]): number {
  const found = tags.filter((t) => t.startsWith(DATASET_TAG_PREFIX)).map((t) => Number(t.slice(DATASET_TAG_PREFIX.length)));
  if (found.length !== 1 || !Number.isInteger(found[0])) {
    throw new Error(`on-policy distillation: a group must carry exactly one "${DATASET_TAG_PREFIX}<i>" tag, got [${tags.join(", ")}]`);
  }
  return found[0]!;
}

export interface TeacherKlToken {
  /** New advantages: old + (discounted) −coef·mask·(lp_student − lp_teacher). */
  advantages: number[];
  /** Σ mask·(lp_student − lp_teacher) and Σ mask. */
  klSum: number;
  maskSum: number;
}

/** The per-token arithmetic for one datum (pure; hand-checked in the tests). */
export function teacherKlAdvantages(
  sampledLogprobs: readonly number[],
  mask: readonly number[],
  teacherLogprobs: readonly number[],
  advantages: readonly number[],
  coef: number,
  discount: number,
): TeacherKlToken {
  const n = sampledLogprobs.length;
  if (mask.length !== n || teacherLogprobs.length !== n || advantages.length !== n) {
    throw new Error(
      `teacherKlAdvantages: lengths differ (logprobs ${n}, mask ${mask.length}, teacher ${teacherLogprobs.length}, advantages ${advantages.length})`,
    );
  }
  let klSum = 0;
  let maskSum = 0;
  let extra = new Array<number>(n);
  for (let t = 0; t < n; t++) {
    const m = mask[t]!;
    const d = (sampledLogprobs[t]! - teacherLogprobs[t]!) * m;
    klSum += d;
    maskSum += m;
    extra[t] = -coef * m * d;
  }
  if (discount > 0) extra = discountedFutureSum(extra, discount);
  return { advantages: advantages.map((a, t) => a + extra[t]!), klSum, maskSum };
}

function field(datum: Datum, key: string): number[] {
  const tensor = datum.loss_fn_inputs[key];
  if (tensor === undefined)
    throw new Error(`on-policy distillation: datum has no loss_fn_inputs.${key} (present: ${Object.keys(datum.loss_fn_inputs).join(", ")})`);
  return tensor.data;
}

export interface TeacherKlOptions {
  coef: number;
  discount: number;
  /** Teacher calls in flight at once. */
  concurrency: number;
  /** Receives every datum's sampled tokens with the student's and the teacher's log-prob of each. */
  onTokens?: (records: TokenGapRecord[]) => void;
  /** Token ids → text for the records' pieces. */
  decode?: (tokens: number[]) => string;
}

/** The sampled (masked) positions of a datum as a token-gap record. */
export function tokenGapRecord(datum: Datum, teacherLogprobs: readonly number[], decode?: (tokens: number[]) => string): TokenGapRecord {
  const mask = field(datum, "mask");
  const targets = field(datum, "target_tokens");
  const student = field(datum, "logprobs");
  const positions = mask.flatMap((m, t) => (m > 0 ? [t] : []));
  const tokens = positions.map((t) => targets[t]!);
  return {
    // Position t predicts token t + 1, so the first sampled token follows ob_len prompt tokens.
    ob_len: positions.length > 0 ? positions[0]! + 1 : 0,
    tokens,
    ...(decode !== undefined ? { pieces: tokens.map((tok) => decode([tok])) } : {}),
    student: positions.map((t) => student[t]!),
    teacher: positions.map((t) => teacherLogprobs[t]!),
  };
}

/**
 * Adds the teacher-KL advantages to every datum in place: datum d is scored by
 * `teachers[datasetIndexD[d]]`. Returns `teacher_kl` (mean over sampled tokens of
 * lp_student − lp_teacher) and `teacher_kl/dataset_<i>` for each dataset present.
 */
export async function incorporateTeacherKl(
  dataD: Datum[],
  datasetIndexD: readonly number[],
  teachers: readonly SamplingClient[],
  options: TeacherKlOptions,
): Promise<Record<string, number>> {
  if (dataD.length !== datasetIndexD.length) throw new Error(`incorporateTeacherKl: ${dataD.length} datums but ${datasetIndexD.length} dataset indices`);
  const teacherLogprobsD = await mapWithConcurrency(dataD, options.concurrency, async (datum, d) => {
    const i = datasetIndexD[d]!;
    const teacher = teachers[i];
    if (teacher === undefined)
      throw new Error(`on-policy distillation: datum ${d} belongs to dataset ${i}, which has no teacher (${teachers.length} configured)`);
    const lps = await teacher.computeLogprobs(fullSequenceInput(datum));
    return lps.slice(1).map((v) => v ?? 0);
  });
  options.onTokens?.(dataD.map((datum, d) => tokenGapRecord(datum, teacherLogprobsD[d]!, options.decode)));
  const sums = new Map<number, { kl: number; mask: number }>();
  let kl = 0;
  let mask = 0;
  dataD.forEach((datum, d) => {
    const r = teacherKlAdvantages(
      field(datum, "logprobs"),
      field(datum, "mask"),
      teacherLogprobsD[d]!,
      field(datum, "advantages"),
      options.coef,
      options.discount,
    );
    datum.loss_fn_inputs.advantages = { ...datum.loss_fn_inputs.advantages!, data: r.advantages };
    const i = datasetIndexD[d]!;
    const s = sums.get(i) ?? { kl: 0, mask: 0 };
    s.kl += r.klSum;
    s.mask += r.maskSum;
    sums.set(i, s);
    kl += r.klSum;
    mask += r.maskSum;
  });
  const metrics: Record<string, number> = { teacher_kl: mask > 0 ? kl / mask : 0 };
  for (const [i, s] of [...sums].sort((a, b) => a[0] - b[0])) metrics[`teacher_kl/${datasetTag(i)}`] = s.mask > 0 ? s.kl / s.mask : 0;
  return metrics;
}

/** An env whose steps earn no reward; its metrics (e.g. `correct`) are still logged. */
class NoRewardEnv implements Env {
  constructor(private readonly inner: Env) {}
  initialObservation(): Promise<InitialObservation | InitialObservationOverflow> {
    return this.inner.initialObservation();
  }
  async step(action: Action, extra?: ActionExtra): Promise<StepResult> {
    const result = await this.inner.step(action, extra);
    return { ...result, reward: 0 };
  }
}

/**
 * Wraps a dataset's group builder for distillation: the same prompts and metrics, no task reward
 * (step or group), and the tag `dataset_<i>` that routes its datums to teacher i.
 */
export class DistillationGroupBuilder extends EnvGroupBuilder {
  constructor(
    readonly inner: EnvGroupBuilder,
    readonly datasetIndex: number,
  ) {
    super();
  }
  async makeEnvs(): Promise<Env[]> {
    return (await this.inner.makeEnvs()).map((e) => new NoRewardEnv(e));
  }
  override async computeGroupRewards(trajectories: Trajectory[], envs: Env[]): Promise<GroupReward[]> {
    // The inner builder's group metrics are kept; its rewards are not.
    const inner = await this.inner.computeGroupRewards(trajectories, envs);
    return inner.map((g) => ({ reward: 0, metrics: g.metrics }));
  }
  override cleanup(): Promise<void> {
    return this.inner.cleanup();
  }
  override loggingTags(): string[] {
    return [...this.inner.loggingTags().filter((t) => !t.startsWith(DATASET_TAG_PREFIX)), datasetTag(this.datasetIndex)];
  }
}

/**
 * Batch i holds batch i of every dataset, each wrapped for distillation; the length is the
 * shortest dataset's.
 */
export class CompositeDistillationDataset implements RLDataset {
  constructor(readonly datasets: readonly RLDataset[]) {
    if (datasets.length === 0) throw new Error("on-policy distillation needs at least one dataset");
  }
  get length(): number {
    return Math.min(...this.datasets.map((d) => d.length));
  }
  getBatch(index: number): EnvGroupBuilder[] {
    return this.datasets.flatMap((d, i) => d.getBatch(index).map((b) => new DistillationGroupBuilder(b, i)));
  }
}
