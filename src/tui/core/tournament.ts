// A pairwise-preference group's tournament as a table: one row per reply, one column per opponent
// holding the reply's wins − losses against it (from the `vs_<j>` logs the group builder writes).
import type { TranscriptRecord } from "../../runs/index.ts";

const VERSUS_RE = /^vs_(\d+)$/;

export interface TournamentRow {
  traj: number;
  /** Net result against each member, in `members` order; undefined = no matchup (or itself). */
  versus: (number | undefined)[];
  winMinusLoss?: number;
  format?: number;
  reward: number;
}

export interface TournamentTable {
  members: number[];
  rows: TournamentRow[];
}

/** The tournament of a group's records, or undefined when they carry no `vs_<j>` results. */
export function tournamentTable(groupRecords: readonly TranscriptRecord[]): TournamentTable | undefined {
  const sorted = [...groupRecords].sort((a, b) => a.traj_idx - b.traj_idx);
  const played = sorted.some((r) => Object.keys(r.trajectory_logs ?? {}).some((k) => VERSUS_RE.test(k)));
  if (!played) return undefined;
  const members = sorted.map((r) => r.traj_idx);
  const rows = sorted.map((r) => {
    const logs = r.trajectory_logs ?? {};
    return {
      traj: r.traj_idx,
      versus: members.map((j) => {
        const v = logs[`vs_${j}`];
        return typeof v === "number" ? v : undefined;
      }),
      winMinusLoss: r.trajectory_metrics["win_minus_loss"],
      format: r.trajectory_metrics["format"],
      reward: r.total_reward,
    };
  });
  return { members, rows };
}

/** A cell as the table shows it: +2, −1, 0, or · where the two never met. */
export function versusCell(v: number | undefined): string {
  if (v === undefined) return "·";
  return v > 0 ? `+${v}` : v < 0 ? `−${-v}` : "0";
}
