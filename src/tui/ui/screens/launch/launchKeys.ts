// The launch form's own bindings.
import { type Binding, COMMON, type CommandOf, type GlobalCommand, type ListCommand } from "../../../keys/keymap.ts";

export const LAUNCH_KEYS = [
  { ...COMMON.nextPane, description: "Next field group", hint: "group" },
  { ...COMMON.open, description: "Edit the field, cycle its options, fold or unfold the group, or launch" },
  { ...COMMON.filter, description: "Filter the fields by name (words; enter keeps it, esc clears it)" },
  { id: "submit", keys: ["ctrl+s"], description: "Launch with the form's values", hint: "launch" },
  {
    id: "estimate",
    keys: ["e"],
    description: "Estimate steps, tokens and wall time: a few measured steps of this config (cookbook run --dry-run)",
    hint: "estimate",
  },
] as const satisfies readonly Binding[];

/** Every command the launch screen receives: its own bindings' and those of the scopes it shares. */
export type LaunchCommand = CommandOf<typeof LAUNCH_KEYS> | GlobalCommand | ListCommand;
