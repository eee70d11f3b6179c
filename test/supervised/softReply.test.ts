// softReplyDatum: the one token where equally right replies differ becomes [N, K] soft targets of
// weight 1/K each; every other position keeps its single target; replies that differ in more than
// one token, or in length, are refused with a message naming them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { getRenderer } from "../../src/renderers/registry.ts";
import { softReplyDatum } from "../../src/supervised/softReply.ts";
import { datumFromModelInputWeights } from "../../src/supervised/common.ts";
import { tensorDataToNumbers, tensorShape } from "../../src/tinker/tensorData.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import type { Message } from "../../src/renderers/types.ts";

const tokenizer = await getTokenizer("tiny-chat");
const renderer = getRenderer("role_colon", tokenizer);
const messages: Message[] = [
  { role: "system", content: "Pick a free square." },
  { role: "user", content: "Free: 3 5 7" },
];
const tok = (s: string) => {
  const ids = tokenizer.encode(s, { addSpecialTokens: false });
  assert.equal(ids.length, 1, `${JSON.stringify(s)} is one token`);
  return ids[0]!;
};

test("the differing reply token is trained toward every alternative, the rest as one plain datum", () => {
  const soft = softReplyDatum(renderer, { messages, alternatives: ["5", "3", "7"] });
  const plainEx = renderer.buildSupervisedExample([...messages, { role: "assistant", content: "5" }], "all_assistant_messages");
  const plain = datumFromModelInputWeights(plainEx.modelInput, plainEx.weights);
  const plainTargets = tensorDataToNumbers(plain.loss_fn_inputs["target_tokens"]!);
  const plainWeights = tensorDataToNumbers(plain.loss_fn_inputs["weights"]!);
  const N = plainTargets.length;
  assert.deepEqual(soft.model_input, plain.model_input, "the model reads the first alternative");
  assert.deepEqual(tensorShape(soft.loss_fn_inputs["target_tokens"]!), [N, 3]);
  assert.deepEqual(tensorShape(soft.loss_fn_inputs["weights"]!), [N, 3]);
  const targets = tensorDataToNumbers(soft.loss_fn_inputs["target_tokens"]!);
  const weights = tensorDataToNumbers(soft.loss_fn_inputs["weights"]!);
  const reply = plainTargets.lastIndexOf(tok(" 5"));
  assert.ok(reply > 0 && plainWeights[reply] === 1, "the reply token is trained in the plain datum");
  assert.deepEqual(targets.slice(reply * 3, reply * 3 + 3), [tok(" 5"), tok(" 3"), tok(" 7")]);
  for (const w of weights.slice(reply * 3, reply * 3 + 3)) assert.ok(Math.abs(w - 1 / 3) < 1e-6);
  for (let t = 0; t < N; t++) {
    if (t === reply) continue;
    assert.equal(targets[t * 3], plainTargets[t], `position ${t} keeps its target`);
    assert.deepEqual(weights.slice(t * 3, t * 3 + 3), [plainWeights[t], 0, 0], `position ${t}: one target, padding at weight 0`);
  }
  const trainedAfter = plainWeights.slice(reply + 1).filter((w) => w > 0).length;
  assert.ok(trainedAfter > 0, "the end of the turn after the reply is still trained");
});

test("one alternative (or identical ones) gives the plain datum", () => {
  const single = softReplyDatum(renderer, { messages, alternatives: ["5"] });
  assert.deepEqual(tensorShape(single.loss_fn_inputs["target_tokens"]!), [tensorDataToNumbers(single.loss_fn_inputs["weights"]!).length]);
  const same = softReplyDatum(renderer, { messages, alternatives: ["5", "5"] });
  assert.deepEqual(same, single);
});

test("replies that differ in more than one token or in length are refused, naming them", () => {
  assert.throws(() => softReplyDatum(renderer, { messages, alternatives: ["5", "35"] }), /"35" is 1 tokens longer than "5"/);
  assert.throws(() => softReplyDatum(renderer, { messages, alternatives: ["5 3", "7 9"] }), /"5 3" and "7 9" differ in more than one token/);
  assert.throws(() => softReplyDatum(renderer, { messages, alternatives: [] }), /at least one alternative/);
});
