// SDFT's per-completion datums against values worked out by hand: the layout of prompt and
// completion positions, importance-sampling advantages lp_teacher − lp_student, the reverse-KL
// estimate, and the teacher's top-K rows landing on the completion positions as soft targets.
import assert from "node:assert/strict";
import { test } from "node:test";
import { completionLayout, sdftDatum } from "../../src/distillation/sdftStep.ts";
import { sdftPrompts, sdftTrainBatch } from "../../src/distillation/sdftData.ts";
import { modelInputFromInts } from "../../src/tinker/modelInput.ts";
import { tensorDataToNumbers, tensorShape } from "../../src/tinker/tensorData.ts";

test("completion layout: next-token targets, the mask covers exactly the completion's targets", () => {
  const { inputs, targets, mask } = completionLayout([10, 11, 12], [20, 21]);
  assert.deepEqual(inputs, [10, 11, 12, 20]);
  assert.deepEqual(targets, [11, 12, 20, 21]);
  assert.deepEqual([...mask], [0, 0, 1, 1]);
  assert.throws(() => completionLayout([1], []), /completion is empty/);
});

test("topk = 0: importance-sampling inputs with advantage lp_teacher − lp_student on the completion", () => {
  const prompt = modelInputFromInts([10, 11, 12]);
  const d = sdftDatum(prompt, 7, { tokens: [20, 21], logprobs: [-1, -2] }, { logprobs: [-0.5, -3] }, 0);
  assert.deepEqual(tensorDataToNumbers(d.datum.loss_fn_inputs.target_tokens!), [11, 12, 20, 21]);
  assert.deepEqual(tensorDataToNumbers(d.datum.loss_fn_inputs.logprobs!), [0, 0, -1, -2]);
  assert.deepEqual(tensorDataToNumbers(d.datum.loss_fn_inputs.advantages!), [0, 0, 0.5, -1]);
  // Σ (lp_student − lp_teacher) = (−1 + 0.5) + (−2 + 3) = 0.5 over 2 tokens.
  assert.equal(d.klSum, 0.5);
  assert.equal(d.tokens, 2);
  assert.throws(() => sdftDatum(prompt, 7, { tokens: [20, 21], logprobs: [-1, -2] }, { logprobs: [-0.5] }, 0), /scored 1 of 2/);
});

test("topk > 0: the teacher's rows after its own prompt become [N, K] soft targets on the completion positions", () => {
  const prompt = modelInputFromInts([10, 11, 12]);
  // Teacher sequence: 4 prompt tokens then the completion [20, 21]; row r predicts token r.
  const rows = [
    null,
    [[1, -1]],
    [[1, -1]],
    [[1, -1]],
    [
      [20, Math.log(0.6)],
      [30, Math.log(0.2)],
    ],
    [
      [21, Math.log(0.5)],
      [31, Math.log(0.5)],
    ],
  ] as const;
  const d = sdftDatum(
    prompt,
    4,
    { tokens: [20, 21], logprobs: [-1, -2] },
    { logprobs: [Math.log(0.6), Math.log(0.5)], topk: rows.map((r) => (r === null ? null : r.map(([t, lp]) => [t, lp] as const))) },
    2,
  );
  const tokens = d.datum.loss_fn_inputs.target_tokens!;
  const weights = d.datum.loss_fn_inputs.weights!;
  assert.deepEqual(tensorShape(tokens), [4, 2]);
  assert.deepEqual(tensorDataToNumbers(tokens), [11, 11, 12, 12, 20, 30, 21, 31]);
  const w = tensorDataToNumbers(weights);
  assert.deepEqual(w.slice(0, 4), [0, 0, 0, 0], "prompt positions are not trained");
  // 0.6 and 0.2 renormalised over the top 2: 0.75 / 0.25; 0.5 / 0.5.
  for (const [got, want] of [
    [w[4]!, 0.75],
    [w[5]!, 0.25],
    [w[6]!, 0.5],
    [w[7]!, 0.5],
  ])
    assert.ok(Math.abs(got - want) < 1e-6, `${got} vs ${want}`);
  assert.equal("advantages" in d.datum.loss_fn_inputs, false);
});

test("SDFT prompts: the student sees the bare question, the teacher the same question after a demonstration of its golden answer", () => {
  const [problem] = sdftTrainBatch(0, 0, 1);
  assert.ok(problem);
  const turn = sdftPrompts(problem);
  assert.deepEqual(turn.student.at(-1), { role: "user", content: problem.question });
  assert.deepEqual(turn.teacher.slice(-3), [
    { role: "user", content: problem.question },
    { role: "assistant", content: problem.answer },
    { role: "user", content: problem.question },
  ]);
  const templated = sdftPrompts(problem, "{question} Hint: {golden_answer}");
  assert.equal(templated.teacher.at(-1)?.content, `${problem.question} Hint: ${problem.answer}`);
  assert.deepEqual(sdftTrainBatch(3, 5, 4), sdftTrainBatch(3, 5, 4), "a batch is a pure function of (seed, index)");
  assert.notDeepEqual(sdftTrainBatch(3, 5, 4), sdftTrainBatch(3, 6, 4));
});
