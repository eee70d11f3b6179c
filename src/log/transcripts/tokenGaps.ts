// Per-token teacher log-probs of the sampled responses of one iteration (on-policy distillation):
// `iteration_NNNNNN/<base>_teacher_logprobs.jsonl`, one line per trained sequence with its tokens,
// their text, and the student's (sampler's) and teacher's log-prob of each. The transcripts screen
// finds a trajectory's line by its prompt length and sampled tokens and colours every token by the
// gap. Written after the rollout summaries (the teacher scores at training time), hence a sidecar.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { appendJsonl, readJsonl } from "../jsonl.ts";
import { iterationDir } from "./rolloutSummaries.ts";

export interface TokenGapRecord {
  /** Tokens before the first sampled one (the first turn's observation length). */
  ob_len: number;
  tokens: number[];
  /** Each token's text, when a tokenizer was at hand. */
  pieces?: string[];
  student: number[];
  teacher: number[];
}

export function tokenGapsPath(logPath: string, iteration: number, baseName = "train"): string {
  return join(iterationDir(logPath, iteration), `${baseName}_teacher_logprobs.jsonl`);
}

/** Appends whole lines (several minibatches of one iteration append in turn). */
export function appendTokenGaps(logPath: string, iteration: number, records: readonly TokenGapRecord[], baseName = "train"): void {
  const path = tokenGapsPath(logPath, iteration, baseName);
  // The iteration folder exists only when the loop wrote transcripts there first.
  mkdirSync(dirname(path), { recursive: true });
  for (const r of records) appendJsonl(path, r, { context: `teacher log-probs of iteration ${iteration}`, fsync: false });
}

export function tokenGapKey(obLen: number, tokens: readonly number[]): string {
  return `${obLen}:${tokens.join(",")}`;
}

/** The iteration's records by tokenGapKey (empty when the run wrote none). */
export function readTokenGaps(logPath: string, iteration: number, baseName = "train"): Map<string, TokenGapRecord> {
  const out = new Map<string, TokenGapRecord>();
  for (const raw of readJsonl<Record<string, unknown>>(tokenGapsPath(logPath, iteration, baseName))) {
    const nums = (v: unknown): number[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === "number") ? (v as number[]) : undefined);
    const tokens = nums(raw.tokens);
    const student = nums(raw.student);
    const teacher = nums(raw.teacher);
    if (typeof raw.ob_len !== "number" || !tokens || !student || !teacher || student.length !== tokens.length || teacher.length !== tokens.length) continue;
    const pieces = Array.isArray(raw.pieces) && raw.pieces.every((p) => typeof p === "string") ? (raw.pieces as string[]) : undefined;
    out.set(tokenGapKey(raw.ob_len, tokens), { ob_len: raw.ob_len, tokens, pieces, student, teacher });
  }
  return out;
}
