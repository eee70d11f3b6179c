// The checkpoints screen's own bindings, the chat's sampling options among them.
import type { Binding, CommandOf, GlobalCommand, ListCommand, RunCommand } from "../../../keys/keymap.ts";

export const CHECKPOINTS_KEYS = [
  { id: "resumeFromCheckpoint", keys: ["r"], description: "Start a new background run from the selected checkpoint", hint: "resume from" },
  { id: "chat", keys: ["return"], description: "Chat with (sample from) the selected checkpoint; in the options: edit the selected option", hint: "chat" },
  {
    id: "chatFocus",
    keys: ["tab"],
    description: "Chat: switch between the message line and the sampling options (temperature, top-p, max tokens, system prompt)",
    hint: "chat options",
    inText: true,
  },
  { id: "chatOptionUp", keys: ["+", "="], description: "Chat options: raise the selected value (temperature +0.1, top-p +0.05, max tokens ×2)" },
  { id: "chatOptionDown", keys: ["-"], description: "Chat options: lower the selected value" },
  { id: "copyPath", keys: ["y"], description: "Copy the tinker:// path (OSC 52) and show it", hint: "copy" },
  { id: "deleteCheckpoint", keys: ["d"], description: "Delete the checkpoint (RestClient) and its record", hint: "delete" },
] as const satisfies readonly Binding[];

/** Every command the checkpoints screen receives: its own bindings' and those of the scopes it shares. */
export type CheckpointsCommand = CommandOf<typeof CHECKPOINTS_KEYS> | GlobalCommand | ListCommand | RunCommand;
