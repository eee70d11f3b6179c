// Comparisons → supervised datums for a preference model: the comparison prompt followed by the
// label, loss on the label's token only. Ties carry no label to learn and are skipped.
import type { Renderer } from "../renderers/base.ts";
import { datumFromModelInputWeights } from "../supervised/common.ts";
import { SupervisedDatasetFromRows } from "../supervised/data.ts";
import type { SupervisedDatasetBuilder, SupervisedDatasets } from "../supervised/types.ts";
import type { Datum } from "../tinker/types.ts";
import { ComparisonRendererFromChatRenderer } from "./comparisonRenderer.ts";
import type { ComparisonSplits } from "./datasets.ts";
import type { LabeledComparison } from "./types.ts";

export function comparisonToPreferenceDatum(lc: LabeledComparison, renderer: ComparisonRendererFromChatRenderer, maxLength: number | null): Datum {
  const { modelInput, weights } = renderer.toModelInputWeights(lc);
  // Truncation from the right would cut off the label; keep the end instead.
  if (maxLength !== null && weights.length > maxLength) {
    throw new Error(`comparison renders to ${weights.length} tokens, over max_length=${maxLength}; raise max_length or shorten the completions`);
  }
  return datumFromModelInputWeights(modelInput, weights, null, "none");
}

/** The supervised dataset builder a preference model trains with (the SFT loop runs it). */
export function preferenceModelDatasetBuilder(
  splits: () => Promise<ComparisonSplits>,
  renderer: Renderer,
  batchSize: number,
  maxLength: number | null,
): SupervisedDatasetBuilder {
  const cr = new ComparisonRendererFromChatRenderer(renderer);
  const toRows = (lcs: readonly LabeledComparison[]) => lcs.filter((lc) => lc.label !== "Tie");
  return {
    async build(): Promise<SupervisedDatasets> {
      const { train, test } = await splits();
      const map = (lc: LabeledComparison) => comparisonToPreferenceDatum(lc, cr, maxLength);
      const testRows = test === null ? [] : toRows(test);
      return {
        train: new SupervisedDatasetFromRows(toRows(train), batchSize, map),
        test: testRows.length > 0 ? new SupervisedDatasetFromRows(testRows, testRows.length, map) : null,
      };
    },
  };
}
