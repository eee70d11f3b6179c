// Stage-1 data of the offline RLHF pipeline: the prompts of a comparison set answered by one of
// their two completions — the dispreferred one with probability `rejectedFraction` (a seeded coin
// per prompt). Trained on this, the SFT policy answers like the mixed-quality population the
// comparisons came from, so the later stages have something to improve: the preference model
// learns which answers are better, RL moves the policy toward them.
import { Prng } from "../data/synthetic/prng.ts";
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import { conversationToDatum } from "../supervised/common.ts";
import { SupervisedDatasetFromRows } from "../supervised/data.ts";
import type { SupervisedDatasetBuilder, SupervisedDatasets } from "../supervised/types.ts";
import type { ComparisonSplits } from "./datasets.ts";
import { chosenAndRejected, type LabeledComparison } from "./types.ts";

export function mixedConversations(lcs: readonly LabeledComparison[], seed: number, rejectedFraction: number): Message[][] {
  const rng = new Prng(seed);
  return lcs.map((lc) => {
    const pair = chosenAndRejected(lc);
    const reply = pair === null ? lc.comparison.completionA : rng.chance(rejectedFraction) ? pair.rejected : pair.chosen;
    return [...lc.comparison.promptConversation, ...reply];
  });
}

export function sftMixDatasetBuilder(
  splits: () => Promise<ComparisonSplits>,
  renderer: Renderer,
  options: { batchSize: number; maxLength: number | null; seed: number; rejectedFraction: number },
): SupervisedDatasetBuilder {
  const { batchSize, maxLength, seed, rejectedFraction } = options;
  return {
    async build(): Promise<SupervisedDatasets> {
      const { train, test } = await splits();
      const map = (messages: Message[]) => conversationToDatum(messages, renderer, maxLength, "last_assistant_message", "mean");
      const testRows = test === null ? [] : mixedConversations(test, seed + 1, rejectedFraction);
      return {
        train: new SupervisedDatasetFromRows(mixedConversations(train, seed, rejectedFraction), batchSize, map),
        test: testRows.length > 0 ? new SupervisedDatasetFromRows(testRows, testRows.length, map) : null,
      };
    },
  };
}

/** The distinct prompts of some comparisons, in first-seen order. */
export function uniquePrompts(lcs: readonly LabeledComparison[]): Message[][] {
  const seen = new Set<string>();
  const out: Message[][] = [];
  for (const lc of lcs) {
    const key = JSON.stringify(lc.comparison.promptConversation);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(lc.comparison.promptConversation);
  }
  return out;
}
