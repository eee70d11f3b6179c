// Preference models score a comparison: −1 when A is preferred, +1 for B, 0 for a tie or an
// unreadable verdict. The learned one samples one token at temperature 0 after the comparison
// prompt; the "shorter" one prefers the completion with fewer characters.
import { getTextContent } from "../renderers/content.ts";
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { ComparisonRendererFromChatRenderer } from "./comparisonRenderer.ts";
import type { Comparison, PreferenceLabel } from "./types.ts";

export interface PreferenceModel {
  /** −1: A preferred, +1: B preferred, 0: tie or no verdict. */
  score(comparison: Comparison): Promise<number>;
}

export function scoreOfVerdict(text: string): number {
  const v = text.trim();
  return v === "A" ? -1 : v === "B" ? 1 : 0;
}

export function labelOfScore(score: number): PreferenceLabel {
  return score < 0 ? "A" : score > 0 ? "B" : "Tie";
}

export class PreferenceModelFromChatRenderer implements PreferenceModel {
  readonly comparisonRenderer: ComparisonRendererFromChatRenderer;
  /** Verdicts that were neither A nor B (counted so callers can report them). */
  invalidVerdicts = 0;

  constructor(
    convoRenderer: Renderer,
    readonly tokenizer: Tokenizer,
    readonly samplingClient: SamplingClient,
  ) {
    this.comparisonRenderer = new ComparisonRendererFromChatRenderer(convoRenderer);
  }

  async verdict(comparison: Comparison): Promise<string> {
    const prompt = this.comparisonRenderer.buildGenerationPrompt(comparison);
    const res = await this.samplingClient.sample(prompt, 1, { temperature: 0, max_tokens: 1 });
    return this.tokenizer.decode(res.sequences[0]?.tokens ?? []).trim();
  }

  async score(comparison: Comparison): Promise<number> {
    const v = await this.verdict(comparison);
    const s = scoreOfVerdict(v);
    if (s === 0 && v !== "Tie") this.invalidVerdicts += 1;
    return s;
  }
}

function completionChars(messages: readonly Message[]): number {
  return messages.reduce((n, m) => n + getTextContent(m).length, 0);
}

/** The cookbook's `shorter` judge: the completion with fewer characters wins. */
export class ShorterPreferenceModel implements PreferenceModel {
  async score(c: Comparison): Promise<number> {
    const a = completionChars(c.completionA);
    const b = completionChars(c.completionB);
    return a > b ? 1 : b > a ? -1 : 0;
  }
}
