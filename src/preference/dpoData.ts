// Comparisons → DPO datums: prompt + chosen and prompt + rejected, each rendered with loss only on
// the completion's last assistant message and token-sum weights (reduction "none"), interleaved
// chosen/rejected in every batch. Ties carry no preference and are skipped.
import type { Renderer } from "../renderers/base.ts";
import { datumFromModelInputWeights } from "../supervised/common.ts";
import { SupervisedDatasetFromRows } from "../supervised/data.ts";
import type { SupervisedDatasetBuilder, SupervisedDatasets } from "../supervised/types.ts";
import type { Datum } from "../tinker/types.ts";
import type { ComparisonSplits } from "./datasets.ts";
import { chosenAndRejected, type LabeledComparison } from "./types.ts";

export function comparisonToDpoPair(lc: LabeledComparison, renderer: Renderer, maxLength: number | null): [Datum, Datum] | null {
  const pair = chosenAndRejected(lc);
  if (pair === null) return null;
  const prompt = lc.comparison.promptConversation;
  const datum = (completion: typeof pair.chosen): Datum => {
    const { modelInput, weights } = renderer.buildSupervisedExample([...prompt, ...completion], "last_assistant_message");
    return datumFromModelInputWeights(modelInput, weights, maxLength, "none");
  };
  return [datum(pair.chosen), datum(pair.rejected)];
}

/** Batches of `batchSize` pairs = 2·batchSize datums, reshuffled per epoch like SFT datasets. */
export function dpoDataset(
  comparisons: readonly LabeledComparison[],
  renderer: Renderer,
  batchSize: number,
  maxLength: number | null,
): SupervisedDatasetFromRows<LabeledComparison> {
  const usable = comparisons.filter((lc) => lc.label !== "Tie");
  return new SupervisedDatasetFromRows(usable, batchSize, (lc) => comparisonToDpoPair(lc, renderer, maxLength)!);
}

/** Train batches of interleaved pairs; the held-out pairs as one batch (what DpoEvaluator scores). */
export function dpoDatasetBuilder(
  splits: () => Promise<ComparisonSplits>,
  renderer: Renderer,
  batchSize: number,
  maxLength: number | null,
): SupervisedDatasetBuilder {
  return {
    async build(): Promise<SupervisedDatasets> {
      const { train, test } = await splits();
      const usableTest = (test ?? []).filter((lc) => lc.label !== "Tie");
      return {
        train: dpoDataset(train, renderer, batchSize, maxLength),
        test: usableTest.length > 0 ? dpoDataset(usableTest, renderer, usableTest.length, maxLength) : null,
      };
    },
  };
}
