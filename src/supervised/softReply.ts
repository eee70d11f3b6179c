// Supervised examples whose last reply could equally be any of several (any free square of a
// tic-tac-toe board): the one token where the alternatives differ is trained toward all of them at
// once, as [N, K] cross-entropy targets of weight 1/K each, instead of toward one drawn at random.
// Both have the same expected gradient, but the drawn target's noise drowns the small signal of
// which answers are right: on tic-tac-toe positions, share of legal replies after the same warm-up
// 0.71 with one drawn target, 0.81 with all of them (docs/agents.md).
import type { Renderer } from "../renderers/base.ts";
import type { Message, TrainOnWhat } from "../renderers/types.ts";
import { tensorDataFromFloat32, tensorDataFromInt64, tensorDataToNumbers } from "../tinker/tensorData.ts";
import type { Datum } from "../tinker/types.ts";
import { DataValidationError, datumFromModelInputWeights } from "./common.ts";

export interface SoftReplyExample {
  /** The conversation before the reply. */
  messages: Message[];
  /**
   * Equally right contents of the final assistant message; they must tokenize alike except at one
   * token. The first is the one the model reads after that token (for the tokens trained after it).
   */
  alternatives: string[];
}

export type WarmupExample = Message[] | SoftReplyExample;

function targetsAndWeights(datum: Datum): { targets: number[]; weights: number[] } {
  const t = datum.loss_fn_inputs["target_tokens"];
  const w = datum.loss_fn_inputs["weights"];
  if (t === undefined || w === undefined) throw new DataValidationError("softReplyDatum: a supervised datum without target_tokens or weights");
  return { targets: tensorDataToNumbers(t), weights: tensorDataToNumbers(w) };
}

/** The datum of `example` with its reply's differing token trained toward every alternative. */
export function softReplyDatum(renderer: Renderer, example: SoftReplyExample, trainOn: TrainOnWhat = "all_assistant_messages"): Datum {
  if (example.alternatives.length === 0) throw new DataValidationError("softReplyDatum: an example needs at least one alternative reply");
  const data = example.alternatives.map((content) => {
    const ex = renderer.buildSupervisedExample([...example.messages, { role: "assistant", content }], trainOn);
    return datumFromModelInputWeights(ex.modelInput, ex.weights);
  });
  const first = data[0]!;
  const base = targetsAndWeights(first);
  const N = base.targets.length;
  let position = -1;
  const columns = data.map((d, k) => {
    const { targets } = targetsAndWeights(d);
    if (targets.length !== N) {
      throw new DataValidationError(
        `softReplyDatum: reply ${JSON.stringify(example.alternatives[k])} is ${targets.length - N} tokens longer than ${JSON.stringify(example.alternatives[0])}; alternatives must differ in one token only`,
      );
    }
    for (let t = 0; t < N; t++) {
      if (targets[t] === base.targets[t]) continue;
      if (position !== -1 && position !== t) {
        throw new DataValidationError(
          `softReplyDatum: replies ${JSON.stringify(example.alternatives[0])} and ${JSON.stringify(example.alternatives[k])} differ in more than one token`,
        );
      }
      position = t;
    }
    return targets;
  });
  if (position === -1) return first;
  if (!(base.weights[position]! > 0)) throw new DataValidationError("softReplyDatum: the token where the replies differ is not trained");
  const K = columns.length;
  const tokens = new Int32Array(N * K);
  const weights = new Float32Array(N * K);
  for (let t = 0; t < N; t++) {
    // Untrained and shared positions keep their one target in column 0; the rest pad at weight 0.
    for (let k = 0; k < K; k++) tokens[t * K + k] = t === position ? columns[k]![t]! : base.targets[t]!;
    if (t === position) for (let k = 0; k < K; k++) weights[t * K + k] = base.weights[t]! / K;
    else weights[t * K] = base.weights[t]!;
  }
  return {
    model_input: first.model_input,
    loss_fn_inputs: { target_tokens: tensorDataFromInt64(tokens, [N, K]), weights: tensorDataFromFloat32(weights, [N, K]) },
  };
}
