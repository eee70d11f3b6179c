// The Evals screen's own bindings (the registry puts them in the keymap under its key scope).
import { type Binding, COMMON, type CommandOf, type GlobalCommand, type ListCommand } from "../../../keys/keymap.ts";

export const EVALS_KEYS = [
  { ...COMMON.open, description: "Open the result's examples / the example in full", hint: "open" },
  { id: "evalsCompare", keys: ["tab", "c"], description: "Results list ↔ models side by side per benchmark", hint: "compare" },
  { id: "evalsFilter", keys: ["f"], description: "Examples: show all, wrong, right or failed ones", hint: "filter" },
  { id: "evalsMark", keys: ["m"], description: "Mark the run under the cursor as A (again: unmark)", hint: "mark A" },
  {
    id: "evalsDiff",
    keys: ["d"],
    description: "Compare run A with the run under the cursor example by example: regressions and improvements (cookbook eval --compare)",
    hint: "diff",
  },
] as const satisfies readonly Binding[];

/** Every command the evals screen receives: its own bindings' and those of the scopes it shares. */
export type EvalsCommand = CommandOf<typeof EVALS_KEYS> | GlobalCommand | ListCommand;
