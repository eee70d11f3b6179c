// The shapes transcripts read. They are structural so that run plumbing does not depend on the
// RL layer: src/rl's Trajectory / TrajectoryGroup satisfy them as they are.
import type { ModelInput } from "../../tinker/types.ts";

export interface TranscriptMessage {
  role: string;
  content: string | { type: string; text?: string; thinking?: string }[];
  /** Calls the assistant made in this message (parsed by the renderer). */
  tool_calls?: readonly { function: { name: string; arguments: string } }[];
  /** Calls the renderer could not parse (the parse-error policy decided what followed). */
  unparsed_tool_calls?: readonly { raw_text: string; error: string }[];
  /** A tool result's function name, or the player who spoke in a multi-agent episode. */
  name?: string;
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
  const body =
    typeof m.content === "string"
      ? m.content
      : m.content.map((p) => (p.type === "text" ? (p.text ?? "") : p.type === "thinking" ? `<think>${p.thinking ?? ""}</think>` : `[${p.type}]`)).join("");
  const calls = (m.tool_calls ?? []).map((c) => `[tool call] ${c.function.name}(${c.function.arguments})`);
  const broken = (m.unparsed_tool_calls ?? []).map((u) => `[unparsed tool call: ${u.error}] ${u.raw_text}`);
  return [body, ...calls, ...broken].filter((x) => x !== "").join("\n");
}

/** The role as shown: a tool result names its tool, a multi-agent turn its player. */
export function messageSpeaker(m: TranscriptMessage): string {
  return m.name !== undefined && m.name !== "" ? `${m.role} (${m.name})` : m.role;
}

/**
 * The messages each turn added to the conversation: the first turn's response, then for every
 * later turn what the environment answered and what the policy said. Undefined when the
 * transitions carry no messages.
 */
export function turnMessages(traj: TranscriptTrajectory): TranscriptMessage[][] | undefined {
  const conv = splitConversation(traj);
  if (conv === null) return undefined;
  let seen = conv.prompt.length;
  return traj.transitions.map((t) => {
    const all = t.messages ?? [];
    const added = all.slice(seen);
    seen = Math.max(seen, all.length);
    return added;
  });
}

/**
 * Splits a trajectory's conversation into prompt and response messages: the prompt is what the
 * first turn saw, the response everything after it (assistant turns and env replies). The first
 * turn's response is its last assistant message — an episode that ended on that turn may add what
 * the environment said at the end (a game's result) after it.
 */
export function splitConversation(traj: TranscriptTrajectory): { prompt: TranscriptMessage[]; response: TranscriptMessage[] } | null {
  const first = traj.transitions.find((t) => t.messages !== undefined && t.messages.length > 0);
  const last = [...traj.transitions].reverse().find((t) => t.messages !== undefined && t.messages.length > 0);
  if (first?.messages === undefined || last?.messages === undefined) return null;
  const lastAssistant = first.messages.map((m) => m.role).lastIndexOf("assistant");
  const promptCount = lastAssistant >= 0 ? lastAssistant : Math.max(0, first.messages.length - 1);
  return { prompt: last.messages.slice(0, promptCount), response: last.messages.slice(promptCount) };
}

/** "role: text" blocks; a named speaker (a tool, a player) as "role (name): text". */
export function formatConversation(messages: readonly TranscriptMessage[]): string {
  return messages.map((m) => `${messageSpeaker(m)}: ${messageText(m)}`).join("\n\n");
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
