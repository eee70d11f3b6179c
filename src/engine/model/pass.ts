// One forward (and optionally backward) pass over a packed batch: embeddings, decoder layers,
// head with loss, then the layers in reverse. Activation buffers come from the arena when one is
// given (reused while the batch shape repeats), else live only for the duration of the call.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import { allocActivations, type ActivationArena } from "./activations.ts";
import { attentionBlockBackward, attentionBlockForward } from "./attention.ts";
import type { PackedBatch } from "./batch.ts";
import type { ModelConfig } from "./config.ts";
import type { BatchContext } from "./context.ts";
import { headForwardLoss, type HeadResult } from "./head.ts";
import type { ResolvedLoss } from "./losses.ts";
import { mlpBlockBackward, mlpBlockForward } from "./mlp.ts";
import type { ModelParams } from "./params.ts";
import type { Dtype } from "./tensor.ts";

export interface PassInputs {
  k: Kernels;
  dtype: Dtype;
  config: ModelConfig;
  params: ModelParams;
  invFreq: FloatArray;
  arena?: ActivationArena;
}

export function forwardBackwardPass(m: PassInputs, batch: PackedBatch, loss: ResolvedLoss, backward: boolean): HeadResult {
  const { k, dtype, config, params } = m;
  const T = batch.T;
  const c: BatchContext = {
    k, config, T, positions: batch.positions, seqStarts: batch.seqStarts, invFreq: m.invFreq,
    attnScale: 1 / Math.sqrt(config.headDim),
  };
  const acts = m.arena !== undefined
    ? m.arena.get(dtype, config, params, batch.seqStarts, backward)
    : allocActivations(dtype, config, params, batch.seqStarts, backward);
  const sc = acts.scratch;
  const D = config.hiddenSize;
  k.embeddingForward(params.embed.data, batch.tokens, acts.residual[0], T, D);
  for (let l = 0; l < config.numLayers; l++) {
    const la = acts.layers[l];
    attentionBlockForward(c, params.layers[l], la, acts.residual[l], sc);
    mlpBlockForward(c, params.layers[l], la, acts.residual[l + 1], sc);
  }
  const result = headForwardLoss(c, dtype, params, acts, batch, loss, backward);
  if (backward) {
    for (let l = config.numLayers - 1; l >= 0; l--) {
      const la = acts.layers[l];
      mlpBlockBackward(c, params.layers[l], la, sc);
      // Frozen embeddings take no gradient, so the first layer's input needs none.
      attentionBlockBackward(c, params.layers[l], la, acts.residual[l], sc, l > 0 || params.embed.grad !== null);
    }
    if (params.embed.grad !== null) k.embeddingBackward(sc.dres, batch.tokens, params.embed.grad, T, D);
  }
  return result;
}
