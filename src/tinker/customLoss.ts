// forward_backward_custom (docs/protocol.md#custom-losses) on top of any TrainingClient: a forward pass gives per-token
// logprobs, the user's loss gives dLoss/dlogprobs, and a cross_entropy forward_backward with
// weights = −gradient reproduces that gradient on the server (CE is Σ −lp·w).
import type { CustomLossFn, TinkerFuture, TrainingClient } from "./clients.ts";
import { InvalidArgumentError } from "./errors.ts";
import { mapFuture } from "./futures.ts";
import { tensorDataFromFloat32, tensorDataToFloat32, tensorShape } from "./tensorData.ts";
import type { Datum, ForwardBackwardOutput } from "./types.ts";

const ALLOWED_KEYS: ReadonlySet<string> = new Set(["target_tokens", "weights"]);

export async function forwardBackwardCustom(
  client: Pick<TrainingClient, "forward" | "forwardBackward">,
  data: Datum[],
  lossFn: CustomLossFn,
): Promise<TinkerFuture<ForwardBackwardOutput>> {
  const forwardData = data.map((d, i) => prepareDatum(d, i));
  const fwd = await (await client.forward(forwardData, "cross_entropy")).result();
  if (fwd.loss_fn_outputs.length !== data.length) {
    throw new InvalidArgumentError(`forwardBackwardCustom: forward returned ${fwd.loss_fn_outputs.length} outputs for ${data.length} datums`);
  }
  const logprobs = fwd.loss_fn_outputs.map((o, i) => {
    const lp = o["logprobs"];
    if (lp === undefined) throw new InvalidArgumentError(`forwardBackwardCustom: forward output ${i} has no logprobs`);
    return tensorDataToFloat32(lp);
  });
  const { gradients, metrics } = await lossFn(data, logprobs);
  if (gradients.length !== data.length) {
    throw new InvalidArgumentError(`custom loss returned ${gradients.length} gradients for ${data.length} datums; expected one per datum`);
  }
  const backwardData = forwardData.map((d, i): Datum => {
    const g = gradients[i]!;
    if (g.length !== logprobs[i]!.length) {
      throw new InvalidArgumentError(`custom loss gradient ${i} has length ${g.length} but logprobs ${i} has ${logprobs[i]!.length}; they must match`);
    }
    const neg = new Float32Array(g.length);
    for (let t = 0; t < g.length; t++) {
      if (!Number.isFinite(g[t]!)) throw new InvalidArgumentError(`custom loss gradient ${i}[${t}] is ${g[t]}; expected a finite number`);
      neg[t] = -g[t]!;
    }
    const shape = tensorShape(d.loss_fn_inputs["target_tokens"]!);
    return { ...d, loss_fn_inputs: { ...d.loss_fn_inputs, weights: tensorDataFromFloat32(neg, shape) } };
  });
  const bwd = await client.forwardBackward(backwardData, "cross_entropy");
  return mapFuture(bwd, (out) => ({ ...out, metrics: { ...out.metrics, ...(metrics ?? {}) } }));
}

function prepareDatum(d: Datum, i: number): Datum {
  const target = d.loss_fn_inputs["target_tokens"];
  if (target === undefined) {
    throw new InvalidArgumentError(`forwardBackwardCustom: datum ${i} has no target_tokens; custom losses need them`);
  }
  for (const key of Object.keys(d.loss_fn_inputs)) {
    if (!ALLOWED_KEYS.has(key)) {
      throw new InvalidArgumentError(`forwardBackwardCustom: datum ${i} has loss_fn_inputs key "${key}"; only target_tokens and weights are allowed`);
    }
  }
  if (d.loss_fn_inputs["weights"] !== undefined) return d;
  const shape = tensorShape(target);
  const size = shape.reduce((a, b) => a * b, 1);
  return { ...d, loss_fn_inputs: { ...d.loss_fn_inputs, weights: tensorDataFromFloat32(new Float32Array(size), shape) } };
}
