// Transcript browsing, pure: sorting and filtering trajectories, splitting a conversation text
// into role-coloured blocks, and wrapping text to a width.
import type { TranscriptRecord } from "../../runs/index.ts";

export type RewardSort = "desc" | "asc" | "index";
export const SORTS: readonly RewardSort[] = ["desc", "asc", "index"];

export interface TranscriptFilter {
  min?: number;
  max?: number;
  /** Strict upper bound (a histogram bin other than the last: [lo, hi)). */
  below?: number;
  tag?: string;
}

/** `reward>0.5 reward<1 tag:math` (also `r>=`, `r<=`); unknown words are ignored. */
export function parseTranscriptFilter(text: string): TranscriptFilter {
  const f: TranscriptFilter = {};
  for (const word of text.trim().split(/\s+/).filter(Boolean)) {
    const m = /^(?:reward|r)(>=?|<=?)(-?\d*\.?\d+(?:e-?\d+)?)$/i.exec(word);
    if (m) {
      const v = Number(m[2]);
      if (m[1].startsWith(">")) f.min = v;
      else f.max = v;
    } else if (word.startsWith("tag:")) f.tag = word.slice(4);
  }
  return f;
}

export function selectTranscripts(records: readonly TranscriptRecord[], sort: RewardSort, filter: TranscriptFilter): TranscriptRecord[] {
  const out = records.filter(
    (r) =>
      (filter.min === undefined || r.total_reward >= filter.min) &&
      (filter.max === undefined || r.total_reward <= filter.max) &&
      (filter.below === undefined || r.total_reward < filter.below) &&
      (filter.tag === undefined || r.tags.some((t) => t.includes(filter.tag!))),
  );
  if (sort === "index") return out.sort((a, b) => a.group_idx - b.group_idx || a.traj_idx - b.traj_idx);
  const sign = sort === "desc" ? -1 : 1;
  return out.sort((a, b) => sign * ((Number.isNaN(a.total_reward) ? -Infinity : a.total_reward) - (Number.isNaN(b.total_reward) ? -Infinity : b.total_reward)));
}

export interface RoleBlock {
  role: string;
  text: string;
}

/** "role: …" or "role (speaker): …" — a tool result's tool or a player's name in parentheses. */
const ROLE_RE = /^((?:system|user|assistant|tool|environment|developer|ipython)(?: \([^)\n]{1,40}\))?):\s?(.*)$/;

/** Splits `role: content` conversation text (as transcripts store it) into blocks. */
export function splitRoles(text: string | null, defaultRole: string): RoleBlock[] {
  if (text === null || text === "") return [];
  const blocks: RoleBlock[] = [];
  for (const line of text.split("\n")) {
    const m = ROLE_RE.exec(line);
    if (m) blocks.push({ role: m[1], text: m[2] });
    else if (blocks.length === 0) blocks.push({ role: defaultRole, text: line });
    else blocks[blocks.length - 1].text += `\n${line}`;
  }
  for (const b of blocks) b.text = b.text.replace(/\n+$/, "");
  return blocks;
}

/** Hard-wraps text to `width` columns (words kept whole when they fit). */
export function wrapText(text: string, width: number): string[] {
  const w = Math.max(1, width);
  const out: string[] = [];
  for (const para of text.split("\n")) {
    if (para.length <= w) {
      out.push(para);
      continue;
    }
    let line = "";
    for (const word of para.split(/(\s+)/)) {
      if ((line + word).length <= w) {
        line += word;
        continue;
      }
      if (line.trim() !== "") out.push(line.trimEnd());
      let rest = word.trimStart();
      while (rest.length > w) {
        out.push(rest.slice(0, w));
        rest = rest.slice(w);
      }
      line = rest;
    }
    if (line !== "") out.push(line.trimEnd());
  }
  return out;
}

export function meanReward(records: readonly TranscriptRecord[]): number | undefined {
  const vals = records.map((r) => r.total_reward).filter((v) => Number.isFinite(v));
  return vals.length ? vals.reduce((a, b) => a + b, 0) / vals.length : undefined;
}
