// Held-out negative log-likelihood (and bits per byte) through `forward`: no gradients, no sampler,
// so it sees exactly the training client's current weights. A mixture's held-out rows keep their
// source, and each source gets its own `source/<name>/<evaluator>_nll` beside the pooled one.
import type { TrainingClientEvaluator, EvalMetrics } from "../eval/evaluators.ts";
import type { TinkerFuture, TrainingClient } from "../tinker/clients.ts";
import type { Datum, ForwardBackwardOutput, TensorData } from "../tinker/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { computeBpb, computeMeanNll, meanNllBySource } from "./common.ts";
import type { SupervisedDataset } from "./types.ts";

/** Datums per forward request: big enough to amortize a request, small enough to bound memory. */
const CHUNK = 64;

export class NLLEvaluator implements TrainingClientEvaluator {
  readonly kind = "training_client" as const;

  constructor(
    readonly data: readonly Datum[],
    readonly name = "test",
    readonly tokenizer: Tokenizer | null = null,
    /** Each datum's mixture source (aligned with `data`), or null for one source. */
    readonly sources: readonly string[] | null = null,
  ) {
    if (data.length === 0) throw new Error(`NLLEvaluator ${name}: no data to evaluate`);
    if (sources !== null && sources.length !== data.length) {
      throw new Error(`NLLEvaluator ${name}: ${sources.length} source names for ${data.length} datums`);
    }
  }

  /** Every batch of a (test) dataset, in its current order, with its sources when it has them. */
  static fromDataset(dataset: SupervisedDataset, options: { name?: string; tokenizer?: Tokenizer | null } = {}): NLLEvaluator {
    const data: Datum[] = [];
    const sources: string[] = [];
    let named = true;
    for (let i = 0; i < dataset.length; i++) {
      const batch = dataset.getBatch(i);
      data.push(...batch);
      const names = dataset.batchSources?.(i) ?? null;
      if (names === null || names.length !== batch.length) named = false;
      else sources.push(...names);
    }
    return new NLLEvaluator(data, options.name ?? "test", options.tokenizer ?? null, named && dataset.length > 0 ? sources : null);
  }

  async evaluate(trainingClient: TrainingClient): Promise<EvalMetrics> {
    // Queue every chunk before awaiting any, so they run back to back.
    const futures: TinkerFuture<ForwardBackwardOutput>[] = [];
    for (let i = 0; i < this.data.length; i += CHUNK) {
      futures.push(await trainingClient.forward(this.data.slice(i, i + CHUNK), "cross_entropy"));
    }
    const logprobs: TensorData[] = [];
    for (const f of futures) {
      for (const out of (await f.result()).loss_fn_outputs) {
        const lp = out["logprobs"];
        if (lp === undefined) throw new Error("forward returned no logprobs for cross_entropy");
        logprobs.push(lp);
      }
    }
    const weights = this.data.map((d) => requireInput(d, "weights"));
    const metrics: EvalMetrics = { [`${this.name}/nll`]: computeMeanNll(logprobs, weights) };
    if (this.sources !== null) {
      for (const [source, nll] of meanNllBySource(this.sources, logprobs, weights)) metrics[`source/${source}/${this.name}_nll`] = nll;
    }
    if (this.tokenizer !== null) {
      const targets = this.data.map((d) => requireInput(d, "target_tokens"));
      metrics[`${this.name}/bpb`] = computeBpb(logprobs, weights, targets, this.tokenizer);
    }
    return metrics;
  }
}

function requireInput(datum: Datum, key: string): TensorData {
  const td = datum.loss_fn_inputs[key];
  if (td === undefined) throw new Error(`NLLEvaluator: a datum has no loss_fn_inputs.${key}`);
  return td;
}
