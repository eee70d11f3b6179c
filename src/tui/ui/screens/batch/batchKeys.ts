// The Batch screen's own bindings (the registry puts them in the keymap under its key scope).
import { type Binding, COMMON, type CommandOf, type GlobalCommand, type ListCommand } from "../../../keys/keymap.ts";

export const BATCH_KEYS = [
  { ...COMMON.open, description: "Open the batch / the run's dashboard", hint: "open" },
  {
    id: "launchBatch",
    keys: ["n"],
    description: "Launch an experiment file: cookbook batch <file> in the background (type a path or pick one of the files found)",
    hint: "launch",
  },
  { id: "overlayBatch", keys: ["o"], description: "Dashboard of the selected run with every other run of the batch overlaid", hint: "overlay all" },
  { id: "stopBatch", keys: ["S"], description: "Stop the batch: SIGINT, its running runs save and stop (cookbook batch <file> again continues)", hint: "stop" },
] as const satisfies readonly Binding[];

/** Every command the batch screen receives: its own bindings' and those of the scopes it shares. */
export type BatchCommand = CommandOf<typeof BATCH_KEYS> | GlobalCommand | ListCommand;
