// One forward (and optionally backward) pass over a packed batch: embeddings, decoder layers,
// head with loss, then the layers in reverse. Activation buffers come from the arena when one is
// given (reused while the batch shape repeats), else live only for the duration of the call.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import { allocActivations, type ActivationArena } from "./activations.ts";
import { attentionBlockBackward, attentionBlockForward } from "./attention.ts";
import type { PackedBatch } from "./batch.ts";
import { attentionScale, type ModelConfig } from "./config.ts";
import { layerContext, type BatchContext, type RopeTables } from "./context.ts";
import { linearAttentionBlockBackward, linearAttentionBlockForward } from "./deltanet.ts";
import { headForwardLoss, type HeadResult } from "./head.ts";
import type { ResolvedLoss } from "./losses.ts";
import { mlpBlockBackward, mlpBlockForward } from "./mlp.ts";
import { RoutingStats } from "./moe.ts";
import { NormWeights, normTensors } from "./norms.ts";
import type { ModelParams } from "./params.ts";
import { ropeInvFreq } from "./rope.ts";
import { toDtype, type Dtype } from "./tensor.ts";

export interface PassInputs {
  k: Kernels;
  dtype: Dtype;
  config: ModelConfig;
  params: ModelParams;
  invFreq: FloatArray;
  /** Sliding-window layers' frequencies when their RoPE base differs (Gemma), else null. */
  invFreqLocal: FloatArray | null;
  norms: NormWeights;
  arena?: ActivationArena;
}

/** The PassInputs of a model: RoPE tables and norm weights derived from its config and params. */
export function passInputs(k: Kernels, dtype: Dtype, config: ModelConfig, params: ModelParams, arena?: ActivationArena): PassInputs {
  const local =
    config.ropeThetaLocal !== undefined && config.ropeThetaLocal !== config.ropeTheta ? toDtype(dtype, ropeInvFreq(config, config.ropeThetaLocal)) : null;
  const norms = new NormWeights(config.normOffset === true, normTensors(params), dtype);
  return { k, dtype, config, params, invFreq: toDtype(dtype, ropeInvFreq(config)), invFreqLocal: local, norms, arena };
}

/** The context of a pass over `T` tokens before any layer (layerContext specialises it). */
export function batchContext(m: PassInputs, T: number, positions: Int32Array, seqStarts: Int32Array): BatchContext {
  // Full training changes the norm weights in place between passes.
  m.norms.refresh();
  return {
    k: m.k,
    config: m.config,
    T,
    positions,
    seqStarts,
    invFreq: m.invFreq,
    attnScale: attentionScale(m.config),
    window: 0,
    rope: true,
    normWeight: (t) => m.norms.get(t),
    routing: null,
  };
}

/** x *= the family's embedding scale (Gemma), in place over n values. */
export function scaleEmbeddings(config: ModelConfig, x: FloatArray, n: number): void {
  const s = config.embedScale;
  if (s === undefined) return;
  for (let i = 0; i < n; i++) x[i] *= s;
}

/** A pass's head result and, for mixture-of-experts models, its routing statistics. */
export interface PassResult extends HeadResult {
  routing: RoutingStats | null;
}

/** `keepRouting`: the result's routing statistics keep every sparse layer's chosen experts (tests). */
export function forwardBackwardPass(m: PassInputs, batch: PackedBatch, loss: ResolvedLoss, backward: boolean, keepRouting = false): PassResult {
  const { k, dtype, config, params } = m;
  const T = batch.T;
  const routing = config.moe !== undefined ? new RoutingStats(config.moe, keepRouting) : null;
  const c: BatchContext = { ...batchContext(m, T, batch.positions, batch.seqStarts), routing };
  const rope: RopeTables = m;
  const acts =
    m.arena !== undefined ? m.arena.get(dtype, config, params, batch.seqStarts, backward) : allocActivations(dtype, config, params, batch.seqStarts, backward);
  const sc = acts.scratch;
  const D = config.hiddenSize;
  k.embeddingForward(params.embed.data, batch.tokens, acts.residual[0], T, D);
  scaleEmbeddings(config, acts.residual[0], T * D);
  for (let l = 0; l < config.numLayers; l++) {
    const la = acts.layers[l];
    const lc = layerContext(c, rope, l);
    const mix = params.layers[l].linear !== null ? linearAttentionBlockForward : attentionBlockForward;
    mix(lc, params.layers[l], la, acts.residual[l], sc);
    mlpBlockForward(lc, params.layers[l], la, acts.residual[l + 1], sc);
  }
  const result = headForwardLoss(c, dtype, params, acts, batch, loss, backward);
  if (backward) {
    for (let l = config.numLayers - 1; l >= 0; l--) {
      const la = acts.layers[l];
      const lc = layerContext(c, rope, l);
      mlpBlockBackward(lc, params.layers[l], la, sc);
      // Frozen embeddings take no gradient, so the first layer's input needs none.
      const mix = params.layers[l].linear !== null ? linearAttentionBlockBackward : attentionBlockBackward;
      mix(lc, params.layers[l], la, acts.residual[l], sc, l > 0 || params.embed.grad !== null);
    }
    if (params.embed.grad !== null) {
      scaleEmbeddings(config, sc.dres, T * D);
      k.embeddingBackward(sc.dres, batch.tokens, params.embed.grad, T, D);
    }
  }
  return { ...result, routing };
}
