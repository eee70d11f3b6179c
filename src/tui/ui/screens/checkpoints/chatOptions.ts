// The checkpoint chat's sampling options, pure: their defaults, keyboard steps and validation of
// typed values (the same options `cookbook chat` takes).
import type { ChatSamplingOptions } from "../../../services/sampler.ts";

export type ChatOptionKey = keyof ChatSamplingOptions;

export const CHAT_OPTION_KEYS: readonly ChatOptionKey[] = ["temperature", "topP", "maxTokens", "systemPrompt"];

export const CHAT_OPTION_LABELS: Record<ChatOptionKey, string> = {
  temperature: "temperature",
  topP: "top-p",
  maxTokens: "max tokens",
  systemPrompt: "system prompt",
};

export const DEFAULT_CHAT_OPTIONS: ChatSamplingOptions = { temperature: 0.7, topP: 1, maxTokens: 128, systemPrompt: "" };

const round = (v: number, places: number): number => Number(v.toFixed(places));

/** One keyboard step up or down; the system prompt has no steps. */
export function stepChatOption(o: ChatSamplingOptions, key: ChatOptionKey, direction: 1 | -1): ChatSamplingOptions {
  switch (key) {
    case "temperature":
      return { ...o, temperature: round(Math.min(2, Math.max(0, o.temperature + 0.1 * direction)), 2) };
    case "topP":
      return { ...o, topP: round(Math.min(1, Math.max(0.05, o.topP + 0.05 * direction)), 2) };
    case "maxTokens":
      return { ...o, maxTokens: Math.min(4096, Math.max(1, direction > 0 ? o.maxTokens * 2 : Math.floor(o.maxTokens / 2))) };
    case "systemPrompt":
      return o;
  }
}

export function chatOptionText(o: ChatSamplingOptions, key: ChatOptionKey): string {
  return String(o[key]);
}

/** The options with `text` typed into `key`, or the reason it is refused. */
export function setChatOption(o: ChatSamplingOptions, key: ChatOptionKey, text: string): ChatSamplingOptions | { error: string } {
  if (key === "systemPrompt") return { ...o, systemPrompt: text };
  const v = Number(text.trim());
  const label = CHAT_OPTION_LABELS[key];
  if (text.trim() === "" || !Number.isFinite(v)) return { error: `${label}: expected a number, got "${text}"` };
  if (key === "temperature" && (v < 0 || v > 2)) return { error: `temperature: expected 0 to 2, got ${v}` };
  if (key === "topP" && (v <= 0 || v > 1)) return { error: `top-p: expected more than 0 and at most 1, got ${v}` };
  if (key === "maxTokens" && (!Number.isInteger(v) || v < 1 || v > 4096)) return { error: `max tokens: expected an integer from 1 to 4096, got ${v}` };
  return { ...o, [key]: v };
}

/** `temperature 0.7 · top-p 1 · max tokens 128 · system prompt (none)` */
export function chatOptionsSummary(o: ChatSamplingOptions): string {
  return CHAT_OPTION_KEYS.map(
    (k) => `${CHAT_OPTION_LABELS[k]} ${k === "systemPrompt" ? (o.systemPrompt ? JSON.stringify(o.systemPrompt) : "(none)") : o[k]}`,
  ).join(" · ");
}
