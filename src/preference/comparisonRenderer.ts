// A comparison as one chat: the prompt, then each completion after a system marker, then a
// "Preference" marker the model answers with the label. Training weighs only the label's first
// token, and the example is cut right after it, so the model learns a one-token classifier.
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import type { ModelInput } from "../tinker/types.ts";
import type { Comparison, LabeledComparison } from "./types.ts";

export const COMPLETION_A_MARKER = "==== Completion A ====";
export const COMPLETION_B_MARKER = "==== Completion B ====";
export const PREFERENCE_MARKER = "==== Preference ====";

export class ComparisonRendererFromChatRenderer {
  constructor(readonly convoRenderer: Renderer) {}

  comparisonToConversation(c: Comparison): Message[] {
    return [
      ...c.promptConversation,
      { role: "system", content: COMPLETION_A_MARKER },
      ...c.completionA,
      { role: "system", content: COMPLETION_B_MARKER },
      ...c.completionB,
      { role: "system", content: PREFERENCE_MARKER },
    ];
  }

  buildGenerationPrompt(c: Comparison): ModelInput {
    return this.convoRenderer.buildGenerationPrompt(this.comparisonToConversation(c));
  }

  /** Tokens through the label's first token, weight 1 on that token only. */
  toModelInputWeights(lc: LabeledComparison): { modelInput: ModelInput; weights: Float32Array } {
    const convo = [...this.comparisonToConversation(lc.comparison), { role: "assistant", content: lc.label }];
    const { modelInput, weights } = this.convoRenderer.buildSupervisedExample(convo, "last_assistant_message");
    const tokens: number[] = [];
    for (const chunk of modelInput.chunks) {
      if (chunk.type !== "encoded_text") throw new Error("preference learning supports text-only comparisons; found an image chunk");
      tokens.push(...chunk.tokens);
    }
    const first = weights.indexOf(1);
    if (first < 0) throw new Error(`the renderer gave the preference label ${JSON.stringify(lc.label)} no trained token`);
    const w = new Float32Array(first + 1);
    w[first] = 1;
    return { modelInput: { chunks: [{ type: "encoded_text", tokens: tokens.slice(0, first + 1) }] }, weights: w };
  }
}
