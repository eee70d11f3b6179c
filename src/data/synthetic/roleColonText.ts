// Plain-text role_colon rendering (docs/cookbook-parity.md#base-model-role-colon-format) for the pretraining corpus and
// tokenizer training: "Role: content⏎⏎" per message. The token-level renderer lives in
// src/renderers/; this only has to produce the same characters so the tiny model learns the
// format the renderer will show it.
import type { Conversation } from "./types.ts";

export const ROLE_COLON_STOP = "\n\nUser:";

export function roleHeader(role: string): string {
  // Python's str.capitalize(): first letter upper, the rest lower.
  return role.charAt(0).toUpperCase() + role.slice(1).toLowerCase() + ":";
}

/**
 * The conversation as one training document. When it ends with an assistant message, "User:" is
 * appended so the text ends with the stop string — what the renderer's supervised examples train
 * (`… 4⏎⏎User:`), and what lets sampling stop cleanly.
 */
export function renderRoleColonDocument(convo: Conversation): string {
  let text = "";
  for (const m of convo) text += `${roleHeader(m.role)} ${m.content}\n\n`;
  if (convo.length > 0 && convo[convo.length - 1].role === "assistant") text += "User:";
  return text;
}

/** Generation prompt text: the conversation followed by "Assistant:" (no trailing space). */
export function renderRoleColonPrompt(convo: Conversation): string {
  let text = "";
  for (const m of convo) text += `${roleHeader(m.role)} ${m.content}\n\n`;
  return text + "Assistant:";
}
