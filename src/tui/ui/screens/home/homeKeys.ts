// The home screen's own bindings (the registry puts them in the keymap under its key scope).
import { type Binding, COMMON, type CommandOf, type GlobalCommand, type ListCommand } from "../../../keys/keymap.ts";

export const HOME_KEYS = [
  COMMON.nextPane,
  COMMON.open,
  { ...COMMON.filter, description: "Filter the runs (name, recipe, status, model)" },
  { id: "refresh", keys: ["R"], description: "Refresh the runs list" },
  { id: "playRecipe", keys: ["p"], description: "Play the selected RL recipe's environment by hand: you are the policy (cookbook play)", hint: "play" },
  {
    id: "openBatches",
    keys: ["B"],
    description: "Batches: launch an experiment file, follow its runs, overlay them, see the comparison (cookbook batch)",
    hint: "batches",
  },
  { id: "openEvals", keys: ["E"], description: "Eval results: scores, models side by side, graded examples (cookbook eval)", hint: "evals" },
  COMMON.stopRun,
  COMMON.resumeRun,
  { id: "deleteRun", keys: ["D"], description: "Delete the run directory (type its name to confirm; live runs are refused)", hint: "delete" },
] as const satisfies readonly Binding[];

/** Every command the home screen receives: its own bindings' and those of the scopes it shares. */
export type HomeCommand = CommandOf<typeof HOME_KEYS> | GlobalCommand | ListCommand;
