// Reading dpo_pairs.jsonl, which the DPO loop appends at every evaluation: the first held-out pairs
// as text with their implied rewards β·(log π − log π_ref), for the transcripts screen's pair viewer.
import { join } from "node:path";
import { readJsonl } from "../log/jsonl.ts";

export const DPO_PAIRS_FILE = "dpo_pairs.jsonl";

export interface DpoPair {
  step: number;
  pair: number;
  prompt: string;
  chosen: string;
  rejected: string;
  chosen_reward: number;
  rejected_reward: number;
}

export interface DpoPairsByStep {
  step: number;
  pairs: DpoPair[];
}

/** chosen_reward − rejected_reward: positive when the policy prefers the chosen reply more than the reference does. */
export function pairMargin(p: DpoPair): number {
  return p.chosen_reward - p.rejected_reward;
}

function toPair(raw: Record<string, unknown>, path: string, index: number): DpoPair {
  const str = (k: string): string => {
    const v = raw[k];
    if (typeof v !== "string") throw new Error(`${path}: record ${index + 1} key "${k}" must be a string, got ${JSON.stringify(v)}`);
    return v;
  };
  const num = (k: string): number => {
    const v = raw[k];
    if (typeof v !== "number") throw new Error(`${path}: record ${index + 1} key "${k}" must be a number, got ${JSON.stringify(v)}`);
    return v;
  };
  return {
    step: num("step"),
    pair: num("pair"),
    prompt: str("prompt"),
    chosen: str("chosen"),
    rejected: str("rejected"),
    chosen_reward: num("chosen_reward"),
    rejected_reward: num("rejected_reward"),
  };
}

/** The logged pairs grouped by evaluation step, oldest first (empty when the run logged none). */
export function readDpoPairs(logDir: string): DpoPairsByStep[] {
  const path = join(logDir, DPO_PAIRS_FILE);
  const byStep = new Map<number, DpoPair[]>();
  readJsonl<Record<string, unknown>>(path).forEach((raw, i) => {
    const p = toPair(raw, path, i);
    const list = byStep.get(p.step) ?? [];
    list.push(p);
    byStep.set(p.step, list);
  });
  return [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([step, pairs]) => ({ step, pairs: pairs.sort((a, b) => a.pair - b.pair) }));
}
