// The shapes transcripts read. They are structural so that run plumbing does not depend on the
// RL layer: src/rl's Trajectory / TrajectoryGroup satisfy them as they are.
import type { ModelInput } from "../../tinker/types.ts";

export interface TranscriptMessage {
  role: string;
  content: string | { type: string; text?: string; thinking?: string }[];
}

export interface TranscriptTransition {
  ob: ModelInput;
  ac: { tokens: number[] };
  reward: number;
  episodeDone: boolean;
  metrics: Record<string, number>;
  logs: Record<string, string | number | boolean>;
  /** The conversation as of this turn: prompt messages then the parsed response. */
  messages?: TranscriptMessage[];
}

export interface TranscriptTrajectory {
  transitions: TranscriptTransition[];
  finalOb: ModelInput;
  stopReason?: string | null;
}

export interface TranscriptGroup {
  trajectoriesG: TranscriptTrajectory[];
  finalRewardsG: number[];
  metricsG: Record<string, number>[];
  /** Per-trajectory logs of the group reward (e.g. tournament results), when the builder gave any. */
  logsG?: readonly Record<string, string | number | boolean>[];
  getTotalRewards(): number[];
}

export interface SummaryGroup {
  trajectoryGroup: TranscriptGroup;
  tags: string[];
  samplingClientStep: number | null;
  /** Per-trajectory advantages, shown in the HTML report when given. */
  advantagesG?: number[];
}

/** Token ids → text, when a tokenizer is at hand. */
export type Decode = (tokens: number[]) => string;

export function modelInputTokenCount(input: ModelInput): number {
  let n = 0;
  for (const c of input.chunks) n += c.type === "encoded_text" ? c.tokens.length : (c.expected_tokens ?? 0);
  return n;
}

export function textTokens(input: ModelInput): number[] {
  return input.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : []));
}

export function messageText(m: TranscriptMessage): string {
  if (typeof m.content === "string") return m.content;
  return m.content
    .map((p) => (p.type === "text" ? (p.text ?? "") : p.type === "thinking" ? `<think>${p.thinking ?? ""}</think>` : `[${p.type}]`))
    .join("");
}

/**
 * Splits a trajectory's conversation into prompt and response messages: the prompt is what the
 * first turn saw, the response everything after it (assistant turns and env replies).
 */
export function splitConversation(traj: TranscriptTrajectory): { prompt: TranscriptMessage[]; response: TranscriptMessage[] } | null {
  const first = traj.transitions.find((t) => t.messages !== undefined && t.messages.length > 0);
  const last = [...traj.transitions].reverse().find((t) => t.messages !== undefined && t.messages.length > 0);
  if (first?.messages === undefined || last?.messages === undefined) return null;
  const promptCount = Math.max(0, first.messages.length - 1);
  return { prompt: last.messages.slice(0, promptCount), response: last.messages.slice(promptCount) };
}

export function formatConversation(messages: readonly TranscriptMessage[]): string {
  return messages.map((m) => `${m.role}: ${messageText(m)}`).join("\n\n");
}

/** Prompt and response as plain text, from messages when the env gave them, else decoded tokens. */
export function trajectoryText(traj: TranscriptTrajectory, decode?: Decode): { prompt: string | null; response: string | null } {
  const conv = splitConversation(traj);
  if (conv !== null) {
    const response = conv.response.length === 1 ? messageText(conv.response[0]) : formatConversation(conv.response);
    return { prompt: formatConversation(conv.prompt), response };
  }
  if (decode === undefined || traj.transitions.length === 0) return { prompt: null, response: null };
  return {
    prompt: decode(textTokens(traj.transitions[0].ob)),
    response: traj.transitions.map((t) => decode(t.ac.tokens)).join("\n\n"),
  };
}
