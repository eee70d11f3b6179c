// Off-policy top-K soft targets and the SDFT loss inputs, against values worked out by hand on a
// toy vocabulary.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mapWithConcurrency } from "../../src/async/concurrency.ts";
import { sdftAdvantages, sdftSoftTargets, sdftTeacherMessages } from "../../src/distillation/sdft.ts";
import { softTargetDatum, softTargetsFromTopK, type TopKRow } from "../../src/distillation/softTargets.ts";
import { resolveLoss, tokenLoss } from "../../src/engine/model/losses.ts";
import type { SampleOptions, SamplingClient } from "../../src/tinker/clients.ts";
import { modelInputFromInts, modelInputToInts } from "../../src/tinker/modelInput.ts";
import { tensorDataFromFloat32, tensorDataFromInt64, tensorDataToNumbers, tensorShape } from "../../src/tinker/tensorData.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../../src/tinker/types.ts";

const ln = Math.log;

function close(actual: ArrayLike<number>, expected: number[], tol = 1e-6): void {
  assert.equal(actual.length, expected.length, `length ${actual.length} vs ${expected.length}`);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i]! - expected[i]!) <= tol, `[${i}] ${actual[i]} vs ${expected[i]}`);
}

describe("softTargetsFromTopK (toy vocabulary of 6 tokens)", () => {
  // Teacher distributions at the two trained positions: p = (.5, .3, .1, .1, 0, 0) over tokens
  // (4, 2, 5, 1, …) and (.6, .2, .2) over tokens (3, 0, 1); rows listed out of order on purpose.
  const rows: TopKRow[] = [
    null,
    [
      [2, ln(0.3)],
      [4, ln(0.5)],
      [5, ln(0.1)],
      [1, ln(0.1)],
    ],
    [
      [1, ln(0.2)],
      [3, ln(0.6)],
    ],
    [[0, ln(0.9)]],
  ];

  it("K = 3 keeps the three likeliest tokens and renormalises their probabilities", () => {
    const soft = softTargetsFromTopK(rows, [true, true, false], [9, 9, 7], 3);
    // position 0: .5, .3, .1 → /0.9; position 1: .6, .2 and one padded column (token 3 again, weight 0)
    assert.deepEqual([...soft.tokens], [4, 2, 5, 3, 1, 3, 7, 7, 7]);
    close(soft.weights, [0.5 / 0.9, 0.3 / 0.9, 0.1 / 0.9, 0.6 / 0.8, 0.2 / 0.8, 0, 0, 0, 0]);
  });

  it("K = 1 is the teacher's argmax as a hard target", () => {
    const soft = softTargetsFromTopK(rows, [true, true, true], [9, 9, 9], 1);
    assert.deepEqual([...soft.tokens], [4, 3, 0]);
    close(soft.weights, [1, 1, 1]);
  });

  it("with soft targets, the cross-entropy at a position is −Σ w_k log q_k; its gradient w.r.t. the logits is q·Σw − w", () => {
    // Student logits over the 6 tokens, and the engine's per-token CE applied to each column.
    const logits = [0.2, -1, 0.5, 1.5, 0.1, -0.3];
    const lse = ln(logits.reduce((s, z) => s + Math.exp(z), 0));
    const q = logits.map((z) => Math.exp(z - lse));
    const soft = softTargetsFromTopK(rows, [true, false, false], [0, 0, 0], 3);
    const ce = resolveLoss("cross_entropy", undefined);
    let loss = 0;
    const grad = new Array<number>(6).fill(0);
    for (let k = 0; k < 3; k++) {
      const tok = soft.tokens[k]!;
      const w = soft.weights[k]!;
      const t = tokenLoss(ce, logits[tok]! - lse, { weight: w, advantage: 0, samplerLogprob: 0 });
      loss += t.loss;
      for (let j = 0; j < 6; j++) grad[j] += t.dlp * ((j === tok ? 1 : 0) - q[j]!);
    }
    const byHand = -((0.5 / 0.9) * (logits[4]! - lse) + (0.3 / 0.9) * (logits[2]! - lse) + (0.1 / 0.9) * (logits[5]! - lse));
    assert.ok(Math.abs(loss - byHand) < 1e-6);
    const w = [0, 0, 0.3 / 0.9, 0, 0.5 / 0.9, 0.1 / 0.9];
    close(
      grad,
      q.map((qj, j) => qj - w[j]!),
      1e-6,
    );
  });

  it("names a missing row and a bad K", () => {
    assert.throws(() => softTargetsFromTopK([null, null], [true], [0], 2), /row 1 \(target position 0\) is empty/);
    assert.throws(() => softTargetsFromTopK(rows, [true], [0], 0), /n_teacher_targets must be a positive integer, got 0/);
    assert.throws(() => softTargetsFromTopK([null], [true, true], [0, 0], 2), /1 top-k rows for 2 target positions/);
  });
});

class FakeTeacher implements SamplingClient {
  readonly baseModel = "toy-teacher";
  seen: { tokens: number[]; options?: SampleOptions }[] = [];
  constructor(private readonly rows: TopKRow[]) {}
  async sample(prompt: ModelInput, _n: number, _params: SamplingParams, options?: SampleOptions): Promise<SampleResponse> {
    this.seen.push({ tokens: modelInputToInts(prompt), options });
    return {
      sequences: [{ tokens: [0], stop_reason: "length" }],
      topk_prompt_logprobs: this.rows.map((r) => (r === null ? null : r.map(([t, lp]) => [t, lp] as [number, number]))),
    };
  }
  async computeLogprobs(): Promise<(number | null)[]> {
    throw new Error("not used");
  }
}

describe("softTargetDatum", () => {
  it("scores input + last target, aligns row t+1 with target t and keeps untrained positions at weight 0", async () => {
    // Sequence 1 2 3 4: the datum has input [1, 2, 3], targets [2, 3, 4], weights [0, 1, 1].
    const teacher = new FakeTeacher([
      null,
      [
        [2, ln(0.7)],
        [5, ln(0.1)],
      ],
      [
        [3, ln(0.4)],
        [1, ln(0.4)],
      ],
      [
        [4, ln(0.25)],
        [0, ln(0.75)],
      ],
    ]);
    const datum = {
      model_input: modelInputFromInts([1, 2, 3]),
      loss_fn_inputs: { target_tokens: tensorDataFromInt64([2, 3, 4]), weights: tensorDataFromFloat32([0, 1, 1]) },
    };
    const out = await softTargetDatum(teacher, datum, 2);
    assert.deepEqual(teacher.seen[0]!.tokens, [1, 2, 3, 4]);
    assert.deepEqual(teacher.seen[0]!.options, { includePromptLogprobs: true, topkPromptLogprobs: 2 });
    assert.deepEqual(tensorShape(out.loss_fn_inputs["target_tokens"]!), [3, 2]);
    assert.deepEqual(tensorDataToNumbers(out.loss_fn_inputs["target_tokens"]!), [2, 2, 3, 1, 0, 4]);
    close(tensorDataToNumbers(out.loss_fn_inputs["weights"]!), [0, 0, 0.5, 0.5, 0.75, 0.25]);
    assert.deepEqual(modelInputToInts(out.model_input), [1, 2, 3]);
  });
});

describe("SDFT", () => {
  it("teacher prompt: the question with the golden answer as a demonstration", () => {
    const m = sdftTeacherMessages("What is 2 + 2?", "4", { template: "{question} (e.g. {golden_answer})", systemPrompt: "Be brief." });
    assert.deepEqual(m, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is 2 + 2? (e.g. 4)" },
    ]);
    assert.throws(() => sdftTeacherMessages("q", "a", { template: "no placeholder" }), /must contain \{question\}/);
  });

  it("topk = 0: advantage lp_teacher − lp_student on completion tokens, and the importance-sampling loss at ratio 1 is −Σ A", () => {
    // Datum: 2 prompt positions (mask 0) then 3 completion tokens.
    const student = [0, 0, ln(0.5), ln(0.25), ln(0.8)];
    const mask = [0, 0, 1, 1, 1];
    const teacher = [ln(0.9), ln(0.5), ln(0.2)];
    const r = sdftAdvantages(student, mask, teacher);
    close(r.advantages, [0, 0, ln(0.9 / 0.5), ln(0.5 / 0.25), ln(0.2 / 0.8)]);
    assert.equal(r.tokens, 3);
    const is = resolveLoss("importance_sampling", undefined);
    let loss = 0;
    for (let t = 0; t < 5; t++) loss += tokenLoss(is, student[t]!, { weight: 1, advantage: r.advantages[t]!, samplerLogprob: student[t]! }).loss;
    assert.ok(Math.abs(loss - -(ln(1.8) + ln(2) + ln(0.25))) < 1e-6);
    assert.throws(() => sdftAdvantages(student, mask, teacher.slice(0, 2)), /scored 2 completion tokens but the datum has more/);
    assert.throws(() => sdftAdvantages(student, mask, [...teacher, -1]), /scored 4 completion tokens but the datum has 3/);
  });

  it("top-K: completion token j reads teacher row teacherPromptLength + j", () => {
    // Teacher sequence: 3 prompt tokens + 2 completion tokens → rows 3 and 4 score the completion.
    const rows: TopKRow[] = [
      null,
      [[9, 0]],
      [[9, 0]],
      [
        [7, ln(0.6)],
        [8, ln(0.2)],
      ],
      [
        [1, ln(0.5)],
        [2, ln(0.5)],
      ],
    ];
    const soft = sdftSoftTargets(rows, 3, [0, 1, 1], [11, 7, 1], 2);
    assert.deepEqual([...soft.tokens], [11, 11, 7, 8, 1, 2]);
    close(soft.weights, [0, 0, 0.75, 0.25, 0.5, 0.5]);
  });
});

describe("mapWithConcurrency", () => {
  it("keeps order and never runs more than the limit at once", async () => {
    let running = 0;
    let peak = 0;
    const out = await mapWithConcurrency([5, 1, 4, 2, 3], 2, async (x) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, x));
      running--;
      return x * 10;
    });
    assert.deepEqual(out, [50, 10, 40, 20, 30]);
    assert.equal(peak, 2);
  });
});
