// Per-trajectory rollout summaries, one JSON record per line (docs/cookbook-parity.md#log-directory-layout), written into the
// iteration directory as `<base>_rollout_summaries.jsonl`.
import { mkdirSync } from "node:fs";
import { writeFileAtomic } from "../../files/durable.ts";
import { dirname, join } from "node:path";
import { messageSpeaker, messageText, modelInputTokenCount, trajectoryText, turnMessages, type Decode, type SummaryGroup } from "./types.ts";

export interface RolloutSummaryStep {
  step_idx: number;
  ob_len: number;
  ac_len: number;
  /** The sampled token ids (ours, not in the Python records): per-token views match on them. */
  ac_tokens?: number[];
  /** What this turn added to the conversation (ours): the environment's reply, then the policy's message. */
  messages?: { role: string; text: string }[];
  reward: number;
  episode_done: boolean;
  metrics: Record<string, number>;
  logs: Record<string, string | number | boolean>;
}

export interface RolloutSummaryRecord {
  schema_version: 1;
  split: string;
  iteration: number;
  group_idx: number;
  traj_idx: number;
  tags: string[];
  sampling_client_step: number | null;
  total_reward: number;
  final_reward: number;
  trajectory_metrics: Record<string, number>;
  /** The group reward's per-trajectory logs (ours; absent when empty), e.g. `vs_<j>` tournament results. */
  trajectory_logs?: Record<string, string | number | boolean>;
  final_ob_len: number;
  steps: RolloutSummaryStep[];
  /** Prompt and response text (ours; not in the Python records): null when neither messages nor a decoder were available. */
  prompt: string | null;
  response: string | null;
  stop_reason: string | null;
}

/** `<logPath>/iteration_NNNNNN` (six digits). */
export function iterationDir(logPath: string, iteration: number): string {
  return join(logPath, `iteration_${String(iteration).padStart(6, "0")}`);
}

export function rolloutSummariesPath(iterDir: string, baseName: string): string {
  return join(iterDir, `${baseName}_rollout_summaries.jsonl`);
}

export function serializeRolloutSummaries(args: {
  split: string;
  iteration: number;
  groups: readonly SummaryGroup[];
  decode?: Decode;
}): RolloutSummaryRecord[] {
  const records: RolloutSummaryRecord[] = [];
  args.groups.forEach((g, groupIdx) => {
    const tg = g.trajectoryGroup;
    const totals = tg.getTotalRewards();
    tg.trajectoriesG.forEach((traj, trajIdx) => {
      const text = trajectoryText(traj, args.decode);
      const turns = turnMessages(traj);
      records.push({
        schema_version: 1,
        split: args.split,
        iteration: args.iteration,
        group_idx: groupIdx,
        traj_idx: trajIdx,
        tags: [...g.tags],
        sampling_client_step: g.samplingClientStep,
        total_reward: totals[trajIdx],
        final_reward: tg.finalRewardsG[trajIdx],
        trajectory_metrics: { ...tg.metricsG[trajIdx] },
        ...(Object.keys(tg.logsG?.[trajIdx] ?? {}).length > 0 ? { trajectory_logs: { ...tg.logsG![trajIdx] } } : {}),
        final_ob_len: modelInputTokenCount(traj.finalOb),
        steps: traj.transitions.map((t, stepIdx) => ({
          step_idx: stepIdx,
          ob_len: modelInputTokenCount(t.ob),
          ac_len: t.ac.tokens.length,
          ac_tokens: [...t.ac.tokens],
          ...(turns !== undefined ? { messages: turns[stepIdx]!.map((m) => ({ role: messageSpeaker(m), text: messageText(m) })) } : {}),
          reward: t.reward,
          episode_done: t.episodeDone,
          metrics: { ...t.metrics },
          logs: { ...t.logs },
        })),
        prompt: text.prompt,
        response: text.response,
        stop_reason: traj.stopReason ?? null,
      });
    });
  });
  return records;
}

/** Writes the whole file at once through a rename, so a tailing reader never sees half of it. */
export function writeJsonlAtomic(path: string, records: readonly unknown[]): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomic(path, records.map((r) => JSON.stringify(r) + "\n").join(""), { fsync: false, context: "rollout summaries" });
}

export function writeRolloutSummaries(args: {
  logPath: string;
  baseName: string;
  split: string;
  iteration: number;
  groups: readonly SummaryGroup[];
  decode?: Decode;
}): string {
  const path = rolloutSummariesPath(iterationDir(args.logPath, args.iteration), args.baseName);
  writeJsonlAtomic(path, serializeRolloutSummaries(args));
  return path;
}
