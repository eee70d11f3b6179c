// A distilled response token by token, coloured by how far the student's log-prob of each sampled
// token is from the teacher's: the tokens where the student and the teacher disagree stand out.
import { type TokenGapRecord, type TranscriptRecord, tokenGapKey } from "../../runs/index.ts";

/** |lp_student − lp_teacher| below SMALL is agreement, from LARGE on a clear disagreement (nats). */
export const GAP_SMALL = 0.5;
export const GAP_LARGE = 2;

export type GapClass = "small" | "medium" | "large";

export function gapClass(gap: number): GapClass {
  const a = Math.abs(gap);
  return a < GAP_SMALL ? "small" : a < GAP_LARGE ? "medium" : "large";
}

export interface GapSegment {
  text: string;
  gap: number;
  cls: GapClass;
}

/** The record's teacher log-probs, matched on the first turn's prompt length and all sampled tokens. */
export function findTokenGaps(r: TranscriptRecord, gaps: ReadonlyMap<string, TokenGapRecord>): TokenGapRecord | undefined {
  const first = r.steps[0];
  if (first?.ob_len === undefined || r.steps.some((s) => s.ac_tokens === undefined)) return undefined;
  return gaps.get(
    tokenGapKey(
      first.ob_len,
      r.steps.flatMap((s) => s.ac_tokens ?? []),
    ),
  );
}

/** Visible text of a token piece: whitespace kept readable, newlines shown as ⏎. */
function visible(piece: string): string {
  return piece.replace(/\n/g, "⏎").replace(/\t/g, "→");
}

/** The tokens as coloured segments wrapped into lines of at most `width` characters. */
export function gapLines(rec: TokenGapRecord, width: number): GapSegment[][] {
  const lines: GapSegment[][] = [[]];
  let used = 0;
  rec.tokens.forEach((tok, i) => {
    const text = visible(rec.pieces?.[i] ?? `‹${tok}›`) || "∅";
    const gap = rec.student[i]! - rec.teacher[i]!;
    if (used > 0 && used + text.length > width) {
      lines.push([]);
      used = 0;
    }
    lines[lines.length - 1]!.push({ text, gap, cls: gapClass(gap) });
    used += text.length;
  });
  return lines;
}

/** Mean |gap| and the largest one, for the block's heading. */
export function gapSummary(rec: TokenGapRecord): { meanAbs: number; worst: number; worstIndex: number } {
  let sum = 0;
  let worst = 0;
  let worstIndex = -1;
  rec.tokens.forEach((_, i) => {
    const g = rec.student[i]! - rec.teacher[i]!;
    sum += Math.abs(g);
    if (Math.abs(g) > Math.abs(worst)) {
      worst = g;
      worstIndex = i;
    }
  });
  return { meanAbs: rec.tokens.length > 0 ? sum / rec.tokens.length : 0, worst, worstIndex };
}
