// Reading the transcripts a run left in iteration_NNNNNN/ (docs/cookbook-parity.md#log-directory-layout): which iterations exist,
// the rollout summary records of one, and supervised training examples if the run logged them.
// Records are read tolerantly: Python-written ones lack our prompt/response text.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { appendJsonl, readJsonl } from "../log/jsonl.ts";
import { iterationDir, rolloutSummariesPath, type RolloutSummaryRecord, type RolloutSummaryStep } from "../log/transcripts/rolloutSummaries.ts";

const ITERATION_RE = /^iteration_(\d+)$/;
const SUMMARY_SUFFIX = "_rollout_summaries.jsonl";

export interface IterationInfo {
  iteration: number;
  dir: string;
  /** Base names with a rollout summaries file, e.g. `train`, `eval_test`. */
  summaries: string[];
}

/**
 * A rollout summary as read back: the writer's record (the one declaration of its fields), with
 * what records written by the Python cookbook may lack made optional.
 */
export type TranscriptStep = Pick<RolloutSummaryStep, "step_idx" | "metrics"> &
  Partial<Pick<RolloutSummaryStep, "ob_len" | "ac_len" | "ac_tokens" | "reward" | "episode_done" | "messages">> & { logs: Record<string, unknown> };

export type TranscriptRecord = Omit<RolloutSummaryRecord, "schema_version" | "steps" | "final_ob_len"> & {
  steps: TranscriptStep[];
  final_ob_len?: number;
  /** Stored by loops that know it; otherwise derived by withGroupAdvantages. */
  advantage?: number;
};

export function listIterations(logDir: string): IterationInfo[] {
  if (!existsSync(logDir)) return [];
  const out: IterationInfo[] = [];
  for (const entry of readdirSync(logDir, { withFileTypes: true })) {
    const m = entry.isDirectory() ? ITERATION_RE.exec(entry.name) : null;
    if (!m) continue;
    const dir = join(logDir, entry.name);
    const summaries = readdirSync(dir)
      .filter((f) => f.endsWith(SUMMARY_SUFFIX))
      .map((f) => f.slice(0, -SUMMARY_SUFFIX.length))
      .sort((a, b) => (a === "train" ? -1 : b === "train" ? 1 : a.localeCompare(b)));
    out.push({ iteration: Number(m[1]), dir, summaries });
  }
  return out.sort((a, b) => a.iteration - b.iteration);
}

/** The iteration whose transcripts belong to a metrics step: the same number, else the nearest before. */
export function iterationForStep(iterations: readonly IterationInfo[], step: number): IterationInfo | undefined {
  let best: IterationInfo | undefined;
  for (const it of iterations) {
    if (it.iteration <= step) best = it;
    else break;
  }
  return best ?? iterations[0];
}

const num = (v: unknown, d: number): number => (typeof v === "number" && Number.isFinite(v) ? v : d);
const text = (v: unknown): string | null => (typeof v === "string" ? v : null);
const numMap = (v: unknown): Record<string, number> => {
  const out: Record<string, number> = {};
  if (typeof v === "object" && v !== null) for (const [k, x] of Object.entries(v)) if (typeof x === "number") out[k] = x;
  return out;
};

export function normalizeTranscript(raw: Record<string, unknown>): TranscriptRecord {
  const steps = Array.isArray(raw.steps) ? raw.steps : [];
  const rec: TranscriptRecord = {
    split: typeof raw.split === "string" ? raw.split : "train",
    iteration: num(raw.iteration, 0),
    group_idx: num(raw.group_idx, 0),
    traj_idx: num(raw.traj_idx, 0),
    tags: Array.isArray(raw.tags) ? raw.tags.filter((t): t is string => typeof t === "string") : [],
    sampling_client_step: typeof raw.sampling_client_step === "number" ? raw.sampling_client_step : null,
    total_reward: num(raw.total_reward, Number.NaN),
    final_reward: num(raw.final_reward, Number.NaN),
    trajectory_metrics: numMap(raw.trajectory_metrics),
    steps: steps.map((s: unknown, i: number) => {
      const o = (typeof s === "object" && s !== null ? s : {}) as Record<string, unknown>;
      return {
        step_idx: num(o.step_idx, i),
        ob_len: typeof o.ob_len === "number" ? o.ob_len : undefined,
        ac_len: typeof o.ac_len === "number" ? o.ac_len : undefined,
        ac_tokens: Array.isArray(o.ac_tokens) && o.ac_tokens.every((t) => typeof t === "number") ? (o.ac_tokens as number[]) : undefined,
        messages: Array.isArray(o.messages)
          ? o.messages.flatMap((m: unknown) => {
              const r = (typeof m === "object" && m !== null ? m : {}) as Record<string, unknown>;
              return typeof r.role === "string" && typeof r.text === "string" ? [{ role: r.role, text: r.text }] : [];
            })
          : undefined,
        reward: typeof o.reward === "number" ? o.reward : undefined,
        episode_done: typeof o.episode_done === "boolean" ? o.episode_done : undefined,
        metrics: numMap(o.metrics),
        logs: typeof o.logs === "object" && o.logs !== null ? (o.logs as Record<string, unknown>) : {},
      };
    }),
    prompt: text(raw.prompt),
    response: text(raw.response),
    stop_reason: text(raw.stop_reason),
  };
  if (typeof raw.advantage === "number") rec.advantage = raw.advantage;
  if (typeof raw.trajectory_logs === "object" && raw.trajectory_logs !== null) {
    const logs: Record<string, string | number | boolean> = {};
    for (const [k, v] of Object.entries(raw.trajectory_logs)) if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") logs[k] = v;
    rec.trajectory_logs = logs;
  }
  if (typeof raw.final_ob_len === "number") rec.final_ob_len = raw.final_ob_len;
  return rec;
}

/** The records of `<base>_rollout_summaries.jsonl` in one iteration (empty when absent). */
export function readTranscripts(logDir: string, iteration: number, base = "train"): TranscriptRecord[] {
  const path = rolloutSummariesPath(iterationDir(logDir, iteration), base);
  if (!existsSync(path)) return [];
  return readJsonl<Record<string, unknown>>(path).map(normalizeTranscript);
}

/**
 * Group advantages as the RL loop computes them by default (reward minus the group mean), for
 * records that did not store one.
 */
export function withGroupAdvantages(records: readonly TranscriptRecord[]): TranscriptRecord[] {
  const sums = new Map<number, { s: number; n: number }>();
  for (const r of records) {
    if (!Number.isFinite(r.total_reward)) continue;
    const e = sums.get(r.group_idx) ?? { s: 0, n: 0 };
    e.s += r.total_reward;
    e.n++;
    sums.set(r.group_idx, e);
  }
  return records.map((r) => {
    if (r.advantage !== undefined) return r;
    const e = sums.get(r.group_idx);
    return e && Number.isFinite(r.total_reward) ? { ...r, advantage: r.total_reward - e.s / e.n } : r;
  });
}

/** A supervised example as logged to `train_examples.jsonl`: text runs with their loss weights. */
export interface TrainingExample {
  step: number;
  segments: { text: string; weight: number }[];
}

export const TRAIN_EXAMPLES_FILE = "train_examples.jsonl";

/** Appends one example as a whole line, for the TUI's supervised example view. */
export function appendTrainingExample(logDir: string, example: TrainingExample): void {
  appendJsonl(join(logDir, TRAIN_EXAMPLES_FILE), example, { context: `training example of step ${example.step}` });
}

export function readTrainingExamples(logDir: string): TrainingExample[] {
  const path = join(logDir, TRAIN_EXAMPLES_FILE);
  if (!existsSync(path)) return [];
  return readJsonl<Record<string, unknown>>(path).map((r, i) => ({
    step: num(r.step, i),
    segments: (Array.isArray(r.segments) ? r.segments : [])
      .filter((s): s is Record<string, unknown> => typeof s === "object" && s !== null)
      .map((s) => ({ text: typeof s.text === "string" ? s.text : "", weight: num(s.weight, 0) })),
  }));
}
