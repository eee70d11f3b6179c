// On-policy distillation's per-token advantages and teacher_kl metrics, by hand.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CompositeDistillationDataset,
  DistillationGroupBuilder,
  datasetIndexOf,
  incorporateTeacherKl,
  teacherKlAdvantages,
} from "../../src/distillation/onPolicy.ts";
import { EnvGroupBuilder, type Env, type RLDataset, type StepResult } from "../../src/rl/types.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import { modelInputFromInts, modelInputToInts } from "../../src/tinker/modelInput.ts";
import { tensorDataFromFloat32, tensorDataFromInt64 } from "../../src/tinker/tensorData.ts";
import type { Datum } from "../../src/tinker/types.ts";

const ln = Math.log;

function close(actual: readonly number[], expected: readonly number[], tol = 1e-6): void {
  assert.equal(actual.length, expected.length);
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]!) <= tol, `[${i}] ${a} vs ${expected[i]}`));
}

describe("teacherKlAdvantages", () => {
  it("adds −coef·mask·(lp_student − lp_teacher) to the advantages, and sums the reverse KL over sampled tokens", () => {
    const student = [0, ln(0.5), ln(0.25)];
    const teacher = [ln(0.1), ln(0.8), ln(0.05)];
    const mask = [0, 1, 1];
    const r = teacherKlAdvantages(student, mask, teacher, [0.5, 0.5, 0.5], 2, 0);
    close(r.advantages, [0.5, 0.5 - 2 * ln(0.5 / 0.8), 0.5 - 2 * ln(0.25 / 0.05)]);
    assert.ok(Math.abs(r.klSum - (ln(0.5 / 0.8) + ln(0.25 / 0.05))) < 1e-9);
    assert.equal(r.maskSum, 2);
  });

  it("with a discount, each token's advantage is the discounted sum of the KL terms from it on", () => {
    const r = teacherKlAdvantages([-1, -2, -3], [1, 1, 1], [-1.5, -1, -3.5], [0, 0, 0], 1, 0.5);
    // per-token terms −(lp_s − lp_t) = −0.5, 1, −0.5
    close(r.advantages, [-0.5 + 0.5 * (1 + 0.5 * -0.5), 1 + 0.5 * -0.5, -0.5]);
  });

  it("names mismatched lengths", () => {
    assert.throws(() => teacherKlAdvantages([0], [1, 1], [0], [0], 1, 0), /lengths differ/);
  });
});

class FixedTeacher implements SamplingClient {
  readonly baseModel: string;
  seen: number[][] = [];
  constructor(
    name: string,
    private readonly logprobs: number[],
  ) {
    this.baseModel = name;
  }
  async sample(): Promise<never> {
    throw new Error("not used");
  }
  async computeLogprobs(prompt: Parameters<SamplingClient["computeLogprobs"]>[0]): Promise<(number | null)[]> {
    this.seen.push(modelInputToInts(prompt));
    return [null, ...this.logprobs];
  }
}

function rlDatum(tokens: number[], logprobs: number[], mask: number[]): Datum {
  return {
    model_input: modelInputFromInts(tokens.slice(0, -1)),
    loss_fn_inputs: {
      target_tokens: tensorDataFromInt64(tokens.slice(1)),
      logprobs: tensorDataFromFloat32(logprobs),
      advantages: tensorDataFromFloat32(logprobs.map(() => 0)),
      mask: tensorDataFromFloat32(mask),
    },
  };
}

describe("incorporateTeacherKl", () => {
  it("routes datums to their dataset's teacher, rewrites advantages and reports teacher_kl overall and per dataset", async () => {
    // Dataset 0: one datum, prompt token then 2 sampled tokens. Dataset 1: two datums, 1 sampled token each.
    const d0 = rlDatum([5, 6, 7, 8], [0, -0.5, -1], [0, 1, 1]);
    const d1a = rlDatum([5, 9, 3], [0, -2], [0, 1]);
    const d1b = rlDatum([5, 9, 4], [0, -0.25], [0, 1]);
    const t0 = new FixedTeacher("t0", [-9, -1.5, -0.5]);
    const t1 = new FixedTeacher("t1", [-9, -1]);
    const metrics = await incorporateTeacherKl([d0, d1a, d1b], [0, 1, 1], [t0, t1], { coef: 1, discount: 0, concurrency: 2 });
    assert.deepEqual(t0.seen, [[5, 6, 7, 8]]);
    assert.deepEqual(t1.seen, [
      [5, 9, 3],
      [5, 9, 4],
    ]);
    // dataset 0: d = (−0.5 − −1.5), (−1 − −0.5) = 1, −0.5 → mean 0.25; dataset 1: −2 − −1 = −1, −0.25 − −1 = 0.75 → mean −0.125
    assert.ok(Math.abs(metrics["teacher_kl/dataset_0"]! - 0.25) < 1e-6);
    assert.ok(Math.abs(metrics["teacher_kl/dataset_1"]! - -0.125) < 1e-6);
    assert.ok(Math.abs(metrics["teacher_kl"]! - (1 - 0.5 - 1 + 0.75) / 4) < 1e-6);
    close(d0.loss_fn_inputs.advantages!.data, [0, -1, 0.5]);
    close(d1a.loss_fn_inputs.advantages!.data, [0, 1]);
    close(d1b.loss_fn_inputs.advantages!.data, [0, -0.75]);
  });

  it("fails clearly when a dataset has no teacher", async () => {
    await assert.rejects(
      incorporateTeacherKl([rlDatum([1, 2], [-1], [1])], [3], [], { coef: 1, discount: 0, concurrency: 1 }),
      /dataset 3, which has no teacher/,
    );
  });
});

class OneStepEnv implements Env {
  async initialObservation() {
    return { observation: modelInputFromInts([1]), stopCondition: [0] };
  }
  async step(): Promise<StepResult> {
    return { reward: 1, episodeDone: true, nextObservation: modelInputFromInts([]), nextStopCondition: [0], metrics: { correct: 1 } };
  }
}

class RewardingBuilder extends EnvGroupBuilder {
  async makeEnvs(): Promise<Env[]> {
    return [new OneStepEnv(), new OneStepEnv()];
  }
  override async computeGroupRewards() {
    return [
      { reward: 3, metrics: { judged: 1 } },
      { reward: 3, metrics: { judged: 1 } },
    ];
  }
  override loggingTags(): string[] {
    return ["arithmetic"];
  }
}

describe("DistillationGroupBuilder and CompositeDistillationDataset", () => {
  it("remove every task reward but keep metrics, and tag each group with its dataset", async () => {
    const b = new DistillationGroupBuilder(new RewardingBuilder(), 1);
    const [env] = await b.makeEnvs();
    const step = await env!.step([2]);
    assert.equal(step.reward, 0);
    assert.deepEqual(step.metrics, { correct: 1 });
    assert.deepEqual(await b.computeGroupRewards([], []), [
      { reward: 0, metrics: { judged: 1 } },
      { reward: 0, metrics: { judged: 1 } },
    ]);
    assert.deepEqual(b.loggingTags(), ["arithmetic", "dataset_1"]);
    assert.equal(datasetIndexOf(b.loggingTags()), 1);
    assert.throws(() => datasetIndexOf(["arithmetic"]), /exactly one "dataset_<i>" tag/);
  });

  it("batch i concatenates batch i of every dataset; the length is the shortest", () => {
    const ds = (n: number, groups: number): RLDataset => ({ length: n, getBatch: () => Array.from({ length: groups }, () => new RewardingBuilder()) });
    const c = new CompositeDistillationDataset([ds(5, 2), ds(3, 1)]);
    assert.equal(c.length, 3);
    assert.deepEqual(
      c.getBatch(0).map((b) => b.loggingTags().at(-1)),
      ["dataset_0", "dataset_0", "dataset_1"],
    );
  });
});
