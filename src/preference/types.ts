// Comparisons between two completions of one prompt (docs/cookbook-parity.md#dpo-preference-rl-and-distillation), and the
// cookbook's JSONL row shape for them:
//   {"comparison":{"prompt_conversation":[…],"completion_A":[…],"completion_B":[…]},"label":"A"|"B"|"Tie"}
import { z } from "zod";
import { MessageSchema, type Message } from "../renderers/types.ts";

export interface Comparison {
  promptConversation: Message[];
  completionA: Message[];
  completionB: Message[];
}

export type PreferenceLabel = "A" | "B" | "Tie";

export interface LabeledComparison {
  comparison: Comparison;
  label: PreferenceLabel;
}

export const PreferenceLabelSchema = z.enum(["A", "B", "Tie"]);

export const ComparisonRowSchema = z.object({
  comparison: z.object({
    prompt_conversation: z.array(MessageSchema),
    completion_A: z.array(MessageSchema).min(1),
    completion_B: z.array(MessageSchema).min(1),
  }),
  label: PreferenceLabelSchema,
});
export type ComparisonRow = z.infer<typeof ComparisonRowSchema>;

export function swapComparison(c: Comparison): Comparison {
  return { promptConversation: c.promptConversation, completionA: c.completionB, completionB: c.completionA };
}

/** A and B exchanged, the label following its completion. */
export function swapLabeled(lc: LabeledComparison): LabeledComparison {
  const label: PreferenceLabel = lc.label === "A" ? "B" : lc.label === "B" ? "A" : "Tie";
  return { comparison: swapComparison(lc.comparison), label };
}

/** The preferred and the other completion; null for a tie (DPO and the preference model skip ties). */
export function chosenAndRejected(lc: LabeledComparison): { chosen: Message[]; rejected: Message[] } | null {
  if (lc.label === "Tie") return null;
  const { completionA, completionB } = lc.comparison;
  return lc.label === "A" ? { chosen: completionA, rejected: completionB } : { chosen: completionB, rejected: completionA };
}

export function labeledComparisonFromRow(row: ComparisonRow): LabeledComparison {
  return {
    comparison: {
      promptConversation: row.comparison.prompt_conversation,
      completionA: row.comparison.completion_A,
      completionB: row.comparison.completion_B,
    },
    label: row.label,
  };
}

export function labeledComparisonToRow(lc: LabeledComparison): ComparisonRow {
  return {
    comparison: {
      prompt_conversation: lc.comparison.promptConversation,
      completion_A: lc.comparison.completionA,
      completion_B: lc.comparison.completionB,
    },
    label: lc.label,
  };
}
