// The home screen's own bindings (the registry puts them in the keymap under its key scope).
import { type Binding, COMMON } from "../../../keys/keymap.ts";

export const HOME_KEYS: readonly Binding[] = [
  COMMON.nextPane,
  COMMON.open,
  { ...COMMON.filter, description: "Filter the runs (name, recipe, status, model)" },
  { id: "refresh", keys: ["R"], description: "Refresh the runs list" },
  COMMON.stopRun,
  COMMON.resumeRun,
  { id: "deleteRun", keys: ["D"], description: "Delete the run directory (type its name to confirm; live runs are refused)", hint: "delete" },
];
