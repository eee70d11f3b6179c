// The transcripts screen's own bindings.
import { type Binding, COMMON, type CommandOf, type GlobalCommand, type ListCommand, type RunCommand } from "../../../keys/keymap.ts";

export const TRANSCRIPTS_KEYS = [
  { ...COMMON.open, description: "Histogram view: show only the transcripts in the selected reward bin; list: how to scroll the detail" },
  { ...COMMON.filter, description: "Filter transcripts: reward>0.5 reward<1 tag:name" },
  { id: "prevIteration", keys: ["h", "left", "["], description: "Previous iteration (DPO runs: previous evaluation's pairs)", hint: "iter" },
  { id: "nextIteration", keys: ["l", "right", "]"], description: "Next iteration (DPO runs: next evaluation's pairs)" },
  { id: "sortReward", keys: ["s"], description: "Sort: reward ↓, reward ↑, index", hint: "sort" },
  {
    id: "groupView",
    keys: ["w"],
    description: "Group view: all trajectories of the selected group side by side (pairwise RL: with its tournament table)",
    hint: "group",
  },
  { id: "histogram", keys: ["H"], description: "Reward histogram of the iteration (j/k pick a bin)", hint: "histogram" },
  { id: "binFilter", keys: ["b"], description: "Filter transcripts to the reward bin selected in the histogram (esc clears)", hint: "bin filter" },
] as const satisfies readonly Binding[];

/** Every command the transcripts screen receives: its own bindings' and those of the scopes it shares. */
export type TranscriptsCommand = CommandOf<typeof TRANSCRIPTS_KEYS> | GlobalCommand | ListCommand | RunCommand;
