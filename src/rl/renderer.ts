// The slice of the renderer contract (spec §2.2) that RL envs and completers call. Stated
// structurally so that any src/renderers Renderer fits, and tests can pass a small fake.
import { getTextContent } from "../renderers/content.ts";
import type { Message, ParsedResponse } from "../renderers/types.ts";
import type { ModelInput } from "../tinker/types.ts";

export type { Message, ParseTermination } from "../renderers/types.ts";

export interface RLRenderer {
  buildGenerationPrompt(messages: readonly Message[]): ModelInput;
  getStopSequences(): number[] | string[];
  parseResponse(tokens: readonly number[]): ParsedResponse;
}

/** Visible text of a message (thinking left out). */
export function messageText(message: Message): string {
  return getTextContent(message);
}
