// The slice of the renderer contract (docs/cookbook-parity.md#renderer-contract) that policies, RL envs and completers call. Stated
// structurally so that any Renderer fits, and tests can pass a small fake.
import { getTextContent } from "./content.ts";
import type { Message, ParsedResponse } from "./types.ts";
import type { ModelInput } from "../tinker/types.ts";

export type { Message, ParseTermination } from "./types.ts";

export interface RLRenderer {
  buildGenerationPrompt(messages: readonly Message[]): ModelInput;
  getStopSequences(): number[] | string[];
  parseResponse(tokens: readonly number[]): ParsedResponse;
}

/** Visible text of a message (thinking left out). */
export function messageText(message: Message): string {
  return getTextContent(message);
}
