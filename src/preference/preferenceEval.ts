// Held-out accuracy of a preference model: the share of labeled comparisons (ties left out) whose
// greedy verdict matches the label; invalid verdicts count as wrong.
import type { Renderer } from "../renderers/base.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { PreferenceModelFromChatRenderer } from "./preferenceModel.ts";
import type { LabeledComparison } from "./types.ts";

export async function preferenceAccuracy(
  model: PreferenceModelFromChatRenderer,
  comparisons: readonly LabeledComparison[],
): Promise<{ accuracy: number; invalid: number; n: number }> {
  const labeled = comparisons.filter((lc) => lc.label !== "Tie");
  const verdicts = await Promise.all(labeled.map((lc) => model.verdict(lc.comparison)));
  let correct = 0;
  let invalid = 0;
  verdicts.forEach((v, i) => {
    if (v === labeled[i]!.label) correct += 1;
    if (v !== "A" && v !== "B" && v !== "Tie") invalid += 1;
  });
  return {
    accuracy: labeled.length === 0 ? Number.NaN : correct / labeled.length,
    invalid: labeled.length === 0 ? 0 : invalid / labeled.length,
    n: labeled.length,
  };
}

/** A sampler evaluator for the SFT loop: test/pm_accuracy and test/pm_invalid of the current weights. */
export class PreferenceAccuracyEvaluator {
  readonly kind = "sampling_client" as const;
  readonly name = "preference_accuracy";

  constructor(
    readonly comparisons: readonly LabeledComparison[],
    readonly renderer: Renderer,
    readonly tokenizer: Tokenizer,
    readonly prefix = "test",
  ) {}

  async evaluate(samplingClient: SamplingClient): Promise<Record<string, number>> {
    const pm = new PreferenceModelFromChatRenderer(this.renderer, this.tokenizer, samplingClient);
    const r = await preferenceAccuracy(pm, this.comparisons);
    return { [`${this.prefix}/pm_accuracy`]: r.accuracy, [`${this.prefix}/pm_invalid`]: r.invalid };
  }
}
