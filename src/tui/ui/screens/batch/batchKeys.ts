// The Batch screen's own bindings (the registry puts them in the keymap under its key scope).
import { type Binding, COMMON } from "../../../keys/keymap.ts";

export const BATCH_KEYS: readonly Binding[] = [
  { ...COMMON.open, description: "Open the batch / the run's dashboard", hint: "open" },
  { id: "launchBatch", keys: ["n"], description: "Launch an experiment file: cookbook batch <file> in the background (type a path or pick one of the files found)", hint: "launch" },
  { id: "overlayBatch", keys: ["o"], description: "Dashboard of the selected run with every other run of the batch overlaid", hint: "overlay all" },
  { id: "stopBatch", keys: ["S"], description: "Stop the batch: SIGINT, its running runs save and stop (cookbook batch <file> again continues)", hint: "stop" },
];
