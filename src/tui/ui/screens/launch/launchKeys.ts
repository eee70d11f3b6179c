// The launch form's own bindings.
import { type Binding, COMMON } from "../../../keys/keymap.ts";

export const LAUNCH_KEYS: readonly Binding[] = [
  COMMON.nextPane,
  COMMON.open,
  { id: "submit", keys: ["ctrl+s"], description: "Launch with the form's values", hint: "launch" },
  { id: "estimate", keys: ["e"], description: "Estimate steps, tokens and wall time: a few measured steps of this config (cookbook run --dry-run)", hint: "estimate" },
];
